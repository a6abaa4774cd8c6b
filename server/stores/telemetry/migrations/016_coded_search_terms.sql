-- Each search term's organisation as its code in request_strings (015) rather than its id of 36
-- characters: a request's own terms (its request id, its trace ids) are about one and a half a
-- row, so this is about 55 bytes a row (issue 54). The strings of organisations whose rows are
-- all gone, but whose terms are not yet, are added to request_strings first.

CREATE TABLE search_terms_coded (
  id       INTEGER PRIMARY KEY,
  org_code INTEGER NOT NULL,
  text     TEXT NOT NULL,
  row      INTEGER NOT NULL,
  shared   INTEGER NOT NULL DEFAULT 0 CHECK (shared IN (0, 1))
);

INSERT INTO request_strings (text) SELECT DISTINCT org_id FROM search_terms WHERE true
  ON CONFLICT (text) DO NOTHING;
INSERT INTO search_terms_coded (id, org_code, text, row, shared)
  SELECT t.id, s.code, t.text, t.row, t.shared
  FROM search_terms AS t JOIN request_strings AS s ON s.text = t.org_id
  ORDER BY t.id;

DROP TABLE search_terms;
ALTER TABLE search_terms_coded RENAME TO search_terms;
