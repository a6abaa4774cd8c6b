-- The request-log store on PostgreSQL: the tables the SQLite store has after its migration 010,
-- in one step (no PostgreSQL store predates them), with the same names and columns, so that the
-- writer's rows (rollup-writer.ts's `rollupRows`) and the analytics' reads fit both. See the
-- SQLite migrations for what each rollup holds and why. Times are BIGINT milliseconds since the
-- epoch (UTC); cost is BIGINT micro-PKR; sums are BIGINT or double precision, never averages.
-- Text is compared byte by byte (COLLATE "C"), as SQLite compares it: the request log's order
-- (newest first, ties by request id) and every sorted list read the same on both stores.
-- The search index is not here: PostgreSQL's is a migration of its own.

CREATE TABLE requests (
  req_id                      TEXT COLLATE "C" PRIMARY KEY,
  ts                          BIGINT NOT NULL,
  org_id                      TEXT COLLATE "C" NOT NULL,
  project_id                  TEXT COLLATE "C",
  key_id                      TEXT COLLATE "C",
  model                       TEXT COLLATE "C" NOT NULL,
  status                      INTEGER NOT NULL,
  stream                      INTEGER NOT NULL CHECK (stream IN (0, 1)),
  total_ms                    DOUBLE PRECISION NOT NULL,
  ttft_ms                     DOUBLE PRECISION,
  tpot_ms                     DOUBLE PRECISION,
  pre_dispatch_ms             DOUBLE PRECISION NOT NULL,
  prompt_tokens               BIGINT,
  tokens_generated            BIGINT NOT NULL,
  cache_creation_input_tokens BIGINT,
  cache_read_input_tokens     BIGINT,
  total_tokens                BIGINT NOT NULL,
  tokens_estimated            INTEGER NOT NULL CHECK (tokens_estimated IN (0, 1)),
  cost_micro                  BIGINT NOT NULL,
  is_byok                     INTEGER NOT NULL CHECK (is_byok IN (0, 1)),
  termination_reason          TEXT COLLATE "C" NOT NULL,
  upstream_error              TEXT COLLATE "C",
  upstream_model              TEXT COLLATE "C", -- null: the whole upstream block is unknown
  user_agent                  TEXT COLLATE "C" NOT NULL,
  metadata                    TEXT COLLATE "C" NOT NULL -- JSON object as written, keys lowercased
);
CREATE INDEX requests_by_key ON requests (key_id, ts);
CREATE INDEX requests_by_org ON requests (org_id, ts, req_id);
CREATE INDEX requests_by_cost ON requests (org_id, cost_micro, ts);

-- Usage by project, key and model (a null project or key is ''), as SQLite's 002.
CREATE TABLE rollup_5m (
  org_id       TEXT COLLATE "C" NOT NULL,
  bucket       BIGINT NOT NULL,
  project_id   TEXT COLLATE "C" NOT NULL,
  key_id       TEXT COLLATE "C" NOT NULL,
  model        TEXT COLLATE "C" NOT NULL,
  requests     BIGINT NOT NULL,
  total_ms     DOUBLE PRECISION NOT NULL,
  ttft_count   BIGINT NOT NULL,
  ttft_ms      DOUBLE PRECISION NOT NULL,
  speed_tokens BIGINT NOT NULL,
  speed_ms     DOUBLE PRECISION NOT NULL,
  tokens       BIGINT NOT NULL,
  cost_micro   BIGINT NOT NULL,
  PRIMARY KEY (org_id, bucket, project_id, key_id, model)
);
CREATE TABLE rollup_hour (LIKE rollup_5m INCLUDING ALL);
CREATE TABLE rollup_day (LIKE rollup_5m INCLUDING ALL);

