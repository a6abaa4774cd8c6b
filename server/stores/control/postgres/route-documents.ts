import type pg from 'pg';
import {
  catalogueDocumentFrom,
  sameDocument,
  type RoutesDocument,
  type StoredRoutes,
} from '../../../domain/routes-document.js';
import type { RoutesRecords } from '../records.js';
import { seedSource, storedRoutes, type ApplyOutcome, type RoutesVersion } from '../route-documents.js';
import type { PgReadCache } from './read-cache.js';
import { cached, cacheOf, changes, first, rows, type Sql } from './sql.js';

/** Migration 004's step: version 1 of the routes document from the `models` table, as on SQLite. */
export async function seedRoutes(client: pg.PoolClient, upgrading: boolean): Promise<void> {
  const found = await client.query<{ id: string; active: number }>('SELECT id, active FROM models');
  const document = catalogueDocumentFrom(found.rows.map((row) => ({ id: row.id, active: row.active === 1 })));
  await client.query('INSERT INTO route_documents (version, document, applied_at, source) VALUES (1, $1, $2, $3)', [
    JSON.stringify(document),
    Date.now(),
    seedSource(upgrading),
  ]);
}

type Row = { version: number; applied_at: number; document: string };

/**
 * The routes document's versions on PostgreSQL (see ../route-documents.ts): the newest version's
 * number is read again when the control store's change count moves (any replica's write, one
 * round trip a turn shared by every cache), its document only when that number moved.
 */
export class PgRoutesRepository implements RoutesRecords {
  private readonly newestCache: PgReadCache<number> | null;
  /** The newest version read outside a transaction, and the one being read: one object a version. */
  private held: Readonly<StoredRoutes> | null = null;
  private loading: { version: number; stored: Promise<Readonly<StoredRoutes>> } | null = null;

  constructor(private readonly sql: Sql) {
    this.newestCache = cacheOf(sql, 1);
  }

  async current(): Promise<Readonly<StoredRoutes>> {
    const newest = await cached(this.newestCache, 'newest', async () => {
      const row = await first<{ version: number | null }>(
        this.sql,
        'SELECT MAX(version) AS version FROM route_documents',
      );
      return row?.version ?? 0;
    });
    if (this.held?.version === newest) return this.held;
    // Inside a transaction the newest may be its own, not yet committed: read, keep nothing.
    if (this.sql.inTransaction) return this.read(newest);
    if (this.loading?.version !== newest) {
      const stored = this.read(newest).then((read) => {
        if (this.held === null || read.version > this.held.version) this.held = read;
        return read;
      });
      const loading = { version: newest, stored };
      this.loading = loading;
      // A failed read is not kept: the next caller asks again.
      stored.catch(() => {
        if (this.loading === loading) this.loading = null;
      });
    }
    return this.loading.stored;
  }

  history(): Promise<RoutesVersion[]> {
    return rows(this.sql, 'SELECT version, applied_at, source FROM route_documents ORDER BY version DESC');
  }

  async apply(document: RoutesDocument, source: string, at: number, expectVersion?: number): Promise<ApplyOutcome> {
    if (!this.sql.inTransaction) throw new Error('the routes document is applied inside a control transaction');
    const current = await this.current();
    if (expectVersion !== undefined && expectVersion !== current.version) {
      return { kind: 'conflict', current: current.version };
    }
    if (sameDocument(current.document, document)) return { kind: 'unchanged', version: current.version };
    const version = current.version + 1;
    await changes(
      this.sql,
      'INSERT INTO route_documents (version, document, applied_at, source) VALUES ($1, $2, $3, $4)',
      [version, JSON.stringify(document), at, source],
    );
    return { kind: 'applied', version };
  }

  private async read(version: number): Promise<Readonly<StoredRoutes>> {
    const row = await first<Row>(
      this.sql,
      'SELECT version, applied_at, document FROM route_documents WHERE version = $1',
      [version],
    );
    if (!row) throw new Error('the control store holds no routes document');
    return storedRoutes(row);
  }
}
