import { TypeCompiler } from '@sinclair/typebox/compiler';
import { describe, expect, it } from 'vitest';
import { fitAdmission } from '../../server/gateway/admission-request.js';
import { fitAttempts, fitRow, gatewayRow } from '../../server/gateway/request-facts.js';
import { AdmissionRequest, GatewayRow } from '../../server/schemas/gateway-internal.js';
import type { Attempt, RequestApi } from '../../server/schemas/request-log.js';
import type { RequestRecord } from '../../server/stores/telemetry/request-record.js';

const rowCheck = TypeCompiler.Compile(GatewayRow);
const admissionCheck = TypeCompiler.Compile(AdmissionRequest);

const row: RequestRecord & { key_id: string; api: RequestApi } = {
  req_id: `req_${'0'.repeat(32)}`,
  ts: 1_780_000_000_000,
  org_id: 'org',
  project_id: 'project',
  key_id: 'key',
  model: 'openai/gpt-4o-mini',
  status: 200,
  stream: 0,
  total_ms: 12.5,
  ttft_ms: null,
  tpot_ms: null,
  pre_dispatch_ms: 1,
  prompt_tokens: 10,
  tokens_generated: 20,
  cache_creation_input_tokens: null,
  cache_read_input_tokens: null,
  total_tokens: 30,
  tokens_estimated: 0,
  cost_micro: 3780,
  is_byok: 0,
  termination_reason: 'success',
  upstream_error: null,
  upstream_model: null,
  served_by: null,
  attempts: null,
  api: 'chat',
  user_agent: 'curl/8',
  metadata: '{}',
};

describe('fitRow', () => {
  it('leaves a row that fits as it is, the same object', () => {
    expect(fitRow(row)).toBe(row);
  });

  it('cuts what a caller or an upstream made too long, never half a surrogate pair, and the internal API takes it', () => {
    const fitted = fitRow({
      ...row,
      user_agent: `${'u'.repeat(4095)}😀`,
      model: 'm'.repeat(100_000),
      upstream_error: 'e'.repeat(10_000),
      upstream_model: 'x'.repeat(300),
      served_by: `${'p'.repeat(64)}/${'m'.repeat(300)}`,
      metadata: `{"a":"${'v'.repeat(20_000)}"}`,
    });
    expect(fitted.user_agent).toBe('u'.repeat(4095));
    expect(fitted.model).toHaveLength(256);
    expect(fitted.metadata).toBe('{}');
    expect(fitted.served_by).toHaveLength(320);
    expect(rowCheck.Check(fitted)).toBe(true);
  });

  it('makes odd figures whole and finite', () => {
    const fitted = fitRow({
      ...row,
      total_ms: Number.NaN,
      ttft_ms: Infinity,
      prompt_tokens: 1e308,
      tokens_generated: -3,
      cost_micro: 12.6,
    });
    expect(fitted).toMatchObject({ total_ms: 0, ttft_ms: null, tokens_generated: 0, cost_micro: 13 });
    expect(fitted.prompt_tokens).toBe(Number.MAX_SAFE_INTEGER);
    expect(rowCheck.Check(fitted)).toBe(true);
  });
});

