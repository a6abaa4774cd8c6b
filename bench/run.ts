// npm run bench -- [--rows 1000000] [--days 30] [--runs 7] [--warmup 1] [--out bench/results]
//                  [--case-seconds 30] [--load-seconds 5] [--gateway-seconds 2×load-seconds]
//                  [--only gateway|console|retention|bytes] [--store postgres] [--outage-seconds 60] [--quick]
// Measures the current implementation against issue 6 section 2 and DuckDB on the same rows, the
// gateway against issue 32 section 3 (its other APIs against issue 53, its failover against issue
// 52 section 5), and the console in Chromium against issue 25 section 4.
// `--only gateway` seeds a small store (10,000 rows unless --rows says otherwise), loads no DuckDB
// and runs the gateway section alone (<out>/gateway.json, .md); `--only console` likewise (100,000
// rows by default) runs the console section alone (<out>/console.json, .md). The console section
// builds dist/renderer and drives Chromium (CHROMIUM_PATH, /usr/bin/chromium by default).
// `--only retention` seeds two days of rows (660,000 unless --rows says otherwise) and deletes the
// older day through the demo organisation's retention while the gateway runs (<out>/retention.json, .md).
// `--only bytes` seeds a store (1,000,000 rows by default) and reports where its bytes go against
// DuckDB's database file of the same rows (<out>/bytes-<rows>.json, .md); the full run reports it too.
// `--store postgres` seeds a store (10,000 rows unless --rows says otherwise), copies it into a
// throwaway PostgreSQL cluster (control store, then request log) and compares the two control
// stores and the two request logs, every query case beside DuckDB (<out>/postgres.json, .md).
// `--quick` takes the fewest and shortest samples of every figure (QUICK_COUNTS, and the defaults of
// --runs 1 --warmup 0 --load-seconds 1 --gateway-seconds 1 --outage-seconds 5): it shows that every
// section runs and reports, for the smoke test (test/bench/bench-smoke.test.ts); its report says
// so, and its figures are not to be read.
// Exits 0 whatever passes or fails (it is a measurement), 1 on errors.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import autocannon from 'autocannon';
import * as prettier from 'prettier';
import { ANALYTICS_WORKERS } from '../server/app.js';
import { benchCases, pickValues } from './cases.js';
import { FAILOVER_COUNTS, measureFailover } from './failover.js';
import { APIS_COUNTS, measureApis } from './gateway-apis.js';
import { GATEWAY_COUNTS, measureGateway, startBareProxy, startRemoteGateway, startUpstream } from './gateway.js';
import { measureRetention, retentionConsole, retentionMarkdown, type RetentionOnlyReport } from './retention.js';
import { CONSOLE_COUNTS, measureConsole } from './console.js';
import type { KeysLatencySamples } from './keys-latency-child.js';
import type { ApiClient } from './http.js';
import { ROOT, RssSampler, startChild, type Child } from './processes.js';
import {
  consoleOnlyConsole,
  consoleOnlyMarkdown,
  consoleTables,
  failoverMarkdown,
  failoverOnly,
  gatewayConsole,
  gatewayFigures,
  gatewayMarkdown,
  markdown,
  otherFigures,
  type CaseResult,
  type ConsoleOnlyReport,
  type Counts,
  type GatewayOnlyReport,
  type GatewayReport,
  type PostgresOnlyReport,
  type Report,
  postgresConsole,
  postgresMarkdown,
  tally,
  bytesFigure,
  bytesMarkdown,
  type BytesOnlyReport,
} from './report.js';
import { copyControlStore, measureControlStores, startBenchDatabase } from './postgres-control.js';
import { measureRequestLogs } from './postgres-request-log.js';
import { signIn, startServer, type Cleanups } from './server.js';
import { IMPORT_FILES, measureImport } from './import-files.js';
import { measureCase } from './measure-case.js';
import { loadReference, seedStore, type Reference } from './stores.js';
import { measureDiskBytes, type DiskBytes } from './disk-bytes.js';
import { percentile, round, summarise, type LoopLimits } from './stats.js';

/** The sections `--only` runs alone. */
const SECTIONS = ['gateway', 'console', 'retention', 'bytes'] as const;
const isSection = (name: string): name is (typeof SECTIONS)[number] => (SECTIONS as readonly string[]).includes(name);

