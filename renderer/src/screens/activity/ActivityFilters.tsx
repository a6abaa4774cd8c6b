import { ChoiceSelect } from '../../components/filters/ChoiceSelect.js';
import { CommitInput } from '../../components/filters/CommitInput.js';
import { TimeBound } from '../../components/filters/TimeBound.js';
import { ACTION_CHOICES } from '../../lib/activity.js';
import { useRoute } from '../../state/route.js';
import { ACTIVITY_FILTER_PARAMS, isActivityFiltered, timeFilterError } from './activity-query.js';

const noCheck = () => null;
const EMAIL_LIKE = /^[^\s@]+@[^\s@]+$/;
const actorError = (text: string) => (EMAIL_LIKE.test(text) ? null : 'an email address, such as admin@example.com');

/**
 * Which events the trail shows, filtered on the server: every filter is a route parameter, so
 * an address (or, later, a saved view) restores it. Offered only by a control plane with the
 * extension: the contract's list has no filters.
 */
export function ActivityFilters() {
  const params = useRoute((s) => s.params);
  const setParams = useRoute((s) => s.setParams);
  const timeError = timeFilterError(params);

  return (
    <section className="activity-filters" aria-label="Filters" data-testid="activity-filters">
      <div className="toolbar">
        <ChoiceSelect
          label="Action"
          value={params.action ?? null}
          all="Any action"
          choices={ACTION_CHOICES.map((choice) => ({ value: choice.value, label: choice.label }))}
          unknown={(action) => action}
          onChange={(action) => setParams({ action })}
          testId="activity-filter-action"
        />
        <CommitInput
          label="Actor (email)"
          value={params.actor ?? ''}
          check={actorError}
          onCommit={(actor) => setParams({ actor })}
          placeholder="admin@example.com"
          testId="activity-filter-actor"
        />
        <CommitInput
          label="Target starts with"
          value={params.target ?? ''}
          check={noCheck}
          onCommit={(target) => setParams({ target })}
          placeholder="sk_svc_…"
          testId="activity-filter-target"
        />
        <TimeBound
          label="From"
          value={params.from}
          onChange={(from) => setParams({ from })}
          testId="activity-filter-from"
        />
        <TimeBound label="To" value={params.to} onChange={(to) => setParams({ to })} testId="activity-filter-to" />
        {isActivityFiltered(params) && (
          <button
            type="button"
            onClick={() => setParams(Object.fromEntries(ACTIVITY_FILTER_PARAMS.map((name) => [name, null])))}
            data-testid="activity-clear-filters"
          >
            Clear filters
          </button>
        )}
      </div>
      {timeError && (
        <p className="error" role="alert" data-testid="activity-time-error">
          {timeError} The time range is not applied until it is.
        </p>
      )}
    </section>
  );
}