describe('a row’s attempts', () => {
  const attempt = (n: number, fields: Partial<Attempt> = {}): Attempt => ({
    target: `openai/model-${n}`,
    status: 503,
    error: 'server_error',
    ms: n,
    decision: 'next',
    ...fields,
  });
  /** The row as a gateway in another process sends it: its attempts as items. */
  const onTheWire = (fitted: RequestRecord) => ({
    ...fitted,
    attempts: fitted.attempts === null ? null : (JSON.parse(fitted.attempts) as unknown),
  });

  it('are left as they are when they fit, the same array', () => {
    const attempts = [attempt(1), attempt(2, { status: 200, error: null, decision: 'served' })];
    expect(fitAttempts(attempts)).toBe(attempts);
  });

  it('keep the first 19 and the last of more than 20, each cut to its bounds, and the internal API takes the row', () => {
    const made = Array.from({ length: 30 }, (_, n) => attempt(n));
    made[29] = attempt(29, {
      target: `${'p'.repeat(64)}/${'m'.repeat(300)}`,
      error: 'e'.repeat(40),
      decision: 'gave_up',
    });
    made[0] = attempt(0, { status: 42, ms: Number.NaN });
    const { attempts: _text, served_by: _served, ...measured } = row;
    const written = gatewayRow(row, { ...measured, served_by: null, attempts: made });
    const kept = JSON.parse(written.attempts!) as Attempt[];
    expect(kept).toHaveLength(20);
    expect(kept.slice(1, 19).map((a) => a.ms)).toEqual(Array.from({ length: 18 }, (_, n) => n + 1));
    expect(kept[0]).toMatchObject({ status: null, ms: 0 });
    expect(kept[19]!.target).toHaveLength(320);
    expect(kept[19]).toMatchObject({ error: 'e'.repeat(32), decision: 'gave_up' });
    expect(rowCheck.Check(onTheWire(fitRow(written)))).toBe(true);
  });

  it('are refused on the wire past 20 or with a decision the gateway does not make', () => {
    const twentyOne = Array.from({ length: 21 }, (_, n) => attempt(n));
    expect(rowCheck.Check({ ...row, attempts: twentyOne.slice(0, 20) })).toBe(true);
    expect(rowCheck.Check({ ...row, attempts: twentyOne })).toBe(false);
    expect(rowCheck.Check({ ...row, attempts: [{ ...attempt(1), decision: 'hoped' }] })).toBe(false);
    // A gateway older than the attempts sends neither field: its rows are taken.
    const { served_by: _served, attempts: _attempts, ...older } = row;
    expect(rowCheck.Check(older)).toBe(true);
  });
});

describe('a row’s api', () => {
  it('is the one its start names, and the internal API takes each of the gateway’s', () => {
    const { attempts: _text, served_by: _served, ...measured } = row;
    for (const api of ['chat', 'messages', 'count_tokens', 'responses', 'embeddings'] as const) {
      const written = gatewayRow({ ...row, api }, { ...measured, served_by: null, attempts: null });
      expect(written.api).toBe(api);
      expect(fitRow(written)).toBe(written);
      expect(rowCheck.Check(written)).toBe(true);
    }
  });

  it('is unknown (null) once fitted when it names no API of the log’s, rather than a row refused', () => {
    const odd = { ...row, api: 'graphql' } as unknown as RequestRecord;
    expect(rowCheck.Check(odd)).toBe(false);
    const fitted = fitRow(odd);
    expect(fitted.api).toBeNull();
    expect(rowCheck.Check(fitted)).toBe(true);
  });

  it('may be null or absent on the wire: a gateway older than it sends none, and its rows are taken', () => {
    expect(rowCheck.Check({ ...row, api: null })).toBe(true);
    const { api: _api, ...older } = row;
    expect(rowCheck.Check(older)).toBe(true);
  });
});

describe('fitAdmission', () => {
  it('bounds figures a body made infinite or absurd, so that the request can be decided', () => {
    const asked = {
      reqId: `req_${'1'.repeat(32)}`,
      secret: 'sk_svc_x',
      model: 'openai/gpt-4o-mini',
      boundCharacters: 10,
      maxGenerated: 16_000 * 1e308,
      timeoutMs: 1000,
    };
    expect(admissionCheck.Check(JSON.parse(JSON.stringify(asked)))).toBe(false);
    const fitted = fitAdmission(asked);
    expect(fitted.maxGenerated).toBe(1_000_000_000);
    expect(admissionCheck.Check(JSON.parse(JSON.stringify(fitted)))).toBe(true);
    const plain = { ...asked, maxGenerated: 100 };
    expect(fitAdmission(plain)).toBe(plain);
  });
});
