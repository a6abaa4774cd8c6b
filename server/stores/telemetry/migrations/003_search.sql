-- An index for the request log's `search`: a case-insensitive substring of the request id
-- or of any metadata key or value (server/analytics/search-index.ts reads it, and
-- server/stores/telemetry/search-writer.ts keeps it in the writer's transaction).
--
-- search_terms: the strings a search can match, casefolded, each with the first row that
-- holds it (`row`, a request rowid). A request id is a term of its own row. A metadata key
-- or value seen in more than one row is `shared`: its other rows hold it in search_rows.
-- The writer finds shared terms of earlier batches in search_common, and does not look for
-- the others (trace ids and such are seen once); a string seen once in each of two batches
-- is then two terms, which a search reads both of.
-- search_common: the shared terms by organisation and text.
-- search_rows: for each request row (rowid = the request's rowid), the shared terms it holds
-- other than as their first row, as tokens `t<id>`: the rows of a term, kept by FTS5.
-- search_term_blocks: how many rows of each block of 65,536 rowids hold a shared term in
-- search_rows, so a window's count of one term's rows is a sum.
-- search_signatures: which terms may contain a text, without a trigram index (which cost
-- the writer more than the rows themselves: request ids and trace ids are random text).
-- Terms are grouped by id into chunks of 256 and epochs of 65,536; for each complete epoch
-- and each of 16,384 buckets, 32 bytes hold one bit per chunk of the epoch, set when a term
-- of the chunk has a four-character piece that hashes to the bucket (search-terms.ts); a row
-- holds the bytes of 64 consecutive buckets (`page` = bucket / 64). A text's
-- pieces then point to the few chunks to read; the terms of epochs not yet signed
-- (search_epochs lists the signed ones) are read one by one.
-- search_blocks: the time span of each block of 65,536 request rowids, so a count over a
-- window reads whole blocks from the index and checks the time of rows in edge blocks only.
--
-- Request rowids must not change: never VACUUM the telemetry store (VACUUM may renumber
-- the rowids of a table without an INTEGER PRIMARY KEY).

CREATE TABLE search_terms (
  id     INTEGER PRIMARY KEY,
  org_id TEXT NOT NULL,
  text   TEXT NOT NULL,
  row    INTEGER NOT NULL,
  shared INTEGER NOT NULL DEFAULT 0 CHECK (shared IN (0, 1))
);

CREATE TABLE search_common (
  org_id TEXT NOT NULL,
  text   TEXT NOT NULL,
  term   INTEGER NOT NULL,
  PRIMARY KEY (org_id, text)
) WITHOUT ROWID;

CREATE VIRTUAL TABLE search_rows USING fts5(terms, content = '', detail = 'none', tokenize = 'ascii');

CREATE TABLE search_term_blocks (
  term  INTEGER NOT NULL,
  block INTEGER NOT NULL,
  rows  INTEGER NOT NULL,
  PRIMARY KEY (term, block)
) WITHOUT ROWID;

CREATE TABLE search_signatures (
  epoch INTEGER NOT NULL,
  page  INTEGER NOT NULL,
  bits  BLOB NOT NULL,
  PRIMARY KEY (epoch, page)
) WITHOUT ROWID;

CREATE TABLE search_epochs (epoch INTEGER PRIMARY KEY);

CREATE TABLE search_blocks (
  block  INTEGER PRIMARY KEY,
  min_ts INTEGER NOT NULL,
  max_ts INTEGER NOT NULL
);

-- Backfill (casefold() is registered on the connection: search-terms.ts).
INSERT INTO search_terms (org_id, text, row)
  SELECT org_id, casefold(req_id), rowid FROM requests;

CREATE TABLE search_backfill (row INTEGER NOT NULL, org_id TEXT NOT NULL, text TEXT NOT NULL);
INSERT INTO search_backfill (row, org_id, text)
  SELECT r.rowid, r.org_id, casefold(m.key) FROM requests r CROSS JOIN json_each(r.metadata) m
  UNION
  SELECT r.rowid, r.org_id, casefold(m.value) FROM requests r CROSS JOIN json_each(r.metadata) m
  WHERE m.type = 'text';
INSERT INTO search_terms (org_id, text, row, shared)
  SELECT org_id, text, MIN(row), COUNT(*) > 1 FROM search_backfill GROUP BY org_id, text;
INSERT INTO search_common (org_id, text, term)
  SELECT org_id, text, id FROM search_terms WHERE shared;
-- CROSS JOIN keeps this order: each row's strings looked up by their key.
INSERT INTO search_rows (rowid, terms)
  SELECT b.row, group_concat('t' || c.term, ' ')
  FROM search_backfill b CROSS JOIN search_common c CROSS JOIN search_terms t
  WHERE c.org_id = b.org_id AND c.text = b.text AND t.id = c.term AND t.row <> b.row
  GROUP BY b.row;
INSERT INTO search_term_blocks (term, block, rows)
  SELECT c.term, b.row >> 16, COUNT(*)
  FROM search_backfill b CROSS JOIN search_common c CROSS JOIN search_terms t
  WHERE c.org_id = b.org_id AND c.text = b.text AND t.id = c.term AND t.row <> b.row
  GROUP BY c.term, b.row >> 16;
DROP TABLE search_backfill;

INSERT INTO search_blocks (block, min_ts, max_ts)
  SELECT rowid >> 16, MIN(ts), MAX(ts) FROM requests GROUP BY rowid >> 16;

-- The signatures of the backfilled terms are written when the store is next opened for
-- writing (signEpochs in search-terms.ts): hashing is done in JavaScript.
