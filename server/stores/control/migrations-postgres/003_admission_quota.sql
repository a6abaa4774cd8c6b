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

-- One admission, decided in one statement under a lock on its key: a request of the same key
-- on another replica waits for this one's commit, and then sees what it counted and held.
-- A bucket counts until every request it may hold has left the window (its second's end plus a
-- minute), so a key never has more than its limit in any sliding minute; a slot frees up to a
-- second later than an exact count would free it.
CREATE FUNCTION admit_request(
  p_key TEXT, p_req TEXT, p_rate_limit INTEGER, p_credit_limit BIGINT, p_held BIGINT,
  p_now BIGINT, p_lapses_at BIGINT,
  OUT verdict TEXT, OUT remaining INTEGER, OUT reset_ms BIGINT
) LANGUAGE plpgsql AS $$
DECLARE
  now_second BIGINT := floor(p_now / 1000.0);
  counted BIGINT;
  oldest BIGINT;
  spent BIGINT;
  holding BIGINT;
BEGIN
  -- What this statement writes is a count, not a record: it may go with a crash of the database
  -- (the last fraction of a second's admissions forgotten), and no admission waits for an fsync.
  PERFORM set_config('synchronous_commit', 'off', true);
  PERFORM pg_advisory_xact_lock(hashtext('gateway-console admission'), hashtext(p_key));

  DELETE FROM admission_rate WHERE key_id = p_key AND second < now_second - 60;
  SELECT COALESCE(SUM(requests), 0), MIN(second) INTO counted, oldest FROM admission_rate WHERE key_id = p_key;
  IF counted >= p_rate_limit THEN
    verdict := 'rate';
    remaining := 0;
    reset_ms := oldest * 1000 + 61000 - p_now;
    RETURN;
  END IF;
  INSERT INTO admission_rate (key_id, second, requests) VALUES (p_key, now_second, 1)
    ON CONFLICT (key_id, second) DO UPDATE SET requests = admission_rate.requests + 1;
  remaining := p_rate_limit - counted - 1;
  reset_ms := COALESCE(oldest, now_second) * 1000 + 61000 - p_now;

  DELETE FROM credit_holds WHERE key_id = p_key AND lapses_at <= p_now;
  IF p_credit_limit IS NOT NULL THEN
    SELECT spent_micro INTO spent FROM api_keys WHERE id = p_key;
    SELECT COALESCE(SUM(micro), 0) INTO holding FROM credit_holds WHERE key_id = p_key;
    IF COALESCE(spent, 0) + holding >= p_credit_limit THEN
      verdict := 'credit';
      RETURN;
    END IF;
  END IF;
  INSERT INTO credit_holds (req_id, key_id, micro, lapses_at) VALUES (p_req, p_key, p_held, p_lapses_at)
    ON CONFLICT (req_id) DO UPDATE SET key_id = excluded.key_id, micro = excluded.micro, lapses_at = excluded.lapses_at;
  verdict := 'held';
END;
$$;
