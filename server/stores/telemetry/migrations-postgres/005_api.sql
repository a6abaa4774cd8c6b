-- The gateway's API each request came in on, as SQLite's 012 (see there for why rows written
-- before it keep null, unknown): `chat`, `messages`, `count_tokens`, `responses` or `embeddings`.
-- Nullable and without a default: PostgreSQL adds it without rewriting the table.

ALTER TABLE requests
  ADD COLUMN api TEXT COLLATE "C";
