import type { LedgerKey, SpendLedger } from '../stores/control/spend-ledger.js';
import { DAY_MS } from './reconcile-telemetry.js';
import {
  type CellDifference,
  type ReconcileDayQuery,
  type ReconcileDayResult,
  type ReconcileSpendQuery,
  type ReconcileSpendResult,
  type Sums,
} from './reconcile-types.js';

/**
 * Whether the figures an operator sees add up, for a window of whole UTC days and a scope
 * (the organisation, or one project), in three kinds of line:
 *
 * - totals: each day, the projects add up to the organisation and each project's keys (by the
 *   control store's project of each key) to the project, read from the rollups as the console
 *   reads its summaries; a key's rows recorded under a project that is not its own are named.
 * - spend: each key's settled spend (control store, what enforces its credit limit) against the
 *   lifetime cost of its rows (telemetry store, from their day cells, which the rollups kind checks
 *   against the rows day by day). Spend written beside rows but not yet settled is "pending", as is
 *   a key whose spend moved while the check read it (a settlement landing between the two stores'
 *   reads); neither is a disagreement. Requests still in flight at a gateway hold credit but have
 *   no row and no spend yet, so they are on neither side.
 * - rollups: every rollup table's cells of each day, one by one (minute cells by five minutes),
 *   against the rows they summarise, by project, key and model, or by the one dimension they
 *   hold: a row counted in the wrong hour of its day is found, not only one that left its day.
 *
 * Only what disagrees or is pending is listed (bounded); what agrees is counted.
 */

/** Most days one `GET /reconcile` reads: it bounds one HTTP request, not the window one can check. */
export const MAX_DAYS = 31;
export const DEFAULT_DAYS = 7;
/** Most lines listed per kind; the rest are counted. */
export const MAX_LINES = 200;

/** The kinds in the order a report lists them. */
export const RECONCILE_KINDS = ['totals', 'spend', 'rollups'] as const;
export type ReconcileKind = (typeof RECONCILE_KINDS)[number];
export type Measure = 'requests' | 'tokens' | 'cost_micro';

export interface Difference {
  measure: Measure;
  /** What the finer source says: the parts' sum, the rows. Null: unknown. */
  expected: number | null;
  /** What the checked figure holds. Null: unknown (no such key). */
  found: number | null;
}

export interface ReconcileLine {
  check:
    | 'projects_to_organization'
    | 'keys_to_project'
    | 'key_in_other_project'
    | 'settled_spend'
    | 'unknown_key'
    | 'rollup_cells';
  status: 'disagrees' | 'pending';
  /** YYYY-MM-DD (UTC); null for lifetime figures. */
  day: string | null;
  project_id: string | null;
  project_name: string | null;
  key_id: string | null;
  key_name: string | null;
  model: string | null;
  table: string | null;
  /** Rollup cells finer than a day: the first millisecond of the cell (UTC, ISO 8601). */
  cell_from: string | null;
  differences: Difference[];
  note: string;
}

export interface ReconcileKindReport {
  kind: ReconcileKind;
  checked: number;
  agreeing: number;
  disagreeing: number;
  pending: number;
  lines: ReconcileLine[];
  /** Lines past MAX_LINES, counted only. */
  lines_omitted: number;
}

export interface ReconcileReport {
  from: string;
  to: string;
  project_id: string | null;
  checked_at: string;
  agrees: boolean;
  disagreements: number;
  kinds: ReconcileKindReport[];
}

export interface ReconcileSources {
  /** The control store's keys and settlements, read at once. */
  ledger(): Promise<SpendLedger>;
  day(query: ReconcileDayQuery): Promise<ReconcileDayResult>;
  spend(query: ReconcileSpendQuery): Promise<ReconcileSpendResult>;
}

export interface ReconcileRequest {
  orgId: string;
  projectId: string | null;
  /** First milliseconds of the UTC days checked, ascending. */
  days: number[];
  now: number;
  /** The kinds to check (default all): a console checking a long window asks for the lifetime spend once, the days one by one. */
  kinds?: readonly ReconcileKind[];
  /** Told after each day read, so a long window's caller can show how far it is. */
  onDay?: (checked: number, total: number) => void;
}

const HOUR_MS = 3_600_000;
const floorDay = (ms: number) => ms - (((ms % DAY_MS) + DAY_MS) % DAY_MS);
export const dayText = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** A YYYY-MM-DD day's first millisecond (UTC); null when there is no such day (Date.parse reads 02-30 as 03-02). */
export function parseUtcDay(text: string): number | null {
  const ms = Date.parse(`${text}T00:00:00Z`);
  return Number.isFinite(ms) && dayText(ms) === text ? ms : null;
}

