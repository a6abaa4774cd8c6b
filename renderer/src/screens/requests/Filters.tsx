import { useEffect, useState } from 'react';
import { ErrorNote } from '../../components/Feedback.js';
import { Field } from '../../components/Field.js';
import { useDirectory } from '../../state/directory.js';
import { useRoute } from '../../state/route.js';
import { CommitInput } from './CommitInput.js';
import {
  DEFAULT_RANGE,
  FILTER_PARAMS,
  isFiltered,
  minCostError,
  RANGE_PRESETS,
  rangeError,
  STATUS_CLASSES,
  TERMINATION_REASONS,
} from './query.js';
import { SearchBox } from './SearchBox.js';

const CUSTOM = 'custom';
/** Any route id is a model filter; the server matches it exactly. */
const anyText = () => null;

/** Which requests the log shows: every filter is a route parameter, and changing one goes back to page 1. */
export function Filters() {
  const params = useRoute((s) => s.params);
  const setParams = useRoute((s) => s.setParams);
  const projects = useDirectory((s) => s.projects);
  const keys = useDirectory((s) => s.keys);
  const models = useDirectory((s) => s.models);
  const errors = useDirectory((s) => s.errors);
  const load = useDirectory((s) => s.load);
  useEffect(() => {
    void load();
  }, [load]);

  const range = params.range ?? DEFAULT_RANGE;
  const preset = RANGE_PRESETS.some((p) => p.value === range);
  const [customOpen, setCustomOpen] = useState(!preset);
  useEffect(() => {
    if (!preset) setCustomOpen(true);
  }, [preset]);

  const setFilter = (patch: Record<string, string | null>) => setParams({ ...patch, page: null });
  const projectKeys = (keys ?? []).filter((k) => !params.project || k.project_id === params.project);
  const directoryError = errors.projects ?? errors.keys ?? errors.models;

  return (
    <section className="requests-filters" aria-label="Filters" data-testid="request-filters">
      <SearchBox value={params.q ?? ''} onCommit={(q) => setFilter({ q })} />
      <div className="toolbar">
        <Field label="Time range">
          <select
            value={customOpen ? CUSTOM : range}
            onChange={(event) => {
              const value = event.target.value;
              if (value === CUSTOM) setCustomOpen(true);
              else {
                setCustomOpen(false);
                setFilter({ range: value === DEFAULT_RANGE ? null : value });
              }
            }}
            data-testid="filter-range"
          >
            {RANGE_PRESETS.map((p) => (
              <option key={p.value} value={p.value}>
                {p.label}
              </option>
            ))}
            <option value={CUSTOM}>Custom…</option>
          </select>
        </Field>
        {customOpen && (
          <CommitInput
            label="Custom range"
            value={preset ? '' : range}
            check={rangeError}
            onCommit={(text) => setFilter({ range: text || null })}
            placeholder="36h"
            hint="Lookback, such as 90m, 36h or 14d"
            testId="filter-custom-range"
            autoFocus={preset}
          />
        )}
        <Field label="Project">
          <select
            value={params.project ?? ''}
            onChange={(event) => setFilter({ project: event.target.value, key: null })}
            data-testid="filter-project"
          >
            <option value="">All projects</option>
            {projects?.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
            {params.project && projects && !projects.some((p) => p.id === params.project) && (
              <option value={params.project}>Unknown project ({params.project.slice(0, 8)})</option>
            )}
          </select>
        </Field>
        <Field label="Key">
          <select
            value={params.key ?? ''}
            onChange={(event) => setFilter({ key: event.target.value })}
            data-testid="filter-key"
          >
            <option value="">All keys</option>
            {projectKeys.map((k) => (
              <option key={k.id} value={k.id}>
                {k.name}
              </option>
            ))}
            {params.key && keys && !keys.some((k) => k.id === params.key) && (
              <option value={params.key}>Revoked or unknown key ({params.key.slice(0, 8)})</option>
            )}
          </select>
        </Field>
        {models && models.length > 0 ? (
          <Field label="Model">
            <select
              value={params.model ?? ''}
              onChange={(event) => setFilter({ model: event.target.value })}
              data-testid="filter-model"
            >
              <option value="">All models</option>
              {models.map((m) => (
                <option key={m.id} value={m.id}>
                  {m.id}
                </option>
              ))}
              {params.model && !models.some((m) => m.id === params.model) && (
                <option value={params.model}>{params.model}</option>
              )}
            </select>
          </Field>
        ) : (
          // No catalogue on this server: the route id is typed as the caller sent it.
          <CommitInput
            label="Model"
            value={params.model ?? ''}
            check={anyText}
            onCommit={(model) => setFilter({ model })}
            placeholder="openai/gpt-4o-mini"
            testId="filter-model-text"
          />
        )}
        <Field label="Status">
          <select
            value={params.status ?? ''}
            onChange={(event) => setFilter({ status: event.target.value })}
            data-testid="filter-status"
          >
            <option value="">Any status</option>
            {STATUS_CLASSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Ended as">
          <select
            value={params.reason ?? ''}
            onChange={(event) => setFilter({ reason: event.target.value })}
            data-testid="filter-reason"
          >
            <option value="">Any ending</option>
            {TERMINATION_REASONS.map((r) => (
              <option key={r.value} value={r.value}>
                {r.label}
              </option>
            ))}
          </select>
        </Field>
        <CommitInput
          label="Minimum cost (PKR)"
          value={params.min_cost ?? ''}
          check={minCostError}
          onCommit={(text) => setFilter({ min_cost: text })}
          placeholder="0.50"
          inputMode="decimal"
          testId="filter-min-cost"
        />
        {isFiltered(params) && (
          <button
            type="button"
            onClick={() => {
              setCustomOpen(false);
              setFilter(Object.fromEntries(FILTER_PARAMS.map((name) => [name, null])));
            }}
            data-testid="clear-filters"
          >
            Clear filters
          </button>
        )}
      </div>
      <ErrorNote error={directoryError} onRetry={() => void load(true)} testId="directory-error" />
    </section>
  );
}
