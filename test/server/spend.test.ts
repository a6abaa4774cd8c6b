import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordRequests } from '../../server/ingest/record-requests.js';
import type { RequestRecord } from '../../server/stores/telemetry/request-record.js';
import { registerOrg, runOperator, startServer, type TestClient, type TestServer, requestLog } from './harness.js';
import { requestRecord, seededRandom } from './request-rows.js';

/** The server's clock is frozen: the window's edges fall mid-hour, so rollup cells and raw rows both count. */
const NOW = Date.UTC(2026, 10, 22, 7, 49, 19, 123);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const PKR = 1_000_000;

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ now: () => NOW });
});
afterAll(() => server?.close());

interface Org {
  client: TestClient;
  name: string;
  orgId: string;
  projectId: string;
  key: (name: string, limitPkr?: number) => Promise<string>;
}

async function freshOrg(): Promise<Org> {
  const { client, org, orgId, projectId } = await registerOrg(server);
  const key = async (name: string, limitPkr?: number) => {
    const created = await client.post('/keys', { project_id: projectId, name });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    if (limitPkr !== undefined) {
      const patched = await client.patch(`/keys/${created.body.id}`, {
        rate_limit_rpm: 60,
        credit_limit_pkr: limitPkr,
      });
      expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    }
    return created.body.id as string;
  };
  return { client, name: org, orgId, projectId, key };
}

let counter = 0;
/** A row of `org` by `keyId` at `ts` costing `costMicro`. */
function row(org: Org, keyId: string | null, ts: number, costMicro: number): RequestRecord {
  counter++;
  return {
    ...requestRecord(counter),
    req_id: `req-spend-${process.pid}-${counter}`,
    ts,
    org_id: org.orgId,
    project_id: org.projectId,
    key_id: keyId,
    cost_micro: costMicro,
  };
}

async function load(records: RequestRecord[]): Promise<void> {
  await recordRequests(server.app.control, requestLog(server), records);
}

/** Each of the seven days' cost of `rows`, computed from the rows themselves: day i is (NOW - (7-i)·DAY, NOW - (6-i)·DAY]. */
function dailyOf(rows: RequestRecord[]): number[] {
  const days = Array<number>(7).fill(0);
  for (const r of rows) {
    const age = NOW - r.ts;
    if (age < 0 || age >= 7 * DAY) continue;
    days[6 - Math.floor(age / DAY)]! += r.cost_micro;
  }
  return days;
}

