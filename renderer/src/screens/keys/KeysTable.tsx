import type { ReactNode } from 'react';
import { DataTable, RowActions, sortedBy, type Column } from '../../components/DataTable.js';
import { Money } from '../../components/Money.js';
import { Time } from '../../components/Time.js';
import { UNKNOWN, formatCount } from '../../lib/format.js';
import { isExpired, type KeyRow, type Sort, type SortColumn } from '../../lib/key-table.js';
import type { Key } from '../../state/directory.js';

const COLUMNS: Column<SortColumn>[] = [
  { sort: 'name', label: 'Name' },
  { sort: 'prefix', label: 'Prefix' },
  { sort: 'project', label: 'Project' },
  { sort: 'environment', label: 'Environment' },
  { sort: 'rate', label: 'Rate limit', number: true },
  { sort: 'credit', label: 'Credit limit', number: true },
  { sort: 'spend', label: 'Spend', number: true },
  { sort: 'expiry', label: 'Expires' },
  { label: 'Allowed models' },
  { sort: 'created', label: 'Created' },
  { sort: 'lastUsed', label: 'Last used' },
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
}) {
  const sort = { ...props.sort, onSort: props.onSort };
  return (
    <DataTable
      testId="keys-table"
      className="keys-table"
      caption={`API keys, ${sortedBy(COLUMNS, sort)}`}
      columns={COLUMNS}
      sort={sort}
      rows={props.rows}
      rowKey={({ key }) => key.id}
      row={({ key, projectName, spentMicro }) => (
        <tr data-testid="key-row" data-key-id={key.id}>
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
              <Money micro={key.credit_limit_cents} unit />
            )}
          </Cell>
          <Cell name="spend" number>
            {spentMicro === null ? (
              // Why it is unknown is said once, above the table.
              <span className="muted">{UNKNOWN}</span>
            ) : (
              // To the paisa down the column; the exact figure on hover.
              <Money micro={spentMicro} unit />
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
          <RowActions
            actions={[
              { text: 'Edit', label: `Edit the key ${key.name}`, testId: 'edit-key', onClick: () => props.onEdit(key) },
              {
                text: 'Revoke',
                label: `Revoke the key ${key.name}`,
                testId: 'revoke-key',
                danger: true,
                onClick: () => props.onRevoke(key),
              },
            ]}
          />
        </tr>
      )}
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

function Cell({ name, number, children }: { name: string; number?: boolean; children: ReactNode }) {
  return (
    <td className={number ? 'number' : undefined} data-testid={`cell-${name}`}>
      {children}
    </td>
  );
}
