import BetterSqlite3 from 'better-sqlite3';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runAdmin } from '../../server/admin/commands.js';
import { resolveConfig } from '../../server/config.js';
import { DEMO_ACCOUNTS, DEMO_ORGANIZATION, type DemoOptions, seedDemo } from '../../server/demo/seed.js';
import { demoTraffic, type TrafficPlan } from '../../server/demo/traffic.js';
import { SHIPPED_HASH_COST } from '../../server/demo/organisation.js';
import { verifyPassword } from '../../server/security/passwords.js';
import { SqliteControlStore } from '../../server/stores/control/store.js';
import { REQUEST_COLUMNS } from '../../server/stores/telemetry/request-record.js';

/** A fixed clock: the row set depends on the seed and on `now`, so both are pinned. */
const NOW = Date.UTC(2026, 10, 22, 9, 30);
const CUTOFF = Date.UTC(2026, 7, 24);
const ROWS = 20_000;

const scratch = mkdtempSync(join(tmpdir(), 'gc-demo-test-'));
let folders = 0;

interface Seeded {
  dataDir: string;
  control: SqliteControlStore;
  telemetry: BetterSqlite3.Database;
  result: Awaited<ReturnType<typeof seedDemo>>;
  seedAgain: () => ReturnType<typeof seedDemo>;
}

async function seedFolder(options: DemoOptions): Promise<Seeded> {
  const dataDir = join(scratch, `data-${folders++}`);
  const config = resolveConfig({ dataDir, passwordCost: 10, now: () => NOW });
  mkdirSync(dataDir);
  const control = SqliteControlStore.open(join(dataDir, 'control.db'), { accessSeconds: 900, refreshSeconds: 3600 });
  const secrets = { vaultMasterKey: randomBytes(32), keyHashSecret: randomBytes(32) };
  const result = await seedDemo(control, secrets, config, options);
  const telemetry = new BetterSqlite3(config.telemetryDbPath, { readonly: true });
  return { dataDir, control, telemetry, result, seedAgain: () => seedDemo(control, secrets, config, options) };
}

async function close(seeded: Seeded): Promise<void> {
  seeded.telemetry.close();
  await seeded.control.close();
}

/** The telemetry rows in a stable order with generated ids replaced by names, hashed. */
function rowsDigest(seeded: Seeded): string {
  const names = new Map<string, string>();
  for (const row of seeded.control.db.prepare<[], { id: string; name: string }>('SELECT id, name FROM api_keys').all())
    names.set(row.id, row.name);
  for (const row of seeded.control.db.prepare<[], { id: string; name: string }>('SELECT id, name FROM projects').all())
    names.set(row.id, row.name);
  const hash = createHash('sha256');
  // The log's columns, not how the store keeps them: a metadata shape is coded from its second
  // sighting in the process, which two stores seeded side by side share (request-rows.ts).
  const select = `SELECT ${REQUEST_COLUMNS.join(', ')} FROM requests ORDER BY req_id`;
  for (const row of seeded.telemetry.prepare(select).iterate()) {
    const { org_id: _org, key_id, project_id, ...rest } = row as Record<string, unknown>;
    hash.update(JSON.stringify({ ...rest, key: names.get(String(key_id)), project: names.get(String(project_id)) }));
  }
  return hash.digest('hex');
}

let main: Seeded;

beforeAll(async () => {
  main = await seedFolder({ rows: ROWS, seed: 7 });
});
afterAll(async () => {
  await close(main);
  rmSync(scratch, { recursive: true, force: true });
});

function one<T>(sql: string, ...params: unknown[]): T {
  return main.telemetry.prepare(sql).get(...params) as T;
}

