import { useState, type ReactNode } from 'react';
import type { CallResult } from '#contract';
import { Dialog } from '../../components/Dialog.js';
import { Time } from '../../components/Time.js';
import { useAction } from '../../components/useAction.js';
import { formatCount } from '../../lib/format.js';
import { formatMicroPkr } from '../../lib/money.js';
import { api } from '../../state/api.js';
import type { Key } from '../../state/directory.js';
import { KeyDialogActions } from './KeyDialogActions.js';
import { KeyImpactFacts } from './KeyImpactFacts.js';
import { REFUSED_FROM_NEXT_REQUEST } from './RevokeKeyDialog.js';
import { useKeyImpact, type KeyImpactState } from './useKeyImpact.js';

export type RotatedKey = CallResult<'api.rotateKey'>;
/** The replacement once its secret dialog has closed: the secret is not kept. */
export type Replacement = Pick<RotatedKey, 'id' | 'name' | 'key_prefix'>;

/** How often the old key's traffic is read while callers move: live enough to see the last one go. */
export const LIVE_EVERY_MS = 5_000;

/**
 * Rotation's first step: what the replacement will be, and making it. The answer (with the
 * secret, shown once) goes to the screen, which shows it even if this dialog was closed
 * while the request was on its way: the replacement exists then, and counts against the budget.
 */
export function RotateKeyDialog(props: {
  keyToRotate: Key;
  projectName: string | null;
  /** The old key's settled spend (micro-PKR); null when unknown. */
  spentMicro: number | null;
  onClose: () => void;
  onRotated: (oldKey: Key, rotated: RotatedKey) => void;
}) {
  const key = props.keyToRotate;
  const { run, busy, error } = useAction();
  return (
    <Dialog title={`Rotate “${key.name}”`} onClose={props.onClose} testId="rotate-key-dialog">
      <p>
        A new key replaces <code>{key.key_prefix}…</code> with the same project ({props.projectName ?? '–'}),
        environment ({key.environment}), model scope, rate limit ({formatCount(key.rate_limit_rpm)} rpm) and expiry.
      </p>
      <CarriedCredit limitMicro={key.credit_limit_cents} spentMicro={props.spentMicro} />
      <p className="muted">
        The old key keeps working until you revoke it, after its callers have moved to the new secret. Meanwhile both
        keys’ credit limits count against the organisation’s budget.
      </p>
      <KeyDialogActions
        error={error}
        errorTestId="rotate-error"
        busy={busy}
        onCancel={props.onClose}
        confirmLabel="Create replacement"
        confirmTestId="confirm-rotate"
        onConfirm={() =>
          void run(async () => props.onRotated(key, await api('api.rotateKey', { params: { key_id: key.id } })))
        }
      />
    </Dialog>
  );
}

/** A credit limit is a lifetime cap: the replacement gets what the old key has left, not a fresh allowance. */
function CarriedCredit({ limitMicro, spentMicro }: { limitMicro: number | null; spentMicro: number | null }) {
  if (limitMicro === null) {
    return <p data-testid="rotate-credit">Credit limit: unlimited, as now.</p>;
  }
  return (
    <p data-testid="rotate-credit">
      Credit limit: what this key has left of its {formatMicroPkr(limitMicro)}
      {spentMicro === null
        ? ' (its spend so far could not be read here; the server counts it)'
        : `, ${formatMicroPkr(Math.max(0, limitMicro - spentMicro))} (${formatMicroPkr(spentMicro)} spent)`}
      . A credit limit caps what a key spends in its lifetime and the replacement starts with nothing spent, so it
      carries over the remainder: rotating changes the secret, not the allowance.
    </p>
  );
}

/**
 * The wait for callers to move: the old key's traffic, live, and its revocation when the
 * admin says so, asked twice while traffic still arrives (or cannot be read).
 */
export function MoveCallersDialog(props: {
  oldKey: Key;
  replacement: Replacement;
  onClose: () => void;
  /** The old key was revoked: the key list changed. */
  onChanged: () => void;
}) {
  const { oldKey, replacement } = props;
  const impact = useKeyImpact(oldKey.id, LIVE_EVERY_MS);
  const { run, busy, error } = useAction();
  const [asked, setAsked] = useState(false);
  const recent = impact.error ? null : (impact.impact?.requests_last_5m ?? null);
  // Only a fresh read of no traffic lets the revocation go at the first click.
  const quiet = recent === 0;
  const revoke = () =>
    void run(async () => {
      await api('api.revokeKey', { params: { key_id: oldKey.id } });
      props.onChanged();
      props.onClose();
    });

  return (
    <Dialog
      title={`Waiting for callers of “${oldKey.name}” to move`}
      onClose={props.onClose}
      testId="move-callers-dialog"
      wide
    >
      <p>
        Put the new key <code>{replacement.key_prefix}…</code> in place of <code>{oldKey.key_prefix}…</code> wherever it
        is used. Traffic on the old key is read every {LIVE_EVERY_MS / 1000} seconds.
      </p>
      <TrafficNote state={impact} />
      <KeyImpactFacts state={impact} />
      {impact.gone ? (
        <div className="actions">
          <button type="button" className="primary" onClick={props.onClose} data-testid="keep-both">
            Close
          </button>
        </div>
      ) : (
        <>
          <p className="muted">{REFUSED_FROM_NEXT_REQUEST.replace('this key', 'the old key')}</p>
          {asked && (
            <p className="warning" role="alert" data-testid="revoke-old-again">
              {recent === null
                ? 'The old key’s recent traffic is not known: callers still using it'
                : `${formatCount(recent)} requests arrived on the old key in the last 5 minutes: those callers`}{' '}
              get 401 errors from their next request. Revoke it anyway?
            </p>
          )}
          <KeyDialogActions
            error={error}
            busy={busy}
            cancelLabel="Keep both for now"
            cancelTestId="keep-both"
            onCancel={props.onClose}
            confirmLabel={asked ? 'Revoke the old key anyway' : 'Callers have moved: revoke the old key'}
            confirmTestId="revoke-old"
            danger
            onConfirm={() => (quiet || asked ? revoke() : setAsked(true))}
          />
        </>
      )}
    </Dialog>
  );
}

/** The one sentence on whether callers still use the old key, never confident on a failed read. */
function TrafficNote({ state }: { state: KeyImpactState }) {
  const { impact, error, gone } = state;
  if (gone) return null;
  const recent = impact?.requests_last_5m ?? null;
  let text: ReactNode;
  if (!impact || recent === null) {
    text = error
      ? `Recent traffic on the old key could not be read: ${error}.`
      : 'Recent traffic on the old key is unknown.';
  } else if (error) {
    text = (
      <>
        Reading again failed ({error}). At <Time iso={impact.as_of} />, {formatCount(recent)} requests in the last 5
        minutes.
      </>
    );
  } else if (recent > 0) {
    text = `Traffic still arrives on the old key: ${formatCount(recent)} requests in the last 5 minutes.`;
  } else {
    text = 'No requests on the old key in the last 5 minutes.';
  }
  return (
    <p className={recent || error ? 'warning' : 'muted'} role="status" data-testid="old-key-traffic">
      {text}
    </p>
  );
}
