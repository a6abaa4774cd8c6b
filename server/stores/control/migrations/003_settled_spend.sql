-- Settlements of the telemetry store's spend outbox applied to the keys' spend: a settlement seen
-- here is never applied twice. Kept an hour (server/ingest/spend-outbox.ts), far longer than any
-- writer takes between reading an outbox entry and settling it.
CREATE TABLE settled_spend (
  settlement TEXT PRIMARY KEY,
  settled_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX settled_spend_by_age ON settled_spend (settled_at);
