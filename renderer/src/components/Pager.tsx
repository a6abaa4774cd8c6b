import { PageSizeSelect } from './PageSizeSelect.js';
import { pageSizeFrom, pageSizeParam } from '../lib/page-size.js';
import { pageOf, pageText } from '../lib/paging.js';
import { useRoute } from '../state/route.js';

/** The rows a server-paged list shows: where they start, how many, of how many. */
export interface PageView {
  offset: number;
  shown: number;
  total: number;
}

/**
 * Where the page is in a server-paged list, and the way to the pages beside it; the page and
 * its size live in the address (`page`, `size`). `announce`: the text is a polite live region
 * (off while a list follows new rows: it would speak every 2 s). `none`: said of an empty list.
 */
export function Pager({
  view,
  busy,
  none,
  announce = true,
}: {
  view: PageView | null;
  busy: boolean;
  none: string;
  announce?: boolean;
}) {
  const params = useRoute((s) => s.params);
  const setParams = useRoute((s) => s.setParams);
  const current = pageOf(params);
  const size = pageSizeFrom(params.size);
  const go = (to: number) => setParams({ page: to > 1 ? String(to) : null });
  const hasNext = view !== null && view.offset + view.shown < view.total;

  const resize = (next: number) => {
    // The first row on screen stays on the new page.
    const to = Math.floor(((current - 1) * size) / next) + 1;
    setParams({ size: pageSizeParam(next), page: to > 1 ? String(to) : null });
  };

  return (
    <div className="pager" aria-label="Pages" role="group">
      <span className="pager-text" aria-live={announce ? 'polite' : 'off'} data-testid="page-text">
        {view ? pageText(view.offset, view.shown, view.total, none) : '…'}
      </span>
      <button type="button" disabled={busy || current <= 1} onClick={() => go(current - 1)} data-testid="page-previous">
        Previous
      </button>
      <button type="button" disabled={busy || !hasNext} onClick={() => go(current + 1)} data-testid="page-next">
        Next
      </button>
      <PageSizeSelect label="Rows per page" value={size} onChange={resize} testId="page-size" />
    </div>
  );
}
