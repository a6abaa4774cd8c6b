import { formatCount, formatMs, UNKNOWN, utcTitle } from '../../lib/format.js';
import { Money } from '../../components/Money.js';
import { pkrToMicro } from '../../lib/money.js';
import { reasonLabel, type RequestRow } from './request-row.js';

// The table's times leave out the year to fit the column; the tooltip gives the exact UTC instant.
const rowTime = new Intl.DateTimeFormat(undefined, {
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
});

/** A row's time for the column; a timestamp that does not read is shown as the server sent it. */
export function rowTimeText(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : rowTime.format(date);
}

/** A key or project by name; a null name is one since revoked or deleted, shown as unknown with its id. */
function NamedRef({ value, kind }: { value: RequestRow['key']; kind: string }) {
  if (!value)
    return (
      <span className="muted" title={`no ${kind} attribution`}>
        {UNKNOWN}
      </span>
    );
  if (value.name === null)
    return (
      <span className="muted" title={`${kind} ${value.id}, since removed`}>
        {UNKNOWN}
      </span>
    );
  return <span title={`${value.name} (${value.id})`}>{value.name}</span>;
}

/** One row's cells, in the order of the table's columns. */
export function RequestRowCells({ row }: { row: RequestRow }) {
  const m = row.metrics;
  return (
    <>
      <td>
        <time dateTime={row.timestamp} title={utcTitle(row.timestamp)}>
          {rowTimeText(row.timestamp)}
        </time>
      </td>
      <td title={row.model}>{row.model}</td>
      <td className={`number status status-${String(row.status)[0]}xx`}>{row.status}</td>
      <td>
        <NamedRef value={row.key} kind="key" />
      </td>
      <td>
        <NamedRef value={row.project} kind="project" />
      </td>
      <td className="number">{formatMs(m.total_ms)}</td>
      <td className="number">{m.ttft_ms === null ? <span className="muted">{UNKNOWN}</span> : formatMs(m.ttft_ms)}</td>
      <td className="number" title={m.tokens_estimated ? 'estimated by the gateway' : undefined}>
        {m.tokens_estimated ? '≈ ' : ''}
        {formatCount(m.total_tokens)}
      </td>
      {/* PKR in the header, so the cell is the figure alone: four decimals down the column, exact on hover. */}
      <td className="number">
        <Money micro={pkrToMicro(row.financials.cost_pkr)} decimals={4} />
      </td>
      <td title={row.status_detail.termination_reason}>{reasonLabel(row.status_detail.termination_reason)}</td>
    </>
  );
}
