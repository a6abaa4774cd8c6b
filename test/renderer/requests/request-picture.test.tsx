import { render, screen, within } from '@testing-library/react';
import { beforeEach, describe, expect, it } from 'vitest';
import { RequestDetail } from '../../../renderer/src/screens/requests/RequestDetail.js';
import { costOf, timelineOf, tokensOf, type Price } from '../../../renderer/src/screens/requests/request-picture.js';
import { resetOrganisationStores } from '../../../renderer/src/state/organisation-scope.js';
import { useSession } from '../../../renderer/src/state/session.js';
import { bridge, Refusal } from '../fake-bridge.js';
import { ME } from '../signed-in.js';
import { nullRow, requestRow } from './rows.js';
import type { RequestRow } from '../../../renderer/src/screens/requests/request-row.js';
import { BYOK_SERVICE_SHARE, ROUTE_CATALOGUE, settledCostMicro } from '../../../server/domain/route-catalogue.js';

// openai/gpt-4o-mini as the gateway prices it (PKR per million tokens).
const MINI: Price = { input: 42, output: 168, cache_write: 42, cache_read: 21 };
// requestRow(0): 900 prompt, 1,024 read from the cache, 0 written, 220 generated.
const MINI_MICRO = 900 * 42 + 1024 * 21 + 0 * 42 + 220 * 168;

/** A request the gateway refused before dispatch, as it writes one (request-facts.ts refusalRow). */
function refusedRow(): RequestRow {
  const row = requestRow(0, { status: 429, stream: true, upstream: null, financials: { cost_pkr: 0, is_byok: 0 } });
  row.metrics = {
    ...row.metrics,
    total_ms: 2,
    pre_dispatch_ms: 2,
    ttft_ms: null,
    tpot_ms: null,
    prompt_tokens: 0,
    tokens_generated: 0,
    cache_creation_input_tokens: null,
    cache_read_input_tokens: null,
    total_tokens: 0,
  };
  return row;
}

const phases = (row: ReturnType<typeof requestRow>) => timelineOf(row).phases.map((p) => [p.id, p.startMs, p.ms]);
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

