import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { resolveConfig } from '../../server/config.js';
import { MAX_RETENTION_DAYS } from '../../server/domain/retention.js';
import { configFromArgs } from '../../server/serve.js';
import { recordRequests } from '../../server/ingest/record-requests.js';
import {
  PASSWORD,
  TestClient,
  register,
  registerOrg,
  requestLog,
  runOperator,
  startServer,
  telemetrySql,
  type TestServer,
} from './harness.js';
import { requestRecord } from './request-rows.js';

const DAY = 86_400_000;

const PATH = '/organization/retention';

/** Both servers' clocks stand still at this instant, a little past the half hour. */
const NOW = Date.parse('2026-07-01T12:34:56.789Z');

/** One server keeps every row; the other deletes rows after 90 days. */
let keeping: TestServer;
let platform90: TestServer;
beforeAll(async () => {
  [keeping, platform90] = await Promise.all([
    startServer({ now: () => NOW }),
    startServer({ now: () => NOW, retentionDays: 90 }),
  ]);
});
afterAll(() => Promise.all([keeping.close(), platform90.close()]));

const put = (client: TestClient, body: unknown, headers?: Record<string, string>) =>
  client.call('PUT', PATH, body, headers);

const EVERY_ROW = { days: null, platform_days: null, effective_days: null, horizon: null };

async function newestEntry(client: TestClient) {
  const answer = await client.get('/activity/entries?limit=1');
  expect(answer.status).toBe(200);
  return answer.body.entries[0];
}

describe('GET /organization/retention', () => {
  it('keeps every row of a new organisation on a server that keeps every row, for any member', async () => {
    const owner = await register(keeping);
    const member = await register(keeping, { org: owner.org });
    for (const client of [owner.client, member.client]) {
      const answer = await client.get(PATH);
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual(EVERY_ROW);
    }
  });

  it("keeps a new organisation's rows as long as the platform does", async () => {
    const owner = await register(platform90);
    expect((await owner.client.get(PATH)).body).toEqual({
      days: null,
      platform_days: 90,
      effective_days: 90,
      // 90 days before the clock, back to the start of its hour.
      horizon: '2026-04-02T12:00:00.000Z',
    });
  });

  it('answers 401 without a session', async () => {
    const answer = await new TestClient(keeping.baseUrl).get(PATH);
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual({ detail: 'Unauthorized' });
  });
});