/**
 * The UTC days from `from`'s to `to`'s (both included), or the last `days` up to `now`'s;
 * an error sentence when the window is empty, reversed or over `maxDays` (the route's per-call
 * bound; the admin command passes its own).
 */
export function reconcileDays(
  window: { from?: number; to?: number; days?: number },
  now: number,
  maxDays: number,
): { days: number[] } | { error: string; field: 'from' | 'to' | 'days' } {
  const last = floorDay(window.to ?? now);
  const first = window.from !== undefined ? floorDay(window.from) : last - ((window.days ?? DEFAULT_DAYS) - 1) * DAY_MS;
  if (window.days !== undefined && (!Number.isInteger(window.days) || window.days < 1 || window.days > maxDays)) {
    return { error: `days must be a whole number from 1 to ${maxDays}`, field: 'days' };
  }
  if (first > last) return { error: 'from must not be after to', field: 'from' };
  const count = (last - first) / DAY_MS + 1;
  if (count > maxDays)
    return { error: `the window is ${count} days; at most ${maxDays} are checked at once`, field: 'to' };
  return { days: Array.from({ length: count }, (_, i) => first + i * DAY_MS) };
}

/**
 * `kinds=totals,rollups` as the kinds it names, in the report's order; absent, all of them. An
 * error sentence for a blank, unknown or repeated name: a typo must not quietly check less.
 */
export function parseKinds(text: string | undefined): { kinds: ReconcileKind[] } | { error: string } {
  if (text === undefined) return { kinds: [...RECONCILE_KINDS] };
  const names = text.split(',').map((name) => name.trim());
  const known: readonly string[] = RECONCILE_KINDS;
  for (const [i, name] of names.entries()) {
    if (name === '') return { error: `kinds has a blank name; give some of ${RECONCILE_KINDS.join(', ')}` };
    if (!known.includes(name)) return { error: `kinds names ${name}, not one of ${RECONCILE_KINDS.join(', ')}` };
    if (names.indexOf(name) !== i) return { error: `kinds names ${name} twice` };
  }
  return { kinds: RECONCILE_KINDS.filter((kind) => names.includes(kind)) };
}

const MEASURES: Measure[] = ['requests', 'tokens', 'cost_micro'];

/** The measures on which two sums differ (an unknown side differs from a known one). */
function differences(expected: Sums | null, found: Sums | null): Difference[] {
  return MEASURES.flatMap((measure, i) => {
    const e = expected === null ? null : expected[i]!;
    const f = found === null ? null : found[i]!;
    if (expected !== null && found !== null && (e === null || f === null)) return [];
    return e === f ? [] : [{ measure, expected: e, found: f }];
  });
}

const addSums = (a: Sums, b: Sums): Sums => [a[0] + b[0], (a[1] ?? 0) + (b[1] ?? 0), (a[2] ?? 0) + (b[2] ?? 0)];
const ZERO: Sums = [0, 0, 0];

class KindTally {
  checked = 0;
  disagreeing = 0;
  pending = 0;
  readonly lines: ReconcileLine[] = [];
  omitted = 0;

  constructor(readonly kind: ReconcileKind) {}

  agree(count = 1) {
    this.checked += count;
  }

  line(line: ReconcileLine, counted = true) {
    if (counted) this.checked++;
    if (line.status === 'pending') this.pending++;
    else this.disagreeing++;
    if (this.lines.length < MAX_LINES) this.lines.push(line);
    else this.omitted++;
  }

  report(): ReconcileKindReport {
    return {
      kind: this.kind,
      checked: this.checked,
      agreeing: this.checked - this.disagreeing - this.pending,
      disagreeing: this.disagreeing,
      pending: this.pending,
      lines: this.lines,
      lines_omitted: this.omitted,
    };
  }
}

interface Names {
  key(id: string | null): LedgerKey | undefined;
  project(id: string | null): string | null;
}

function namesOf(ledger: SpendLedger): Names {
  const keys = new Map(ledger.keys.map((key) => [key.id, key]));
  const projects = new Map(ledger.projects.map((project) => [project.id, project.name]));
  return {
    key: (id) => (id === null ? undefined : keys.get(id)),
    project: (id) => (id === null ? null : (projects.get(id) ?? null)),
  };
}

