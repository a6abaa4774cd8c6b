import BetterSqlite3 from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdmin } from '../../server/admin/commands.js';
import { verifyActivity } from '../../server/domain/activity-chain.js';
import { OPERATOR_SOURCE, type ChainRow } from '../../server/stores/control/activity.js';
import { SqliteControlStore } from '../../server/stores/control/store.js';
import { activityHash } from '../../server/stores/control/activity-hash.js';
import {
  PASSWORD,
  register,
  registerOrg,
  runOperator,
  startServer,
  type TestClient,
  type TestServer,
} from './harness.js';

/**
 * The activity trail's hash chain (issue 27): edits made to the SQLite file behind the
 * triggers' back are found by place, by the console's verification and the operator's
 * command alike; the chain is written with the event; changes carry before and after.
 */

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

interface Verification {
  checked: number;
  last_position: number;
  total: number;
  done: boolean;
  head_hash: string;
  broken: { position: number; fault: string; timestamp: string; action: string; message: string } | null;
}

async function verify(client: TestClient, query = ''): Promise<Verification> {
  const answer = await client.get(`/activity/verify${query}`);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body;
}

/** The operator's command: its exit code and what it printed. */
async function verifyCommand(...args: string[]): Promise<{ code: number; output: string }> {
  const lines: string[] = [];
  const code = await runAdmin(['verify-activity', ...args, '--data-dir', server.dataDir], (line) => lines.push(line));
  return { code, output: lines.join('\n') };
}

/**
 * Edits the file as an attacker with the file would: the append-only triggers dropped, the
 * edit made, the triggers put back (so the other tests see the table as the server made it).
 */