describe('PUT /organization/retention', () => {
  it("sets the organisation's own days, which every member then reads with the horizon, and null clears them", async () => {
    const owner = await register(keeping);
    const member = await register(keeping, { org: owner.org });
    const stranger = await register(keeping);

    const thirty = { days: 30, platform_days: null, effective_days: 30, horizon: '2026-06-01T12:00:00.000Z' };
    const answer = await put(owner.client, { days: 30 });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual(thirty);
    expect((await member.client.get(PATH)).body).toEqual(thirty);
    // Another organisation keeps its own.
    expect((await stranger.client.get(PATH)).body).toEqual(EVERY_ROW);

    expect((await put(owner.client, { days: 1 })).body).toEqual({
      days: 1,
      platform_days: null,
      effective_days: 1,
      horizon: '2026-06-30T12:00:00.000Z',
    });
    expect((await put(owner.client, { days: MAX_RETENTION_DAYS })).body.days).toBe(MAX_RETENTION_DAYS);

    const cleared = await put(owner.client, { days: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toEqual(EVERY_ROW);
    expect((await member.client.get(PATH)).body).toEqual(EVERY_ROW);
  });

  it('lets an admin set it, and refuses a member with 403, keeping the days', async () => {
    const owner = await register(keeping);
    const promoted = await register(keeping, { org: owner.org });
    const member = await register(keeping, { org: owner.org });
    await runOperator(keeping, 'set-role', '--email', promoted.email, '--role', 'admin');

    const byAdmin = await put(promoted.client, { days: 14 });
    expect(byAdmin.status).toBe(200);
    expect(byAdmin.body.days).toBe(14);

    const byMember = await put(member.client, { days: 7 });
    expect(byMember.status).toBe(403);
    expect(byMember.body).toEqual({ error: 'owner or admin role required' });
    const byMemberToNull = await put(member.client, { days: null });
    expect(byMemberToNull.status).toBe(403);
    expect((await member.client.get(PATH)).body.days).toBe(14);
    expect(await newestEntry(owner.client)).toMatchObject({ action: 'org.retention_changed', actor: promoted.email });
  });

  it('answers 422 naming days for days that are not a whole number from 1 to the most, and keeps the days', async () => {
    const owner = await register(keeping);
    expect((await put(owner.client, { days: 30 })).status).toBe(200);
    for (const body of [
      { days: 0 },
      { days: -1 },
      { days: 1.5 },
      { days: '30' },
      { days: MAX_RETENTION_DAYS + 1 },
      { days: true },
      {},
    ]) {
      const answer = await put(owner.client, body);
      expect(answer.status, JSON.stringify(body)).toBe(422);
      expect(answer.body.detail[0].loc, JSON.stringify(body)).toEqual(['body', 'days']);
    }
    const text = await put(owner.client, 'days=30', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(text.status).toBe(415);
    expect((await owner.client.get(PATH)).body.days).toBe(30);
  });

  it("answers 400 naming days for more days than the platform's, and keeps the days", async () => {
    const owner = await register(platform90);
    expect((await put(owner.client, { days: 60 })).status).toBe(200);
    for (const days of [91, 120, MAX_RETENTION_DAYS]) {
      const answer = await put(owner.client, { days });
      expect(answer.status, String(days)).toBe(400);
      expect(Object.keys(answer.body)).toEqual(['error']);
      expect(answer.body.error).toContain("at most the platform's 90 days");
      expect(answer.headers['x-error-field']).toBe('days');
    }
    expect((await owner.client.get(PATH)).body.days).toBe(60);
    expect((await newestEntry(owner.client)).change).toEqual({ before: { days: null }, after: { days: 60 } });
  });

  it("takes days within the platform's, the shorter counting, and null for the platform's own", async () => {
    const owner = await register(platform90);
    expect((await put(owner.client, { days: 30 })).body).toEqual({
      days: 30,
      platform_days: 90,
      effective_days: 30,
      horizon: '2026-06-01T12:00:00.000Z',
    });
    expect((await put(owner.client, { days: 90 })).body).toMatchObject({ days: 90, effective_days: 90 });
    expect((await put(owner.client, { days: null })).body).toEqual({
      days: null,
      platform_days: 90,
      effective_days: 90,
      horizon: '2026-04-02T12:00:00.000Z',
    });
  });

  it('refuses a request from another origin, as every state-changing request', async () => {
    const owner = await register(keeping);
    const answer = await put(owner.client, { days: 30 }, { origin: 'https://evil.example' });
    expect(answer.status).toBe(403);
    expect((await owner.client.get(PATH)).body).toEqual(EVERY_ROW);
  });

  it('records each change in the activity log, with the actor, the setting before and after, and no secret', async () => {
    const owner = await register(keeping);
    expect((await put(owner.client, { days: 30 })).status).toBe(200);
    const set = await newestEntry(owner.client);
    expect(set).toMatchObject({
      actor: owner.email,
      action: 'org.retention_changed',
      target: '30 days',
      source_ip: '127.0.0.1',
      change: { before: { days: null }, after: { days: 30 } },
    });
    expect(Date.parse(set.timestamp)).toBe(NOW);

    expect((await put(owner.client, { days: null })).status).toBe(200);
    const cleared = await newestEntry(owner.client);
    expect(cleared).toMatchObject({
      action: 'org.retention_changed',
      target: "the platform's retention",
      change: { before: { days: 30 }, after: { days: null } },
    });
    expect(cleared.position).toBe(set.position + 1);

    // The contract's list shows it too, in its own shape.
    const contract = (await owner.client.get('/activity?limit=1')).body.events[0];
    expect(contract).toEqual({
      actor: owner.email,
      action: 'org.retention_changed',
      target: "the platform's retention",
      timestamp: expect.any(String),
      source_ip: '127.0.0.1',
    });
    const text = JSON.stringify([set, cleared, contract]);
    expect(text).not.toContain(PASSWORD);
    expect(text).not.toMatch(/svc_access_token|svc_refresh_token|password/i);
  });
});

describe('the OpenAPI document', () => {
  it('lists both methods with their answers', async () => {
    const doc = (await new TestClient(keeping.baseUrl).get('/openapi.json')).body;
    const item = doc.paths[Object.keys(doc.paths).find((path) => path.endsWith(PATH))!];
    expect(item.get.tags).toEqual(['organization']);
    expect(Object.keys(item.get.responses)).toEqual(['200', '401']);
    expect(Object.keys(item.put.responses)).toEqual(['200', '400', '401', '403', '415', '422']);
  });
});

describe('--retention-days', () => {
  const days = (args: string[], env: NodeJS.ProcessEnv = {}) =>
    resolveConfig(configFromArgs(args, { SVC_DATA_DIR: 'data', ...env })).retentionDays;

  it('is read from the flag, else SVC_RETENTION_DAYS, else every row is kept', () => {
    expect(days([])).toBeNull();
    expect(days([], { SVC_RETENTION_DAYS: '' })).toBeNull();
    expect(days([], { SVC_RETENTION_DAYS: '90' })).toBe(90);
    expect(days(['--retention-days', '30'], { SVC_RETENTION_DAYS: '90' })).toBe(30);
    expect(days(['--retention-days', String(MAX_RETENTION_DAYS)])).toBe(MAX_RETENTION_DAYS);
  });

  it('refuses anything but a whole number of days from 1 to the most, saying what was given', () => {
    for (const given of ['abc', '0', '-1', '1.5', ' 30', '3e1', '0x1e', String(MAX_RETENTION_DAYS + 1)]) {
      expect(() => days([`--retention-days=${given}`]), given).toThrow(
        `--retention-days must be a whole number of days from 1 to ${MAX_RETENTION_DAYS}, not "${given}"`,
      );
    }
    expect(() => days([], { SVC_RETENTION_DAYS: 'forever' })).toThrow(/--retention-days must be a whole number/);
    // Given to the server directly, as the tests and the embedded host do.
    expect(() => resolveConfig({ dataDir: 'data', retentionDays: 1.5 })).toThrow(/not "1.5"/);
  });
});

describe('a retention shortened through the API', () => {
  it("deletes the organisation's older rows at once, in the server's background, and its answers stay whole", async () => {
    const { client, orgId } = await registerOrg(keeping);
    const other = await registerOrg(keeping);
    // Rows 41 to 45 days old, then rows of the last ten days; another organisation's old rows beside them.
    const row = (i: number, org: string, ageMs: number) => ({
      ...requestRecord(i),
      termination_reason: 'success',
      req_id: `ret-${org}-${i}`,
      org_id: org,
      ts: NOW - ageMs,
    });
    const old = Array.from({ length: 120 }, (_, i) => row(i, orgId, (41 + (i % 4)) * DAY + i * 60_000));
    const recent = Array.from({ length: 60 }, (_, i) => row(1000 + i, orgId, (i % 10) * DAY + i * 60_000));
    const foreign = Array.from({ length: 30 }, (_, i) => row(2000 + i, other.orgId, 44 * DAY + i * 60_000));
    await recordRequests(keeping.app.control, requestLog(keeping), [...foreign, ...old, ...recent]);
    const summary = async () => (await client.get('/analytics/summary?time_range=60d')).body;
    const listed = async () => (await client.get('/analytics/requests?time_range=60d&page_size=200')).body;
    const before = await summary();
    expect(before.total_requests).toBe(180);
    expect((await listed()).total).toBe(180);

    expect((await put(client, { days: 30 })).status).toBe(200);
    const horizon = Date.parse('2026-06-01T12:00:00.000Z');
    const olderLeft = async () =>
      (
        await telemetrySql<{ n: number }>(
          keeping,
          `SELECT COUNT(*) AS n FROM requests WHERE org_id = '${orgId}' AND ts < ${horizon}`,
        )
      )[0]!.n;
    await vi.waitFor(async () => expect(Number(await olderLeft())).toBe(0), { timeout: 10_000 });

    // The list starts at the horizon; the summary counts the older days from their totals, unchanged.
    const after = await listed();
    expect(after.total).toBe(60);
    expect(after.requests.every((r: { timestamp: string }) => Date.parse(r.timestamp) >= horizon)).toBe(true);
    expect(await summary()).toEqual(before);
    expect((await client.get(`/analytics/requests/${old[0]!.req_id}`)).status).toBe(404);
    expect((await client.get(`/analytics/requests/${recent[0]!.req_id}`)).status).toBe(200);
    // Another organisation keeps its rows.
    expect((await other.client.get('/analytics/requests?time_range=60d&page_size=200')).body.total).toBe(30);
  });
});
