-- A request's four timings in whole microseconds (issue 54): a REAL takes eight bytes in the
-- row whatever its value, and a time such as 1604.6 ms is not whole. A timing that is a whole
-- number of microseconds (`Math.round(ms * 1000) / 1000 === ms`: every figure the demo, the
-- gateway since this migration and most imports write) is stored as that INTEGER, one to four
-- bytes; any other as its REAL, as before. The views read both back as milliseconds, the same
-- double to the bit (request-rows.ts, storedMs), so every answer stays as it was. Measured at a
-- million demo rows: the rows from 181 to ~166 bytes.
--
-- The columns have no affinity (BLOB), so that an INTEGER stays one and says how to read it.
-- The views and their trigger are made again by this migration's step (request-rows.ts). An
-- existing store's rows are copied in id order and the old table dropped, as by 017; its indexes
-- are made after the copy.

DROP VIEW IF EXISTS requests;
DROP VIEW IF EXISTS requests_unindexed;

CREATE TABLE request_rows_timed (
  id                          INTEGER PRIMARY KEY,
  req_id                      BLOB NOT NULL, -- no affinity: a text id stays text
  ts                          INTEGER NOT NULL,
  org_code                    INTEGER NOT NULL,
  project_code                INTEGER,
  key_code                    INTEGER,
  model_code                  INTEGER NOT NULL,
  status                      INTEGER NOT NULL,
  stream                      INTEGER NOT NULL CHECK (stream IN (0, 1)),
  total_ms                    BLOB NOT NULL, -- microseconds as an INTEGER, else milliseconds as a REAL
  ttft_ms                     BLOB,
  tpot_ms                     BLOB,
  pre_dispatch_ms             BLOB NOT NULL,
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

-- storedMsOf (request-rows.ts), written out: a migration keeps the SQL it ran.
INSERT INTO request_rows_timed
  SELECT id, req_id, ts, org_code, project_code, key_code, model_code, status, stream,
    CASE WHEN abs(total_ms) < 9e12 AND round(total_ms * 1000) / 1000.0 = total_ms
      THEN CAST(round(total_ms * 1000) AS INTEGER) ELSE total_ms END,
    CASE WHEN abs(ttft_ms) < 9e12 AND round(ttft_ms * 1000) / 1000.0 = ttft_ms
      THEN CAST(round(ttft_ms * 1000) AS INTEGER) ELSE ttft_ms END,
    CASE WHEN abs(tpot_ms) < 9e12 AND round(tpot_ms * 1000) / 1000.0 = tpot_ms
      THEN CAST(round(tpot_ms * 1000) AS INTEGER) ELSE tpot_ms END,
    CASE WHEN abs(pre_dispatch_ms) < 9e12 AND round(pre_dispatch_ms * 1000) / 1000.0 = pre_dispatch_ms
      THEN CAST(round(pre_dispatch_ms * 1000) AS INTEGER) ELSE pre_dispatch_ms END,
    prompt_tokens, tokens_generated, cache_creation_input_tokens, cache_read_input_tokens,
    total_tokens, tokens_estimated, cost_micro, is_byok, termination_code, error_code, upstream_model_code,
    served_by_code, api_code, user_agent_code, attempts, metadata
  FROM request_rows ORDER BY id;

DROP TABLE request_rows;
ALTER TABLE request_rows_timed RENAME TO request_rows;

CREATE UNIQUE INDEX requests_by_id ON request_rows (req_id);
CREATE INDEX requests_by_key ON request_rows (key_code, ts);
CREATE INDEX requests_by_org ON request_rows (org_code, ts, req_id);
CREATE INDEX requests_by_cost ON request_rows (org_code, cost_micro, ts);
