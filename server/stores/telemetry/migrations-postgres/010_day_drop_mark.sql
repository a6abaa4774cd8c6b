-- A day table that retention is about to drop refuses new rows (request-days.ts, DROPPING): a
-- row trigger calling this is made on it under a lock that waits for the writes in flight there,
-- never for reads. The writer then makes the day again once its table is gone.
CREATE FUNCTION request_day_dropping() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the day table % is being dropped by retention', TG_TABLE_NAME
    USING ERRCODE = 'check_violation', CONSTRAINT = 'request_day_dropping';
END $$;
