-- From when the fine grains' usage cells (finer than an hour: rollup_5m, rollup_dim_5m,
-- rollup_dim_1m; the dashboard's rollup_board_5m stays) are whole (issue 54: at ten million rows
-- over 30 days they took ~41 of the store's ~305 bytes a row). Before `since` (the start of a UTC
-- day) they are deleted, or about to be, or never written: reads take a window's partial hours
-- there from the rows, and `reconcile` leaves those tables out (server/stores/telemetry/fine-cells.ts). Recorded before
-- any cell goes, in the same transaction, and only ever moved later. No row: every cell kept.

CREATE TABLE IF NOT EXISTS fine_cells (
  id    INTEGER PRIMARY KEY CHECK (id = 1),
  since INTEGER NOT NULL
);
