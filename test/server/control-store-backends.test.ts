import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyActivity } from '../../server/domain/activity-chain.js';
import { issueKey, updateKeyLimits } from '../../server/domain/keys.js';
import { unknownOrInactive, withRouteActive } from '../../server/domain/route-models.js';
import { signUp } from '../../server/domain/sign-up.js';
import { ApiError } from '../../server/http-errors.js';
import { hashSessionToken } from '../../server/security/tokens.js';
import { PgControlStore } from '../../server/stores/control/postgres/store.js';
import { SqliteControlStore, type ControlRecords } from '../../server/stores/control/store.js';
import { freshDatabase } from '../postgres/database.js';

/**
 * The control store's rules, one body run on both backends. Two handles on one store stand for
 * two server processes: each has its own connections, as replicas do.
 */

/**
 * A SQLite handle sees another connection's commit from the next turn of its event loop on
 * (read-cache.ts): between processes that is always so, in one test it has to be waited for.
 */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
interface Backend {
  name: string;
  /** A new empty store, and a second handle on it. */
  open(): Promise<{
    store: ControlRecords & { close(): Promise<void> };
    other: ControlRecords & { close(): Promise<void> };
  }>;
  /**
   * The handles that race for the write lock. SQLite's wait for it blocking their thread, so two
   * of its handles in one thread would wait on each other: its race is within one handle here
   * (keys.test.ts races the server's PATCHes), PostgreSQL's across two pools.
   */
  racers: 'one handle' | 'two handles';
  /** Runs a statement beside the repositories, as an operator editing the store would. */
  raw(sql: string): Promise<void>;
  cleanup(): Promise<void>;
}

const LIFETIMES = { accessSeconds: 900, refreshSeconds: 3600 };
const NOW = Date.parse('2026-11-02T10:00:00Z');
const KEY_SECRET = Buffer.alloc(32, 7);

