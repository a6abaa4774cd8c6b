import { useEffect, useMemo, useState } from 'react';
import type { CallResult } from '#contract';
import { ErrorNote } from '../../components/Feedback.js';
import { filterKeys, nextSort, sortFromParams, sortKeys, type KeyRow, type SortColumn } from '../../lib/key-table.js';
import { catalogueOf } from '../../lib/model-catalogue.js';
import { projectName, useDirectory, type Key } from '../../state/directory.js';
import { useOffers } from '../../state/offers.js';
import { useRoute } from '../../state/route.js';
import { CreateKeyDialog } from './CreateKeyDialog.js';
import { EditKeyDialog } from './EditKeyDialog.js';
import { KeyFilters } from './KeyFilters.js';
import { KeysTable } from './KeysTable.js';
import { BulkKeysDialog, type BulkAction } from './BulkKeysDialog.js';
import { KeySelectionBar } from './KeySelectionBar.js';
import { RevokeKeyDialog } from './RevokeKeyDialog.js';
import { MoveCallersDialog, RotateKeyDialog, type Replacement, type RotatedKey } from './RotateKeyDialog.js';
import { SecretDialog } from './SecretDialog.js';
import { useKeysStore } from './keys-store.js';
import { useIntent } from '../../commands/intents.js';
import './keys.css';

type CreatedKey = CallResult<'api.createKey'>;

/** The server's bound on one bulk call (server/schemas/keys.ts BULK_MAX_KEYS). */
const BULK_MAX_KEYS = 100;

/**
 * The organisation's API keys: filter, sort, create (secret shown once), edit limits, rotate,
 * revoke (with what depends on the key shown first), and bulk changes previewed by a dry run.
 */
