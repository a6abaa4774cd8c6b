-- The `models` table's routes are version 1 of the routes document now (004): the document is
-- the one place routes are read from and changed, so the table goes (its change-count trigger
-- with it) rather than lingering as a second catalogue that could disagree with it.
SELECT pg_advisory_xact_lock(hashtext('gateway-console control write'));
DROP TABLE models;
