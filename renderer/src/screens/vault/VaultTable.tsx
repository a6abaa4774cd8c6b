import { DataTable, RowActions, type Column } from '../../components/DataTable.js';
import { Time } from '../../components/Time.js';
import type { VaultKey } from './vault-store.js';

const COLUMNS: Column[] = [
  { label: 'Provider' },
  { label: 'Key' },
  { label: 'Added' },
  { label: 'Last changed' },
  { label: 'Actions', hidden: true },
];

export function VaultTable(props: {
  /** Null until read. */
  keys: VaultKey[] | null;
  /** The last read's failure: no list yet, or the one shown may be out of date. */
  error: string | null;
  onRetry: () => void;
  onRotate: (key: VaultKey) => void;
  onRemove: (key: VaultKey) => void;
}) {
  const { keys, error } = props;
  return (
    <DataTable
      testId="vault-table"
      label="Provider keys"
      columns={COLUMNS}
      rows={keys}
      rowKey={(key) => key.provider}
      row={(key) => (
        <tr data-testid="vault-row" data-provider={key.provider}>
          <td data-testid="cell-provider">
            <strong>{key.provider}</strong>
          </td>
          <td data-testid="cell-hint">
            <code>{key.key_hint}</code>
          </td>
          <td data-testid="cell-created">
            <Time iso={key.created_at} />
          </td>
          <td data-testid="cell-updated">
            <Time iso={key.updated_at} />
          </td>
          <RowActions
            actions={[
              {
                text: 'Rotate…',
                label: `Rotate the ${key.provider} key`,
                testId: 'rotate-vault-key',
                onClick: () => props.onRotate(key),
              },
              {
                text: 'Remove',
                label: `Remove the ${key.provider} key`,
                testId: 'remove-vault-key',
                danger: true,
                onClick: () => props.onRemove(key),
              },
            ]}
          />
        </tr>
      )}
      loading={!error && 'Loading provider keys…'}
      error={
        error && (keys === null ? `Provider keys could not be read: ${error}` : `The list may be out of date: ${error}`)
      }
      onRetry={props.onRetry}
      errorTestId={keys === null ? 'vault-error' : undefined}
      empty="No provider keys yet. Add one with “Add provider key…”."
    />
  );
}
