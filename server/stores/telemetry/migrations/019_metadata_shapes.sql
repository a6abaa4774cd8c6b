-- A request's metadata by its shape (issue 54; request-rows.ts, metadataShape): the JSON with the
-- first value of sixteen or more lowercase hex digits (a trace id) set aside as its bytes in
-- metadata_hex, and the rest, the shape, coded in request_strings when two rows or more hold it.
-- The metadata took ~80 bytes of a row's 167 at ten million demo rows; its shape's code and the
-- trace id's bytes take ~20. Any other metadata stays in its row as its text: a shape held by one
-- row only, and every metadata a row written by hand gives (the view's trigger). The views read
-- both back as the JSON written, to the byte.
--
-- metadata: the text, or the INTEGER code of its shape (no affinity: a code stays an integer).
-- The views and their trigger are made again by this migration's step (request-rows.ts). An
-- existing store's rows are copied in id order and the old table dropped, as by 017 and 018.
-- metadata_shape() and metadata_hex() are the store's own SQL functions (sql-functions.ts).

DROP VIEW IF EXISTS requests;
DROP VIEW IF EXISTS requests_unindexed;

INSERT INTO request_strings (text)
  SELECT shape FROM (SELECT metadata_shape(metadata) AS shape FROM request_rows)
  WHERE shape IS NOT NULL GROUP BY shape HAVING COUNT(*) > 1
  ON CONFLICT (text) DO NOTHING;

CREATE TABLE request_rows_shaped (
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
  metadata                    BLOB NOT NULL, -- the JSON text, or the INTEGER code of its shape
  metadata_hex                BLOB           -- the hex digits the shape set aside, as bytes
);

INSERT INTO request_rows_shaped
  SELECT r.id, r.req_id, r.ts, r.org_code, r.project_code, r.key_code, r.model_code, r.status, r.stream,
    r.total_ms, r.ttft_ms, r.tpot_ms, r.pre_dispatch_ms, r.prompt_tokens, r.tokens_generated,
    r.cache_creation_input_tokens, r.cache_read_input_tokens, r.total_tokens, r.tokens_estimated,
    r.cost_micro, r.is_byok, r.termination_code, r.error_code, r.upstream_model_code, r.served_by_code,
    r.api_code, r.user_agent_code, r.attempts,
    CASE WHEN s.code IS NULL THEN r.metadata ELSE s.code END,
    CASE WHEN s.code IS NULL THEN NULL ELSE metadata_hex(r.metadata) END
  FROM request_rows AS r LEFT JOIN request_strings AS s ON s.text = metadata_shape(r.metadata)
  ORDER BY r.id;

DROP TABLE request_rows;
ALTER TABLE request_rows_shaped RENAME TO request_rows;

CREATE UNIQUE INDEX requests_by_id ON request_rows (req_id);
CREATE INDEX requests_by_key ON request_rows (key_code, ts);
CREATE INDEX requests_by_org ON request_rows (org_code, ts, req_id);
CREATE INDEX requests_by_cost ON request_rows (org_code, cost_micro, ts);
