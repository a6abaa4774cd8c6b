import { Dialog } from '../../components/Dialog.js';
import { useAction } from '../../components/useAction.js';
import { api } from '../../state/api.js';
import { KeyDialogActions } from './KeyDialogActions.js';
import type { Key } from '../../state/directory.js';
import { KeyImpactFacts } from './KeyImpactFacts.js';
import { useKeyImpact } from './useKeyImpact.js';

/** The sentence every revocation says: what the gateway does, and when. */
export const REFUSED_FROM_NEXT_REQUEST = 'The gateway refuses this key from its very next request.';

/**
 * Asks before revoking, naming the key by name and prefix and showing what depends on it
 * (its traffic and callers), read while the question is open; a refusal stays in the dialog.
 */
export function RevokeKeyDialog(props: { keyToRevoke: Key; onClose: () => void; onRevoked: () => void }) {
  const key = props.keyToRevoke;
  const { run, busy, error } = useAction();
  const impact = useKeyImpact(key.id);

  return (
    <Dialog title="Revoke key" onClose={props.onClose} testId="confirm-dialog" wide>
      <p>
        Revoke the key <strong data-testid="revoke-name">{key.name}</strong> (
        <code data-testid="revoke-prefix">{key.key_prefix}…</code>)? This cannot be undone.
      </p>
      <KeyImpactFacts state={impact} />
      <p className="warning" role="note" data-testid="revoke-consequence">
        {REFUSED_FROM_NEXT_REQUEST} Callers still using it get 401 errors.
      </p>
      <KeyDialogActions
        error={error}
        busy={busy}
        onCancel={props.onClose}
        confirmLabel="Revoke key"
        confirmTestId="confirm"
        danger
        onConfirm={() =>
          void run(async () => {
            await api('api.revokeKey', { params: { key_id: key.id } });
            props.onRevoked();
          })
        }
      />
    </Dialog>
  );
}