interface Options {
  rows: number;
  days: number;
  runs: number;
  warmup: number;
  out: string;
  caseSeconds: number;
  loadSeconds: number;
  /** Timed seconds per target of each gateway case. */
  gatewaySeconds: number;
  /** Seconds of the failover section's outage, after its first target is killed. */
  outageSeconds: number;
  only: (typeof SECTIONS)[number] | null;
  store: 'sqlite' | 'postgres';
  /** `--quick`: QUICK_COUNTS instead of COUNTS. */
  quick: boolean;
  counts: Counts;
}

/** Each query's loop: fast ones timed up to three times `--runs`, so that their p95 is not their slowest run. */
const queryLimits = (opts: Options): LoopLimits => ({
  warmup: opts.warmup,
  runs: opts.runs,
  fastRuns: 3 * opts.runs,
  fastMs: 1000,
  maxMs: opts.caseSeconds * 1000,
});

/** How many of each measurement a run takes: each section's defaults. */
const COUNTS: Counts = {
  import: { files: IMPORT_FILES, rows: null },
  serverWarmRounds: ANALYTICS_WORKERS,
  keysThroughputRounds: 3,
  gateway: GATEWAY_COUNTS,
  apis: APIS_COUNTS,
  failover: FAILOVER_COUNTS,
  console: CONSOLE_COUNTS,
};

/** `--quick`: one sample of each figure, or the few that a figure needs to mean anything at all. */
const QUICK_COUNTS: Counts = {
  // Every row: the imported store's queries are checked against DuckDB's, which holds them all.
  import: { files: 2, rows: null },
  serverWarmRounds: 1,
  keysThroughputRounds: 1,
  gateway: { openLoopRounds: 1, throughputRounds: 1, visibilitySamples: 5, revocationTrials: 10 },
  apis: { openLoopRounds: 1, throughputRounds: 1 },
  failover: { rounds: 1, applySamples: 1 },
  console: { firstLaunches: 1, loads: 1, signIns: 1, switchRounds: 1, scrollPages: 2 },
};

/**
 * The defaults of the flags that set how many samples, or how long, every section takes; `--quick`
 * takes the fewest and shortest (`--outage-seconds` at its least), and any of them given still counts.
 */
type SampleFlag = 'runs' | 'warmup' | 'load-seconds' | 'gateway-seconds' | 'outage-seconds';
const SAMPLE_FLAGS: Record<SampleFlag, string | undefined> = {
  runs: '7',
  warmup: '1',
  'load-seconds': '5',
  // Twice --load-seconds.
  'gateway-seconds': undefined,
  'outage-seconds': '60',
};
const QUICK_SAMPLE_FLAGS: Record<SampleFlag, string> = {
  runs: '1',
  warmup: '0',
  'load-seconds': '1',
  'gateway-seconds': '1',
  'outage-seconds': '5',
};

