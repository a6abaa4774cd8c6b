-- The gateway's API each request came in on (server/schemas/request-log.ts, `RequestApi`):
-- `chat` (OpenAI chat completions), `messages` (Anthropic Messages), `count_tokens` (its
-- /v1/messages/count_tokens), `responses` (OpenAI Responses) or `embeddings`; null when unknown.
--
-- Rows written before this migration keep null. Those the gateway wrote all came in on chat
-- completions, the only API it served until now, but nothing in a row tells them from imported
-- rows (an import may have carried rows of any origin), and filling in the gateway's alone would
-- be a guess for the rest; an UPDATE of every row would also rewrite the whole table, minutes and
-- gigabytes at millions of rows. So unknown stays unknown: the console shows a dash, and a filter
-- by API never counts such a row.
--
-- A short text, as served_by (011): the import's batches send it once per batch (a coded column),
-- and a later migration may intern the request log's repeated strings (issue 54). No CHECK: SQLite
-- would test it against every existing row; the values are checked where rows come in (the
-- internal API, imports) and the gateway writes only its own.
--
-- Nullable and without a default: adding it rewrites no row, whatever the store's size.

ALTER TABLE requests ADD COLUMN api TEXT;
