import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryQuota } from '../../server/admission/memory-quota.js';
import { issueKey } from '../../server/domain/keys.js';
import { signUp } from '../../server/domain/sign-up.js';
import type { AdmissionQuota, QuotaAsk, QuotaVerdict } from '../../server/stores/control/admission-quota.js';
import { PgAdmissionQuota } from '../../server/stores/control/postgres/admission-quota.js';
import { PgControlStore } from '../../server/stores/control/postgres/store.js';
import { openPool } from '../../server/stores/postgres.js';
import { SqliteControlStore, type ControlStore } from '../../server/stores/control/store.js';
import { freshDatabase } from '../postgres/database.js';

/**
 * A key's rate and credit holds, one body on both quotas: the memory of the one process that
 * serves a SQLite store, and PostgreSQL's, shared by replicas (two handles here, two processes'
 * pools in production).
 */

const LIFETIMES = { accessSeconds: 900, refreshSeconds: 3600 };
const NOW = Date.parse('2026-11-02T10:00:00.250Z');
const MINUTE = 60_000;
/** The time the quota in PostgreSQL reads (each ask's `now` is the memory quota's). */
let testNow = NOW;

interface Backend {
  store: ControlStore;
  /** The quota of the first handle, and of a second handle (another replica) where there is one. */
  quota: AdmissionQuota;
  other: AdmissionQuota;
  /** Settles and releases written (PostgreSQL writes them after the fact). */
  written(): Promise<void>;
  /** The slot a request frees after a minute, at most this much later than its exact time. */
  resolutionMs: number;
  close(): Promise<void>;
}

