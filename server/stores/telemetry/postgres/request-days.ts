import type pg from 'pg';

/**
 * The request log's day tables on PostgreSQL (migrations-postgres/007): each UTC day's rows in a
 * partition of `requests` of its own, made before its first row is written and dropped whole by
 * retention once every organisation with rows in it has its horizon past its end.
 */

export const DAY_MS = 86_400_000;

/** The day (since the epoch, UTC) a time falls on. */
export const dayOf = (ts: number): number => Math.floor(ts / DAY_MS);

/**
 * A check violation: no partition of `requests` takes the row (its day's table was dropped after
 * it was known here), or its day's table is being dropped (`DROPPING`).
 */
const CHECK_VIOLATION = '23514';
/**
 * The trigger retention makes on a day table it is about to drop (migrations-postgres/010), under
 * a lock that waits for the writes in flight there but not for reads: from then on a write into
 * that day fails, naming it as its constraint, and is made again once the table is gone, instead
 * of landing in a table about to be dropped.
 */
export const DROPPING = 'request_day_dropping';

/** The statement that marks a day table to be dropped (`DROPPING`). */
export const markDroppingSql = (name: string): string =>
  `CREATE TRIGGER ${DROPPING} BEFORE INSERT ON ${name} FOR EACH ROW EXECUTE FUNCTION ${DROPPING}()`;
/** Another session made the same table at the same moment. */
const MADE_BESIDE = ['23505', '42P07'];

/**
 * Whether `error` is an insert's into a day whose table does not exist (dropped by another
 * process) or is being dropped: a check violation naming no constraint or `DROPPING`, whatever
 * the server's language.
 */
export function isMissingDay(error: unknown): boolean {
  const { code, constraint } = error as { code?: string; constraint?: string };
  return code === CHECK_VIOLATION && (constraint === undefined || constraint === DROPPING);
}

/** The days whose tables this process has made or found, so that a write asks for none most of the time. */
export class RequestDays {
  private known = new Set<number>();

  /**
   * Makes the tables of the days of `times` that are missing, and tomorrow's (so that the first
   * rows of a day do not wait for it). Outside a transaction each is committed at once; inside
   * one (`inTransaction`), each in a savepoint, so that a table made beside it does not abort it.
   */
  async ensure(client: pg.ClientBase, times: Iterable<number>, { inTransaction = false } = {}): Promise<void> {
    const wanted = new Set<number>([dayOf(Date.now()) + 1]);
    for (const ts of times) wanted.add(dayOf(ts));
    for (const day of [...wanted].sort((a, b) => a - b)) {
      if (this.known.has(day)) continue;
      if (inTransaction) await client.query('SAVEPOINT request_day');
      try {
        await client.query({ name: 'request_day_partition', text: 'SELECT request_day_partition($1)', values: [day] });
        if (inTransaction) await client.query('RELEASE SAVEPOINT request_day');
      } catch (error) {
        if (!MADE_BESIDE.includes((error as { code?: string }).code ?? '')) throw error;
        if (inTransaction) await client.query('ROLLBACK TO SAVEPOINT request_day');
      }
      this.known.add(day);
    }
  }

  /** Forgets every day: one was dropped, here or elsewhere. */
  forget(): void {
    this.known = new Set();
  }
}

/** A day table of `requests`: its name and the times it holds, [from, to). */
export interface DayTable {
  name: string;
  from: number;
  to: number;
  /** A drop stopped after its detach began (DETACH … CONCURRENTLY), to be finished. */
  detaching: boolean;
  /** Marked to be dropped (`DROPPING`): its drop is to be finished, whatever the horizons now. */
  dropping: boolean;
}

/** Every day table of `requests`, oldest first. */
export async function dayTables(client: pg.ClientBase): Promise<DayTable[]> {
  const found = await client.query<{ name: string; bound: string; detaching: boolean; dropping: boolean }>({
    text: `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound, i.inhdetachpending AS detaching,
                  EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = c.oid AND t.tgname = $1) AS dropping
             FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
            WHERE i.inhparent = 'requests'::regclass`,
    values: [DROPPING],
  });
  return found.rows
    .map(({ name, bound, detaching, dropping }) => {
      const [, from, to] = /FROM \('?(-?\d+)'?\) TO \('?(-?\d+)'?\)/.exec(bound) ?? [];
      return { name, from: Number(from), to: Number(to), detaching, dropping };
    })
    .filter((table) => Number.isFinite(table.from) && Number.isFinite(table.to))
    .sort((a, b) => a.from - b.from);
}

/** The organisations with rows in a day table, each found by one probe of its (org_id, ts) index. */
export async function organisationsIn(client: pg.ClientBase, table: string): Promise<string[]> {
  const name = client.escapeIdentifier(table);
  const found = await client.query<{ org_id: string }>(
    `WITH RECURSIVE o (org_id) AS (
       SELECT MIN(org_id) FROM ${name}
       UNION ALL
       SELECT (SELECT MIN(org_id) FROM ${name} WHERE org_id > o.org_id) FROM o WHERE o.org_id IS NOT NULL)
     SELECT org_id FROM o WHERE org_id IS NOT NULL`,
  );
  return found.rows.map((row) => row.org_id);
}

/** Where a server tells what a migration holds the request log for. */
export interface MigrationLog {
  info(details: object, message: string): void;
}

/**
 * Rows a second migration 007 moves into day tables, their indexes built after them, for its
 * estimate of how long it holds the request log. Measured on the bench machine (2 cores): 44,600
 * at 500,000 rows; at ten million the index builds (the trigram index above all) weigh more, and
 * PostgreSQL's own COPY with the same indexes built after ran at 23,900 (bench/results/postgres.md).
 */
const MOVED_PER_SECOND = 20_000;

/**
 * Migration 007's steps around its SQL: before, the rows it is about to move and about how long
 * that holds the request log (its reads and writes wait); after, how long it took.
 */
export function dayTablesMigration(log: MigrationLog | undefined): {
  before: (client: pg.ClientBase) => Promise<void>;
  after: () => Promise<void>;
} {
  let started = 0;
  let rows = 0;
  return {
    async before(client) {
      started = performance.now();
      const counted = await client.query<{ rows: number }>('SELECT COUNT(*)::int AS rows FROM requests');
      rows = counted.rows[0]!.rows;
      if (rows === 0) return;
      const seconds = Math.ceil(rows / MOVED_PER_SECOND);
      log?.info(
        { rows, expectedSeconds: seconds },
        `the request log moves into day tables (migration 7): ${rows} rows, about ${seconds} s during which its reads and writes wait`,
      );
    },
    async after() {
      if (rows === 0) return;
      const seconds = Math.round((performance.now() - started) / 100) / 10;
      log?.info({ rows, seconds }, `the request log is in day tables: ${rows} rows moved in ${seconds} s`);
    },
  };
}
