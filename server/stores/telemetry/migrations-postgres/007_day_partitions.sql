-- The request log partitioned by day (UTC), so that retention drops a day's rows with its table
-- instead of deleting them row by row (postgres/request-days.ts).
--
-- A partitioned table can only be unique on columns holding its partition key: `req_id` alone is
-- kept unique by `request_ids`, a table of its own (each write inserts there first; an id stored
-- already, whatever its time, is refused as before). Its `ts` finds a row by id in one day's
-- table. The rows' own indexes are built after they are moved, each one sort.

CREATE TABLE request_ids (
  req_id TEXT COLLATE "C" PRIMARY KEY,
  ts     BIGINT NOT NULL
);

ALTER TABLE requests RENAME TO requests_unpartitioned;
ALTER TABLE requests_unpartitioned RENAME CONSTRAINT requests_pkey TO requests_unpartitioned_pkey;
DROP INDEX requests_by_key, requests_by_org, requests_by_cost, requests_search_rare, requests_by_search_set;

CREATE TABLE requests (LIKE requests_unpartitioned INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
  PARTITION BY RANGE (ts);

-- The table of day `day` (days since the epoch), made and attached if it is missing. Attached
-- rather than created as a partition: ATTACH takes the parent in a mode that lets its reads and
-- writes go on (CREATE … PARTITION OF would take it alone, queueing every reader behind a
-- long analytics query). The new table is empty, so attaching it checks nothing.
CREATE FUNCTION request_day_partition(day BIGINT) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  name TEXT := 'requests_' || to_char(to_timestamp(day * 86400) AT TIME ZONE 'UTC', 'YYYYMMDD');
  found REGCLASS := to_regclass(name);
BEGIN
  IF found IS NOT NULL THEN
    IF EXISTS (SELECT 1 FROM pg_inherits WHERE inhrelid = found) THEN
      RETURN;
    END IF;
    -- Left by retention stopped between a day's detach and its drop: its rows were past every
    -- horizon, and their ids are gone already.
    EXECUTE format('DROP TABLE %I', name);
  END IF;
  EXECUTE format('CREATE TABLE %I (LIKE requests INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', name);
  EXECUTE format('ALTER TABLE requests ATTACH PARTITION %I FOR VALUES FROM (%s) TO (%s)',
    name, day * 86400000, (day + 1) * 86400000);
END $$;

SELECT request_day_partition(day)
  FROM (SELECT DISTINCT floor(ts / 86400000.0)::bigint AS day FROM requests_unpartitioned) AS days;
INSERT INTO requests SELECT * FROM requests_unpartitioned;
INSERT INTO request_ids (req_id, ts) SELECT req_id, ts FROM requests_unpartitioned;
DROP TABLE requests_unpartitioned;

SET LOCAL maintenance_work_mem = '256MB';
CREATE INDEX requests_by_key ON requests (key_id, ts);
CREATE INDEX requests_by_org ON requests (org_id, ts, req_id);
CREATE INDEX requests_by_cost ON requests (org_id, cost_micro, ts);
CREATE INDEX requests_search_rare ON requests USING gin (search_rare gin_trgm_ops) WITH (fastupdate = on);
CREATE INDEX requests_by_search_set ON requests (org_id, search_set, ts) WHERE search_set IS NOT NULL;
