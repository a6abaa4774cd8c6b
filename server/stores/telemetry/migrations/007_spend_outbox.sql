-- What rows cost, written in the same transaction as the rows and settled into the keys' spend in
-- the control store afterwards (server/ingest/spend-outbox.ts): a crash between the two stores'
-- commits leaves the cost here, to be settled at the next start or commit, never lost or doubled.
CREATE TABLE IF NOT EXISTS spend_outbox (
  settlement TEXT NOT NULL,
  key_id     TEXT NOT NULL,
  micro      INTEGER NOT NULL,
  PRIMARY KEY (settlement, key_id)
) WITHOUT ROWID;