function options(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      rows: { type: 'string' },
      days: { type: 'string' },
      runs: { type: 'string' },
      warmup: { type: 'string' },
      out: { type: 'string', default: 'bench/results' },
      'case-seconds': { type: 'string', default: '30' },
      'load-seconds': { type: 'string' },
      'gateway-seconds': { type: 'string' },
      'outage-seconds': { type: 'string' },
      only: { type: 'string' },
      store: { type: 'string', default: 'sqlite' },
      quick: { type: 'boolean', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  const whole = (name: string, text: string, min: number) => {
    const value = Number(text);
    if (!Number.isSafeInteger(value) || value < min) throw new Error(`--${name} must be a whole number ≥ ${min}`);
    return value;
  };
  const only = values.only ?? null;
  if (only !== null && !isSection(only)) throw new Error(`--only takes one of: ${SECTIONS.join(', ')}`);
  const store = values.store;
  if (store !== 'sqlite' && store !== 'postgres') throw new Error('--store takes one of: sqlite, postgres');
  if (store === 'postgres' && only !== null) throw new Error('--store postgres runs its own section: leave out --only');
  if (store === 'postgres' && values.quick) throw new Error('--quick has no fewer samples to take of --store postgres');
  const sampleFlag = (name: SampleFlag) => values[name] ?? (values.quick ? QUICK_SAMPLE_FLAGS : SAMPLE_FLAGS)[name];
  const loadSeconds = whole('load-seconds', sampleFlag('load-seconds')!, 1);
  const gatewaySeconds = sampleFlag('gateway-seconds');
  const section = store === 'postgres' ? 'postgres' : (only ?? 'all');
  return {
    rows: whole(
      'rows',
      values.rows ??
        {
          gateway: '10000',
          console: '100000',
          postgres: '10000',
          retention: '660000',
          bytes: '1000000',
          all: '1000000',
        }[section],
      1000,
    ),
    days: whole('days', values.days ?? (section === 'retention' ? '2' : '30'), 1),
    runs: whole('runs', sampleFlag('runs')!, 1),
    warmup: whole('warmup', sampleFlag('warmup')!, 0),
    out: resolve(values.out),
    caseSeconds: whole('case-seconds', values['case-seconds'], 1),
    loadSeconds,
    gatewaySeconds: gatewaySeconds === undefined ? 2 * loadSeconds : whole('gateway-seconds', gatewaySeconds, 1),
    outageSeconds: whole('outage-seconds', sampleFlag('outage-seconds')!, 5),
    only,
    store,
    quick: values.quick,
    counts: values.quick ? QUICK_COUNTS : COUNTS,
  };
}

const execFileAsync = promisify(execFile);

const log = (line: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}`);

function logServer(server: Child, gatewayUrl: string, upstream: Child): void {
  log(`server pid ${server.pid} at ${server.url}, gateway at ${gatewayUrl}, upstream at ${upstream.url}`);
}

async function main(argv: string[]): Promise<void> {
  const opts = options(argv);
  const started = Date.now();
  if (opts.quick) log('quick run (--quick): the fewest samples of every figure; its figures are not to be read');
  const temp = mkdtempSync(join(tmpdir(), 'gc-bench-'));
  const cleanups: Cleanups = [() => rmSync(temp, { recursive: true, force: true })];
  const cleanUp = async () => {
    while (cleanups.length > 0) {
      try {
        await cleanups.pop()!();
      } catch (error) {
        console.error('cleanup failed:', error);
      }
    }
  };
  const interrupted = (signal: NodeJS.Signals) => {
    log(`${signal}: stopping`);
    void cleanUp().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);

  try {
    if (opts.store === 'postgres') await postgresOnly(opts, temp, cleanups, started);
    else if (opts.only === 'gateway') await gatewayOnly(opts, temp, cleanups, started);
    else if (opts.only === 'console') await consoleOnly(opts, temp, started);
    else if (opts.only === 'retention') await retentionOnly(opts, temp, cleanups, started);
    else if (opts.only === 'bytes') await bytesOnly(opts, temp, cleanups, started);
    else await everything(opts, temp, cleanups, started);
  } finally {
    await cleanUp();
    process.removeListener('SIGINT', interrupted);
    process.removeListener('SIGTERM', interrupted);
  }
}

/**
 * The gateway section, the run's last: the bare proxy and a gateway in another process started
 * for it, the server's memory sampled meanwhile; the server and the upstream stopped after it.
 */
async function gatewaySection(
  server: Child,
  client: ApiClient,
  upstream: Child,
  gatewayUrl: string,
  dataDir: string,
  temp: string,
  opts: Options,
  cleanups: Cleanups,
): Promise<GatewayReport> {
  const proxy = await startBareProxy(temp, upstream.url);
  cleanups.push(() => proxy.stop());
  const remote = await startRemoteGateway(temp, server.url, upstream.url);
  cleanups.push(() => remote.stop());
  const sampler = new RssSampler(server.pid);
  try {
    const measured = await measureGateway({
      api: client,
      upstreamUrl: upstream.url,
      proxyUrl: proxy.url,
      gatewayUrl,
      remoteGatewayUrl: remote.url,
      telemetryPath: join(dataDir, 'telemetry.db'),
      seconds: opts.gatewaySeconds,
      counts: opts.counts.gateway,
      log,
    });
    // Messages, Responses and embeddings (issue 53) in the same run, against the same bare proxy.
    const apis = await measureApis({
      api: client,
      upstreamUrl: upstream.url,
      proxyUrl: proxy.url,
      gatewayUrl,
      telemetryPath: join(dataDir, 'telemetry.db'),
      seconds: opts.gatewaySeconds,
      counts: opts.counts.apis,
      log,
    });
    const failover = await measureFailover({
      api: client,
      dataDir,
      temp,
      upstreamUrl: upstream.url,
      gatewayUrl,
      remoteGatewayUrl: remote.url,
      outageSeconds: opts.outageSeconds,
      seconds: opts.gatewaySeconds,
      counts: opts.counts.failover,
      log,
    });
    sampler.stop();
    const partial = {
      ...measured,
      apis,
      failover,
      memory: { peakRssAnonMiB: round(sampler.peakAnonBytes / 2 ** 20, 1), samples: sampler.samples },
    };
    return { ...partial, figures: gatewayFigures(partial) };
  } finally {
    sampler.stop();
    await proxy.stop();
    await remote.stop();
    await server.stop();
    await upstream.stop();
  }
}

/** `--only gateway`: a small store, no DuckDB, the gateway section alone. */
async function gatewayOnly(opts: Options, temp: string, cleanups: Cleanups, started: number): Promise<void> {
  const dataDir = join(temp, 'data');
  log(`seeding ${opts.rows} rows over ${opts.days} days into ${dataDir}`);
  const seeded = await seedStore(dataDir, { rows: opts.rows, days: opts.days }, log);
  const upstream = await startUpstream(temp);
  cleanups.push(() => upstream.stop());
  const { server, gatewayUrl } = await startServer(dataDir, temp, upstream.url, cleanups);
  logServer(server, gatewayUrl, upstream);
  const client = await signIn(server);
  const gateway = await gatewaySection(server, client, upstream, gatewayUrl, dataDir, temp, opts, cleanups);

  const report: GatewayOnlyReport = { ...sectionOnly(seeded.rows, started, opts.quick, gateway.figures), gateway };
  await writeReport(opts.out, 'gateway', report, gatewayMarkdown(report), gatewayConsole(report));
  // The failover figures alone as well, beside the gateway's added p99 and first byte p99 of the same run.
  const failover = failoverOnly(report);
  await writeReport(opts.out, 'failover', failover, failoverMarkdown(failover), tally(failover));
}

/** `--only retention`: two days of rows, the older one deleted by retention while the gateway runs. */
async function retentionOnly(opts: Options, temp: string, cleanups: Cleanups, started: number): Promise<void> {
  const dataDir = join(temp, 'data');
  log(`seeding ${opts.rows} rows over ${opts.days} days into ${dataDir}`);
  const seeded = await seedStore(dataDir, { rows: opts.rows, days: opts.days }, log);
  const upstream = await startUpstream(temp);
  cleanups.push(() => upstream.stop());
  const { server, gatewayUrl } = await startServer(dataDir, temp, upstream.url, cleanups);
  logServer(server, gatewayUrl, upstream);
  const retention = await measureRetention({
    api: await signIn(server),
    server,
    gatewayUrl,
    telemetryPath: join(dataDir, 'telemetry.db'),
    // The deletion takes minutes: a baseline of a few seconds would judge its p99 on too few requests.
    baselineSeconds: Math.max(opts.gatewaySeconds, opts.quick ? 1 : 30),
    now: Date.now,
    log,
  });
  const report: RetentionOnlyReport = {
    ...sectionOnly(seeded.rows, started, opts.quick, retention.figures),
    retention,
  };
  await writeReport(opts.out, 'retention', report, retentionMarkdown(report), retentionConsole(report));
}

/** A store seeded with `opts.rows` rows, and the same rows in DuckDB (closed at cleanup). */
async function seededWithReference(opts: Options, temp: string, cleanups: Cleanups) {
  const dataDir = join(temp, 'data');
  log(`seeding ${opts.rows} rows over ${opts.days} days into ${dataDir}`);
  const seeded = await seedStore(dataDir, { rows: opts.rows, days: opts.days }, log);
  log('loading the same rows into DuckDB');
  const reference = await loadReference(join(dataDir, 'telemetry.db'));
  cleanups.push(() => reference.close());
  return { dataDir, seeded, reference };
}

/** `--store postgres`: a store served from SQLite and from PostgreSQL, compared. */
async function postgresOnly(opts: Options, temp: string, cleanups: Cleanups, started: number): Promise<void> {
  const { dataDir, seeded, reference } = await seededWithReference(opts, temp, cleanups);
  const cases = benchCases(await pickValues(reference.connection));
  const database = await startBenchDatabase(cleanups);
  const pgDir = await copyControlStore(dataDir, temp, database.url, log);
  // First: the control section's gateway load adds rows to the request logs.
  const requestLog = await measureRequestLogs({
    dataDir,
    pgDir,
    databaseUrl: database.url,
    rows: seeded.rows,
    temp,
    reference,
    cases,
    limits: queryLimits(opts),
    log,
    cleanups,
  });
  const control = await measureControlStores({
    dataDir,
    pgDir,
    temp,
    database,
    seconds: opts.loadSeconds,
    log,
    cleanups,
  });
  const verdicts = [...control.figures, ...requestLog.figures, ...requestLog.cases];
  const report: PostgresOnlyReport = { ...sectionOnly(seeded.rows, started, false, verdicts), control, requestLog };
  await writeReport(opts.out, 'postgres', report, postgresMarkdown(report), postgresConsole(report));
}

/**
 * Every query case again on the store `admin import-requests` filled with the same rows (issue 54:
 * a store filled by the import, not by the demo's seeder), each judged against DuckDB's timing of
 * the seeded run: the rows are the same.
 */
async function importedStoreCases(
  importedDir: string,
  temp: string,
  upstreamUrl: string,
  cases: ReturnType<typeof benchCases>,
  seededResults: readonly CaseResult[],
  reference: Reference,
  opts: Options,
): Promise<CaseResult[]> {
  log('the same queries on the imported store');
  const own: Cleanups = [];
  try {
    const { server } = await startServer(importedDir, temp, upstreamUrl, own, { name: 'imported' });
    const client = await signIn(server);
    for (let round = 0; round < opts.counts.serverWarmRounds; round++) {
      for (const benchCase of cases) await client.get(benchCase.path);
    }
    const limits = queryLimits(opts);
    const results: CaseResult[] = [];
    for (const [i, benchCase] of cases.entries()) {
      const duckdb = seededResults[i]!.duckdb;
      const result = await measureCase(benchCase, client, reference, limits, results, { duckdb });
      results.push(result);
      log(
        `imported ${i + 1}/${cases.length} ${benchCase.id}: p50 ${result.server.p50} ms, p95 ${result.server.p95} ms` +
          `${result.check?.ok === false ? ' (ROW COUNT MISMATCH)' : ''}`,
      );
    }
    return results;
  } finally {
    while (own.length > 0) await own.pop()!();
  }
}

/** Where the bytes of the seeded store go, against DuckDB's file of its rows (before any server writes). */
async function diskBytes(dataDir: string, rows: number, reference: Reference): Promise<DiskBytes> {
  log("measuring where the bytes go (dbstat) and DuckDB's database file of the same rows");
  const bytes = await measureDiskBytes(join(dataDir, 'telemetry.db'), rows, reference.connection);
  log(`${bytes.sqlitePerRow.toFixed(0)} B/row on SQLite, ${bytes.duckdbPerRow.toFixed(0)} B/row in DuckDB's file`);
  return bytes;
}

