-- Settlements of the telemetry store's spend outbox applied to the keys' spend, until the outbox
-- has forgotten them (server/ingest/spend-outbox.ts): a settlement seen here is never applied twice.
CREATE TABLE settled_spend (
  settlement TEXT PRIMARY KEY,
  settled_at INTEGER NOT NULL
) WITHOUT ROWID;
