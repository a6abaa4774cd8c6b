import type { Database, Statement } from 'better-sqlite3';

/** Which spend-outbox settlements the keys' spend already holds (see server/ingest/spend-outbox.ts). */
export class SettlementRepository {
  private readonly seen: Statement<[string], { settlement: string }>;
  private readonly insert: Statement<[string, number]>;
  private readonly remove: Statement<[string]>;

  constructor(db: Database) {
    this.seen = db.prepare('SELECT settlement FROM settled_spend WHERE settlement = ?');
    this.insert = db.prepare('INSERT INTO settled_spend (settlement, settled_at) VALUES (?, ?)');
    this.remove = db.prepare('DELETE FROM settled_spend WHERE settlement = ?');
  }

  async isSettled(settlement: string): Promise<boolean> {
    return this.seen.get(settlement) !== undefined;
  }

  async mark(settlement: string, at: number): Promise<void> {
    this.insert.run(settlement, at);
  }

  async forget(settlement: string): Promise<void> {
    this.remove.run(settlement);
  }
}
