// Issue 31's import figure: `admin import-requests` against DuckDB's `read_json` on the same
// NDJSON files. The seeded rows are written out as IMPORT_FILES files of the request-log shape (the
// shape `GET /analytics/requests` answers and the import takes), then imported into a fresh
// store that holds the seeded organisation's keys, every file in one run of the command as an
// operator runs it (`npm run admin`: its own process, through tsx), as DuckDB reads them in one
// statement, then loaded by DuckDB.
import { DuckDBInstance } from '@duckdb/node-api';
import BetterSqlite3 from 'better-sqlite3';
import { execFile } from 'node:child_process';
import { closeSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { toRequestLogRow } from '../server/analytics/request-row.js';
import { REQUEST_COLUMNS, type RequestRecord } from '../server/stores/telemetry/request-record.js';
import { ROOT } from './processes.js';

/** As issue 31 measured it: twenty files, one store. */
export const IMPORT_FILES = 20;

export interface ImportFigures {
  rows: number;
  files: number;
  /** NDJSON bytes over every file. */
  bytes: number;
  importSeconds: number;
  importRowsPerSecond: number;
  duckdbSeconds: number;
  duckdbRowsPerSecond: number;
  /** Our rate over DuckDB's. */
  ratio: number;
}

/** The seeded store's first `rows` rows as NDJSON, in `files` files of (nearly) equal row counts. */
function writeFiles(dataDir: string, folder: string, rows: number, files: number): { paths: string[]; bytes: number } {
  const control = new BetterSqlite3(join(dataDir, 'control.db'), { readonly: true, fileMustExist: true });
  const names = {
    keys: new Map(
      control
        .prepare('SELECT id, name FROM api_keys')
        .all()
        .map((r) => [(r as RowName).id, (r as RowName).name]),
    ),
    projects: new Map(
      control
        .prepare('SELECT id, name FROM projects')
        .all()
        .map((r) => [(r as RowName).id, (r as RowName).name]),
    ),
  };
  control.close();
  const telemetry = new BetterSqlite3(join(dataDir, 'telemetry.db'), { readonly: true, fileMustExist: true });
  const perFile = Math.ceil(rows / files);
  const paths: string[] = [];
  let bytes = 0;
  let fd: number | null = null;
  let text = '';
  let inFile = 0;
  const flush = () => {
    if (fd === null || text === '') return;
    bytes += writeSync(fd, text);
    text = '';
  };
  try {
    const select = telemetry.prepare(`SELECT ${REQUEST_COLUMNS.join(', ')} FROM requests ORDER BY rowid LIMIT ?`);
    for (const row of select.iterate(rows) as IterableIterator<RequestRecord>) {
      if (fd === null || inFile === perFile) {
        flush();
        if (fd !== null) closeSync(fd);
        const path = join(folder, `requests-${String(paths.length + 1).padStart(2, '0')}.ndjson`);
        paths.push(path);
        fd = openSync(path, 'w');
        inFile = 0;
      }
      text += JSON.stringify(toRequestLogRow(row, names)) + '\n';
      inFile++;
      if (text.length > 1 << 20) flush();
    }
    flush();
  } finally {
    if (fd !== null) closeSync(fd);
    telemetry.close();
  }
  return { paths, bytes };
}

/**
 * The files' columns, as an operator loading them would name them: DuckDB then reads each line
 * once, with no sampling pass to guess the types (which also guesses BIGINT for a column whose
 * first thousands of values happen to be whole).
 */
const NDJSON_COLUMNS = `{
  req_id: 'VARCHAR', timestamp: 'TIMESTAMPTZ', model: 'VARCHAR', status: 'INTEGER', stream: 'BOOLEAN',
  key: 'STRUCT(id VARCHAR, name VARCHAR)', project: 'STRUCT(id VARCHAR, name VARCHAR)',
  metrics: 'STRUCT(total_ms DOUBLE, ttft_ms DOUBLE, tpot_ms DOUBLE, pre_dispatch_ms DOUBLE, prompt_tokens BIGINT,
    tokens_generated BIGINT, cache_creation_input_tokens BIGINT, cache_read_input_tokens BIGINT, total_tokens BIGINT,
    tokens_estimated BOOLEAN)',
  financials: 'STRUCT(cost_pkr DOUBLE, is_byok INTEGER)',
  status_detail: 'STRUCT(termination_reason VARCHAR, upstream_error VARCHAR)',
  upstream: 'STRUCT(model VARCHAR)', user_agent: 'VARCHAR', metadata: 'JSON'
}`;

/**
 * `npm run admin -- import-requests` over every file, in a process of its own as an operator runs
 * it, not beside the bench's heap of seeded rows; its start (~1 s through tsx) is timed too.
 */
async function importInChild(dataDir: string, paths: string[]): Promise<void> {
  const args = ['--import', 'tsx', 'server/cli.ts', 'admin', 'import-requests', '--data-dir', dataDir];
  for (const path of paths) args.push('--file', path);
  try {
    await promisify(execFile)(process.execPath, args, { cwd: ROOT, maxBuffer: 16 * 2 ** 20 });
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`import-requests failed:\n${stdout}${stderr}`);
  }
}

