-- The request log's search on PostgreSQL: a case-insensitive substring of the request id or
-- of any metadata key or value, answered from an index written in the rows' transaction
-- (postgres/search-columns.ts writes it, server/analytics/postgres-search.ts reads it).
--
-- A row's strings, casefolded as JavaScript folds them, are split in two:
-- - the common ones (metadata keys and values the writer has seen before: customer names,
--   features, tiers) are numbered in search_common; the set of a row's common strings is
--   numbered in search_sets and kept in requests.search_set, and search_hours counts each
--   set's rows by hour, so a window's rows holding any of a text's sets are a sum;
-- - the others (its request id, trace ids, what the writer sees for the first time) are
--   joined by U+0001 into requests.search_rare, with a trigram index: the few rows whose
--   own strings hold a text are found from it.
-- A string is common on a row or rare on it, never both; which it is depends only on what
-- the writer had seen, so every answer is exact whatever the writers saw.

CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE search_common (
  org_id TEXT COLLATE "C" NOT NULL,
  text   TEXT COLLATE "C" NOT NULL,
  id     BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
  PRIMARY KEY (org_id, text)
);

CREATE TABLE search_sets (
  id     BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  org_id TEXT COLLATE "C" NOT NULL,
  terms  BIGINT[] NOT NULL, -- ids of search_common, ascending
  UNIQUE (org_id, terms)
);

CREATE TABLE search_hours (
  org_id TEXT COLLATE "C" NOT NULL,
  set_id BIGINT NOT NULL,
  hour   BIGINT NOT NULL, -- ms since the epoch, a whole hour
  rows   BIGINT NOT NULL,
  PRIMARY KEY (org_id, set_id, hour)
);

-- Rows written before this migration: every string rare, folded by ICU's root collation as
-- the search read them until now.
ALTER TABLE requests ADD COLUMN search_set BIGINT, ADD COLUMN search_rare TEXT COLLATE "C";
UPDATE requests SET search_rare = lower(req_id COLLATE "und-x-icu") || COALESCE((
  SELECT string_agg(E'\x01' || lower(m.key COLLATE "und-x-icu")
    || COALESCE(E'\x01' || lower(m.value COLLATE "und-x-icu"), ''), '')
  FROM jsonb_each_text(CAST(replace(metadata, '\u0000', '\ufffd') AS jsonb)) AS m (key, value)), '');
ALTER TABLE requests ALTER COLUMN search_rare SET NOT NULL;

-- fastupdate: a write's entries go to the index's pending list, merged in bulk later.
CREATE INDEX requests_search_rare ON requests USING gin (search_rare gin_trgm_ops) WITH (fastupdate = on);
