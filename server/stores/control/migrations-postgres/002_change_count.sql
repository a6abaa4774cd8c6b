-- A count of the changes to the control store, moved by every statement that writes one of its
-- tables, whoever runs it (a replica, the admin command, an operator's psql): what the replicas'
-- caches compare, as the SQLite store's compare its data_version (postgres/read-cache.ts).

-- Taken first, as every control write takes it: replicas of the older version writing meanwhile
-- wait, rather than deadlock with the triggers' table locks taken one after another.
SELECT pg_advisory_xact_lock(hashtext('gateway-console control write'));
CREATE TABLE control_changes (
  only_row BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (only_row),
  count    BIGINT NOT NULL
);
INSERT INTO control_changes (only_row, count) VALUES (TRUE, 0);

CREATE FUNCTION count_control_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE control_changes SET count = count + 1;
  RETURN NULL;
END;
$$;

DO $$
DECLARE
  name TEXT;
BEGIN
  FOREACH name IN ARRAY ARRAY['organizations', 'join_domains', 'accounts', 'sessions', 'session_tokens',
    'projects', 'models', 'api_keys', 'vault_keys', 'deposits', 'settled_spend', 'activity', 'activity_heads']
  LOOP
    EXECUTE format(
      'CREATE TRIGGER %I AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON %I FOR EACH STATEMENT
         EXECUTE FUNCTION count_control_change()',
      name || '_counts_changes', name);
  END LOOP;
END;
$$;
