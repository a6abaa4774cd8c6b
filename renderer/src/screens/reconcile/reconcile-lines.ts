import type { CallResult } from '#contract';
import { formatCount } from '../../lib/format.js';
import { formatMicroPkr } from '../../lib/money.js';
import { MAX_RANGE_MS, UNIT_MS } from '../../lib/time-range.js';
import type { RouteParams } from '../../state/route.js';

/** How the Reconcile screen words a report's lines, and where each one leads. */

export type Report = CallResult<'api.reconcile'>;
export type KindReport = Report['kinds'][number];
export type Line = KindReport['lines'][number];
type Difference = Line['differences'][number];

export const KIND_TITLES: Record<KindReport['kind'], string> = {
  totals: 'Keys add up to projects, projects to the organisation',
  spend: "Keys' settled spend against the cost of their rows",
  rollups: 'Rollups against the rows they summarise',
};

const CHECK_TITLES: Record<Line['check'], string> = {
  projects_to_organization: 'Projects → organisation',
  keys_to_project: 'Keys → project',
  key_in_other_project: 'Key in another project',
  settled_spend: 'Settled spend',
  unknown_key: 'Unknown key',
  rollup_cells: 'Rollup cell',
};

export const checkTitle = (line: Line) => CHECK_TITLES[line.check];

const MEASURE_NAMES: Record<Difference['measure'], string> = {
  requests: 'requests',
  tokens: 'tokens',
  cost_micro: 'cost',
};

const figure = (measure: Difference['measure'], value: number | null) =>
  measure === 'cost_micro' ? formatMicroPkr(value) : formatCount(value);

/** "cost 1.00 PKR, expected 1.25 PKR (−0.25 PKR)"; an unknown side reads "–" and has no gap. */
export function differenceText(difference: Difference): string {
  const { measure, expected, found } = difference;
  const gap =
    expected === null || found === null
      ? ''
      : ` (${found - expected > 0 ? '+' : '−'}${figure(measure, Math.abs(found - expected))})`;
  return `${MEASURE_NAMES[measure]} ${figure(measure, found)}, expected ${figure(measure, expected)}${gap}`;
}

/** Where a line is: its day, table, project, key and model, as far as it names them. */
export function whereText(line: Line): string[] {
  return [
    line.day && `Day ${line.day}`,
    line.table && `Table ${line.table}`,
    line.cell_from && `Cell from ${line.cell_from.slice(11, 16)} UTC`,
    line.project_id !== null && `Project ${line.project_name ?? line.project_id}`,
    line.key_id !== null && `Key ${line.key_name ?? line.key_id}`,
    line.model !== null && `Model ${line.model || '–'}`,
  ].filter((part): part is string => typeof part === 'string');
}

/**
 * The request log narrowed to the line's key (or project) on exactly its UTC day, or over the
 * longest window the log offers for lifetime figures (a key's spend). Null when the line names
 * neither a key nor a project.
 */
export function requestLogParams(line: Line): RouteParams | null {
  const params: Record<string, string> = {};
  if (line.key_id !== null) params.key = line.key_id;
  else if (line.project_id !== null) params.project = line.project_id;
  else return null;
  if (line.model) params.model = line.model;
  if (!line.day) return { ...params, range: `${MAX_RANGE_MS / UNIT_MS.d}d` };
  const start = Date.parse(`${line.day}T00:00:00Z`);
  return { ...params, from: new Date(start).toISOString(), to: new Date(start + UNIT_MS.d).toISOString() };
}

/** "Everything agrees" or the count of what does not; a report of part of its window says so. */
export function summaryText(report: Report, complete = true): string {
  if (report.agrees) return complete ? 'Everything agrees' : 'Everything checked agrees';
  return `${formatCount(report.disagreements)} ${report.disagreements === 1 ? 'disagreement' : 'disagreements'}`;
}

export function kindCounts(kind: KindReport): string {
  const parts = [`${formatCount(kind.agreeing)} agree`];
  if (kind.disagreeing) parts.push(`${formatCount(kind.disagreeing)} disagree`);
  if (kind.pending) parts.push(`${formatCount(kind.pending)} pending`);
  return `${formatCount(kind.checked)} checked: ${parts.join(', ')}`;
}