describe('the timeline', () => {
  it('splits a streamed request at dispatch and at its first token, both measured from arrival', () => {
    const row = requestRow(0); // total 812.4, ttft 301.2, pre-dispatch 4.3, 220 generated
    const timeline = timelineOf(row);
    expect(phases(row)).toEqual([
      ['pre_dispatch', 0, 4.3],
      ['first_token', 4.3, 301.2 - 4.3],
      ['generation', 301.2, 812.4 - 301.2],
    ]);
    expect(sum(timeline.phases.map((p) => p.ms))).toBeCloseTo(812.4, 9);
    expect(timeline.ttftMs).toBe(301.2);
    expect(timeline.generationMs).toBeCloseTo(511.2, 9);
    expect(timeline.tokensPerSecond).toBeCloseTo(220 / 0.5112, 6);
    expect(timeline.inconsistent).toBeNull();
  });

  it('draws a non-streamed request as one upstream span, its first token unknown and not drawn as 0', () => {
    const row = requestRow(0, { stream: false });
    row.metrics = { ...row.metrics, ttft_ms: null, tpot_ms: null };
    const timeline = timelineOf(row);
    expect(phases(row)).toEqual([
      ['pre_dispatch', 0, 4.3],
      ['upstream', 4.3, 812.4 - 4.3],
    ]);
    expect(timeline.phases[1]!.label).toBe('Upstream, whole answer');
    expect(timeline.ttftMs).toBeNull();
    expect(timeline.generationMs).toBeNull();
    expect(timeline.unknownWhy).toMatch(/not streamed/);
    // As the analytics count it without a first token: generated over the time after dispatch.
    expect(timeline.tokensPerSecond).toBeCloseTo(220 / 0.8081, 6);
  });

  it('says so when a stream ended before its first token', () => {
    const row = requestRow(0, { stream: true });
    row.metrics = { ...row.metrics, ttft_ms: null, tpot_ms: null, tokens_generated: 0 };
    const timeline = timelineOf(row);
    expect(timeline.phases.map((p) => p.label)).toEqual(['Before dispatch', 'Upstream, no first token']);
    expect(timeline.unknownWhy).toMatch(/before a first token/);
    expect(timeline.tokensPerSecond).toBeNull();
  });

  it('draws a request refused at the gateway as one phase, never dispatched, with no speed', () => {
    const row = refusedRow();
    const timeline = timelineOf(row);
    expect(phases(row)).toEqual([['refused', 0, 2]]);
    expect(timeline.phases[0]!.label).toBe('Refused before dispatch');
    expect(timeline.unknownWhy).toBe('never dispatched: the gateway refused the request');
    expect(timeline.tokensPerSecond).toBeNull();
    // Its cache fields are unknown because nothing was sent, not because the route has no cache.
    expect(
      tokensOf(row)
        .parts.filter((p) => p.tokens === null)
        .map((p) => p.why),
    ).toEqual([
      'never dispatched: the gateway refused the request',
      'never dispatched: the gateway refused the request',
    ]);
  });

  it('says a first token came when tokens did, though its time was not recorded', () => {
    const row = requestRow(0, { stream: true });
    row.metrics = { ...row.metrics, ttft_ms: null, tpot_ms: null };
    expect(timelineOf(row).unknownWhy).toBe('tokens came, but the first-token event was not recorded');
  });

  it('keeps times that do not fit one another within the total, and says which do not', () => {
    const late = requestRow(0);
    late.metrics = { ...late.metrics, total_ms: 100, pre_dispatch_ms: 150, ttft_ms: 120 };
    expect(phases(late)).toEqual([
      ['pre_dispatch', 0, 100],
      ['first_token', 100, 0],
      ['generation', 100, 0],
    ]);
    expect(timelineOf(late).inconsistent).toMatch(
      /before dispatch is longer than the total.*first token came before dispatch.*after the end/,
    );

    const early = requestRow(0);
    early.metrics = { ...early.metrics, total_ms: 100, pre_dispatch_ms: 10, ttft_ms: 5 };
    expect(phases(early)).toEqual([
      ['pre_dispatch', 0, 10],
      ['first_token', 10, 0],
      ['generation', 10, 90],
    ]);
  });
});

describe('the tokens', () => {
  it('lists the four kinds, and they add up to the total', () => {
    const tokens = tokensOf(requestRow(0));
    expect(tokens.parts.map((p) => [p.id, p.tokens])).toEqual([
      ['prompt', 900],
      ['cache_read', 1024],
      ['cache_write', 0],
      ['generated', 220],
    ]);
    expect(tokens).toMatchObject({ total: 2144, addsUp: true, estimated: false });
  });

  it('keeps unknown parts unknown: no cache on the route, no prompt on an old row', () => {
    const tokens = tokensOf(nullRow());
    expect(tokens.parts.map((p) => [p.id, p.tokens, p.why])).toEqual([
      ['prompt', null, 'not recorded on older rows'],
      ['cache_read', null, 'this route has no prompt cache'],
      ['cache_write', null, 'this route has no prompt cache'],
      ['generated', 0, null],
    ]);
    expect(tokens.addsUp).toBe(false);

    const noCache = requestRow(0);
    noCache.metrics = {
      ...noCache.metrics,
      cache_read_input_tokens: null,
      cache_creation_input_tokens: null,
      total_tokens: 1120,
    };
    expect(tokensOf(noCache).addsUp).toBe(true);
  });
});