/** `--only bytes`: a store of the given rows, measured where its bytes go; no server. */
async function bytesOnly(opts: Options, temp: string, cleanups: Cleanups, started: number): Promise<void> {
  const { dataDir, seeded, reference } = await seededWithReference(opts, temp, cleanups);
  const bytes = await diskBytes(dataDir, seeded.rows, reference);
  const report: BytesOnlyReport = { ...sectionOnly(seeded.rows, started, false, [bytesFigure(bytes)]), bytes };
  await writeReport(opts.out, `bytes-${opts.rows}`, report, bytesMarkdown(report), tally(report));
}

/** `--only console`: a store of its own, no DuckDB, no server of the bench's: the console section alone. */
async function consoleOnly(opts: Options, temp: string, started: number): Promise<void> {
  const dataDir = join(temp, 'data');
  log(`seeding ${opts.rows} rows over ${opts.days} days into ${dataDir}`);
  const seeded = await seedStore(dataDir, { rows: opts.rows, days: opts.days }, log);
  const measured = await measureConsole({ temp, dataDir, days: opts.days, counts: opts.counts.console, log });
  const report: ConsoleOnlyReport = {
    ...sectionOnly(seeded.rows, started, opts.quick, measured.figures),
    console: measured,
  };
  await writeReport(opts.out, 'console', report, consoleOnlyMarkdown(report), consoleOnlyConsole(report));
}

