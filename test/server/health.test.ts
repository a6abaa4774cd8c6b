import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordRequests } from '../../server/ingest/record-requests.js';
import { SqliteControlStore } from '../../server/stores/control/store.js';
import type { RequestRecord } from '../../server/stores/telemetry/request-record.js';
import { openTelemetry } from '../../server/stores/telemetry/store.js';
import { registerOrg, startServer, type TestClient, type TestServer, requestLog } from './harness.js';
import { dropAddedColumns, requestRecord, seededRandom } from './request-rows.js';

/**
 * GET /analytics/health through the real route on a real store: planted rows where one model
 * fails and its neighbours do not, upstream 429s beside the gateway's own, and random traffic
 * checked against a brute force over the rows (counts exact, p95 within the sketches' error).
 */

/** Frozen mid-cell: the newest five-minute cell is 10:05 to 10:10 and still filling. */
const NOW = Date.UTC(2026, 10, 4, 10, 7, 33, 123);
const CELL = 300_000;
const MINUTE = 60_000;
const DAY = 86_400_000;
/** The last hour's first cell: twelve cells ending with the one holding NOW. */
const HOUR_FROM = Date.UTC(2026, 10, 4, 9, 10);

const A = 'openai/gpt-4o-mini';
const B = 'openai/gpt-4o';
const C = 'anthropic/claude-sonnet-4';
const UNKNOWN = 'acme/not-in-catalogue';
const SILENT = 'google/gemini-2.5-pro';

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ now: () => NOW });
});
afterAll(() => server?.close());

/** Every row the suite recorded, for the migration's own SQLite store. */
const recorded: RequestRecord[] = [];
async function record(rows: RequestRecord[]): Promise<void> {
  recorded.push(...rows);
  await recordRequests(server.app.control, requestLog(server), rows);
}

let counter = 0;
function row(orgId: string, model: string, ts: number, outcome: Partial<RequestRecord> = {}): RequestRecord {
  counter++;
  return {
    ...requestRecord(counter),
    req_id: `req-health-${process.pid}-${counter}`,
    org_id: orgId,
    model,
    ts,
    total_ms: 100 + (counter % 50) * 10,
    ttft_ms: 20 + (counter % 7),
    ...outcome,
  };
}
const failed = { status: 502, upstream_error: '502 bad gateway: upstream connection reset by peer' };
const upstream429 = { status: 429, upstream_error: '429 rate_limit_error: too many tokens per minute' };
const gateway429 = { status: 429, upstream_error: null, total_ms: 2, ttft_ms: null };

interface Figures {
  requests: number;
  refused: number;
  dispatched: number;
  errors: number;
  error_rate: number | null;
  upstream_429: number;
  p95_latency_ms: number | null;
  p95_ttft_ms: number | null;
  last_success_at: string | null;
  status: string;
  strip: { requests: number[]; errors: number[]; upstream_429: number[]; status: string[] };
}
type ModelFigures = Figures & { model: string };
type ProviderFigures = Figures & { provider: string | null; models: ModelFigures[] };

const cellOf = (ts: number, from = HOUR_FROM) => Math.floor((ts - from) / CELL);

async function health(client: TestClient, window = '1h', to?: number) {
  const end = to === undefined ? '' : `&to=${new Date(to).toISOString()}`;
  const answer = await client.get(`/analytics/health?window=${window}${end}`);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  const providers = answer.body.providers as ProviderFigures[];
  const provider = (name: string | null) => providers.find((p) => p.provider === name)!;
  const model = (name: string) => providers.flatMap((p) => p.models).find((m) => m.model === name)!;
  return { body: answer.body, providers, provider, model };
}

