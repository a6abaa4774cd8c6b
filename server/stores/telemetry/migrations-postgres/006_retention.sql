-- How far each organisation's rows have been deleted by retention, as SQLite's 013 (see there).

CREATE TABLE IF NOT EXISTS retention_horizons (
  org_id  TEXT COLLATE "C" PRIMARY KEY,
  horizon BIGINT NOT NULL
);
