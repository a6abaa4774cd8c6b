import {
  chainedRow,
  chainValues,
  newerHead,
  type ActivityEntryRow,
  type ActivityEvent,
  type ActivityFilter,
  type ActivityRow,
  type ChainHead,
  type ChainRow,
} from '../activity.js';
import type { ActivityRecords } from '../records.js';
import { changes, first, rows, type Sql } from './sql.js';

/** Events read per page when a chain is walked. */
const CHAIN_PAGE = 1_000;
const CHAIN_COLUMNS = 'id, org_id, seq, actor_id, action, target, created_at, source_ip, change, hash';

/** A prefix as a LIKE pattern: its own wildcards (and the escape) escaped. */
const likePrefix = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`) + '%';

/** The filter as SQL over `activity e`, its actor already resolved to an account id. */
function whereOf(orgId: string, filter: ActivityFilter, actorId: string | undefined) {
  const values: (string | number)[] = [orgId];
  const parts = ['e.org_id = $1'];
  const add = (condition: string, value: string | number) => {
    values.push(value);
    parts.push(condition.replace('?', `$${values.length}`));
  };
  if (filter.action !== undefined) add('e.action = ?', filter.action);
  if (actorId !== undefined) add('e.actor_id = ?', actorId);
  if (filter.targetPrefix !== undefined) add("e.target LIKE ? ESCAPE '\\'", likePrefix(filter.targetPrefix));
  if (filter.from !== undefined) add('e.created_at >= ?', filter.from);
  if (filter.to !== undefined) add('e.created_at < ?', filter.to);
  return { sql: parts.join(' AND '), values };
}

export class PgActivityRepository implements ActivityRecords {
  constructor(private readonly sql: Sql) {}

  async record(event: ActivityEvent): Promise<void> {
    // The transaction holds the store's write lock: two writers never chain to one head.
    if (!this.sql.inTransaction) throw new Error('activity is recorded inside a control transaction');
    const last = await this.latest(event.orgId);
    const next = await first<{ id: number }>(this.sql, 'SELECT COALESCE(MAX(id), 0) + 1 AS id FROM activity');
    const row = chainedRow(event, next!.id, last);
    await changes(
      this.sql,
      `INSERT INTO activity (id, org_id, seq, actor_id, action, target, created_at, source_ip, change, hash)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      chainValues(row),
    );
    await changes(
      this.sql,
      `INSERT INTO activity_heads (org_id, seq, hash) VALUES ($1, $2, $3)
       ON CONFLICT (org_id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash`,
      [row.org_id, row.seq, row.hash],
    );
  }

  list(orgId: string, limit: number, offset: number): Promise<ActivityRow[]> {
    return rows(
      this.sql,
      `SELECT a.email AS actor, e.action, e.target, e.created_at, e.source_ip
       FROM activity e LEFT JOIN accounts a ON a.id = e.actor_id
       WHERE e.org_id = $1 ORDER BY e.id DESC LIMIT $2 OFFSET $3`,
      [orgId, limit, offset],
    );
  }

  async entries(
    orgId: string,
    filter: ActivityFilter,
    before: number | null,
    limit: number,
  ): Promise<ActivityEntryRow[]> {
    const actor = await this.actorOf(filter);
    if (actor === null) return [];
    const where = whereOf(orgId, filter, actor);
    const values = before === null ? where.values : [...where.values, before];
    const beforeSql = before === null ? '' : ` AND e.seq < $${values.length}`;
    return rows(
      this.sql,
      `SELECT e.seq, a.email AS actor, e.action, e.target, e.created_at, e.source_ip, e.change, e.hash
       FROM activity e LEFT JOIN accounts a ON a.id = e.actor_id
       WHERE ${where.sql}${beforeSql}
       ORDER BY e.seq DESC LIMIT $${values.length + 1}`,
      [...values, limit],
    );
  }

  async count(orgId: string, filter: ActivityFilter): Promise<number> {
    const actor = await this.actorOf(filter);
    if (actor === null) return 0;
    const where = whereOf(orgId, filter, actor);
    const row = await first<{ n: number }>(
      this.sql,
      `SELECT COUNT(*)::bigint AS n FROM activity e WHERE ${where.sql}`,
      where.values,
    );
    return row!.n;
  }

  async lastPlace(orgId: string): Promise<number> {
    return (await this.latest(orgId))?.seq ?? 0;
  }

  recorded(orgId: string): Promise<ChainHead | undefined> {
    return first(this.sql, 'SELECT seq, hash FROM activity_heads WHERE org_id = $1', [orgId]);
  }

  async *chain(orgId: string, from: number): AsyncGenerator<ChainRow> {
    let page = await rows<ChainRow>(
      this.sql,
      `SELECT ${CHAIN_COLUMNS} FROM activity WHERE org_id = $1 AND seq >= $2 ORDER BY seq, id LIMIT $3`,
      [orgId, from, CHAIN_PAGE],
    );
    while (page.length > 0) {
      yield* page;
      if (page.length < CHAIN_PAGE) return;
      const last = page[page.length - 1]!;
      page = await rows<ChainRow>(
        this.sql,
        `SELECT ${CHAIN_COLUMNS} FROM activity WHERE org_id = $1 AND (seq, id) > ($2, $3) ORDER BY seq, id LIMIT $4`,
        [orgId, last.seq, last.id, CHAIN_PAGE],
      );
    }
  }

  organizations(): Promise<{ id: string; name: string }[]> {
    return rows(this.sql, 'SELECT id, name FROM organizations ORDER BY name COLLATE "C", id COLLATE "C"');
  }

  /** The filter's actor as an account id: undefined without an actor filter, null when no account has the email. */
  private async actorOf(filter: ActivityFilter): Promise<string | null | undefined> {
    if (filter.actorEmail === undefined) return undefined;
    const row = await first<{ id: string }>(this.sql, 'SELECT id FROM accounts WHERE email = $1', [
      filter.actorEmail.toLowerCase(),
    ]);
    return row?.id ?? null;
  }

  /** The head the next event chains on from (see `newerHead`). */
  private async latest(orgId: string): Promise<ChainHead | undefined> {
    const stored = await first<ChainHead>(
      this.sql,
      'SELECT seq, hash FROM activity WHERE org_id = $1 ORDER BY seq DESC LIMIT 1',
      [orgId],
    );
    return newerHead(stored, await this.recorded(orgId));
  }
}
