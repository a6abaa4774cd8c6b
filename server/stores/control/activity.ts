import type { Database, Statement } from 'better-sqlite3';
import { activityHash, GENESIS_HASH, type ChainedFields } from './activity-hash.js';

export type ActivityAction =
  | 'user.login'
  | 'user.logout'
  | 'api_key.created'
  | 'api_key.revoked'
  | 'api_key.updated'
  | 'vault_key.set'
  | 'vault_key.revoked'
  | 'org.renamed'
  | 'member.joined'
  | 'budget.deposited'
  // Beyond the contract: the operator's set-join-policy; target is the new policy (join-policy.ts).
  | 'org.join_policy_changed'
  // Beyond the contract: PUT /organization/reporting-zone; target is the zone's IANA name.
  | 'org.reporting_zone_changed'
  // Beyond the contract: POST /keys/{id}/rotate; target is the old key's prefix.
  | 'api_key.rotated'
  // Beyond the contract: PUT /organization/retention; target is the new setting ("30 days").
  | 'org.retention_changed';

/** A value in a change: what the fields of keys and organisations hold. */
export type ChangeValue = string | number | boolean | null;
export type ChangeFields = Readonly<Record<string, ChangeValue>>;

/**
 * What an event changed: the fields concerned before and after (null before a creation).
 * Built by the caller from named fields only, so a secret never reaches it.
 */
export interface ActivityChange {
  before: ChangeFields | null;
  after: ChangeFields | null;
}

export interface ActivityEvent {
  orgId: string;
  /** Null when no account acted (the operator's command). */
  actorId: string | null;
  action: ActivityAction;
  target: string;
  sourceIp: string;
  at: number;
  change?: ActivityChange | null;
}

export interface ActivityRow {
  actor: string | null;
  action: string;
  target: string;
  created_at: number;
  source_ip: string;
}

/** An event as the extension serves it: its place in the trail, what changed, its hash. */
export interface ActivityEntryRow extends ActivityRow {
  seq: number;
  change: string | null;
  hash: string;
}

/** The newest event of an organisation's trail: its place and hash. */
export interface ChainHead {
  seq: number;
  hash: string;
}

/** A stored event with its hash, as the chain is verified. */
export interface ChainRow extends ChainedFields {
  hash: string;
}

export interface ActivityFilter {
  action?: string;
  /** The acting account's email (any case). */
  actorEmail?: string;
  /** The target starts with this text (case as written: key prefixes are case-sensitive). */
  targetPrefix?: string;
  /** Epoch ms, inclusive. */
  from?: number;
  /** Epoch ms, exclusive. */
  to?: number;
}

/** Source address written for changes made by the operator's command rather than over HTTP. */
export const OPERATOR_SOURCE = 'local';

/** Events read per page when a chain is walked. */
const CHAIN_PAGE = 1_000;

