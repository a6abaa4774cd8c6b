import { useEffect, useRef, useState } from 'react';
import type { CallResult } from '#contract';
import { Dialog } from '../../components/Dialog.js';
import { useAction } from '../../components/useAction.js';
import { formatCount } from '../../lib/format.js';
import { api } from '../../state/api.js';
import type { Key } from '../../state/directory.js';
import { BulkLimitsFields } from './BulkLimitsFields.js';
import { BulkResultsTable } from './BulkResultsTable.js';
import { EMPTY_FORM, readBulkLimits, type BulkField, type BulkLimits, type BulkLimitsForm } from './bulk-limits.js';
import { REFUSED_FROM_NEXT_REQUEST } from './RevokeKeyDialog.js';

export type BulkAction = 'revoke' | 'update_limits';
type BulkResult = CallResult<'api.bulkKeys'>;

/**
 * A change to several keys, never blind: the server first runs it as a dry run (the same
 * checks, rolled back) and the dialog shows per key what would happen, refusals included;
 * only then is it applied, and the report says per key what did.
 */
export function BulkKeysDialog(props: {
  keys: readonly Key[];
  action: BulkAction;
  onClose: () => void;
  /** Something was applied: the key list is stale. */
  onApplied: () => void;
}) {
  const revoking = props.action === 'revoke';
  const [form, setForm] = useState<BulkLimitsForm>(EMPTY_FORM);
  const [formErrors, setFormErrors] = useState<Partial<Record<BulkField | 'form', string>>>({});
  const [limits, setLimits] = useState<BulkLimits | null>(null);
  const [preview, setPreview] = useState<BulkResult | null>(null);
  const [report, setReport] = useState<BulkResult | null>(null);
  const { run, busy, error } = useAction();
  const summaryRef = useRef<HTMLParagraphElement>(null);

  const send = (ids: string[], dryRun: boolean, asked: BulkLimits | null) =>
    api('api.bulkKeys', {
      body: { action: props.action, key_ids: ids, dry_run: dryRun, ...(asked ? { limits: asked } : {}) },
    });
  const selectedIds = props.keys.map((key) => key.id);

  // The preview takes the focus: a second click or Enter meant for "Preview" lands on no button.
  useEffect(() => {
    if (preview) summaryRef.current?.focus();
  }, [preview]);

  // A revocation has nothing to fill in: its preview is read at once.
  useEffect(() => {
    if (revoking) void run(async () => setPreview(await send(selectedIds, true, null)));
  }, []);

  const previewLimits = () => {
    const read = readBulkLimits(form);
    if ('errors' in read) return setFormErrors(read.errors);
    setFormErrors({});
    void run(async () => {
      setPreview(await send(selectedIds, true, read.limits));
      setLimits(read.limits);
    });
  };
  // Only the keys the preview showed would change: a key refused then is not tried again unseen.
  const readyIds = preview?.results.filter((r) => r.outcome === 'ok').map((r) => r.id) ?? [];
  const ready = readyIds.length;
  const apply = () =>
    void run(async () => {
      setReport(await send(readyIds, false, limits));
      props.onApplied();
    });

  const count = `${formatCount(props.keys.length)} key${props.keys.length === 1 ? '' : 's'}`;
  const title = revoking ? `Revoke ${count}` : `Change the limits of ${count}`;
  const lastUsed = new Map(props.keys.map((key) => [key.id, key.last_used_at]));

  return (
    // Not closable while a call is on its way: the per-key report must not be lost.
    <Dialog title={title} onClose={props.onClose} testId="bulk-keys-dialog" wide dismissible={!busy}>
      {report ? (
        <>
          <p role="status" data-testid="bulk-report-summary">
            {summary(report, revoking)}
          </p>
          <BulkResultsTable result={report} revoking={revoking} lastUsed={lastUsed} />
        </>
      ) : preview ? (
        <>
          <p data-testid="bulk-preview-summary" ref={summaryRef} tabIndex={-1}>
            Dry run, nothing changed yet: {summary(preview, revoking)}
          </p>
          <BulkResultsTable result={preview} revoking={revoking} lastUsed={lastUsed} />
          {revoking && <p className="warning">{REFUSED_FROM_NEXT_REQUEST.replace('this key', 'each revoked key')}</p>}
        </>
      ) : revoking ? (
        <p className="muted">Checking each key…</p>
      ) : (
        <BulkLimitsFields form={form} onChange={setForm} errors={formErrors} />
      )}
      {(error ?? formErrors.form) && (
        <p role="alert" className="error" data-testid="bulk-error">
          {error ?? formErrors.form}
        </p>
      )}
      <div className="actions">
        {report ? (
          <button type="button" className="primary" onClick={props.onClose} data-testid="bulk-close">
            Close
          </button>
        ) : (
          <>
            <button
              type="button"
              disabled={busy}
              onClick={preview && !revoking ? () => setPreview(null) : props.onClose}
            >
              {preview && !revoking ? 'Back' : 'Cancel'}
            </button>
            {preview ? (
              <button
                // Its own element, not the Preview button re-labelled; and the second click of a double
                // click on "Preview" (detail 2), landing where the preview put this button, is not a yes.
                key="apply"
                type="button"
                className={revoking ? 'danger' : 'primary'}
                disabled={busy || ready === 0}
                onClick={(event) => {
                  if (event.detail <= 1) apply();
                }}
                data-testid="bulk-apply"
              >
                {busy
                  ? 'Working…'
                  : `${revoking ? 'Revoke' : 'Apply to'} ${formatCount(ready)} key${ready === 1 ? '' : 's'}`}
              </button>
            ) : (
              !revoking && (
                <button
                  key="preview"
                  type="button"
                  className="primary"
                  disabled={busy}
                  onClick={previewLimits}
                  data-testid="bulk-preview"
                >
                  {busy ? 'Checking…' : 'Preview'}
                </button>
              )
            )}
          </>
        )}
      </div>
    </Dialog>
  );
}

function summary(result: BulkResult, revoking: boolean): string {
  const ok = result.results.filter((r) => r.outcome === 'ok').length;
  const refused = result.results.length - ok;
  const verb = result.dry_run ? (revoking ? 'would be revoked' : 'would change') : revoking ? 'revoked' : 'changed';
  return `${formatCount(ok)} ${verb}, ${formatCount(refused)} ${result.dry_run ? 'would be ' : ''}refused or not found.`;
}
