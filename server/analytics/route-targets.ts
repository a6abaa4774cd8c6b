import type { Attempt } from '../schemas/request-log.js';
import type { AnalyticsSql, Dialect } from './sql.js';

/**
 * Each route target's recent figures for the Routes screen (GET /routes), from the request log's
 * `attempts`: one organisation's rows in a short window (15 minutes), read as they are stored and
 * added up here. Attempts that were made count (decisions served, retried, next, gave_up); a
 * target skipped (its breaker open, or it cannot serve) was not tried. A success is an attempt
 * whose answer went to the caller without an error class.
 */

export interface RouteTargetsQuery {
  orgId: string;
  /** The window, epoch ms, both edges included. */
  from: number;
  to: number;
}

export interface TargetFigures {
  /** `provider/model`, as `served_by` and the attempts name it. */
  target: string;
  attempts: number;
  successes: number;
  /** Of the attempts made; null without any. */
  p95Ms: number | null;
  /** The last attempts' outcomes (at most RECENT), oldest first: true for a success. */
  recent: boolean[];
}

/** The most rows read: a window of 15 minutes of a busy organisation stays bounded. */
export const MAX_ROWS = 50_000;
/** How many of a target's last attempts say whether it is failing now. */
export const RECENT = 10;

const MADE = new Set(['served', 'retried', 'next', 'gave_up']);

/** The nearest-rank percentile of ascending `sorted`. */
function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

const rowsSql = (d: Dialect) => `SELECT attempts FROM requests
  WHERE ${d.rowIs('org_id', 'orgId')} AND ts >= @from AND ts <= @to AND attempts IS NOT NULL
  ORDER BY ts DESC LIMIT ${MAX_ROWS}`;

export async function routeTargets(sql: AnalyticsSql, query: RouteTargetsQuery): Promise<TargetFigures[]> {
  const rows = await sql.all<{ attempts: string }>(rowsSql(sql.dialect), {
    orgId: query.orgId,
    from: query.from,
    to: query.to,
  });
  const byTarget = new Map<string, { ms: number[]; successes: number; recent: boolean[] }>();
  // Newest row first: each target's first attempts met are its latest.
  for (const row of rows) {
    let attempts: Attempt[];
    try {
      attempts = JSON.parse(row.attempts) as Attempt[];
    } catch {
      continue;
    }
    if (!Array.isArray(attempts)) continue;
    for (let i = attempts.length - 1; i >= 0; i--) {
      const attempt = attempts[i]!;
      if (typeof attempt?.target !== 'string' || !MADE.has(attempt.decision)) continue;
      let figures = byTarget.get(attempt.target);
      if (!figures) {
        figures = { ms: [], successes: 0, recent: [] };
        byTarget.set(attempt.target, figures);
      }
      const success = attempt.decision === 'served' && attempt.error === null;
      if (success) figures.successes += 1;
      if (typeof attempt.ms === 'number' && Number.isFinite(attempt.ms)) figures.ms.push(attempt.ms);
      if (figures.recent.length < RECENT) figures.recent.push(success);
    }
  }
  return [...byTarget]
    .map(([target, figures]) => ({
      target,
      attempts: figures.ms.length,
      successes: figures.successes,
      p95Ms: percentile(
        figures.ms.sort((a, b) => a - b),
        0.95,
      ),
      recent: figures.recent.reverse(),
    }))
    .sort((a, b) => a.target.localeCompare(b.target));
}
