import type { ReactNode } from 'react';
import { ErrorNote, Loading, UnavailableNote } from '../../components/Feedback.js';
import { Money } from '../../components/Money.js';
import { UNKNOWN, formatCount, formatDecimal, formatMs } from '../../lib/format.js';
import { pkrToMicro } from '../../lib/money.js';
import { changeText } from '../../lib/change.js';
import type { Summary, SummaryQuery } from './analytics-store.js';
import { useCompare, type Compare } from './compare-store.js';
import { useAnalytics } from './analytics-store.js';

type Figures = Compare['current'];

interface Card {
  id: string;
  label: string;
  value: (summary: Summary) => ReactNode;
  hint?: string;
  /** The figure the comparison reads for this card, if it has one. */
  compared?: (figures: Figures) => number | null;
}

const CARDS: Card[] = [
  {
    id: 'requests',
    label: 'Requests',
    value: (s) => formatCount(s.total_requests),
    hint: 'Every request, errors included',
    compared: (f) => f.total_requests,
  },
  {
    id: 'latency',
    label: 'Mean latency',
    value: (s) => formatMs(s.avg_e2e_latency_ms),
    hint: 'End to end',
    compared: (f) => f.avg_e2e_latency_ms,
  },
  {
    id: 'ttft',
    label: 'Mean time to first token',
    value: (s) => formatMs(s.avg_ttft_ms),
    hint: 'Streamed requests',
    compared: (f) => f.avg_ttft_ms,
  },
  {
    id: 'tok-s',
    label: 'Tokens per second',
    value: (s) => formatDecimal(s.avg_tokens_per_sec),
    hint: 'Generation speed',
    compared: (f) => f.avg_tokens_per_sec,
  },
  {
    id: 'tokens',
    label: 'Tokens',
    value: (s) => formatCount(s.total_token_usage),
    hint: 'Prompt and generated',
    compared: (f) => f.total_token_usage,
  },
];

/** The cost card: the server gives a cost only for one key's requests. */
const COST: Card = {
  id: 'cost',
  label: 'Cost',
  value: (s) => <Money micro={s.total_cost_pkr === undefined ? null : pkrToMicro(s.total_cost_pkr)} unit />,
  hint: 'Settled cost of this key',
  compared: (f) => f.cost_micro,
};

/** The window's figures, one card each; unknown is "–", never 0. */
export function SummaryCards({ query, onRetry }: { query: SummaryQuery; onRetry: () => void }) {
  const { data, query: answered, loading, error, unavailable } = useAnalytics((s) => s.summary);
  const cards = query.key_id ? [...CARDS, COST] : CARDS;
  // The other figures may stay, dimmed, while the next answer is on its way; a cost is one
  // key's, so it shows only when the answer on screen is for the key chosen now.
  const costIsCurrent = answered?.key_id === query.key_id && data?.total_cost_pkr !== undefined;
  const first = loading && !data;
  // "vs before" only beside figures of the same question (the comparison is asked with the summary).
  const comparison = useCompare((s) => (JSON.stringify(s.query) === JSON.stringify(query) ? s.compare : null));

  return (
    <section className="analytics-summary" aria-labelledby="summary-heading" aria-busy={loading}>
      <h2 id="summary-heading" className="visually-hidden">
        Summary
      </h2>
      {first && <Loading>Loading the summary…</Loading>}
      {unavailable ? (
        <UnavailableNote subject="Figures are" onRetry={onRetry} testId="summary-unavailable" />
      ) : (
        <ErrorNote error={error && `Could not load the summary: ${error}`} onRetry={onRetry} testId="summary-error" />
      )}
      <div
        className={loading && data ? 'cards stale' : 'cards'}
        data-testid="summary-cards"
        data-state={loading ? 'loading' : error ? 'error' : 'ready'}
      >
        {cards.map((card) => (
          <div key={card.id} className="card" data-testid={`card-${card.id}`}>
            <span className="muted">{card.label}</span>
            <span className="value" data-testid={`card-${card.id}-value`}>
              {data && (card.id !== 'cost' || costIsCurrent) ? card.value(data) : UNKNOWN}
            </span>
            {card.hint && <small className="muted">{card.hint}</small>}
            {comparison && card.compared && (card.id !== 'cost' || costIsCurrent) && (
              <Change
                now={card.compared(comparison.current)}
                before={card.compared(comparison.previous)}
                id={card.id}
              />
            )}
          </div>
        ))}
        {comparison && !query.key_id && (
          // The contract's summary gives a cost for one key only; the comparison gives it for any scope.
          <div className="card" data-testid="card-spend">
            <span className="muted">Spend</span>
            <span className="value" data-testid="card-spend-value">
              <Money micro={comparison.current.cost_micro} unit />
            </span>
            <small className="muted">Settled cost in the window</small>
            <Change now={comparison.current.cost_micro} before={comparison.previous.cost_micro} id="spend" />
          </div>
        )}
      </div>
    </section>
  );
}

/** A figure against the window of the same length just before: "+12 % vs before"; nothing where either is unknown. */
function Change({ now, before, id }: { now: number | null; before: number | null; id: string }) {
  if (now === null || before === null) return null;
  return (
    <small className="muted change" data-testid={`card-${id}-change`}>
      {changeText(now, before)} vs before
    </small>
  );
}
