// The benchmark at 20,000 rows, only to show that it runs and reports every figure: `--quick`, the
// fewest and shortest samples of each, whose figures are not to be read. No timing is asserted:
// the project forbids timed tests.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { FIRST_BYTE_SPAN } from '../../bench/open-loop.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ROWS = 20_000;
const KILL_MS = 360_000;

function runBench(out: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'bench/run.ts', '--quick', '--rows', String(ROWS), '--out', out],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    // Past this the run is stuck (about two minutes on a quiet 2-core machine, more than twice that
    // beside other tests): SIGTERM lets it stop its server child and remove its temp folder.
    const timer = setTimeout(() => child.kill('SIGTERM'), KILL_MS);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

const isNumber = (value: unknown) => typeof value === 'number' && Number.isFinite(value);

describe('npm run bench', () => {
  const out = mkdtempSync(join(tmpdir(), 'gc-bench-smoke-'));
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it('runs at 20,000 rows and writes every figure as JSON and markdown', { timeout: KILL_MS + 15_000 }, async () => {
    const { code, output } = await runBench(out);
    expect(code, output.slice(-3000)).toBe(0);
    const json = join(out, `${ROWS}.json`);
    const markdown = readFileSync(join(out, `${ROWS}.md`), 'utf8');
    const report = JSON.parse(readFileSync(json, 'utf8'));
    // A quick run says so, that its figures are never taken for a real run's; the counts it used
    // are the ones below.
    expect(report.meta.quick).toBe(true);
    expect(markdown).toMatch(/^# Benchmark: 20,000 rows over 30 days\n\n> \*\*Quick run/);
    const counts = report.meta.counts;

    // Every query of issue 6 section 1, each timed on the server and in DuckDB.
    const ids: string[] = report.cases.map((c: any) => c.id);
    for (const range of ['1h', '24h', '30d']) {
      expect(ids).toContain(`summary ${range}`);
      expect(ids).toContain(`summary ${range} key`);
    }
    for (const window of ['24h/5m', '30d/1h'])
      for (const metric of ['volume', 'latency', 'ttft', 'tok_s', 'token_usage'])
        for (const group of ['project', 'key', 'model'])
          expect(ids).toContain(`timeseries ${metric} ${window} by ${group}`);
    for (const page of [
      'first page',
      'project',
      'key',
      'model',
      'status_category',
      'termination_reason',
      'min_cost_pkr',
      'min_cost_pkr 24h',
      'search metadata',
      'search req_id',
      'first page offset 10000',
    ])
      expect(ids).toContain(`requests ${page}`);
    for (const c of report.cases) {
      for (const engine of ['server', 'duckdb']) {
        expect(c[engine].runs, `${c.id} ${engine}`).toBeGreaterThan(0);
        expect(c[engine].runs, `${c.id} ${engine}`).toBeLessThanOrEqual(report.meta.fast.runs);
        expect(isNumber(c[engine].p50) && isNumber(c[engine].p95), `${c.id} ${engine}`).toBe(true);
      }
      expect(isNumber(c.ratio), c.id).toBe(true);
      expect(typeof c.pass, c.id).toBe('boolean');
      // The same rows and the same SQL semantics: the server and DuckDB count the same window.
      if (c.check) expect(c.check.ok, `${c.id}: ${JSON.stringify(c.check)}`).toBe(true);
    }

    // The same cases on the store `admin import-requests` filled with every seeded row (issue 54),
    // counting the same rows as DuckDB.
    expect(report.importedCases.map((c: any) => c.id)).toEqual(ids);
    for (const c of report.importedCases) {
      expect(c.server.runs, `imported ${c.id}`).toBeGreaterThan(0);
      if (c.check) expect(c.check.ok, `imported ${c.id}: ${JSON.stringify(c.check)}`).toBe(true);
    }
    expect(markdown).toContain('## Queries on an imported store');

    // Where the bytes go (issue 54): every table and index by use, against DuckDB's file of the rows.
    const bytes = report.bytes;
    expect(bytes.groups.map((g: any) => g.group)).toEqual(
      expect.arrayContaining(['request rows', 'request indexes', 'search index', 'rollups']),
    );
    expect(bytes.objects.map((o: any) => o.name)).toEqual(
      expect.arrayContaining(['request_rows', 'request_strings', 'requests_by_org', 'search_terms', 'rollup_5m']),
    );
    expect(bytes.sqliteBytes).toBe(bytes.objects.reduce((sum: number, o: any) => sum + o.bytes, 0));
    expect(bytes.duckdbBytes).toBeGreaterThan(0);
    expect(bytes.ratio).toBeCloseTo(bytes.sqliteBytes / bytes.duckdbBytes, 6);
    expect(markdown).toContain('## Where the bytes go');

    expect(report.import.rows).toBe(ROWS);
    // The seeded rows as NDJSON files, imported by the command and loaded by DuckDB (issue 31).
    expect(report.importFiles).toMatchObject({ rows: counts.import.rows ?? ROWS, files: counts.import.files });
    for (const value of [
      report.importFiles.importRowsPerSecond,
      report.importFiles.duckdbRowsPerSecond,
      report.importFiles.ratio,
      report.keysThroughput.sameBytesRps,
      report.import.rowsPerSecond,
      report.disk.bytesPerRow,
      report.keysThroughput.keysRps,
      report.keysThroughput.bareFastifyRps,
      report.keysThroughput.ratio,
      report.keysLatency.idleP99,
      report.keysLatency.loadedP99,
      report.keysLatency.ratio,
      report.memory.peakRssAnonMiB,
    ])
      expect(isNumber(value)).toBe(true);
    expect(report.keysThroughput.rounds).toHaveLength(counts.keysThroughputRounds);
    expect(report.memory.peakRssAnonBytes).toBeGreaterThan(0);
    expect(report.figures.map((f: any) => f.figure)).toEqual([
      'GET /keys throughput',
      'GET /keys p99 under analytics load',
      'import of NDJSON files (admin import-requests)',
      'seeding rate (demo generator, indexes included)',
      'server peak anonymous RSS',
      'bytes per row on disk',
    ]);
    for (const figure of report.figures) expect(isNumber(figure.value), figure.figure).toBe(true);

    // The gateway's figures (issue 32), each measured against its reference in the same run.
    expect(report.gateway.figures.length).toBeGreaterThanOrEqual(8);
    for (const figure of report.gateway.figures) {
      expect(isNumber(figure.value), figure.figure).toBe(true);
      expect(figure.reference, figure.figure).not.toBe('');
    }
    const served = report.gateway.figures.find((f: any) => f.figure === 'requests served after DELETE /keys/{id}');
    expect(served?.value).toBe(0);
    const unwritten = report.gateway.figures.find((f: any) => f.figure === 'gateway answers without a request-log row');
    expect(unwritten?.value).toBe(0);
    const gateway = report.gateway;
    expect(gateway.setup.rounds).toBe(counts.gateway.openLoopRounds);
    // First-byte cases take FIRST_BYTE_SPAN times the samples of the latency cases, at the same rate.
    expect(gateway.ttfb.gateway.sent).toBe(FIRST_BYTE_SPAN * gateway.latency.gateway.sent);
    // Each target's own p99 of each of its rounds, beside the pooled one.
    expect(markdown).toMatch(/\| max send lag +\| p99 by round +\|/);
    expect(gateway.latency.proxy.roundP99s).toHaveLength(counts.gateway.openLoopRounds);
    expect(gateway.ttfb.gateway.roundP99s).toHaveLength(FIRST_BYTE_SPAN * counts.gateway.openLoopRounds);
    expect(report.gateway.apis.responses.ttfb.proxy.roundP99s).toHaveLength(
      FIRST_BYTE_SPAN * counts.apis.openLoopRounds,
    );
    expect(gateway.throughput.rounds).toHaveLength(counts.gateway.throughputRounds);
    expect(gateway.rowVisible.samples + gateway.rowVisible.notSeen).toBe(counts.gateway.visibilitySamples);
    expect(gateway.revocation.trials).toBe(counts.gateway.revocationTrials);
    // Messages (passed through and translated), Responses and embeddings (issue 53), beside chat.
    const apis = report.gateway.apis;
    expect(apis.setup.rounds).toBe(counts.apis.openLoopRounds);
    expect(apis.messages.ttfb.gateway.sent).toBe(FIRST_BYTE_SPAN * apis.messages.latency.gateway.sent);
    expect(apis.responses.ttfb.gateway.sent).toBe(FIRST_BYTE_SPAN * apis.responses.latency.gateway.sent);
    for (const name of ['direct', 'proxy', 'gateway', 'translated'])
      for (const timings of [apis.messages.latency, apis.messages.ttfb]) expect(timings[name].sent).toBeGreaterThan(0);
    // The translated route's first byte against a proxy timed alone as it is, beside the pair's.
    expect(apis.messages.ttfb.proxyAlone.sent).toBe(apis.messages.ttfb.gateway.sent);
    // Its first byte's p99 from the upstream, the proxy and the translated route in one schedule.
    for (const name of ['direct', 'proxy', 'translated'])
      expect(apis.messages.ttfbInTurn[name].sent).toBe(apis.messages.ttfb.gateway.sent);
    expect(markdown).toContain('/v1/messages streamed, first byte, the three in turn');
    // …and judged from it: its added p99 is its p99 there less the upstream's there.
    const inTurn = apis.messages.ttfbInTurn;
    expect(apis.messages.firstByteAdded.translated.p99).toBeCloseTo(inTurn.translated.p99 - inTurn.direct.p99, 2);
    expect(apis.messages.firstByteAdded.proxy.p99).toBeCloseTo(inTurn.proxy.p99 - inTurn.direct.p99, 2);
    expect(markdown).toContain('the proxy and the gateway in one schedule');
    for (const name of ['direct', 'proxy', 'gateway'])
      for (const timings of [apis.responses.latency, apis.responses.ttfb])
        expect(timings[name].sent).toBeGreaterThan(0);
    expect(apis.embeddings.rounds).toHaveLength(counts.apis.throughputRounds);
    const apiFigures = report.gateway.figures.map((f: any) => f.figure).join('\n');
    for (const figure of [
      /^\/v1\/messages passed through: added latency p99/m,
      /^\/v1\/messages passed through: streamed time to first byte p99/m,
      /^\/v1\/responses passed through: added latency p99/m,
      /^\/v1\/responses passed through: streamed time to first byte p99/m,
      /^\/v1\/messages translated to chat completions: added latency p99/m,
      /^\/v1\/messages translated to chat completions: streamed first byte added p99/m,
      /^\/v1\/embeddings throughput/m,
    ])
      expect(apiFigures).toMatch(figure);
    // The failover figures (issue 52 section 5): two targets, a refused one, a dead one, routes apply.
    const failover = report.gateway.failover;
    expect(failover.setup.outageSeconds).toBe(5);
    for (const name of ['direct', 'single', 'pair', 'refused']) expect(failover.latency[name].sent).toBeGreaterThan(0);
    // Each route as many requests as the upstream alone, give or take one a round (that they take
    // turns: test/bench/open-loop.test.ts).
    for (const name of ['single', 'pair', 'refused'])
      expect(Math.abs(failover.latency[name].sent - failover.latency.direct.sent)).toBeLessThanOrEqual(
        counts.failover.rounds,
      );
    expect(failover.outage.afterKill).toBeGreaterThan(0);
    expect(failover.setup.rounds).toBe(counts.failover.rounds);
    expect(failover.apply.samples).toBe(counts.failover.applySamples);
    expect(report.gateway.figures.map((f: any) => f.figure)).toContain(
      'routes apply → every gateway on the new version, p95',
    );

    // The console's figures (issue 25), measured in Chromium through the web shell on the same store.
    expect(report.console.figures.map((f: any) => f.figure)).toEqual([
      'console: first launch on a new data folder, page to a usable demo sign-in (median)',
      'console: page load to the sign-in screen (slowest)',
      'console: first sign-in click to the Analytics screen painted with data',
      'console: screen switch to content painted, p95',
      'console: JavaScript fetched before the first paint',
      `console: request log scrolling, longest task (${report.console.setup.rowsInWindow.toLocaleString('en')} rows in the window)`,
    ]);
    for (const figure of report.console.figures) expect(isNumber(figure.value), figure.figure).toBe(true);
    expect(report.console.setup.rowsInWindow).toBeGreaterThan(ROWS * 0.9);
    const consoleCounts = counts.console;
    expect(report.console.firstLaunch.launches).toBe(consoleCounts.firstLaunches);
    expect(report.console.firstLaunch.pageToSignIn.runs).toBe(consoleCounts.firstLaunches);
    expect(report.console.startToSignIn.runs).toBe(consoleCounts.loads);
    expect(report.console.signIns).toHaveLength(consoleCounts.signIns);
    for (const times of Object.values(report.console.screenSwitch.byScreen))
      expect(times).toHaveLength(consoleCounts.switchRounds);
    expect(report.console.scroll.pages).toBe(consoleCounts.scrollPages);
    // The sign-in page fetches the entry and React, neither the screens nor the charts.
    const early = report.console.javascript.beforeFirstPaint.map((c: { file: string }) => c.file).join(' ');
    expect(early).toMatch(/index-/);
    expect(early).not.toMatch(/charts-|Screen-/);
    expect(Object.keys(report.console.screenSwitch.byScreen)).toContain('Request log');
  });
});