interface RowName {
  id: string;
  name: string;
}

/**
 * Writes the files, imports them into a fresh store beside `dataDir` (its control store
 * copied), loads them into DuckDB, and removes what it made but the imported store when asked
 * to `keep` it: its data folder is then `storeDir`, for the caller to remove.
 */
export async function measureImport(options: {
  dataDir: string;
  temp: string;
  /** The store's first rows (rowid order) written out and imported: every row but in a quick run. */
  rows: number;
  /** IMPORT_FILES unless told. */
  files?: number;
  log: (line: string) => void;
  keep?: boolean;
}): Promise<ImportFigures & { storeDir: string | null }> {
  const { dataDir, temp, rows, log, keep = false } = options;
  const files = options.files ?? IMPORT_FILES;
  const folder = join(temp, 'ndjson');
  const target = join(temp, 'import-target');
  mkdirSync(folder, { recursive: true });
  mkdirSync(target, { recursive: true, mode: 0o700 });
  try {
    log(`import: writing the ${rows} seeded rows to ${files} NDJSON files`);
    const { paths, bytes } = writeFiles(dataDir, folder, rows, files);
    log(`import: ${(bytes / 2 ** 20).toFixed(0)} MiB written; copying the control store (its keys own the rows)`);
    const source = new BetterSqlite3(join(dataDir, 'control.db'), { readonly: true, fileMustExist: true });
    try {
      await source.backup(join(target, 'control.db'));
    } finally {
      source.close();
    }

    log(`import: admin import-requests, ${paths.length} files in one run`);
    let started = performance.now();
    await importInChild(target, paths);
    const importSeconds = (performance.now() - started) / 1000;
    const imported = new BetterSqlite3(join(target, 'telemetry.db'), { readonly: true });
    const importedRows = imported.prepare('SELECT COUNT(*) FROM requests').pluck().get() as number;
    imported.close();
    if (importedRows !== rows) throw new Error(`the import stored ${importedRows} rows, not ${rows}`);

    log('import: DuckDB read_json of the same files (in memory, threads=2)');
    const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
    let duckdbSeconds: number;
    try {
      const connection = await instance.connect();
      try {
        const list = paths.map((path) => `'${path.replace(/'/g, "''")}'`).join(', ');
        started = performance.now();
        await connection.run(
          `CREATE TABLE requests AS SELECT * FROM read_json([${list}], format = 'newline_delimited', columns = ${NDJSON_COLUMNS})`,
        );
        duckdbSeconds = (performance.now() - started) / 1000;
        const count = Number((await connection.runAndReadAll('SELECT COUNT(*) FROM requests')).getRows()[0]?.[0]);
        if (count !== rows) throw new Error(`DuckDB read ${count} rows, not ${rows}`);
      } finally {
        connection.closeSync();
      }
    } finally {
      instance.closeSync();
    }
    const importRowsPerSecond = rows / importSeconds;
    const duckdbRowsPerSecond = rows / duckdbSeconds;
    return {
      rows,
      files: paths.length,
      bytes,
      importSeconds,
      importRowsPerSecond,
      duckdbSeconds,
      duckdbRowsPerSecond,
      ratio: importRowsPerSecond / duckdbRowsPerSecond,
      storeDir: keep ? target : null,
    };
  } catch (error) {
    rmSync(target, { recursive: true, force: true });
    throw error;
  } finally {
    rmSync(folder, { recursive: true, force: true });
    if (!keep) rmSync(target, { recursive: true, force: true });
  }
}
