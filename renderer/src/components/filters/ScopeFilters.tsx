import { useEffect } from 'react';
import {
  keysOfProject,
  projectChange,
  sortedModels,
  sortedProjects,
  type Scope,
  type ScopePatch,
} from '../../lib/filter-scope.js';
import { unknownLabel } from '../../lib/id-label.js';
import { useDirectory } from '../../state/directory.js';
import { ErrorNote } from '../Feedback.js';
import { ChoiceSelect } from './ChoiceSelect.js';
import { CommitInput } from './CommitInput.js';

/** Any route id is a model filter; the server matches it exactly. */
const anyText = () => null;

/**
 * Project, key and model filters, their choices from the directory. The keys offered are
 * the chosen project's; choosing another project lets go of a key that is not in it.
 */
export function ScopeFilters({ scope, onChange }: { scope: Scope; onChange: (patch: ScopePatch) => void }) {
  const projects = useDirectory((s) => s.projects);
  const keys = useDirectory((s) => s.keys);
  const models = useDirectory((s) => s.models);
  const errors = useDirectory((s) => s.errors);
  const load = useDirectory((s) => s.load);

  useEffect(() => {
    void load();
  }, [load]);

  const keyLabel = (id: string) => {
    // Known, but of another project than the one chosen (an address can say so).
    const other = keys?.find((k) => k.id === id);
    return other ? `${other.name} (another project)` : unknownLabel('key', id);
  };

  return (
    <>
      <ChoiceSelect
        label="Project"
        value={scope.project}
        all="All projects"
        choices={projects && sortedProjects(projects).map((p) => ({ value: p.id, label: p.name }))}
        loading={projects === null && !errors.projects}
        unknown={(id) => unknownLabel('project', id)}
        onChange={(project) => onChange(projectChange(keys, scope, project))}
        testId="filter-project"
      />
      <ChoiceSelect
        label="Key"
        value={scope.key}
        all={scope.project ? 'All keys of the project' : 'All keys'}
        choices={
          keys && keysOfProject(keys, scope.project).map((k) => ({ value: k.id, label: `${k.name} (${k.key_prefix})` }))
        }
        loading={keys === null && !errors.keys}
        unknown={keyLabel}
        onChange={(key) => onChange({ key })}
        testId="filter-key"
      />
      {errors.models || models?.length === 0 ? (
        // No catalogue to choose from: the route id is typed as the caller sent it.
        <CommitInput
          label="Model"
          value={scope.model ?? ''}
          check={anyText}
          onCommit={(model) => onChange({ model: model || null })}
          placeholder="openai/gpt-4o-mini"
          testId="filter-model-text"
        />
      ) : (
        <ChoiceSelect
          label="Model"
          value={scope.model}
          all="All models"
          choices={
            models && sortedModels(models).map((m) => ({ value: m.id, label: m.active ? m.id : `${m.id} (inactive)` }))
          }
          loading={models === null}
          unknown={(id) => unknownLabel('model', id, false)}
          onChange={(model) => onChange({ model })}
          testId="filter-model"
        />
      )}
    </>
  );
}

/** Why the filters' choices could not be listed, with a way to try again. */
export function DirectoryErrorNote() {
  const errors = useDirectory((s) => s.errors);
  const load = useDirectory((s) => s.load);
  const error = (errors.projects ?? errors.keys ?? errors.models)?.message;
  return (
    <ErrorNote
      error={error && `Could not list the filters' choices: ${error}`}
      onRetry={() => void load()}
      testId="directory-error"
    />
  );
}
