import { useEffect, useMemo } from 'react';
import { ErrorNote, Loading } from '../../components/Feedback.js';
import { useRoute } from '../../state/route.js';
import { ExportBar } from './ExportBar.js';
import { Filters } from './Filters.js';
import { Pager } from './Pager.js';
import { pageQuery } from './query.js';
import { RequestDetail } from './RequestDetail.js';
import { useRequests } from './requests-store.js';
import { RequestTable } from './RequestTable.js';
import './requests.css';

/** The request log: filter and search it, page through it, open a request, export what matches. */
export function RequestLogScreen() {
  const params = useRoute((s) => s.params);
  const { page, loading, error, selected, load, reload, select } = useRequests();
  const queryText = useMemo(() => JSON.stringify(pageQuery(params)), [params]);

  useEffect(() => {
    void load(JSON.parse(queryText) as ReturnType<typeof pageQuery>);
  }, [queryText, load]);

  const close = () => {
    const id = selected?.req_id;
    select(null);
    // Back to the row the detail came from, when it is still on screen.
    const rows = document.querySelectorAll<HTMLElement>('[data-testid="request-row"]');
    [...rows].find((row) => row.dataset.reqId === id)?.focus({ preventScroll: true });
  };

  return (
    <div className="requests stack" data-testid="requests-screen" aria-busy={loading}>
      <Filters />
      <div className="requests-bar">
        <Pager page={page} busy={loading} />
        <ExportBar />
      </div>
      <ErrorNote error={error} onRetry={() => void reload()} testId="requests-error" />
      {loading && <Loading>Loading requests…</Loading>}
      <p id="requests-keys-hint" className="muted requests-hint">
        Arrow keys move between rows; Enter opens a request, Escape closes it.
      </p>
      <div className={selected ? 'requests-layout with-detail' : 'requests-layout'}>
        {page && page.requests.length === 0 && !loading ? (
          <p className="muted empty" data-testid="requests-empty">
            No requests match these filters in this time range.
          </p>
        ) : (
          <RequestTable
            rows={page?.requests ?? []}
            selectedId={selected?.req_id ?? null}
            onOpen={select}
            onClose={close}
          />
        )}
        {selected && <RequestDetail key={selected.req_id} row={selected} onClose={close} />}
      </div>
    </div>
  );
}
