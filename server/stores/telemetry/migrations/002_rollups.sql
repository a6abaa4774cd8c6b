-- Rollups of the request log by UTC day, hour and five minutes. They hold sums and counts
-- only, never averages, so any window is answered exactly: whole cells of the coarsest grain
-- that fits, finer grains toward the window's edges, raw rows for what is left at either
-- end (server/analytics/windows.ts).
--
-- rollup_<grain>: usage by project, key and model, for summaries and timeseries (five
-- minutes is the finest bucket the console's charts ask for over a day).
-- rollup_outcome_<grain>: request counts by those and status class and termination
-- reason, for the request log's exact totals (by day and hour: the edges are read raw).
--
-- A null project or key is stored as '' because a primary key cannot hold null; ids are
-- uuids, never ''. bucket is epoch ms, a multiple of the grain; status_class is status / 100;
-- speed_tokens and speed_ms are the tokens and generation time of the rows that count for
-- tokens per second. The request log's writer (server/ingest/record-requests.ts) keeps them
-- in step in the same transaction as the rows; request rows are never updated or deleted.

CREATE TABLE rollup_5m (
  org_id       TEXT NOT NULL,
  bucket       INTEGER NOT NULL,
  project_id   TEXT NOT NULL,
  key_id       TEXT NOT NULL,
  model        TEXT NOT NULL,
  requests     INTEGER NOT NULL,
  total_ms     REAL NOT NULL,
  ttft_count   INTEGER NOT NULL,
  ttft_ms      REAL NOT NULL,
  speed_tokens INTEGER NOT NULL,
  speed_ms     REAL NOT NULL,
  tokens       INTEGER NOT NULL,
  cost_micro   INTEGER NOT NULL,
  PRIMARY KEY (org_id, bucket, project_id, key_id, model)
) WITHOUT ROWID;

CREATE TABLE rollup_hour (
  org_id       TEXT NOT NULL,
  bucket       INTEGER NOT NULL,
  project_id   TEXT NOT NULL,
  key_id       TEXT NOT NULL,
  model        TEXT NOT NULL,
  requests     INTEGER NOT NULL,
  total_ms     REAL NOT NULL,
  ttft_count   INTEGER NOT NULL,
  ttft_ms      REAL NOT NULL,
  speed_tokens INTEGER NOT NULL,
  speed_ms     REAL NOT NULL,
  tokens       INTEGER NOT NULL,
  cost_micro   INTEGER NOT NULL,
  PRIMARY KEY (org_id, bucket, project_id, key_id, model)
) WITHOUT ROWID;

CREATE TABLE rollup_day (
  org_id       TEXT NOT NULL,
  bucket       INTEGER NOT NULL,
  project_id   TEXT NOT NULL,
  key_id       TEXT NOT NULL,
  model        TEXT NOT NULL,
  requests     INTEGER NOT NULL,
  total_ms     REAL NOT NULL,
  ttft_count   INTEGER NOT NULL,
  ttft_ms      REAL NOT NULL,
  speed_tokens INTEGER NOT NULL,
  speed_ms     REAL NOT NULL,
  tokens       INTEGER NOT NULL,
  cost_micro   INTEGER NOT NULL,
  PRIMARY KEY (org_id, bucket, project_id, key_id, model)
) WITHOUT ROWID;

CREATE TABLE rollup_outcome_hour (
  org_id             TEXT NOT NULL,
  bucket             INTEGER NOT NULL,
  project_id         TEXT NOT NULL,
  key_id             TEXT NOT NULL,
  model              TEXT NOT NULL,
  status_class       INTEGER NOT NULL,
  termination_reason TEXT NOT NULL,
  requests           INTEGER NOT NULL,
  PRIMARY KEY (org_id, bucket, project_id, key_id, model, status_class, termination_reason)
) WITHOUT ROWID;

CREATE TABLE rollup_outcome_day (
  org_id             TEXT NOT NULL,
  bucket             INTEGER NOT NULL,
  project_id         TEXT NOT NULL,
  key_id             TEXT NOT NULL,
  model              TEXT NOT NULL,
  status_class       INTEGER NOT NULL,
  termination_reason TEXT NOT NULL,
  requests           INTEGER NOT NULL,
  PRIMARY KEY (org_id, bucket, project_id, key_id, model, status_class, termination_reason)
) WITHOUT ROWID;

-- Rows already in the store.
INSERT INTO rollup_5m
  SELECT org_id, ts - ts % 300000 AS cell, COALESCE(project_id, '') AS project, COALESCE(key_id, '') AS key, model,
    COUNT(*), SUM(total_ms), COUNT(ttft_ms), TOTAL(ttft_ms),
    SUM(CASE WHEN tokens_generated > 0 AND total_ms - COALESCE(ttft_ms, pre_dispatch_ms) > 0 THEN tokens_generated ELSE 0 END),
    TOTAL(CASE WHEN tokens_generated > 0 AND total_ms - COALESCE(ttft_ms, pre_dispatch_ms) > 0 THEN total_ms - COALESCE(ttft_ms, pre_dispatch_ms) END),
    SUM(total_tokens), SUM(cost_micro)
  FROM requests GROUP BY org_id, cell, project, key, model;

INSERT INTO rollup_hour
  SELECT org_id, ts - ts % 3600000 AS cell, COALESCE(project_id, '') AS project, COALESCE(key_id, '') AS key, model,
    COUNT(*), SUM(total_ms), COUNT(ttft_ms), TOTAL(ttft_ms),
    SUM(CASE WHEN tokens_generated > 0 AND total_ms - COALESCE(ttft_ms, pre_dispatch_ms) > 0 THEN tokens_generated ELSE 0 END),
    TOTAL(CASE WHEN tokens_generated > 0 AND total_ms - COALESCE(ttft_ms, pre_dispatch_ms) > 0 THEN total_ms - COALESCE(ttft_ms, pre_dispatch_ms) END),
    SUM(total_tokens), SUM(cost_micro)
  FROM requests GROUP BY org_id, cell, project, key, model;

INSERT INTO rollup_day
  SELECT org_id, ts - ts % 86400000 AS cell, COALESCE(project_id, '') AS project, COALESCE(key_id, '') AS key, model,
    COUNT(*), SUM(total_ms), COUNT(ttft_ms), TOTAL(ttft_ms),
    SUM(CASE WHEN tokens_generated > 0 AND total_ms - COALESCE(ttft_ms, pre_dispatch_ms) > 0 THEN tokens_generated ELSE 0 END),
    TOTAL(CASE WHEN tokens_generated > 0 AND total_ms - COALESCE(ttft_ms, pre_dispatch_ms) > 0 THEN total_ms - COALESCE(ttft_ms, pre_dispatch_ms) END),
    SUM(total_tokens), SUM(cost_micro)
  FROM requests GROUP BY org_id, cell, project, key, model;

INSERT INTO rollup_outcome_hour
  SELECT org_id, ts - ts % 3600000 AS cell, COALESCE(project_id, '') AS project, COALESCE(key_id, '') AS key, model,
    status / 100 AS class, termination_reason, COUNT(*)
  FROM requests GROUP BY org_id, cell, project, key, model, class, termination_reason;

INSERT INTO rollup_outcome_day
  SELECT org_id, ts - ts % 86400000 AS cell, COALESCE(project_id, '') AS project, COALESCE(key_id, '') AS key, model,
    status / 100 AS class, termination_reason, COUNT(*)
  FROM requests GROUP BY org_id, cell, project, key, model, class, termination_reason;

-- The request log's minimum-cost filter: its exact total is counted from this index.
CREATE INDEX requests_by_cost ON requests (org_id, cost_micro, ts);

-- The request log's pages: newest first, ties by req_id, read from the index alone until
-- the page's rows are known (offsets deep into the log skip index entries, not rows).
DROP INDEX requests_by_org;
CREATE INDEX requests_by_org ON requests (org_id, ts, req_id);