describe('the demo organisation', () => {
  it('has owner, admin and member accounts, four projects, vault entries and deposits above the credit limits', async () => {
    expect(main.result).toMatchObject({ rows: ROWS, projects: 4, keys: 12 });
    const db = main.control.db;
    const org = (await main.control.organizations.findByName(DEMO_ORGANIZATION))!;
    const roles = db.prepare('SELECT email, role FROM accounts WHERE org_id = ? ORDER BY email').all(org.id);
    expect(roles).toEqual(
      DEMO_ACCOUNTS.map(({ email, role }) => ({ email, role })).sort((a, b) => a.email.localeCompare(b.email)),
    );
    expect((await main.control.organizations.projects(org.id)).length).toBeGreaterThanOrEqual(4);
    expect(db.prepare('SELECT provider FROM vault_keys WHERE org_id = ?').all(org.id).length).toBeGreaterThanOrEqual(2);
    const deposits = db
      .prepare('SELECT COUNT(*) AS n, SUM(amount_micro) AS total FROM deposits WHERE org_id = ?')
      .get(org.id) as { n: number; total: number };
    const limits = db.prepare('SELECT SUM(credit_limit_micro) AS total FROM api_keys WHERE org_id = ?').get(org.id) as {
      total: number;
    };
    expect(deposits.n).toBeGreaterThanOrEqual(2);
    expect(deposits.total).toBeGreaterThan(limits.total);
  });

  it('has ten or more keys over the three environments with limits, expiries, scopes and one revoked', () => {
    const keys = main.control.db
      .prepare(
        'SELECT environment, credit_limit_micro, expires_at, allowed_models, revoked_at, created_at FROM api_keys',
      )
      .all() as {
      environment: string;
      credit_limit_micro: number | null;
      expires_at: number | null;
      allowed_models: string | null;
      revoked_at: number | null;
      created_at: number;
    }[];
    expect(keys.length).toBeGreaterThanOrEqual(10);
    expect(new Set(keys.map((k) => k.environment))).toEqual(new Set(['production', 'development', 'testing']));
    expect(keys.filter((k) => k.credit_limit_micro !== null).length).toBeGreaterThanOrEqual(3);
    expect(keys.filter((k) => k.expires_at !== null && k.expires_at > NOW).length).toBeGreaterThanOrEqual(2);
    expect(keys.filter((k) => k.expires_at !== null && k.expires_at <= NOW).length).toBe(1);
    expect(keys.filter((k) => k.allowed_models !== null).length).toBeGreaterThanOrEqual(3);
    expect(keys.filter((k) => k.revoked_at !== null).length).toBe(1);
    for (const key of keys) if (key.expires_at !== null) expect(key.expires_at).toBeGreaterThan(key.created_at);
  });

  it("settles each key's spend to the sum of its rows' cost, below its credit limit", () => {
    const keys = main.control.db
      .prepare<[], { id: string; spent_micro: number; credit_limit_micro: number | null }>(
        'SELECT id, spent_micro, credit_limit_micro FROM api_keys',
      )
      .all();
    const sums = new Map(
      main.telemetry
        .prepare<[], { key_id: string; cost: number }>(
          'SELECT key_id, SUM(cost_micro) AS cost FROM requests GROUP BY 1',
        )
        .all()
        .map((r) => [r.key_id, r.cost]),
    );
    for (const key of keys) {
      expect(key.spent_micro).toBe(sums.get(key.id) ?? 0);
      expect(key.spent_micro).toBeGreaterThan(0);
      if (key.credit_limit_micro !== null) expect(key.spent_micro).toBeLessThan(key.credit_limit_micro);
    }
    expect(one<{ n: number }>('SELECT COUNT(*) AS n FROM requests WHERE key_id IS NULL').n).toBe(0);
  });

  it("keeps each key's requests within its life: after creation, before expiry or revocation", () => {
    const spans = new Map(
      main.telemetry
        .prepare<[], { key_id: string; first: number; last: number }>(
          'SELECT key_id, MIN(ts) AS first, MAX(ts) AS last FROM requests GROUP BY key_id',
        )
        .all()
        .map((r) => [r.key_id, r]),
    );
    const keys = main.control.db
      .prepare<[], { id: string; created_at: number; expires_at: number | null; revoked_at: number | null }>(
        'SELECT id, created_at, expires_at, revoked_at FROM api_keys',
      )
      .all();
    for (const key of keys) {
      const span = spans.get(key.id)!;
      expect(span.first).toBeGreaterThanOrEqual(key.created_at);
      expect(span.last).toBeLessThan(key.revoked_at ?? key.expires_at ?? Infinity);
    }
  });

  it('is seeded only once', async () => {
    const before = one<{ n: number }>('SELECT COUNT(*) AS n FROM requests').n;
    expect(await main.seedAgain()).toBeNull();
    expect(one<{ n: number }>('SELECT COUNT(*) AS n FROM requests').n).toBe(before);
    expect(main.control.db.prepare('SELECT COUNT(*) AS n FROM organizations').get()).toEqual({ n: 1 });
  });
});