describe('the cost', () => {
  it('splits the settled cost by tokens at the price, and the parts add up', () => {
    const row = requestRow(0, { financials: { cost_pkr: MINI_MICRO / 1e6, is_byok: 0 } });
    const cost = costOf(row, MINI, 0.02);
    if (cost.kind !== 'split') throw new Error(cost.why);
    expect(cost.parts.map((p) => [p.id, p.micro])).toEqual([
      ['prompt', 900 * 42],
      ['cache_read', 1024 * 21],
      ['cache_write', 0],
      ['generated', 220 * 168],
    ]);
    expect(cost).toMatchObject({
      listMicro: MINI_MICRO,
      expectedMicro: MINI_MICRO,
      settledMicro: MINI_MICRO,
      addsUp: true,
    });
  });

  it("on a BYOK request the service's share of the list price is what adds up", () => {
    const settled = Math.round(MINI_MICRO * 0.02);
    const row = requestRow(0, { financials: { cost_pkr: settled / 1e6, is_byok: 1 } });
    expect(costOf(row, MINI, 0.02)).toMatchObject({
      byok: true,
      listMicro: MINI_MICRO,
      expectedMicro: settled,
      addsUp: true,
    });
  });

  it('says when the parts do not add up to what was settled', () => {
    const row = requestRow(0, { financials: { cost_pkr: 0.074, is_byok: 0 } });
    expect(costOf(row, MINI, 0.02)).toMatchObject({ expectedMicro: MINI_MICRO, settledMicro: 74_000, addsUp: false });
  });

  it('gives a part the route does not have no price and no cost, not 0', () => {
    const row = requestRow(0);
    row.metrics = { ...row.metrics, cache_read_input_tokens: null, cache_creation_input_tokens: null };
    const cost = costOf(row, MINI, 0.02);
    if (cost.kind !== 'split') throw new Error(cost.why);
    expect(cost.parts.map((p) => [p.id, p.perMillion, p.micro])).toEqual([
      ['prompt', 42, 900 * 42],
      ['cache_read', null, null],
      ['cache_write', null, null],
      ['generated', 168, 220 * 168],
    ]);
  });

  it('comes to exactly what the gateway settles, on every route of the catalogue, with and without BYOK', () => {
    // A fixed pseudo-random sequence: the same rows on every run.
    let seed = 25;
    const next = (below: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % below;
    };
    const mismatches: string[] = [];
    for (const route of ROUTE_CATALOGUE) {
      const price: Price = {
        input: route.price.input,
        output: route.price.output,
        cache_write: route.price.cacheWrite,
        cache_read: route.price.cacheRead,
      };
      for (let i = 0; i < 400; i++) {
        const byok = i % 2 === 1;
        const tokens = {
          prompt: next(200_000),
          generated: next(20_000),
          cacheWrite: route.promptCache ? next(50_000) : 0,
          cacheRead: route.promptCache ? next(100_000) : 0,
        };
        const micro = settledCostMicro(route.price, tokens, byok);
        const row = requestRow(i, { model: route.id, financials: { cost_pkr: micro / 1e6, is_byok: byok ? 1 : 0 } });
        row.metrics = {
          ...row.metrics,
          prompt_tokens: tokens.prompt,
          tokens_generated: tokens.generated,
          cache_creation_input_tokens: route.promptCache ? tokens.cacheWrite : null,
          cache_read_input_tokens: route.promptCache ? tokens.cacheRead : null,
        };
        const cost = costOf(row, price, BYOK_SERVICE_SHARE);
        if (cost.kind !== 'split' || !cost.addsUp)
          mismatches.push(`${route.id} ${JSON.stringify(tokens)} byok=${byok}`);
      }
    }
    expect(mismatches).toEqual([]);
  });

  it('cannot split without a price, or without the prompt tokens', () => {
    expect(costOf(requestRow(0), null, 0.02)).toEqual({
      kind: 'unsplit',
      why: 'the catalogue has no price for this model',
    });
    expect(costOf(nullRow(), MINI, 0.02)).toEqual({
      kind: 'unsplit',
      why: "this row's prompt tokens were not recorded",
    });
  });
});

