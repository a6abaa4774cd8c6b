import type { Key } from '../state/directory.js';

/**
 * The keys table's filtering and sorting, apart from React so it can be tested. Each
 * column sorts by what its null means: no credit limit is unlimited (largest), no expiry
 * is never (latest), no last use is never (earliest); an unknown spend goes last either way.
 */

export const ENVIRONMENTS = ['production', 'development', 'testing'] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

export function isEnvironment(value: string): value is Environment {
  return (ENVIRONMENTS as readonly string[]).includes(value);
}

export const SORT_COLUMNS = [
  'name',
  'prefix',
  'project',
  'environment',
  'rate',
  'credit',
  'spend',
  'expiry',
  'created',
  'lastUsed',
] as const;
export type SortColumn = (typeof SORT_COLUMNS)[number];
export type SortOrder = 'asc' | 'desc';
export interface Sort {
  column: SortColumn;
  order: SortOrder;
}

export const DEFAULT_SORT: Sort = { column: 'created', order: 'desc' };

export interface KeyRow {
  key: Key;
  projectName: string | null;
  /** Micro-PKR; null when it could not be read. */
  spentMicro: number | null;
}

/** A key past its expiry: the server refuses it, though it stays listed until revoked. */
export function isExpired(key: Pick<Key, 'expires_at'>, now: number = Date.now()): boolean {
  return key.expires_at !== null && Date.parse(key.expires_at) <= now;
}

export interface KeyFilter {
  project?: string | undefined;
  environment?: string | undefined;
  /** One key by id (the command palette's "a key by name or prefix"). */
  key?: string | undefined;
}

export function filterKeys(rows: readonly KeyRow[], filter: KeyFilter): KeyRow[] {
  return rows.filter(
    ({ key }) =>
      (!filter.project || key.project_id === filter.project) &&
      (!filter.environment || key.environment === filter.environment) &&
      (!filter.key || key.id === filter.key),
  );
}

const time = (iso: string | null, whenNull: number) => (iso === null ? whenNull : Date.parse(iso));

/** A column's value for sorting; null only where the value is unknown (it then sorts last). */
function sortValue(row: KeyRow, column: SortColumn): string | number | null {
  const { key } = row;
  switch (column) {
    case 'name':
      return key.name;
    case 'prefix':
      return key.key_prefix;
    case 'project':
      return row.projectName;
    case 'environment':
      return key.environment;
    case 'rate':
      return key.rate_limit_rpm;
    case 'credit':
      return key.credit_limit_cents ?? Number.POSITIVE_INFINITY;
    case 'spend':
      return row.spentMicro;
    case 'expiry':
      return time(key.expires_at, Number.POSITIVE_INFINITY);
    case 'created':
      return time(key.created_at, Number.NEGATIVE_INFINITY);
    case 'lastUsed':
      return time(key.last_used_at, Number.NEGATIVE_INFINITY);
  }
}

const text = new Intl.Collator(undefined, { sensitivity: 'base', numeric: true });

function compareValues(a: string | number, b: string | number): number {
  if (typeof a === 'number' && typeof b === 'number') return a === b ? 0 : a < b ? -1 : 1;
  return text.compare(String(a), String(b));
}

export function sortKeys(rows: readonly KeyRow[], sort: Sort): KeyRow[] {
  const direction = sort.order === 'asc' ? 1 : -1;
  return [...rows].sort((a, b) => {
    const va = sortValue(a, sort.column);
    const vb = sortValue(b, sort.column);
    if (va === null || vb === null) {
      if (va !== vb) return va === null ? 1 : -1;
    } else {
      const order = compareValues(va, vb) * direction;
      if (order !== 0) return order;
    }
    // Ties keep the server's order: newest first.
    return compareValues(time(b.key.created_at, 0), time(a.key.created_at, 0)) || text.compare(a.key.id, b.key.id);
  });
}

/** The sort kept in the route parameters ("sort=credit&order=asc"); anything else is the default. */
export function sortFromParams(params: Readonly<Record<string, string>>): Sort {
  const column = (SORT_COLUMNS as readonly string[]).includes(params.sort ?? '')
    ? (params.sort as SortColumn)
    : DEFAULT_SORT.column;
  const order = params.order === 'asc' || params.order === 'desc' ? params.order : DEFAULT_SORT.order;
  return { column, order };
}

/** Clicking a header: the same column flips its order; a new one starts ascending (dates newest first). */
export function nextSort(current: Sort, column: SortColumn): Sort {
  if (current.column === column) return { column, order: current.order === 'asc' ? 'desc' : 'asc' };
  const newestFirst = column === 'created' || column === 'lastUsed';
  return { column, order: newestFirst ? 'desc' : 'asc' };
}