function tamper(edit: (db: BetterSqlite3.Database) => void): void {
  const db = new BetterSqlite3(join(server.dataDir, 'control.db'), { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    const triggers = db
      .prepare<[], { name: string; sql: string }>(
        "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'activity'",
      )
      .all();
    expect(triggers.map((t) => t.name).sort()).toEqual(['activity_refuses_delete', 'activity_refuses_update']);
    db.transaction(() => {
      for (const trigger of triggers) db.exec(`DROP TRIGGER ${trigger.name}`);
      edit(db);
      for (const trigger of triggers) db.exec(trigger.sql);
    })();
  } finally {
    db.close();
  }
}

/** An organisation with a trail of eight events: joined, then seven provider keys stored. */
async function orgWithTrail() {
  const org = await registerOrg(server);
  for (let i = 1; i <= 7; i++) {
    expect(
      (await org.client.post('/vault/keys', { provider: `p${i}`, api_key: `provider-secret-${i}-xyz` })).status,
    ).toBe(200);
  }
  return org;
}

const idAt = (db: BetterSqlite3.Database, orgId: string, seq: number) =>
  db.prepare<[string, number], { id: number }>('SELECT id FROM activity WHERE org_id = ? AND seq = ?').get(orgId, seq)!
    .id;

describe('the activity hash chain', () => {
  it('holds for an untouched trail, in the console and from the operator’s command', async () => {
    const { client, org } = await orgWithTrail();
    const whole = await verify(client);
    expect(whole).toMatchObject({ checked: 8, last_position: 8, total: 8, done: true, broken: null });
    expect(whole.head_hash).toMatch(/^[0-9a-f]{64}$/);

    // Stretch by stretch, as the console asks: the same result and the same head.
    const first = await verify(client, '?limit=3');
    expect(first).toMatchObject({ checked: 3, last_position: 3, done: false, broken: null });
    const second = await verify(client, `?after=${first.last_position}&limit=3`);
    expect(second).toMatchObject({ checked: 3, last_position: 6, done: false });
    const third = await verify(client, `?after=${second.last_position}&limit=3`);
    expect(third).toMatchObject({ checked: 2, last_position: 8, done: true, broken: null, head_hash: whole.head_hash });
    expect((await client.get('/activity/verify?after=9')).status).toBe(400);

    const command = await verifyCommand('--org', org);
    expect(command.code).toBe(0);
    expect(command.output).toContain(`${org}: 8 event(s), chain holds; head hash ${whole.head_hash}`);
  });

  it('names an event altered in the file by its place, time and action', async () => {
    const { client, org, orgId } = await orgWithTrail();
    tamper((db) => db.prepare("UPDATE activity SET target = 'p-forged' WHERE id = ?").run(idAt(db, orgId, 5)));

    const result = await verify(client);
    expect(result.broken).toMatchObject({ position: 5, fault: 'altered', action: 'vault_key.set' });
    expect(result.checked).toBe(4);
    const command = await verifyCommand('--org', org);
    expect(command.code).toBe(1);
    expect(command.output).toMatch(/chain BROKEN at event #5: event #5 \(vault_key\.set at \d{4}-.*\) does not match/);

    // The hash rewritten to match the forged row moves the break to the link after it.
    tamper((db) => {
      const row = db.prepare('SELECT * FROM activity WHERE org_id = ? AND seq = 5').get(orgId) as ChainRow;
      const previous = db.prepare('SELECT hash FROM activity WHERE org_id = ? AND seq = 4').get(orgId) as ChainRow;
      db.prepare('UPDATE activity SET hash = ? WHERE id = ?').run(activityHash(row, previous.hash), row.id);
    });
    expect((await verify(client)).broken).toMatchObject({ position: 6, fault: 'altered', action: 'vault_key.set' });
  });

  it('names the place of an event deleted from the file', async () => {
    const { client, org, orgId } = await orgWithTrail();
    tamper((db) => db.prepare('DELETE FROM activity WHERE id = ?').run(idAt(db, orgId, 3)));

    const result = await verify(client);
    expect(result.broken).toMatchObject({ position: 3, fault: 'missing', action: 'vault_key.set' });
    expect(result.broken!.message).toContain('event #3 is missing');
    const command = await verifyCommand('--org', org);
    expect(command.code).toBe(1);
    expect(command.output).toContain('chain BROKEN at event #3: event #3 is missing');
  });

  it('names the place of the newest events deleted from the file, and the next event keeps the gap', async () => {
    const { client, org, orgId } = await orgWithTrail();
    tamper((db) => db.prepare('DELETE FROM activity WHERE org_id = ? AND seq >= 7').run(orgId));

    const result = await verify(client);
    expect(result).toMatchObject({ checked: 6, last_position: 6, total: 8, done: true });
    expect(result.broken).toMatchObject({ position: 7, fault: 'missing', timestamp: null, action: null });
    expect(result.broken!.message).toContain('the newest 2 were deleted');
    const command = await verifyCommand('--org', org);
    expect(command.code).toBe(1);
    expect(command.output).toContain('chain BROKEN at event #7: event #7 is missing');

    // The server chains on from the head it recorded, not from what the file now ends with.
    expect((await client.post('/vault/keys', { provider: 'later', api_key: 'provider-secret-later' })).status).toBe(
      200,
    );
    const after = await verify(client);
    expect(after.total).toBe(9);
    expect(after.broken).toMatchObject({ position: 7, fault: 'missing', action: 'vault_key.set' });
  });

  it('names an event appended with a hash that chains, and a trail rewritten whole', async () => {
    const appended = await orgWithTrail();
    tamper((db) => {
      const last = db.prepare('SELECT * FROM activity WHERE org_id = ? AND seq = 8').get(appended.orgId) as ChainRow;
      const forged = { ...last, id: last.id + 100_000, seq: 9, action: 'vault_key.revoked', target: 'p1' };
      db.prepare(
        `INSERT INTO activity (id, org_id, seq, actor_id, action, target, created_at, source_ip, change, hash)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        forged.id,
        forged.org_id,
        forged.seq,
        forged.actor_id,
        forged.action,
        forged.target,
        forged.created_at,
        forged.source_ip,
        forged.change,
        activityHash(forged, last.hash),
      );
    });
    expect((await verify(appended.client)).broken).toMatchObject({
      position: 9,
      fault: 'appended',
      action: 'vault_key.revoked',
    });

    // Every hash recomputed after an edit: each link holds, the recorded head does not.
    const rewritten = await orgWithTrail();
    tamper((db) => {
      const rows = db
        .prepare('SELECT * FROM activity WHERE org_id = ? ORDER BY seq')
        .all(rewritten.orgId) as ChainRow[];
      let previous = '';
      for (const row of rows) {
        const edited = row.seq === 2 ? { ...row, target: 'p-forged' } : row;
        const hash = activityHash(edited, previous);
        db.prepare('UPDATE activity SET target = ?, hash = ? WHERE id = ?').run(edited.target, hash, row.id);
        previous = hash;
      }
    });
    const result = await verify(rewritten.client);
    expect(result.broken).toMatchObject({ position: 8, fault: 'altered' });
    expect(result.broken!.message).toContain('the trail was rewritten');
  });

  it('names an event inserted into the file, at the end or into a place already taken', async () => {
    const appended = await orgWithTrail();
    tamper((db) =>
      db
        .prepare(
          `INSERT INTO activity (org_id, seq, actor_id, action, target, created_at, source_ip, change, hash)
           SELECT org_id, 9, actor_id, 'vault_key.revoked', 'p1', created_at + 1, source_ip, NULL, hash
           FROM activity WHERE org_id = ? AND seq = 8`,
        )
        .run(appended.orgId),
    );
    expect((await verify(appended.client)).broken).toMatchObject({
      position: 9,
      fault: 'altered',
      action: 'vault_key.revoked',
    });

    const squeezed = await orgWithTrail();
    tamper((db) => {
      db.exec('DROP INDEX activity_by_place');
      db.prepare(
        `INSERT INTO activity (org_id, seq, actor_id, action, target, created_at, source_ip, change, hash)
         SELECT org_id, seq, actor_id, 'vault_key.revoked', 'p2', created_at, source_ip, NULL, hash
         FROM activity WHERE org_id = ? AND seq = 4`,
      ).run(squeezed.orgId);
    });
    try {
      const result = await verify(squeezed.client);
      expect(result.broken).toMatchObject({ position: 4, fault: 'duplicate', action: 'vault_key.revoked' });
      const command = await verifyCommand('--org', squeezed.org);
      expect(command.code).toBe(1);
      expect(command.output).toContain('event #4 appears twice');
    } finally {
      // The other organisations' trails, and the index, as they were.
      tamper((db) => {
        db.prepare("DELETE FROM activity WHERE org_id = ? AND action = 'vault_key.revoked'").run(squeezed.orgId);
        db.exec('CREATE UNIQUE INDEX activity_by_place ON activity (org_id, seq)');
      });
    }
  });

  it('exits 2 for an organisation that does not exist, and checks every organisation without --org', async () => {
    const unknown = await verifyCommand('--org', 'No Such Organisation');
    expect(unknown.code).toBe(2);
    const all = await verifyCommand();
    // Earlier tests broke some organisations' chains on purpose: the command says so and fails.
    expect(all.code).toBe(1);
    expect(all.output).toMatch(/verified \d+ organization\(s\): \d+ chain\(s\) broken/);
  });
});

describe('the chain is written with its event', () => {
  it('stays one chain when two processes write to the same file in turn', async () => {
    // Two connections, as the server and the operator's command beside it: each reads the
    // other's last event under its write lock, so neither forks the chain.
    const path = join(mkdtempSync(join(tmpdir(), 'gc-activity-chain-')), 'control.db');
    const lifetimes = { accessSeconds: 60, refreshSeconds: 600 };
    const server = SqliteControlStore.open(path, lifetimes);
    const operator = SqliteControlStore.open(path, lifetimes);
    try {
      const { id: orgId } = await server.write((tx) => tx.organizations.create('X', 1));
      for (let i = 0; i < 6; i++) {
        const writer = i % 2 === 0 ? server : operator;
        await writer.write((tx) =>
          tx.activity.record({
            orgId,
            actorId: null,
            action: 'budget.deposited',
            target: '',
            sourceIp: OPERATOR_SOURCE,
            at: 1_000 + i,
          }),
        );
      }
      const places = server.db.prepare('SELECT seq FROM activity WHERE org_id = ? ORDER BY id').pluck().all(orgId);
      expect(places).toEqual([1, 2, 3, 4, 5, 6]);
      expect(await verifyActivity(operator, orgId)).toMatchObject({ checked: 6, broken: null });
    } finally {
      await operator.close();
      await server.close();
      rmSync(dirname(path), { recursive: true, force: true });
    }
  });

  it('leaves no event, and a chain that holds, when the change rolls back', async () => {
    const { client, org, projectId } = await registerOrg(server);
    await runOperator(server, 'deposit', '--org', org, '--pkr', '100');
    const key = (await client.post('/keys', { project_id: projectId, name: 'worker' })).body;
    const before = await verify(client);

    // Refused inside its transaction: above the budget.
    expect((await client.patch(`/keys/${key.id}`, { rate_limit_rpm: 60, credit_limit_pkr: 5000 })).status).toBe(400);
    // A dry run does the work and rolls it back.
    const dry = await client.post('/keys/bulk', {
      key_ids: [key.id],
      action: 'update_limits',
      limits: { rate_limit_rpm: 10 },
      dry_run: true,
    });
    expect(dry.status, JSON.stringify(dry.body)).toBe(200);
    expect(dry.body.results[0].outcome).toBe('ok');

    const after = await verify(client);
    expect(after).toMatchObject({ total: before.total, head_hash: before.head_hash, broken: null });

    // The next event chains on from the last one kept, at the next place.
    expect((await client.patch(`/keys/${key.id}`, { rate_limit_rpm: 30 })).status).toBe(200);
    const next = await verify(client);
    expect(next).toMatchObject({ total: before.total + 1, checked: before.total + 1, broken: null });
  });
});

interface Entry {
  position: number;
  actor: string | null;
  action: string;
  target: string;
  timestamp: string;
  source_ip: string;
  change: { before: Record<string, unknown> | null; after: Record<string, unknown> | null } | null;
  hash: string;
}

async function entries(client: TestClient, query = '') {
  const answer = await client.get(`/activity/entries${query}`);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body as { entries: Entry[]; limit: number; total: number | null; next_before: number | null };
}

describe('what a change records', () => {
  it('holds a key’s limits before and after an edit, a bulk change and a rotation, and never a secret', async () => {
    const { client, org, projectId } = await registerOrg(server);
    await runOperator(server, 'deposit', '--org', org, '--pkr', '1000');
    const key = (await client.post('/keys', { project_id: projectId, name: 'worker', credit_limit_cents: 100_000_000 }))
      .body;
    expect(
      (await client.patch(`/keys/${key.id}`, { rate_limit_rpm: 120, credit_limit_pkr: 250, expires_at: 4102444800 }))
        .status,
    ).toBe(200);
    const bulk = await client.post('/keys/bulk', {
      key_ids: [key.id],
      action: 'update_limits',
      limits: { rate_limit_rpm: 90 },
      dry_run: false,
    });
    expect(bulk.status).toBe(200);
    const rotated = await client.post(`/keys/${key.id}/rotate`);
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(201);

    const page = await entries(client);
    const [rotation, replacement, bulkEdit, edit, created] = page.entries;
    expect(rotation).toMatchObject({
      action: 'api_key.rotated',
      target: key.key_prefix,
      change: {
        before: { key_prefix: key.key_prefix, credit_limit_cents: 250_000_000 },
        after: { key_prefix: rotated.body.key_prefix, credit_limit_cents: 250_000_000 },
      },
    });
    expect(replacement).toMatchObject({ action: 'api_key.created', target: rotated.body.key_prefix });
    expect(bulkEdit!.change).toEqual({
      before: { rate_limit_rpm: 120, credit_limit_cents: 250_000_000, expires_at: '2100-01-01T00:00:00.000Z' },
      after: { rate_limit_rpm: 90, credit_limit_cents: 250_000_000, expires_at: '2100-01-01T00:00:00.000Z' },
    });
    expect(edit).toMatchObject({
      action: 'api_key.updated',
      change: {
        before: { rate_limit_rpm: 60, credit_limit_cents: 100_000_000, expires_at: null },
        after: { rate_limit_rpm: 120, credit_limit_cents: 250_000_000, expires_at: '2100-01-01T00:00:00.000Z' },
      },
    });
    expect(created).toMatchObject({
      action: 'api_key.created',
      change: { before: null, after: { name: 'worker', rate_limit_rpm: 60, credit_limit_cents: 100_000_000 } },
    });
    expect(page.entries.map((e) => e.position)).toEqual([7, 6, 5, 4, 3, 2, 1]);

    const text = JSON.stringify(page);
    for (const secret of [key.api_key, rotated.body.api_key, PASSWORD]) expect(text).not.toContain(secret);
    expect(text).not.toContain(key.api_key.slice(15));
    expect(text).not.toMatch(/secret|hash_/i);
  });

  it('holds the old and new organisation name, reporting zone and join policy', async () => {
    const { client, org } = await registerOrg(server);
    const renamed = `${org} renamed`;
    expect((await client.patch('/organization', { name: renamed })).status).toBe(200);
    expect((await client.call('PUT', '/organization/reporting-zone', { time_zone: 'Asia/Karachi' })).status).toBe(200);
    await runOperator(server, 'set-join-policy', '--org', renamed, '--policy', 'closed');

    const [policy, zone, rename] = (await entries(client)).entries;
    expect(policy!.change).toEqual({ before: { policy: 'open' }, after: { policy: 'closed' } });
    expect(zone!.change).toEqual({ before: { time_zone: 'UTC' }, after: { time_zone: 'Asia/Karachi' } });
    expect(rename!.change).toEqual({ before: { name: org }, after: { name: renamed } });
    // The contract's list keeps its shape.
    const contract = (await client.get('/activity')).body.events[0];
    expect(Object.keys(contract).sort()).toEqual(['action', 'actor', 'source_ip', 'target', 'timestamp']);
  });
});

describe('GET /activity/entries', () => {
  it('filters by action, actor, target and time on the server, and pages by place', async () => {
    const owner = await registerOrg(server);
    const teammate = await register(server, { org: owner.org });
    for (let i = 0; i < 12; i++) {
      const who = i % 2 === 0 ? owner.client : teammate.client;
      expect(
        (await who.post('/vault/keys', { provider: `prov-${i}`, api_key: `provider-secret-${i}-abc` })).status,
      ).toBe(200);
    }
    server.advance(60_000);
    const later = new Date(server.config.now()).toISOString();
    expect((await owner.client.delete('/vault/keys/prov-0')).status).toBe(200);

    const all = await entries(owner.client);
    expect(all.total).toBe(15);
    expect(all.next_before).toBeNull();

    const set = await entries(owner.client, '?action=vault_key.set');
    expect(set.total).toBe(12);
    expect(set.entries.every((e) => e.action === 'vault_key.set')).toBe(true);

    const byTeammate = await entries(owner.client, `?actor=${encodeURIComponent(teammate.email.toUpperCase())}`);
    expect(byTeammate.entries.map((e) => e.actor)).toEqual(Array(7).fill(teammate.email));
    expect(byTeammate.entries.map((e) => e.action)).toEqual([...Array(6).fill('vault_key.set'), 'member.joined']);

    const target = await entries(owner.client, '?target=prov-1');
    expect(target.entries.map((e) => e.target)).toEqual(['prov-11', 'prov-10', 'prov-1']);
    // A GLOB wildcard typed in the filter is a literal character, not a pattern.
    expect((await entries(owner.client, '?target=prov-*')).entries).toEqual([]);

    const recent = await entries(owner.client, `?from=${encodeURIComponent(later)}`);
    expect(recent.entries.map((e) => [e.action, e.target])).toEqual([['vault_key.revoked', 'prov-0']]);
    const earlier = await entries(owner.client, `?to=${encodeURIComponent(later)}&action=vault_key.revoked`);
    expect(earlier.entries).toEqual([]);
    const backwards = await owner.client.get(
      `/activity/entries?from=${encodeURIComponent(later)}&to=${encodeURIComponent('2020-01-01T00:00:00Z')}`,
    );
    expect(backwards.status).toBe(400);
    expect(backwards.headers['x-error-field']).toBe('to');

    // Pages by place: the second page starts where the first ended, and new events do not shift it.
    const first = await entries(owner.client, '?action=vault_key.set&limit=5');
    expect(first.entries).toHaveLength(5);
    expect(first.next_before).toBe(first.entries[4]!.position);
    expect((await owner.client.post('/vault/keys', { provider: 'late', api_key: 'provider-secret-late' })).status).toBe(
      200,
    );
    const second = await entries(owner.client, `?action=vault_key.set&limit=5&before=${first.next_before}`);
    expect(second.total).toBeNull();
    const third = await entries(owner.client, `?action=vault_key.set&limit=5&before=${second.next_before}`);
    expect(third.next_before).toBeNull();
    expect([...first.entries, ...second.entries, ...third.entries]).toEqual(set.entries);

    // Another organisation's trail never shows.
    const other = await registerOrg(server);
    expect((await entries(other.client)).entries.map((e) => e.action)).toEqual(['member.joined']);
    expect((await other.client.get('/activity/entries?limit=0')).status).toBe(422);
  });
});
