-- Usage by one dimension at a time by the minute, like 004's tables: a window of an hour
-- read whole five-minute cells in the middle and up to five minutes of raw rows at either
-- edge (~1,200 rows each at ten million requests a month); with minutes, up to one. There
-- are no full (project, key, model) cells by the minute: reads that name two dimensions
-- keep their five-minute edges.

CREATE TABLE rollup_dim_1m (
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

-- Rows already in the store: summed by minute and combination first, then by dimension.
CREATE TEMP TABLE minute_cells AS
  SELECT org_id, ts - ts % 60000 AS bucket, COALESCE(project_id, '') AS project_id, COALESCE(key_id, '') AS key_id, model,
    COUNT(*) AS requests, SUM(total_ms) AS total_ms, COUNT(ttft_ms) AS ttft_count, TOTAL(ttft_ms) AS ttft_ms,
    SUM(CASE WHEN tokens_generated > 0 AND total_ms - COALESCE(ttft_ms, pre_dispatch_ms) > 0 THEN tokens_generated ELSE 0 END) AS speed_tokens,
    TOTAL(CASE WHEN tokens_generated > 0 AND total_ms - COALESCE(ttft_ms, pre_dispatch_ms) > 0 THEN total_ms - COALESCE(ttft_ms, pre_dispatch_ms) END) AS speed_ms,
    SUM(total_tokens) AS tokens, SUM(cost_micro) AS cost_micro
  FROM requests GROUP BY 1, 2, 3, 4, 5;

INSERT INTO rollup_dim_1m
  SELECT org_id, d.dim, bucket,
    CASE d.dim WHEN 0 THEN '' WHEN 1 THEN project_id WHEN 2 THEN key_id ELSE model END AS value,
    SUM(requests), SUM(total_ms), SUM(ttft_count), SUM(ttft_ms), SUM(speed_tokens), SUM(speed_ms), SUM(tokens), SUM(cost_micro)
  FROM minute_cells CROSS JOIN (SELECT 0 AS dim UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3) d
  GROUP BY org_id, d.dim, bucket, value;

DROP TABLE minute_cells;
