import { ConfirmDialog } from '../../components/Dialog.js';
import { useAction } from '../../components/useAction.js';
import { useVaultStore, type VaultKey } from './vault-store.js';

/** Asks before removing a provider key, naming it by provider and hint; a refusal stays in the dialog. */
export function RemoveVaultKeyDialog(props: { vaultKey: VaultKey; onClose: () => void; onRemoved: () => void }) {
  const remove = useVaultStore((s) => s.remove);
  const { run, busy, error } = useAction();
  const { provider, key_hint: hint } = props.vaultKey;
  return (
    <ConfirmDialog
      title="Remove provider key"
      message={
        <>
          Remove the <strong data-testid="remove-provider">{provider}</strong> key (<code>{hint}</code>)? Requests
          routed with your own {provider} key can no longer use it. The key cannot be recovered from the console.
        </>
      }
      confirmLabel={`Remove ${provider} key`}
      busy={busy}
      error={error}
      onConfirm={() =>
        void run(async () => {
          await remove(provider);
          props.onRemoved();
        })
      }
      onClose={props.onClose}
    />
  );
}
