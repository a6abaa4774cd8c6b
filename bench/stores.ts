import { existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import {
  BIGINT,
  DOUBLE,
  DuckDBDataChunk,
  DuckDBInstance,
  INTEGER,
  VARCHAR,
  type DuckDBConnection,
  type DuckDBType,
  type DuckDBValue,
} from '@duckdb/node-api';
import { resolveConfig } from '../server/config.js';
import { importReport } from '../server/admin/import-report.js';
import { seedDemo } from '../server/demo/seed.js';
import { loadOrCreateSecret } from '../server/security/secret-files.js';
import { SqliteControlStore } from '../server/stores/control/store.js';
import { REQUEST_COLUMNS } from '../server/stores/telemetry/request-record.js';

export interface Seeded {
  rows: number;
  seconds: number;
  rowsPerSecond: number;
  telemetryBytes: number;
  bytesPerRow: number;
}

/**
 * Seeds the demo organisation with `rows` request-log rows through the server's own
 * write path (demo generator, `recordRequests`, every index), timing the whole step.
 */
export async function seedStore(
  dataDir: string,
  options: { rows: number; days: number },
  log: (line: string) => void,
): Promise<Seeded> {
  const config = resolveConfig({ dataDir, passwordCost: 10 });
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const control = SqliteControlStore.open(join(config.dataDir, 'control.db'), {
    accessSeconds: config.accessTtlSeconds,
    refreshSeconds: config.refreshTtlSeconds,
  });
  try {
    const secrets = {
      vaultMasterKey: loadOrCreateSecret(config.dataDir, 'vault-master.key', undefined),
      keyHashSecret: loadOrCreateSecret(config.dataDir, 'key-hash.secret', undefined),
    };
    const started = performance.now();
    const seeded = await seedDemo(
      control,
      secrets,
      config,
      { rows: options.rows, days: options.days, seed: 1 },
      // A line a minute or so at ten million rows: the seeding is most of the run.
      { report: importReport(log), every: 1_000_000 },
    );
    const seconds = (performance.now() - started) / 1000;
    if (!seeded) throw new Error('the data folder already holds the demo organisation');
    const telemetryBytes = fileBytes(config.telemetryDbPath) + fileBytes(config.telemetryDbPath + '-wal');
    return {
      rows: seeded.rows,
      seconds,
      rowsPerSecond: seeded.rows / seconds,
      telemetryBytes,
      bytesPerRow: telemetryBytes / seeded.rows,
    };
  } finally {
    await control.close();
  }
}

function fileBytes(path: string): number {
  return existsSync(path) ? statSync(path).size : 0;
}

const BIGINT_COLUMNS = new Set(['ts', 'cost_micro']);
const INTEGER_COLUMNS = new Set([
  'status',
  'stream',
  'prompt_tokens',
  'tokens_generated',
  'cache_creation_input_tokens',
  'cache_read_input_tokens',
  'total_tokens',
  'tokens_estimated',
  'is_byok',
]);
const DOUBLE_COLUMNS = new Set(['total_ms', 'ttft_ms', 'tpot_ms', 'pre_dispatch_ms']);

function duckType(column: string): DuckDBType {
  if (BIGINT_COLUMNS.has(column)) return BIGINT;
  if (INTEGER_COLUMNS.has(column)) return INTEGER;
  if (DOUBLE_COLUMNS.has(column)) return DOUBLE;
  return VARCHAR;
}

export interface Reference {
  connection: DuckDBConnection;
  rows: number;
  seconds: number;
  close(): void;
}

/** DuckDB's standard vector size: one data chunk per batch. */
const BATCH = 2048;

/**
 * The same rows in an in-memory DuckDB (threads=2), read back from the telemetry file
 * in batches and appended a data chunk at a time. Metadata stays as JSON text and is
 * also parsed once into `meta_terms` (its keys and values), the columnar form that the
 * reference search reads.
 */
export async function loadReference(telemetryPath: string): Promise<Reference> {
  const started = performance.now();
  const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
  let connection: DuckDBConnection | null = null;
  const sqlite = new BetterSqlite3(telemetryPath, { readonly: true, fileMustExist: true });
  try {
    connection = await instance.connect();
    const types = REQUEST_COLUMNS.map(duckType);
    const columnsSql = REQUEST_COLUMNS.map((c, i) => `${c} ${types[i]!.toString()}`).join(', ');
    await connection.run(`CREATE TABLE requests_raw (${columnsSql})`);
    const appender = await connection.createAppender('requests_raw');
    const columns: DuckDBValue[][] = REQUEST_COLUMNS.map(() => []);
    let rows = 0;
    const flush = () => {
      if (columns[0]!.length === 0) return;
      const chunk = DuckDBDataChunk.create(types, columns[0]!.length);
      chunk.setColumns(columns);
      appender.appendDataChunk(chunk);
      for (const column of columns) column.length = 0;
    };
    const select = sqlite.prepare(`SELECT ${REQUEST_COLUMNS.join(', ')} FROM requests`).raw(true);
    for (const row of select.iterate() as IterableIterator<unknown[]>) {
      for (let i = 0; i < row.length; i++) {
        const value = row[i];
        columns[i]!.push(BIGINT_COLUMNS.has(REQUEST_COLUMNS[i]!) ? BigInt(value as number) : (value as DuckDBValue));
      }
      rows++;
      if (columns[0]!.length === BATCH) flush();
    }
    flush();
    appender.flushSync();
    appender.closeSync();
    await connection.run(
      `CREATE TABLE requests AS SELECT *,
        list_concat(json_keys(metadata), json_extract_string(metadata, '$.*')) AS meta_terms
      FROM requests_raw`,
    );
    await connection.run('DROP TABLE requests_raw');
    const open = connection;
    return {
      connection: open,
      rows,
      seconds: (performance.now() - started) / 1000,
      close: () => {
        open.closeSync();
        instance.closeSync();
      },
    };
  } catch (error) {
    connection?.closeSync();
    instance.closeSync();
    throw error;
  } finally {
    sqlite.close();
  }
}
