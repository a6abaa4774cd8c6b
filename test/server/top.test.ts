import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordRequests } from '../../server/ingest/record-requests.js';
import type { RequestRecord } from '../../server/stores/telemetry/request-record.js';
import { registerOrg, startServer, type TestClient, type TestServer, requestLog } from './harness.js';
import { requestRecord, seededRandom } from './request-rows.js';

/** Frozen mid-hour, so both windows' edges cut rollup cells and raw rows both count. */
const NOW = Date.UTC(2026, 10, 22, 7, 49, 19, 123);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ now: () => NOW });
});
afterAll(() => server?.close());

interface Org {
  client: TestClient;
  orgId: string;
  projects: string[];
  keys: string[];
  revoked: string;
}

async function freshOrg(): Promise<Org> {
  const { client, orgId, projectId: first } = await registerOrg(server);
  const second = (await server.app.control.write((tx) => tx.organizations.addProject(orgId, 'Second', NOW))).id;
  const key = async (projectId: string, name: string) =>
    (await client.post('/keys', { project_id: projectId, name })).body.id as string;
  const keys = [await key(first, 'alpha'), await key(second, 'beta'), await key(first, 'gamma')];
  const revoked = await key(first, 'gone');
  await client.delete(`/keys/${revoked}`);
  return { client, orgId, projects: [first, second], keys, revoked };
}

