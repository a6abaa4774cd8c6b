import type { CallResult } from '#contract';
import { CopyButton } from '../../components/CopyButton.js';
import { Dialog } from '../../components/Dialog.js';
import { formatCount } from '../../lib/format.js';
import { formatMicroPkr } from '../../lib/money.js';
import { useSession } from '../../state/session.js';

/** The embedded server's gateway, while the console is on it: where this key can be used at once. */
function useEmbeddedGateway(): string | null {
  return useSession((s) => {
    const profile = s.profiles.find((p) => p.id === s.profileId);
    return profile?.kind === 'embedded' ? (s.embedded?.gatewayUrl ?? null) : null;
  });
}

/**
 * The new key's secret, shown this once: the server keeps only its hash. Nothing here
 * stores it; when the dialog closes the only copy in the console goes with it.
 */
export function SecretDialog(props: {
  created: CallResult<'api.createKey'>;
  projectName: string | null;
  onClose: () => void;
}) {
  const { created } = props;
  const gateway = useEmbeddedGateway();
  return (
    // Not dismissible: a stray Escape must not take the only copy of the secret with it.
    <Dialog title={`Key “${created.name}” created`} onClose={props.onClose} testId="secret-dialog" dismissible={false}>
      <p className="warning" role="note" data-testid="secret-warning">
        <strong>Copy the secret now.</strong> This is the only time it is shown: the server keeps only a hash of it, and
        the console forgets it when you close this dialog. If it is lost, revoke the key and create another.
      </p>
      <p className="secret-label">Secret</p>
      <code className="secret" data-testid="secret">
        {created.api_key}
      </code>
      <CopyButton text={created.api_key} label="Copy the secret" testId="copy-secret" />
      <dl className="key-facts">
        <dt>Prefix</dt>
        <dd>
          <code>{created.key_prefix}…</code>
        </dd>
        <dt>Project</dt>
        <dd>{props.projectName ?? created.project_id}</dd>
        <dt>Environment</dt>
        <dd>{created.environment}</dd>
        <dt>Rate limit</dt>
        <dd>{formatCount(created.rate_limit_rpm)} rpm</dd>
        <dt>Credit limit</dt>
        <dd>{created.credit_limit_cents === null ? 'unlimited' : formatMicroPkr(created.credit_limit_cents)}</dd>
        <dt>Allowed models</dt>
        <dd>{created.allowed_models === null ? 'any' : created.allowed_models.join(', ')}</dd>
      </dl>
      {gateway && (
        <div className="gateway-hint" data-testid="gateway-hint">
          <p>
            Call it through this console&apos;s gateway, with any OpenAI SDK (<code>baseURL</code>) or HTTP client:
          </p>
          <code className="secret" data-testid="gateway-url">
            {gateway}
          </code>
          <CopyButton text={gateway} label="Copy the gateway address" testId="copy-gateway" />
        </div>
      )}
      <div className="actions">
        <button type="button" className="primary" onClick={props.onClose} data-testid="close-secret">
          I have copied it — close
        </button>
      </div>
    </Dialog>
  );
}