-- Request counts by outcome, as SQLite's 002.
CREATE TABLE rollup_outcome_hour (
  org_id             TEXT COLLATE "C" NOT NULL,
  bucket             BIGINT NOT NULL,
  project_id         TEXT COLLATE "C" NOT NULL,
  key_id             TEXT COLLATE "C" NOT NULL,
  model              TEXT COLLATE "C" NOT NULL,
  status_class       INTEGER NOT NULL,
  termination_reason TEXT COLLATE "C" NOT NULL,
  requests           BIGINT NOT NULL,
  PRIMARY KEY (org_id, bucket, project_id, key_id, model, status_class, termination_reason)
);
CREATE TABLE rollup_outcome_day (LIKE rollup_outcome_hour INCLUDING ALL);

-- Usage by one dimension at a time (dim: 0 organisation, 1 project, 2 key, 3 model), as
-- SQLite's 004 and 006.
CREATE TABLE rollup_dim_1m (
  org_id       TEXT COLLATE "C" NOT NULL,
  dim          INTEGER NOT NULL CHECK (dim BETWEEN 0 AND 3),
  bucket       BIGINT NOT NULL,
  value        TEXT COLLATE "C" NOT NULL,
  requests     BIGINT NOT NULL,
  total_ms     DOUBLE PRECISION NOT NULL,
  ttft_count   BIGINT NOT NULL,
  ttft_ms      DOUBLE PRECISION NOT NULL,
  speed_tokens BIGINT NOT NULL,
  speed_ms     DOUBLE PRECISION NOT NULL,
  tokens       BIGINT NOT NULL,
  cost_micro   BIGINT NOT NULL,
  PRIMARY KEY (org_id, dim, bucket, value)
);
CREATE TABLE rollup_dim_5m (LIKE rollup_dim_1m INCLUDING ALL);
CREATE TABLE rollup_dim_hour (LIKE rollup_dim_1m INCLUDING ALL);
CREATE TABLE rollup_dim_day (LIKE rollup_dim_1m INCLUDING ALL);

-- The dashboard's cells by one dimension, with latency sketches, as SQLite's 008 and 010.
CREATE TABLE rollup_board_5m (
  org_id           TEXT COLLATE "C" NOT NULL,
  dim              INTEGER NOT NULL CHECK (dim BETWEEN 0 AND 3),
  bucket           BIGINT NOT NULL,
  value            TEXT COLLATE "C" NOT NULL,
  requests         BIGINT NOT NULL,
  ok               BIGINT NOT NULL,
  client_errors    BIGINT NOT NULL,
  server_errors    BIGINT NOT NULL,
  refused          BIGINT NOT NULL,
  cost_micro       BIGINT NOT NULL,
  prompt_tokens    BIGINT NOT NULL,
  prompt_rows      BIGINT NOT NULL,
  generated_tokens BIGINT NOT NULL,
  cache_read       BIGINT NOT NULL,
  cache_write      BIGINT NOT NULL,
  cache_rows       BIGINT NOT NULL,
  speed_tokens     BIGINT NOT NULL,
  speed_ms         DOUBLE PRECISION NOT NULL,
  upstream_429     BIGINT NOT NULL,
  latency          BYTEA NOT NULL,
  ttft             BYTEA,
  last_ok          BIGINT,
  PRIMARY KEY (org_id, dim, bucket, value)
);
CREATE TABLE rollup_board_hour (LIKE rollup_board_5m INCLUDING ALL);
CREATE TABLE rollup_board_day (LIKE rollup_board_5m INCLUDING ALL);

-- Prompt and cache tokens by project, key and model, as SQLite's 009.
CREATE TABLE rollup_cache_hour (
  org_id        TEXT COLLATE "C" NOT NULL,
  bucket        BIGINT NOT NULL,
  project_id    TEXT COLLATE "C" NOT NULL,
  key_id        TEXT COLLATE "C" NOT NULL,
  model         TEXT COLLATE "C" NOT NULL,
  prompt_tokens BIGINT NOT NULL,
  prompt_rows   BIGINT NOT NULL,
  cache_read    BIGINT NOT NULL,
  cache_write   BIGINT NOT NULL,
  cache_rows    BIGINT NOT NULL,
  known_read    BIGINT NOT NULL,
  known_write   BIGINT NOT NULL,
  PRIMARY KEY (org_id, bucket, project_id, key_id, model)
);
CREATE TABLE rollup_cache_day (LIKE rollup_cache_hour INCLUDING ALL);

