import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startFaultUpstream, type FaultUpstream } from './fault-upstream.js';
import { startGateway, type TestGateway } from './gateway-harness.js';
import { startGatewayProcess, type GatewayProcess } from './gateway-process-harness.js';
import { register, runOperator, startServer, type TestServer } from './harness.js';

/**
 * `routes apply` while requests stream, as an operator runs it: every request finishes on the
 * version it was admitted under, the next ones use the new one, in the server's process and in a
 * gateway process of its own (which learns the route with each admission).
 */

vi.setConfig({ testTimeout: 60_000, hookTimeout: 120_000 });

const TOKEN = 'gateway-token-for-routes-apply-0123456789';
const ROUTE = 'test/live';

let server: TestServer;
let inProcess: TestGateway;
let own: GatewayProcess;
let before: FaultUpstream;
let after: FaultUpstream;
let apiKey: string;

/** The route over one provider, `old` or `new`, with the catalogue's routes kept; its file path. */
function documentFile(provider: 'old' | 'new'): string {
  const file = join(server.dataDir, `routes-${provider}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      providers: {
        openai: { api: 'openai' },
        old: { api: 'openai', base_url: before.url },
        new: { api: 'openai', base_url: after.url },
      },
      routes: {
        'openai/gpt-4o-mini': {
          kind: 'chat',
          price: { input: 42, output: 168, cache_write: 42, cache_read: 21 },
          targets: [{ provider: 'openai', model: 'gpt-4o-mini-2024-07-18' }],
        },
        [ROUTE]: {
          kind: 'chat',
          price: { input: 42, output: 168, cache_write: 42, cache_read: 21 },
          targets: [{ provider, model: `${provider}-model` }],
        },
      },
    }),
  );
  return file;
}

beforeAll(async () => {
  server = await startServer({ gatewayTokens: [TOKEN], gatewayFlushMs: 50 });
  // Streams of 40 deltas 25 ms apart: a second each, long enough to apply a version meanwhile.
  [before, after] = await Promise.all([
    startFaultUpstream({ seed: 1, tpotMs: 25, answerTokens: 40 }),
    startFaultUpstream({ seed: 2, tpotMs: 1 }),
  ]);
  await runOperator(server, 'routes', 'apply', '--file', documentFile('old'));
  inProcess = await startGateway(server, { byProvider: {}, fallback: null });
  own = await startGatewayProcess(new URL(server.baseUrl).origin, { SVC_GATEWAY_TOKEN: TOKEN });
  const owner = await register(server);
  const projectId = (await owner.client.get('/projects')).body.projects[0].id as string;
  const key = await owner.client.post('/keys', { project_id: projectId, name: 'live apply' });
  await owner.client.patch(`/keys/${key.body.id}`, { rate_limit_rpm: 10_000 });
  apiKey = key.body.api_key;
});
afterAll(async () => {
  own?.child.kill('SIGTERM');
  await own?.exited;
  await inProcess?.gateway.close();
  await Promise.all([before?.close(), after?.close()]);
  await server?.close();
});

const messages = [{ role: 'user' as const, content: 'Stream something long.' }];

async function streamOnce(baseURL: string, started: () => void) {
  const { data, response } = await new OpenAI({ apiKey, baseURL, maxRetries: 0 }).chat.completions
    .create({ model: ROUTE, messages, stream: true })
    .withResponse();
  let text = '';
  let first = true;
  for await (const chunk of data) {
    if (first) started();
    first = false;
    text += chunk.choices[0]?.delta.content ?? '';
  }
  return { text, servedBy: response.headers.get('x-svc-served-by') };
}

describe('routes apply while 50 requests stream', () => {
  it('finishes each request on its own version; the next requests of both gateways use the new one', async () => {
    const gateways = [inProcess.url, own.url];
    let streaming = 0;
    let allStarted!: () => void;
    const started = new Promise<void>((resolve) => (allStarted = resolve));
    const streams = Array.from({ length: 50 }, (_, index) =>
      streamOnce(gateways[index % 2]!, () => {
        streaming += 1;
        if (streaming === 50) allStarted();
      }),
    );
    await started;
    await runOperator(server, 'routes', 'apply', '--file', documentFile('new'));
    // Still streaming when the new version was stored: the slow upstream had 40 deltas to send.
    expect(before.attempts.filter((attempt) => attempt.ended === undefined).length).toBeGreaterThan(0);
    const finished = await Promise.all(streams);
    for (const result of finished) {
      expect(result.servedBy).toBe('old/old-model');
      expect(result.text).toBe(before.contentFor(messages));
    }
    for (const url of gateways) {
      const next = await streamOnce(url, () => {});
      expect(next.servedBy).toBe('new/new-model');
      expect(next.text).toBe(after.contentFor(messages));
    }
    expect(before.attempts).toHaveLength(50);
  });
});
