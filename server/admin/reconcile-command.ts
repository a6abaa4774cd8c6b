import BetterSqlite3 from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { AnalyticsQueries } from '../analytics/queries.js';
import { PgSql } from '../analytics/postgres-sql.js';
import { SqliteSql } from '../analytics/sqlite-sql.js';
import { openPool } from '../stores/postgres.js';
import type { TelemetryLocation } from '../stores/telemetry/open.js';
import {
  parseUtcDay,
  reconcile,
  reconcileDays,
  type Difference,
  type ReconcileReport,
} from '../analytics/reconcile.js';
import { telemetryLocation, type ServerConfig } from '../config.js';
import { formatPkr } from '../domain/money.js';
import type { ControlStore } from '../stores/control/store.js';
import { BUSY_TIMEOUT_MS } from '../stores/sqlite.js';

/**
 * `admin reconcile`: the Reconcile screen's check from a shell (server/analytics/reconcile.ts),
 * read-only on both stores, safe beside a running server, for any window (the route's 31 days
 * bound one HTTP request; here nothing waits on an answer). Prints one line per kind and one per
 * difference; the caller exits 0 when everything agrees and 1 otherwise, so cron can alert.
 * A window of more than a day tells its progress on stderr, so stdout stays the report.
 */

/**
 * The longest window accepted: a century of days. Not a limit on what may be checked but on a
 * typo (`--days 1000000000`), which would otherwise run for years.
 */
const LONGEST_WINDOW_DAYS = 36_525;

/** At most one progress line a second: a year of empty days must not flood the terminal. */
const PROGRESS_EVERY_MS = 1000;

export interface ReconcileCommand {
  orgId: string;
  projectId: string | null;
  days: number[];
  now: number;
  onDay?: (checked: number, total: number) => void;
}

const fmt = (measure: Difference['measure'], value: number | null) =>
  value === null ? '–' : measure === 'cost_micro' ? `${formatPkr(value)} PKR` : value.toLocaleString('en-US');

function describe(difference: Difference): string {
  const { measure, expected, found } = difference;
  const gap = expected === null || found === null ? '' : ` (off by ${fmt(measure, found - expected)})`;
  return `${measure === 'cost_micro' ? 'cost' : measure} ${fmt(measure, found)}, expected ${fmt(measure, expected)}${gap}`;
}

/** The report as text: a header, each kind's count, and each line that does not agree. */
export function reportText(report: ReconcileReport, organization: string): string {
  const out = [
    `reconcile ${organization}${report.project_id ? ` project ${report.project_id}` : ''}, ${report.from.slice(0, 10)} to ${report.to.slice(0, 10)} (UTC days)`,
  ];
  for (const kind of report.kinds) {
    const state =
      kind.disagreeing === 0
        ? `agrees (${kind.agreeing} checked${kind.pending ? `, ${kind.pending} pending` : ''})`
        : `${kind.disagreeing} disagree, ${kind.agreeing} agree${kind.pending ? `, ${kind.pending} pending` : ''}`;
    out.push(`${kind.kind}: ${state}`);
    for (const line of kind.lines) {
      const where = [
        line.day && `day ${line.day}`,
        line.table && `table ${line.table}`,
        line.cell_from && `cell from ${line.cell_from.slice(11, 16)} UTC`,
        line.project_id !== null && `project ${line.project_name ?? line.project_id}`,
        line.key_id !== null && `key ${line.key_name ?? line.key_id}`,
        line.model !== null && `model ${line.model}`,
      ].filter(Boolean);
      const what = line.differences.map(describe).join('; ');
      out.push(`  ${line.status} ${line.check}: ${where.join(', ')}${what ? `: ${what}` : ''} (${line.note})`);
    }
    if (kind.lines_omitted > 0) out.push(`  … and ${kind.lines_omitted} more`);
  }
  out.push(report.agrees ? 'everything agrees' : `${report.disagreements} disagreement(s)`);
  return out.join('\n');
}

/**
 * An import killed while it had the store to itself leaves a hot journal, which only a
 * connection that may write rolls back (import-transaction.ts): a read-only one cannot open
 * the store until then. Reading once through a writable connection rolls it back. A journal
 * of an import still running is not hot: the read waits the busy timeout, then fails.
 */
function rollBackKilledImport(telemetryPath: string): void {
  const db = new BetterSqlite3(telemetryPath, { fileMustExist: true, timeout: BUSY_TIMEOUT_MS });
  try {
    db.prepare('SELECT COUNT(*) FROM sqlite_master').get();
  } finally {
    db.close();
  }
}

