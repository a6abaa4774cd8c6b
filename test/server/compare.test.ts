import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordRequests } from '../../server/ingest/record-requests.js';
import type { RequestRecord } from '../../server/stores/telemetry/request-record.js';
import * as ref from './analytics-reference.js';
import { registerOrg, startServer, type TestClient, type TestServer, requestLog } from './harness.js';
import { requestRecord, seededRandom } from './request-rows.js';

/** Frozen mid-hour: both windows' edges cut rollup cells, so cells and raw rows both count. */
const NOW = Date.UTC(2026, 10, 22, 7, 49, 19, 123);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ now: () => NOW });
});
afterAll(() => server?.close());

let counter = 0;
async function orgWithRows(): Promise<{ client: TestClient; orgId: string; keyId: string; rows: RequestRecord[] }> {
  const { client, orgId, projectId } = await registerOrg(server);
  const keyId: string = (await client.post('/keys', { project_id: projectId, name: 'compared' })).body.id;
  const random = seededRandom(31);
  const rows: RequestRecord[] = [];
  for (let i = 0; i < 700; i++) {
    counter++;
    const streamed = random() < 0.5;
    rows.push({
      ...requestRecord(counter),
      req_id: `req-compare-${process.pid}-${counter}`,
      ts: NOW - Math.floor(random() * 2.3 * DAY),
      org_id: orgId,
      project_id: projectId,
      key_id: random() < 0.7 ? keyId : null,
      stream: streamed ? 1 : 0,
      total_ms: 100 + Math.floor(random() * 3000),
      ttft_ms: streamed ? 20 + Math.floor(random() * 80) : null,
      tokens_generated: Math.floor(random() * 400),
      total_tokens: 50 + Math.floor(random() * 900),
      cost_micro: Math.floor(random() * 2_000_000),
    });
  }
  // Rows on the edges: the window is [NOW - DAY, NOW], the one before [NOW - 2 DAY - 1, NOW - DAY - 1].
  for (const ts of [NOW, NOW - DAY, NOW - DAY - 1, NOW - 2 * DAY - 1, NOW - 2 * DAY - 2]) {
    counter++;
    rows.push({
      ...requestRecord(counter),
      req_id: `req-compare-${process.pid}-${counter}`,
      ts,
      org_id: orgId,
      key_id: keyId,
      project_id: projectId,
    });
  }
  await recordRequests(server.app.control, requestLog(server), rows);
  return { client, orgId, keyId, rows };
}

function expected(rows: RequestRecord[], w: ref.Window) {
  const { total_cost_pkr: _cost, ...figures } = ref.summary(rows, w);
  const cost = rows.filter((row) => ref.inWindow(row, w)).reduce((sum, row) => sum + row.cost_micro, 0);
  return { ...figures, cost_micro: cost };
}

function expectFigures(actual: Record<string, unknown>, wanted: ReturnType<typeof expected>, what: string): void {
  for (const [name, value] of Object.entries(wanted)) {
    if (typeof value === 'number' && !Number.isInteger(value))
      expect(actual[name], `${what} ${name}`).toBeCloseTo(value, 6);
    else expect(actual[name], `${what} ${name}`).toBe(value);
  }
}

describe('GET /analytics/compare', () => {
  it('gives the summary and the cost over the window and the window just before, exactly as the rows do', async () => {
    const { client, orgId, keyId, rows } = await orgWithRows();
    for (const [query, scope] of [
      ['', {}],
      [`&key_id=${keyId}`, { keyId }],
    ] as const) {
      const answer = await client.get(`/analytics/compare?time_range=24h${query}`);
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body.time_range).toBe('24h');
      expectFigures(answer.body.current, expected(rows, { orgId, now: NOW, rangeMs: DAY, ...scope }), 'current');
      expectFigures(
        answer.body.previous,
        expected(rows, { orgId, now: NOW - DAY - 1, rangeMs: DAY, ...scope }),
        'previous',
      );
    }
  });

  it('refuses a bad window and an unknown key as the summary does', async () => {
    const { client } = await orgWithRows();
    expect((await client.get('/analytics/compare?time_range=1w')).status).toBe(400);
    expect((await client.get('/analytics/compare?key_id=not-a-key')).status).toBe(404);
  });
});
