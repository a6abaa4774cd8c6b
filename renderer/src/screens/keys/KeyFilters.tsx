import { ariaShortcut, CREATE_KEY_SHORTCUT, shortcutLabel } from '../../commands/shortcut.js';
import { Field } from '../../components/Field.js';
import { ENVIRONMENTS, isEnvironment } from '../../lib/key-table.js';
import type { Project } from '../../state/directory.js';

/** Project and environment filters (kept in the route, so a reload keeps them) and the screen's actions. */
export function KeyFilters(props: {
  projects: Project[] | null;
  project: string;
  environment: string;
  /** The one key shown (opened from the command palette), by name; null when not narrowed to one. */
  keyFilter?: string | null;
  onChange: (patch: { project?: string | null; env?: string | null; key?: string | null }) => void;
  shown: number;
  total: number | null;
  canCreate: boolean;
  onCreate: () => void;
  onReload: () => void;
}) {
  const filtered = props.project !== '' || props.environment !== '' || Boolean(props.keyFilter);
  return (
    <div className="toolbar keys-toolbar">
      <Field label="Project" testId="filter-project">
        <select value={props.project} onChange={(e) => props.onChange({ project: e.target.value || null })}>
          <option value="">All projects</option>
          {props.projects?.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
          {/* A filter restored from the address whose project is gone still reads as chosen. */}
          {props.project !== '' && props.projects && !props.projects.some((p) => p.id === props.project) && (
            <option value={props.project}>Unknown project</option>
          )}
        </select>
      </Field>
      <Field label="Environment" testId="filter-environment">
        <select value={props.environment} onChange={(e) => props.onChange({ env: e.target.value || null })}>
          <option value="">All environments</option>
          {ENVIRONMENTS.map((env) => (
            <option key={env} value={env}>
              {env}
            </option>
          ))}
          {/* An environment from the address that is none of the three still filters: say which. */}
          {props.environment !== '' && !isEnvironment(props.environment) && (
            <option value={props.environment}>Unknown environment ({props.environment})</option>
          )}
        </select>
      </Field>
      {props.keyFilter && (
        <span className="keys-one" data-testid="filter-key">
          Only the key <strong>{props.keyFilter}</strong>
        </span>
      )}
      {filtered && (
        <button
          type="button"
          className="link"
          onClick={() => props.onChange({ project: null, env: null, key: null })}
          data-testid="clear-key-filters"
        >
          Clear filters
        </button>
      )}
      <p className="muted keys-count" aria-live="polite" data-testid="keys-count">
        {props.total === null
          ? ''
          : filtered
            ? `${props.shown} of ${props.total} keys`
            : `${props.total} ${props.total === 1 ? 'key' : 'keys'}`}
      </p>
      <span className="spacer" />
      <button type="button" onClick={props.onReload} data-testid="reload-keys">
        Reload
      </button>
      <button
        type="button"
        className="primary"
        onClick={props.onCreate}
        disabled={!props.canCreate}
        aria-keyshortcuts={ariaShortcut(CREATE_KEY_SHORTCUT)}
        title={
          props.canCreate
            ? `Create an API key (${shortcutLabel(CREATE_KEY_SHORTCUT)})`
            : 'A key belongs to a project: the projects are not loaded yet'
        }
        data-testid="create-key"
      >
        New key…
      </button>
    </div>
  );
}
