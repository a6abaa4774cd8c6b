import { TypeCompiler } from '@sinclair/typebox/compiler';
import { describe, expect, it } from 'vitest';
import { fitAdmission } from '../../server/gateway/admission-request.js';
import { fitRow } from '../../server/gateway/request-facts.js';
import { AdmissionRequest, GatewayRow } from '../../server/schemas/gateway-internal.js';
import type { RequestRecord } from '../../server/stores/telemetry/request-record.js';

const rowCheck = TypeCompiler.Compile(GatewayRow);
const admissionCheck = TypeCompiler.Compile(AdmissionRequest);

const row: RequestRecord & { key_id: string } = {
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
      metadata: `{"a":"${'v'.repeat(20_000)}"}`,
    });
    expect(fitted.user_agent).toBe('u'.repeat(4095));
    expect(fitted.model).toHaveLength(256);
    expect(fitted.metadata).toBe('{}');
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
