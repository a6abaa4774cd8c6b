import { formatCount, formatMs, UNKNOWN, utcTitle } from '../../lib/format.js';
import { Money } from '../../components/Money.js';
import { exactPkrTitle, pkrToMicro } from '../../lib/money.js';
import { apiLabel, apiTitle } from '../../lib/request-api.js';
import { reasonLabel, type RequestRow } from './request-row.js';
import { rowCompactCost, rowCostDecimals, rowTimeText, rowTokensText } from './row-figures.js';

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

/** The exact count behind a compact one, and whether the gateway estimated it. */
function tokensTitle(tokens: number, estimated: boolean): string | undefined {
  const parts = [
    tokens >= 1_000_000 ? `${formatCount(tokens)} tokens` : '',
    estimated ? 'estimated by the gateway' : '',
  ];
  return parts.filter(Boolean).join(', ') || undefined;
}

/** A row's cost: fewer decimals as it grows, compact past ten million PKR, exact on hover. */
function RowCost({ micro }: { micro: number }) {
  const compact = rowCompactCost(micro);
  if (compact === null) return <Money micro={micro} decimals={rowCostDecimals(micro)} />;
  return (
    <span className="money" title={exactPkrTitle(micro)} data-micro={micro}>
      {compact}
    </span>
  );
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
      {/* Absent from a control plane that does not say it: unknown, as null. */}
      <td title={apiTitle(row.api)} className={(row.api ?? null) === null ? 'wide-only muted' : 'wide-only'}>
        {apiLabel(row.api)}
      </td>
      <td className={`number status status-${String(row.status)[0]}xx`}>{row.status}</td>
      <td>
        <NamedRef value={row.key} kind="key" />
      </td>
      <td>
        <NamedRef value={row.project} kind="project" />
      </td>
      <td className="number">{formatMs(m.total_ms)}</td>
      <td className="number">{m.ttft_ms === null ? <span className="muted">{UNKNOWN}</span> : formatMs(m.ttft_ms)}</td>
      <td className="number" title={tokensTitle(m.total_tokens, m.tokens_estimated)}>
        {rowTokensText(m.total_tokens, m.tokens_estimated)}
      </td>
      {/* PKR in the header, so the cell is the figure alone: four decimals down the column, exact on hover. */}
      <td className="number">
        <RowCost micro={pkrToMicro(row.financials.cost_pkr)} />
      </td>
      <td title={row.status_detail.termination_reason}>{reasonLabel(row.status_detail.termination_reason)}</td>
    </>
  );
}
