import { useVirtualizer } from '@tanstack/react-virtual';
import {
  memo,
  useCallback,
  useEffect,
  useImperativeHandle,
  useLayoutEffect,
  useRef,
  useState,
  type KeyboardEvent,
  type Ref,
} from 'react';
import type { RequestRow } from './request-row.js';
import { RequestRowCells } from './RequestRowCells.js';

/** Every row has one fixed height, so the virtualizer needs no measuring. */
export const ROW_HEIGHT = 34;
const PAGE_STEP = 10;

/** `wideOnly`: shown where the table has room for it (requests.css), else in the detail alone. */
const COLUMNS: readonly { id: string; label: string; number?: boolean; wideOnly?: boolean }[] = [
  { id: 'time', label: 'Time' },
  { id: 'model', label: 'Model' },
  { id: 'api', label: 'API', wideOnly: true },
  { id: 'status', label: 'Status', number: true },
  { id: 'key', label: 'Key' },
  { id: 'project', label: 'Project' },
  { id: 'latency', label: 'Latency', number: true },
  { id: 'ttft', label: 'TTFT', number: true },
  { id: 'tokens', label: 'Tokens', number: true },
  { id: 'cost', label: 'Cost (PKR)', number: true },
  { id: 'ended-as', label: 'Ended as' },
];

export interface RequestTableHandle {
  /** Puts focus back on a request's row (after its detail closes), when it is on this page. */
  focusRow(reqId: string): void;
}

/**
 * The page's rows, only those in view mounted (a page can hold 200). Rows are focusable one
 * at a time (a roving tabindex): arrow keys, Page Up/Down, Home and End move, Enter or
 * Space opens the detail, Escape closes it.
 */
