-- Latency sketches as latency-sketch.ts writes them since this migration: a byte W, the width of
-- the largest count (1, 2 or 4), then (int16 bin, W-byte count) pairs, little-endian, in bin
-- order. The first encoding's (int16 bin, uint32 count) pairs with no header are still read: their
-- length is a multiple of 6, and the new one's never is (1 + 3n, 1 + 4n, 1 + 6n). A cell keeps its
-- sketch as it is until it is merged again.

-- A sketch's pairs, in either encoding.
CREATE FUNCTION sketch_pairs(s BYTEA) RETURNS TABLE (bin INTEGER, n BIGINT)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  -- PostgreSQL's bitwise operators share one precedence, left to right: hence the brackets.
  SELECT ((get_byte(s, at.o) | (get_byte(s, at.o + 1) << 8)) # 32768) - 32768,
    get_byte(s, at.o + 2)::bigint
      | CASE WHEN f.w >= 2 THEN get_byte(s, at.o + 3)::bigint << 8 ELSE 0 END
      | CASE WHEN f.w = 4 THEN (get_byte(s, at.o + 4)::bigint << 16) | (get_byte(s, at.o + 5)::bigint << 24) ELSE 0 END
  FROM (SELECT CASE WHEN length(s) % 6 = 0 THEN 4 ELSE get_byte(s, 0) END AS w,
      CASE WHEN length(s) % 6 = 0 THEN 0 ELSE 1 END AS head) AS f,
    LATERAL generate_series(0, (length(s) - f.head) / (2 + f.w) - 1) AS k,
    LATERAL (SELECT f.head + k * (2 + f.w) AS o) AS at
$$;

-- The width of a sketch's counts, by its largest.
CREATE FUNCTION sketch_width(largest BIGINT) RETURNS INTEGER
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN largest < 256 THEN 1 WHEN largest < 65536 THEN 2 ELSE 4 END
$$;

-- One pair, its count in `w` bytes.
CREATE FUNCTION sketch_pack(w INTEGER, bin INTEGER, n BIGINT) RETURNS BYTEA
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT substring(sketch_pair(bin, n) FROM 1 FOR 2 + w)
$$;

-- Two sketches as one: bins add up; either may be null (no values); empty when neither has a bin.
CREATE OR REPLACE FUNCTION sketch_merge(a BYTEA, b BYTEA) RETURNS BYTEA
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN a IS NULL THEN b WHEN b IS NULL THEN a ELSE (
    SELECT COALESCE(set_byte('\x00'::bytea, 0, MAX(w)) || string_agg(sketch_pack(w, bin, n), ''::bytea ORDER BY bin),
      ''::bytea)
    FROM (
      SELECT bin, n, sketch_width(MAX(n) OVER ()) AS w
      FROM (
        SELECT p.bin, SUM(p.n)::bigint AS n
        FROM (VALUES (a), (b)) AS sketches (s), LATERAL sketch_pairs(s) AS p
        GROUP BY p.bin
      ) AS merged
    ) AS sized
  ) END
$$;

-- The values' sketch: null when none is known, as on SQLite.
CREATE OR REPLACE FUNCTION sketch_encode(vs DOUBLE PRECISION[]) RETURNS BYTEA
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT set_byte('\x00'::bytea, 0, MAX(w)) || string_agg(sketch_pack(w, bin, n), ''::bytea ORDER BY bin)
  FROM (
    SELECT bin, n, sketch_width(MAX(n) OVER ()) AS w
    FROM (SELECT sketch_bin(v) AS bin, COUNT(*) AS n FROM unnest(vs) AS v WHERE v IS NOT NULL GROUP BY 1) AS counted
  ) AS sized
$$;
