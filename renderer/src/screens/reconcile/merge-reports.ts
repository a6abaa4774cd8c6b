import type { KindReport, Report } from './reconcile-lines.js';

/**
 * One report from the many calls of a check: the lifetime spend's, then a report per day. A
 * call reads at most a month, so a longer window is checked a day per call and merged here as
 * the answers arrive, into the report one call over the whole window would have given.
 */

/** As the server's MAX_LINES: the merged report lists no more per kind than one call would. */
export const MAX_LINES = 200;

const ORDER: readonly KindReport['kind'][] = ['totals', 'spend', 'rollups'];

const empty = (kind: KindReport['kind']): KindReport => ({
  kind,
  checked: 0,
  agreeing: 0,
  disagreeing: 0,
  pending: 0,
  lines: [],
  lines_omitted: 0,
});

function mergeKind(into: KindReport, part: KindReport): KindReport {
  const room = Math.max(0, MAX_LINES - into.lines.length);
  const listed = part.lines.slice(0, room);
  return {
    kind: into.kind,
    checked: into.checked + part.checked,
    agreeing: into.agreeing + part.agreeing,
    disagreeing: into.disagreeing + part.disagreeing,
    pending: into.pending + part.pending,
    lines: listed.length === 0 ? into.lines : [...into.lines, ...listed],
    lines_omitted: into.lines_omitted + part.lines_omitted + (part.lines.length - listed.length),
  };
}

/** Whether a report read days (totals or rollups), not only the lifetime spend. */
const readDays = (report: Report) => report.kinds.some((kind) => kind.kind !== 'spend');

/**
 * `part` folded into `into` (null before the first answer): each kind's counts summed, its lines
 * listed up to MAX_LINES and the rest counted as omitted; `from` is the first day's, `to` the last
 * day checked so far; `checked_at` is when the check began (`startedAt`), not when a part answered.
 */
export function mergeReport(into: Report | null, part: Report, startedAt: string): Report {
  const kinds = ORDER.flatMap((name) => {
    const before = into?.kinds.find((kind) => kind.kind === name);
    const added = part.kinds.find((kind) => kind.kind === name);
    if (!before && !added) return [];
    return [mergeKind(before ?? empty(name), added ?? empty(name))];
  });
  const disagreements = kinds.reduce((sum, kind) => sum + kind.disagreeing, 0);
  // The lifetime spend's report names a window of its own, no day of this one.
  const first = into !== null && (readDays(into) || !readDays(part)) ? into : part;
  const last = readDays(part) || into === null ? part : into;
  return {
    from: first.from,
    to: last.to,
    project_id: part.project_id,
    checked_at: startedAt,
    agrees: disagreements === 0,
    disagreements,
    kinds,
  };
}
