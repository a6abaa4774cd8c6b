import type { Database } from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import type { ControlStore } from '../stores/control/store.js';

/**
 * Rows and the spend they add live in two stores, which no transaction spans. So the spend is
 * written beside the rows, in their transaction (the telemetry store's `spend_outbox`, under one
 * settlement id per commit), and settled into the keys afterwards: the control transaction adds
 * it and marks the settlement (`settled_spend`), then the outbox forgets it. A crash at any point
 * leaves either the outbox to settle (at the next start or commit) or a mark saying it was
 * settled: the spend is never lost and never added twice, also when another process (an import
 * beside the server) settles the same entry at the same time. Marks are kept an hour.
 */

const MARK_RETENTION_MS = 3600_000;

/** Writes `spend` into the outbox, inside the rows' transaction; returns its settlement id. */
export function recordSpend(telemetry: Database, spend: ReadonlyMap<string, number>): string {
  const settlement = randomUUID();
  const insert = telemetry.prepare('INSERT INTO spend_outbox (settlement, key_id, micro) VALUES (?, ?, ?)');
  for (const [keyId, micro] of spend) if (micro !== 0) insert.run(settlement, keyId, micro);
  return settlement;
}

/** Settles one settlement of the outbox into the keys' spend, once, whoever else tries too. */
export function settleSpend(control: ControlStore, telemetry: Database, settlement: string, now: number): void {
  const rows = telemetry.prepare('SELECT key_id, micro FROM spend_outbox WHERE settlement = ?').all(settlement) as {
    key_id: string;
    micro: number;
  }[];
  if (rows.length === 0) return;
  control.write(() => {
    control.settlements.forgetOlder(now - MARK_RETENTION_MS);
    if (control.settlements.isSettled(settlement)) return;
    for (const row of rows) control.keys.settle(row.key_id, row.micro);
    control.settlements.mark(settlement, now);
  });
  telemetry.prepare('DELETE FROM spend_outbox WHERE settlement = ?').run(settlement);
}

/** Settles whatever an earlier crash left in the outbox; returns how many settlements it found. */
export function settleOutstandingSpend(control: ControlStore, telemetry: Database, now: number): number {
  const pending = telemetry.prepare('SELECT DISTINCT settlement FROM spend_outbox').pluck().all() as string[];
  for (const settlement of pending) settleSpend(control, telemetry, settlement, now);
  return pending.length;
}