/** What a report of one section (`--only`) says besides the section: the run, and its verdicts. */
function sectionOnly(
  rows: number,
  started: number,
  quick: boolean,
  figures: { pass: boolean | null }[],
): Omit<GatewayOnlyReport, 'gateway'> {
  const verdicts = figures.map((f) => f.pass).filter((p) => p !== null);
  return {
    meta: {
      quick,
      rows,
      startedAt: new Date(started).toISOString(),
      seconds: round((Date.now() - started) / 1000, 1),
      node: process.version,
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    },
    passed: verdicts.filter(Boolean).length,
    failed: verdicts.filter((p) => !p).length,
  };
}

/** <out>/<name>.json and .md, formatted as `npm run lint` expects; the tables printed too. */
async function writeReport(
  out: string,
  name: string,
  report: object,
  markdown: string,
  terminal: string,
): Promise<void> {
  mkdirSync(out, { recursive: true });
  const base = join(out, name);
  writeFileSync(base + '.json', await formatted(base + '.json', JSON.stringify(report, null, 2)));
  writeFileSync(base + '.md', await formatted(base + '.md', markdown));
  console.log('\n' + terminal + '\n');
  log(`wrote ${base}.json and ${base}.md (relative to ${ROOT})`);
}

async function everything(opts: Options, temp: string, cleanups: Cleanups, started: number): Promise<void> {
  const dataDir = join(temp, 'data');
  log(`seeding ${opts.rows} rows over ${opts.days} days into ${dataDir}`);
  const seeded = await seedStore(dataDir, { rows: opts.rows, days: opts.days }, log);
  log(`seeded in ${seeded.seconds.toFixed(1)} s (${Math.round(seeded.rowsPerSecond)} rows/s)`);
  const importRows = Math.min(seeded.rows, opts.counts.import.rows ?? seeded.rows);
  const { storeDir: importedDir, ...importFiles } = await measureImport({
    dataDir,
    temp,
    rows: importRows,
    files: opts.counts.import.files,
    log,
    // The imported store's queries are timed too, when it holds every row DuckDB does.
    keep: importRows === seeded.rows,
  });
  if (importedDir !== null) cleanups.push(() => rmSync(importedDir, { recursive: true, force: true }));
  log(
    `imported ${importFiles.files} files in ${importFiles.importSeconds.toFixed(1)} s ` +
      `(${Math.round(importFiles.importRowsPerSecond)} rows/s); DuckDB read_json ` +
      `${importFiles.duckdbSeconds.toFixed(1)} s (${Math.round(importFiles.duckdbRowsPerSecond)} rows/s)`,
  );

  log('loading the same rows into DuckDB');
  const reference = await loadReference(join(dataDir, 'telemetry.db'));
  cleanups.push(() => reference.close());
  if (reference.rows !== seeded.rows) throw new Error(`DuckDB holds ${reference.rows} rows, not ${seeded.rows}`);
  log(`DuckDB loaded in ${reference.seconds.toFixed(1)} s`);
  const bytes = await diskBytes(dataDir, seeded.rows, reference);
  const picks = await pickValues(reference.connection);
  const cases = benchCases(picks);

  // Idle until the gateway section; the server needs its address when it starts.
  const upstream = await startUpstream(temp);
  cleanups.push(() => upstream.stop());
  const { server, gatewayUrl } = await startServer(dataDir, temp, upstream.url, cleanups);
  logServer(server, gatewayUrl, upstream);
  const sampler = new RssSampler(server.pid);
  cleanups.push(() => sampler.stop());
  const client = await signIn(server);

  // A console's server is warm: without this the first cases timed would also pay for
  // compiling the routes' code and each analytics worker's first statements.
  log(
    `warming the server: every query ${opts.counts.serverWarmRounds} time(s), ${ANALYTICS_WORKERS} analytics workers`,
  );
  for (let round = 0; round < opts.counts.serverWarmRounds; round++) {
    for (const benchCase of cases) await client.get(benchCase.path);
  }

  const limits = queryLimits(opts);
  const results: CaseResult[] = [];
  for (const [i, benchCase] of cases.entries()) {
    const result = await measureCase(benchCase, client, reference, limits, results);
    results.push(result);
    log(
      `${i + 1}/${cases.length} ${benchCase.id}: p50 ${result.server.p50} ms, p95 ${result.server.p95} ms; ` +
        `DuckDB p50 ${result.duckdb.p50} ms${result.check?.ok === false ? ' (ROW COUNT MISMATCH)' : ''}`,
    );
  }

  const importedCases =
    importedDir === null
      ? null
      : await importedStoreCases(importedDir, temp, upstream.url, cases, results, reference, opts);

  log('GET /keys throughput against bare Fastify');
  const keysAnswer = join(temp, 'keys-answer.json');
  writeFileSync(keysAnswer, JSON.stringify(await recordedAnswer(client, '/keys')));
  const bare = await startChild('bench/bare-fastify.ts', [keysAnswer], {
    logPath: join(temp, 'bare.log'),
    ready: /^listening at (http:\/\/\S+)$/m,
  });
  cleanups.push(() => bare.stop());
  const keysThroughput = await throughput(client, bare, opts.loadSeconds, opts.counts.keysThroughputRounds);
  await bare.stop();

  log('GET /keys p99 idle and under summary load');
  const keysLatency = await latencyUnderLoad(client, opts.loadSeconds);

  // The server's memory figure is the control plane's: taken before the gateway's load.
  sampler.stop();
  const memory = {
    peakRssAnonBytes: sampler.peakAnonBytes,
    peakRssAnonMiB: round(sampler.peakAnonBytes / 2 ** 20, 1),
    peakRssFileMiB: round(sampler.peakFileBytes / 2 ** 20, 1),
    samples: sampler.samples,
  };

  const gateway = await gatewaySection(server, client, upstream, gatewayUrl, dataDir, temp, opts, cleanups);
  // Last, once the bench's server has stopped: the console's embedded server opens the same store.
  const consoleSection = await measureConsole({
    temp,
    dataDir,
    days: opts.days,
    counts: opts.counts.console,
    log,
  });

  const partial: Omit<Report, 'figures' | 'passed' | 'failed'> = {
    meta: {
      quick: opts.quick,
      counts: opts.counts,
      rows: seeded.rows,
      days: opts.days,
      runs: opts.runs,
      fast: { runs: limits.fastRuns, ms: limits.fastMs },
      warmup: opts.warmup,
      caseSeconds: opts.caseSeconds,
      loadSeconds: opts.loadSeconds,
      startedAt: new Date(started).toISOString(),
      seconds: round((Date.now() - started) / 1000, 1),
      node: process.version,
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
      picks: { ...picks },
    },
    import: { rows: seeded.rows, seconds: round(seeded.seconds, 2), rowsPerSecond: round(seeded.rowsPerSecond, 0) },
    importFiles,
    duckdbLoad: { rows: reference.rows, seconds: round(reference.seconds, 2) },
    disk: { telemetryBytes: seeded.telemetryBytes, bytesPerRow: round(seeded.bytesPerRow, 1) },
    bytes,
    cases: results,
    importedCases,
    keysThroughput,
    keysLatency,
    memory,
    gateway,
    console: consoleSection,
  };
  const figures = otherFigures(partial);
  const verdicts = [
    ...results.map((r) => r.pass),
    ...(importedCases ?? []).map((r) => r.pass),
    ...figures.map((f) => f.pass),
    ...gateway.figures.map((f) => f.pass),
    ...consoleSection.figures.map((f) => f.pass),
  ].filter((p) => p !== null);
  const report: Report = {
    ...partial,
    figures,
    passed: verdicts.filter(Boolean).length,
    failed: verdicts.filter((p) => !p).length,
  };

  mkdirSync(opts.out, { recursive: true });
  const base = join(opts.out, String(seeded.rows));
  // Formatted as `npm run lint` expects, so that the results can be committed as written.
  writeFileSync(base + '.json', await formatted(base + '.json', JSON.stringify(report, null, 2)));
  writeFileSync(base + '.md', await formatted(base + '.md', markdown(report)));
  console.log('\n' + consoleTables(report) + '\n');
  log(`wrote ${base}.json and ${base}.md (relative to ${ROOT})`);
}