function sqliteBackend(): Backend {
  const folder = mkdtempSync(join(tmpdir(), 'gc-control-backends-'));
  let path = '';
  return {
    name: 'SQLite',
    racers: 'one handle',
    async open() {
      path = join(mkdtempSync(join(folder, 'store-')), 'control.db');
      return { store: SqliteControlStore.open(path, LIFETIMES), other: SqliteControlStore.open(path, LIFETIMES) };
    },
    async raw(sql) {
      const { default: BetterSqlite3 } = await import('better-sqlite3');
      const db = new BetterSqlite3(path, { fileMustExist: true });
      try {
        db.exec(sql);
      } finally {
        db.close();
      }
    },
    async cleanup() {
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

function postgresBackend(): Backend {
  const drops: (() => Promise<void>)[] = [];
  let url = '';
  return {
    name: 'PostgreSQL',
    racers: 'two handles',
    async open() {
      const database = await freshDatabase();
      drops.push(database.drop);
      url = database.url;
      return { store: await PgControlStore.open(url, LIFETIMES), other: await PgControlStore.open(url, LIFETIMES) };
    },
    async raw(sql) {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(sql);
      } finally {
        await client.end();
      }
    },
    async cleanup() {
      for (const drop of drops) await drop();
    },
  };
}

describe.each([
  { name: 'SQLite', make: sqliteBackend },
  { name: 'PostgreSQL', make: postgresBackend },
])('the control store on $name', ({ make }) => {
  const backend = make();
  let store: Awaited<ReturnType<Backend['open']>>['store'];
  let other: Awaited<ReturnType<Backend['open']>>['other'];

  beforeAll(async () => {
    ({ store, other } = await backend.open());
  });
  afterAll(async () => {
    await store?.close();
    await other?.close();
    await backend.cleanup();
  });

  const founder = (email: string, organizationName: string, now = NOW) =>
    signUp(store, { email, passwordHash: 'argon2id$x', organizationName, sourceIp: '10.0.0.1', now });

  it('sign-up founds an organisation, a second account joins it, names match without case', async () => {
    const owner = await founder('Ayesha@Example.com'.toLowerCase(), 'Acme Labs');
    const member = await founder('bilal@example.com', '  acme LABS ', NOW + 1);
    expect(member.organization.id).toBe(owner.organization.id);
    expect(owner.account.role).toBe('owner');
    expect(member.account.role).toBe('member');
    expect((await store.accounts.members(owner.organization.id)).map((a) => a.email)).toEqual([
      'ayesha@example.com',
      'bilal@example.com',
    ]);
    expect((await other.accounts.findByEmail('BILAL@example.com'))?.id).toBe(member.account.id);
    expect((await store.organizations.projects(owner.organization.id)).map((p) => p.name)).toEqual(['Default']);
  });

  it('an access token authenticates on another handle; a refresh token rotates once, its reuse revokes the session', async () => {
    const { tokens, account } = await founder('chen@example.com', 'Rotations');
    await nextTurn();
    const auth = await other.sessions.authenticate(hashSessionToken(tokens.accessToken).toString('base64'), NOW + 1);
    expect(auth?.accountId).toBe(account.id);

    const first = await other.write((tx) => tx.sessions.refresh(tokens.refreshToken, NOW + 2));
    expect(first.kind).toBe('rotated');
    await nextTurn();
    const reused = await store.write((tx) => tx.sessions.refresh(tokens.refreshToken, NOW + 3));
    expect(reused.kind).toBe('reused');
    if (first.kind !== 'rotated') throw new Error('not rotated');
    // The reuse revoked the whole session: the rotated access token no longer authenticates.
    const after = hashSessionToken(first.tokens.accessToken).toString('base64');
    expect(await store.sessions.authenticate(after, NOW + 4)).toBeNull();
    await expect(store.sessions.refresh(first.tokens.refreshToken, NOW + 5)).rejects.toThrow(/transaction/);
  });

  it('keys list newest first, revoked keys leave every read, spend settles', async () => {
    const { account, organization } = await founder('dana@example.com', 'Keyed');
    const [project] = await store.organizations.projects(organization.id);
    const issue = (name: string, at: number) =>
      issueKey(store, KEY_SECRET, {
        orgId: organization.id,
        actorId: account.id,
        projectId: project!.id,
        name,
        environment: 'production',
        expiresAt: null,
        creditLimitMicro: null,
        allowedModels: ['openai/gpt-4o'],
        rateLimitRpm: 60,
        sourceIp: '10.0.0.1',
        now: at,
      });
    const a = await issue('a', NOW);
    const b = await issue('b', NOW);
    const c = await issue('c', NOW + 1);
    await nextTurn();
    expect((await other.keys.list(organization.id)).map((k) => k.name)).toEqual(['c', 'b', 'a']);
    expect(await store.write((tx) => tx.keys.revoke(organization.id, b.id, NOW + 2))).toBe(true);
    await nextTurn();
    expect((await other.keys.list(organization.id)).map((k) => k.name)).toEqual(['c', 'a']);
    expect(await other.keys.get(organization.id, b.id)).toBeUndefined();
    expect((await other.keys.find(b.id))?.revoked_at).toBe(NOW + 2);
    await store.write(async (tx) => {
      await tx.keys.settle(a.id, 1_250_000);
      await tx.keys.settle(c.id, 3);
    });
    await nextTurn();
    expect(await other.keys.spentMicro(organization.id)).toBe(1_250_003);
    expect((await other.keys.get(organization.id, a.id))?.allowed_models).toBe('["openai/gpt-4o"]');
    await expect(
      issueKey(store, KEY_SECRET, {
        orgId: organization.id,
        actorId: account.id,
        projectId: project!.id,
        name: 'd',
        environment: 'production',
        expiresAt: null,
        creditLimitMicro: null,
        allowedModels: ['openai/gpt-3.5-turbo'],
        rateLimitRpm: 60,
        sourceIp: '10.0.0.1',
        now: NOW,
      }),
    ).rejects.toThrow(/unknown or inactive model in allowed_models: openai\/gpt-3.5-turbo/);
  });

  it('30 concurrent limit edits from two handles never take the keys past the budget', async () => {
    const { account, organization } = await founder('erin@example.com', 'Budgeted');
    const [project] = await store.organizations.projects(organization.id);
    await store.write((tx) => tx.organizations.deposit(organization.id, 10_000_000, NOW));
    const keys: { id: string }[] = [];
    for (let i = 0; i < 3; i += 1) {
      keys.push(
        await issueKey(store, KEY_SECRET, {
          orgId: organization.id,
          actorId: account.id,
          projectId: project!.id,
          name: `k${i}`,
          environment: 'production',
          expiresAt: null,
          creditLimitMicro: null,
          allowedModels: null,
          rateLimitRpm: 60,
          sourceIp: '10.0.0.1',
          now: NOW,
        }),
      );
    }
    // Each asks for 4 PKR of a 10 PKR budget: at most two keys can hold it at once.
    const edits = Array.from({ length: 30 }, (_, i) =>
      updateKeyLimits(i % 2 === 0 || backend.racers === 'one handle' ? store : other, {
        orgId: organization.id,
        actorId: account.id,
        keyId: keys[i % 3]!.id,
        rateLimitRpm: 60 + i,
        creditLimitPkr: 4,
        expiresAtSeconds: null,
        rateLimitCeiling: 10_000,
        sourceIp: '10.0.0.1',
        now: NOW + i,
      }).then(
        () => 'ok',
        (error: unknown) => (error instanceof ApiError && error.statusCode === 400 ? 'refused' : Promise.reject(error)),
      ),
    );
    const outcomes = await Promise.all(edits);
    await nextTurn();
    const limits = (await store.keys.list(organization.id)).map((k) => k.credit_limit_micro ?? 0);
    expect(limits.reduce((sum, limit) => sum + limit, 0)).toBeLessThanOrEqual(10_000_000);
    expect(limits.filter((limit) => limit === 4_000_000)).toHaveLength(2);
    expect(outcomes.filter((o) => o === 'ok').length).toBeGreaterThanOrEqual(2);
    expect(outcomes).toContain('refused');
    // Every edit that went through is in the trail, chained without a gap.
    const check = await verifyActivity(other, organization.id);
    expect(check.broken).toBeNull();
    expect(check.checked).toBe(1 + 3 + outcomes.filter((o) => o === 'ok').length);
  });

  it('a nested write that throws undoes only itself; a throw undoes the whole transaction', async () => {
    const { organization } = await founder('farah@example.com', 'Nested');
    await store.write(async (tx) => {
      await tx.organizations.addProject(organization.id, 'kept', NOW);
      await tx
        .write(async (inner) => {
          await inner.organizations.addProject(organization.id, 'undone', NOW);
          throw new Error('refused');
        })
        .catch(() => undefined);
    });
    await expect(
      store.write(async (tx) => {
        await tx.organizations.addProject(organization.id, 'never', NOW);
        throw new Error('whole');
      }),
    ).rejects.toThrow('whole');
    expect((await other.organizations.projects(organization.id)).map((p) => p.name)).toEqual(['Default', 'kept']);
  });

  it('a statement that fails inside a nested write, caught there, leaves the transaction going', async () => {
    const { organization } = await founder('jamal@example.com', 'Savepoints');
    await founder('kiran@example.com', 'Taken Name');
    const outcome = await store.write(async (tx) => {
      const renamed = await tx
        .write((inner) => inner.organizations.setName(organization.id, 'taken name'))
        .then(
          () => 'renamed',
          () => 'refused',
        );
      await tx.organizations.addProject(organization.id, 'after the refusal', NOW);
      return renamed;
    });
    expect(outcome).toBe('refused');
    expect((await other.organizations.get(organization.id))?.name).toBe('Savepoints');
    expect((await other.organizations.projects(organization.id)).map((p) => p.name)).toContain('after the refusal');
  });

  it('the trail filters by actor, action, time and a target prefix with wildcard characters', async () => {
    const { account, organization } = await founder('gul@example.com', 'Trail');
    await store.write(async (tx) => {
      for (const target of ['sk_a%b', 'sk_axb', 'sk_a_b', 'sk_a*b']) {
        await tx.activity.record({
          orgId: organization.id,
          actorId: account.id,
          action: 'api_key.created',
          target,
          sourceIp: '10.0.0.2',
          at: NOW + 10,
        });
      }
    });
    const targets = async (prefix: string) =>
      (await other.activity.entries(organization.id, { targetPrefix: prefix }, null, 10)).map((e) => e.target);
    expect(await targets('sk_a%')).toEqual(['sk_a%b']);
    expect(await targets('sk_a_')).toEqual(['sk_a_b']);
    expect(await targets('sk_a*')).toEqual(['sk_a*b']);
    expect(await targets('SK_')).toEqual([]);
    const filter = { actorEmail: 'GUL@example.com', action: 'api_key.created', from: NOW + 10, to: NOW + 11 };
    expect(await other.activity.count(organization.id, filter)).toBe(4);
    expect(await other.activity.count(organization.id, { actorEmail: 'nobody@example.com' })).toBe(0);
    const page = await other.activity.entries(organization.id, filter, 4, 2);
    expect(page.map((e) => e.seq)).toEqual([3, 2]);
    expect(await other.activity.lastPlace(organization.id)).toBe(5);
    await expect(
      store.activity.record({
        orgId: organization.id,
        actorId: null,
        action: 'org.renamed',
        target: 'x',
        sourceIp: 'local',
        at: NOW,
      }),
    ).rejects.toThrow(/transaction/);
  });

  it('the database itself refuses to change or delete the trail', async () => {
    await founder('hana@example.com', 'Append Only');
    await expect(backend.raw("UPDATE activity SET target = 'x'")).rejects.toThrow(/append-only/);
    await expect(backend.raw('DELETE FROM activity')).rejects.toThrow(/append-only/);
  });

  it('the vault keeps sealed bytes, a rotation keeps the first date; join policies and models', async () => {
    const { organization } = await founder('iqra@example.com', 'Vaulted');
    const sealed = Buffer.from([1, 2, 3, 250]);
    await store.write((tx) => tx.vault.put(organization.id, 'openai', sealed, '…abcd', NOW));
    const rotated = await store.write((tx) =>
      tx.vault.put(organization.id, 'openai', Buffer.from([9]), '…wxyz', NOW + 5),
    );
    expect(rotated).toEqual({ provider: 'openai', key_hint: '…wxyz', created_at: NOW, updated_at: NOW + 5 });
    await nextTurn();
    expect(await other.vault.sealed(organization.id, 'openai')).toEqual(Buffer.from([9]));
    expect(await store.write((tx) => tx.vault.delete(organization.id, 'openai'))).toBe(true);
    expect(await other.vault.list(organization.id)).toEqual([]);

    await store.write((tx) => tx.joinPolicies.set(organization.id, { policy: 'domains', domains: ['b.com', 'a.com'] }));
    expect(await other.joinPolicies.of(organization.id)).toEqual({ policy: 'domains', domains: ['a.com', 'b.com'] });

    const routes = await other.routes.current();
    expect(unknownOrInactive(routes.document, ['openai/gpt-4o', 'openai/gpt-3.5-turbo', 'nope/x'])).toEqual([
      'openai/gpt-3.5-turbo',
      'nope/x',
    ]);
    const turnedOn = withRouteActive(routes.document, 'openai/gpt-3.5-turbo', true)!;
    const applied = await store.write((tx) => tx.routes.apply(turnedOn, 'test', NOW, routes.version));
    expect(applied).toEqual({ kind: 'applied', version: routes.version + 1 });
    await nextTurn();
    const seen = await other.routes.current();
    expect(seen.version).toBe(routes.version + 1);
    expect(unknownOrInactive(seen.document, ['openai/gpt-3.5-turbo'])).toEqual([]);
  });
});

describe('the control store on PostgreSQL alone', () => {
  it('refuses to report a transaction committed when a caught failure had aborted it', async () => {
    const database = await freshDatabase();
    const store = await PgControlStore.open(database.url, LIFETIMES);
    try {
      const org = await store.write((tx) => tx.organizations.create('Aborted', NOW));
      await expect(
        store.write(async (tx) => {
          await tx.organizations.addProject(org.id, 'lost with the transaction', NOW);
          // Caught outside a nested write: PostgreSQL has ended the transaction all the same.
          await tx.organizations.create('aborted', NOW).catch(() => undefined);
        }),
      ).rejects.toThrow(/aborted by an earlier error/);
      expect(await store.organizations.projects(org.id)).toEqual([]);
    } finally {
      await store.close();
      await database.drop();
    }
  });
});