describe('the detail panel', () => {
  beforeEach(() => {
    useSession.setState({ phase: 'console', profileId: 'p1', me: ME });
    resetOrganisationStores();
  });

  const prices = () =>
    bridge.on('api.modelPrices', () => ({
      prices: [{ model: 'openai/gpt-4o-mini', ...MINI }],
      byok_service_share: 0.02,
    }));

  it('shows the timeline, the tokens and the cost split, beside the raw fields', async () => {
    prices();
    const row = requestRow(0, { financials: { cost_pkr: MINI_MICRO / 1e6, is_byok: 0 } });
    render(<RequestDetail row={row} onClose={() => {}} />);
    const timeline = screen.getByTestId('request-timeline');
    expect(within(timeline).getByRole('img').getAttribute('aria-label')).toBe(
      'Timeline, 812.4 ms in all: before dispatch 4.3 ms, waiting for the first token 296.9 ms, generation 511.2 ms',
    );
    expect(within(timeline).getByTestId('timeline-ttft').textContent).toBe('First token after301.2 ms');
    expect(screen.getByTestId('tokens-cache_read').textContent).toContain('1,024');
    expect(await screen.findByTestId('cost-check')).toHaveProperty(
      'textContent',
      'The parts add up to the settled cost.',
    );
    expect(screen.getByTestId('cost-prompt').textContent).toContain('0.037800');
    // The raw fields are all still there.
    expect(screen.getByTestId('detail-metrics.ttft_ms').textContent).toBe('301.2 ms');
  });

  it('shows unknown parts as a dash, draws none of them, and says why the cost is not split', async () => {
    bridge.on('api.modelPrices', () => {
      throw new Refusal(404, 'not found');
    });
    render(<RequestDetail row={nullRow()} onClose={() => {}} />);
    expect(screen.getByTestId('timeline-ttft').textContent).toMatch(/^First token after– \(not streamed/);
    expect(
      [...screen.getByTestId('timeline-bar').querySelectorAll('[data-part]')].map((p) => p.getAttribute('data-part')),
    ).toEqual(['pre_dispatch', 'upstream']);
    expect([...screen.getByTestId('tokens-bar').querySelectorAll('[data-part]')]).toEqual([]);
    expect(screen.getByTestId('tokens-prompt').textContent).toContain('– (not recorded on older rows)');
    expect((await screen.findByTestId('cost-unsplit')).textContent).toBe(
      'It cannot be split into its parts: this control plane publishes no prices.',
    );
  });

  it('draws no sliver for a part of 0, and no cost for a part the route lacks', async () => {
    prices();
    const row = requestRow(0, { financials: { cost_pkr: (900 * 42 + 220 * 168) / 1e6, is_byok: 0 } });
    row.metrics = {
      ...row.metrics,
      cache_read_input_tokens: null,
      cache_creation_input_tokens: null,
      total_tokens: 1120,
    };
    render(<RequestDetail row={row} onClose={() => {}} />);
    const drawn = () =>
      [...screen.getByTestId('tokens-bar').querySelectorAll('[data-part]')].map((p) => p.getAttribute('data-part'));
    expect(drawn()).toEqual(['prompt', 'generated']);
    const cacheRead = within(await screen.findByTestId('cost-cache_read'));
    expect(cacheRead.getAllByRole('cell').map((cell) => cell.textContent)).toEqual(['–', '–', '–']);
    expect(screen.getByTestId('cost-check').textContent).toBe('The parts add up to the settled cost.');
  });

  it('draws no sliver for the zero tokens written to the cache on a cached route', () => {
    render(<RequestDetail row={requestRow(0)} onClose={() => {}} />);
    expect(
      [...screen.getByTestId('tokens-bar').querySelectorAll('[data-part]')].map((p) => p.getAttribute('data-part')),
    ).toEqual(['prompt', 'cache_read', 'generated']);
  });

  it('draws a refused request as refused before dispatch', () => {
    render(<RequestDetail row={refusedRow()} onClose={() => {}} />);
    expect(
      [...screen.getByTestId('timeline-bar').querySelectorAll('[data-part]')].map((p) => p.getAttribute('data-part')),
    ).toEqual(['refused']);
    expect(screen.getByTestId('timeline-ttft').textContent).toContain('never dispatched');
    expect(screen.getByTestId('tokens-cache_read').textContent).toContain('never dispatched');
  });

  it('flags estimated token counts, and a cost the parts do not explain', async () => {
    prices();
    const row = requestRow(0, { financials: { cost_pkr: 0.074, is_byok: 0 } });
    row.metrics = { ...row.metrics, tokens_estimated: true };
    render(<RequestDetail row={row} onClose={() => {}} />);
    expect(screen.getByTestId('tokens-estimated').textContent).toBe('estimated by the gateway');
    expect((await screen.findByTestId('cost-check')).textContent).toMatch(
      /^At today's prices the parts come to 0\.096264 PKR, not the 0\.074 PKR settled/,
    );
  });
});