describe('GET /analytics/health', () => {
  let client: TestClient;
  let lastOkOfA: number;
  /** The cell where A fails. */
  const badCell = HOUR_FROM + 4 * CELL;

  beforeAll(async () => {
    const org = await registerOrg(server);
    client = org.client;
    const other = await registerOrg(server);
    const id = org.orgId;
    // A's newest success: the good request of the newest cell.
    lastOkOfA = HOUR_FROM + 11 * CELL + 1000;
    const rows: RequestRecord[] = [
      // A: one good request per cell, and a burst of failures in one cell (3 of 5 there).
      ...Array.from({ length: 12 }, (_, i) => row(id, A, HOUR_FROM + i * CELL + 1000)),
      row(id, A, badCell + 10_000, failed),
      row(id, A, badCell + 20_000, failed),
      row(id, A, badCell + 30_000, failed),
      row(id, A, badCell + 2 * MINUTE + 17),
      // B, same provider, same cell: all good; the gateway refusing its callers is not B failing.
      ...Array.from({ length: 8 }, (_, i) => row(id, B, badCell + i * 1000)),
      ...Array.from({ length: 5 }, (_, i) => row(id, B, badCell + 40_000 + i, gateway429)),
      // C: the upstream's 429s are errors of C, counted apart.
      ...Array.from({ length: 18 }, (_, i) => row(id, C, HOUR_FROM + i * 2 * MINUTE)),
      row(id, C, NOW - 5000, upstream429),
      row(id, C, NOW - 4000, upstream429),
      // A model the catalogue does not know, and one silent for the window but used three days ago.
      row(id, UNKNOWN, NOW - 60_000),
      row(id, SILENT, NOW - 3 * DAY),
      // On the window's edges: just before (not counted), its first instant, a cell's last and next.
      row(id, B, HOUR_FROM - 1, failed),
      row(id, B, HOUR_FROM),
      row(id, B, HOUR_FROM + 10 * CELL + CELL - 1),
      row(id, B, HOUR_FROM + 11 * CELL),
      // Another organisation's failures of the same models.
      ...Array.from({ length: 10 }, (_, i) => row(other.orgId, B, badCell + i, failed)),
    ];
    await record(rows);
  });

  it("keeps one model's errors to that model: A down where it failed, B beside it ok", async () => {
    const { body, model } = await health(client);
    expect(body).toMatchObject({
      window: '1h',
      from: new Date(HOUR_FROM).toISOString(),
      to: new Date(NOW).toISOString(),
      cell_minutes: 5,
      thresholds: { degraded_error_rate: 0.05, down_error_rate: 0.5 },
    });
    const a = model(A);
    expect(a).toMatchObject({ requests: 16, refused: 0, dispatched: 16, errors: 3, upstream_429: 0 });
    expect(a.error_rate).toBeCloseTo(3 / 16, 10);
    expect(a.status).toBe('degraded');
    expect(a.strip.requests).toHaveLength(12);
    expect(a.strip.errors[cellOf(badCell)]).toBe(3);
    expect(a.strip.status[cellOf(badCell)]).toBe('down');
    expect(a.strip.status.filter((s) => s !== 'ok')).toEqual(['down']);
    expect(a.last_success_at).toBe(new Date(lastOkOfA).toISOString());

    const b = model(B);
    expect(b).toMatchObject({ requests: 16, refused: 5, dispatched: 11, errors: 0, upstream_429: 0, status: 'ok' });
    expect(b.strip.status[cellOf(badCell)]).toBe('ok');
    expect(b.strip.requests[cellOf(badCell)]).toBe(13);
  });

  it("gives a provider its own models' traffic only, and models the catalogue lacks a provider of their own", async () => {
    const { providers, provider } = await health(client);
    expect(providers.map((p) => p.provider)).toEqual(['anthropic', 'google', 'openai', null]);
    const openai = provider('openai');
    expect(openai.models.map((m) => m.model)).toEqual([B, A]);
    expect(openai).toMatchObject({ requests: 32, refused: 5, dispatched: 27, errors: 3, status: 'degraded' });
    expect(openai.strip.errors[cellOf(badCell)]).toBe(3);
    expect(openai.strip.requests[cellOf(badCell)]).toBe(5 + 13);
    // Anthropic is C alone: A's failures are nowhere in it.
    const anthropic = provider('anthropic');
    expect(anthropic).toMatchObject({ requests: 20, errors: 2, upstream_429: 2 });
    expect(anthropic.strip.errors[cellOf(badCell)]).toBe(0);
    expect(provider(null).models.map((m) => m.model)).toEqual([UNKNOWN]);
    expect(provider(null)).toMatchObject({ requests: 1, status: 'ok' });
  });

  it("counts the upstream's 429s as errors and never the gateway's own rate-limit refusals", async () => {
    const { model } = await health(client);
    const c = model(C);
    expect(c).toMatchObject({ requests: 20, refused: 0, errors: 2, upstream_429: 2, status: 'degraded' });
    expect(c.strip.errors[11]).toBe(2);
    expect(c.strip.upstream_429[11]).toBe(2);
    expect(c.strip.upstream_429.reduce((n, x) => n + x, 0)).toBe(2);
    expect(model(B)).toMatchObject({ refused: 5, upstream_429: 0, errors: 0 });
  });

  it('lists a model silent in the window as no traffic, with its last success from days ago', async () => {
    const { model } = await health(client);
    const silent = model(SILENT);
    expect(silent).toMatchObject({ requests: 0, error_rate: null, status: 'no_traffic', p95_latency_ms: null });
    expect(silent.last_success_at).toBe(new Date(NOW - 3 * DAY).toISOString());
    expect(new Set(silent.strip.status)).toEqual(new Set(['no_traffic']));
  });

  it('puts rows on the edges of the window and of its cells where they belong', async () => {
    const { model } = await health(client);
    const b = model(B);
    // HOUR_FROM - 1 (a failure) is outside; the others are in cells 0, 10 and 11.
    expect(b.errors).toBe(0);
    expect(b.strip.requests[0]).toBe(1);
    expect(b.strip.requests[10]).toBe(1);
    expect(b.strip.requests[11]).toBe(1);
  });

  it('refuses a window it does not offer, and an end it cannot read', async () => {
    const answer = await client.get('/analytics/health?window=7d');
    expect(answer.status).toBe(400);
    expect(answer.body.error).toContain('1h, 24h');
    // date-time forms the schema admits and Date.parse cannot read.
    for (const to of ['2026-11-04T10:00:00%2B05', '2026-11-04T23:59:60Z']) {
      const unreadable = await client.get(`/analytics/health?to=${to}`);
      expect(unreadable.status, to).toBe(400);
      expect(unreadable.body.error).toContain('to is not a time');
    }
  });
});

