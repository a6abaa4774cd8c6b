-- Request ids, and the search terms of hex digits, in bytes (issue 54: at ten million rows each
-- id of 36 characters was held four times, in the row, its unique index, requests_by_org and its
-- search term, and the trace ids of the metadata twice: ~200 bytes a row of 541; measured at a
-- million demo rows, this takes ~90 of them off).
--
-- request_rows.req_id: an id of the gateway's or the demo's form, `req_` and an even number of
-- lowercase hex digits, as their bytes; any other as its text (request-rows.ts, storedRequestId).
-- The views read it back as text.
-- Its unique index is made after the copy (one sort), named requests_by_id; a repeated id is
-- refused with the same message as the column's constraint gave.
-- request_text_ids: the organisations that hold an id stored as text, written with such a row
-- (never removed: retention may leave one with none). Between ids stored as bytes, the bytes sort
-- as the texts do, so a page of the log reads requests_by_org in its order unless the organisation
-- has an id of another form (queries.ts). A table, not a partial index on the rows: that index,
-- empty, made every write of rows ~25 % slower (measured at a million demo rows).
-- search_terms.text: a text of lowercase hex digits, an even number of them, alone or after
-- `req_` (request ids, trace ids), as a blob of their bytes after a byte that says which: 0 alone,
-- 1 after `req_` (search-terms.ts, storedTermText); a search reads it back as text without the row.
--
-- The views and their trigger are made again by this migration's step (request-rows.ts; a new
-- store gets them there, 015 made them before). An existing store's rows
-- and terms are copied in id order and the old tables dropped: their pages go to the file's free
-- list, reused by the rows that follow.

DROP VIEW IF EXISTS requests;
DROP VIEW IF EXISTS requests_unindexed;

CREATE TABLE request_rows_compact (
  id                          INTEGER PRIMARY KEY,
  req_id                      BLOB NOT NULL, -- no affinity: a text id stays text
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

INSERT INTO request_rows_compact
  SELECT id,
    CASE WHEN substr(req_id, 1, 4) = 'req_' AND length(req_id) > 4 AND length(req_id) % 2 = 0
        AND substr(req_id, 5) NOT GLOB '*[^0-9a-f]*'
      THEN unhex(substr(req_id, 5)) ELSE req_id END,
    ts, org_code, project_code, key_code, model_code, status, stream, total_ms, ttft_ms, tpot_ms,
    pre_dispatch_ms, prompt_tokens, tokens_generated, cache_creation_input_tokens, cache_read_input_tokens,
    total_tokens, tokens_estimated, cost_micro, is_byok, termination_code, error_code, upstream_model_code,
    served_by_code, api_code, user_agent_code, attempts, metadata
  FROM request_rows ORDER BY id;

CREATE TABLE search_terms_compact (
  id       INTEGER PRIMARY KEY,
  org_code INTEGER NOT NULL,
  text     BLOB NOT NULL, -- no affinity: a text stays text, a blob a blob
  row      INTEGER NOT NULL,
  shared   INTEGER NOT NULL DEFAULT 0 CHECK (shared IN (0, 1))
);

-- The marker byte goes in before unhex(): `||` would make a blob text.
INSERT INTO search_terms_compact (id, org_code, text, row, shared)
  SELECT id, org_code,
    CASE
      WHEN substr(text, 1, 4) = 'req_' AND length(text) > 4 AND length(text) % 2 = 0
        AND substr(text, 5) NOT GLOB '*[^0-9a-f]*'
      THEN unhex('01' || substr(text, 5))
      WHEN length(text) % 2 = 0 AND text NOT GLOB '*[^0-9a-f]*' AND text <> ''
      THEN unhex('00' || text)
      ELSE text
    END,
    row, shared
  FROM search_terms ORDER BY id;

DROP TABLE request_rows;
ALTER TABLE request_rows_compact RENAME TO request_rows;
DROP TABLE search_terms;
ALTER TABLE search_terms_compact RENAME TO search_terms;

CREATE UNIQUE INDEX requests_by_id ON request_rows (req_id);
CREATE INDEX requests_by_key ON request_rows (key_code, ts);
CREATE INDEX requests_by_org ON request_rows (org_code, ts, req_id);
CREATE INDEX requests_by_cost ON request_rows (org_code, cost_micro, ts);

CREATE TABLE request_text_ids (org_code INTEGER PRIMARY KEY);
INSERT INTO request_text_ids (org_code) SELECT DISTINCT org_code FROM request_rows WHERE typeof(req_id) = 'text';
