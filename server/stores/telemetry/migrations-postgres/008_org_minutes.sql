-- As SQLite's 021: minute cells by one dimension keep the organisation's totals alone (dim 0).
DELETE FROM rollup_dim_1m WHERE dim <> 0;
