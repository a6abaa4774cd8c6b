// Issue 54 section 2: where the request log's bytes go. SQLite's `dbstat` gives each table's and
// index's pages; DuckDB's database file of the same rows is the reference the target is set
// against (≤ 3× its bytes).
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import type { DuckDBConnection } from '@duckdb/node-api';
import { REQUEST_COLUMNS } from '../server/stores/telemetry/request-record.js';

/** What a set of the store's tables and indexes is for. */
export type BytesGroup = 'request rows' | 'request indexes' | 'search index' | 'rollups' | 'other';

export interface StoredObject {
  name: string;
  group: BytesGroup;
  bytes: number;
  perRow: number;
}

export interface DiskBytes {
  rows: number;
  /** Every page of telemetry.db, as dbstat counts them (the file after a checkpoint). */
  sqliteBytes: number;
  sqlitePerRow: number;
  duckdbBytes: number;
  duckdbPerRow: number;
  /** SQLite's bytes over DuckDB's. */
  ratio: number;
  groups: { group: BytesGroup; bytes: number; perRow: number; share: number }[];
  /** Largest first. */
  objects: StoredObject[];
}

/** Each table's and index's pages in a SQLite file (its WAL checkpointed first), grouped by use. */
export function sqliteObjects(path: string, rows: number): StoredObject[] {
  const db = new BetterSqlite3(path, { fileMustExist: true });
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
    const owners = new Map(
      (db.prepare('SELECT name, tbl_name FROM sqlite_schema').all() as { name: string; tbl_name: string }[]).map(
        (row) => [row.name, row.tbl_name],
      ),
    );
    // aggregate = TRUE: one row per table or index, summed by SQLite.
    const found = db.prepare('SELECT name, pgsize FROM dbstat WHERE aggregate = TRUE').all() as {
      name: string;
      pgsize: number;
    }[];
    return found
      .map(({ name, pgsize }) => ({
        name,
        group: groupOf(name, owners.get(name) ?? name),
        bytes: pgsize,
        perRow: pgsize / rows,
      }))
      .sort((a, b) => b.bytes - a.bytes);
  } finally {
    db.close();
  }
}

/** The request rows' tables: the coded rows and their strings (015), or the rows of a store before it. */
const REQUEST_TABLES = ['requests', 'request_rows', 'request_strings'];

function groupOf(name: string, owner: string): BytesGroup {
  if (REQUEST_TABLES.includes(name)) return 'request rows';
  if (REQUEST_TABLES.includes(owner)) return 'request indexes';
  if (owner.startsWith('search_')) return 'search index';
  if (owner.startsWith('rollup_')) return 'rollups';
  return 'other';
}

/**
 * The request rows as a DuckDB database file: the reference's table written to a file of its own
 * (the columns the request log stores, no derived column) and checkpointed.
 */
export async function duckdbFileBytes(connection: DuckDBConnection): Promise<number> {
  const folder = mkdtempSync(join(tmpdir(), 'gc-bench-duckdb-'));
  const path = join(folder, 'requests.duckdb');
  try {
    await connection.run(`ATTACH '${path}' AS on_disk`);
    try {
      await connection.run(`CREATE TABLE on_disk.requests AS SELECT ${REQUEST_COLUMNS.join(', ')} FROM requests`);
      await connection.run('CHECKPOINT on_disk');
    } finally {
      await connection.run('DETACH on_disk');
    }
    return statSync(path).size;
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

export async function measureDiskBytes(
  telemetryPath: string,
  rows: number,
  duckdb: DuckDBConnection,
): Promise<DiskBytes> {
  const objects = sqliteObjects(telemetryPath, rows);
  const duckdbBytes = await duckdbFileBytes(duckdb);
  const sqliteBytes = objects.reduce((sum, o) => sum + o.bytes, 0);
  const byGroup = new Map<BytesGroup, number>();
  for (const o of objects) byGroup.set(o.group, (byGroup.get(o.group) ?? 0) + o.bytes);
  return {
    rows,
    sqliteBytes,
    sqlitePerRow: sqliteBytes / rows,
    duckdbBytes,
    duckdbPerRow: duckdbBytes / rows,
    ratio: sqliteBytes / duckdbBytes,
    groups: [...byGroup]
      .map(([group, bytes]) => ({ group, bytes, perRow: bytes / rows, share: bytes / sqliteBytes }))
      .sort((a, b) => b.bytes - a.bytes),
    objects,
  };
}
