-- A search term that is its first row's own request id (stored as bytes, 017) or the hex digits its
-- row's metadata set aside (`metadata_hex`, 019), and is held by no other row, keeps only the byte
-- that says which (search-terms.ts, `rowTermText`): its text is read from the row. Most terms are
-- such (a request id and a trace id a row), and their digits took most of the index's bytes. A
-- shared term keeps its text, which outlives its first row.
CREATE TABLE search_terms_of_rows (
  id       INTEGER PRIMARY KEY,
  org_code INTEGER NOT NULL,
  text     BLOB NOT NULL, -- no affinity: a text stays text, a blob a blob
  row      INTEGER NOT NULL,
  shared   INTEGER NOT NULL DEFAULT 0 CHECK (shared IN (0, 1))
);

INSERT INTO search_terms_of_rows (id, org_code, text, row, shared)
  SELECT t.id, t.org_code,
    CASE
      WHEN t.shared = 0 AND typeof(t.text) = 'blob' AND length(t.text) > 1
        AND substr(t.text, 2) = (
          SELECT CASE WHEN substr(t.text, 1, 1) = x'01' THEN own.req_id ELSE own.metadata_hex END
          FROM request_rows AS own WHERE own.id = t.row)
      THEN substr(t.text, 1, 1)
      ELSE t.text
    END,
    t.row, t.shared
  FROM search_terms AS t ORDER BY t.id;

DROP TABLE search_terms;
ALTER TABLE search_terms_of_rows RENAME TO search_terms;
