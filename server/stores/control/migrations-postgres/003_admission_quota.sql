-- What the keys' requests take of their rate and hold of their credit, shared by every replica
-- (postgres/admission-quota.ts). Not control records: no change count moves with them (the
-- replicas' caches stay warm under a stream of requests), and migrate-store leaves them behind.

-- A key's requests by the second they were admitted in: a sliding minute counted at one-second
-- resolution, at most 61 rows a key however busy it is.
CREATE TABLE admission_rate (
  key_id   TEXT NOT NULL,
  second   BIGINT NOT NULL, -- floor(ms / 1000)
  requests INTEGER NOT NULL,
  PRIMARY KEY (key_id, second)
);

-- Micro-PKR held against a key's credit by a request not yet settled into its spent_micro.
CREATE TABLE credit_holds (
  req_id    TEXT PRIMARY KEY,
  key_id    TEXT NOT NULL,
  micro     BIGINT NOT NULL,
  lapses_at BIGINT NOT NULL -- ms: a gateway that died mid-request holds nothing after it
);
CREATE INDEX credit_holds_by_key ON credit_holds (key_id);

-- Each key's count and holds summed, kept as they change: a busy key has thousands of holds
-- and up to 61 buckets, and every admission reads their sums. No bucket is older than
-- oldest_second and no hold lapses before next_lapse: past either, they are swept and summed again.
CREATE TABLE admission_keys (
  key_id        TEXT PRIMARY KEY,
  counted       BIGINT NOT NULL,
  oldest_second BIGINT NOT NULL,
  held          BIGINT NOT NULL,
  next_lapse    BIGINT NOT NULL
);

-- Every statement that writes a key's counts or holds takes this lock on the key first, until its
-- commit, so the sums and the rows always agree, and a request of the same key on another replica
-- waits for this one's commit and then sees what it counted and held.
CREATE FUNCTION lock_admission_key(p_key TEXT) RETURNS void LANGUAGE sql AS $$
  SELECT pg_advisory_xact_lock(hashtext('gateway-console admission'), hashtext(p_key));
$$;

-- Locks the keys that hold `p_reqs` in the order of their locks (two batches never wait on each
-- other in a circle, even where two keys share a lock), and returns them: a batch writes only the
-- holds of keys it locked.
CREATE FUNCTION lock_holds_keys(p_reqs TEXT[]) RETURNS TEXT[] LANGUAGE plpgsql AS $$
DECLARE
  keys TEXT[];
BEGIN
  SELECT array_agg(DISTINCT key_id) INTO keys FROM credit_holds WHERE req_id = ANY(p_reqs);
  PERFORM pg_advisory_xact_lock(hashtext('gateway-console admission'), lock_id)
    FROM (SELECT DISTINCT hashtext(key_id) AS lock_id FROM unnest(keys) AS key_id ORDER BY 1) AS locks;
  RETURN COALESCE(keys, '{}');
END;
$$;

-- The database's clock, in ms: every replica's admissions count time by one clock.
CREATE FUNCTION admission_clock() RETURNS BIGINT LANGUAGE sql VOLATILE AS $$
  SELECT (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT;
$$;

-- One admission, decided in one statement. A bucket counts until every request it may hold has
-- left the window (its second's end plus a minute), so a key never has more than its limit in any
-- sliding minute; a slot frees up to a second later than an exact count would free it. The time
-- is the database's, read once the key's lock is held (`p_now` stands in for it in tests), and a
-- hold lapses `p_lapse_ms` after it unless answered.
CREATE FUNCTION admit_request(
  p_key TEXT, p_req TEXT, p_rate_limit INTEGER, p_credit_limit BIGINT, p_held BIGINT,
  p_now BIGINT, p_lapse_ms BIGINT,
  OUT verdict TEXT, OUT remaining INTEGER, OUT reset_ms BIGINT
) LANGUAGE plpgsql AS $$
DECLARE
  now_ms BIGINT;
  now_second BIGINT;
  hold_lapses BIGINT;
  k admission_keys%ROWTYPE;
  spent BIGINT;
  replaced BIGINT;
BEGIN
  -- What this statement writes is a count, not a record: it may go with a crash of the database
  -- (the last fraction of a second's admissions forgotten), and no admission waits for an fsync.
  PERFORM set_config('synchronous_commit', 'off', true);
  PERFORM lock_admission_key(p_key);
  now_ms := COALESCE(p_now, admission_clock());
  now_second := floor(now_ms / 1000.0);
  hold_lapses := now_ms + p_lapse_ms;

  SELECT * INTO k FROM admission_keys WHERE key_id = p_key;
  IF NOT FOUND THEN
    k := ROW(p_key, 0, now_second, 0, 9223372036854775807);
    INSERT INTO admission_keys VALUES (k.*);
  END IF;
  IF k.oldest_second < now_second - 60 THEN
    DELETE FROM admission_rate WHERE key_id = p_key AND second < now_second - 60;
    SELECT COALESCE(SUM(requests), 0), COALESCE(MIN(second), now_second) INTO k.counted, k.oldest_second
      FROM admission_rate WHERE key_id = p_key;
  END IF;
  IF k.next_lapse <= now_ms THEN
    DELETE FROM credit_holds WHERE key_id = p_key AND lapses_at <= now_ms;
    SELECT COALESCE(SUM(micro), 0), COALESCE(MIN(lapses_at), 9223372036854775807) INTO k.held, k.next_lapse
      FROM credit_holds WHERE key_id = p_key;
  END IF;

  IF k.counted >= p_rate_limit THEN
    verdict := 'rate';
    remaining := 0;
  ELSE
    INSERT INTO admission_rate (key_id, second, requests) VALUES (p_key, now_second, 1)
      ON CONFLICT (key_id, second) DO UPDATE SET requests = admission_rate.requests + 1;
    -- The clock stepped back: the bucket is older than the oldest, which must stay a lower bound.
    k.oldest_second := LEAST(k.oldest_second, now_second);
    remaining := p_rate_limit - k.counted - 1;
    k.counted := k.counted + 1;
    IF p_credit_limit IS NOT NULL THEN
      SELECT spent_micro INTO spent FROM api_keys WHERE id = p_key;
    END IF;
    IF p_credit_limit IS NOT NULL AND COALESCE(spent, 0) + k.held >= p_credit_limit THEN
      verdict := 'credit';
    ELSE
      verdict := 'held';
      INSERT INTO credit_holds (req_id, key_id, micro, lapses_at) VALUES (p_req, p_key, p_held, hold_lapses)
        ON CONFLICT (req_id) DO NOTHING;
      IF FOUND THEN
        k.held := k.held + p_held;
      ELSE
        -- A request id asked again (a gateway's retry) holds once: its earlier hold is replaced.
        -- Its credit check counted the earlier hold too, which errs on the safe side.
        SELECT micro INTO replaced FROM credit_holds WHERE req_id = p_req AND key_id = p_key;
        IF NOT FOUND THEN
          RAISE EXCEPTION 'request id % is held for another key', p_req;
        END IF;
        UPDATE credit_holds SET micro = p_held, lapses_at = GREATEST(lapses_at, hold_lapses) WHERE req_id = p_req;
        k.held := k.held - replaced + p_held;
      END IF;
      k.next_lapse := LEAST(k.next_lapse, hold_lapses);
    END IF;
  END IF;
  reset_ms := k.oldest_second * 1000 + 61000 - now_ms;
  UPDATE admission_keys SET counted = k.counted, oldest_second = k.oldest_second, held = k.held,
    next_lapse = k.next_lapse WHERE key_id = p_key;
END;
$$;

-- Answered requests: their holds become their costs, and last `p_grace` from now (`p_now` in tests).
CREATE FUNCTION settle_holds(p_reqs TEXT[], p_micros BIGINT[], p_grace BIGINT, p_now BIGINT) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  locked TEXT[];
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  locked := lock_holds_keys(p_reqs);
  WITH answered AS (
    SELECT h.req_id, h.key_id, a.micro - h.micro AS change
    FROM credit_holds h JOIN unnest(p_reqs, p_micros) AS a (req_id, micro) ON a.req_id = h.req_id
    WHERE h.key_id = ANY(locked)
  ), settled AS (
    UPDATE credit_holds h SET micro = h.micro + answered.change,
      lapses_at = GREATEST(h.lapses_at, COALESCE(p_now, admission_clock()) + p_grace)
    FROM answered WHERE h.req_id = answered.req_id
    RETURNING answered.key_id, answered.change
  )
  UPDATE admission_keys k SET held = k.held + changes.change
  FROM (SELECT key_id, SUM(change) AS change FROM settled GROUP BY key_id) AS changes
  WHERE k.key_id = changes.key_id;
END;
$$;

-- Answered requests whose rows are still to be written, or whose spend is still owed: their holds
-- last `p_grace` from now. A lapse only moves later, so the keys' next_lapse stays a lower bound.
CREATE FUNCTION keep_holds(p_reqs TEXT[], p_grace BIGINT, p_now BIGINT) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  locked TEXT[];
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  locked := lock_holds_keys(p_reqs);
  UPDATE credit_holds SET lapses_at = GREATEST(lapses_at, COALESCE(p_now, admission_clock()) + p_grace)
  WHERE req_id = ANY(p_reqs) AND key_id = ANY(locked);
END;
$$;

-- Requests whose rows are written and whose spend is in their keys: their holds end.
CREATE FUNCTION release_holds(p_reqs TEXT[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  locked TEXT[];
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  locked := lock_holds_keys(p_reqs);
  WITH released AS (
    DELETE FROM credit_holds WHERE req_id = ANY(p_reqs) AND key_id = ANY(locked) RETURNING key_id, micro
  )
  UPDATE admission_keys k SET held = k.held - gone.micro
  FROM (SELECT key_id, SUM(micro) AS micro FROM released GROUP BY key_id) AS gone
  WHERE k.key_id = gone.key_id;
END;
$$;

-- A key with no request in the last minute and no hold left to lapse: its rows go (they would
-- otherwise stay until its next request, 62 rows a key). Returns whether it was idle.
CREATE FUNCTION purge_admission_key(p_key TEXT, p_now BIGINT) RETURNS BOOLEAN LANGUAGE plpgsql AS $$
DECLARE
  now_ms BIGINT;
  k admission_keys%ROWTYPE;
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  PERFORM lock_admission_key(p_key);
  now_ms := COALESCE(p_now, admission_clock());
  SELECT * INTO k FROM admission_keys WHERE key_id = p_key;
  IF NOT FOUND OR k.oldest_second >= floor(now_ms / 1000.0) - 60 OR k.next_lapse > now_ms THEN
    RETURN FALSE;
  END IF;
  DELETE FROM admission_rate WHERE key_id = p_key AND second < floor(now_ms / 1000.0) - 60;
  DELETE FROM credit_holds WHERE key_id = p_key AND lapses_at <= now_ms;
  IF EXISTS (SELECT 1 FROM admission_rate WHERE key_id = p_key)
     OR EXISTS (SELECT 1 FROM credit_holds WHERE key_id = p_key) THEN
    RETURN FALSE;
  END IF;
  DELETE FROM admission_keys WHERE key_id = p_key;
  RETURN TRUE;
END;
$$;