function blankLine(names: Names, fields: Partial<ReconcileLine> & Pick<ReconcileLine, 'check' | 'status' | 'note'>) {
  const key = names.key(fields.key_id ?? null);
  return {
    day: null,
    project_id: null,
    key_id: null,
    model: null,
    table: null,
    cell_from: null,
    differences: [],
    ...fields,
    project_name: names.project(fields.project_id ?? null),
    key_name: key ? `${key.name} (${key.keyPrefix})` : null,
  } satisfies ReconcileLine;
}

function checkSpend(
  tally: KindTally,
  names: Names,
  before: SpendLedger,
  after: SpendLedger,
  telemetry: ReconcileSpendResult,
  projectId: string | null,
) {
  const settled = new Set(before.settled);
  const pending = new Map<string, number>();
  for (const entry of telemetry.outbox) {
    if (!settled.has(entry.settlement)) pending.set(entry.keyId, (pending.get(entry.keyId) ?? 0) + entry.micro);
  }
  const costs = new Map(telemetry.costs.map((cost) => [cost.keyId, cost.costMicro]));
  const spentAfter = new Map(after.keys.map((key) => [key.id, key.spentMicro]));
  const inScope = before.keys.filter((key) => projectId === null || key.projectId === projectId);
  for (const key of inScope) {
    const cost = costs.get(key.id) ?? 0;
    const owed = pending.get(key.id) ?? 0;
    const base = { key_id: key.id, project_id: key.projectId };
    const differencesOf = [{ measure: 'cost_micro' as const, expected: cost - owed, found: key.spentMicro }];
    if (spentAfter.get(key.id) !== key.spentMicro) {
      tally.line(
        blankLine(names, {
          ...base,
          check: 'settled_spend',
          status: 'pending',
          note: 'spend was settled into the key while the check read it; run the check again',
        }),
      );
    } else if (key.spentMicro + owed !== cost) {
      tally.line(
        blankLine(names, {
          ...base,
          check: 'settled_spend',
          status: 'disagrees',
          differences: differencesOf,
          note:
            owed === 0
              ? "the key's settled spend is not the cost of its rows"
              : "the key's settled spend and its spend waiting in the outbox are not the cost of its rows",
        }),
      );
    } else if (owed !== 0) {
      tally.line(
        blankLine(names, {
          ...base,
          check: 'settled_spend',
          status: 'pending',
          differences: differencesOf,
          note: 'the rest of the cost is written beside its rows and waits to be settled into the key',
        }),
      );
    } else tally.agree();
  }
  if (projectId !== null) return;
  const known = new Set(before.keys.map((key) => key.id));
  for (const [keyId, cost] of costs) {
    if (known.has(keyId)) continue;
    tally.line(
      blankLine(names, {
        key_id: keyId,
        check: 'unknown_key',
        status: 'disagrees',
        differences: [{ measure: 'cost_micro', expected: cost, found: null }],
        note: 'rows of a key the control store does not know',
      }),
    );
  }
}

function checkTotals(tally: KindTally, names: Names, day: ReconcileDayResult, projectId: string | null) {
  const dayName = dayText(day.day);
  const projects = new Map(day.projects.map((project) => [project.id, project.sums]));
  if (day.organization !== null) {
    const sum = day.projects.reduce((total, project) => addSums(total, project.sums), ZERO);
    const found = differences(sum, day.organization);
    if (found.length === 0) tally.agree();
    else {
      tally.line(
        blankLine(names, {
          check: 'projects_to_organization',
          status: 'disagrees',
          day: dayName,
          differences: found,
          note: "the projects' totals do not add up to the organisation's",
        }),
      );
    }
  }
  // Each key's total counts toward its own project; rows without a key, or of a key the control
  // store does not know, toward the project their cells name.
  const keysSum = new Map<string | null, Sums>();
  const toProject = (project: string | null, sums: Sums) =>
    keysSum.set(project, addSums(keysSum.get(project) ?? ZERO, sums));
  for (const key of day.keys) {
    const owner = names.key(key.id);
    if (owner) toProject(owner.projectId, key.sums);
  }
  for (const cell of day.keyProjects) if (!names.key(cell.keyId)) toProject(cell.projectId, cell.sums);
  const inScope = (project: string | null) => projectId === null || project === projectId;
  for (const project of new Set([...projects.keys(), ...keysSum.keys()])) {
    if (!inScope(project)) continue;
    const found = differences(keysSum.get(project) ?? ZERO, projects.get(project) ?? ZERO);
    if (found.length === 0) tally.agree();
    else {
      tally.line(
        blankLine(names, {
          check: 'keys_to_project',
          status: 'disagrees',
          day: dayName,
          project_id: project,
          differences: found,
          note: "the project's keys do not add up to the project",
        }),
      );
    }
  }
  for (const cell of day.keyProjects) {
    const owner = names.key(cell.keyId);
    if (!owner || !(inScope(cell.projectId) || inScope(owner.projectId))) continue;
    if (owner.projectId === cell.projectId) {
      tally.agree();
      continue;
    }
    const where = names.project(cell.projectId) ?? cell.projectId ?? 'no project';
    const own = names.project(owner.projectId) ?? owner.projectId;
    tally.line(
      blankLine(names, {
        check: 'key_in_other_project',
        status: 'disagrees',
        day: dayName,
        project_id: cell.projectId,
        key_id: owner.id,
        differences: [{ measure: 'requests', expected: 0, found: cell.sums[0] }],
        note: `rows of this key are recorded under ${where}; the key belongs to ${own}`,
      }),
    );
  }
}

