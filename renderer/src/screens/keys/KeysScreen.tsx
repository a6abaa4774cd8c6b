import { useEffect, useMemo, useState } from 'react';
import type { CallResult } from '#contract';
import { ErrorNote } from '../../components/Feedback.js';
import { filterKeys, nextSort, sortFromParams, sortKeys, type KeyRow, type SortColumn } from '../../lib/key-table.js';
import { catalogueOf } from '../../lib/model-catalogue.js';
import { projectName, useDirectory, type Key } from '../../state/directory.js';
import { useRoute } from '../../state/route.js';
import { CreateKeyDialog } from './CreateKeyDialog.js';
import { EditKeyDialog } from './EditKeyDialog.js';
import { KeyFilters } from './KeyFilters.js';
import { KeysTable } from './KeysTable.js';
import { RevokeKeyDialog } from './RevokeKeyDialog.js';
import { SecretDialog } from './SecretDialog.js';
import { useKeysStore } from './keys-store.js';
import './keys.css';

type CreatedKey = CallResult<'api.createKey'>;

/** The organisation's API keys: filter, sort, create (secret shown once), edit limits, revoke. */
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
  const filter = { project: params.project, environment: params.env };
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
      />
      {creating && projects && (
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
    </section>
  );
}
