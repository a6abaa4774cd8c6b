-- Routes as data (issue 52): providers, routes, prices and routing in one versioned document,
-- each version a row, the newest the one served (route-documents.ts). `document` is the JSON of
-- a validated document (server/domain/routes-validation.ts), every default filled in; `source`
-- says what stored it ('seed', 'routes apply', 'set-model'). Version 1 is written by this
-- migration's step (route-documents.ts, `seedRoutes`): the catalogue, as the `models` table had
-- its routes turned on or off; 007 then drops that table.
CREATE TABLE route_documents (
  version    INTEGER PRIMARY KEY CHECK (version >= 1),
  document   TEXT NOT NULL CHECK (json_valid(document)),
  applied_at INTEGER NOT NULL,
  source     TEXT NOT NULL
);

-- A version, once stored, is what every gateway may be serving: never changed or removed, so a
-- process that has read it keeps it without reading it again. A change is a new version.
CREATE TRIGGER route_documents_no_update BEFORE UPDATE ON route_documents
BEGIN
  SELECT RAISE(ABORT, 'route documents are append-only: apply a new version');
END;
CREATE TRIGGER route_documents_no_delete BEFORE DELETE ON route_documents
BEGIN
  SELECT RAISE(ABORT, 'route documents are append-only: apply a new version');
END;
