import { useEffect, useState } from 'react';
import { BridgeError, errorMessage } from '../../bridge.js';
import { MAX_RANGE_MS, UNIT_MS } from '../../lib/time-range.js';
import { api } from '../../state/api.js';
import { thisOrganisation } from '../../state/organisation-scope.js';
import { useRoute } from '../../state/route.js';
import type { RequestRow } from './request-row.js';
import { useRequests } from './requests-store.js';

/** The longest window the server reads: a request opened by id may be older than the filters' window. */
const ANY_TIME = `${MAX_RANGE_MS / UNIT_MS.d}d`;
/** The most rows the fallback search reads (the server's page size clamp). */
const SEARCH_ROWS = 200;

/** Why a request id opened nothing. */
class NotFound extends Error {}

/**
 * The request with exactly this id: from GET /analytics/requests/{id} (beyond the contract, any
 * age). A control plane with only the contract's endpoints answers that with a 404 naming no
 * field; there the request log's search (a substring match over ids and metadata) stands in,
 * its rows compared with the id exactly.
 */
async function findRequest(id: string): Promise<RequestRow> {
  try {
    return await api('api.request', { params: { req_id: id } });
  } catch (error) {
    if (!(error instanceof BridgeError)) throw error;
    if (error.status === 404 && error.field === 'req_id') throw new NotFound(`There is no request ${id}.`);
    if (error.status !== 404 && error.status !== 501) throw error;
  }
  const answer = await api('api.requests', {
    query: { search: id, time_range: ANY_TIME, limit: SEARCH_ROWS, offset: 0 },
  });
  const row = answer.requests.find((r) => r.req_id === id);
  if (!row) throw new NotFound(`There is no request ${id} among the last ${ANY_TIME}'s that mention it.`);
  return row;
}

/**
 * Opens the request the route names (`request=<id>`, from the command palette, a reload or a
 * shared address) in the detail panel: from the page on screen when it is there, otherwise
 * looked up by its id. When it cannot be opened the route forgets it (a reload does not ask
 * again) and the reason stays on screen until another request is asked for.
 */
export function useRequestFromRoute(): string | null {
  const wanted = useRoute((s) => s.params.request);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    if (!wanted) return;
    setError(null);
    const { selected, page, select } = useRequests.getState();
    if (selected?.req_id === wanted) return;
    const onPage = page?.requests.find((row) => row.req_id === wanted);
    if (onPage) {
      select(onPage);
      return;
    }
    let live = true;
    const current = thisOrganisation();
    findRequest(wanted).then(
      (row) => {
        if (live && current()) select(row);
      },
      (failure: unknown) => {
        if (!live || !current()) return;
        setError(
          failure instanceof NotFound
            ? failure.message
            : `Request ${wanted} could not be read: ${errorMessage(failure)}`,
        );
        useRoute.getState().setParams({ request: null });
      },
    );
    return () => {
      live = false;
    };
  }, [wanted]);

  return error;
}
