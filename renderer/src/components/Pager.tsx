import { PageSizeSelect } from '../../components/PageSizeSelect.js';
import { pageSizeFrom, pageSizeParam } from '../../lib/page-size.js';
import { useRoute } from '../../state/route.js';
import { pageOf, pageText } from './paging.js';
import type { RequestPage } from './request-row.js';

/**
 * Where the page is in the filtered log, and the way to the pages beside it. `announce`: the
 * text is a polite live region, off while following (it would speak every 2 s).
 */
export function Pager({
  page,
  busy,
  announce = true,
}: {
  page: RequestPage | null;
  busy: boolean;
  announce?: boolean;
}) {
  const params = useRoute((s) => s.params);
  const setParams = useRoute((s) => s.setParams);
  const current = pageOf(params);
  const size = pageSizeFrom(params.size);
  const go = (to: number) => setParams({ page: to > 1 ? String(to) : null });
  const hasNext = page !== null && page.offset + page.requests.length < page.total;

  const resize = (next: number) => {
    // The first row on screen stays on the new page.
    const to = Math.floor(((current - 1) * size) / next) + 1;
    setParams({ size: pageSizeParam(next), page: to > 1 ? String(to) : null });
  };

  return (
    <div className="requests-pager" aria-label="Pages" role="group">
      <span className="requests-page-text" aria-live={announce ? 'polite' : 'off'} data-testid="page-text">
        {page ? pageText(page.offset, page.requests.length, page.total) : '…'}
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
