-- The index by cost led by the day after the organisation (issue 54; request-rows.ts, `costAtLeast`).
-- Its costs are random keys: each row written went to a page of its own anywhere in the index, so
-- a late file of an import touched most of its pages (and journaled each): with ten million rows
-- stored, importing 500k more took 12.4 s, 8.1 s without this index. Led by the day, the rows of a
-- day (a file, the gateways' live rows) fill its own few pages: 8.7 s. A count of the rows costing
-- at least a sum in a window reads, for each of the window's days, the rows of that day costing at
-- least it: ~2 ms over 24 h at ten million rows, ~4 ms before (every day of the store's over it).
-- Rebuilt in ~11 s at ten million rows.

DROP INDEX requests_by_cost;
CREATE INDEX requests_by_cost ON request_rows (org_code, ts / 86400000, cost_micro, ts);
