import { useEffect, useRef, useState, type FormEvent } from 'react';
import { ErrorNote } from '../../components/Feedback.js';
import { Field } from '../../components/Field.js';
import { checkTimeRange, shortId } from '../../lib/timeseries.js';
import { useDirectory } from '../../state/directory.js';
import { useRoute } from '../../state/route.js';
import { PARAM, RANGE_PRESETS, type AnalyticsView } from './analytics-view.js';

const CUSTOM = 'custom';

const PRESET_LABELS: Record<(typeof RANGE_PRESETS)[number], string> = {
  '1h': 'Last hour',
  '24h': 'Last 24 hours',
  '7d': 'Last 7 days',
  '30d': 'Last 30 days',
  '90d': 'Last 90 days',
};

function isPreset(range: string): boolean {
  return (RANGE_PRESETS as readonly string[]).includes(range);
}

/** Time range, project, key and model: each change goes into the route's parameters. */
export function AnalyticsFilters({ view, onRefresh }: { view: AnalyticsView; onRefresh: () => void }) {
  const setParams = useRoute((s) => s.setParams);
  const projects = useDirectory((s) => s.projects);
  const keys = useDirectory((s) => s.keys);
  const models = useDirectory((s) => s.models);
  const errors = useDirectory((s) => s.errors);
  const reload = useDirectory((s) => s.load);

  const sortedProjects = [...(projects ?? [])].sort((a, b) => a.name.localeCompare(b.name));
  const projectKeys = [...(keys ?? [])]
    .filter((k) => !view.project || k.project_id === view.project)
    .sort((a, b) => a.name.localeCompare(b.name));
  const sortedModels = [...(models ?? [])].sort((a, b) => a.id.localeCompare(b.id));

  const changeProject = (project: string) => {
    // A key of another project would leave the view empty without saying why.
    const key = keys?.find((k) => k.id === view.key);
    const keepKey = !project || !key || key.project_id === project;
    setParams({ [PARAM.project]: project, ...(keepKey ? {} : { [PARAM.key]: null }) });
  };

  const directoryError = errors.projects ?? errors.keys ?? errors.models;

  return (
    <div className="analytics-filters" data-testid="analytics-filters">
      <div className="toolbar" role="group" aria-label="Filters">
        <TimeRangeFilter view={view} />
        <Field label="Project">
          <select
            value={view.project ?? ''}
            onChange={(e) => changeProject(e.target.value)}
            data-testid="filter-project"
            disabled={projects === null && !errors.projects}
          >
            <option value="">All projects</option>
            {sortedProjects.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
            {view.project && projects && !projects.some((p) => p.id === view.project) && (
              <option value={view.project}>project {shortId(view.project)}</option>
            )}
          </select>
        </Field>
        <Field label="Key">
          <select
            value={view.key ?? ''}
            onChange={(e) => setParams({ [PARAM.key]: e.target.value })}
            data-testid="filter-key"
            disabled={keys === null && !errors.keys}
          >
            <option value="">{view.project ? 'All keys of the project' : 'All keys'}</option>
            {projectKeys.map((k) => (
              <option key={k.id} value={k.id}>
                {k.name} ({k.key_prefix})
              </option>
            ))}
            {view.key && keys && !projectKeys.some((k) => k.id === view.key) && (
              <option value={view.key}>key {shortId(view.key)}</option>
            )}
          </select>
        </Field>
        <Field label="Model">
          <select
            value={view.model ?? ''}
            onChange={(e) => setParams({ [PARAM.model]: e.target.value })}
            data-testid="filter-model"
            disabled={models === null && !errors.models}
          >
            <option value="">All models</option>
            {sortedModels.map((m) => (
              <option key={m.id} value={m.id}>
                {m.active ? m.id : `${m.id} (inactive)`}
              </option>
            ))}
            {view.model && models && !models.some((m) => m.id === view.model) && (
              <option value={view.model}>{view.model}</option>
            )}
          </select>
        </Field>
        <button type="button" onClick={onRefresh} data-testid="analytics-refresh">
          Refresh
        </button>
      </div>
      <ErrorNote
        error={directoryError && `Could not list the filters' choices: ${directoryError}`}
        onRetry={() => void reload()}
        testId="directory-error"
      />
    </div>
  );
}

/** A preset window, or a custom one the server will accept (checked here first, with the reason). */
function TimeRangeFilter({ view }: { view: AnalyticsView }) {
  const setParams = useRoute((s) => s.setParams);
  const asked = view.badRange?.text ?? view.range;
  const [custom, setCustom] = useState(view.badRange !== null || !isPreset(view.range));
  const [text, setText] = useState(asked);
  const [error, setError] = useState<string | null>(view.badRange?.error ?? null);
  // A range set from elsewhere (back, forward, an address) restarts the field from it.
  const [shown, setShown] = useState(asked);
  if (shown !== asked) {
    setShown(asked);
    setCustom(view.badRange !== null || !isPreset(view.range));
    setText(asked);
    setError(view.badRange?.error ?? null);
  }
  const input = useRef<HTMLInputElement>(null);
  const [focusCustom, setFocusCustom] = useState(false);

  useEffect(() => {
    if (focusCustom && custom) input.current?.focus();
    setFocusCustom(false);
  }, [focusCustom, custom]);

  const choose = (value: string) => {
    if (value === CUSTOM) {
      setCustom(true);
      setText(view.range);
      setError(null);
      setFocusCustom(true);
      return;
    }
    setCustom(false);
    setError(null);
    setParams({ [PARAM.range]: value });
  };

  const apply = (event: FormEvent) => {
    event.preventDefault();
    const checked = checkTimeRange(text);
    if (!checked.ok) {
      setError(checked.error);
      return;
    }
    setError(null);
    setParams({ [PARAM.range]: checked.text });
  };

  return (
    <>
      <Field label="Time range">
        <select
          value={custom ? CUSTOM : view.range}
          onChange={(e) => choose(e.target.value)}
          data-testid="filter-range"
        >
          {RANGE_PRESETS.map((preset) => (
            <option key={preset} value={preset}>
              {PRESET_LABELS[preset]}
            </option>
          ))}
          <option value={CUSTOM}>Custom…</option>
        </select>
      </Field>
      {custom && (
        <form className="custom-range" onSubmit={apply} aria-label="Custom time range" data-testid="custom-range-form">
          <Field label="Custom range" hint="A whole number and s, m, h or d; up to 400d." error={error}>
            <input
              ref={input}
              value={text}
              onChange={(e) => setText(e.target.value)}
              size={8}
              spellCheck={false}
              data-testid="custom-range"
            />
          </Field>
          <button type="submit">Apply</button>
        </form>
      )}
    </>
  );
}