describe('GET /analytics/spend', () => {
  it("adds each key's spend up by day exactly as the rows do, edges of the window included", async () => {
    const org = await freshOrg();
    await runOperator(server, 'deposit', '--org', org.name, '--pkr', '6000');
    const keys = [await org.key('alpha'), await org.key('beta', 5000), await org.key('gamma', 800)];
    const random = seededRandom(7);
    const rows: RequestRecord[] = [];
    // Eight and a half days of rows at random moments, most inside the window, some just outside.
    for (let i = 0; i < 600; i++) {
      const keyId = keys[Math.floor(random() * keys.length)]!;
      rows.push(row(org, keyId, NOW - Math.floor(random() * 8.5 * DAY), 1 + Math.floor(random() * 3 * PKR)));
    }
    // The edges: exactly seven days old is out, a millisecond younger is in, now is in, the future is out.
    for (const ts of [NOW - 7 * DAY, NOW - 7 * DAY + 1, NOW - DAY, NOW - DAY + 1, NOW, NOW + 1]) {
      rows.push(row(org, keys[0]!, ts, 1000 + (ts % 997)));
    }
    await load(rows);

    const answer = await org.client.get('/analytics/spend?sort=name');
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const body = answer.body;
    expect(body.as_of).toBe(new Date(NOW).toISOString());
    expect(body.window).toEqual({
      days: 7,
      from: new Date(NOW - 7 * DAY).toISOString(),
      to: new Date(NOW).toISOString(),
    });
    expect(body.keys.map((k: any) => k.name)).toEqual(['alpha', 'beta', 'gamma']);
    for (const [index, keyId] of keys.entries()) {
      const mine = rows.filter((r) => r.key_id === keyId);
      const entry = body.keys[index];
      expect(entry.id).toBe(keyId);
      expect(entry.burn.daily_micro, entry.name).toEqual(dailyOf(mine));
      expect(entry.burn.window_micro).toBe(dailyOf(mine).reduce((a, b) => a + b, 0));
      // Settled spend is lifetime: rows before the window (and after now) count too.
      expect(entry.spent_micro).toBe(mine.reduce((sum, r) => sum + r.cost_micro, 0));
    }
    expect(body.organization.burn.daily_micro).toEqual(dailyOf(rows));
  });

  it('states the budget: deposits, limits allocated, headroom, spend of every key (revoked ones too), what remains', async () => {
    const org = await freshOrg();
    await runOperator(server, 'deposit', '--org', org.name, '--pkr', '1000');
    await runOperator(server, 'deposit', '--org', org.name, '--pkr', '250.5');
    const limited = await org.key('limited', 300);
    const unlimited = await org.key('unlimited');
    const revoked = await org.key('revoked', 100);
    await load([
      row(org, limited, NOW - HOUR, 20 * PKR),
      row(org, revoked, NOW - 2 * DAY, 7 * PKR),
      row(org, null, NOW - HOUR, 9),
    ]);
    expect((await org.client.delete(`/keys/${revoked}`)).status).toBe(200);

    const { body } = await org.client.get('/analytics/spend');
    expect(body.total).toBe(2);
    expect(body.keys.map((k: any) => k.id).sort()).toEqual([limited, unlimited].sort());
    expect(body.organization).toMatchObject({
      deposited_micro: 1250.5 * PKR,
      allocated_micro: 300 * PKR,
      headroom_micro: 950.5 * PKR,
      spent_micro: 27 * PKR,
      remaining_micro: 1223.5 * PKR,
    });
    // The organisation's rate is every row's, a row without a key included.
    expect(body.organization.burn.window_micro).toBe(27 * PKR + 9);
    expect(body.organization.forecast).toMatchObject({ kind: 'runs_out', remaining_micro: 1223.5 * PKR });
  });

  it('forecasts each kind of key: a date at the rate with its range, used up, idle, projected', async () => {
    const org = await freshOrg();
    await runOperator(server, 'deposit', '--org', org.name, '--pkr', '10000');
    const steady = await org.key('steady', 100);
    const used = await org.key('used up', 10);
    const idle = await org.key('idle', 50);
    const open = await org.key('open');
    const rows: RequestRecord[] = [];
    // 2 PKR on each of the seven days for `steady` and `open` (and a row older than the window).
    for (let day = 0; day < 7; day++) {
      rows.push(row(org, steady, NOW - day * DAY - HOUR, 2 * PKR), row(org, open, NOW - day * DAY - HOUR, 2 * PKR));
    }
    rows.push(row(org, steady, NOW - 20 * DAY, 16 * PKR), row(org, used, NOW - 3 * HOUR, 12 * PKR));
    rows.push(row(org, idle, NOW - 30 * DAY, PKR));
    await load(rows);

    const { body } = await org.client.get('/analytics/spend');
    const byName = Object.fromEntries(body.keys.map((k: any) => [k.name, k]));
    // 100 - 14 - 16 = 70 PKR left at 2 PKR a day: 35 days; no spread, so no range.
    const at = new Date(NOW + 35 * DAY).toISOString();
    expect(byName.steady.forecast).toEqual({
      kind: 'runs_out',
      remaining_micro: 70 * PKR,
      at,
      earliest: at,
      latest: at,
    });
    expect(byName.steady.burn).toMatchObject({ window_micro: 14 * PKR, rate_micro_per_day: 2 * PKR });
    expect(byName['used up'].forecast).toEqual({ kind: 'spent', remaining_micro: -2 * PKR });
    expect(byName.idle.forecast).toEqual({ kind: 'idle', remaining_micro: 49 * PKR });
    expect(byName.open.forecast).toEqual({
      kind: 'projected',
      days: 30,
      amount_micro: 60 * PKR,
      low_micro: 60 * PKR,
      high_micro: 60 * PKR,
    });
    expect(byName.open.credit_limit_micro).toBeNull();

    // Most urgent first by default, and pages that follow one another.
    expect(body.keys.map((k: any) => k.name)).toEqual(['used up', 'steady', 'open', 'idle']);
    const page = await org.client.get('/analytics/spend?limit=2&offset=1');
    expect(page.body).toMatchObject({ total: 4, limit: 2, offset: 1 });
    expect(page.body.keys.map((k: any) => k.name)).toEqual(['steady', 'open']);
    const byBurn = await org.client.get('/analytics/spend?sort=burn');
    expect(byBurn.body.keys.map((k: any) => k.name)).toEqual(['open', 'steady', 'used up', 'idle']);
    const bySpent = await org.client.get('/analytics/spend?sort=spent');
    expect(bySpent.body.keys.map((k: any) => k.name)).toEqual(['steady', 'open', 'used up', 'idle']);
  });

  it('answers a trickle of spend against a large limit as lasting beyond the horizon, not with a date it cannot write', async () => {
    const org = await freshOrg();
    await runOperator(server, 'deposit', '--org', org.name, '--pkr', '1000000');
    const large = await org.key('large', 900_000);
    await load([row(org, large, NOW - HOUR, 100)]);
    const answer = await org.client.get('/analytics/spend');
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.keys[0].forecast).toEqual({ kind: 'beyond', remaining_micro: 900_000 * PKR - 100, days: 3650 });
    expect(answer.body.organization.forecast.kind).toBe('beyond');
  });

  it("never shows another organisation's keys or rows", async () => {
    const mine = await freshOrg();
    const theirs = await freshOrg();
    const theirKey = await theirs.key('theirs');
    await load([row(theirs, theirKey, NOW - HOUR, 5 * PKR)]);
    const { body } = await mine.client.get('/analytics/spend');
    expect(body.keys).toEqual([]);
    expect(body.organization).toMatchObject({ spent_micro: 0, deposited_micro: 0 });
    expect(body.organization.burn.window_micro).toBe(0);
  });

  it('refuses a bad sort or page, and a caller without a session', async () => {
    const org = await freshOrg();
    for (const query of ['sort=cost', 'limit=0', 'offset=-1']) {
      const answer = await org.client.get(`/analytics/spend?${query}`);
      expect(answer.status, query).toBe(422);
    }
    const anonymous = await fetch(`${server.baseUrl}/analytics/spend`);
    expect(anonymous.status).toBe(401);
  });
});
