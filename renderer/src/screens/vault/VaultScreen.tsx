import { useEffect, useState } from 'react';
import { useIntent } from '../../commands/intents.js';
import { shortcutHint, STORE_PROVIDER_KEY_SHORTCUT } from '../../commands/shortcut.js';
import { RemoveVaultKeyDialog } from './RemoveVaultKeyDialog.js';
import { StoreVaultKeyDialog } from './StoreVaultKeyDialog.js';
import { VaultTable } from './VaultTable.js';
import { useVaultStore, type VaultKey } from './vault-store.js';
import './vault.css';
import { dataState } from '../../lib/data-state.js';

type Editing = { mode: 'add' } | { mode: 'rotate'; key: VaultKey };

/** Provider keys of the organisation's own (BYOK): add, rotate, remove. Values go in, never come back out. */
export function VaultScreen() {
  const keys = useVaultStore((s) => s.keys);
  const error = useVaultStore((s) => s.error);
  const load = useVaultStore((s) => s.load);
  const [editing, setEditing] = useState<Editing | null>(null);
  const [removing, setRemoving] = useState<VaultKey | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  // The command palette's "Store a provider key" (and its shortcut) opens the same dialog.
  useIntent('storeProviderKey', () => setEditing({ mode: 'add' }));

  useEffect(() => {
    void load();
  }, [load]);

  return (
    <section
      className="vault-screen"
      aria-label="Provider keys"
      data-testid="vault-screen"
      data-state={dataState(keys, error)}
    >
      <p className="muted vault-intro">
        Keys for model providers that your organisation pays directly. They are stored encrypted; after saving, only the
        last characters are ever shown.
      </p>
      <div className="toolbar">
        <p role="status" className="vault-notice" data-testid="vault-notice">
          {notice}
        </p>
        <span className="spacer" />
        <button type="button" onClick={() => void load()}>
          Reload
        </button>
        <button
          type="button"
          className="primary"
          onClick={() => setEditing({ mode: 'add' })}
          {...shortcutHint('Store a provider key', STORE_PROVIDER_KEY_SHORTCUT)}
          data-testid="add-vault-key"
        >
          Add provider key…
        </button>
      </div>
      <VaultTable
        keys={keys}
        error={error}
        onRetry={() => void load()}
        onRotate={(key) => setEditing({ mode: 'rotate', key })}
        onRemove={(key) => setRemoving(key)}
      />
      {editing && (
        <StoreVaultKeyDialog
          rotating={editing.mode === 'rotate' ? editing.key : null}
          existing={keys ?? []}
          onClose={() => setEditing(null)}
          onStored={(stored, replaced) => {
            setEditing(null);
            setNotice(
              `${replaced ? 'Replaced' : 'Stored'} the ${stored.provider} key; it now ends ${stored.key_hint}.`,
            );
          }}
        />
      )}
      {removing && (
        <RemoveVaultKeyDialog
          vaultKey={removing}
          onClose={() => setRemoving(null)}
          onRemoved={() => {
            setRemoving(null);
            setNotice(`Removed the ${removing.provider} key.`);
          }}
        />
      )}
    </section>
  );
}