-- What rows cost, written in their transaction and settled into the keys afterwards, as
-- SQLite's 007 (server/ingest/spend-outbox.ts).
CREATE TABLE spend_outbox (
  settlement TEXT COLLATE "C" NOT NULL,
  key_id     TEXT COLLATE "C" NOT NULL,
  micro      BIGINT NOT NULL,
  PRIMARY KEY (settlement, key_id)
);

-- Latency sketches (latency-sketch.ts): (int16 bin, uint32 count) pairs, little-endian, in bin
-- order. `sketch_merge` adds two up for the upserts of the dashboard's cells, `sketch_sum` any
-- number of them; `sketch_of` makes one from the rows at a window's edges.

-- One pair as its six bytes.
CREATE FUNCTION sketch_pair(bin INTEGER, n BIGINT) RETURNS BYTEA
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT set_byte(set_byte(set_byte(set_byte(set_byte(set_byte('\x000000000000'::bytea,
    0, bin & 255), 1, (bin >> 8) & 255),
    2, (n & 255)::int), 3, ((n >> 8) & 255)::int), 4, ((n >> 16) & 255)::int), 5, ((n >> 24) & 255)::int)
$$;

-- Two sketches as one: bins add up; either may be null (no values).
CREATE FUNCTION sketch_merge(a BYTEA, b BYTEA) RETURNS BYTEA
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN a IS NULL THEN b WHEN b IS NULL THEN a ELSE (
    SELECT COALESCE(string_agg(sketch_pair(bin, n), ''::bytea ORDER BY bin), ''::bytea)
    FROM (
      SELECT bin, SUM(n)::bigint AS n
      FROM (
        -- PostgreSQL's bitwise operators share one precedence, left to right: hence the brackets.
        -- The bin is read as a signed 16-bit number: bins order as numbers, as the encoder sorts them.
        SELECT ((get_byte(s, k * 6) | (get_byte(s, k * 6 + 1) << 8)) # 32768) - 32768 AS bin,
          get_byte(s, k * 6 + 2)::bigint | (get_byte(s, k * 6 + 3)::bigint << 8)
            | (get_byte(s, k * 6 + 4)::bigint << 16) | (get_byte(s, k * 6 + 5)::bigint << 24) AS n
        FROM (VALUES (a), (b)) AS sketches (s), generate_series(0, length(s) / 6 - 1) AS k
      ) AS pairs
      GROUP BY bin
    ) AS merged
  ) END
$$;

-- A value's bin, as latency-sketch.ts's binOf: ceil(log_γ v), γ = 1.01 / 0.99; 0 or less in -32768.
CREATE FUNCTION sketch_bin(v DOUBLE PRECISION) RETURNS INTEGER
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN v > 0
    THEN LEAST(32767, GREATEST(-32767, ceil(ln(v) / ln(1.01::float8 / 0.99::float8))))::int
    ELSE -32768 END
$$;

-- The values' sketch: null when none is known, as on SQLite. The values are collected by the
-- built-in array_append, which an aggregate appends to in place (a function of ours would copy
-- the array at every row), and binned at the end.
CREATE FUNCTION sketch_encode(vs DOUBLE PRECISION[]) RETURNS BYTEA
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT string_agg(sketch_pair(bin, n), ''::bytea ORDER BY bin)
  FROM (SELECT sketch_bin(v) AS bin, COUNT(*) AS n FROM unnest(vs) AS v WHERE v IS NOT NULL GROUP BY 1) AS counted
$$;

CREATE AGGREGATE sketch_of(DOUBLE PRECISION) (
  SFUNC = array_append, STYPE = DOUBLE PRECISION[], INITCOND = '{}', FINALFUNC = sketch_encode
);

-- Sketches of cells as one (an import's staged cells): nulls are no values.
CREATE AGGREGATE sketch_sum(BYTEA) (SFUNC = sketch_merge, STYPE = BYTEA);
