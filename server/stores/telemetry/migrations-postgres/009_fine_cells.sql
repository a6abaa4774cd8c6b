-- From when the fine grains' usage cells are whole, as SQLite's 023 (see there). PostgreSQL's
-- writers keep every cell; `since` comes only with a copy of a SQLite store that had thinned
-- its cells (migrate-store), whose cells before it were not there to copy.

CREATE TABLE IF NOT EXISTS fine_cells (
  id    INTEGER PRIMARY KEY CHECK (id = 1),
  since BIGINT NOT NULL
);
