-- Which target served a request and every upstream attempt it took, as SQLite's 011 (see there):
-- `served_by` is `provider/model` or null, `attempts` a JSON array of attempts as text, or null.
-- Nullable and without a default: PostgreSQL adds them without rewriting the table.

ALTER TABLE requests
  ADD COLUMN served_by TEXT COLLATE "C",
  ADD COLUMN attempts TEXT COLLATE "C";
