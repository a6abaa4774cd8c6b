-- The request log's repeated strings stored once (issue 54: at ten million rows the store took
-- 909 bytes a row, 12× DuckDB's file of the same rows, and the three ids of 36 characters were
-- the largest part of the rows and of the organisation, cost and key indexes).
--
-- request_strings: each distinct value of a coded column (organisation, project and key ids,
-- model, termination reason, upstream error, upstream model, served by, API, user agent), once,
-- whichever column it came from. Never deleted: retention removes rows, and their strings are
-- few (a new key or model), while a code kept for nothing costs a few bytes.
-- request_rows: the rows, with codes in those columns (server/stores/telemetry/request-rows.ts
-- names them). `id` is the rowid the search index is keyed by, kept as it was; declared as the
-- INTEGER PRIMARY KEY, a VACUUM can no longer renumber it.
-- The view `requests` reads them as the log's columns (made from the columns' list in
-- request-rows.ts, by 017's step since then), so every read of the log is unchanged.
--
-- An existing store's rows are copied in rowid order, then the old table dropped: its pages go
-- to the file's free list, reused by the rows that follow (the file does not shrink).

CREATE TABLE request_strings (
  code INTEGER PRIMARY KEY,
  text TEXT NOT NULL UNIQUE
);

-- Columns in the order reads need them: SQLite walks a row's values from the first.
CREATE TABLE request_rows (
  id                          INTEGER PRIMARY KEY,
  req_id                      TEXT NOT NULL UNIQUE,
  ts                          INTEGER NOT NULL,
  org_code                    INTEGER NOT NULL,
  project_code                INTEGER,
  key_code                    INTEGER,
  model_code                  INTEGER NOT NULL,
  status                      INTEGER NOT NULL,
  stream                      INTEGER NOT NULL CHECK (stream IN (0, 1)),
  total_ms                    REAL NOT NULL,
  ttft_ms                     REAL,
  tpot_ms                     REAL,
  pre_dispatch_ms             REAL NOT NULL,
  prompt_tokens               INTEGER,
  tokens_generated            INTEGER NOT NULL,
  cache_creation_input_tokens INTEGER,
  cache_read_input_tokens     INTEGER,
  total_tokens                INTEGER NOT NULL,
  tokens_estimated            INTEGER NOT NULL CHECK (tokens_estimated IN (0, 1)),
  cost_micro                  INTEGER NOT NULL,
  is_byok                     INTEGER NOT NULL CHECK (is_byok IN (0, 1)),
  termination_code            INTEGER NOT NULL,
  error_code                  INTEGER,
  upstream_model_code         INTEGER,
  served_by_code              INTEGER,
  api_code                    INTEGER,
  user_agent_code             INTEGER NOT NULL,
  attempts                    TEXT,
  metadata                    TEXT NOT NULL
);

-- The strings first, from the distinct combinations (one pass over the rows, few combinations).
CREATE TEMP TABLE request_combinations AS
  SELECT DISTINCT org_id, project_id, key_id, model, termination_reason, upstream_error, upstream_model,
    served_by, api, user_agent
  FROM requests;
INSERT INTO request_strings (text)
  SELECT org_id FROM request_combinations UNION SELECT project_id FROM request_combinations
  UNION SELECT key_id FROM request_combinations UNION SELECT model FROM request_combinations
  UNION SELECT termination_reason FROM request_combinations UNION SELECT upstream_error FROM request_combinations
  UNION SELECT upstream_model FROM request_combinations UNION SELECT served_by FROM request_combinations
  UNION SELECT api FROM request_combinations UNION SELECT user_agent FROM request_combinations
  EXCEPT SELECT NULL;
DROP TABLE request_combinations;

INSERT INTO request_rows
  SELECT r.rowid, r.req_id, r.ts,
    (SELECT code FROM request_strings WHERE text = r.org_id),
    (SELECT code FROM request_strings WHERE text = r.project_id),
    (SELECT code FROM request_strings WHERE text = r.key_id),
    (SELECT code FROM request_strings WHERE text = r.model),
    r.status, r.stream, r.total_ms, r.ttft_ms, r.tpot_ms, r.pre_dispatch_ms, r.prompt_tokens,
    r.tokens_generated, r.cache_creation_input_tokens, r.cache_read_input_tokens, r.total_tokens,
    r.tokens_estimated, r.cost_micro, r.is_byok,
    (SELECT code FROM request_strings WHERE text = r.termination_reason),
    (SELECT code FROM request_strings WHERE text = r.upstream_error),
    (SELECT code FROM request_strings WHERE text = r.upstream_model),
    (SELECT code FROM request_strings WHERE text = r.served_by),
    (SELECT code FROM request_strings WHERE text = r.api),
    (SELECT code FROM request_strings WHERE text = r.user_agent),
    r.attempts, r.metadata
  FROM requests AS r ORDER BY r.rowid;

DROP TABLE requests;

-- The same indexes on codes, made after the copy (one sort each rather than a row at a time).
CREATE INDEX requests_by_key ON request_rows (key_code, ts);
CREATE INDEX requests_by_org ON request_rows (org_code, ts, req_id);
CREATE INDEX requests_by_cost ON request_rows (org_code, cost_micro, ts);
