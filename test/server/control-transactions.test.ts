import BetterSqlite3 from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { ActivityEvent } from '../../server/stores/control/activity.js';
import { withRouteActive } from '../../server/domain/route-models.js';
import { SqliteControlStore } from '../../server/stores/control/store.js';

const scratch = mkdtempSync(join(tmpdir(), 'gc-control-transactions-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const LIFETIMES = { accessSeconds: 900, refreshSeconds: 3600 };

const opened: SqliteControlStore[] = [];
const gates: (() => void)[] = [];
afterEach(async () => {
  // A test that failed with a transaction held would otherwise keep its store from closing.
  for (const open of gates.splice(0)) open();
  for (const store of opened.splice(0)) await store.close();
});

/** A new store in a folder of its own; `keep` leaves closing it to the test. */
function openStore(keep = false): { control: SqliteControlStore; path: string } {
  const path = join(mkdtempSync(join(scratch, 'store-')), 'control.db');
  const control = SqliteControlStore.open(path, LIFETIMES);
  if (!keep) opened.push(control);
  return { control, path };
}

/** A promise let go of when the test says: what holds a transaction's work at an await. */
function gate(): { passed: Promise<void>; open: () => void } {
  let open = () => {};
  const passed = new Promise<void>((resolve) => (open = resolve));
  gates.push(open);
  return { passed, open };
}

/** Until the event loop's next turn: long enough for anything queued behind a promise to start. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

class Undo extends Error {}

describe('a write transaction', () => {
  it('is not seen by reads outside it while its work waits, and is seen in the very turn it commits', async () => {
    const { control } = openStore();
    const before = await control.routes.current();
    const model = Object.keys(before.document.routes).find((id) => before.document.routes[id]!.active)!;
    const reached = gate();
    const held = gate();
    const writing = control.write(async (tx) => {
      await tx.settlements.mark('s-1', 1);
      const next = withRouteActive(before.document, model, false)!;
      expect(await tx.routes.apply(next, 'test', 1)).toEqual({ kind: 'applied', version: 2 });
      expect(await tx.settlements.isSettled('s-1')).toBe(true);
      reached.open();
      await held.passed;
    });
    await reached.passed;
    expect(await control.settlements.isSettled('s-1')).toBe(false);
    // A read the store caches until it changes: kept for the rest of this turn unless told of the commit.
    expect(await control.routes.current()).toBe(before);

    let turnEnded = false;
    setImmediate(() => (turnEnded = true));
    held.open();
    await writing;
    expect(await control.settlements.isSettled('s-1')).toBe(true);
    expect((await control.routes.current()).document.routes[model]?.active).toBe(false);
    // Still the turn of the commit: a later turn would read the store's commits again anyway.
    expect(turnEnded).toBe(false);
  });

  it('is the only way to write: a write through the store outside one is refused and writes nothing', async () => {
    const { control } = openStore();
    await expect(control.settlements.mark('s-outside', 1)).rejects.toThrow(/readonly/);
    await expect(control.organizations.create('Outside', 1)).rejects.toThrow(/readonly/);
    expect(await control.settlements.isSettled('s-outside')).toBe(false);
    expect(await control.organizations.findByName('Outside')).toBeUndefined();
    // Nor on the writing connection, which a transaction would commit.
    await control.read(async (tx) => {
      expect(await tx.settlements.isSettled('s-outside')).toBe(false);
      expect(await tx.organizations.findByName('Outside')).toBeUndefined();
    });
  });

  it('asked for while another runs starts once that one has committed, and sees its writes', async () => {
    const { control } = openStore();
    const steps: string[] = [];
    const reached = gate();
    const held = gate();
    const first = control.write(async (tx) => {
      steps.push('first begins');
      await tx.settlements.mark('s-first', 1);
      reached.open();
      await held.passed;
      steps.push('first ends');
    });
    const second = control.write(async (tx) => {
      steps.push('second begins');
      const seen = await tx.settlements.isSettled('s-first');
      await tx.settlements.mark('s-second', 2);
      return seen;
    });
    await reached.passed;
    await nextTurn();
    expect(steps).toEqual(['first begins']);
    held.open();
    await first;
    expect(await second).toBe(true);
    expect(steps).toEqual(['first begins', 'first ends', 'second begins']);
    expect(await control.settlements.isSettled('s-second')).toBe(true);
  });

  it('that throws rolls back its own writes only, and the transactions after it run', async () => {
    const { control } = openStore();
    const kept = control.write((tx) => tx.settlements.mark('s-kept', 1));
    const undone = control.write(async (tx) => {
      await tx.settlements.mark('s-undone', 2);
      throw new Undo();
    });
    const after = control.write(async (tx) => {
      await tx.settlements.mark('s-after', 3);
      return tx.settlements.isSettled('s-undone');
    });
    await kept;
    await expect(undone).rejects.toThrow(Undo);
    expect(await after).toBe(false);
    expect(await control.settlements.isSettled('s-kept')).toBe(true);
    expect(await control.settlements.isSettled('s-undone')).toBe(false);
    expect(await control.settlements.isSettled('s-after')).toBe(true);
  });

  it('runs a nested write in a savepoint: a throw there undoes its writes only, and the rest commits', async () => {
    const { control } = openStore();
    await control.write(async (tx) => {
      await tx.settlements.mark('s-outer-before', 1);
      await tx.write((inner) => inner.settlements.mark('s-inner-kept', 2));
      await expect(
        tx.write(async (inner) => {
          await inner.settlements.mark('s-inner-undone', 3);
          expect(await inner.settlements.isSettled('s-inner-undone')).toBe(true);
          throw new Undo();
        }),
      ).rejects.toThrow(Undo);
      expect(await tx.settlements.isSettled('s-inner-undone')).toBe(false);
      expect(await tx.settlements.isSettled('s-outer-before')).toBe(true);
      expect(await tx.settlements.isSettled('s-inner-kept')).toBe(true);
      await tx.settlements.mark('s-outer-after', 4);
    });
    const settled = (id: string) => control.settlements.isSettled(id);
    expect(await settled('s-outer-before')).toBe(true);
    expect(await settled('s-inner-kept')).toBe(true);
    expect(await settled('s-inner-undone')).toBe(false);
    expect(await settled('s-outer-after')).toBe(true);
  });
});

describe('writes that must share a transaction', () => {
  it('refuses an activity event outside a transaction, and records it inside one', async () => {
    const { control } = openStore();
    const org = await control.write((tx) => tx.organizations.create('Acme', 1));
    const event: ActivityEvent = {
      orgId: org.id,
      actorId: null,
      action: 'budget.deposited',
      target: '',
      sourceIp: 'local',
      at: 2,
    };
    await expect(control.activity.record(event)).rejects.toThrow(/inside a control transaction/);
    expect(await control.activity.lastPlace(org.id)).toBe(0);
    await control.write((tx) => tx.activity.record(event));
    expect(await control.activity.lastPlace(org.id)).toBe(1);
  });

  it('refuses to rotate a refresh token outside a transaction, leaving it unused', async () => {
    const { control } = openStore();
    const tokens = await control.write(async (tx) => {
      const org = await tx.organizations.create('Acme', 1);
      const account = await tx.accounts.create(org.id, 'owner@acme.example', null, 'owner', 1);
      return tx.sessions.start(account.id, 1);
    });
    await expect(control.sessions.refresh(tokens.refreshToken, 2)).rejects.toThrow(/inside a control transaction/);
    // A token the refused call had marked used would read as reused now, and end its session.
    const outcome = await control.write((tx) => tx.sessions.refresh(tokens.refreshToken, 3));
    expect(outcome.kind).toBe('rotated');
  });
});

describe('closing the store', () => {
  it('waits for the transactions asked for before it, then closes', async () => {
    const { control, path } = openStore(true);
    const reached = gate();
    const held = gate();
    const inFlight = control.write(async (tx) => {
      reached.open();
      await held.passed;
      await tx.settlements.mark('s-in-flight', 1);
      return 'committed';
    });
    const queued = control.write((tx) => tx.settlements.mark('s-queued', 2));
    await reached.passed;
    let closed = false;
    const closing = control.close().then(() => {
      closed = true;
    });
    await nextTurn();
    expect(closed).toBe(false);
    held.open();
    expect(await inFlight).toBe('committed');
    await queued;
    await closing;
    expect(closed).toBe(true);
    const db = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
    try {
      expect(db.prepare('SELECT settlement FROM settled_spend ORDER BY settlement').pluck().all()).toEqual([
        's-in-flight',
        's-queued',
      ]);
    } finally {
      db.close();
    }
  });
});
