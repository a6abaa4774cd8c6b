import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runAdmin } from '../../server/admin/commands.js';
import { reconcile, type ReconcileSources } from '../../server/analytics/reconcile.js';
import { recordRequests } from '../../server/ingest/record-requests.js';
import { MAX_CELLS } from '../../server/stores/telemetry/rollup-sums.js';
import { registerOrg, runOperator, startServer, type TestServer } from './harness.js';
import { importRow, ndjsonFile, requestRecord } from './request-rows.js';

const HOUR = 3_600_000;
const DAY = 86_400_000;
const dayOf = (ms: number) => ms - (ms % DAY);
const dayText = (ms: number) => new Date(ms).toISOString().slice(0, 10);

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

type Org = Awaited<ReturnType<typeof registerOrg>>;

interface Outcome {
  code: number;
  out: string;
  err: string;
}

/** `npm run admin -- <args>` in process on `dataDir`, with what it printed and its exit code. */
async function admin(dataDir: string, ...args: string[]): Promise<Outcome> {
  const printed: string[] = [];
  const errors: string[] = [];
  const spy = vi.spyOn(console, 'error').mockImplementation((...parts: unknown[]) => {
    errors.push(parts.map(String).join(' '));
  });
  try {
    const code = await runAdmin([...args, '--data-dir', dataDir], (line) => printed.push(line));
    return { code, out: printed.join('\n'), err: errors.join('\n') };
  } finally {
    spy.mockRestore();
  }
}

async function keyOf(org: Org, projectId: string, name: string): Promise<string> {
  const answer = await org.client.post('/keys', { project_id: projectId, name });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body.id;
}

/** Runs a statement on a store's SQLite file directly, as a hand edit or a lost write would. */
function edit(file: string, sql: string, ...params: unknown[]): number {
  const db = new BetterSqlite3(file);
  try {
    return db.prepare(sql).run(...params).changes;
  } finally {
    db.close();
  }
}

const linesOf = (report: any, kind: string): any[] => report.kinds.find((k: any) => k.kind === kind).lines;

