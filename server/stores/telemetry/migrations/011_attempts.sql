-- Which target served a request and every upstream attempt it took (decisions.md, "Failover"):
--
-- served_by: `provider/model` of the target whose answer went to the caller; null when none did,
--   or for rows that do not say (imported, demo, written before this migration).
-- attempts: a JSON array of the request's upstream attempts in the order made, each
--   {target, status, error, ms, decision} (server/schemas/request-log.ts, `Attempt`), at most 20;
--   null when unknown.
--
-- Nullable and without a default: adding them rewrites no row, whatever the store's size.

ALTER TABLE requests ADD COLUMN served_by TEXT;
ALTER TABLE requests ADD COLUMN attempts TEXT;
