import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { runAdmin } from '../server/admin/commands.js';
import { buildIndexes, takeEmptyRequests } from '../server/stores/telemetry/postgres/empty-store.js';
import { PgRequestLog } from '../server/stores/telemetry/postgres/request-log.js';
import type { BenchCase, CaseKind } from './cases.js';
import { sqliteObjects } from './disk-bytes.js';
import { startUpstream } from './gateway.js';
import type { ApiClient } from './http.js';
import { measureCase } from './measure-case.js';
import { fmt, type CaseResult, type Figure, type PostgresRequestLogReport } from './report.js';
import { signIn, startServer, type Cleanups } from './server.js';
import type { LoopLimits, Timing } from './stats.js';
import type { Reference } from './stores.js';

/**
 * The request log on PostgreSQL against SQLite, on the same rows: the copy of `telemetry.db`
 * into PostgreSQL (`admin migrate-store --telemetry-url`, an import: its rows a second), then
 * every query case through both servers' HTTP, each row count checked against DuckDB's.
 */

/** Issue 28's targets on PostgreSQL: analytics p95 ≤ 100 ms, the request log's first page p95 ≤ 50 ms. */
function judgePostgres(kind: CaseKind, server: Timing, _duckdb: Timing, firstPage: Timing | undefined) {
  switch (kind) {
    case 'analytics':
    case 'dashboard':
      return { target: 'p95 ≤ 100 ms', pass: server.p95 <= 100 };
    case 'log':
    case 'log-duckdb':
      return { target: 'p95 ≤ 50 ms', pass: server.p95 <= 50 };
    case 'log-offset':
      return {
        target: `p50 ≤ 2× first page p50 (${firstPage ? fmt(firstPage.p50 * 2) : '?'} ms)`,
        pass: firstPage !== undefined && server.p50 <= 2 * firstPage.p50,
      };
    case 'search':
      return { target: 'p95 ≤ 250 ms (as on SQLite)', pass: server.p95 <= 250 };
  }
}

