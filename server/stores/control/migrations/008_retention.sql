-- An organisation's own request-log retention, in days (server/domain/retention.ts): shorter than
-- the platform's `--retention-days` to count. Null keeps its rows as long as the platform does,
-- which every organisation that exists already does.
ALTER TABLE organizations ADD COLUMN retention_days INTEGER CHECK (retention_days IS NULL OR retention_days >= 1);

-- The audit trail gains `org.retention_changed`. As in 002, 004 and 005, SQLite cannot change a
-- CHECK constraint in place, so the table is rebuilt with the same rows, ids, places and hashes
-- (the hash covers the fields, not the constraint: the chain still verifies); DROP TABLE removes
-- the append-only triggers and the indexes, which are created again below.
CREATE TABLE activity_next (
  id         INTEGER PRIMARY KEY,
  org_id     TEXT NOT NULL REFERENCES organizations (id),
  seq        INTEGER NOT NULL CHECK (seq >= 1),
  actor_id   TEXT,
  action     TEXT NOT NULL CHECK (action IN (
               'user.login', 'user.logout', 'api_key.created', 'api_key.revoked',
               'api_key.updated', 'vault_key.set', 'vault_key.revoked', 'org.renamed',
               'member.joined', 'budget.deposited', 'member.removed', 'member.role_changed',
               'org.join_policy_changed', 'org.reporting_zone_changed', 'api_key.rotated',
               'org.retention_changed')),
  target     TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  source_ip  TEXT NOT NULL,
  change     TEXT CHECK (change IS NULL OR json_valid(change)),
  hash       TEXT NOT NULL CHECK (length(hash) = 64)
);
INSERT INTO activity_next (id, org_id, seq, actor_id, action, target, created_at, source_ip, change, hash)
  SELECT id, org_id, seq, actor_id, action, target, created_at, source_ip, change, hash FROM activity;
DROP TABLE activity;
ALTER TABLE activity_next RENAME TO activity;

CREATE INDEX activity_by_org ON activity (org_id, id);
CREATE UNIQUE INDEX activity_by_place ON activity (org_id, seq);
CREATE INDEX activity_by_action ON activity (org_id, action, seq);
CREATE INDEX activity_by_actor ON activity (org_id, actor_id, seq);
CREATE INDEX activity_by_target ON activity (org_id, target, seq);
CREATE INDEX activity_by_time ON activity (org_id, created_at);

CREATE TRIGGER activity_refuses_update BEFORE UPDATE ON activity
BEGIN
  SELECT RAISE(ABORT, 'activity log is append-only');
END;

CREATE TRIGGER activity_refuses_delete BEFORE DELETE ON activity
BEGIN
  SELECT RAISE(ABORT, 'activity log is append-only');
END;