export function RequestTable(props: {
  rows: readonly RequestRow[];
  /** Rows new since the last follow refresh, briefly highlighted. */
  fresh?: ReadonlySet<string>;
  selectedId: string | null;
  onOpen: (row: RequestRow) => void;
  onClose: () => void;
  ref?: Ref<RequestTableHandle>;
}) {
  const { rows } = props;
  const scroller = useRef<HTMLDivElement>(null);
  const rowElements = useRef(new Map<number, HTMLTableRowElement>());
  const [active, setActive] = useState(0);
  const pendingFocus = useRef<number | null>(null);

  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    // A scroll step is a quarter of the box (~4 rows): more rows than that above and below are
    // only more to lay out when a page of rows arrives.
    overscan: 4,
  });

  // A new page starts at its first row.
  useEffect(() => {
    setActive(0);
    scroller.current?.scrollTo?.({ top: 0 });
  }, [rows]);

  const items = virtualizer.getVirtualItems();

  // The row asked for by a key press may mount only after the scroll: focus it once it has.
  useLayoutEffect(() => {
    const index = pendingFocus.current;
    if (index === null) return;
    const element = rowElements.current.get(index);
    if (element) {
      element.focus({ preventScroll: true });
      pendingFocus.current = null;
    }
  });

  const move = (to: number) => {
    const index = Math.max(0, Math.min(rows.length - 1, to));
    setActive(index);
    pendingFocus.current = index;
    virtualizer.scrollToIndex(index, { align: 'auto' });
  };

  useImperativeHandle(props.ref, () => ({
    focusRow(reqId) {
      const index = rows.findIndex((row) => row.req_id === reqId);
      if (index >= 0) move(index);
    },
  }));

  const onKeyDown = (event: KeyboardEvent<HTMLTableRowElement>, index: number) => {
    const row = rows[index];
    const steps: Record<string, number> = {
      ArrowDown: index + 1,
      ArrowUp: index - 1,
      PageDown: index + PAGE_STEP,
      PageUp: index - PAGE_STEP,
      Home: 0,
      End: rows.length - 1,
    };
    const target = steps[event.key];
    if (target !== undefined) {
      event.preventDefault();
      move(target);
    } else if ((event.key === 'Enter' || event.key === ' ') && row) {
      event.preventDefault();
      props.onOpen(row);
    } else if (event.key === 'Escape') {
      props.onClose();
    }
  };

  // The rows are memoised (a scroll step then renders only the rows it brings into view), so
  // they get handlers that never change, which call this render's.
  const latest = useRef({ onKeyDown, onOpen: props.onOpen, rows });
  latest.current = { onKeyDown, onOpen: props.onOpen, rows };
  const handlers = useRef<RowHandlers>({
    focus: (index) => setActive(index),
    open: (index) => {
      const row = latest.current.rows[index];
      setActive(index);
      if (row) latest.current.onOpen(row);
    },
    key: (event, index) => latest.current.onKeyDown(event, index),
  }).current;
  const register = useCallback((index: number, element: HTMLTableRowElement | null) => {
    if (element) rowElements.current.set(index, element);
    else rowElements.current.delete(index);
  }, []);

  // The active row may have scrolled out and unmounted: the first row in view keeps the table reachable by Tab.
  const tabbable = items.some((item) => item.index === active) ? active : (items[0]?.index ?? 0);
  const paddingTop = items[0]?.start ?? 0;
  const paddingBottom = items.length > 0 ? virtualizer.getTotalSize() - (items[items.length - 1]?.end ?? 0) : 0;

  return (
    <div
      className="table-wrap requests-scroll"
      // Its height is set and its width the column's: contained, a new page's rows are laid out
      // and painted on their own, and the page around (a loading line above, the pager) never
      // lays them out again.
      style={{ contain: 'strict' }}
      ref={scroller}
      data-testid="request-table-scroll"
    >
      <table className="requests-table" aria-rowcount={rows.length + 1} aria-describedby="requests-keys-hint">
        <colgroup>
          {COLUMNS.map((c) => (
            <col key={c.id} className={c.wideOnly ? `col-${c.id} wide-only` : `col-${c.id}`} />
          ))}
        </colgroup>
        <thead>
          <tr aria-rowindex={1}>
            {COLUMNS.map((c) => (
              <th key={c.id} scope="col" className={c.number ? 'number' : c.wideOnly ? 'wide-only' : undefined}>
                {c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody data-testid="request-rows">
          {paddingTop > 0 && (
            <tr aria-hidden="true" className="requests-spacer">
              <td colSpan={COLUMNS.length} style={{ height: paddingTop }} />
            </tr>
          )}
          {items.map((item) => {
            const row = rows[item.index];
            if (!row) return null;
            return (
              <RequestRowView
                key={row.req_id}
                row={row}
                index={item.index}
                selected={row.req_id === props.selectedId}
                fresh={props.fresh?.has(row.req_id) ?? false}
                tabbable={item.index === tabbable}
                handlers={handlers}
                register={register}
              />
            );
          })}
          {paddingBottom > 0 && (
            <tr aria-hidden="true" className="requests-spacer">
              <td colSpan={COLUMNS.length} style={{ height: paddingBottom }} />
            </tr>
          )}
        </tbody>
      </table>
    </div>
  );
}

interface RowHandlers {
  focus(index: number): void;
  open(index: number): void;
  key(event: KeyboardEvent<HTMLTableRowElement>, index: number): void;
}

/** One row; drawn again only when its own props change (not for every scroll step of the table). */
const RequestRowView = memo(function RequestRowView(props: {
  row: RequestRow;
  index: number;
  selected: boolean;
  fresh: boolean;
  tabbable: boolean;
  handlers: RowHandlers;
  register: (index: number, element: HTMLTableRowElement | null) => void;
}) {
  const { row, index, selected, handlers, register } = props;
  const className = ['request-row', selected && 'selected', props.fresh && 'fresh'].filter(Boolean).join(' ');
  const ref = useCallback((element: HTMLTableRowElement | null) => register(index, element), [register, index]);
  return (
    <tr
      ref={ref}
      aria-rowindex={index + 2}
      aria-current={selected ? 'true' : undefined}
      className={className}
      tabIndex={props.tabbable ? 0 : -1}
      onFocus={() => handlers.focus(index)}
      onClick={() => handlers.open(index)}
      onKeyDown={(event) => handlers.key(event, index)}
      data-testid="request-row"
      data-req-id={row.req_id}
    >
      <RequestRowCells row={row} />
    </tr>
  );
});
