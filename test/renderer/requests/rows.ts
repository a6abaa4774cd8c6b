import type { RequestRow } from '../../../renderer/src/screens/requests/request-row.js';

/** Request-log rows as the server sends them, newest first, with every field filled unless overridden. */

export const PROJECT = { id: '11111111-1111-4111-8111-111111111111', name: 'Checkout' };
export const KEY = { id: '22222222-2222-4222-8222-222222222222', name: 'checkout-prod' };
export const OTHER_PROJECT = { id: '33333333-3333-4333-8333-333333333333', name: 'Support bot' };
export const OTHER_KEY = { id: '44444444-4444-4444-8444-444444444444', name: 'support-dev' };

const BASE_MS = Date.parse('2026-11-22T07:49:19.000Z');

export function requestRow(index: number, overrides: Partial<RequestRow> = {}): RequestRow {
  return {
    req_id: `req_${String(100_000 - index).padStart(6, '0')}`,
    timestamp: new Date(BASE_MS - index * 60_000).toISOString(),
    model: 'openai/gpt-4o-mini',
    status: 200,
    stream: true,
    api: 'chat',
    key: KEY,
    project: PROJECT,
    metrics: {
      total_ms: 812.4,
      ttft_ms: 301.2,
      tpot_ms: 8.1,
      pre_dispatch_ms: 4.3,
      prompt_tokens: 900,
      tokens_generated: 220,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 1024,
      total_tokens: 2144,
      tokens_estimated: false,
    },
    financials: { cost_pkr: 0.074, is_byok: 0 },
    status_detail: { termination_reason: 'success', upstream_error: null },
    upstream: {
      model: 'gpt-4o-mini-2024-07-18',
      provider: 'openai',
      attempts: [{ target: 'openai/gpt-4o-mini-2024-07-18', status: 200, error: null, ms: 808.1, decision: 'served' }],
    },
    user_agent: 'OpenAI/Python 1.57.0',
    metadata: { customer: 'acme-retail', feature: 'checkout-assist' },
    ...overrides,
  };
}

/** A row whose every nullable field is null: a legacy, unattributed, non-streamed, failed request. */
export function nullRow(): RequestRow {
  const row = requestRow(0, {
    req_id: 'req_nulls',
    stream: false,
    status: 502,
    api: null,
    key: null,
    project: { id: OTHER_PROJECT.id, name: null },
    upstream: null,
    metadata: {},
    status_detail: { termination_reason: 'success', upstream_error: null },
  });
  row.metrics = {
    ...row.metrics,
    ttft_ms: null,
    tpot_ms: null,
    prompt_tokens: null,
    cache_creation_input_tokens: null,
    cache_read_input_tokens: null,
    tokens_generated: 0,
    total_tokens: 0,
  };
  row.financials = { cost_pkr: 0, is_byok: 0 };
  return row;
}

/** A server over `total` generated rows: answers pages by limit (clamped to 200) and offset. */
export function pagedRows(total: number, make: (index: number) => RequestRow = requestRow) {
  return (query: { limit?: number; offset?: number }) => {
    const limit = Math.min(query.limit ?? 50, 200);
    const offset = query.offset ?? 0;
    const requests: RequestRow[] = [];
    for (let i = offset; i < Math.min(total, offset + limit); i++) requests.push(make(i));
    return { total, limit, offset, requests };
  };
}
