import { ApiFilter } from '../../components/filters/ApiFilter.js';
import { ChoiceSelect } from '../../components/filters/ChoiceSelect.js';
import { CommitInput } from '../../components/filters/CommitInput.js';
import { DirectoryErrorNote, ScopeFilters } from '../../components/filters/ScopeFilters.js';
import { TargetFilter } from '../../components/filters/TargetFilter.js';
import { TimeRangeFilter } from '../../components/filters/TimeRangeFilter.js';
import { scopeFromParams } from '../../lib/filter-scope.js';
import { unknownLabel } from '../../lib/id-label.js';
import { rangeFromParam } from '../../lib/time-range.js';
import { useRoute, type RouteParams } from '../../state/route.js';
import { betweenOf, FILTER_PARAMS, isFiltered, minCostError } from './request-query.js';
import { ProviderFilter } from './ProviderFilter.js';
import { STATUS_CLASSES, TERMINATION_REASONS } from './request-row.js';
import { SearchBox } from './SearchBox.js';
import { useRequests } from './requests-store.js';
import { SaveViewButton } from '../../commands/SaveViewButton.js';

const STATUS_CHOICES = STATUS_CLASSES.map((s) => ({ value: s, label: s }));

function windowError(params: RouteParams): string | null {
  const between = betweenOf(params);
  return between && 'error' in between ? between.error : null;
}

/** Which requests the log shows: every filter is a route parameter, and changing one goes back to page 1. */
export function Filters() {
  const params = useRoute((s) => s.params);
  const setParams = useRoute((s) => s.setParams);
  const setFilter = (patch: Readonly<Record<string, string | null>>) => setParams({ ...patch, page: null });
  // A control plane whose rows do not say their API (only the contract's fields) cannot filter by it.
  const rows = useRequests((s) => s.page?.requests);
  const apiOffered = !rows || rows.length === 0 || rows.some((row) => 'api' in row);

  return (
    <section className="requests-filters" aria-label="Filters" data-testid="request-filters">
      <SearchBox
        value={params.q ?? ''}
        onCommit={(q) => setFilter({ q })}
        onRepeat={() => void useRequests.getState().reload()}
      />
      <div className="toolbar">
        <TimeRangeFilter
          view={rangeFromParam(params.range)}
          onChange={(range) => setFilter({ range, from: null, to: null })}
          between={{
            from: params.from,
            to: params.to,
            error: windowError(params),
            onChange: ({ from, to }) => setFilter({ from, to, range: null }),
          }}
        />
        <ProviderFilter value={params.provider ?? null} onChange={(provider) => setFilter({ provider })} />
        <ScopeFilters scope={scopeFromParams(params)} onChange={setFilter} />
        <TargetFilter value={params.target ?? null} onChange={(target) => setFilter({ target })} />
        <ApiFilter value={params.api ?? null} onChange={(api) => setFilter({ api })} offered={apiOffered} />
        <ChoiceSelect
          label="Status"
          value={params.status ?? null}
          all="Any status"
          choices={STATUS_CHOICES}
          unknown={(status) => unknownLabel('status', status, false)}
          onChange={(status) => setFilter({ status })}
          testId="filter-status"
        />
        <ChoiceSelect
          label="Ended as"
          value={params.reason ?? null}
          all="Any ending"
          choices={TERMINATION_REASONS}
          unknown={(reason) => unknownLabel('ending', reason, false)}
          onChange={(reason) => setFilter({ reason })}
          testId="filter-reason"
        />
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
            onClick={() => setFilter(Object.fromEntries(FILTER_PARAMS.map((name) => [name, null])))}
            data-testid="clear-filters"
          >
            Clear filters
          </button>
        )}
        <SaveViewButton />
      </div>
      <DirectoryErrorNote />
    </section>
  );
}