let counter = 0;
/** Rows over the last two days and a bit, of every key (and none), several models and statuses. */
function rowsOf(org: Org, seed: number, count: number): RequestRecord[] {
  const random = seededRandom(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
  const owners = [
    ...org.keys.map((k, i) => ({ key: k, project: org.projects[i % 2]! })),
    { key: org.revoked, project: org.projects[0]! },
    { key: null, project: null },
  ];
  const rows: RequestRecord[] = [];
  for (let i = 0; i < count; i++) {
    counter++;
    const owner = pick(owners);
    rows.push({
      ...requestRecord(counter),
      req_id: `req-top-${process.pid}-${counter}`,
      ts: NOW - Math.floor(random() * 2.2 * DAY),
      org_id: org.orgId,
      project_id: owner.project,
      key_id: owner.key,
      // '' is the model of a request the gateway could not read: a group of its own, never null.
      model: pick(['openai/gpt-4o-mini', 'anthropic/claude-sonnet-4', 'svc/fast', '']),
      status: pick([200, 200, 200, 429, 500, 503]),
      total_ms: 50 + Math.floor(random() * 2000),
      cost_micro: Math.floor(random() * 3_000_000),
    });
  }
  // The windows' edges: the window is [NOW - DAY, NOW], the one before [NOW - 2 DAY - 1, NOW - DAY - 1].
  for (const ts of [NOW, NOW - DAY, NOW - DAY - 1, NOW - 2 * DAY - 1, NOW - 2 * DAY - 2, NOW + 1]) {
    counter++;
    rows.push({
      ...requestRecord(counter),
      req_id: `req-top-${process.pid}-${counter}`,
      ts,
      org_id: org.orgId,
      project_id: org.projects[0]!,
      key_id: org.keys[0]!,
      status: 500,
      cost_micro: 1000 + counter,
    });
  }
  return rows;
}

type Group = 'key' | 'model' | 'project';
const groupOf = (row: RequestRecord, by: Group) =>
  by === 'key' ? row.key_id : by === 'project' ? row.project_id : row.model;

/** The figures computed from the rows themselves. */
function reference(rows: RequestRecord[], by: Group) {
  const figures = new Map<
    string | null,
    { requests: number; cost: number; errors: number; ms: number; prevRequests: number; prevCost: number }
  >();
  const of = (group: string | null) => {
    if (!figures.has(group))
      figures.set(group, { requests: 0, cost: 0, errors: 0, ms: 0, prevRequests: 0, prevCost: 0 });
    return figures.get(group)!;
  };
  for (const row of rows) {
    if (row.ts >= NOW - DAY && row.ts <= NOW) {
      const f = of(groupOf(row, by));
      f.requests++;
      f.cost += row.cost_micro;
      f.ms += row.total_ms;
      if (row.status >= 500) f.errors++;
    } else if (row.ts >= NOW - 2 * DAY - 1 && row.ts <= NOW - DAY - 1) {
      const f = of(groupOf(row, by));
      f.prevRequests++;
      f.prevCost += row.cost_micro;
    }
  }
  return figures;
}

/** Each group's p95 within the sketches' bound of the exact one, and its trend adding up to its requests. */
function expectLatencyAndTrend(body: any, rows: RequestRecord[], by: Group) {
  expect(body.trend_interval).toBe('1h');
  for (const group of body.groups) {
    const latencies = rows
      .filter((r) => r.ts >= NOW - DAY && r.ts <= NOW && groupOf(r, by) === group.group)
      .map((r) => r.total_ms)
      .sort((a, b) => a - b);
    const exact = latencies[Math.floor(0.95 * (latencies.length - 1))]!;
    expect(Math.abs(group.p95_latency_ms - exact), `${by} ${group.group}`).toBeLessThanOrEqual(exact * 0.01);
    // A day in UTC hours: the partial hour the window starts in, 23 whole ones, the one it ends in.
    const first = Math.floor((NOW - DAY) / HOUR) * HOUR;
    const mine = rows.filter((r) => r.ts >= NOW - DAY && r.ts <= NOW && groupOf(r, by) === group.group);
    const hourly = Array.from(
      { length: 25 },
      (_, i) => mine.filter((r) => Math.floor((r.ts - first) / HOUR) === i).length,
    );
    expect(group.trend, `${by} ${group.group}`).toEqual(hourly);
    expect(group.trend.reduce((a: number, b: number) => a + b, 0)).toBe(group.requests);
  }
}

describe('GET /analytics/top', () => {
  it('gives each key, model and project its exact figures beside the window before, the largest first, the rest in others', async () => {
    const org = await freshOrg();
    const rows = rowsOf(org, 11, 900);
    await recordRequests(server.app.control, requestLog(server), rows);

    for (const by of ['key', 'model', 'project'] as const) {
      const answer = await org.client.get(`/analytics/top?group_by=${by}&limit=2`);
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      const body = answer.body;
      const expected = reference(rows, by);
      const ranked = [...expected.entries()].filter(([, f]) => f.requests > 0).sort(([, a], [, b]) => b.cost - a.cost);
      expect(
        body.groups.map((g: any) => g.group),
        by,
      ).toEqual(ranked.slice(0, 2).map(([group]) => group));
      for (const group of body.groups) {
        const f = expected.get(group.group)!;
        expect(group, `${by} ${group.group}`).toMatchObject({
          requests: f.requests,
          cost_micro: f.cost,
          errors: f.errors,
          previous_requests: f.prevRequests,
          previous_cost_micro: f.prevCost,
        });
        expect(group.mean_latency_ms).toBeCloseTo(f.ms / f.requests, 6);
      }
      expectLatencyAndTrend(body, rows, by);
      // Groups and others add up to the total, to the unit.
      const all = [...expected.values()];
      const total = { requests: 0, cost: 0, errors: 0, prevRequests: 0, prevCost: 0 };
      for (const f of all) for (const k of Object.keys(total) as (keyof typeof total)[]) total[k] += f[k];
      expect(body.total).toMatchObject({
        requests: total.requests,
        cost_micro: total.cost,
        errors: total.errors,
        previous_requests: total.prevRequests,
        previous_cost_micro: total.prevCost,
      });
      expect(body.others.count).toBe(expected.size - 2);
      expect(body.groups.reduce((n: number, g: any) => n + g.cost_micro, 0) + body.others.cost_micro).toBe(total.cost);
      expect(
        body.groups.reduce((n: number, g: any) => n + g.previous_requests, 0) + body.others.previous_requests,
      ).toBe(total.prevRequests);
    }
  });

  it('names keys and projects (a revoked key has none), orders by requests when asked, and narrows to a scope', async () => {
    const org = await freshOrg();
    const rows = rowsOf(org, 12, 400);
    await recordRequests(server.app.control, requestLog(server), rows);
    const { body } = await org.client.get('/analytics/top?group_by=key&sort=requests&limit=50');
    const names = Object.fromEntries(body.groups.map((g: any) => [String(g.group), g.name]));
    expect(names).toMatchObject({ [org.keys[0]!]: 'alpha', [org.keys[1]!]: 'beta', [org.revoked]: null, null: null });
    const requests = body.groups.map((g: any) => g.requests);
    expect(requests).toEqual([...requests].sort((a: number, b: number) => b - a));
    expect(body.others).toBeNull();

    const scoped = await org.client.get(`/analytics/top?group_by=model&key_id=${org.keys[1]}`);
    const expected = reference(
      rows.filter((r) => r.key_id === org.keys[1]),
      'model',
    );
    expect(scoped.body.total.requests).toBe([...expected.values()].reduce((n, f) => n + f.requests, 0));
    // Models within a key: no cells by both, so the rows give the percentiles and trends.
    expectLatencyAndTrend(
      scoped.body,
      rows.filter((r) => r.key_id === org.keys[1]),
      'model',
    );
  });

  it('refuses a missing or unknown group, a limit out of bounds, and a key of another organisation', async () => {
    const org = await freshOrg();
    const other = await freshOrg();
    for (const query of [
      '',
      'group_by=team',
      'group_by=key&limit=0',
      'group_by=key&limit=51',
      'group_by=key&sort=latency',
    ]) {
      expect((await org.client.get(`/analytics/top?${query}`)).status, query).toBe(422);
    }
    expect((await org.client.get(`/analytics/top?group_by=model&key_id=${other.keys[0]}`)).status).toBe(404);
  });
});
