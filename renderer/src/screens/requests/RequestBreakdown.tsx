import { useEffect } from 'react';
import { ErrorNote } from '../../components/Feedback.js';
import { formatCount, UNKNOWN } from '../../lib/format.js';
import { exactPkrTitle, formatMicroPkr, formatMicroPkrFixed, formatPkr } from '../../lib/money.js';
import { useModelPrices } from './model-prices-store.js';
import { ProportionBar } from './ProportionBar.js';
import { costOf, tokensOf, type CostBreakdown } from './request-picture.js';
import type { RequestRow } from './request-row.js';
import { Unknown } from './Unknown.js';

/** The request's tokens by kind, to scale. */
export function RequestTokens({ row }: { row: RequestRow }) {
  const tokens = tokensOf(row);
  const known = tokens.parts.filter((part) => part.tokens !== null);
  const description =
    `Tokens, ${formatCount(tokens.total)} in all: ` +
    known.map((part) => `${part.label.toLowerCase()} ${formatCount(part.tokens)}`).join(', ');
  const knownSum = known.reduce((sum, part) => sum + (part.tokens ?? 0), 0);
  return (
    <section aria-labelledby="request-tokens-title" data-testid="request-tokens">
      <h3 id="request-tokens-title">
        Tokens{' '}
        {tokens.estimated && (
          <span className="picture-flag" data-testid="tokens-estimated">
            estimated by the gateway
          </span>
        )}
      </h3>
      <ProportionBar
        label={description}
        parts={known.map((part) => ({ id: part.id, value: part.tokens ?? 0 }))}
        testId="tokens-bar"
      />
      <dl className="requests-fields picture-legend">
        {tokens.parts.map((part) => (
          <div key={part.id} className="picture-legend-row" data-testid={`tokens-${part.id}`}>
            <dt>
              <span className={`picture-swatch picture-${part.id}`} aria-hidden="true" />
              {part.label}
            </dt>
            <dd>{part.tokens === null ? <Unknown why={part.why ?? 'not recorded'} /> : formatCount(part.tokens)}</dd>
          </div>
        ))}
        <div className="picture-legend-row" data-testid="tokens-total">
          <dt>Total</dt>
          <dd>
            {formatCount(tokens.total)}
            {!tokens.addsUp && (
              <small className="muted">
                {' '}
                (the parts known add up to {formatCount(knownSum)}
                {row.metrics.prompt_tokens === null ? '; the prompt is not recorded' : ''})
              </small>
            )}
          </dd>
        </div>
      </dl>
    </section>
  );
}

/** The request's settled cost split by its tokens at the model's prices, or why it cannot be. */
export function RequestCost({ row }: { row: RequestRow }) {
  const prices = useModelPrices((s) => s.prices);
  const load = useModelPrices((s) => s.load);
  useEffect(() => {
    void load();
  }, [load]);

  const settled = formatPkr(row.financials.cost_pkr);
  let body;
  if (prices.kind === 'idle' || prices.kind === 'loading') body = <p className="muted">Reading the models' prices…</p>;
  else if (prices.kind === 'failed')
    body = <ErrorNote error={`Could not read the models' prices: ${prices.error}`} onRetry={() => void load(true)} />;
  else if (prices.kind === 'not-offered') body = <Unsplit why="this control plane publishes no prices" />;
  else body = <CostTable cost={costOf(row, prices.byModel.get(row.model) ?? null, prices.byokShare)} />;

  return (
    <section aria-labelledby="request-cost-title" data-testid="request-cost">
      <h3 id="request-cost-title">Cost</h3>
      <p>
        Settled: <strong data-testid="cost-settled">{settled}</strong>
      </p>
      {body}
    </section>
  );
}

function Unsplit({ why }: { why: string }) {
  return (
    <p className="muted" data-testid="cost-unsplit">
      It cannot be split into its parts: {why}.
    </p>
  );
}

const share = (value: number) => `${(value * 100).toLocaleString(undefined, { maximumFractionDigits: 2 })} %`;

function CostTable({ cost }: { cost: CostBreakdown }) {
  if (cost.kind === 'unsplit') return <Unsplit why={cost.why} />;
  return (
    <>
      <table className="picture-cost" data-testid="cost-parts">
        <caption className="muted">
          At the model's prices today, PKR per million tokens; each part's cost is rounded on its own, the total is
          rounded once from the exact parts
        </caption>
        <thead>
          <tr>
            <th scope="col">Part</th>
            <th scope="col">Tokens</th>
            <th scope="col">Price</th>
            <th scope="col">Cost (PKR)</th>
          </tr>
        </thead>
        <tbody>
          {cost.parts.map((part) => (
            <tr key={part.id} data-testid={`cost-${part.id}`}>
              <th scope="row">
                <span className={`picture-swatch picture-${part.id}`} aria-hidden="true" />
                {part.label}
              </th>
              <td>
                {part.tokens === null ? (
                  <span className="muted" title={part.why ?? undefined}>
                    {UNKNOWN}
                  </span>
                ) : (
                  formatCount(part.tokens)
                )}
              </td>
              <td>{part.perMillion === null ? UNKNOWN : part.perMillion.toLocaleString()}</td>
              <CostCell micro={part.micro} />
            </tr>
          ))}
        </tbody>
        <tfoot>
          <tr data-testid="cost-list">
            <th scope="row">{cost.byok ? 'At list price' : 'Together'}</th>
            <td colSpan={2} />
            <CostCell micro={cost.listMicro} />
          </tr>
          {cost.byok && (
            <tr data-testid="cost-byok-share">
              <th scope="row">The service's share ({share(cost.byokShare)})</th>
              <td colSpan={2} />
              <CostCell micro={cost.expectedMicro} />
            </tr>
          )}
        </tfoot>
      </table>
      <p className={cost.addsUp ? 'muted' : 'picture-mismatch'} data-testid="cost-check">
        {cost.addsUp
          ? cost.byok
            ? "The parts add up to the settled cost: the upstream bills the list price to the organisation's own provider key, and the service settles its share."
            : 'The parts add up to the settled cost.'
          : `At today's prices the parts come to ${formatMicroPkr(cost.expectedMicro)}, not the ${formatMicroPkr(cost.settledMicro)} settled: the price may have changed since, or the request was not billed in full, so the parts are shown for reference only.`}
      </p>
    </>
  );
}

/** One precision down the cost column (the micro-PKR the server settles), so the figures line up. */
function CostCell({ micro }: { micro: number | null }) {
  return <td title={micro === null ? undefined : exactPkrTitle(micro)}>{formatMicroPkrFixed(micro, 6)}</td>;
}
