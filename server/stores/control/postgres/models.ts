import type { ModelRow } from '../models.js';
import type { ModelRecords } from '../records.js';
import type { PgReadCache } from './read-cache.js';
import { cached, cacheOf, changes, first, rows, type Sql } from './sql.js';

type Stored = { id: string; provider: string; active: number };
const asModel = (row: Stored): ModelRow => ({ ...row, active: row.active === 1 });

export class PgModelRepository implements ModelRecords {
  private readonly byIdCache: PgReadCache<Readonly<ModelRow> | undefined> | null;

  constructor(private readonly sql: Sql) {
    this.byIdCache = cacheOf(sql, 1_000);
  }

  async list(): Promise<ModelRow[]> {
    return (await rows<Stored>(this.sql, 'SELECT id, provider, active FROM models ORDER BY id COLLATE "C"')).map(
      asModel,
    );
  }

  find(id: string): Promise<Readonly<ModelRow> | undefined> {
    return cached(this.byIdCache, id, async () => {
      const row = await first<Stored>(this.sql, 'SELECT id, provider, active FROM models WHERE id = $1', [id]);
      return row && asModel(row);
    });
  }

  async unknownOrInactive(ids: string[]): Promise<string[]> {
    const found = await rows<{ id: string }>(
      this.sql,
      'SELECT id FROM models WHERE active = 1 AND id = ANY($1::text[])',
      [ids],
    );
    const active = new Set(found.map((row) => row.id));
    return ids.filter((id) => !active.has(id));
  }

  async put(id: string, provider: string, active: boolean): Promise<void> {
    await changes(
      this.sql,
      `INSERT INTO models (id, provider, active) VALUES ($1, $2, $3)
       ON CONFLICT (id) DO UPDATE SET provider = excluded.provider, active = excluded.active`,
      [id, provider, active ? 1 : 0],
    );
  }

  async setActive(id: string, active: boolean): Promise<boolean> {
    return (await changes(this.sql, 'UPDATE models SET active = $1 WHERE id = $2', [active ? 1 : 0, id])) === 1;
  }
}