async function sqliteBackend(): Promise<Backend> {
  const folder = mkdtempSync(join(tmpdir(), 'gc-quota-'));
  const store = SqliteControlStore.open(join(folder, 'control.db'), LIFETIMES);
  const quota = new MemoryQuota();
  return {
    store,
    quota,
    other: quota,
    written: async () => undefined,
    resolutionMs: 0,
    async close() {
      await store.close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

async function postgresBackend(): Promise<Backend> {
  const database = await freshDatabase();
  const store = await PgControlStore.open(database.url, LIFETIMES);
  // Two replicas' quotas, each on its pool, on the test's clock rather than the database's.
  const clock = () => testNow;
  const [quota, other] = [1, 2].map(() => new PgAdmissionQuota(openPool(database.url), { clock })) as [
    PgAdmissionQuota,
    PgAdmissionQuota,
  ];
  return {
    store,
    quota,
    other,
    written: async () => {
      await quota.drain();
      await other.drain();
    },
    resolutionMs: 1_000,
    async close() {
      await quota.close();
      await other.close();
      await store.close();
      await database.drop();
    },
  };
}

describe.each([
  { name: 'in memory (SQLite)', make: sqliteBackend },
  { name: 'in PostgreSQL', make: postgresBackend },
])('the admission quota $name', ({ make }) => {
  let backend: Backend;
  let orgId = '';
  let accountId = '';
  let projectId = '';
  let serial = 0;

  beforeAll(async () => {
    backend = await make();
    const founded = await signUp(backend.store, {
      email: 'quota@example.com',
      passwordHash: 'argon2id$x',
      organizationName: 'Quota',
      sourceIp: '10.0.0.1',
      now: NOW,
    });
    orgId = founded.organization.id;
    accountId = founded.account.id;
    projectId = (await backend.store.organizations.projects(orgId))[0]!.id;
  });
  afterAll(async () => {
    await backend?.close();
  });

  const newKey = async (limits: { rateLimitRpm?: number; creditLimitMicro?: number | null } = {}) =>
    (
      await issueKey(backend.store, Buffer.alloc(32, 3), {
        orgId,
        actorId: accountId,
        projectId,
        name: `k${++serial}`,
        environment: 'production',
        expiresAt: null,
        creditLimitMicro: limits.creditLimitMicro ?? null,
        allowedModels: null,
        rateLimitRpm: limits.rateLimitRpm ?? 1_000,
        sourceIp: '10.0.0.1',
        now: NOW,
      })
    ).id;

  /** Asks as an admission does: with the key's limits and spend as read just before. */
  const take = async (
    quota: AdmissionQuota,
    keyId: string,
    at: number,
    held = 100,
    reqId = `req_${++serial}`,
  ): Promise<QuotaVerdict> => {
    const key = (await backend.store.keys.find(keyId))!;
    const ask: QuotaAsk = {
      keyId,
      reqId,
      rateLimitRpm: key.rate_limit_rpm,
      creditLimitMicro: key.credit_limit_micro,
      spentMicro: key.spent_micro,
      heldMicro: held,
      now: at,
      lapsesAt: at + MINUTE,
    };
    testNow = at;
    return quota.take(ask);
  };
  const takeAs = (reqId: string, keyId: string, at: number, held: number) =>
    take(backend.quota, keyId, at, held, reqId);

  it('admits the rate within a minute, counts no refusal, and frees a slot a minute after its request', async () => {
    const keyId = await newKey({ rateLimitRpm: 3 });
    expect(await take(backend.quota, keyId, NOW)).toMatchObject({ kind: 'held', remaining: 2 });
    expect(await take(backend.other, keyId, NOW + 10_000)).toMatchObject({ kind: 'held', remaining: 1 });
    expect(await take(backend.quota, keyId, NOW + 20_000)).toMatchObject({ kind: 'held', remaining: 0 });
    const refused = await take(backend.other, keyId, NOW + 30_000);
    expect(refused.kind).toBe('rate');
    // The first request leaves the window at a minute (within the quota's resolution).
    expect(refused.resetMs).toBeGreaterThanOrEqual(30_000);
    expect(refused.resetMs).toBeLessThanOrEqual(30_000 + backend.resolutionMs);
    expect((await take(backend.quota, keyId, NOW + MINUTE - 1)).kind).toBe('rate');
    expect((await take(backend.quota, keyId, NOW + MINUTE + backend.resolutionMs)).kind).toBe('held');
    // The refusals took no slot: the second request's leaves the window next.
    expect((await take(backend.other, keyId, NOW + MINUTE + backend.resolutionMs + 1)).kind).toBe('rate');
    expect((await take(backend.other, keyId, NOW + 70_000 + backend.resolutionMs)).kind).toBe('held');
  });

  it('never admits more than the rate in any sliding minute of a long run, from two handles', async () => {
    const keyId = await newKey({ rateLimitRpm: 20 });
    const admitted: number[] = [];
    for (let at = NOW; at < NOW + 3 * MINUTE; at += 700) {
      const quota = admitted.length % 2 === 0 ? backend.quota : backend.other;
      if ((await take(quota, keyId, at)).kind === 'held') admitted.push(at);
    }
    for (const start of admitted) {
      expect(admitted.filter((at) => at >= start && at < start + MINUTE).length).toBeLessThanOrEqual(20);
    }
    // Three minutes at 20 a minute, less what a coarser resolution frees late.
    expect(admitted.length).toBeGreaterThanOrEqual(backend.resolutionMs === 0 ? 60 : 57);
  });

  it('counts 40 concurrent requests from two handles exactly once each against the rate', async () => {
    const keyId = await newKey({ rateLimitRpm: 25 });
    const verdicts = await Promise.all(
      Array.from({ length: 40 }, (_, i) => take(i % 2 ? backend.quota : backend.other, keyId, NOW)),
    );
    expect(verdicts.filter((v) => v.kind === 'held')).toHaveLength(25);
    expect(verdicts.filter((v) => v.kind === 'rate')).toHaveLength(15);
  });

  it('holds each concurrent request against the credit, so 40 at once never pass on the same headroom', async () => {
    const keyId = await newKey({ creditLimitMicro: 1_000 });
    const verdicts = await Promise.all(
      Array.from({ length: 40 }, (_, i) => take(i % 2 ? backend.quota : backend.other, keyId, NOW, 100)),
    );
    expect(verdicts.filter((v) => v.kind === 'held')).toHaveLength(10);
    // A credit refusal still counted against the rate.
    expect(verdicts.filter((v) => v.kind === 'credit')).toHaveLength(30);
  });

  it("replaces a hold by the request's cost, and releases it once the spend is in the key", async () => {
    const keyId = await newKey({ creditLimitMicro: 1_000 });
    // Admitted while the spend and what is held stay below the limit: the last may overshoot it.
    expect((await takeAs('req_a', keyId, NOW, 700)).kind).toBe('held');
    expect((await takeAs('req_b', keyId, NOW, 400)).kind).toBe('held');
    expect((await takeAs('req_c', keyId, NOW, 1)).kind).toBe('credit');
    // Answered for less than it held: 100 + 400 held.
    backend.quota.settle('req_a', 100);
    await backend.written();
    expect((await takeAs('req_d', keyId, NOW + 1, 200)).kind).toBe('held');
    // Its row is written: the spend settles into the key first, then the hold ends (100 spent, 600 held).
    await backend.store.write((tx) => tx.keys.settle(keyId, 100));
    backend.quota.release('req_a');
    await backend.written();
    expect((await takeAs('req_e', keyId, NOW + 2, 250)).kind).toBe('held');
    // 950: counted twice (spend and hold), req_a would leave no room.
    expect((await takeAs('req_f', keyId, NOW + 3, 100)).kind).toBe('held');
    expect((await takeAs('req_g', keyId, NOW + 4, 1)).kind).toBe('credit');
  });

  it('counts a request refused for its credit against the rate, as the gateway counted it', async () => {
    const keyId = await newKey({ rateLimitRpm: 3, creditLimitMicro: 1_000 });
    expect(await takeAs('req_big', keyId, NOW, 1_200)).toMatchObject({ kind: 'held', remaining: 2 });
    expect(await takeAs('req_over', keyId, NOW + 1, 1)).toMatchObject({ kind: 'credit', remaining: 1 });
    expect(await takeAs('req_over2', keyId, NOW + 2, 1)).toMatchObject({ kind: 'credit', remaining: 0 });
    expect((await takeAs('req_over3', keyId, NOW + 3, 1)).kind).toBe('rate');
  });

  it('writes a settle by itself once its row has waited a moment, with nothing else asked', async () => {
    const keyId = await newKey({ creditLimitMicro: 1_000 });
    expect((await takeAs('req_slow', keyId, NOW, 2_000)).kind).toBe('held');
    backend.quota.settle('req_slow', 10);
    // PostgreSQL's waits half a second to a second, in case the row's release makes it moot.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect((await takeAs('req_next', keyId, NOW + 1, 1)).kind).toBe('held');
  });

  it('keeps an answered hold while its row waits, however long the store takes to write it', async () => {
    const keyId = await newKey({ creditLimitMicro: 1_000 });
    expect((await takeAs('req_waits', keyId, NOW, 10)).kind).toBe('held');
    testNow = NOW + 1;
    backend.quota.settle('req_waits', 1_000);
    await backend.written();
    // Its row is still unwritten nine minutes on: the telemetry says so, and it stays held.
    testNow = NOW + 9 * MINUTE;
    backend.quota.keep(['req_waits']);
    await backend.written();
    expect((await takeAs('req_later', keyId, NOW + 15 * MINUTE, 1)).kind).toBe('credit');
    backend.quota.release('req_waits');
    await backend.written();
    expect((await takeAs('req_after', keyId, NOW + 15 * MINUTE + 1, 1)).kind).toBe('held');
  });

  it('holds a request asked again (a retried admission) once, at its latest amount', async () => {
    const keyId = await newKey({ creditLimitMicro: 1_000 });
    expect((await takeAs('req_again', keyId, NOW, 900)).kind).toBe('held');
    expect((await takeAs('req_again', keyId, NOW, 300)).kind).toBe('held');
    // 300 held, not 1,200: room for one more.
    expect((await takeAs('req_other', keyId, NOW, 700)).kind).toBe('held');
    expect((await takeAs('req_more', keyId, NOW, 1)).kind).toBe('credit');
    backend.quota.release('req_other');
    await backend.written();
    // 300 + 650 below the limit (900 + 650 would not be).
    expect((await takeAs('req_x', keyId, NOW, 650)).kind).toBe('held');
    expect((await takeAs('req_y', keyId, NOW, 1)).kind).toBe('held');
  });

  it("lets a running request's hold lapse at its time (its gateway died), not an answered one's", async () => {
    const keyId = await newKey({ creditLimitMicro: 1_000 });
    expect((await takeAs('req_lapse', keyId, NOW, 900)).kind).toBe('held');
    expect((await takeAs('req_answered', keyId, NOW, 50)).kind).toBe('held');
    backend.quota.settle('req_answered', 1_000);
    await backend.written();
    // The first lapses a minute on; the answered one stays held until its row is written.
    expect((await takeAs('req_h', keyId, NOW + MINUTE - 1, 1)).kind).toBe('credit');
    expect((await takeAs('req_i', keyId, NOW + MINUTE, 1)).kind).toBe('credit');
    backend.quota.release('req_answered');
    await backend.written();
    // What is left is nothing (the lapsed 900 not with it): room for 200 and more.
    expect((await takeAs('req_j', keyId, NOW + MINUTE + 1, 200)).kind).toBe('held');
    expect((await takeAs('req_k', keyId, NOW + MINUTE + 2, 1)).kind).toBe('held');
  });

  it('forgets the keys idle for a minute, and counts such a key afresh at its next request', async () => {
    const keyId = await newKey({ rateLimitRpm: 2 });
    const later = NOW + 30 * MINUTE;
    expect((await take(backend.quota, keyId, later)).kind).toBe('held');
    expect((await take(backend.quota, keyId, later + 1)).kind).toBe('held');
    testNow = later + 2 * MINUTE;
    // Every key of this file is idle by now, this one too: each is forgotten once.
    expect(await backend.quota.purge(later + 2 * MINUTE)).toBeGreaterThanOrEqual(1);
    expect(await backend.quota.purge(later + 2 * MINUTE)).toBe(0);
    expect(await take(backend.quota, keyId, later + 2 * MINUTE)).toMatchObject({ kind: 'held', remaining: 1 });
  });
});