describe('reconciling an organisation', () => {
  let org: Org;
  let projectB: string;
  let keyA1: string;
  let keyA2: string;
  let keyB: string;
  const now = Date.now();
  // Rows over the last three days, each key with a cost of its own so that a swap would show.
  const hours = [2, 5, 26, 30, 50];
  // A day inside the window with rows on both of its edges (the first and the last millisecond),
  // and one on the last millisecond of the day before: UTC days must not lose or share them.
  const edgeDay = dayOf(now) - 5 * DAY;

  beforeAll(async () => {
    org = await registerOrg(server);
    await runOperator(server, 'add-project', '--org', org.org, '--name', 'Second');
    projectB = (await org.client.get('/projects')).body.projects.find((p: any) => p.name === 'Second').id;
    keyA1 = await keyOf(org, org.projectId, 'a one');
    keyA2 = await keyOf(org, org.projectId, 'a two');
    keyB = await keyOf(org, projectB, 'b');
    const rows = hours.flatMap((h, i) => [
      importRow(keyA1, org.projectId, {
        timestamp: new Date(now - h * HOUR).toISOString(),
        financials: { cost_pkr: 1.25 + i, is_byok: 0 },
      }),
      importRow(keyA2, org.projectId, { timestamp: new Date(now - h * HOUR - 1000).toISOString() }),
      importRow(keyB, projectB, {
        timestamp: new Date(now - h * HOUR - 2000).toISOString(),
        financials: { cost_pkr: 0.5, is_byok: 0 },
      }),
    ]);
    for (const ts of [edgeDay, edgeDay + DAY - 1]) {
      rows.push(importRow(keyA2, org.projectId, { timestamp: new Date(ts).toISOString() }));
    }
    rows.push(importRow(keyA1, org.projectId, { timestamp: new Date(edgeDay - 1).toISOString() }));
    // Through the real import path: rows, rollups and spend through the outbox.
    const folder = mkdtempSync(join(tmpdir(), 'gc-reconcile-'));
    try {
      await runOperator(server, 'import-requests', '--file', ndjsonFile(folder, rows));
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('agrees on a store filled through the import, in the console and from the shell', async () => {
    const answer = await org.client.get('/reconcile?days=7');
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body).toMatchObject({ agrees: true, disagreements: 0, project_id: null });
    const byKind = Object.fromEntries(answer.body.kinds.map((k: any) => [k.kind, k]));
    // Three days with rows: the organisation, two projects and three key cells each.
    expect(byKind.totals.checked).toBeGreaterThanOrEqual(3 * (1 + 2 + 3));
    // The edge day's two rows are its own, and the row before it its eve's, in every figure.
    const oneDay = await org.client.get(`/reconcile?from=${dayText(edgeDay)}&to=${dayText(edgeDay)}`);
    expect(oneDay.body).toMatchObject({ agrees: true, from: new Date(edgeDay).toISOString() });
    expect(oneDay.body.kinds.find((k: any) => k.kind === 'totals')).toMatchObject({ checked: 3, agreeing: 3 });
    expect(byKind.spend).toMatchObject({ checked: 3, agreeing: 3, lines: [] });
    expect(byKind.rollups.agreeing).toBeGreaterThan(100);
    expect(byKind.rollups.disagreeing).toBe(0);

    const cli = await admin(server.dataDir, 'reconcile', '--org', org.org, '--days', '7');
    expect(cli.code, cli.out + cli.err).toBe(0);
    expect(cli.out).toContain('everything agrees');
  });

  it('names a key whose settled spend lost an update, and says spend still in the outbox is pending', async () => {
    const control = join(server.dataDir, 'control.db');
    expect(edit(control, 'UPDATE api_keys SET spent_micro = spent_micro - 250000 WHERE id = ?', keyA1)).toBe(1);
    // keyB: part of its cost waits in the outbox, not yet settled: pending, not a difference.
    edit(control, 'UPDATE api_keys SET spent_micro = spent_micro - 100000 WHERE id = ?', keyB);
    edit(
      server.config.telemetryDbPath,
      'INSERT INTO spend_outbox (settlement, key_id, micro) VALUES (?, ?, ?)',
      randomUUID(),
      keyB,
      100_000,
    );
    try {
      const answer = await org.client.get('/reconcile?days=7');
      expect(answer.body.agrees).toBe(false);
      expect(answer.body.disagreements).toBe(1);
      const [lost, waiting] = [keyA1, keyB].map((id) => linesOf(answer.body, 'spend').find((l) => l.key_id === id));
      expect(lost).toMatchObject({
        check: 'settled_spend',
        status: 'disagrees',
        project_id: org.projectId,
        key_name: expect.stringContaining('a one'),
      });
      expect(lost.differences).toEqual([
        { measure: 'cost_micro', expected: lost.differences[0].found + 250_000, found: lost.differences[0].found },
      ]);
      expect(waiting).toMatchObject({ status: 'pending' });

      const cli = await admin(server.dataDir, 'reconcile', '--org', org.org, '--days', '7');
      expect(cli.code).toBe(1);
      expect(cli.out).toMatch(/disagrees settled_spend: project .*, key a one .*off by -0\.25 PKR/);
      expect(cli.out).toContain('1 disagreement(s)');
    } finally {
      edit(control, 'UPDATE api_keys SET spent_micro = spent_micro + 250000 WHERE id = ?', keyA1);
      edit(control, 'UPDATE api_keys SET spent_micro = spent_micro + 100000 WHERE id = ?', keyB);
      edit(server.config.telemetryDbPath, 'DELETE FROM spend_outbox WHERE key_id = ?', keyB);
    }
  });

  it('names the rollup cell that is off by one, by table, day and key', async () => {
    const day = dayOf(now - 26 * HOUR);
    const telemetry = server.config.telemetryDbPath;
    const plant = (delta: number) =>
      edit(
        telemetry,
        'UPDATE rollup_hour SET requests = requests + ? WHERE key_id = ? AND bucket >= ? AND bucket < ? AND bucket = (SELECT MIN(bucket) FROM rollup_hour WHERE key_id = ? AND bucket >= ?)',
        delta,
        keyA2,
        day,
        day + DAY,
        keyA2,
        day,
      );
    expect(plant(1)).toBe(1);
    try {
      const answer = await org.client.get('/reconcile?days=7');
      expect(answer.body).toMatchObject({ agrees: false, disagreements: 1 });
      expect(linesOf(answer.body, 'rollups')).toEqual([
        expect.objectContaining({
          check: 'rollup_cells',
          table: 'rollup_hour',
          day: dayText(day),
          key_id: keyA2,
          project_id: org.projectId,
          model: 'openai/gpt-4o-mini',
          differences: [{ measure: 'requests', expected: expect.any(Number), found: expect.any(Number) }],
        }),
      ]);
      const [difference] = linesOf(answer.body, 'rollups')[0].differences;
      expect(difference.found - difference.expected).toBe(1);

      const cli = await admin(server.dataDir, 'reconcile', '--org', org.org, '--days', '7');
      expect(cli.code).toBe(1);
      expect(cli.out).toContain(`disagrees rollup_cells: day ${dayText(day)}, table rollup_hour`);
      expect(cli.out).toContain('key a two');
    } finally {
      plant(-1);
    }
  });

  it('names both hours of a row counted in the wrong hour of its day, though the day adds up', async () => {
    const telemetry = server.config.telemetryDbPath;
    // The edge day's first row (00:00) counted in its 01:00 cell: the day's sums do not move.
    const move = (from: number, to: number) =>
      edit(telemetry, 'UPDATE rollup_hour SET bucket = ? WHERE key_id = ? AND bucket = ?', to, keyA2, from);
    expect(move(edgeDay, edgeDay + HOUR)).toBe(1);
    try {
      const answer = await org.client.get('/reconcile?days=7');
      expect(answer.body).toMatchObject({ agrees: false, disagreements: 2 });
      const lines = linesOf(answer.body, 'rollups');
      expect(lines.map((l) => [l.table, l.key_id, l.day, l.cell_from, l.differences])).toEqual([
        [
          'rollup_hour',
          keyA2,
          dayText(edgeDay),
          new Date(edgeDay).toISOString(),
          [{ measure: 'requests', expected: 1, found: 0 }, expect.anything(), expect.anything()],
        ],
        [
          'rollup_hour',
          keyA2,
          dayText(edgeDay),
          new Date(edgeDay + HOUR).toISOString(),
          [{ measure: 'requests', expected: 0, found: 1 }, expect.anything(), expect.anything()],
        ],
      ]);
      expect(lines[0].note).toBe("rollup_hour's cell of the hour from 00:00 UTC does not hold what its rows add up to");

      const cli = await admin(server.dataDir, 'reconcile', '--org', org.org, '--days', '7');
      expect(cli.code).toBe(1);
      expect(cli.out).toContain(`day ${dayText(edgeDay)}, table rollup_hour, cell from 01:00 UTC`);
    } finally {
      move(edgeDay + HOUR, edgeDay);
    }
  });

  it("names the key whose rows were recorded under another project, and both projects' totals", async () => {
    const ts = now - 3 * HOUR;
    await recordRequests(server.app.control, server.config.telemetryDbPath, [
      {
        ...requestRecord(0),
        req_id: `req-${randomUUID()}`,
        ts,
        org_id: org.orgId,
        project_id: org.projectId,
        key_id: keyB,
      },
    ]);
    const answer = await org.client.get('/reconcile?days=7');
    expect(answer.body.agrees).toBe(false);
    const lines = linesOf(answer.body, 'totals');
    expect(lines).toContainEqual(
      expect.objectContaining({
        check: 'key_in_other_project',
        key_id: keyB,
        project_id: org.projectId,
        day: dayText(ts),
      }),
    );
    const projects = lines.filter((l) => l.check === 'keys_to_project').map((l) => l.project_id);
    expect(projects.sort()).toEqual([org.projectId, projectB].sort());
    // Spend and rollups still agree: the rows are where their cells say, and settled.
    expect(answer.body.kinds.find((k: any) => k.kind === 'spend').disagreeing).toBe(0);
    expect(answer.body.kinds.find((k: any) => k.kind === 'rollups').disagreeing).toBe(0);

    // One project's scope sees the key's rows in it.
    const scoped = await org.client.get(`/reconcile?days=7&project_id=${projectB}`);
    expect(scoped.body.project_id).toBe(projectB);
    expect(linesOf(scoped.body, 'totals').map((l) => l.check)).toEqual(
      expect.arrayContaining(['key_in_other_project', 'keys_to_project']),
    );
  });

  it('refuses a window it will not check, and a project of another organisation', async () => {
    expect((await org.client.get('/reconcile?days=32')).status).toBe(422);
    const long = await org.client.get('/reconcile?from=2026-01-01&to=2026-03-01');
    expect(long.status).toBe(400);
    expect(long.body.error).toMatch(/at most 31/);
    expect((await org.client.get('/reconcile?from=2026-03-02&to=2026-03-01')).status).toBe(400);
    // Not read as 2 March.
    const impossible = await org.client.get('/reconcile?from=2026-02-28&to=2026-02-30');
    expect(impossible.status).toBe(400);
    expect(impossible.body).toEqual({ error: expect.stringContaining('to') });
    const other = await registerOrg(server);
    expect((await other.client.get(`/reconcile?project_id=${projectB}`)).status).toBe(404);

    for (const args of [
      ['--days', '0'],
      // Any window, but not a typo's century and more.
      ['--days', '40000'],
      ['--from', 'yesterday'],
      ['--from', '2026-02-30'],
      ['--from', '2026-01-01', '--days', '3'],
      ['--org', 'No such org'],
    ]) {
      const cli = await admin(server.dataDir, 'reconcile', ...args);
      expect(cli.code, args.join(' ')).toBe(2);
    }
  });
});

describe('an import whose rollup cells outgrow what its writer holds', () => {
  it('writes them in parts, and they add up to the rows', async () => {
    const org = await registerOrg(server);
    const key = await keyOf(org, org.projectId, 'many models');
    // A model of its own a row: five new finest cells each, so the writer writes its cells
    // several times before the commit, some of them into the same hours and days.
    const first = Date.now() - 45_000 * 3_000 - 60_000;
    const rows = Array.from({ length: 45_000 }, (_, i) =>
      importRow(key, org.projectId, {
        timestamp: new Date(first + i * 3_000).toISOString(),
        model: `model-${i}`,
      }),
    );
    const folder = mkdtempSync(join(tmpdir(), 'gc-reconcile-'));
    try {
      await runOperator(server, 'import-requests', '--file', ndjsonFile(folder, rows));
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
    const db = new BetterSqlite3(server.config.telemetryDbPath, { readonly: true });
    try {
      const finest = ['rollup_5m', 'rollup_dim_1m', 'rollup_outcome_hour', 'rollup_cache_hour', 'rollup_board_5m']
        .map((table) => db.prepare(`SELECT COUNT(*) FROM ${table} WHERE org_id = ?`).pluck().get(org.orgId) as number)
        .reduce((a, b) => a + b);
      expect(finest).toBeGreaterThan(MAX_CELLS);
    } finally {
      db.close();
    }
    const answer = await org.client.get('/reconcile?days=3');
    expect(answer.body).toMatchObject({ agrees: true, disagreements: 0 });
    const byKind = Object.fromEntries(answer.body.kinds.map((k: any) => [k.kind, k]));
    expect(byKind.rollups.agreeing).toBeGreaterThan(0);
    expect(byKind.totals.checked).toBeGreaterThan(0);
    // 45,000 rows of a model each, through the command's own process, then checked: 12.7 s alone,
    // past 20 s once in the full suite on two cores.
  }, 60_000);
});

describe('checking any window, and only the kinds asked', () => {
  let org: Org;
  let key: string;
  const now = Date.now();
  // Beyond the 31 days one call of the route reads.
  const oldDay = dayOf(now) - 40 * DAY;
  const control = () => join(server.dataDir, 'control.db');
  const loseSpend = (micro: number) =>
    edit(control(), 'UPDATE api_keys SET spent_micro = spent_micro - ? WHERE id = ?', micro, key);
  /** One more request in `key`'s hour cell of `day` than its rows hold. */
  const plantRollup = (day: number, delta: number) =>
    edit(
      server.config.telemetryDbPath,
      'UPDATE rollup_hour SET requests = requests + ? WHERE key_id = ? AND bucket >= ? AND bucket < ?',
      delta,
      key,
      day,
      day + DAY,
    );

  beforeAll(async () => {
    org = await registerOrg(server);
    key = await keyOf(org, org.projectId, 'windows');
    const folder = mkdtempSync(join(tmpdir(), 'gc-reconcile-window-'));
    try {
      const rows = [oldDay + 3 * HOUR, now - 2 * HOUR].map((ts) =>
        importRow(key, org.projectId, { timestamp: new Date(ts).toISOString() }),
      );
      await runOperator(server, 'import-requests', '--file', ndjsonFile(folder, rows));
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('reports only the kinds asked for, in the usual order, and agrees over those alone', async () => {
    expect(loseSpend(250_000)).toBe(1);
    expect(plantRollup(dayOf(now - 2 * HOUR), 1)).toBe(1);
    try {
      const ask = async (kinds?: string) => {
        const answer = await org.client.get(`/reconcile?days=2${kinds === undefined ? '' : `&kinds=${kinds}`}`);
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);
        return answer.body;
      };
      const kindsOf = (report: any) => report.kinds.map((k: any) => k.kind);
      const all = await ask();
      expect(kindsOf(all)).toEqual(['totals', 'spend', 'rollups']);
      expect(all).toMatchObject({ agrees: false, disagreements: 2 });

      const spend = await ask('spend');
      expect(kindsOf(spend)).toEqual(['spend']);
      expect(spend).toMatchObject({ agrees: false, disagreements: 1 });
      expect(linesOf(spend, 'spend')).toEqual([expect.objectContaining({ check: 'settled_spend', key_id: key })]);

      const totals = await ask('totals');
      expect(kindsOf(totals)).toEqual(['totals']);
      expect(totals).toMatchObject({ agrees: true, disagreements: 0 });
      expect(totals.kinds[0].checked).toBeGreaterThan(0);

      const rollups = await ask('rollups');
      expect(kindsOf(rollups)).toEqual(['rollups']);
      expect(rollups).toMatchObject({ agrees: false, disagreements: 1 });

      // Named in any order, reported in the usual one.
      const days = await ask('rollups,totals');
      expect(kindsOf(days)).toEqual(['totals', 'rollups']);
      expect(days.disagreements).toBe(1);
      expect(days.kinds.find((k: any) => k.kind === 'totals')).toEqual(totals.kinds[0]);
      expect(days.kinds.find((k: any) => k.kind === 'rollups')).toEqual(rollups.kinds[0]);
    } finally {
      loseSpend(-250_000);
      plantRollup(dayOf(now - 2 * HOUR), -1);
    }
  });

  it('refuses a blank, unknown or repeated kind at the field, in the error shape', async () => {
    for (const kinds of ['bogus', 'totals,totals', 'totals,', ',spend', '%20', 'Spend', 'totals;spend']) {
      const answer = await org.client.get(`/reconcile?days=2&kinds=${kinds}`);
      expect(answer.status, kinds).toBe(400);
      expect(answer.body, kinds).toEqual({ error: expect.stringContaining('kinds') });
      expect(answer.headers['x-error-field'], kinds).toBe('kinds');
    }
  });

  it('reads no day without totals or rollups, and neither the spend nor a second ledger without spend', async () => {
    const read = { ledger: 0, day: 0, spend: 0 };
    const sources: ReconcileSources = {
      ledger: async () => {
        read.ledger++;
        return { keys: [], projects: [], settled: [] };
      },
      day: async (query) => {
        read.day++;
        return {
          day: query.day,
          organization: [0, 0, 0],
          projects: [],
          keys: [],
          keyProjects: [],
          cellsChecked: 0,
          differences: [],
          differenceCount: 0,
        };
      },
      spend: async () => {
        read.spend++;
        return { costs: [], outbox: [] };
      },
    };
    const days = [dayOf(now) - DAY, dayOf(now)];
    const request = { orgId: org.orgId, projectId: null, days, now };
    const spend = await reconcile(sources, { ...request, kinds: ['spend'] });
    expect(read).toEqual({ ledger: 2, day: 0, spend: 1 });
    expect(spend.kinds.map((k) => k.kind)).toEqual(['spend']);
    Object.assign(read, { ledger: 0, day: 0, spend: 0 });
    const progress: string[] = [];
    await reconcile(sources, {
      ...request,
      kinds: ['totals', 'rollups'],
      onDay: (checked, total) => progress.push(`${checked}/${total}`),
    });
    expect(read).toEqual({ ledger: 1, day: 2, spend: 0 });
    expect(progress).toEqual(['1/2', '2/2']);
  });

  it('checks a window past 31 days from the shell, finds a fault beyond the 31st day, progress on stderr', async () => {
    expect(plantRollup(oldDay, 1)).toBe(1);
    try {
      // The route still reads at most 31 days a call.
      expect((await org.client.get(`/reconcile?from=${dayText(oldDay)}&to=${dayText(now)}`)).status).toBe(400);

      const cli = await admin(server.dataDir, 'reconcile', '--org', org.org, '--days', '45');
      expect(cli.code, cli.out + cli.err).toBe(1);
      expect(cli.out).toContain(`${dayText(dayOf(now) - 44 * DAY)} to ${dayText(now)} (UTC days)`);
      expect(cli.out).toContain(`disagrees rollup_cells: day ${dayText(oldDay)}, table rollup_hour`);
      expect(cli.out).toContain('1 disagreement(s)');
      // Progress on stderr, never in the report on stdout.
      expect(cli.err).toContain(`${org.org}: checked 45 of 45 days`);
      expect(cli.out).not.toMatch(/checked \d+ of \d+ days/);

      const window = await admin(
        server.dataDir,
        'reconcile',
        '--org',
        org.org,
        '--from',
        dayText(oldDay - 20 * DAY),
        '--to',
        dayText(now),
      );
      expect(window.code, window.out + window.err).toBe(1);
      expect(window.out).toContain(`day ${dayText(oldDay)}`);
      expect(window.err).toContain('checked 61 of 61 days');
    } finally {
      plantRollup(oldDay, -1);
    }
    const mended = await admin(server.dataDir, 'reconcile', '--org', org.org, '--days', '45');
    expect(mended.code, mended.out).toBe(0);
    expect(mended.out).toContain('everything agrees');
    // One day: nothing to tell on stderr.
    const oneDay = await admin(server.dataDir, 'reconcile', '--org', org.org, '--days', '1');
    expect(oneDay.code, oneDay.out).toBe(0);
    expect(oneDay.err).toBe('');
  });
});

describe('reconciling the demo organisation', () => {
  it('agrees exactly on a freshly seeded store', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gc-reconcile-demo-'));
    const cost = process.env.SVC_PASSWORD_COST;
    process.env.SVC_PASSWORD_COST = '10';
    try {
      const seeded = await admin(dataDir, 'seed-demo', '--days', '3', '--rows', '3000');
      expect(seeded.code, seeded.err).toBe(0);
      const cli = await admin(dataDir, 'reconcile', '--days', '4');
      expect(cli.code, cli.out).toBe(0);
      expect(cli.out).toMatch(/totals: agrees \(\d+ checked\)/);
      expect(cli.out).toMatch(/rollups: agrees \([1-9]\d* checked\)/);
      expect(cli.out).toContain('everything agrees');
    } finally {
      if (cost === undefined) delete process.env.SVC_PASSWORD_COST;
      else process.env.SVC_PASSWORD_COST = cost;
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('exits 3, not 1, when the telemetry store cannot be read, so cron tells it from a disagreement', async () => {
    const org = await registerOrg(server);
    const folder = mkdtempSync(join(tmpdir(), 'gc-reconcile-broken-'));
    try {
      const telemetry = join(folder, 'not-a-database.db');
      writeFileSync(telemetry, 'this is not an SQLite file, and long enough to be read as one. '.repeat(20));
      const cli = await admin(server.dataDir, 'reconcile', '--org', org.org, '--telemetry-db', telemetry);
      expect(cli.code, cli.err).toBe(3);
      expect(cli.err).toMatch(/could not check/);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
