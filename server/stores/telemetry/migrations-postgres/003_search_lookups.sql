-- Indexes for the search's lookups (002), which otherwise read whole tables that only grow: a
-- string turns common when seen twice (a user, a session), so an organisation may number
-- millions of strings and sets.

-- The common strings holding a text (LIKE '%text%').
CREATE INDEX search_common_text ON search_common USING gin (text gin_trgm_ops);
-- The sets holding any of those strings (terms && ids).
CREATE INDEX search_sets_terms ON search_sets USING gin (terms);
-- The rows of a few sets (a value seen now and then) found without reading the window.
CREATE INDEX requests_by_search_set ON requests (org_id, search_set, ts) WHERE search_set IS NOT NULL;
