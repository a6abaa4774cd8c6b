import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PLATFORM_KEY, costMicro, startBench, type Bench } from './gateway-attack-harness.js';
import { applyFailover } from './gateway-harness.js';
import { register } from './harness.js';

/**
 * An upstream's error reaches the caller in OpenAI's shape, with its status and a message safe
 * to show: no page of the provider's, no host of its network, no provider key (issue 51, defect 8).
 */

vi.setConfig({ testTimeout: 60_000, hookTimeout: 120_000 });

const VAULT_KEY = 'sk-vault-of-their-own-9876543210abcdef';
const INTERNAL = 'internal host 10.0.0.12';

let bench: Bench;

beforeAll(async () => {
  bench = await startBench({ timeoutMs: 10_000 });
  // Each request one upstream attempt: this suite is about what one error becomes, not failover.
  await applyFailover(bench.server, { retries: 0, breaker_failures: 1000 });
  const html = (status: number, headers: Record<string, string> = {}) =>
    bench.script(`html ${status}`, (_request, response) => {
      response.writeHead(status, { 'content-type': 'text/html', ...headers });
      response.end(`<html><body><h1>${status}</h1><p>upstream ${INTERNAL} (nginx/1.25)</p></body></html>`);
    });
  html(500);
  html(503);
  html(429, { 'retry-after': '7' });
  // A 400 that quotes the key it was sent, whole and in part, as some providers' errors do.
  bench.script('echo key', (request, response) => {
    const sent = (request.headers.authorization ?? '').replace(/^Bearer /, '');
    response.writeHead(400, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        error: {
          message: `Invalid parameter for key ${sent} (${sent.slice(0, 5)}****${sent.slice(-4)}) at ${INTERNAL}.`,
          type: 'invalid_request_error',
          code: 'invalid_value',
          param: 'messages',
        },
      }),
    );
  });
  // Answers of 200 that quote the key: an error event mid-stream, a completion's text.
  bench.script('key in stream', (request, response) => {
    const sent = (request.headers.authorization ?? '').replace(/^Bearer /, '');
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'Hi. ' } }] })}\n\n`);
    response.end(
      `data: ${JSON.stringify({ error: { message: `key ${sent} is over quota`, type: 'server_error' } })}\n\n`,
    );
  });
  bench.script('key in answer', (request, response) => {
    const sent = (request.headers.authorization ?? '').replace(/^Bearer /, '');
    response.writeHead(200, { 'content-type': 'application/json' });
    const message = { role: 'assistant', content: `My header said ${sent}.` };
    response.end(JSON.stringify({ choices: [{ index: 0, message, finish_reason: 'stop' }] }));
  });
});
afterAll(async () => {
  await bench?.close();
});

interface OpenAiError {
  error: { message: string; type: string; code: string | null };
}

async function post(gateway: string, apiKey: string, script: string, stream = false) {
  const answer = await request(`${gateway}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: script }], stream }),
  });
  const text = await answer.body.text();
  return {
    status: answer.statusCode,
    headers: answer.headers,
    text,
    get json() {
      return JSON.parse(text) as OpenAiError;
    },
  };
}

describe.each(['in-process', 'own-process'] as const)("the gateway %s hands on an upstream's error safely", (name) => {
  const url = () => bench.gateways.find((gateway) => gateway.name === name)!.url;

  it.each([
    [500, false],
    [503, true],
  ])('answers an HTML %i in OpenAI shape, as JSON, without the page (streamed: %s)', async (status, stream) => {
    const key = await bench.newKey();
    const answer = await post(url(), key.api_key, `html ${status}`, stream);
    expect(answer.status).toBe(status);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(answer.json.error).toMatchObject({ type: 'upstream_error', code: 'upstream_error' });
    expect(answer.json.error.message.length).toBeGreaterThan(0);
    expect(answer.text).not.toContain('10.0.0.12');
    expect(answer.text).not.toContain('nginx');
    const [row] = await bench.rowsOf(key.id, 1);
    expect(row!.status).toBe(status);
    expect(row!.status_detail.upstream_error).toContain(String(status));
    expect(row!.status_detail.upstream_error).not.toContain('10.0.0.12');
    expect(costMicro(row!)).toBe(0);
  });

  it("answers an HTML 429 in OpenAI shape with the upstream's Retry-After", async () => {
    const key = await bench.newKey();
    const answer = await post(url(), key.api_key, 'html 429');
    expect(answer.status).toBe(429);
    expect(answer.headers['retry-after']).toBe('7');
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(answer.json.error.type).toBe('upstream_error');
    expect(answer.text).not.toContain('10.0.0.12');
  });

  it("keeps a JSON error's status, type and code, and takes the platform's key out of its message", async () => {
    const key = await bench.newKey();
    const answer = await post(url(), key.api_key, 'echo key');
    expect(answer.status).toBe(400);
    expect(answer.json.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_value' });
    expect(answer.json.error.message).toMatch(/^Invalid parameter for key/);
    expect(answer.text).not.toContain(PLATFORM_KEY);
    expect(answer.text).not.toContain(PLATFORM_KEY.slice(-4));
    expect(answer.text).not.toContain('10.0.0.12');
    const [row] = await bench.rowsOf(key.id, 1);
    expect(row!.status_detail.upstream_error).toMatch(/^400 invalid_request_error: Invalid parameter/);
    expect(row!.status_detail.upstream_error).not.toContain(PLATFORM_KEY);
    expect(row!.status_detail.upstream_error).not.toContain(PLATFORM_KEY.slice(-4));
    expect(bench.logs()).not.toContain(PLATFORM_KEY);
  });

  it.each([
    ['key in stream', true],
    ['key in answer', false],
  ])("takes the platform's key out of an answer of 200 that quotes it (%s)", async (script, stream) => {
    const key = await bench.newKey();
    const answer = await post(url(), key.api_key, script, stream);
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('[redacted]');
    expect(answer.text).not.toContain(PLATFORM_KEY);
  });

  it("takes an organisation's own vault key out of an error that quotes it", async () => {
    const other = await register(bench.server);
    expect((await other.client.post('/vault/keys', { provider: 'openai', api_key: VAULT_KEY })).status).toBe(200);
    const project = (await other.client.get('/projects')).body.projects[0].id as string;
    const key = (await other.client.post('/keys', { project_id: project, name: 'byok' })).body as {
      id: string;
      api_key: string;
    };
    const answer = await post(url(), key.api_key, 'echo key');
    expect(answer.status).toBe(400);
    expect(answer.text).not.toContain(VAULT_KEY);
    expect(answer.text).not.toContain(VAULT_KEY.slice(-4));
    const page = await other.client.get(`/analytics/requests?time_range=1h&key_id=${key.id}`);
    for (let attempt = 0; attempt < 100 && page.body.requests.length === 0; attempt++) {
      await new Promise((done) => setTimeout(done, 50));
      Object.assign(page, await other.client.get(`/analytics/requests?time_range=1h&key_id=${key.id}`));
    }
    expect(JSON.stringify(page.body.requests)).toContain('400 invalid_request_error');
    expect(JSON.stringify(page.body.requests)).not.toContain(VAULT_KEY);
    expect(bench.logs()).not.toContain(VAULT_KEY);
  });
});
