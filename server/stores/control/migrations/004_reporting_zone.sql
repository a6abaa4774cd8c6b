-- The time zone whose days and weeks the organisation's dashboard counts in (its IANA name,
-- server/domain/reporting-zone.ts): a Karachi team's day starts at 19:00 UTC. Every organisation
-- that exists already reports in UTC, as the contract's charts do.
ALTER TABLE organizations ADD COLUMN reporting_zone TEXT NOT NULL DEFAULT 'UTC';

-- The audit trail gains `org.reporting_zone_changed`. As in 002, SQLite cannot change a CHECK
-- constraint in place, so the table is rebuilt with the same rows and ids; DROP TABLE removes
-- the append-only triggers before its implicit delete, and they are created again below.
CREATE TABLE activity_next (
  id         INTEGER PRIMARY KEY,
  org_id     TEXT NOT NULL REFERENCES organizations (id),
  actor_id   TEXT,
  action     TEXT NOT NULL CHECK (action IN (
               'user.login', 'user.logout', 'api_key.created', 'api_key.revoked',
               'api_key.updated', 'vault_key.set', 'vault_key.revoked', 'org.renamed',
               'member.joined', 'budget.deposited', 'member.removed', 'member.role_changed',
               'org.join_policy_changed', 'org.reporting_zone_changed')),
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
