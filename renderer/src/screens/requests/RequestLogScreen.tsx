import { useEffect, useMemo, useRef, useState, type FocusEvent } from 'react';
import { ErrorNote, Loading } from '../../components/Feedback.js';
import { useDocumentVisible, usePolling } from '../../components/usePolling.js';
import { useRoute, type RouteParams } from '../../state/route.js';
import { ExportBar } from './ExportBar.js';
import { Filters } from './Filters.js';
import { FOLLOW_EVERY_MS, FollowControl, type FollowPause } from './FollowControl.js';
import { Pager } from '../../components/Pager.js';
import { pageOf } from '../../lib/paging.js';
import { mayStand } from '../../lib/revisit.js';
import { RequestDetail } from './RequestDetail.js';
import { useRequestFromRoute } from './open-request.js';
import { betweenOf, pageQuery } from './request-query.js';
import type { RequestRow } from './request-row.js';
import { useRequests } from './requests-store.js';
import { RetentionNote } from '../organisation/RetentionNote.js';
import { rangeFromParam } from '../../lib/time-range.js';
import { RequestTable, type RequestTableHandle } from './RequestTable.js';
import './requests.css';
import { dataState } from '../../lib/data-state.js';

/** One empty list for every render without a page: a new [] each time would look like a new page to the table. */
const NO_ROWS: readonly RequestRow[] = [];

/** The request log: filter and search it, page through it, open a request, export what matches, follow it live. */
export function RequestLogScreen() {
  const params = useRoute((s) => s.params);
  const setParams = useRoute((s) => s.setParams);
  const page = useRequests((s) => s.page);
  const loading = useRequests((s) => s.loading);
  const error = useRequests((s) => s.error);
  const selected = useRequests((s) => s.selected);
  const following = useRequests((s) => s.following);
  const updatedAt = useRequests((s) => s.updatedAt);
  const fresh = useRequests((s) => s.fresh);
  const answered = useRequests((s) => s.answered);
  const load = useRequests((s) => s.load);
  const reload = useRequests((s) => s.reload);
  const refresh = useRequests((s) => s.refresh);
  const select = useRequests((s) => s.select);
  const setFollowing = useRequests((s) => s.setFollowing);
  const table = useRef<RequestTableHandle>(null);
  const queryText = useMemo(() => JSON.stringify(pageQuery(params)), [params]);

  // A revisit of the same page shows it at once and reads it again as following does.
  useEffect(() => {
    const { answered, updatedAt } = useRequests.getState();
    const background = mayStand(answered, updatedAt, queryText);
    void load(JSON.parse(queryText) as ReturnType<typeof pageQuery>, { background, markNew: false });
  }, [queryText, load]);

  // Following pauses while the person reads: a row's detail is open, or the pointer or the
  // focus is in the table (new rows would move the row under them).
  const [pointerIn, setPointerIn] = useState(false);
  const [focusIn, setFocusIn] = useState(false);
  const visible = useDocumentVisible();
  // A window between two times that has ended takes no new rows: reading it again is waste.
  const between = betweenOf(params);
  const ended = between !== null && !('error' in between) && Date.parse(between.to) <= Date.now();
  const pause: FollowPause = ended
    ? 'past'
    : pageOf(params) > 1
      ? 'page'
      : selected || pointerIn || focusIn
        ? 'reading'
        : visible
          ? null
          : 'hidden';
  usePolling(refresh, {
    every: FOLLOW_EVERY_MS,
    active: following && pause === null,
    since: () => useRequests.getState().askedAt,
  });

  // The open request is in the route too (`request`), so a reload or the palette opens it.
  const openError = useRequestFromRoute();
  const open = (row: RequestRow) => {
    select(row);
    setParams({ request: row.req_id });
  };

  const close = () => {
    const id = selected?.req_id;
    select(null);
    setParams({ request: null });
    // Back to the row the detail came from, when it is still on this page.
    if (id) table.current?.focusRow(id);
  };

  const focusLeaves = (event: FocusEvent<HTMLDivElement>) => {
    if (!event.currentTarget.contains(event.relatedTarget as Node | null)) setFocusIn(false);
  };

  return (
    <div
      className="requests stack"
      data-testid="requests-screen"
      aria-busy={loading}
      data-state={dataState(page, error)}
    >
      <Filters />
      <div className="requests-bar">
        <Pager
          view={page && { offset: page.offset, shown: page.requests.length, total: page.total }}
          busy={loading}
          none="No requests match"
          announce={!following}
        />
        <FollowControl
          following={following}
          pause={pause}
          updatedAt={updatedAt}
          failing={error !== null}
          onToggle={setFollowing}
          onFirstPage={() => setParams({ page: null })}
        />
        <ExportBar />
      </div>
      <RetentionNote fromMs={windowFrom(params, between)} rows />
      <ErrorNote error={error} onRetry={() => void reload()} testId="requests-error" />
      <ErrorNote error={openError} testId="request-open-error" />
      {loading && <Loading>Loading requests…</Loading>}
      <p id="requests-keys-hint" className="muted requests-hint">
        Arrow keys move between rows; Enter opens a request, Escape closes it.
      </p>
      <div className={selected ? 'requests-layout with-detail' : 'requests-layout'}>
        <div
          className="requests-main"
          onPointerEnter={() => setPointerIn(true)}
          onPointerLeave={() => setPointerIn(false)}
          onFocus={() => setFocusIn(true)}
          onBlur={focusLeaves}
          data-testid="requests-main"
        >
          {page && page.requests.length === 0 && !loading ? (
            <p className="muted empty" data-testid="requests-empty">
              No requests match these filters in this time range.
            </p>
          ) : (
            <RequestTable
              // Another page or query is a table of its own, mounted at its top: reused, it would
              // draw the new rows at the old scroll position and again once scrolled back up.
              key={answered ?? ''}
              ref={table}
              rows={page?.requests ?? NO_ROWS}
              fresh={fresh}
              selectedId={selected?.req_id ?? null}
              onOpen={open}
              onClose={close}
            />
          )}
        </div>
        {selected && <RequestDetail key={selected.req_id} row={selected} onClose={close} />}
      </div>
    </div>
  );
}

/** The first instant of the window the list reads: between two times, or the last `range`. */
function windowFrom(params: RouteParams, between: ReturnType<typeof betweenOf>): number | null {
  if (between === null) return Date.now() - rangeFromParam(params.range).rangeMs;
  return 'error' in between ? null : Date.parse(between.from);
}
