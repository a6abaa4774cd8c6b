-- The dashboard's cells (server/analytics/dashboard.ts), by one dimension at a time like 004's
-- tables, by UTC day, hour and five minutes: requests by outcome, cost, tokens by kind, and the
-- latency and time to first token as mergeable sketches (stores/telemetry/latency-sketch.ts),
-- so that percentiles over any window and any bucket come from a few cells instead of the rows.
--
-- Outcomes: ok is a status below 400; refused a 4xx with no upstream error (the gateway
-- answered it before dispatch: decisions.md's refusal rows, or the demo's at-gateway 429/413);
-- client_errors the other 4xx; server_errors 5xx. prompt_rows and cache_rows count the rows
-- whose prompt tokens, and cache fields, are known, so that a sum over none reads as unknown.
-- ttft is null where no row of the cell had a first token. Five minutes is the finest grain:
-- every zone's offset is a multiple of a quarter hour, so a reporting zone's buckets always
-- fall on five-minute cells. The writer (rollup-writer.ts) keeps these in step with the rows.

CREATE TABLE rollup_board_5m (
  org_id           TEXT NOT NULL,
  dim              INTEGER NOT NULL CHECK (dim BETWEEN 0 AND 3),
  bucket           INTEGER NOT NULL,
  value            TEXT NOT NULL,
  requests         INTEGER NOT NULL,
  ok               INTEGER NOT NULL,
  client_errors    INTEGER NOT NULL,
  server_errors    INTEGER NOT NULL,
  refused          INTEGER NOT NULL,
  cost_micro       INTEGER NOT NULL,
  prompt_tokens    INTEGER NOT NULL,
  prompt_rows      INTEGER NOT NULL,
  generated_tokens INTEGER NOT NULL,
  cache_read       INTEGER NOT NULL,
  cache_write      INTEGER NOT NULL,
  cache_rows       INTEGER NOT NULL,
  speed_tokens     INTEGER NOT NULL,
  speed_ms         REAL NOT NULL,
  latency          BLOB NOT NULL,
  ttft             BLOB,
  PRIMARY KEY (org_id, dim, bucket, value)
) WITHOUT ROWID;

CREATE TABLE rollup_board_hour (
  org_id           TEXT NOT NULL,
  dim              INTEGER NOT NULL CHECK (dim BETWEEN 0 AND 3),
  bucket           INTEGER NOT NULL,
  value            TEXT NOT NULL,
  requests         INTEGER NOT NULL,
  ok               INTEGER NOT NULL,
  client_errors    INTEGER NOT NULL,
  server_errors    INTEGER NOT NULL,
  refused          INTEGER NOT NULL,
  cost_micro       INTEGER NOT NULL,
  prompt_tokens    INTEGER NOT NULL,
  prompt_rows      INTEGER NOT NULL,
  generated_tokens INTEGER NOT NULL,
  cache_read       INTEGER NOT NULL,
  cache_write      INTEGER NOT NULL,
  cache_rows       INTEGER NOT NULL,
  speed_tokens     INTEGER NOT NULL,
  speed_ms         REAL NOT NULL,
  latency          BLOB NOT NULL,
  ttft             BLOB,
  PRIMARY KEY (org_id, dim, bucket, value)
) WITHOUT ROWID;

CREATE TABLE rollup_board_day (
  org_id           TEXT NOT NULL,
  dim              INTEGER NOT NULL CHECK (dim BETWEEN 0 AND 3),
  bucket           INTEGER NOT NULL,
  value            TEXT NOT NULL,
  requests         INTEGER NOT NULL,
  ok               INTEGER NOT NULL,
  client_errors    INTEGER NOT NULL,
  server_errors    INTEGER NOT NULL,
  refused          INTEGER NOT NULL,
  cost_micro       INTEGER NOT NULL,
  prompt_tokens    INTEGER NOT NULL,
  prompt_rows      INTEGER NOT NULL,
  generated_tokens INTEGER NOT NULL,
  cache_read       INTEGER NOT NULL,
  cache_write      INTEGER NOT NULL,
  cache_rows       INTEGER NOT NULL,
  speed_tokens     INTEGER NOT NULL,
  speed_ms         REAL NOT NULL,
  latency          BLOB NOT NULL,
  ttft             BLOB,
  PRIMARY KEY (org_id, dim, bucket, value)
) WITHOUT ROWID;

