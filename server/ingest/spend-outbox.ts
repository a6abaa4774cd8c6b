import type { Database } from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import type { ControlStore } from '../stores/control/store.js';

/**
 * Rows and the spend they add live in two stores, which no transaction spans. So the spend is
 * written beside the rows, in their transaction (the telemetry store's `spend_outbox`, under one
 * settlement id per commit), and settled into the keys afterwards: a control transaction reads
 * the entry and, unless the settlement is marked settled (`settled_spend`), adds it and marks it;
 * then the outbox forgets the entry, then the mark goes. A crash at any point leaves either the
 * entry to settle (at the next start or commit) or a mark saying it was settled: the spend is
 * never lost and never added twice. The entry is read inside the control transaction, under the
 * control store's write lock, so two writers (an import beside the server) settling the same
 * entry see each other's work: the one second sees the mark, or no entry. It takes the store,
 * never a transaction: the mark must be committed before the outbox forgets the entry.
 */

/**
 * Writes `spend` into the outbox, inside the rows' transaction; returns its settlement id, or null
 * when the rows cost nothing (refusals): then there is nothing to settle and no control write.
 */
export function recordSpend(telemetry: Database, spend: ReadonlyMap<string, number>): string | null {
  const owed = [...spend].filter(([, micro]) => micro !== 0);
  if (owed.length === 0) return null;
  const settlement = randomUUID();
  const insert = telemetry.prepare('INSERT INTO spend_outbox (settlement, key_id, micro) VALUES (?, ?, ?)');
  for (const [keyId, micro] of owed) insert.run(settlement, keyId, micro);
  return settlement;
}

/**
 * Where a telemetry store keeps the spend its rows add until it is settled: the SQLite store's
 * table (`sqliteOutbox`) or PostgreSQL's (`PgRequestLog`).
 */
export interface SpendOutbox {
  entries(settlement: string): Promise<{ key_id: string; micro: number }[]>;
  forget(settlement: string): Promise<void>;
  pending(): Promise<string[]>;
}

/** The outbox of a SQLite telemetry store, on `telemetry`'s connection. */
export function sqliteOutbox(telemetry: Database): SpendOutbox {
  return {
    entries: async (settlement) =>
      telemetry.prepare('SELECT key_id, micro FROM spend_outbox WHERE settlement = ?').all(settlement) as {
        key_id: string;
        micro: number;
      }[],
    forget: async (settlement) => {
      telemetry.prepare('DELETE FROM spend_outbox WHERE settlement = ?').run(settlement);
    },
    pending: async () => telemetry.prepare('SELECT DISTINCT settlement FROM spend_outbox').pluck().all() as string[],
  };
}

/** Settles one settlement of the outbox into the keys' spend, once, whoever else tries too. */
export async function settleSpend(control: ControlStore, outbox: SpendOutbox, settlement: string): Promise<void> {
  const found = await control.write(async (tx) => {
    const rows = await outbox.entries(settlement);
    if (rows.length === 0) return false;
    if (await tx.settlements.isSettled(settlement)) return true;
    for (const row of rows) await tx.keys.settle(row.key_id, row.micro);
    await tx.settlements.mark(settlement, Date.now());
    return true;
  });
  if (!found && !(await control.settlements.isSettled(settlement))) return;
  if (found) await outbox.forget(settlement);
  await control.write((tx) => tx.settlements.forget(settlement));
}

/** Settles whatever an earlier crash left in the outbox; returns how many settlements it found. */
export async function settleOutstandingSpend(control: ControlStore, outbox: SpendOutbox): Promise<number> {
  const pending = await outbox.pending();
  for (const settlement of pending) await settleSpend(control, outbox, settlement);
  return pending.length;
}