describe('the demo traffic', () => {
  it('has 2–5% errors over 4xx and 5xx, every termination reason, and upstream text on upstream failures', () => {
    const errors = one<{ share: number }>('SELECT AVG(status >= 400) AS share FROM requests').share;
    expect(errors).toBeGreaterThanOrEqual(0.02);
    expect(errors).toBeLessThanOrEqual(0.05);
    const statuses = main.telemetry.prepare('SELECT DISTINCT status FROM requests').pluck().all() as number[];
    for (const status of [200, 400, 401, 404, 413, 429, 500, 502, 503, 504]) expect(statuses).toContain(status);
    const reasons = main.telemetry.prepare('SELECT DISTINCT termination_reason FROM requests').pluck().all();
    expect(new Set(reasons)).toEqual(
      new Set(['success', 'proxy_guillotine', 'client_disconnect', 'upstream_stream_aborted']),
    );
    expect(
      one<{ n: number }>(
        `SELECT COUNT(*) AS n FROM requests WHERE upstream_error IS NULL
         AND (status IN (500, 502, 503, 504) OR termination_reason = 'upstream_stream_aborted')`,
      ).n,
    ).toBe(0);
    expect(
      one<{ n: number }>(
        "SELECT COUNT(*) AS n FROM requests WHERE status = 504 AND termination_reason <> 'proxy_guillotine'",
      ).n,
    ).toBe(0);
  });

  it('streams a share of requests, with first-token times only where a first token flushed', () => {
    const stream = one<{ share: number }>('SELECT AVG(stream) AS share FROM requests').share;
    expect(stream).toBeGreaterThan(0.3);
    expect(stream).toBeLessThan(0.8);
    expect(
      one<{ n: number }>(
        'SELECT COUNT(*) AS n FROM requests WHERE stream = 0 AND (ttft_ms IS NOT NULL OR tpot_ms IS NOT NULL)',
      ).n,
    ).toBe(0);
    expect(
      one<{ n: number }>('SELECT COUNT(*) AS n FROM requests WHERE stream = 1 AND ttft_ms IS NULL').n,
    ).toBeGreaterThan(0);
    expect(
      one<{ n: number }>('SELECT COUNT(*) AS n FROM requests WHERE (ttft_ms IS NULL) <> (tpot_ms IS NULL)').n,
    ).toBe(0);
    expect(
      one<{ n: number }>(
        'SELECT COUNT(*) AS n FROM requests WHERE ttft_ms IS NOT NULL AND NOT (total_ms > ttft_ms AND ttft_ms >= pre_dispatch_ms)',
      ).n,
    ).toBe(0);
    expect(one<{ n: number }>('SELECT COUNT(*) AS n FROM requests WHERE total_ms < pre_dispatch_ms').n).toBe(0);
  });

  it('has no cache fields on svc/ routes and cache reads, often 0 and sometimes large, on provider routes', () => {
    expect(
      one<{ n: number }>(
        `SELECT COUNT(*) AS n FROM requests WHERE (model LIKE 'svc/%') <>
           (cache_read_input_tokens IS NULL AND cache_creation_input_tokens IS NULL)`,
      ).n,
    ).toBe(0);
    const reads = one<{ zero: number; large: number }>(
      `SELECT AVG(cache_read_input_tokens = 0) AS zero, SUM(cache_read_input_tokens >= 10000) AS large
       FROM requests WHERE model NOT LIKE 'svc/%'`,
    );
    expect(reads.zero).toBeGreaterThan(0.5);
    expect(reads.large).toBeGreaterThan(0);
    const models = main.telemetry.prepare('SELECT DISTINCT model FROM requests').pluck().all() as string[];
    expect(models.length).toBeGreaterThanOrEqual(8);
    expect(models.filter((m) => m.startsWith('svc/')).length).toBeGreaterThanOrEqual(3);
  });

  it('has rows before 2026-08-24 with that era’s nulls, and newer rows without them', () => {
    const eras = main.telemetry
      .prepare(
        `SELECT ts < ? AS legacy, COUNT(*) AS n, SUM(prompt_tokens IS NULL) AS no_prompt,
           SUM(upstream_model IS NULL) AS no_upstream FROM requests GROUP BY 1 ORDER BY 1`,
      )
      .all(CUTOFF);
    expect(eras).toEqual([
      { legacy: 0, n: expect.any(Number), no_prompt: 0, no_upstream: 0 },
      { legacy: 1, n: expect.any(Number), no_prompt: expect.any(Number), no_upstream: expect.any(Number) },
    ]);
    const legacy = eras[1] as { n: number; no_prompt: number; no_upstream: number };
    expect(legacy.n).toBeGreaterThanOrEqual(ROWS * 0.01);
    expect(legacy).toMatchObject({ no_prompt: legacy.n, no_upstream: legacy.n });
  });

  it('names each row’s API: embeddings on the embeddings route, chat completions on every other', () => {
    const apis = main.telemetry
      .prepare(`SELECT model = 'svc/embed' AS embed, api, COUNT(*) AS n FROM requests GROUP BY 1, 2 ORDER BY 1, 2`)
      .all();
    expect(apis).toEqual([
      { embed: 0, api: 'chat', n: expect.any(Number) },
      { embed: 1, api: 'embeddings', n: expect.any(Number) },
    ]);
  });

  it('counts total tokens as prompt, completion and both cache legs, and prices them by route', () => {
    expect(
      one<{ n: number }>(
        `SELECT COUNT(*) AS n FROM requests WHERE prompt_tokens IS NOT NULL AND total_tokens <>
           prompt_tokens + tokens_generated + COALESCE(cache_creation_input_tokens, 0) + COALESCE(cache_read_input_tokens, 0)`,
      ).n,
    ).toBe(0);
    expect(one<{ n: number }>('SELECT COUNT(*) AS n FROM requests WHERE total_tokens < tokens_generated').n).toBe(0);
    expect(one<{ n: number }>('SELECT COUNT(*) AS n FROM requests WHERE total_tokens = 0 AND cost_micro <> 0').n).toBe(
      0,
    );
    // The same route costs more per token where it generates more: costs follow the counts.
    const perToken = main.telemetry
      .prepare(
        `SELECT model, is_byok, SUM(cost_micro) * 1.0 / SUM(total_tokens) AS rate FROM requests
         WHERE model IN ('openai/gpt-4o-mini', 'openai/gpt-4o', 'anthropic/claude-sonnet-4') AND total_tokens > 0
         GROUP BY 1, 2`,
      )
      .all() as { model: string; is_byok: number; rate: number }[];
    const rate = (model: string, byok: number) => perToken.find((r) => r.model === model && r.is_byok === byok)!.rate;
    expect(rate('openai/gpt-4o', 0)).toBeGreaterThan(rate('openai/gpt-4o-mini', 0) * 5);
    for (const model of ['openai/gpt-4o-mini', 'anthropic/claude-sonnet-4']) {
      expect(rate(model, 1)).toBeGreaterThan(0);
      expect(rate(model, 1)).toBeLessThan(rate(model, 0) * 0.1);
    }
    const byok = one<{ share: number }>('SELECT AVG(is_byok) AS share FROM requests').share;
    expect(byok).toBeGreaterThan(0.05);
    expect(byok).toBeLessThan(0.5);
    expect(one<{ n: number }>("SELECT COUNT(*) AS n FROM requests WHERE is_byok = 1 AND model LIKE 'svc/%'").n).toBe(0);
  });

  it('follows office hours in UTC+5, with quieter nights and weekends', () => {
    const byHour = main.telemetry
      .prepare(
        `SELECT CAST(strftime('%H', ts / 1000, 'unixepoch', '+5 hours') AS INTEGER) AS hour,
           CAST(strftime('%w', ts / 1000, 'unixepoch', '+5 hours') AS INTEGER) AS weekday, COUNT(*) AS n
         FROM requests WHERE ts >= ? GROUP BY 1, 2`,
      )
      .all(NOW - 28 * 24 * 3600 * 1000) as { hour: number; weekday: number; n: number }[];
    const total = (keep: (r: { hour: number; weekday: number }) => boolean) =>
      byHour.filter(keep).reduce((sum, r) => sum + r.n, 0);
    const weekday = (r: { weekday: number }) => r.weekday >= 1 && r.weekday <= 5;
    const office = total((r) => weekday(r) && r.hour >= 10 && r.hour < 17) / (5 * 7);
    const night = total((r) => weekday(r) && r.hour >= 1 && r.hour < 6) / (5 * 5);
    expect(office).toBeGreaterThan(night * 5);
    const weekdays = total(weekday) / 5;
    const weekends = total((r) => !weekday(r)) / 2;
    expect(weekends).toBeLessThan(weekdays * 0.7);
  });

  it('carries lowercased metadata and the user agents of real SDKs and tools', () => {
    const samples = main.telemetry.prepare('SELECT metadata FROM requests LIMIT 2000').pluck().all() as string[];
    const parsed = samples.map((text) => JSON.parse(text) as Record<string, string>);
    for (const metadata of parsed) for (const key of Object.keys(metadata)) expect(key).toBe(key.toLowerCase());
    expect(parsed.filter((m) => m.customer && m.feature && m.trace_id).length).toBeGreaterThan(1000);
    const agents = main.telemetry.prepare('SELECT DISTINCT user_agent FROM requests').pluck().all() as string[];
    expect(agents.length).toBeGreaterThanOrEqual(8);
    for (const family of [/OpenAI\/Python|openai-python/, /Anthropic|anthropic-sdk/, /langchain|LangChain/, /^curl\//])
      expect(agents.some((a) => family.test(a))).toBe(true);
    const ids = one<{ n: number; unique_ids: number }>(
      'SELECT COUNT(*) AS n, COUNT(DISTINCT req_id) AS unique_ids FROM requests',
    );
    expect(ids.unique_ids).toBe(ids.n);
  });
});

describe('the demo accounts', () => {
  it('ship hashes at the production cost that verify their published passwords, and no other', async () => {
    for (const account of DEMO_ACCOUNTS) {
      expect(account.shippedHash.startsWith(`scrypt$${SHIPPED_HASH_COST}$`)).toBe(true);
      expect(await verifyPassword(account.password, account.shippedHash)).toBe(true);
    }
    const [owner, admin] = DEMO_ACCOUNTS;
    expect(await verifyPassword(admin!.password, owner!.shippedHash)).toBe(false);
    expect(SHIPPED_HASH_COST).toBe(resolveConfig({ dataDir: '.' }).passwordCost);
  });
});

describe('determinism', () => {
  const plan = (seed: number): TrafficPlan => ({
    seed,
    orgId: 'org',
    now: NOW,
    shift: 0,
    days: 30,
    rows: 10_000,
    byokProviders: ['openai'],
    keys: [
      {
        id: 'key-a',
        projectId: 'project',
        weight: 3,
        routes: null,
        activeFrom: 0,
        activeUntil: null,
        creditLimitMicro: null,
        byokShare: 0.3,
        callers: ['python', 'tools'],
        features: ['chat'],
        tagged: 0.8,
      },
      {
        id: 'key-b',
        projectId: 'project',
        weight: 1,
        routes: ['svc/fast', 'openai/gpt-4o-mini'],
        activeFrom: NOW - 10 * 24 * 3600 * 1000,
        activeUntil: null,
        creditLimitMicro: 1e12,
        byokShare: 0,
        callers: ['node'],
        features: ['ci'],
        tagged: 1,
      },
    ],
  });
  const digest = (rows: Iterable<object>) => {
    const hash = createHash('sha256');
    for (const row of rows) hash.update(JSON.stringify(row));
    return hash.digest('hex');
  };

  it('generates byte-identical rows for the same seed and now, and different rows for another seed', () => {
    expect(digest(demoTraffic(plan(42)))).toBe(digest(demoTraffic(plan(42))));
    expect(digest(demoTraffic(plan(42)))).not.toBe(digest(demoTraffic(plan(43))));
  });

  it('draws the same rows, relative to now, on any day when drawn as of a fixed instant', () => {
    // Keys' windows are relative to now, as the seeder makes them; rows drawn as of NOW both times.
    const onDay = (now: number) => {
      const base = plan(42);
      const keys = base.keys.map((key) => ({ ...key, activeFrom: key.activeFrom && now - (NOW - key.activeFrom) }));
      return [...demoTraffic({ ...base, keys, now, shift: now - NOW })].map((row) => ({
        ...row,
        ts: row.ts - now,
        req_id: row.req_id.slice(16),
      }));
    };
    const later = NOW + 17 * 24 * 3600 * 1000 + 5 * 3600 * 1000 + 1234;
    expect(digest(onDay(later))).toBe(digest(onDay(NOW)));
    // Without the shift the rhythm follows the clock: another day, other rows.
    const unshifted = [...demoTraffic({ ...plan(42), now: later })].map((row) => ({ ...row, ts: row.ts - later }));
    expect(digest(unshifted)).not.toBe(digest(onDay(NOW)));
  });

  it('gives the whole traffic in parts, each part the rows of its positions', () => {
    const whole = [...demoTraffic(plan(7))];
    const parts = [
      { from: 6_000, to: 10_000 },
      { from: 0, to: 2_500 },
      { from: 2_500, to: 6_000 },
    ].map((part) => [...demoTraffic({ ...plan(7), part })]);
    expect(parts.map((rows) => rows.length)).toEqual([4_000, 2_500, 3_500]);
    expect(digest([...parts[1]!, ...parts[2]!, ...parts[0]!])).toBe(digest(whole));
  });

  it('stores the same rows in two data folders seeded alike, and other rows for another seed', async () => {
    const folders = await Promise.all([
      seedFolder({ rows: 2000, seed: 5 }),
      seedFolder({ rows: 2000, seed: 5 }),
      seedFolder({ rows: 2000, seed: 6 }),
    ]);
    try {
      const [a, b, c] = folders.map(rowsDigest);
      expect(a).toBe(b);
      expect(c).not.toBe(a);
    } finally {
      for (const folder of folders) await close(folder);
    }
  });
});

describe('npm run admin -- seed-demo', () => {
  const dataDir = join(scratch, 'admin');

  async function admin(...args: string[]) {
    const printed: string[] = [];
    const errors: string[] = [];
    const spy = vi.spyOn(console, 'error').mockImplementation((...parts: unknown[]) => {
      errors.push(parts.map(String).join(' '));
    });
    vi.stubEnv('SVC_PASSWORD_COST', '10');
    try {
      const code = await runAdmin(['seed-demo', ...args, '--data-dir', dataDir], (line) => printed.push(line));
      return { code, out: printed.join('\n'), err: errors.join('\n') };
    } finally {
      spy.mockRestore();
      vi.unstubAllEnvs();
    }
  }

  it('refuses flags that are not whole numbers in range, seeding nothing', async () => {
    const cases: [string, string][] = [
      ['--rows', '0'],
      ['--rows', 'lots'],
      ['--rows', '1.5'],
      ['--rows', '-3'],
      ['--days', '0'],
      ['--days', '1e3'],
      ['--seed', '4294967296'],
      ['--rows', ''],
    ];
    for (const [flag, value] of cases) {
      const outcome = await admin(`${flag}=${value}`);
      expect(outcome, `${flag} ${value}`).toMatchObject({ code: 2, out: '' });
      expect(outcome.err).toContain(`${flag} must be a whole number`);
    }
    const control = SqliteControlStore.open(join(dataDir, 'control.db'), { accessSeconds: 900, refreshSeconds: 3600 });
    expect(await control.organizations.findByName(DEMO_ORGANIZATION)).toBeFalsy();
    await control.close();
  });

  it('seeds the rows asked for, prints the credentials, and does nothing the second time', async () => {
    const first = await admin('--rows', '1500', '--days', '7', '--seed', '3');
    expect(first).toMatchObject({ code: 0, err: '' });
    expect(first.out).toContain('1500 request(s) over 7 days');
    for (const account of DEMO_ACCOUNTS)
      expect(first.out).toMatch(new RegExp(`${account.role}\\s+${account.email}\\s+${account.password}`));
    const second = await admin('--rows', '1500');
    expect(second).toMatchObject({ code: 0, err: '' });
    expect(second.out).toContain('already exists');
    const telemetry = new BetterSqlite3(join(dataDir, 'telemetry.db'), { readonly: true });
    expect(telemetry.prepare('SELECT COUNT(*) AS n FROM requests').get()).toEqual({ n: 1500 });
    telemetry.close();
  });
});
