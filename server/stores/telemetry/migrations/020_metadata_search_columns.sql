-- The views again, with each row's metadata as stored (`metadata_key`, `metadata_hex`) beside the
-- JSON they make: a search of the rows looks for its text in a shape and in the digits set aside
-- without making the JSON of every row (request-rows.ts, metadataMayHoldSql). Made by this
-- migration's step, as the code names them.
DROP VIEW IF EXISTS requests;
DROP VIEW IF EXISTS requests_unindexed;