-- Rows already in the store: by five minutes and combination first, then by dimension, then
-- the coarser grains from the five-minute cells.
CREATE TEMP TABLE board_cells AS
  SELECT org_id, ts - ts % 300000 AS bucket, COALESCE(project_id, '') AS project_id, COALESCE(key_id, '') AS key_id, model,
    COUNT(*) AS requests, SUM(status < 400) AS ok,
    SUM(status >= 400 AND status < 500 AND upstream_error IS NOT NULL) AS client_errors,
    SUM(status >= 500) AS server_errors,
    SUM(status >= 400 AND status < 500 AND upstream_error IS NULL) AS refused,
    SUM(cost_micro) AS cost_micro, TOTAL(prompt_tokens) AS prompt_tokens, COUNT(prompt_tokens) AS prompt_rows,
    SUM(tokens_generated) AS generated_tokens, TOTAL(cache_read_input_tokens) AS cache_read,
    TOTAL(cache_creation_input_tokens) AS cache_write,
    SUM(cache_read_input_tokens IS NOT NULL OR cache_creation_input_tokens IS NOT NULL) AS cache_rows,
    SUM(CASE WHEN tokens_generated > 0 AND total_ms - COALESCE(ttft_ms, pre_dispatch_ms) > 0 THEN tokens_generated ELSE 0 END) AS speed_tokens,
    TOTAL(CASE WHEN tokens_generated > 0 AND total_ms - COALESCE(ttft_ms, pre_dispatch_ms) > 0 THEN total_ms - COALESCE(ttft_ms, pre_dispatch_ms) END) AS speed_ms,
    sketch_of(total_ms) AS latency, sketch_of(ttft_ms) AS ttft
  FROM requests GROUP BY 1, 2, 3, 4, 5;

INSERT INTO rollup_board_5m
  SELECT org_id, d.dim, bucket,
    CASE d.dim WHEN 0 THEN '' WHEN 1 THEN project_id WHEN 2 THEN key_id ELSE model END AS value,
    SUM(requests), SUM(ok), SUM(client_errors), SUM(server_errors), SUM(refused), SUM(cost_micro),
    SUM(prompt_tokens), SUM(prompt_rows), SUM(generated_tokens), SUM(cache_read), SUM(cache_write), SUM(cache_rows),
    SUM(speed_tokens), SUM(speed_ms), sketch_sum(latency), sketch_sum(ttft)
  FROM board_cells CROSS JOIN (SELECT 0 AS dim UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3) d
  GROUP BY org_id, d.dim, bucket, value;

DROP TABLE board_cells;

INSERT INTO rollup_board_hour
  SELECT org_id, dim, bucket - bucket % 3600000 AS cell, value,
    SUM(requests), SUM(ok), SUM(client_errors), SUM(server_errors), SUM(refused), SUM(cost_micro),
    SUM(prompt_tokens), SUM(prompt_rows), SUM(generated_tokens), SUM(cache_read), SUM(cache_write), SUM(cache_rows),
    SUM(speed_tokens), SUM(speed_ms), sketch_sum(latency), sketch_sum(ttft)
  FROM rollup_board_5m GROUP BY org_id, dim, cell, value;

INSERT INTO rollup_board_day
  SELECT org_id, dim, bucket - bucket % 86400000 AS cell, value,
    SUM(requests), SUM(ok), SUM(client_errors), SUM(server_errors), SUM(refused), SUM(cost_micro),
    SUM(prompt_tokens), SUM(prompt_rows), SUM(generated_tokens), SUM(cache_read), SUM(cache_write), SUM(cache_rows),
    SUM(speed_tokens), SUM(speed_ms), sketch_sum(latency), sketch_sum(ttft)
  FROM rollup_board_5m GROUP BY org_id, dim, cell, value;
