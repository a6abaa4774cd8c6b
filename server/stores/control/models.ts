import type { Database, Statement } from 'better-sqlite3';
import { ReadCache } from '../read-cache.js';

export interface ModelRow {
  id: string;
  provider: string;
  active: boolean;
}

export class ModelRepository {
  private readonly listAll: Statement<[], { id: string; provider: string; active: number }>;
  private readonly activeIds: Statement<[string], { id: string }>;
  private readonly byId: Statement<[string], { id: string; provider: string; active: number }>;
  private readonly upsert: Statement<[string, string, number]>;
  private readonly updateActive: Statement<[number, string]>;
  private readonly byIdCache: ReadCache<Readonly<ModelRow> | undefined>;

  constructor(db: Database) {
    this.listAll = db.prepare('SELECT id, provider, active FROM models ORDER BY id');
    this.activeIds = db.prepare(
      'SELECT value AS id FROM json_each(?) WHERE value IN (SELECT id FROM models WHERE active = 1)',
    );
    this.byId = db.prepare('SELECT id, provider, active FROM models WHERE id = ?');
    this.upsert = db.prepare(`INSERT INTO models (id, provider, active) VALUES (?, ?, ?)
      ON CONFLICT (id) DO UPDATE SET provider = excluded.provider, active = excluded.active`);
    this.updateActive = db.prepare('UPDATE models SET active = ? WHERE id = ?');
    this.byIdCache = new ReadCache(db, 1_000);
  }

  async list(): Promise<ModelRow[]> {
    return this.listAll.all().map((row) => ({ ...row, active: row.active === 1 }));
  }

  /** Read on every gateway request, so kept until the store changes: never modify it. */
  async find(id: string): Promise<Readonly<ModelRow> | undefined> {
    return this.byIdCache.get(id, () => {
      const row = this.byId.get(id);
      return row && { ...row, active: row.active === 1 };
    });
  }

  /** The ids of the list that are not active routes of the catalogue, in the order given. */
  async unknownOrInactive(ids: string[]): Promise<string[]> {
    const active = new Set(this.activeIds.all(JSON.stringify(ids)).map((row) => row.id));
    return ids.filter((id) => !active.has(id));
  }

  async put(id: string, provider: string, active: boolean): Promise<void> {
    this.upsert.run(id, provider, active ? 1 : 0);
  }

  /** False when no such route exists. */
  async setActive(id: string, active: boolean): Promise<boolean> {
    return this.updateActive.run(active ? 1 : 0, id).changes === 1;
  }
}
