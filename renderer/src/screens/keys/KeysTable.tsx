import type { ReactNode } from 'react';
import { DataTable, RowActions, sortedBy, type Column } from '../../components/DataTable.js';
import { Money } from '../../components/Money.js';
import { Time } from '../../components/Time.js';
import { UNKNOWN, formatCount } from '../../lib/format.js';
import { isExpired, type KeyRow, type Sort, type SortColumn } from '../../lib/key-table.js';
import type { Key } from '../../state/directory.js';

/*
 * Six columns that fit a 1280-pixel window: each holds a few related facts on lines of their own
 * (the name over its prefix, the project over its environment, the limits with spend, the dates),
 * and every fact keeps its sort in the column's header.
 */
const SELECT_COLUMN: Column<SortColumn> = { label: 'Selected', hidden: true };
const COLUMNS: Column<SortColumn>[] = [
  { sort: 'name', label: 'Name', also: [{ sort: 'prefix', label: 'Prefix' }] },
  { sort: 'project', label: 'Project', also: [{ sort: 'environment', label: 'Environment' }] },
  {
    sort: 'rate',
    label: 'Rate',
    also: [
      { sort: 'spend', label: 'Spend' },
      { sort: 'credit', label: 'Credit' },
      { sort: 'expiry', label: 'Expires' },
    ],
  },
  { label: 'Allowed models' },
  { sort: 'lastUsed', label: 'Last used', also: [{ sort: 'created', label: 'Created' }] },
  { label: 'Actions', hidden: true },
];

export function KeysTable(props: {
  /** The keys that pass the filters, sorted; null until read. */
  rows: KeyRow[] | null;
  /** How many keys there are before the filters. */
  total: number;
  error: string | undefined;
  onRetry: () => void;
  sort: Sort;
  onSort: (column: SortColumn) => void;
  onEdit: (key: Key) => void;
  onRevoke: (key: Key) => void;
  /** Null on a control plane without rotation. */
  onRotate: ((key: Key) => void) | null;
  /** Null on a control plane without bulk actions: no checkboxes. */
  selected: ReadonlySet<string> | null;
  onSelect: (key: Key, selected: boolean) => void;
}) {
  const sort = { ...props.sort, onSort: props.onSort };
  const { selected, onRotate } = props;
  const columns = selected ? [SELECT_COLUMN, ...COLUMNS] : COLUMNS;
  return (
    <DataTable
      testId="keys-table"
      className="keys-table"
      caption={`API keys, ${sortedBy(COLUMNS, sort)}`}
      columns={columns}
      sort={sort}
      rows={props.rows}
      rowKey={({ key }) => key.id}
      row={({ key, projectName, spentMicro }) => {
        // After a rotation two keys share a name: every label names the prefix too.
        const named = `the key ${key.name} (${key.key_prefix}…)`;
        const expired = isExpired(key);
        return (
          <tr data-testid="key-row" data-key-id={key.id} className={selected?.has(key.id) ? 'selected' : undefined}>
            {selected && (
              <td className="select">
                <input
                  type="checkbox"
                  checked={selected.has(key.id)}
                  onChange={(e) => props.onSelect(key, e.target.checked)}
                  aria-label={`Select ${named}`}
                  data-testid="select-key"
                />
              </td>
            )}
            <td className="key-name">
              <Fact name="name">
                <strong>{key.name}</strong>
                {expired && <span className="badge">expired</span>}
              </Fact>
              <Fact name="prefix" sub>
                <code>{key.key_prefix}…</code>
              </Fact>
            </td>
            <td className="key-project">
              <Fact name="project">
                {projectName ?? (
                  <span className="muted" title={`Project ${key.project_id}`}>
                    {UNKNOWN}
                  </span>
                )}
              </Fact>
              <Fact name="environment" sub>
                {key.environment}
              </Fact>
            </td>
            <td className="key-limits">
              <div>
                <Fact name="rate" inline>
                  {formatCount(key.rate_limit_rpm)} rpm
                </Fact>
              </div>
              <div className="spend-line">
                <Fact name="spend" inline>
                  {spentMicro === null ? (
                    // Why it is unknown is said once, above the table.
                    <span className="muted">{UNKNOWN}</span>
                  ) : (
                    // To the paisa down the column; the exact figure on hover.
                    <Money micro={spentMicro} unit />
                  )}
                </Fact>
                <span className="muted"> of </span>
                <Fact name="credit" inline>
                  {key.credit_limit_cents === null ? (
                    <span className="muted">unlimited</span>
                  ) : (
                    <Money micro={key.credit_limit_cents} unit />
                  )}
                </Fact>
              </div>
              <div>
                {key.expires_at !== null && <span className="muted">{expired ? 'expired ' : 'expires '}</span>}
                <Fact name="expiry" inline>
                  <Time iso={key.expires_at} whenNull="no expiry" minutes />
                </Fact>
              </div>
            </td>
            <td className="key-models" data-testid="cell-models">
              {key.allowed_models === null ? (
                <span className="muted">any</span>
              ) : (
                // Wrapped between models, never inside a model's name.
                key.allowed_models.map((model, i) => (
                  <span key={model}>
                    {i > 0 && ', '}
                    <span className="model">{model}</span>
                  </span>
                ))
              )}
            </td>
            <td className="key-dates">
              <div>
                {key.last_used_at === null ? (
                  <span className="muted">
                    <Fact name="last-used" inline>
                      never
                    </Fact>{' '}
                    used
                  </span>
                ) : (
                  <>
                    <span className="muted">used </span>
                    <Fact name="last-used" inline>
                      <Time iso={key.last_used_at} minutes />
                    </Fact>
                  </>
                )}
              </div>
              <div className="sub">
                <span className="muted">created </span>
                <Fact name="created" inline>
                  <Time iso={key.created_at} minutes />
                </Fact>
              </div>
            </td>
            <RowActions
              actions={[
                { text: 'Edit', label: `Edit ${named}`, testId: 'edit-key', onClick: () => props.onEdit(key) },
                ...(onRotate
                  ? [{ text: 'Rotate', label: `Rotate ${named}`, testId: 'rotate-key', onClick: () => onRotate(key) }]
                  : []),
                {
                  text: 'Revoke',
                  label: `Revoke ${named}`,
                  testId: 'revoke-key',
                  danger: true,
                  onClick: () => props.onRevoke(key),
                },
              ]}
            />
          </tr>
        );
      }}
      loading={!props.error && 'Loading keys…'}
      error={props.error}
      onRetry={props.onRetry}
      errorTestId="keys-error"
      total={props.total}
      empty="No keys yet. Create one with “New key…”."
      noMatch="No key matches these filters."
    />
  );
}

/** One fact of a cell, by the name tests and the layout probe read it by (`cell-<name>`). */
function Fact({ name, sub, inline, children }: { name: string; sub?: boolean; inline?: boolean; children: ReactNode }) {
  const Tag = inline ? 'span' : 'div';
  return (
    <Tag className={sub ? 'sub' : undefined} data-testid={`cell-${name}`}>
      {children}
    </Tag>
  );
}
