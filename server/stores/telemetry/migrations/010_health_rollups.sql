-- What provider and model health (server/analytics/health.ts) needs beyond 008's dashboard cells,
-- kept in the same cells so that a model's hour or day is read from them and never from the rows:
--
-- upstream_429: rows the upstream refused with 429 (status 429 with an upstream error). The
--   gateway's own rate-limit refusals (decisions.md: status 429, no upstream error) stay in
--   `refused` only, so a key past its limit never reads as a provider out of capacity.
-- last_ok: the newest `ts` of the cell's rows answered below 400 (those `ok` counts); null when
--   none was. Merged with the larger of the two, never summed.
--
-- The writer (rollup-writer.ts) keeps both in step with the rows, in their transaction.

ALTER TABLE rollup_board_5m ADD COLUMN upstream_429 INTEGER NOT NULL DEFAULT 0;
ALTER TABLE rollup_board_5m ADD COLUMN last_ok INTEGER;
ALTER TABLE rollup_board_hour ADD COLUMN upstream_429 INTEGER NOT NULL DEFAULT 0;
ALTER TABLE rollup_board_hour ADD COLUMN last_ok INTEGER;
ALTER TABLE rollup_board_day ADD COLUMN upstream_429 INTEGER NOT NULL DEFAULT 0;
ALTER TABLE rollup_board_day ADD COLUMN last_ok INTEGER;

-- Rows already in the store: by five minutes and combination first, then by dimension (only the
-- cells with something to set), then the coarser grains from those.
CREATE TEMP TABLE health_cells AS
  SELECT org_id, ts - ts % 300000 AS bucket, COALESCE(project_id, '') AS project_id, COALESCE(key_id, '') AS key_id, model,
    SUM(status = 429 AND upstream_error IS NOT NULL) AS upstream_429,
    MAX(CASE WHEN status < 400 THEN ts END) AS last_ok
  FROM requests GROUP BY 1, 2, 3, 4, 5;

CREATE TEMP TABLE health_dims AS
  SELECT org_id, d.dim, bucket,
    CASE d.dim WHEN 0 THEN '' WHEN 1 THEN project_id WHEN 2 THEN key_id ELSE model END AS value,
    SUM(upstream_429) AS upstream_429, MAX(last_ok) AS last_ok
  FROM health_cells CROSS JOIN (SELECT 0 AS dim UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3) d
  GROUP BY org_id, d.dim, bucket, value
  HAVING SUM(upstream_429) > 0 OR MAX(last_ok) IS NOT NULL;

DROP TABLE health_cells;

UPDATE rollup_board_5m AS c SET upstream_429 = h.upstream_429, last_ok = h.last_ok
  FROM health_dims AS h
  WHERE c.org_id = h.org_id AND c.dim = h.dim AND c.bucket = h.bucket AND c.value = h.value;

UPDATE rollup_board_hour AS c SET upstream_429 = h.upstream_429, last_ok = h.last_ok
  FROM (SELECT org_id, dim, bucket - bucket % 3600000 AS bucket, value, SUM(upstream_429) AS upstream_429, MAX(last_ok) AS last_ok
    FROM health_dims GROUP BY 1, 2, 3, 4) AS h
  WHERE c.org_id = h.org_id AND c.dim = h.dim AND c.bucket = h.bucket AND c.value = h.value;

UPDATE rollup_board_day AS c SET upstream_429 = h.upstream_429, last_ok = h.last_ok
  FROM (SELECT org_id, dim, bucket - bucket % 86400000 AS bucket, value, SUM(upstream_429) AS upstream_429, MAX(last_ok) AS last_ok
    FROM health_dims GROUP BY 1, 2, 3, 4) AS h
  WHERE c.org_id = h.org_id AND c.dim = h.dim AND c.bucket = h.bucket AND c.value = h.value;

DROP TABLE health_dims;
