import type { ReactNode } from 'react';
import { Empty } from '../../components/Feedback.js';
import { Time } from '../../components/Time.js';
import { UNKNOWN, formatCount } from '../../lib/format.js';
import { isExpired, type KeyRow, type Sort, type SortColumn } from '../../lib/key-table.js';
import { formatMicroPkr, formatMicroPkrToPaisa } from '../../lib/money.js';
import type { Key } from '../../state/directory.js';

const COLUMNS: { column: SortColumn | null; label: string; number?: boolean }[] = [
  { column: 'name', label: 'Name' },
  { column: 'prefix', label: 'Prefix' },
  { column: 'project', label: 'Project' },
  { column: 'environment', label: 'Environment' },
  { column: 'rate', label: 'Rate limit', number: true },
  { column: 'credit', label: 'Credit limit', number: true },
  { column: 'spend', label: 'Spend', number: true },
  { column: 'expiry', label: 'Expires' },
  { column: null, label: 'Allowed models' },
  { column: 'created', label: 'Created' },
  { column: 'lastUsed', label: 'Last used' },
];

const ARIA_SORT = { asc: 'ascending', desc: 'descending' } as const;

export function KeysTable(props: {
  rows: KeyRow[];
  total: number;
  sort: Sort;
  onSort: (column: SortColumn) => void;
  onEdit: (key: Key) => void;
  onRevoke: (key: Key) => void;
}) {
  if (props.total === 0) return <Empty>No keys yet. Create one with “New key…”.</Empty>;
  return (
    <div className="table-wrap">
      <table className="keys-table" data-testid="keys-table">
        <caption className="visually-hidden">
          API keys, sorted by {COLUMNS.find((c) => c.column === props.sort.column)?.label.toLowerCase()},{' '}
          {ARIA_SORT[props.sort.order]}
        </caption>
        <thead>
          <tr>
            {COLUMNS.map(({ column, label, number }) => (
              <th
                key={label}
                scope="col"
                className={number ? 'number' : undefined}
                aria-sort={
                  column === null ? undefined : column === props.sort.column ? ARIA_SORT[props.sort.order] : 'none'
                }
              >
                {column === null ? (
                  label
                ) : (
                  <button type="button" onClick={() => props.onSort(column)} data-testid={`sort-${column}`}>
                    {label}
                    <span aria-hidden="true" className="sort-mark">
                      {column === props.sort.column ? (props.sort.order === 'asc' ? ' ▲' : ' ▼') : ''}
                    </span>
                  </button>
                )}
              </th>
            ))}
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {props.rows.length === 0 && (
            <tr>
              <td colSpan={COLUMNS.length + 1} className="muted">
                No key matches these filters.
              </td>
            </tr>
          )}
          {props.rows.map(({ key, projectName, spentMicro }) => (
            <tr key={key.id} data-testid="key-row" data-key-id={key.id}>
              <Cell name="name">
                <strong>{key.name}</strong>
                {isExpired(key) && <span className="badge">expired</span>}
              </Cell>
              <Cell name="prefix">
                <code>{key.key_prefix}…</code>
              </Cell>
              <Cell name="project">
                {projectName ?? (
                  <span className="muted" title={`Project ${key.project_id}`}>
                    {UNKNOWN}
                  </span>
                )}
              </Cell>
              <Cell name="environment">{key.environment}</Cell>
              <Cell name="rate" number>
                {formatCount(key.rate_limit_rpm)} rpm
              </Cell>
              <Cell name="credit" number>
                {key.credit_limit_cents === null ? (
                  <span className="muted">unlimited</span>
                ) : (
                  formatMicroPkr(key.credit_limit_cents)
                )}
              </Cell>
              <Cell name="spend" number>
                {spentMicro === null ? (
                  // Why it is unknown is said once, above the table.
                  <span className="muted">{UNKNOWN}</span>
                ) : (
                  // To the paisa down the column; the exact figure on hover.
                  <span title={formatMicroPkr(spentMicro)}>{formatMicroPkrToPaisa(spentMicro)}</span>
                )}
              </Cell>
              <Cell name="expiry">
                <Time iso={key.expires_at} whenNull="no expiry" />
              </Cell>
              <Cell name="models">
                {key.allowed_models === null ? (
                  <span className="muted">any</span>
                ) : (
                  <span className="models">{key.allowed_models.join(', ')}</span>
                )}
              </Cell>
              <Cell name="created">
                <Time iso={key.created_at} />
              </Cell>
              <Cell name="last-used">
                <Time iso={key.last_used_at} whenNull="never" />
              </Cell>
              <td>
                <div className="row-actions">
                  <button
                    type="button"
                    onClick={() => props.onEdit(key)}
                    aria-label={`Edit the key ${key.name}`}
                    data-testid="edit-key"
                  >
                    Edit
                  </button>
                  <button
                    type="button"
                    className="danger"
                    onClick={() => props.onRevoke(key)}
                    aria-label={`Revoke the key ${key.name}`}
                    data-testid="revoke-key"
                  >
                    Revoke
                  </button>
                </div>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Cell({ name, number, children }: { name: string; number?: boolean; children: ReactNode }) {
  return (
    <td className={number ? 'number' : undefined} data-testid={`cell-${name}`}>
      {children}
    </td>
  );
}
