-- An organisation's own request-log retention, in days (see the SQLite store's 008): null keeps
-- its rows as long as the platform does, which every organisation that exists already does. The
-- audit trail gains `org.retention_changed`; PostgreSQL changes the CHECK in place, the rows,
-- their triggers and indexes untouched.
SELECT pg_advisory_xact_lock(hashtext('gateway-console control write'));
ALTER TABLE organizations ADD COLUMN retention_days INTEGER CHECK (retention_days IS NULL OR retention_days >= 1);
ALTER TABLE activity DROP CONSTRAINT activity_action_check;
ALTER TABLE activity ADD CONSTRAINT activity_action_check CHECK (action IN (
  'user.login', 'user.logout', 'api_key.created', 'api_key.revoked',
  'api_key.updated', 'vault_key.set', 'vault_key.revoked', 'org.renamed',
  'member.joined', 'budget.deposited', 'member.removed', 'member.role_changed',
  'org.join_policy_changed', 'org.reporting_zone_changed', 'api_key.rotated',
  'org.retention_changed'));
