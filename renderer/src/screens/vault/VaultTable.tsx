import { Empty } from '../../components/Feedback.js';
import { Time } from '../../components/Time.js';
import type { VaultKey } from './vault-store.js';

export function VaultTable(props: {
  keys: VaultKey[];
  onRotate: (key: VaultKey) => void;
  onRemove: (key: VaultKey) => void;
}) {
  if (props.keys.length === 0) return <Empty>No provider keys yet. Add one with “Add provider key…”.</Empty>;
  return (
    <div className="table-wrap">
      <table data-testid="vault-table" aria-label="Provider keys">
        <thead>
          <tr>
            <th scope="col">Provider</th>
            <th scope="col">Key</th>
            <th scope="col">Added</th>
            <th scope="col">Last changed</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {props.keys.map((key) => (
            <tr key={key.provider} data-testid="vault-row" data-provider={key.provider}>
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
              <td>
                <div className="row-actions">
                  <button
                    type="button"
                    onClick={() => props.onRotate(key)}
                    aria-label={`Rotate the ${key.provider} key`}
                    data-testid="rotate-vault-key"
                  >
                    Rotate…
                  </button>
                  <button
                    type="button"
                    className="danger"
                    onClick={() => props.onRemove(key)}
                    aria-label={`Remove the ${key.provider} key`}
                    data-testid="remove-vault-key"
                  >
                    Remove
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
