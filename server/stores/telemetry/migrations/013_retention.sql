-- How far each organisation's rows have been deleted by retention (server/stores/telemetry/
-- expire-rows.ts): every row at or after `horizon` (epoch ms, a whole hour) is in the store, any
-- before it may be gone. Written in the transaction of each deletion, and only ever moved later,
-- so reads and `reconcile` know where rows stop being whole even after a retention is lengthened
-- again (deleted rows do not come back): before it they count from rollup cells alone.
-- IF NOT EXISTS: a store taken back to an earlier version by hand (the tests' upgrades) keeps it.

CREATE TABLE IF NOT EXISTS retention_horizons (
  org_id  TEXT NOT NULL PRIMARY KEY,
  horizon INTEGER NOT NULL
) WITHOUT ROWID;
