import { activityHash, GENESIS_HASH } from '../stores/control/activity-hash.js';
import type { ChainHead, ChainRow } from '../stores/control/activity.js';
import type { ControlRecords } from '../stores/control/store.js';

/**
 * Recomputes an organisation's hash chain (activity-hash.ts) and names the first event that
 * does not match. Events are read a page at a time in chain order (place, then id), so memory
 * stays flat however long the trail. A stretch can be checked on its own: it starts from the
 * event at place `after`, whose stored hash was checked with the stretch before.
 */

export type ChainFault =
  /** The event's fields, or the hash before it, are not what its hash was computed over. */
  | 'altered'
  /** A place has no event: one was deleted (the event named is the one after the gap). */
  | 'missing'
  /** A place holds a second event: one was inserted. */
  | 'duplicate'
  /** An event after the newest one the server recorded: it was added to the file. */
  | 'appended';

export interface ChainBreak {
  /** The place that does not match. */
  position: number;
  fault: ChainFault;
  /**
   * The time and action of the event found there (for `missing`, of the first event after the
   * gap); null when there is none (the newest events deleted).
   */
  at: number | null;
  action: string | null;
  message: string;
}

export interface ChainCheck {
  /** Events whose hash was recomputed. */
  checked: number;
  /** The place of the last event checked (`after` when none was). */
  lastPosition: number;
  /** The stored hash of the last event checked, or of the event at `after`. */
  headHash: string;
  /** The first event that does not match; null while the chain holds. */
  broken: ChainBreak | null;
  /** The trail's end was reached (or a break found): there is nothing further to check. */
  done: boolean;
}

const when = (ms: number) => new Date(ms).toISOString();

function fault(position: number, kind: Exclude<ChainFault, 'appended'>, row: ChainRow): ChainBreak {
  const event = `${row.action} at ${when(row.created_at)}`;
  const message =
    kind === 'missing'
      ? `event #${position} is missing: it was deleted from the file (the next event, #${row.seq}, is ${event})`
      : kind === 'duplicate'
        ? `event #${position} appears twice: ${event} was inserted into the file`
        : `event #${position} (${event}) does not match its hash: it, or the event before it, was changed in the file`;
  return { position, fault: kind, at: row.created_at, action: row.action, message };
}

/**
 * Where a chain that holds link by link ends, against the head the server recorded with the
 * newest event (activity_heads): the chain alone cannot tell a trail whose newest events were
 * deleted, or one rewritten whole, from an honest one.
 */
function againstHead(
  end: number,
  endHash: string,
  newest: ChainRow | null,
  beyond: ChainRow | null,
  recorded: ChainHead | undefined,
): ChainBreak | null {
  if (recorded === undefined) {
    if (end === 0 || !newest) return null;
    return {
      ...fault(end, 'altered', newest),
      message: `the record of the newest event, #${end}, is gone from the file: the trail's end cannot be vouched for`,
    };
  }
  if (recorded.seq > end) {
    const count = recorded.seq - end;
    return {
      position: end + 1,
      fault: 'missing',
      at: null,
      action: null,
      message: `event #${end + 1} is missing: the trail ends at #${end} but the server recorded ${recorded.seq} events, so the newest ${count === 1 ? 'was' : `${count} were`} deleted from the file`,
    };
  }
  if (recorded.seq < end && beyond) {
    return {
      position: beyond.seq,
      fault: 'appended',
      at: beyond.created_at,
      action: beyond.action,
      message: `event #${beyond.seq} (${beyond.action} at ${when(beyond.created_at)}) comes after the newest event the server recorded, #${recorded.seq}: it was added to the file`,
    };
  }
  if (recorded.hash !== endHash && newest) {
    return {
      ...fault(end, 'altered', newest),
      message: `event #${end} does not match the newest hash the server recorded: the trail was rewritten in the file`,
    };
  }
  return null;
}

/**
 * Checks up to `limit` events after place `after` (0: from the first) of the rows given in
 * chain order; on reaching their end, checks that end against the `recorded` head. Returning
 * early (a break, or `limit` reached) closes `rows`, so the rest of the trail is never read.
 */
export async function checkChain(
  rows: AsyncIterable<ChainRow> | Iterable<ChainRow>,
  after: number,
  limit: number,
  recorded: ChainHead | undefined,
): Promise<ChainCheck> {
  let previous = GENESIS_HASH;
  let expected = after + 1;
  let checked = 0;
  let anchored = after === 0;
  let newest: ChainRow | null = null;
  let beyond: ChainRow | null = null;
  for await (const row of rows) {
    if (!anchored) {
      // The stretch starts at the event checked last time; its hash is the one to chain from.
      if (row.seq !== after) {
        const broken = fault(after, 'missing', row);
        return { checked, lastPosition: after, headHash: previous, broken, done: true };
      }
      previous = row.hash;
      anchored = true;
      newest = row;
      continue;
    }
    if (checked >= limit) return { checked, lastPosition: expected - 1, headHash: previous, broken: null, done: false };
    let broken: ChainBreak | null = null;
    if (row.seq < expected) broken = fault(row.seq, 'duplicate', row);
    else if (row.seq > expected) broken = fault(expected, 'missing', row);
    else if (activityHash(row, previous) !== row.hash) broken = fault(row.seq, 'altered', row);
    if (broken) return { checked, lastPosition: expected - 1, headHash: previous, broken, done: true };
    previous = row.hash;
    expected += 1;
    checked += 1;
    newest = row;
    if (recorded && row.seq === recorded.seq + 1) beyond = row;
  }
  const broken = againstHead(expected - 1, previous, newest, beyond, recorded);
  return { checked, lastPosition: expected - 1, headHash: previous, broken, done: true };
}

/** An organisation's chain, or a stretch of it, straight from the store. */
export function verifyActivity(
  control: ControlRecords,
  orgId: string,
  after = 0,
  limit = Number.POSITIVE_INFINITY,
): Promise<ChainCheck> {
  // One snapshot: an event recorded by another process between reading the rows and the
  // recorded head would otherwise look like one appended to the file.
  return control.read(async (tx) => {
    const recorded = await tx.activity.recorded(orgId);
    return checkChain(tx.activity.chain(orgId, Math.max(after, 1)), after, limit, recorded);
  });
}