/** A prefix as a GLOB pattern: its own wildcards written as bracketed literals. */
const globPrefix = (text: string) => text.replace(/[*?[]/g, (c) => `[${c}]`) + '*';

/** An actor filter resolved to the account's id: null when no account has that email. */
type ResolvedFilter = Omit<ActivityFilter, 'actorEmail'> & { actorId?: string | null };

function whereOf(orgId: string, filter: ResolvedFilter): { sql: string; values: (string | number)[] } {
  const parts = ['e.org_id = ?'];
  const values: (string | number)[] = [orgId];
  if (filter.action !== undefined) {
    parts.push('e.action = ?');
    values.push(filter.action);
  }
  if (filter.actorId) {
    parts.push('e.actor_id = ?');
    values.push(filter.actorId);
  }
  if (filter.targetPrefix !== undefined) {
    parts.push('e.target GLOB ?');
    values.push(globPrefix(filter.targetPrefix));
  }
  if (filter.from !== undefined) {
    parts.push('e.created_at >= ?');
    values.push(filter.from);
  }
  if (filter.to !== undefined) {
    parts.push('e.created_at < ?');
    values.push(filter.to);
  }
  return { sql: parts.join(' AND '), values };
}

/**
 * The head an organisation's next event chains on from: the further on of the newest event left
 * in the table and the head record() last kept, so newest events deleted leave a visible gap.
 */
export function newerHead(stored: ChainHead | undefined, recorded: ChainHead | undefined): ChainHead | undefined {
  return recorded && (!stored || recorded.seq >= stored.seq) ? recorded : stored;
}

/** The event as stored, placed after `last` (its organisation's head) and hashed on from it. */
export function chainedRow(event: ActivityEvent, id: number, last: ChainHead | undefined): ChainRow {
  const fields: ChainedFields = {
    id,
    org_id: event.orgId,
    seq: (last?.seq ?? 0) + 1,
    actor_id: event.actorId,
    action: event.action,
    target: event.target,
    created_at: event.at,
    source_ip: event.sourceIp,
    change: event.change ? JSON.stringify({ before: event.change.before, after: event.change.after }) : null,
  };
  return { ...fields, hash: activityHash(fields, last?.hash ?? GENESIS_HASH) };
}

/** A row's values in the order of both stores' INSERT: id, org_id, seq, actor_id, action, target, created_at, source_ip, change, hash. */
export function chainValues(row: ChainRow) {
  return [
    row.id,
    row.org_id,
    row.seq,
    row.actor_id,
    row.action,
    row.target,
    row.created_at,
    row.source_ip,
    row.change,
    row.hash,
  ] as [number, string, number, string | null, string, string, number, string, string | null, string];
}

export class ActivityRepository {
  private readonly insert: Statement<
    [number, string, number, string | null, string, string, number, string, string | null, string]
  >;
  private readonly head: Statement<[string], ChainHead>;
  private readonly recordedHead: Statement<[string], ChainHead>;
  private readonly keepHead: Statement<[string, number, string]>;
  private readonly nextId: Statement<[], { id: number }>;
  private readonly page: Statement<[string, number, number], ActivityRow>;
  private readonly chainFrom: Statement<[string, number, number], ChainRow>;
  private readonly chainAfter: Statement<[string, number, number, number, number], ChainRow>;
  private readonly owners: Statement<[], { id: string; name: string }>;
  private readonly accountByEmail: Statement<[string], { id: string }>;

  constructor(private readonly db: Database) {
    this.insert = db.prepare(`INSERT INTO activity
      (id, org_id, seq, actor_id, action, target, created_at, source_ip, change, hash)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.head = db.prepare('SELECT seq, hash FROM activity WHERE org_id = ? ORDER BY seq DESC LIMIT 1');
    this.recordedHead = db.prepare('SELECT seq, hash FROM activity_heads WHERE org_id = ?');
    this.keepHead = db.prepare(`INSERT INTO activity_heads (org_id, seq, hash) VALUES (?, ?, ?)
      ON CONFLICT (org_id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash`);
    this.nextId = db.prepare('SELECT COALESCE(MAX(id), 0) + 1 AS id FROM activity');
    // The actor's email is read at query time, so a hard-deleted account shows as null.
    this.page = db.prepare(`SELECT a.email AS actor, e.action, e.target, e.created_at, e.source_ip
      FROM activity e LEFT JOIN accounts a ON a.id = e.actor_id
      WHERE e.org_id = ?
      ORDER BY e.id DESC LIMIT ? OFFSET ?`);
    // By place, then id: a place written twice (the unique index dropped) shows as two rows.
    const chainColumns = 'id, org_id, seq, actor_id, action, target, created_at, source_ip, change, hash';
    this.chainFrom = db.prepare(`SELECT ${chainColumns} FROM activity
      WHERE org_id = ? AND seq >= ? ORDER BY seq, id LIMIT ?`);
    this.chainAfter = db.prepare(`SELECT ${chainColumns} FROM activity
      WHERE org_id = ? AND (seq > ? OR (seq = ? AND id > ?)) ORDER BY seq, id LIMIT ?`);
    this.owners = db.prepare('SELECT id, name FROM organizations ORDER BY name, id');
    this.accountByEmail = db.prepare('SELECT id FROM accounts WHERE email = ?');
  }

  /**
   * The single writer of the trail: the event, its place and its hash chained to the
   * organisation's last event, in the caller's transaction (so a change and its event commit
   * or roll back together), which holds the write lock from its start: two writers never chain
   * to the same event. It chains on from the recorded head (activity_heads) when that is further
   * on than the newest event left in the table, so newest events deleted from the file leave a
   * gap verification finds.
   */
  async record(event: ActivityEvent): Promise<void> {
    // A write outside a transaction could chain two events to one head: refused, not risked.
    if (!this.db.inTransaction) throw new Error('activity is recorded inside a control transaction');
    const row = chainedRow(event, this.nextId.get()!.id, this.latest(event.orgId));
    this.insert.run(...chainValues(row));
    this.keepHead.run(row.org_id, row.seq, row.hash);
  }

  /** Newest first. */
  async list(orgId: string, limit: number, offset: number): Promise<ActivityRow[]> {
    return this.page.all(orgId, limit, offset);
  }

  /**
   * The actor's email as the account's id, looked up first: a plain equality the planner reads
   * from the (org, actor, place) index, where a subquery made it walk the trail by place.
   */
  private resolve(filter: ActivityFilter): ResolvedFilter {
    const { actorEmail, ...rest } = filter;
    if (actorEmail === undefined) return rest;
    return { ...rest, actorId: this.accountByEmail.get(actorEmail.toLowerCase())?.id ?? null };
  }

  /** Newest first, by place: the events matching `filter` placed before `before` (all when null). */
  async entries(
    orgId: string,
    filter: ActivityFilter,
    before: number | null,
    limit: number,
  ): Promise<ActivityEntryRow[]> {
    const resolved = this.resolve(filter);
    if (resolved.actorId === null) return [];
    const where = whereOf(orgId, resolved);
    const beforeSql = before === null ? '' : ' AND e.seq < ?';
    const values = before === null ? where.values : [...where.values, before];
    return this.db
      .prepare<(string | number)[], ActivityEntryRow>(
        `SELECT e.seq, a.email AS actor, e.action, e.target, e.created_at, e.source_ip, e.change, e.hash
         FROM activity e LEFT JOIN accounts a ON a.id = e.actor_id
         WHERE ${where.sql}${beforeSql}
         ORDER BY e.seq DESC LIMIT ?`,
      )
      .all(...values, limit);
  }

  /** How many events match `filter`: asked once per listing, not per page. */
  async count(orgId: string, filter: ActivityFilter): Promise<number> {
    const resolved = this.resolve(filter);
    if (resolved.actorId === null) return 0;
    const where = whereOf(orgId, resolved);
    return this.db
      .prepare<(string | number)[], { n: number }>(`SELECT COUNT(*) AS n FROM activity e WHERE ${where.sql}`)
      .get(...where.values)!.n;
  }

  /** The further on of the newest event in the table and the head record() last kept. */
  private latest(orgId: string): ChainHead | undefined {
    return newerHead(this.head.get(orgId), this.recordedHead.get(orgId));
  }

  /** The place of the organisation's newest event, or of the head recorded for it; 0 when it has none. */
  async lastPlace(orgId: string): Promise<number> {
    return this.latest(orgId)?.seq ?? 0;
  }

  /** The newest event's place and hash as record() last kept them; undefined before the first event. */
  async recorded(orgId: string): Promise<ChainHead | undefined> {
    return this.recordedHead.get(orgId);
  }

  /**
   * The organisation's events from place `from` on, in chain order, read a page at a time: a
   * verification holds one page in memory, not the trail. Read it inside `read()` so that the
   * pages are of one snapshot.
   */
  async *chain(orgId: string, from: number): AsyncGenerator<ChainRow> {
    let rows = this.chainFrom.all(orgId, from, CHAIN_PAGE);
    while (rows.length > 0) {
      yield* rows;
      if (rows.length < CHAIN_PAGE) return;
      const last = rows[rows.length - 1]!;
      rows = this.chainAfter.all(orgId, last.seq, last.seq, last.id, CHAIN_PAGE);
    }
  }

  /** Every organisation, by name: whose trails the operator's verification walks. */
  async organizations(): Promise<{ id: string; name: string }[]> {
    return this.owners.all();
  }
}
