-- The `models` table's routes are version 1 of the routes document now (006): the document is
-- the one place routes are read from and changed, so the table goes rather than lingering as a
-- second catalogue that could disagree with it.
DROP TABLE models;
