-- Minute cells by one dimension keep the organisation's totals alone (dim 0): a read by project,
-- key or model takes its edges from five-minute cells and up to five minutes of that value's rows
-- (rollup-grains.ts). The other dimensions' minute cells were most of the table, the store's
-- largest at a month of a million rows.
DELETE FROM rollup_dim_1m WHERE dim <> 0;