export async function measureRequestLogs(o: {
  dataDir: string;
  pgDir: string;
  databaseUrl: string;
  rows: number;
  temp: string;
  reference: Reference;
  cases: BenchCase[];
  limits: LoopLimits;
  log: (line: string) => void;
  cleanups: Cleanups;
}): Promise<PostgresRequestLogReport> {
  o.log(`copying the request log into PostgreSQL (admin migrate-store --telemetry-url): ${o.rows} rows`);
  const started = performance.now();
  // Its progress in the log, a line a million rows, so that the time the rows take is told
  // apart from the indexes, rollups and statistics after them.
  const progress = (line: string) => {
    const written = /^(\d+) request\(s\) written \(/.exec(line);
    if (!written || Number(written[1]) % 1_000_000 === 0) o.log(`  ${line}`);
  };
  const code = await runAdmin(['migrate-store', '--data-dir', o.dataDir, '--telemetry-url', o.databaseUrl], progress);
  if (code !== 0) throw new Error(`migrate-store --telemetry-url exited with ${code}`);
  const importSeconds = (performance.now() - started) / 1000;
  o.log(`copied in ${importSeconds.toFixed(1)} s (${Math.round(o.rows / importSeconds)} rows/s)`);
  const bytes = { postgres: await postgresLogBytes(o.databaseUrl), sqlite: sqliteLogBytes(o.dataDir, o.rows) };
  o.log(`${fmt(bytes.postgres / o.rows)} B/row on PostgreSQL, ${fmt(bytes.sqlite / o.rows)} on SQLite`);
  o.log('PostgreSQL alone: the same rows by COPY from a file into an empty database, its indexes built after');
  const floorSeconds = await bulkLoadSeconds(o.databaseUrl);
  o.log(
    `PostgreSQL alone in ${floorSeconds.toFixed(1)} s (${Math.round(o.rows / floorSeconds)} rows/s): ` +
      `the copy took ${(importSeconds / floorSeconds).toFixed(2)}× as long`,
  );

  const upstream = await startUpstream(o.temp);
  o.cleanups.push(() => upstream.stop());
  const env = { SVC_DATABASE_URL: o.databaseUrl, SVC_TELEMETRY_URL: o.databaseUrl };
  const servers = {
    sqlite: (await startServer(o.dataDir, o.temp, upstream.url, o.cleanups, { name: 'log-sqlite' })).server,
    postgres: (await startServer(o.pgDir, o.temp, upstream.url, o.cleanups, { name: 'log-postgres', env })).server,
  };
  const clients: Record<keyof typeof servers, ApiClient> = {
    sqlite: await signIn(servers.sqlite),
    postgres: await signIn(servers.postgres),
  };
  o.log('warming both servers: every query twice');
  for (const client of Object.values(clients)) {
    for (let round = 0; round < 2; round++) for (const benchCase of o.cases) await client.get(benchCase.path);
  }

  const sqlite: CaseResult[] = [];
  const postgres: CaseResult[] = [];
  for (const [i, benchCase] of o.cases.entries()) {
    const onSqlite = await measureCase(benchCase, clients.sqlite, o.reference, o.limits, sqlite);
    sqlite.push(onSqlite);
    const onPostgres = await measureCase(benchCase, clients.postgres, o.reference, o.limits, postgres, {
      judge: judgePostgres,
      duckdb: onSqlite.duckdb,
    });
    postgres.push(onPostgres);
    o.log(
      `${i + 1}/${o.cases.length} ${benchCase.id}: PostgreSQL p50 ${onPostgres.server.p50} ms, p95 ` +
        `${onPostgres.server.p95} ms; SQLite p50 ${onSqlite.server.p50} ms; DuckDB p50 ${onSqlite.duckdb.p50} ms` +
        `${onPostgres.check?.ok === false ? ' (ROW COUNT MISMATCH)' : ''}`,
    );
  }
  for (const server of Object.values(servers)) await server.stop();
  await upstream.stop();

  const rowsPerSecond = Math.round(o.rows / importSeconds);
  const floorRowsPerSecond = Math.round(o.rows / floorSeconds);
  const figures: Figure[] = [
    {
      figure: 'telemetry.db copied into PostgreSQL (an import)',
      value: rowsPerSecond,
      unit: 'rows/s',
      reference: `${o.rows} rows in ${fmt(importSeconds)} s`,
      target: '≥ 50,000 rows/s',
      pass: rowsPerSecond >= 50_000,
    },
    {
      figure: 'PostgreSQL alone: the same rows by COPY from a file, its indexes built after',
      value: floorRowsPerSecond,
      unit: 'rows/s',
      reference: `${o.rows} rows in ${fmt(floorSeconds)} s`,
      target: '–',
      pass: null,
    },
    {
      figure: 'bytes per row on PostgreSQL (rows, indexes, rollups, search)',
      value: Number(fmt(bytes.postgres / o.rows)),
      unit: 'B/row',
      reference: `SQLite ${fmt(bytes.sqlite / o.rows)} B/row of the same rows (dbstat, checkpointed)`,
      target: 'reported beside SQLite',
      pass: null,
    },
    {
      figure: "the copy's time ÷ PostgreSQL alone",
      value: Number((importSeconds / floorSeconds).toPrecision(3)),
      unit: '×',
      reference: `${fmt(importSeconds)} s ÷ ${fmt(floorSeconds)} s`,
      target: '≤ 1.5×',
      pass: importSeconds / floorSeconds <= 1.5,
      asIs: true,
    },
  ];
  const cases = o.cases.map((benchCase, i) => ({
    id: benchCase.id,
    kind: benchCase.kind,
    postgres: postgres[i]!.server,
    sqlite: sqlite[i]!.server,
    duckdb: sqlite[i]!.duckdb,
    target: postgres[i]!.target,
    pass: postgres[i]!.pass && postgres[i]!.check?.ok !== false,
    ...(postgres[i]!.check ? { check: postgres[i]!.check } : {}),
  }));
  return { importSeconds, floorSeconds, rowsPerSecond, cases, figures };
}

/** The request log's tables on PostgreSQL with their indexes and TOAST, after a VACUUM (ANALYZE) of each. */
async function postgresLogBytes(databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    // The day tables (requests_YYYYMMDD) and request_ids hold the rows; the partitioned parent nothing.
    const tables = `SELECT c.oid, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = current_schema() AND c.relkind = 'r'
        AND (c.relname LIKE 'requests\\_%' OR c.relname = 'request_ids' OR c.relname LIKE 'rollup\\_%'
          OR c.relname LIKE 'search\\_%')`;
    for (const { relname } of (await client.query<{ relname: string }>(tables)).rows) {
      await client.query(`VACUUM (ANALYZE) ${client.escapeIdentifier(relname)}`);
    }
    const sum = await client.query<{ bytes: string }>(
      `SELECT COALESCE(SUM(pg_total_relation_size(t.oid)), 0) AS bytes FROM (${tables}) AS t`,
    );
    return Number(sum.rows[0]!.bytes);
  } finally {
    await client.end();
  }
}