/** Runs the check on its own read-only connection to the telemetry store; null when there is no store. */
export async function runReconcile(
  control: ControlStore,
  telemetry: TelemetryLocation,
  command: ReconcileCommand,
): Promise<ReconcileReport | null> {
  const check = (queries: AnalyticsQueries) =>
    reconcile(
      {
        ledger: () => control.spendLedger(command.orgId),
        day: async (query) => queries.run({ kind: 'reconcile_day', ...query }),
        spend: async (query) => queries.run({ kind: 'reconcile_spend', ...query }),
      },
      command,
    );
  if ('url' in telemetry) {
    const pool = openPool(telemetry.url, { max: 1, applicationName: 'gateway-console reconcile' });
    try {
      const client = await pool.connect();
      try {
        return await check(new AnalyticsQueries(new PgSql(client)));
      } finally {
        client.release();
      }
    } finally {
      await pool.end();
    }
  }
  const telemetryPath = telemetry.path;
  if (!existsSync(telemetryPath)) return null;
  if (existsSync(`${telemetryPath}-journal`)) rollBackKilledImport(telemetryPath);
  const db = new BetterSqlite3(telemetryPath, { readonly: true, fileMustExist: true, timeout: BUSY_TIMEOUT_MS });
  try {
    return await check(new AnalyticsQueries(new SqliteSql(db)));
  } finally {
    db.close();
  }
}

export interface ReconcileFlags {
  org?: string;
  project?: string;
  from?: string;
  to?: string;
  days?: string;
}

/** A YYYY-MM-DD date (or an RFC 3339 time) as epoch ms; NaN when it is neither, or no such day. */
function parseDay(text: string): number {
  const trimmed = text.trim();
  const time = /^(\d{4}-\d{2}-\d{2})(T[\d:.]+(Z|[+-]\d{2}:\d{2}))?$/.exec(trimmed);
  if (!time) return NaN;
  return time[2] === undefined ? (parseUtcDay(time[1]!) ?? NaN) : Date.parse(trimmed);
}

/** The exit code when the check could not run (a store locked or older than this code): neither 0 nor 1. */
export const COULD_NOT_CHECK = 3;

/** "Demo Organization: checked 12 of 90 days" on stderr, at most once a second and after the last day. */
function progress(organization: string): (checked: number, total: number) => void {
  let last = -Infinity;
  return (checked, total) => {
    const at = performance.now();
    if (checked < total && at - last < PROGRESS_EVERY_MS) return;
    last = at;
    console.error(`${organization}: checked ${checked} of ${total} days`);
  };
}

/**
 * Parses the flags, checks every organisation named (or all of them), prints each report and
 * returns the exit code: 0 everything agrees, 1 something disagrees, 2 a usage mistake, 3 a
 * store could not be read.
 */
export async function reconcileCommand(
  control: ControlStore,
  config: ServerConfig,
  flags: ReconcileFlags,
  out: (line: string) => void,
  usage: (message: string) => Error,
): Promise<number> {
  const window: { from?: number; to?: number; days?: number } = {};
  for (const name of ['from', 'to'] as const) {
    const raw = flags[name];
    if (raw === undefined) continue;
    const ms = parseDay(raw);
    if (!Number.isFinite(ms)) throw usage(`--${name} must be a date like 2026-11-01, not "${raw}"`);
    window[name] = ms;
  }
  if (flags.days !== undefined) {
    if (window.from !== undefined) throw usage('give --from and --to, or --days, not both');
    window.days = /^\s*\d+\s*$/.test(flags.days) ? Number(flags.days) : NaN;
  }
  const now = config.now();
  const days = reconcileDays(window, now, LONGEST_WINDOW_DAYS);
  if ('error' in days) throw usage(`--${days.field}: ${days.error}`);
  const every = await control.activity.organizations();
  const chosen = flags.org === undefined ? every : every.filter((org) => org.name === flags.org?.trim());
  if (flags.org !== undefined && chosen.length === 0) throw usage(`no organization named ${flags.org}`);
  if (flags.project !== undefined && chosen.length !== 1) throw usage('--project needs --org');
  const projectId = flags.project?.trim() ?? null;
  if (projectId !== null && !(await control.organizations.projects(chosen[0]!.id)).some((p) => p.id === projectId)) {
    throw usage(`no project ${projectId} in ${chosen[0]!.name}`);
  }
  let agrees = true;
  for (const org of chosen) {
    let report;
    try {
      report = await runReconcile(control, telemetryLocation(config), {
        orgId: org.id,
        projectId,
        days: days.days,
        now,
        ...(days.days.length > 1 ? { onDay: progress(org.name) } : {}),
      });
    } catch (error) {
      // Not the same as "disagrees": cron must tell a store it could not read from wrong figures.
      console.error(`could not check ${org.name}: ${(error as Error).message}`);
      return COULD_NOT_CHECK;
    }
    if (report === null) throw usage(`no telemetry store at ${config.telemetryDbPath}`);
    out(reportText(report, org.name));
    agrees &&= report.agrees;
  }
  if (chosen.length === 0) out('no organisation to check');
  return agrees ? 0 : 1;
}
