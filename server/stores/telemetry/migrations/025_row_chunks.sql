-- The rows' own signatures (024) over chunks of 256 rowids instead of 128 (issue 54): 9 bytes a row
-- instead of 18 at ten million demo rows, for a search of a short piece of an id reading more rows
-- (search-terms.ts, `CHUNK_ROWS`). Those a store holds are deleted here and signed again from the
-- rows when it is next opened for writing (store.ts, `signEpochs`: in the upgrade's worker).

DELETE FROM search_row_signatures;
DELETE FROM search_row_epochs;