async function formatted(path: string, text: string): Promise<string> {
  const config = (await prettier.resolveConfig(path)) ?? {};
  return prettier.format(text, { ...config, filepath: path });
}

/**
 * Requests per second of GET /keys, of a bare Fastify hello-world and of bare Fastify sending
 * GET /keys' own answer, 50 connections each (as issue 31 measured), each run after a short
 * warm-up. They alternate for `rounds` rounds and the medians are compared: on a shared VM any
 * one alone moves by a tenth from one minute to the next.
 */
async function throughput(
  client: ApiClient,
  bare: Child,
  seconds: number,
  rounds: number,
): Promise<Report['keysThroughput']> {
  const connections = 50;
  const run = async (url: string, headers: Record<string, string>) => {
    await autocannon({ url, connections, duration: 1, headers });
    const result = await autocannon({ url, connections, duration: seconds, headers });
    if (result.errors > 0 || result.non2xx > 0)
      throw new Error(`autocannon ${url}: ${result.errors} errors, ${result.non2xx} non-2xx answers`);
    return result.requests.average;
  };
  const runs: { bareFastifyRps: number; sameBytesRps: number; keysRps: number }[] = [];
  for (let i = 0; i < rounds; i++) {
    const bareFastifyRps = await run(`${bare.url}/hello`, {});
    const sameBytesRps = await run(`${bare.url}/same`, {});
    const keysRps = await run(`${client.baseUrl}/keys`, { cookie: client.cookie });
    runs.push({ bareFastifyRps, sameBytesRps, keysRps });
  }
  const keysRps = summarise(runs.map((r) => r.keysRps)).p50;
  const bareFastifyRps = summarise(runs.map((r) => r.bareFastifyRps)).p50;
  const sameBytesRps = summarise(runs.map((r) => r.sameBytesRps)).p50;
  return {
    keysRps,
    bareFastifyRps,
    ratio: round(keysRps / bareFastifyRps, 3),
    sameBytesRps,
    sameBytesRatio: round(sameBytesRps / bareFastifyRps, 3),
    seconds,
    connections,
    rounds: runs,
  };
}

