import { createHash } from 'node:crypto';
import type { Database } from 'better-sqlite3';

/**
 * The activity trail's hash chain. Each event's hash is SHA-256 (hex) over a canonical
 * encoding of every field stored with it and the hash of the event before it in the same
 * organisation ('' for the first). The encoding is a JSON array in a fixed order, led by a
 * version tag: JSON quotes every string and spells null, so no two different events (a target
 * "a,b" against two fields "a" and "b", a null actor against the text "null") encode alike.
 *
 * Plain SHA-256 without a secret: it shows an edit made to the file, not an edit made by
 * someone who also recomputes every later hash. The head hash that `verify-activity` prints,
 * kept elsewhere, catches that too.
 */

export const GENESIS_HASH = '';
const ENCODING = 'activity-chain/1';

/** One event as stored: the columns of the `activity` table except its hash. */
export interface ChainedFields {
  id: number;
  org_id: string;
  seq: number;
  actor_id: string | null;
  action: string;
  target: string;
  created_at: number;
  source_ip: string;
  /** JSON text of `{before, after}`, or null when the action records no change. */
  change: string | null;
}

export function activityHash(event: ChainedFields, previousHash: string): string {
  const encoded = JSON.stringify([
    ENCODING,
    event.id,
    event.org_id,
    event.seq,
    event.actor_id,
    event.action,
    event.target,
    event.created_at,
    event.source_ip,
    event.change,
    previousHash,
  ]);
  return createHash('sha256').update(encoded, 'utf8').digest('hex');
}

/** `activity_hash(...)` for the control store's SQL: migration 005 chains the events recorded before it. */
export function registerActivityFunctions(db: Database): void {
  db.function(
    'activity_hash',
    { deterministic: true, varargs: false },
    (
      id: unknown,
      orgId: unknown,
      seq: unknown,
      actorId: unknown,
      action: unknown,
      target: unknown,
      createdAt: unknown,
      sourceIp: unknown,
      change: unknown,
      previousHash: unknown,
    ) =>
      activityHash(
        {
          id: Number(id),
          org_id: String(orgId),
          seq: Number(seq),
          actor_id: actorId === null ? null : String(actorId),
          action: String(action),
          target: String(target),
          created_at: Number(createdAt),
          source_ip: String(sourceIp),
          change: change === null ? null : String(change),
        },
        String(previousHash),
      ),
  );
}
