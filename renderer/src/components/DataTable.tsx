import { Fragment, type Key, type ReactNode } from 'react';
import { Empty, ErrorNote, Loading } from './Feedback.js';
import { useScrolls } from './useScrolls.js';

/**
 * The shell every list table of the console shares: the error above it, "reading…" until the
 * rows arrive, a sentence instead of an empty table, and the table itself with its header
 * (sortable where a screen sorts). Each screen keeps its own columns and its rows' cells.
 */

export interface Column<S extends string = never> {
  label: string;
  /** Said to screen readers only (a column of row actions). */
  hidden?: boolean;
  /** Right-aligned figures. */
  number?: boolean;
  /** The sort its header's button asks for; without it the header is plain text. */
  sort?: S;
  /** Further sorts offered in the same header, for a column that shows several facts ("Name · Prefix"). */
  also?: readonly { sort: S; label: string }[];
}

export interface TableSort<S extends string> {
  column: S;
  order: 'asc' | 'desc';
  onSort: (column: S) => void;
}

const ARIA_SORT = { asc: 'ascending', desc: 'descending' } as const;

export interface DataTableProps<Row, S extends string = never> {
  testId: string;
  /** The table's name: the id of a heading that shows it, or a label. */
  labelledBy?: string;
  label?: string;
  /** A caption for screen readers. */
  caption?: ReactNode;
  className?: string;
  columns: readonly Column<S>[];
  sort?: TableSort<S>;
  /** Null until read. */
  rows: readonly Row[] | null;
  rowKey: (row: Row, index: number) => Key;
  /** One row of the table: a `<tr>` with the screen's own cells. */
  row: (row: Row) => ReactNode;
  /** Shown while `rows` is null (nothing when false). */
  loading?: ReactNode;
  /** A read that failed: said above the table, with a way to read again. */
  error?: string | null;
  onRetry?: () => void;
  errorTestId?: string;
  /** Said instead of the table when there is nothing at all (`total`, or else no rows). */
  empty: ReactNode;
  /** How many rows there are before a filter; with `noMatch`, said in the table when none passes. */
  total?: number;
  noMatch?: ReactNode;
}

export function DataTable<Row, S extends string = never>(props: DataTableProps<Row, S>) {
  const { rows, sort } = props;
  const [wrap, scrolls] = useScrolls<HTMLDivElement>();
  let body: ReactNode;
  if (rows === null) body = props.loading ? <Loading>{props.loading}</Loading> : null;
  else if ((props.total ?? rows.length) === 0) body = <Empty>{props.empty}</Empty>;
  else
    body = (
      <div
        className="table-wrap"
        ref={wrap}
        {...(scrolls && {
          tabIndex: 0,
          role: 'region',
          'aria-label': props.label,
          'aria-labelledby': props.labelledBy,
        })}
      >
        <table
          className={props.className}
          aria-label={props.label}
          aria-labelledby={props.labelledBy}
          data-testid={props.testId}
        >
          {props.caption && <caption className="visually-hidden">{props.caption}</caption>}
          <thead>
            <tr>
              {props.columns.map((column) => (
                <Header key={column.label} column={column} sort={sort} />
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.length === 0 && props.noMatch && (
              <tr>
                <td colSpan={props.columns.length} className="muted">
                  {props.noMatch}
                </td>
              </tr>
            )}
            {rows.map((row, i) => (
              <Fragment key={props.rowKey(row, i)}>{props.row(row)}</Fragment>
            ))}
          </tbody>
        </table>
      </div>
    );
  return (
    <>
      <ErrorNote error={props.error} onRetry={props.onRetry} testId={props.errorTestId} />
      {body}
    </>
  );
}

/** A column's sorts, its own first. */
function sortsOf<S extends string>(column: Column<S>): { sort: S; label: string }[] {
  return [...(column.sort === undefined ? [] : [{ sort: column.sort, label: column.label }]), ...(column.also ?? [])];
}

function Header<S extends string>({ column, sort }: { column: Column<S>; sort: TableSort<S> | undefined }) {
  const { label, hidden, number } = column;
  const sorts = sort ? sortsOf(column) : [];
  return (
    <th
      scope="col"
      className={[number && 'number', sorts.length > 1 && 'sorts'].filter(Boolean).join(' ') || undefined}
      aria-sort={
        !sort || sorts.length === 0
          ? undefined
          : sorts.some((s) => s.sort === sort.column)
            ? ARIA_SORT[sort.order]
            : 'none'
      }
    >
      {hidden ? (
        <span className="visually-hidden">{label}</span>
      ) : !sort || sorts.length === 0 ? (
        label
      ) : (
        sorts.map((by, i) => (
          <Fragment key={by.sort}>
            {i > 0 && (
              <span aria-hidden="true" className="sort-between">
                {' · '}
              </span>
            )}
            <button type="button" onClick={() => sort.onSort(by.sort)} data-testid={`sort-${by.sort}`}>
              {by.label}
              <span aria-hidden="true" className="sort-mark">
                {by.sort === sort.column ? (sort.order === 'asc' ? ' ▲' : ' ▼') : ''}
              </span>
            </button>
          </Fragment>
        ))
      )}
    </th>
  );
}

/** The sorted-by sentence of a caption: "sorted by name, ascending". */
export function sortedBy<S extends string>(columns: readonly Column<S>[], sort: TableSort<S>): string {
  const by = columns.flatMap(sortsOf).find((s) => s.sort === sort.column);
  return `sorted by ${by?.label.toLowerCase()}, ${ARIA_SORT[sort.order]}`;
}

export interface RowAction {
  /** The button's text, and what it says to a screen reader (which row it acts on). */
  text: string;
  label: string;
  testId: string;
  /** Destructive (remove, revoke). */
  danger?: boolean;
  onClick: () => void;
}

/** The last cell of a row: its buttons. */
export function RowActions({ actions }: { actions: readonly RowAction[] }) {
  return (
    <td>
      <div className="row-actions">
        {actions.map(({ text, label, testId, danger, onClick }) => (
          <button
            key={testId}
            type="button"
            className={danger ? 'danger' : undefined}
            onClick={onClick}
            aria-label={label}
            data-testid={testId}
          >
            {text}
          </button>
        ))}
      </div>
    </td>
  );
}
