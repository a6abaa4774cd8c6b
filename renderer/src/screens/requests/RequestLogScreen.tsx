import { useEffect, useMemo, useRef } from 'react';
import { ErrorNote, Loading } from '../../components/Feedback.js';
import { useRoute } from '../../state/route.js';
import { ExportBar } from './ExportBar.js';
import { Filters } from './Filters.js';
import { Pager } from './Pager.js';
import { RequestDetail } from './RequestDetail.js';
import { pageQuery } from './request-query.js';
import type { RequestRow } from './request-row.js';
import { useRequests } from './requests-store.js';
import { RequestTable, type RequestTableHandle } from './RequestTable.js';
import './requests.css';

/** One empty list for every render without a page: a new [] each time would look like a new page to the table. */
const NO_ROWS: readonly RequestRow[] = [];

/** The request log: filter and search it, page through it, open a request, export what matches. */
export function RequestLogScreen() {
  const params = useRoute((s) => s.params);
  const page = useRequests((s) => s.page);
  const loading = useRequests((s) => s.loading);
  const error = useRequests((s) => s.error);
  const selected = useRequests((s) => s.selected);
  const load = useRequests((s) => s.load);
  const reload = useRequests((s) => s.reload);
  const select = useRequests((s) => s.select);
  const table = useRef<RequestTableHandle>(null);
  const queryText = useMemo(() => JSON.stringify(pageQuery(params)), [params]);

  useEffect(() => {
    void load(JSON.parse(queryText) as ReturnType<typeof pageQuery>);
  }, [queryText, load]);

  const close = () => {
    const id = selected?.req_id;
    select(null);
    // Back to the row the detail came from, when it is still on this page.
    if (id) table.current?.focusRow(id);
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
            ref={table}
            rows={page?.requests ?? NO_ROWS}
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
