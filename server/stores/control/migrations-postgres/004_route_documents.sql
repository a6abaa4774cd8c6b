-- Routes as data (issue 52), as ../migrations/006_route_documents.sql has it for SQLite: one row a
-- version of the routes document, the newest the one served. Version 1 is written by this
-- migration's step (postgres/route-documents.ts, `seedRoutes`) from the `models` table, which
-- 005 then drops.

-- Taken first, as every control write takes it (see 002).
SELECT pg_advisory_xact_lock(hashtext('gateway-console control write'));

CREATE TABLE route_documents (
  version    INTEGER PRIMARY KEY CHECK (version >= 1),
  document   TEXT NOT NULL,
  applied_at BIGINT NOT NULL,
  source     TEXT NOT NULL
);

-- Every replica's caches see a new version from their next turn (002's change count).
CREATE TRIGGER route_documents_counts_changes AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON route_documents
  FOR EACH STATEMENT EXECUTE FUNCTION count_control_change();

-- A stored version is never changed or removed: a replica that has read one keeps it without
-- reading it again. (TRUNCATE is left to migrate-store, which fills an empty store.)
CREATE FUNCTION route_documents_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'route documents are append-only: apply a new version';
END;
$$;
CREATE TRIGGER route_documents_append_only BEFORE UPDATE OR DELETE ON route_documents
  FOR EACH ROW EXECUTE FUNCTION route_documents_refuse_change();
