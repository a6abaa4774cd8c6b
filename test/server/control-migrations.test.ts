import BetterSqlite3 from 'better-sqlite3';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { verifyActivity } from '../../server/domain/activity-chain.js';
import { SqliteControlStore } from '../../server/stores/control/store.js';

const scratch = mkdtempSync(join(tmpdir(), 'gc-control-migrations-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const LIFETIMES = { accessSeconds: 900, refreshSeconds: 604_800 };
const MIGRATIONS = new URL('../../server/stores/control/migrations/', import.meta.url);

/** A control store as version 1 left it: two organisations and some of their audit trail. */
function storeAtVersion1(): string {
  const path = join(mkdtempSync(join(scratch, 'v1-')), 'control.db');
  const db = new BetterSqlite3(path);
  db.exec(readFileSync(new URL('001_init.sql', MIGRATIONS), 'utf8'));
  db.pragma('user_version = 1');
  const org = db.prepare('INSERT INTO organizations (id, name, name_key, created_at) VALUES (?, ?, ?, ?)');
  org.run('org-a', 'Acme', 'acme', 1);
  org.run('org-b', 'Globex', 'globex', 2);
  db.prepare(
    "INSERT INTO accounts (id, org_id, email, password_hash, role, created_at) VALUES ('acct-a', 'org-a', 'a@acme.example', NULL, 'owner', 1)",
  ).run();
  const event = db.prepare(
    'INSERT INTO activity (id, org_id, actor_id, action, target, created_at, source_ip) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  event.run(3, 'org-a', 'acct-a', 'member.joined', 'a@acme.example', 10, '10.0.0.1');
  event.run(7, 'org-b', null, 'budget.deposited', '', 11, 'local');
  event.run(9, 'org-a', 'acct-a', 'org.renamed', 'Acme', 12, '10.0.0.1');
  db.close();
  return path;
}

/** The columns version 1 had: later versions add to each event, never change these. */
const everyEvent = (db: BetterSqlite3.Database) =>
  db.prepare('SELECT id, org_id, actor_id, action, target, created_at, source_ip FROM activity ORDER BY id').all();

/** Runs `work` on a writable connection of its own: the store's `db` refuses every write before the schema can. */
function beside<T>(path: string, work: (db: BetterSqlite3.Database) => T): T {
  const db = new BetterSqlite3(path, { fileMustExist: true });
  try {
    return work(db);
  } finally {
    db.close();
  }
}

describe('migration 002, the join policy', () => {
  it('leaves every existing organisation open and the audit trail as it was, append-only still', async () => {
    const path = storeAtVersion1();
    const old = new BetterSqlite3(path, { readonly: true });
    const events = everyEvent(old);
    old.close();

    const control = SqliteControlStore.open(path, LIFETIMES);
    try {
      expect(control.db.pragma('user_version', { simple: true })).toBe(8);
      for (const orgId of ['org-a', 'org-b'])
        expect(await control.joinPolicies.of(orgId)).toEqual({ policy: 'open', domains: [] });
      expect(everyEvent(control.db)).toEqual(events);
      expect(control.db.pragma('foreign_key_check')).toEqual([]);
      expect((await control.activity.list('org-a', 10, 0)).map((e) => e.action)).toEqual([
        'org.renamed',
        'member.joined',
      ]);

      beside(path, (db) => {
        expect(() => db.prepare('UPDATE activity SET target = ? WHERE id = 3').run('x')).toThrow(
          'activity log is append-only',
        );
        expect(() => db.prepare('DELETE FROM activity WHERE id = 7').run()).toThrow('activity log is append-only');
        const bogus =
          "INSERT INTO activity (org_id, seq, action, target, created_at, source_ip, hash) VALUES ('org-a', 99, 'org.deleted', '', 1, 'local', printf('%064d', 0))";
        expect(() => db.prepare(bogus).run()).toThrow(/CHECK constraint failed/);
      });
      // The index the activity page reads by came back with the table.
      const indexes = control.db.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'activity' AND name = 'activity_by_org'",
      );
      expect(indexes.all()).toEqual([{ name: 'activity_by_org' }]);

      // The new action is accepted, and numbering carries on after the rows kept.
      await control.write(async (tx) => {
        await tx.joinPolicies.set('org-a', { policy: 'domains', domains: ['acme.example'] });
        await tx.activity.record({
          orgId: 'org-a',
          actorId: null,
          action: 'org.join_policy_changed',
          target: 'domains: acme.example',
          sourceIp: 'local',
          at: 20,
        });
      });
      expect(control.db.prepare('SELECT MAX(id) AS id FROM activity').get()).toEqual({ id: 10 });
      expect(await control.joinPolicies.of('org-a')).toEqual({ policy: 'domains', domains: ['acme.example'] });
      expect(await control.joinPolicies.of('org-b')).toEqual({ policy: 'open', domains: [] });
    } finally {
      await control.close();
    }
  });

  it('refuses a policy the schema does not know', async () => {
    const path = storeAtVersion1();
    const control = SqliteControlStore.open(path, LIFETIMES);
    try {
      beside(path, (db) =>
        expect(() => db.prepare("UPDATE organizations SET join_policy = 'invite' WHERE id = 'org-a'").run()).toThrow(
          /CHECK constraint failed/,
        ),
      );
    } finally {
      await control.close();
    }
  });
});

describe('migration 005, the activity hash chain', () => {
  it('places and chains the events recorded before it, per organisation, and new events chain on', async () => {
    const control = SqliteControlStore.open(storeAtVersion1(), LIFETIMES);
    try {
      const places = control.db.prepare('SELECT id, org_id, seq, change FROM activity ORDER BY id').all();
      expect(places).toEqual([
        { id: 3, org_id: 'org-a', seq: 1, change: null },
        { id: 7, org_id: 'org-b', seq: 1, change: null },
        { id: 9, org_id: 'org-a', seq: 2, change: null },
      ]);
      expect(await verifyActivity(control, 'org-a')).toMatchObject({ checked: 2, broken: null, done: true });
      expect(await verifyActivity(control, 'org-b')).toMatchObject({ checked: 1, broken: null, done: true });

      await control.write((tx) =>
        tx.activity.record({
          orgId: 'org-a',
          actorId: 'acct-a',
          action: 'api_key.rotated',
          target: 'sk_svc_old',
          sourceIp: '10.0.0.1',
          at: 30,
          change: { before: { key_prefix: 'sk_svc_old' }, after: { key_prefix: 'sk_svc_new' } },
        }),
      );
      expect(control.db.prepare("SELECT id, seq FROM activity WHERE action = 'api_key.rotated'").get()).toEqual({
        id: 10,
        seq: 3,
      });
      expect(await verifyActivity(control, 'org-a')).toMatchObject({ checked: 3, broken: null });
      // One organisation's event is no part of another's chain.
      expect(await verifyActivity(control, 'org-b')).toMatchObject({ checked: 1, broken: null });
    } finally {
      await control.close();
    }
  });
});
