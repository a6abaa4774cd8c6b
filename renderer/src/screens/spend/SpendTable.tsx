import { DataTable, type Column } from '../../components/DataTable.js';
import { Money } from '../../components/Money.js';
import { UNKNOWN } from '../../lib/format.js';
import { forecastText } from '../../lib/forecast.js';
import { DailyBars } from './DailyBars.js';
import { LimitBar } from './LimitBar.js';
import type { SpendKey } from './spend-store.js';

const COLUMNS: Column[] = [
  { label: 'Key' },
  { label: 'Credit limit (PKR)', number: true },
  { label: 'Spent (PKR)', number: true },
  { label: 'Of the limit' },
  { label: 'Last 7 days' },
  { label: 'A day (PKR)', number: true },
  { label: 'Forecast' },
];

/** A page of the organisation's keys: spend against limit, the last week's days, when each runs out. */
export function SpendTable({
  keys,
  total,
  now,
  error,
  onRetry,
}: {
  keys: readonly SpendKey[] | null;
  total: number | undefined;
  now: number;
  error: string | null;
  onRetry: () => void;
}) {
  return (
    <DataTable
      testId="spend-table"
      className="spend-table"
      label="Spend by key"
      columns={COLUMNS}
      rows={keys}
      total={total}
      rowKey={(key) => key.id}
      loading="Loading the spend by key…"
      error={error && `Could not load the spend: ${error}`}
      onRetry={onRetry}
      errorTestId="spend-error"
      empty="The organisation has no active keys."
      row={(key) => <SpendRow key={key.id} spendKey={key} now={now} />}
    />
  );
}

function SpendRow({ spendKey: key, now }: { spendKey: SpendKey; now: number }) {
  const forecast = key.forecast && forecastText(key.forecast, now);
  return (
    <tr data-testid="spend-row" data-key-id={key.id}>
      <td>
        <strong className="key-name">{key.name}</strong>
        <code className="muted key-prefix">{key.key_prefix}</code>
      </td>
      <td className="number">
        {key.credit_limit_micro === null ? (
          <span className="muted">none</span>
        ) : (
          <Money micro={key.credit_limit_micro} />
        )}
      </td>
      <td className="number">
        <Money micro={key.spent_micro} testId="spend-spent" />
      </td>
      <td>
        {key.credit_limit_micro === null ? (
          <span className="muted">no limit</span>
        ) : (
          <LimitBar name={key.name} spent={key.spent_micro} limit={key.credit_limit_micro} />
        )}
      </td>
      <td>
        {key.burn ? (
          <span className="spend-week">
            <DailyBars daily={key.burn.daily_micro} testId="spend-days" />
            <Money micro={key.burn.window_micro} testId="spend-week" />
          </span>
        ) : (
          <span className="muted">{UNKNOWN}</span>
        )}
      </td>
      <td className="number">
        <Money micro={key.burn?.rate_micro_per_day ?? null} testId="spend-rate" />
      </td>
      <td data-testid="spend-forecast" data-kind={key.forecast?.kind ?? 'unknown'}>
        {forecast ? (
          <span className={`forecast ${forecast.tone}`}>
            {forecast.headline}
            <small className="muted">{forecast.detail}</small>
          </span>
        ) : (
          <span className="muted">{UNKNOWN}</span>
        )}
      </td>
    </tr>
  );
}
