import { Field } from '../../components/Field.js';
import { useRoute } from '../../state/route.js';
import { DEFAULT_PAGE_SIZE, PAGE_SIZES, pageOf, pageSizeOf, pageText } from './query.js';
import type { RequestPage } from './query.js';

/** Where the page is in the filtered log, and the way to the pages beside it. */
export function Pager({ page, busy }: { page: RequestPage | null; busy: boolean }) {
  const params = useRoute((s) => s.params);
  const setParams = useRoute((s) => s.setParams);
  const current = pageOf(params);
  const size = pageSizeOf(params);
  const go = (to: number) => setParams({ page: to > 1 ? String(to) : null });
  const hasNext = page !== null && page.offset + page.requests.length < page.total;

  return (
    <div className="requests-pager" aria-label="Pages" role="group">
      <span className="requests-page-text" aria-live="polite" data-testid="page-text">
        {page ? pageText(page.offset, page.requests.length, page.total) : '…'}
      </span>
      <button type="button" disabled={busy || current <= 1} onClick={() => go(current - 1)} data-testid="page-previous">
        Previous
      </button>
      <button type="button" disabled={busy || !hasNext} onClick={() => go(current + 1)} data-testid="page-next">
        Next
      </button>
      <Field label="Rows per page">
        <select
          value={size}
          onChange={(event) => {
            const next = Number(event.target.value);
            // The first row on screen stays on the new page.
            const firstRow = (current - 1) * size;
            const to = Math.floor(firstRow / next) + 1;
            setParams({ size: next === DEFAULT_PAGE_SIZE ? null : String(next), page: to > 1 ? String(to) : null });
          }}
          data-testid="page-size"
        >
          {PAGE_SIZES.map((n) => (
            <option key={n} value={n}>
              {n}
            </option>
          ))}
        </select>
      </Field>
    </div>
  );
}
