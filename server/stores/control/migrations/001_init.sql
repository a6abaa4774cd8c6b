-- Times are integer milliseconds since the epoch (UTC); money is integer micro-PKR.

CREATE TABLE organizations (
  id         TEXT PRIMARY KEY,
  name       TEXT NOT NULL,
  name_key   TEXT NOT NULL UNIQUE, -- trimmed, lowercased: uniqueness and joining ignore case
  created_at INTEGER NOT NULL
);

CREATE TABLE accounts (
  id             TEXT PRIMARY KEY,
  org_id         TEXT NOT NULL REFERENCES organizations (id),
  email          TEXT NOT NULL UNIQUE,
  password_hash  TEXT, -- null for accounts created through external identity sign-in
  role           TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
  created_at     INTEGER NOT NULL,
  deactivated_at INTEGER
);
CREATE INDEX accounts_by_org ON accounts (org_id, created_at);

CREATE TABLE sessions (
  id         TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL, -- absolute end: refresh never extends it
  revoked_at INTEGER
);
CREATE INDEX sessions_by_account ON sessions (account_id);
CREATE INDEX sessions_by_end ON sessions (expires_at);

-- Only SHA-256 hashes of the opaque tokens are kept.
CREATE TABLE session_tokens (
  hash       BLOB PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  kind       TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
  expires_at INTEGER NOT NULL,
  used_at    INTEGER -- set when a refresh token is rotated; a second use is reuse
) WITHOUT ROWID;
CREATE INDEX session_tokens_by_session ON session_tokens (session_id);
CREATE INDEX session_tokens_by_expiry ON session_tokens (kind, expires_at);

CREATE TABLE projects (
  id         TEXT PRIMARY KEY,
  org_id     TEXT NOT NULL REFERENCES organizations (id),
  name       TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX projects_by_org ON projects (org_id, created_at);

CREATE TABLE models (
  id       TEXT PRIMARY KEY,
  provider TEXT NOT NULL,
  active   INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1))
);

CREATE TABLE api_keys (
  id                 TEXT PRIMARY KEY,
  org_id             TEXT NOT NULL REFERENCES organizations (id),
  project_id         TEXT NOT NULL REFERENCES projects (id),
  name               TEXT NOT NULL,
  key_prefix         TEXT NOT NULL,
  secret_hash        BLOB NOT NULL UNIQUE, -- HMAC-SHA-256 under the server's key-hash secret
  environment        TEXT NOT NULL CHECK (environment IN ('production', 'development', 'testing')),
  rate_limit_rpm     INTEGER NOT NULL,
  expires_at         INTEGER,
  credit_limit_micro INTEGER,
  allowed_models     TEXT, -- JSON array of route ids, null without model scope
  spent_micro        INTEGER NOT NULL DEFAULT 0,
  created_at         INTEGER NOT NULL,
  revoked_at         INTEGER
);
CREATE INDEX api_keys_by_org ON api_keys (org_id, created_at);

CREATE TABLE vault_keys (
  org_id     TEXT NOT NULL REFERENCES organizations (id),
  provider   TEXT NOT NULL,
  sealed     BLOB NOT NULL, -- AES-256-GCM: nonce || tag || ciphertext
  key_hint   TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (org_id, provider)
) WITHOUT ROWID;

CREATE TABLE deposits (
  id           INTEGER PRIMARY KEY,
  org_id       TEXT NOT NULL REFERENCES organizations (id),
  amount_micro INTEGER NOT NULL CHECK (amount_micro > 0),
  created_at   INTEGER NOT NULL
);
CREATE INDEX deposits_by_org ON deposits (org_id);

-- The audit trail. actor_id has no foreign key on purpose: a hard-deleted account
-- leaves its events behind with a null actor, and the triggers below forbid the
-- UPDATE that ON DELETE SET NULL would need.
CREATE TABLE activity (
  id         INTEGER PRIMARY KEY,
  org_id     TEXT NOT NULL REFERENCES organizations (id),
  actor_id   TEXT,
  action     TEXT NOT NULL CHECK (action IN (
               'user.login', 'user.logout', 'api_key.created', 'api_key.revoked',
               'api_key.updated', 'vault_key.set', 'vault_key.revoked', 'org.renamed',
               'member.joined', 'budget.deposited', 'member.removed', 'member.role_changed')),
  target     TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  source_ip  TEXT NOT NULL
);
CREATE INDEX activity_by_org ON activity (org_id, id);

CREATE TRIGGER activity_refuses_update BEFORE UPDATE ON activity
BEGIN
  SELECT RAISE(ABORT, 'activity log is append-only');
END;

CREATE TRIGGER activity_refuses_delete BEFORE DELETE ON activity
BEGIN
  SELECT RAISE(ABORT, 'activity log is append-only');
END;

INSERT INTO models (id, provider, active) VALUES
  ('openai/gpt-4o', 'openai', 1),
  ('openai/gpt-4o-mini', 'openai', 1),
  ('openai/gpt-4.1', 'openai', 1),
  ('openai/gpt-4.1-mini', 'openai', 1),
  ('openai/o3-mini', 'openai', 1),
  ('openai/gpt-3.5-turbo', 'openai', 0),
  ('anthropic/claude-sonnet-4', 'anthropic', 1),
  ('anthropic/claude-opus-4', 'anthropic', 1),
  ('anthropic/claude-3-5-haiku', 'anthropic', 1),
  ('google/gemini-2.5-pro', 'google', 1),
  ('google/gemini-2.5-flash', 'google', 1),
  ('mistral/mistral-large', 'mistral', 1),
  ('meta/llama-3.3-70b-instruct', 'meta', 1),
  ('deepseek/deepseek-chat', 'deepseek', 1),
  ('svc/auto', 'svc', 1),
  ('svc/fast', 'svc', 1),
  ('svc/reasoning', 'svc', 1),
  ('svc/embed', 'svc', 1);
