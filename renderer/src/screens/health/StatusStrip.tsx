import { formatCount } from '../../lib/format.js';
import type { HealthStatus } from './health-store.js';

/**
 * The status of each five-minute cell as a row of small squares (plain SVG: 288 a day), with the
 * same facts in words for a screen reader, and each square's own on hover. A square opens the
 * request log on its five minutes (`onOpen`), for a model or a provider's models.
 */

export const STATUS_LABEL: Record<HealthStatus, string> = {
  ok: 'ok',
  degraded: 'degraded',
  down: 'down',
  no_traffic: 'no traffic',
};

export interface StripCell {
  start: number;
  requests: number;
  errors: number;
  upstream429: number;
  status: HealthStatus;
}

const clock = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const at = (ms: number) => clock.format(new Date(ms));

function cellText(cell: StripCell, cellMs: number): string {
  const what =
    cell.requests === 0 ? 'no requests' : `${formatCount(cell.requests)} requests, ${formatCount(cell.errors)} errors`;
  return `${at(cell.start)}–${at(cell.start + cellMs)}: ${STATUS_LABEL[cell.status]} (${what})`;
}

/** What the strip shows, in words: how many cells of each status, and when the worst ones were. */
export function stripSummary(cells: readonly StripCell[], cellMs: number): string {
  if (cells.length === 0) return 'No cells.';
  const counts = new Map<HealthStatus, number>();
  for (const cell of cells) counts.set(cell.status, (counts.get(cell.status) ?? 0) + 1);
  const order: HealthStatus[] = ['down', 'degraded', 'ok', 'no_traffic'];
  const tally = order.filter((s) => counts.has(s)).map((s) => `${counts.get(s)} ${STATUS_LABEL[s]}`);
  const bad = cells.filter((cell) => cell.status === 'down' || cell.status === 'degraded');
  const named = bad.slice(-3).map((cell) => `${STATUS_LABEL[cell.status]} at ${at(cell.start)}`);
  const more = bad.length > named.length ? ` and ${bad.length - named.length} earlier` : '';
  return `By 5 minutes from ${at(cells[0]!.start)} to ${at(cells.at(-1)!.start + cellMs)}: ${tally.join(', ')}.${
    named.length ? ` Latest trouble: ${named.join(', ')}${more}.` : ''
  }`;
}

export function StatusStrip({
  cells,
  cellMs,
  name,
  onOpen,
}: {
  cells: readonly StripCell[];
  cellMs: number;
  /** Whose strip: said first by a screen reader. */
  name: string;
  onOpen?: (cell: StripCell) => void;
}) {
  return (
    <svg
      className="status-strip"
      viewBox={`0 0 ${cells.length} 1`}
      preserveAspectRatio="none"
      role="img"
      aria-label={`${name}: ${stripSummary(cells, cellMs)}`}
      data-testid="status-strip"
    >
      {cells.map((cell, index) => (
        <rect
          key={cell.start}
          x={index + 0.08}
          y={0}
          width={0.84}
          height={1}
          className={`strip-${cell.status}${onOpen ? ' strip-open' : ''}`}
          data-testid="strip-cell"
          data-status={cell.status}
          data-start={new Date(cell.start).toISOString()}
          data-requests={cell.requests}
          onClick={onOpen && (() => onOpen(cell))}
        >
          <title>{cellText(cell, cellMs)}</title>
        </rect>
      ))}
    </svg>
  );
}
