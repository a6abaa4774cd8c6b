-- A row's own search texts found through the row, not as terms (issue 54). Its request id (stored
-- as bytes, 017) and the hex digits its metadata sets aside (019) were a term each, held by that row
-- alone: at ten million rows ~31 bytes a row of the store's ~270, the text itself read from the row
-- since 021. They now have signatures of their own, over chunks of rowids instead of chunks of terms
-- (search-terms.ts, `ROW_SIGNATURES`): a search reads the rows of the chunks its pieces point to and
-- checks their own texts (`ownTextsHold`). Terms remain for the other strings (metadata keys and
-- values, request ids of another form).
--
-- search_row_signatures: as search_signatures (005), by page of buckets then epoch of rows.
-- search_row_epochs: the epochs signed. An existing store's are signed when it is next opened for
-- writing (store.ts, `signEpochs`: in the upgrade's worker), reading every row once.
--
-- The terms that were a row's own (the kind byte alone, never shared) are deleted, but the newest
-- term: SQLite would give its id to the next term, under the old one's signature bits. Their bits
-- stay in the terms' signatures, which a search then passes over. A term of hex digits stored
-- whole (its row's metadata was not shaped) stays: a search finds its row twice, counted once.

CREATE TABLE search_row_signatures (
  page  INTEGER NOT NULL,
  epoch INTEGER NOT NULL,
  bits  BLOB NOT NULL,
  PRIMARY KEY (page, epoch)
) WITHOUT ROWID;

CREATE TABLE search_row_epochs (epoch INTEGER PRIMARY KEY);

DELETE FROM search_terms
WHERE shared = 0 AND typeof(text) = 'blob' AND length(text) = 1
  AND id < (SELECT MAX(id) FROM search_terms);