export function KeysScreen() {
  const projects = useDirectory((s) => s.projects);
  const keys = useDirectory((s) => s.keys);
  const models = useDirectory((s) => s.models);
  const keysError = useDirectory((s) => s.errors.keys?.message);
  const modelsError = useDirectory((s) => s.errors.models);
  const modelsLoading = useDirectory((s) => s.loading.models ?? false);
  const projectsError = useDirectory((s) => s.errors.projects?.message);
  const load = useDirectory((s) => s.load);
  const reloadKeys = useDirectory((s) => s.reloadKeys);
  const spent = useKeysStore((s) => s.spent);
  const spendError = useKeysStore((s) => s.spendError);
  const spendRefused = useKeysStore((s) => s.spendRefused);
  const loadSpend = useKeysStore((s) => s.loadSpend);
  const params = useRoute((s) => s.params);
  const setParams = useRoute((s) => s.setParams);

  const [creating, setCreating] = useState(false);
  // The secret lives only here, for as long as its dialog is open; closing it forgets it.
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const [editing, setEditing] = useState<Key | null>(null);
  const [revoking, setRevoking] = useState<Key | null>(null);
  const [rotating, setRotating] = useState<Key | null>(null);
  // As `created`: the replacement's secret outlives its dialog, closed or not while it was made.
  const [rotated, setRotated] = useState<{ oldKey: Key; key: RotatedKey } | null>(null);
  const [moving, setMoving] = useState<{ oldKey: Key; replacement: Replacement } | null>(null);
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [bulk, setBulk] = useState<{ action: BulkAction; keys: Key[] } | null>(null);
  // The command palette's "Create an API key" (and its shortcut) opens the same dialog.
  useIntent('createKey', () => setCreating(true));
  // Rotate and bulk actions are extensions: hidden on a control plane with only the contract.
  const keySafety = useOffers((s) => s.keySafety) !== false;
  const probeKeySafety = useOffers((s) => s.probeKeySafety);
  useEffect(() => {
    void probeKeySafety();
  }, [probeKeySafety]);

  useEffect(() => {
    // Keys change elsewhere (another admin, another window): read them afresh on every visit.
    const loaded = useDirectory.getState().keys !== null;
    void load();
    if (loaded) void reloadKeys();
    void loadSpend();
  }, [load, reloadKeys, loadSpend]);

  const refresh = () => {
    void reloadKeys();
    void loadSpend();
  };

  const sort = sortFromParams(params);
  const filter = { project: params.project, environment: params.env, key: params.key };
  const rows = useMemo<KeyRow[]>(
    () =>
      (keys ?? []).map((key) => ({
        key,
        projectName: projectName(projects, key.project_id),
        spentMicro: spent?.[key.id] ?? null,
      })),
    [keys, projects, spent],
  );
  // A few hundred keys at most: filtering and sorting on each render costs nothing worth caching.
  const shown = sortKeys(filterKeys(rows, filter), sort);

  // Keys revoked or gone since they were selected leave the selection.
  const selectedKeys = (keys ?? []).filter((key) => selected.has(key.id));
  const shownIds = shown.map((row) => row.key.id);
  const shownSet = new Set(shownIds);
  const selectedHidden = selectedKeys.filter((key) => !shownSet.has(key.id)).length;
  const select = (ids: readonly string[], on: boolean) =>
    setSelected((before) => {
      const next = new Set(before);
      for (const id of ids) {
        if (on) next.add(id);
        else next.delete(id);
      }
      return next;
    });

  const onSort = (column: SortColumn) => {
    const next = nextSort(sort, column);
    setParams({ sort: next.column, order: next.order });
  };

  return (
    <section className="keys-screen" aria-label="API keys" data-testid="keys-screen">
      <KeyFilters
        projects={projects}
        project={filter.project ?? ''}
        environment={filter.environment ?? ''}
        // Named once the keys are read: "Unknown key" only when it is not among them.
        keyFilter={filter.key && keys ? (keys.find((k) => k.id === filter.key)?.name ?? 'Unknown key') : null}
        onChange={(patch) => setParams(patch)}
        shown={shown.length}
        total={keys?.length ?? null}
        onCreate={() => setCreating(true)}
        onReload={refresh}
        canCreate={projects !== null && projects.length > 0}
      />
      <ErrorNote error={projectsError && `Projects could not be read: ${projectsError}`} testId="projects-error" />
      {spendRefused ? (
        <p className="muted keys-note" data-testid="spend-note">
          Spend is not shown to your role: {spendError}.
        </p>
      ) : (
        <ErrorNote
          error={spendError && keys !== null ? `Spend could not be read: ${spendError}` : null}
          onRetry={() => void loadSpend()}
          testId="spend-error"
        />
      )}
      {keySafety && keys !== null && keys.length > 0 && !keysError && (
        <KeySelectionBar
          shown={shownIds}
          selected={new Set(selectedKeys.map((key) => key.id))}
          hidden={selectedHidden}
          onSelectShown={(on) => select(shownIds, on)}
          onClear={() => setSelected(new Set())}
          onAction={(action) => setBulk({ action, keys: selectedKeys })}
          max={BULK_MAX_KEYS}
        />
      )}
      <KeysTable
        // A failed read shows only why, even over keys read before.
        rows={keys === null || keysError ? null : shown}
        total={keys?.length ?? 0}
        error={keysError && `Keys could not be read: ${keysError}`}
        onRetry={refresh}
        sort={sort}
        onSort={onSort}
        onEdit={setEditing}
        onRevoke={setRevoking}
        onRotate={keySafety ? setRotating : null}
        selected={keySafety ? selected : null}
        onSelect={(key, on) => select([key.id], on)}
      />
      {creating && projects?.length === 0 && (
        <ErrorNote
          error="A key belongs to a project, and this organisation has none yet."
          testId="create-key-no-project"
        />
      )}
      {creating && projects && projects.length > 0 && (
        <CreateKeyDialog
          projects={projects}
          catalogue={catalogueOf(models, modelsError, modelsLoading)}
          onRetryCatalogue={() => void load()}
          defaultProject={filter.project ?? null}
          onClose={() => setCreating(false)}
          onCreated={(key) => {
            setCreating(false);
            setCreated(key);
            refresh();
          }}
        />
      )}
      {created && (
        <SecretDialog
          created={created}
          projectName={projectName(projects, created.project_id)}
          onClose={() => setCreated(null)}
        />
      )}
      {editing && (
        <EditKeyDialog
          keyToEdit={editing}
          spentMicro={spent?.[editing.id] ?? null}
          onClose={() => setEditing(null)}
          onSaved={() => {
            setEditing(null);
            refresh();
          }}
        />
      )}
      {revoking && (
        <RevokeKeyDialog
          keyToRevoke={revoking}
          onClose={() => setRevoking(null)}
          onRevoked={() => {
            setRevoking(null);
            refresh();
          }}
        />
      )}
      {rotating && (
        <RotateKeyDialog
          keyToRotate={rotating}
          projectName={projectName(projects, rotating.project_id)}
          spentMicro={spent?.[rotating.id] ?? null}
          onClose={() => setRotating(null)}
          onRotated={(oldKey, key) => {
            setRotating(null);
            setRotated({ oldKey, key });
            refresh();
          }}
        />
      )}
      {rotated && (
        <SecretDialog
          created={rotated.key}
          projectName={projectName(projects, rotated.key.project_id)}
          onClose={() => {
            // The secret goes with its dialog; the wait keeps only the replacement's name and prefix.
            const { id, name, key_prefix } = rotated.key;
            setRotated(null);
            setMoving({ oldKey: rotated.oldKey, replacement: { id, name, key_prefix } });
          }}
        />
      )}
      {moving && (
        <MoveCallersDialog
          oldKey={moving.oldKey}
          replacement={moving.replacement}
          onClose={() => setMoving(null)}
          onChanged={refresh}
        />
      )}
      {bulk && (
        <BulkKeysDialog
          keys={bulk.keys}
          action={bulk.action}
          onClose={() => setBulk(null)}
          onApplied={() => {
            if (bulk.action === 'revoke') setSelected(new Set());
            refresh();
          }}
        />
      )}
    </section>
  );
}