/** The same on SQLite: every table and index of `telemetry.db`. */
function sqliteLogBytes(dataDir: string, rows: number): number {
  return sqliteObjects(join(dataDir, 'telemetry.db'), rows).reduce((sum, object) => sum + object.bytes, 0);
}

/**
 * Seconds PostgreSQL itself takes to load the rows `databaseUrl`'s request log holds into an
 * empty one on the same cluster, as the import does it (`takeEmptyRequests`, `buildIndexes`) but
 * by the server's own COPY from a file: what any importer is bound by, timed in the same run
 * because the machine's speed varies several-fold between days.
 */
async function bulkLoadSeconds(databaseUrl: string): Promise<number> {
  // Server-side COPY: the file is the server's user's to write and read (postgres, when the
  // bench runs as root), and the run's temp folder is root's alone.
  const folder = mkdtempSync(join(tmpdir(), 'gc-bench-copy-'));
  chmodSync(folder, 0o777);
  const file = join(folder, 'requests.copy');
  const idsFile = join(folder, 'request-ids.copy');
  const referenceUrl = new URL(databaseUrl);
  referenceUrl.pathname = '/floor_reference';
  const bench = new pg.Client({ connectionString: databaseUrl });
  await bench.connect();
  try {
    // A partitioned table is copied out through a query.
    await bench.query(`COPY (SELECT * FROM requests) TO ${bench.escapeLiteral(file)}`);
    await bench.query(`COPY request_ids TO ${bench.escapeLiteral(idsFile)}`);
    const days = await bench.query<{ day: number }>(
      'SELECT DISTINCT floor(ts / 86400000.0)::int8 AS day FROM request_ids',
    );
    // Left by a run killed part-way, if any.
    await bench.query('DROP DATABASE IF EXISTS floor_reference');
    await bench.query('CREATE DATABASE floor_reference');
    try {
      await (await PgRequestLog.open(referenceUrl.toString())).close();
      const client = new pg.Client({ connectionString: referenceUrl.toString() });
      await client.connect();
      try {
        const started = performance.now();
        await client.query('BEGIN');
        const indexes = await takeEmptyRequests(client);
        if (indexes === null) throw new Error('the reference database did not give its empty requests table');
        // The same tables as the import's: the rows' day tables, their ids, the rows.
        await client.query('SELECT request_day_partition(day) FROM unnest($1::int8[]) AS d (day)', [
          days.rows.map((row) => row.day),
        ]);
        await client.query(`COPY request_ids FROM ${client.escapeLiteral(idsFile)}`);
        await client.query(`COPY requests FROM ${client.escapeLiteral(file)}`);
        await buildIndexes(client, indexes);
        await client.query('COMMIT');
        await client.query('VACUUM (ANALYZE) requests');
        return (performance.now() - started) / 1000;
      } finally {
        await client.end();
      }
    } finally {
      await bench.query('DROP DATABASE floor_reference');
    }
  } finally {
    await bench.end();
    rmSync(folder, { recursive: true, force: true });
  }
}
