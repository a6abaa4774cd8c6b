-- Who may join an organisation by naming it at sign-up (decisions.md, "Join policy").
-- Every organisation that exists already stays open, as the contract has it.
ALTER TABLE organizations ADD COLUMN join_policy TEXT NOT NULL DEFAULT 'open'
  CHECK (join_policy IN ('open', 'closed', 'domains'));

-- The email domains a `domains` policy admits: lower case, matched exactly, so a subdomain
-- is another domain. Kept while the policy is `domains` only.
CREATE TABLE join_domains (
  org_id TEXT NOT NULL REFERENCES organizations (id),
  domain TEXT NOT NULL,
  PRIMARY KEY (org_id, domain)
) WITHOUT ROWID;

-- The audit trail gains `org.join_policy_changed`. SQLite cannot change a CHECK constraint in
-- place, so the table is rebuilt with the same rows and ids. DROP TABLE removes the table's
-- triggers before its implicit delete, so the append-only triggers do not refuse the move;
-- they are created again below.
CREATE TABLE activity_next (
  id         INTEGER PRIMARY KEY,
  org_id     TEXT NOT NULL REFERENCES organizations (id),
  actor_id   TEXT,
  action     TEXT NOT NULL CHECK (action IN (
               'user.login', 'user.logout', 'api_key.created', 'api_key.revoked',
               'api_key.updated', 'vault_key.set', 'vault_key.revoked', 'org.renamed',
               'member.joined', 'budget.deposited', 'member.removed', 'member.role_changed',
               'org.join_policy_changed')),
  target     TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  source_ip  TEXT NOT NULL
);
INSERT INTO activity_next (id, org_id, actor_id, action, target, created_at, source_ip)
  SELECT id, org_id, actor_id, action, target, created_at, source_ip FROM activity;
DROP TABLE activity;
ALTER TABLE activity_next RENAME TO activity;
CREATE INDEX activity_by_org ON activity (org_id, id);

CREATE TRIGGER activity_refuses_update BEFORE UPDATE ON activity
BEGIN
  SELECT RAISE(ABORT, 'activity log is append-only');
END;

CREATE TRIGGER activity_refuses_delete BEFORE DELETE ON activity
BEGIN
  SELECT RAISE(ABORT, 'activity log is append-only');
END;
