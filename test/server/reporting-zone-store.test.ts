import BetterSqlite3 from 'better-sqlite3';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteControlStore } from '../../server/stores/control/store.js';

const scratch = mkdtempSync(join(tmpdir(), 'gc-reporting-zone-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const LIFETIMES = { accessSeconds: 900, refreshSeconds: 604_800 };
const MIGRATIONS = new URL('../../server/stores/control/migrations/', import.meta.url);

/** A control store as version 3 left it: two organisations and some of their audit trail. */
function storeAtVersion3(): string {
  const path = join(mkdtempSync(join(scratch, 'v3-')), 'control.db');
  const db = new BetterSqlite3(path);
  for (const file of ['001_init.sql', '002_join_policy.sql', '003_settled_spend.sql']) {
    db.exec(readFileSync(new URL(file, MIGRATIONS), 'utf8'));
  }
  db.pragma('user_version = 3');
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
  event.run(7, 'org-b', null, 'org.join_policy_changed', 'closed', 11, 'local');
  event.run(9, 'org-a', 'acct-a', 'org.renamed', 'Acme', 12, '10.0.0.1');
  db.close();
  return path;
}

/** The columns version 3 had: later versions add to each event (005: place, change, hash), never change these. */
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

describe('migration 004, the reporting zone', () => {
  it('puts every existing organisation on UTC and keeps the audit trail, append-only still', async () => {
    const path = storeAtVersion3();
    const old = new BetterSqlite3(path, { readonly: true });
    const events = everyEvent(old);
    old.close();

    const control = SqliteControlStore.open(path, LIFETIMES);
    try {
      expect(control.db.pragma('user_version', { simple: true })).toBe(8);
      expect(await control.organizations.reportingZone('org-a')).toBe('UTC');
      expect(await control.organizations.reportingZone('org-b')).toBe('UTC');
      expect(everyEvent(control.db)).toEqual(events);
      expect(control.db.pragma('foreign_key_check')).toEqual([]);

      beside(path, (db) => {
        expect(() => db.prepare('UPDATE activity SET target = ? WHERE id = 3').run('x')).toThrow(
          'activity log is append-only',
        );
        expect(() => db.prepare('DELETE FROM activity WHERE id = 7').run()).toThrow('activity log is append-only');
        const bogus =
          "INSERT INTO activity (org_id, seq, action, target, created_at, source_ip, hash) VALUES ('org-a', 99, 'org.deleted', '', 1, 'local', printf('%064d', 0))";
        expect(() => db.prepare(bogus).run()).toThrow(/CHECK constraint failed/);
      });
      const indexes = control.db.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'activity' AND name = 'activity_by_org'",
      );
      expect(indexes.all()).toEqual([{ name: 'activity_by_org' }]);

      // The new action is accepted with the change, and numbering carries on after the rows kept.
      await control.write(async (tx) => {
        await tx.organizations.setReportingZone('org-a', 'Asia/Karachi');
        await tx.activity.record({
          orgId: 'org-a',
          actorId: 'acct-a',
          action: 'org.reporting_zone_changed',
          target: 'Asia/Karachi',
          sourceIp: '10.0.0.1',
          at: 20,
        });
      });
      expect(control.db.prepare('SELECT MAX(id) AS id FROM activity').get()).toEqual({ id: 10 });
      expect(await control.organizations.reportingZone('org-a')).toBe('Asia/Karachi');
      expect(await control.organizations.reportingZone('org-b')).toBe('UTC');
      expect(await control.activity.list('org-a', 1, 0)).toEqual([
        {
          actor: 'a@acme.example',
          action: 'org.reporting_zone_changed',
          target: 'Asia/Karachi',
          created_at: 20,
          source_ip: '10.0.0.1',
        },
      ]);
    } finally {
      await control.close();
    }
  });

  it('gives a new store the column too', async () => {
    const control = SqliteControlStore.open(join(mkdtempSync(join(scratch, 'new-')), 'control.db'), LIFETIMES);
    try {
      const org = await control.write((tx) => tx.organizations.create('Initech', 1));
      expect(await control.organizations.reportingZone(org.id)).toBe('UTC');
      await control.write((tx) => tx.organizations.setReportingZone(org.id, 'Asia/Kathmandu'));
      expect(await control.organizations.reportingZone(org.id)).toBe('Asia/Kathmandu');
    } finally {
      await control.close();
    }
  });
});