/** "rollup_hour's cell of the hour from 14:00 UTC", or of the day when the day says where. */
function cellText(cell: CellDifference): string {
  if (cell.bucket === null) return `${cell.table}'s cell of the day`;
  const span = cell.width === HOUR_MS ? 'the hour' : `the ${cell.width / 60_000} minutes`;
  return `${cell.table}'s cell of ${span} from ${new Date(cell.bucket).toISOString().slice(11, 16)} UTC`;
}

function checkRollups(tally: KindTally, names: Names, day: ReconcileDayResult) {
  const dayName = dayText(day.day);
  tally.agree(day.cellsChecked - day.differenceCount);
  day.differences.forEach((cell) => {
    tally.line(
      blankLine(names, {
        check: 'rollup_cells',
        status: 'disagrees',
        day: dayName,
        project_id: cell.projectId,
        key_id: cell.keyId,
        model: cell.model,
        table: cell.table,
        cell_from: cell.bucket === null ? null : new Date(cell.bucket).toISOString(),
        differences: differences(cell.rows, cell.cells),
        note: `${cellText(cell)} does not hold what its rows add up to`,
      }),
    );
  });
  // Differences past the day's cap are counted, not listed.
  for (let i = day.differences.length; i < day.differenceCount; i++) {
    tally.disagreeing++;
    tally.checked++;
    tally.omitted++;
  }
}

/**
 * Runs the check of the kinds asked for. For the spend, the control store is read before and
 * after the keys' telemetry, so a settlement landing in between is seen (the spend moved) and
 * called pending, not a difference. Without totals or rollups no day is read.
 */
export async function reconcile(sources: ReconcileSources, request: ReconcileRequest): Promise<ReconcileReport> {
  const { orgId, projectId, days } = request;
  const asked = new Set(request.kinds ?? RECONCILE_KINDS);
  const tallies = new Map(RECONCILE_KINDS.filter((kind) => asked.has(kind)).map((kind) => [kind, new KindTally(kind)]));
  // The totals and the lines' names need the control store's keys and projects in any case; the
  // second read (and the telemetry's lifetime costs between the two) only for the spend.
  const before = await sources.ledger();
  let names = namesOf(before);
  const spendTally = tallies.get('spend');
  if (spendTally) {
    const keyIds =
      projectId === null ? null : before.keys.filter((key) => key.projectId === projectId).map((key) => key.id);
    const spend = await sources.spend({ orgId, keyIds });
    const after = await sources.ledger();
    names = namesOf(after);
    checkSpend(spendTally, names, before, after, spend, projectId);
  }
  const totals = tallies.get('totals');
  const rollups = tallies.get('rollups');
  if (totals || rollups) {
    // One day at a time: each is a bounded job, and other queries run between them.
    for (const [i, day] of days.entries()) {
      const result = await sources.day(projectId === null ? { orgId, day } : { orgId, projectId, day });
      if (totals) checkTotals(totals, names, result, projectId);
      if (rollups) checkRollups(rollups, names, result);
      request.onDay?.(i + 1, days.length);
    }
  }
  const kinds = [...tallies.values()].map((tally) => tally.report());
  const disagreements = kinds.reduce((sum, kind) => sum + kind.disagreeing, 0);
  return {
    from: new Date(days[0]!).toISOString(),
    to: new Date(days.at(-1)! + DAY_MS - 1).toISOString(),
    project_id: projectId,
    checked_at: new Date(request.now).toISOString(),
    agrees: disagreements === 0,
    disagreements,
    kinds,
  };
}