/** An answer of the server as bare Fastify is to send it again: its body and its own headers. */
async function recordedAnswer(
  client: ApiClient,
  path: string,
): Promise<{ headers: Record<string, string>; body: string }> {
  const answer = await fetch(client.baseUrl + path, { headers: { cookie: client.cookie } });
  if (answer.status !== 200) throw new Error(`GET ${path}: ${answer.status}`);
  // What Node or Fastify set by themselves stays theirs.
  const theirs = new Set(['connection', 'keep-alive', 'date', 'content-length', 'content-type', 'transfer-encoding']);
  const headers = Object.fromEntries([...answer.headers].filter(([name]) => !theirs.has(name)));
  return { headers, body: await answer.text() };
}

/**
 * p99 of GET /keys one request at a time, idle and then while 30-day summaries run in parallel
 * in a loop, timed by a client in a process of its own (keys-latency-child.ts).
 */
async function latencyUnderLoad(client: ApiClient, seconds: number): Promise<Report['keysLatency']> {
  const { stdout } = await execFileAsync(
    process.execPath,
    ['--import', 'tsx', 'bench/keys-latency-child.ts', client.baseUrl, String(seconds)],
    { cwd: ROOT, env: { ...process.env, BENCH_COOKIE: client.cookie }, maxBuffer: 16 * 2 ** 20 },
  );
  const samples = JSON.parse(stdout) as KeysLatencySamples;
  const p99 = (ms: number[]) =>
    round(
      percentile(
        [...ms].sort((a, b) => a - b),
        99,
      ),
      3,
    );
  const idleP99 = p99(samples.idle);
  const loadedP99 = p99(samples.loaded);
  return {
    idleP99,
    loadedP99,
    ratio: round(loadedP99 / idleP99, 2),
    idleRequests: samples.idle.length,
    loadedRequests: samples.loaded.length,
    parallelSummaries: samples.parallelSummaries,
    summariesCompleted: samples.summariesCompleted,
  };
}

main(process.argv.slice(2)).then(
  () => {
    process.exitCode = 0;
  },
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exitCode = 1;
  },
);
