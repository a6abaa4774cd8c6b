import type { Database, Statement } from 'better-sqlite3';
import {
  catalogueDocumentFrom,
  deepFreeze,
  sameDocument,
  type RoutesDocument,
  type StoredRoutes,
} from '../../domain/routes-document.js';
import { ReadCache } from '../read-cache.js';

/** One version of the routes document, as `routes history` lists it. */
export interface RoutesVersion {
  version: number;
  /** Milliseconds since the epoch. */
  applied_at: number;
  /** What stored it: 'seed', 'migrated from models', 'routes apply', 'set-model'. */
  source: string;
}

export type ApplyOutcome =
  | { kind: 'applied'; version: number }
  /** The document is the current version's already: nothing stored. */
  | { kind: 'unchanged'; version: number }
  /** `expectVersion` was not the current version: nothing stored. */
  | { kind: 'conflict'; current: number };

/** What stored version 1: a new store, or one whose routes were in the `models` table. */
export const seedSource = (upgrading: boolean) => (upgrading ? 'migrated from models' : 'seed');

/**
 * Migration 006's step: version 1 of the routes document, from the `models` table as it stands
 * (a new store's is the catalogue's own seed; see `catalogueDocumentFrom` for the rows it drops).
 */
export function seedRoutes(db: Database, upgrading: boolean): void {
  const rows = db.prepare<[], { id: string; active: number }>('SELECT id, active FROM models').all();
  const document = catalogueDocumentFrom(rows.map((row) => ({ id: row.id, active: row.active === 1 })));
  db.prepare('INSERT INTO route_documents (version, document, applied_at, source) VALUES (1, ?, ?, ?)').run(
    JSON.stringify(document),
    Date.now(),
    seedSource(upgrading),
  );
}

/** A stored version read back: the document was validated before it was stored. */
export function storedRoutes(row: { version: number; applied_at: number; document: string }): Readonly<StoredRoutes> {
  return deepFreeze({
    version: row.version,
    applied_at: row.applied_at,
    document: JSON.parse(row.document) as RoutesDocument,
  });
}

/**
 * The routes document's versions. The gateway reads the newest on every request: the newest
 * version's number is read again only when the store has changed (ReadCache), and its document
 * only when that number moved, so a request costs a comparison and every request of one version
 * shares one frozen object. A version is never changed once stored (the table refuses it), which
 * is what lets it be kept.
 */
export class RoutesRepository {
  private readonly newestVersion: Statement<[], number>;
  private readonly byVersion: Statement<[number], { version: number; applied_at: number; document: string }>;
  private readonly everyVersion: Statement<[], RoutesVersion>;
  private readonly insert: Statement<[number, string, number, string]>;
  private readonly newestCache: ReadCache<number>;
  /** The newest version read outside a transaction: only what is committed is kept. */
  private held: Readonly<StoredRoutes> | null = null;

  constructor(private readonly db: Database) {
    this.newestVersion = db.prepare<[], number>('SELECT MAX(version) FROM route_documents').pluck();
    this.byVersion = db.prepare('SELECT version, applied_at, document FROM route_documents WHERE version = ?');
    this.everyVersion = db.prepare('SELECT version, applied_at, source FROM route_documents ORDER BY version DESC');
    this.insert = db.prepare('INSERT INTO route_documents (version, document, applied_at, source) VALUES (?, ?, ?, ?)');
    this.newestCache = new ReadCache(db, 1);
  }

  /** The newest version, deeply frozen: never modify it. */
  async current(): Promise<Readonly<StoredRoutes>> {
    const newest = this.newestCache.get('newest', () => this.newestVersion.get() ?? 0);
    if (this.held?.version === newest) return this.held;
    const row = this.byVersion.get(newest);
    if (!row) throw new Error('the control store holds no routes document');
    const stored = storedRoutes(row);
    if (!this.db.inTransaction) this.held = stored;
    return stored;
  }

  /** Every version, newest first. */
  async history(): Promise<RoutesVersion[]> {
    return this.everyVersion.all();
  }

  /**
   * Stores `document` (validated: routes-validation.ts) as the next version, inside a control
   * transaction. With `expectVersion`, only if that is the current version (compare-and-swap);
   * a document the current version already is stores nothing.
   */
  async apply(document: RoutesDocument, source: string, at: number, expectVersion?: number): Promise<ApplyOutcome> {
    if (!this.db.inTransaction) throw new Error('the routes document is applied inside a control transaction');
    const current = await this.current();
    if (expectVersion !== undefined && expectVersion !== current.version) {
      return { kind: 'conflict', current: current.version };
    }
    if (sameDocument(current.document, document)) return { kind: 'unchanged', version: current.version };
    const version = current.version + 1;
    this.insert.run(version, JSON.stringify(document), at, source);
    return { kind: 'applied', version };
  }
}
