-- Prompt and cache tokens by project, key and model, by UTC day and hour: the dashboard's cache
-- by model for any scope. (008's cells are by one dimension, so they give a key's cache, or a
-- model's, but not each model's within a key; reading a busy key's rows for it took most of a
-- second at a million rows.) Windows read whole cells and up to an hour of rows at either edge.
-- The measures are those of 008 (prompt_rows and cache_rows count the rows whose fields are known),
-- and the cache tokens of the rows whose prompt count is known (known_read, known_write): the share
-- of prompt tokens read from the cache is theirs alone, as a row without a prompt count has no share.

CREATE TABLE rollup_cache_hour (
  org_id        TEXT NOT NULL,
  bucket        INTEGER NOT NULL,
  project_id    TEXT NOT NULL,
  key_id        TEXT NOT NULL,
  model         TEXT NOT NULL,
  prompt_tokens INTEGER NOT NULL,
  prompt_rows   INTEGER NOT NULL,
  cache_read    INTEGER NOT NULL,
  cache_write   INTEGER NOT NULL,
  cache_rows    INTEGER NOT NULL,
  known_read    INTEGER NOT NULL,
  known_write   INTEGER NOT NULL,
  PRIMARY KEY (org_id, bucket, project_id, key_id, model)
) WITHOUT ROWID;

CREATE TABLE rollup_cache_day (
  org_id        TEXT NOT NULL,
  bucket        INTEGER NOT NULL,
  project_id    TEXT NOT NULL,
  key_id        TEXT NOT NULL,
  model         TEXT NOT NULL,
  prompt_tokens INTEGER NOT NULL,
  prompt_rows   INTEGER NOT NULL,
  cache_read    INTEGER NOT NULL,
  cache_write   INTEGER NOT NULL,
  cache_rows    INTEGER NOT NULL,
  known_read    INTEGER NOT NULL,
  known_write   INTEGER NOT NULL,
  PRIMARY KEY (org_id, bucket, project_id, key_id, model)
) WITHOUT ROWID;

-- Rows already in the store.
INSERT INTO rollup_cache_hour
  SELECT org_id, ts - ts % 3600000 AS cell, COALESCE(project_id, '') AS project, COALESCE(key_id, '') AS key, model,
    TOTAL(prompt_tokens), COUNT(prompt_tokens), TOTAL(cache_read_input_tokens), TOTAL(cache_creation_input_tokens),
    SUM(cache_read_input_tokens IS NOT NULL OR cache_creation_input_tokens IS NOT NULL),
    TOTAL(CASE WHEN prompt_tokens IS NOT NULL THEN cache_read_input_tokens END),
    TOTAL(CASE WHEN prompt_tokens IS NOT NULL THEN cache_creation_input_tokens END)
  FROM requests GROUP BY org_id, cell, project, key, model;

INSERT INTO rollup_cache_day
  SELECT org_id, bucket - bucket % 86400000 AS cell, project_id, key_id, model,
    SUM(prompt_tokens), SUM(prompt_rows), SUM(cache_read), SUM(cache_write), SUM(cache_rows),
    SUM(known_read), SUM(known_write)
  FROM rollup_cache_hour GROUP BY org_id, cell, project_id, key_id, model;