describe('GET /analytics/health over a day of random traffic', () => {
  it('matches a brute force over the rows: counts exact, p95 within 1 %, last success exact', async () => {
    const org = await registerOrg(server);
    const random = seededRandom(27);
    const models = [A, B, C, 'svc/fast'];
    const outcomes: Partial<RequestRecord>[] = [
      {},
      {},
      {},
      {},
      failed,
      upstream429,
      gateway429,
      { status: 400, upstream_error: '400 invalid_request_error: bad' },
      { status: 503, upstream_error: '503 overloaded_error: Overloaded' },
    ];
    const rows = Array.from({ length: 3000 }, () =>
      row(org.orgId, models[Math.floor(random() * models.length)]!, NOW - Math.floor(random() * 1.2 * DAY), {
        ...outcomes[Math.floor(random() * outcomes.length)],
        total_ms: Math.round(20 + Math.exp(random() * 9)),
        ttft_ms: random() < 0.3 ? null : 5 + Math.floor(random() * 800),
      }),
    );
    await record(rows);

    await checkWindow(org.client, rows, models, NOW, null);
  });

  it('reads a day in the past as whole cells ending where asked, with no success from after it', async () => {
    const org = await registerOrg(server);
    const random = seededRandom(31);
    const models = [A, B, C];
    const rows = Array.from({ length: 2000 }, () =>
      row(org.orgId, models[Math.floor(random() * models.length)]!, NOW - Math.floor(random() * 2 * DAY), {
        ...(random() < 0.2 ? failed : {}),
        total_ms: Math.round(20 + Math.exp(random() * 9)),
      }),
    );
    // The instant asked for lies inside a cell: the window ends with that cell, whole.
    const asked = NOW - 9 * 3_600_000 - 123_456;
    const end = asked - 1 - ((asked - 1) % CELL) + CELL - 1;
    await record([
      ...rows,
      // Successes after the window must not be its last success.
      row(org.orgId, A, end + 1),
      row(org.orgId, C, NOW - 1000),
    ]);
    await checkWindow(org.client, rows, models, end, asked);
  });
});

