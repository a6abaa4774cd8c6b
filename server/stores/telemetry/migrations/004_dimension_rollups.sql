-- Usage by one dimension at a time, by UTC day, hour and five minutes: the same sums and
-- counts as rollup_<grain> (002), added up over the other dimensions. A timeseries grouped
-- by model, or a summary of one key, reads one cell per bucket and value here instead of
-- every (project, key, model) cell of the bucket: at ten million rows a month-long chart
-- by model read ~100,000 cells, and reads ~12,000 here.
--
-- dim: 0 the whole organisation (value ''), 1 project, 2 key, 3 model; a null project or
-- key is stored as '', as in 002. Queries that name two dimensions (a key's chart grouped
-- by model, say) still read rollup_<grain>. The writer (rollup-writer.ts) keeps these in
-- step in the same transaction as the rows.

CREATE TABLE rollup_dim_5m (
  org_id       TEXT NOT NULL,
  dim          INTEGER NOT NULL CHECK (dim BETWEEN 0 AND 3),
  bucket       INTEGER NOT NULL,
  value        TEXT NOT NULL,
  requests     INTEGER NOT NULL,
  total_ms     REAL NOT NULL,
  ttft_count   INTEGER NOT NULL,
  ttft_ms      REAL NOT NULL,
  speed_tokens INTEGER NOT NULL,
  speed_ms     REAL NOT NULL,
  tokens       INTEGER NOT NULL,
  cost_micro   INTEGER NOT NULL,
  PRIMARY KEY (org_id, dim, bucket, value)
) WITHOUT ROWID;

CREATE TABLE rollup_dim_hour (
  org_id       TEXT NOT NULL,
  dim          INTEGER NOT NULL CHECK (dim BETWEEN 0 AND 3),
  bucket       INTEGER NOT NULL,
  value        TEXT NOT NULL,
  requests     INTEGER NOT NULL,
  total_ms     REAL NOT NULL,
  ttft_count   INTEGER NOT NULL,
  ttft_ms      REAL NOT NULL,
  speed_tokens INTEGER NOT NULL,
  speed_ms     REAL NOT NULL,
  tokens       INTEGER NOT NULL,
  cost_micro   INTEGER NOT NULL,
  PRIMARY KEY (org_id, dim, bucket, value)
) WITHOUT ROWID;

CREATE TABLE rollup_dim_day (
  org_id       TEXT NOT NULL,
  dim          INTEGER NOT NULL CHECK (dim BETWEEN 0 AND 3),
  bucket       INTEGER NOT NULL,
  value        TEXT NOT NULL,
  requests     INTEGER NOT NULL,
  total_ms     REAL NOT NULL,
  ttft_count   INTEGER NOT NULL,
  ttft_ms      REAL NOT NULL,
  speed_tokens INTEGER NOT NULL,
  speed_ms     REAL NOT NULL,
  tokens       INTEGER NOT NULL,
  cost_micro   INTEGER NOT NULL,
  PRIMARY KEY (org_id, dim, bucket, value)
) WITHOUT ROWID;

-- Rows already in the store, from their cells in 002's tables.
INSERT INTO rollup_dim_5m
  SELECT org_id, d.dim, bucket,
    CASE d.dim WHEN 0 THEN '' WHEN 1 THEN project_id WHEN 2 THEN key_id ELSE model END AS value,
    SUM(requests), SUM(total_ms), SUM(ttft_count), SUM(ttft_ms), SUM(speed_tokens), SUM(speed_ms), SUM(tokens), SUM(cost_micro)
  FROM rollup_5m CROSS JOIN (SELECT 0 AS dim UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3) d
  GROUP BY org_id, d.dim, bucket, value;
INSERT INTO rollup_dim_hour
  SELECT org_id, d.dim, bucket,
    CASE d.dim WHEN 0 THEN '' WHEN 1 THEN project_id WHEN 2 THEN key_id ELSE model END AS value,
    SUM(requests), SUM(total_ms), SUM(ttft_count), SUM(ttft_ms), SUM(speed_tokens), SUM(speed_ms), SUM(tokens), SUM(cost_micro)
  FROM rollup_hour CROSS JOIN (SELECT 0 AS dim UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3) d
  GROUP BY org_id, d.dim, bucket, value;
INSERT INTO rollup_dim_day
  SELECT org_id, d.dim, bucket,
    CASE d.dim WHEN 0 THEN '' WHEN 1 THEN project_id WHEN 2 THEN key_id ELSE model END AS value,
    SUM(requests), SUM(total_ms), SUM(ttft_count), SUM(ttft_ms), SUM(speed_tokens), SUM(speed_ms), SUM(tokens), SUM(cost_micro)
  FROM rollup_day CROSS JOIN (SELECT 0 AS dim UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3) d
  GROUP BY org_id, d.dim, bucket, value;
