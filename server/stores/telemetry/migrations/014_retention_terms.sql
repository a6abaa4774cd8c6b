-- How far retention has removed each organisation's search terms of deleted rows
-- (server/stores/telemetry/expire-terms.ts): every term of the organisation with an id up to
-- `swept` whose row is gone, and that no other row holds, has been deleted.
-- IF NOT EXISTS, as 013: a store taken back to an earlier version by hand keeps it.

CREATE TABLE IF NOT EXISTS retention_terms (
  org_id TEXT NOT NULL PRIMARY KEY,
  swept  INTEGER NOT NULL
) WITHOUT ROWID;
