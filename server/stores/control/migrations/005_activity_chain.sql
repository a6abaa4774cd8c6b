-- The audit trail verifies itself (issue 27): each event gains its place in its organisation's
-- trail (`seq`, from 1), what changed (`change`, JSON `{before, after}` of the fields concerned,
-- never a secret) and `hash`, SHA-256 over every stored field and the hash of the event before
-- it in the same organisation (activity-hash.ts; the connection registers `activity_hash`).
-- The trail also gains `api_key.rotated`. As in 002 and 004, SQLite cannot change a CHECK
-- constraint in place, so the table is rebuilt with the same rows and ids; DROP TABLE removes
-- the append-only triggers before its implicit delete, and they are created again below.
CREATE TABLE activity_next (
  id         INTEGER PRIMARY KEY,
  org_id     TEXT NOT NULL REFERENCES organizations (id),
  seq        INTEGER NOT NULL CHECK (seq >= 1),
  actor_id   TEXT,
  action     TEXT NOT NULL CHECK (action IN (
               'user.login', 'user.logout', 'api_key.created', 'api_key.revoked',
               'api_key.updated', 'vault_key.set', 'vault_key.revoked', 'org.renamed',
               'member.joined', 'budget.deposited', 'member.removed', 'member.role_changed',
               'org.join_policy_changed', 'org.reporting_zone_changed', 'api_key.rotated')),
  target     TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  source_ip  TEXT NOT NULL,
  change     TEXT CHECK (change IS NULL OR json_valid(change)),
  hash       TEXT NOT NULL CHECK (length(hash) = 64)
);

-- Existing events are chained in the order they were written (by id), organisation by
-- organisation: a recursive walk from each organisation's first event to the next by place,
-- the places numbered first into an indexed table so that each step is one lookup.
CREATE TEMP TABLE activity_places AS
  SELECT id, org_id, ROW_NUMBER() OVER (PARTITION BY org_id ORDER BY id) AS seq FROM activity;
CREATE UNIQUE INDEX temp.activity_places_by_seq ON activity_places (org_id, seq);

WITH RECURSIVE chain (id, org_id, seq, actor_id, action, target, created_at, source_ip, hash) AS (
  SELECT a.id, a.org_id, 1, a.actor_id, a.action, a.target, a.created_at, a.source_ip,
         activity_hash(a.id, a.org_id, 1, a.actor_id, a.action, a.target, a.created_at, a.source_ip, NULL, '')
    FROM activity_places p JOIN activity a ON a.id = p.id
   WHERE p.seq = 1
  UNION ALL
  SELECT a.id, a.org_id, p.seq, a.actor_id, a.action, a.target, a.created_at, a.source_ip,
         activity_hash(a.id, a.org_id, p.seq, a.actor_id, a.action, a.target, a.created_at, a.source_ip, NULL, c.hash)
    FROM chain c
    JOIN activity_places p ON p.org_id = c.org_id AND p.seq = c.seq + 1
    JOIN activity a ON a.id = p.id
)
INSERT INTO activity_next (id, org_id, seq, actor_id, action, target, created_at, source_ip, change, hash)
  SELECT id, org_id, seq, actor_id, action, target, created_at, source_ip, NULL, hash FROM chain;

DROP TABLE temp.activity_places;
DROP TABLE activity;
ALTER TABLE activity_next RENAME TO activity;

-- GET /activity reads by id; the extension's pages, filters and the verification by place.
CREATE INDEX activity_by_org ON activity (org_id, id);
CREATE UNIQUE INDEX activity_by_place ON activity (org_id, seq);
CREATE INDEX activity_by_action ON activity (org_id, action, seq);
CREATE INDEX activity_by_actor ON activity (org_id, actor_id, seq);
CREATE INDEX activity_by_target ON activity (org_id, target, seq);
CREATE INDEX activity_by_time ON activity (org_id, created_at);

-- Each organisation's newest event, its place and hash, kept by record() in the event's own
-- transaction. The chain cannot tell a trail whose newest events were deleted from one that
-- ended there: verification compares where the chain ends with this head, and the next
-- event chains on from it, so the gap stays visible. With a single max(), SQLite takes the
-- bare column `hash` from the row holding the max.
CREATE TABLE activity_heads (
  org_id TEXT PRIMARY KEY REFERENCES organizations (id),
  seq    INTEGER NOT NULL CHECK (seq >= 1),
  hash   TEXT NOT NULL CHECK (length(hash) = 64)
) WITHOUT ROWID;
INSERT INTO activity_heads (org_id, seq, hash)
  SELECT org_id, MAX(seq), hash FROM activity GROUP BY org_id;

CREATE TRIGGER activity_refuses_update BEFORE UPDATE ON activity
BEGIN
  SELECT RAISE(ABORT, 'activity log is append-only');
END;

CREATE TRIGGER activity_refuses_delete BEFORE DELETE ON activity
BEGIN
  SELECT RAISE(ABORT, 'activity log is append-only');
END;