/**
 * A 24-hour health answer for `rows` against a brute force over them: counts exact, p95 within
 * the sketches' 1 %, last success exact up to the window's last instant `end` (included).
 */
async function checkWindow(
  client: TestClient,
  rows: RequestRecord[],
  models: string[],
  end: number,
  asked: number | null,
): Promise<void> {
  const { body, model, provider } = await health(client, '24h', asked ?? undefined);
  const from = Date.parse(body.from);
  expect(from).toBe(end - (end % CELL) - 287 * CELL);
  expect(body.to).toBe(new Date(end).toISOString());
  const inWindow = rows.filter((r) => r.ts >= from && r.ts <= end);
  const upToEnd = rows.filter((r) => r.ts <= end);
  const exactP95 = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(0.95 * (values.length - 1))]!;
  const expectFigures = (figures: Figures, own: RequestRecord[], all: RequestRecord[]) => {
    const refused = own.filter((r) => r.status >= 400 && r.status < 500 && r.upstream_error === null);
    const errors = own.filter((r) => r.status >= 500 || (r.status === 429 && r.upstream_error !== null));
    expect(figures.requests).toBe(own.length);
    expect(figures.refused).toBe(refused.length);
    expect(figures.errors).toBe(errors.length);
    expect(figures.upstream_429).toBe(own.filter((r) => r.status === 429 && r.upstream_error !== null).length);
    expect(Math.abs(figures.p95_latency_ms! / exactP95(own.map((r) => r.total_ms)) - 1)).toBeLessThanOrEqual(0.01);
    const ttfts = own.flatMap((r) => (r.ttft_ms === null ? [] : [r.ttft_ms]));
    expect(Math.abs(figures.p95_ttft_ms! / exactP95(ttfts) - 1)).toBeLessThanOrEqual(0.01);
    const oks = all.filter((r) => r.status < 400).map((r) => r.ts);
    expect(figures.last_success_at).toBe(new Date(Math.max(...oks)).toISOString());
    expect(figures.strip.requests).toHaveLength(288);
    const perCell = Array.from({ length: 288 }, (_, i) => own.filter((r) => cellOf(r.ts, from) === i));
    expect(figures.strip.requests).toEqual(perCell.map((cell) => cell.length));
    expect(figures.strip.errors).toEqual(perCell.map((cell) => cell.filter((r) => errors.includes(r)).length));
  };
  for (const name of models) {
    expectFigures(
      model(name),
      inWindow.filter((r) => r.model === name),
      upToEnd.filter((r) => r.model === name),
    );
  }
  expectFigures(
    provider('openai'),
    inWindow.filter((r) => r.model === A || r.model === B),
    upToEnd.filter((r) => r.model === A || r.model === B),
  );
}

describe("migration 010's health columns", () => {
  it('fills the cells of a store that had rows before it exactly as the import writes them', async () => {
    // A SQLite store of its own, with the suite's rows (its server's may be on PostgreSQL).
    const folder = mkdtempSync(join(tmpdir(), 'gc-health-010-'));
    const path = join(folder, 'telemetry.db');
    const control = SqliteControlStore.open(join(folder, 'control.db'), { accessSeconds: 900, refreshSeconds: 3600 });
    try {
      await recordRequests(control, path, recorded);
    } finally {
      await control.close();
    }
    const tables = ['rollup_board_5m', 'rollup_board_hour', 'rollup_board_day'];
    const contents = (db: ReturnType<typeof openTelemetry>) =>
      tables.map((table) =>
        db.prepare(`SELECT org_id, dim, bucket, value, upstream_429, last_ok FROM ${table} ORDER BY 1, 2, 3, 4`).all(),
      );
    const written = openTelemetry(path);
    const byImport = contents(written);
    expect(byImport.flat().some((cell) => (cell as { upstream_429: number }).upstream_429 > 0)).toBe(true);
    for (const table of tables) {
      written.exec(`ALTER TABLE ${table} DROP COLUMN upstream_429`);
      written.exec(`ALTER TABLE ${table} DROP COLUMN last_ok`);
    }
    dropAddedColumns(written);
    written.pragma('user_version = 9');
    written.close();
    const migrated = openTelemetry(path);
    try {
      expect(contents(migrated)).toEqual(byImport);
    } finally {
      migrated.close();
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
