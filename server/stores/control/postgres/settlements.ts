import type { SettlementRecords } from '../records.js';
import { changes, first, type Sql } from './sql.js';

export class PgSettlementRepository implements SettlementRecords {
  constructor(private readonly sql: Sql) {}

  async isSettled(settlement: string): Promise<boolean> {
    return (await first(this.sql, 'SELECT 1 FROM settled_spend WHERE settlement = $1', [settlement])) !== undefined;
  }

  async mark(settlement: string, at: number): Promise<void> {
    await changes(this.sql, 'INSERT INTO settled_spend (settlement, settled_at) VALUES ($1, $2)', [settlement, at]);
  }

  async forget(settlement: string): Promise<void> {
    await changes(this.sql, 'DELETE FROM settled_spend WHERE settlement = $1', [settlement]);
  }
}
