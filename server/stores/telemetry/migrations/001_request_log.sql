-- One row per request the gateway served. Times are integer milliseconds since the
-- epoch (UTC); cost is integer micro-PKR so that sums stay exact.
CREATE TABLE requests (
  req_id                      TEXT NOT NULL PRIMARY KEY,
  ts                          INTEGER NOT NULL,
  org_id                      TEXT NOT NULL,
  project_id                  TEXT,
  key_id                      TEXT,
  model                       TEXT NOT NULL,
  status                      INTEGER NOT NULL,
  stream                      INTEGER NOT NULL CHECK (stream IN (0, 1)),
  total_ms                    REAL NOT NULL,
  ttft_ms                     REAL,
  tpot_ms                     REAL,
  pre_dispatch_ms             REAL NOT NULL,
  prompt_tokens               INTEGER,
  tokens_generated            INTEGER NOT NULL,
  cache_creation_input_tokens INTEGER,
  cache_read_input_tokens     INTEGER,
  total_tokens                INTEGER NOT NULL,
  tokens_estimated            INTEGER NOT NULL CHECK (tokens_estimated IN (0, 1)),
  cost_micro                  INTEGER NOT NULL,
  is_byok                     INTEGER NOT NULL CHECK (is_byok IN (0, 1)),
  termination_reason          TEXT NOT NULL,
  upstream_error              TEXT,
  upstream_model              TEXT, -- null: the whole upstream block is unknown
  user_agent                  TEXT NOT NULL,
  metadata                    TEXT NOT NULL -- JSON object, keys lowercased
);
CREATE INDEX requests_by_key ON requests (key_id, ts);
CREATE INDEX requests_by_org ON requests (org_id, ts);
