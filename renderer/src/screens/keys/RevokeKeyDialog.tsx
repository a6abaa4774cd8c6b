import { ConfirmDialog } from '../../components/Dialog.js';
import { useAction } from '../../components/useAction.js';
import { api } from '../../state/api.js';
import type { Key } from '../../state/directory.js';

/** Asks before revoking, naming the key by name and prefix; a refusal stays in the dialog. */
export function RevokeKeyDialog(props: { keyToRevoke: Key; onClose: () => void; onRevoked: () => void }) {
  const key = props.keyToRevoke;
  const { run, busy, error } = useAction();

  return (
    <ConfirmDialog
      title="Revoke key"
      message={
        <>
          Revoke the key <strong data-testid="revoke-name">{key.name}</strong> (
          <code data-testid="revoke-prefix">{key.key_prefix}…</code>)? Requests with it are refused from now on. This
          cannot be undone.
        </>
      }
      confirmLabel="Revoke key"
      busy={busy}
      error={error}
      onConfirm={() =>
        void run(async () => {
          await api('api.revokeKey', { params: { key_id: key.id } });
          props.onRevoked();
        })
      }
      onClose={props.onClose}
    />
  );
}
