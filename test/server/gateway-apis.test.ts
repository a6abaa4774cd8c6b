import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RoutesDocument } from '../../server/domain/routes-document.js';
import { startSimulatedUpstream, type SimulatedUpstream } from '../../server/gateway/simulated-upstream.js';
import type { Attempt } from '../../server/schemas/request-log.js';
import { startGatewayProcess, type GatewayProcess } from './gateway-process-harness.js';
import { register, startServer, type TestClient, type TestServer } from './harness.js';

/**
 * The APIs agents and SDKs call, through a gateway started as `npm run gateway` is, with the
 * official SDKs as clients: Anthropic's Messages API passed through and translated, OpenAI's
 * Responses API and embeddings; each call's row; each refusal in its API's shape.
 */

const TOKEN = 'gateway-apis-token-0123456789abcdefghijklmnop';
const FLUSH_MS = 50;
const PLATFORM_KEY = 'sk-platform-upstream';

let server: TestServer;
let upstream: SimulatedUpstream;
/** Forwards to the simulated upstream with `x-simulate` set to the first segment of its path. */
let misbehaving: Server;
let gateway: GatewayProcess;
let owner: { client: TestClient };
let projectId: string;

/** The routes document with routes of this suite's own beside version 1's. */
function withTestRoutes(document: RoutesDocument, misbehavingUrl: string): RoutesDocument {
  const provider = (api: ('openai' | 'anthropic')[], base: string) => ({
    api,
    base_url: base,
    key_env: 'SVC_TEST_UPSTREAM_KEY',
    byok: null,
  });
  const route = (
    targets: { provider: string; model: string }[],
    strategy: 'fallback' | 'loadbalance' = 'fallback',
  ) => ({
    kind: 'chat' as const,
    price: { input: 100, output: 400, cache_write: 125, cache_read: 10 },
    prompt_cache: true,
    strategy,
    active: true,
    byok: false,
    targets: targets.map((target) => ({ ...target, weight: 1 })),
    failover: {},
  });
  return {
    ...document,
    providers: {
      ...document.providers,
      claudeonly: provider(['anthropic'], upstream.url),
      second: provider(['openai'], upstream.url),
      cutclaude: provider(['anthropic'], `${misbehavingUrl}/abort-stream/v1`),
      cutopenai: provider(['openai'], `${misbehavingUrl}/abort-stream/v1`),
    },
    routes: {
      ...document.routes,
      'test/claude-only': route([{ provider: 'claudeonly', model: 'claude-only-1' }]),
      'test/pair': route(
        [
          { provider: 'openai', model: 'gpt-4o-mini-2024-07-18' },
          { provider: 'second', model: 'gpt-4o-mini-2024-07-18' },
        ],
        'loadbalance',
      ),
      'test/cut-claude': route([{ provider: 'cutclaude', model: 'claude-cut-1' }]),
      'test/cut-openai': route([{ provider: 'cutopenai', model: 'gpt-cut-1' }]),
    },
  };
}

beforeAll(async () => {
  server = await startServer({ gatewayTokens: [TOKEN], gatewayFlushMs: FLUSH_MS });
  upstream = await startSimulatedUpstream({ realistic: true, ttftMs: 20, tpotMs: 1, apiKey: PLATFORM_KEY });
  misbehaving = createServer((incoming, answer) => {
    const [, mode, ...rest] = (incoming.url ?? '/').split('/');
    const target = new URL(`${upstream.url.replace(/\/v1$/, '')}/${rest.join('/')}`);
    const forwarded = httpRequest(
      target,
      { method: incoming.method, headers: { ...incoming.headers, host: target.host, 'x-simulate': mode } },
      (reply) => {
        answer.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(answer);
        reply.on('error', () => answer.destroy());
      },
    );
    forwarded.on('error', () => answer.destroy());
    incoming.pipe(forwarded);
  });
  await new Promise<void>((resolve) => misbehaving.listen(0, '127.0.0.1', resolve));
  const misbehavingUrl = `http://127.0.0.1:${(misbehaving.address() as AddressInfo).port}`;
  const stored = await server.app.control.routes.current();
  const applied = await server.app.control.write((tx) =>
    tx.routes.apply(withTestRoutes(stored.document, misbehavingUrl), 'test', Date.now()),
  );
  if (applied.kind !== 'applied') throw new Error(`routes not applied: ${JSON.stringify(applied)}`);
  gateway = await startGatewayProcess(new URL(server.baseUrl).origin, {
    SVC_GATEWAY_TOKEN: TOKEN,
    SVC_UPSTREAM_URL: upstream.url,
    SVC_UPSTREAM_KEY: PLATFORM_KEY,
    SVC_TEST_UPSTREAM_KEY: PLATFORM_KEY,
  });
  owner = await register(server);
  projectId = (await owner.client.get('/projects')).body.projects[0].id;
});

afterAll(async () => {
  gateway?.child.kill('SIGTERM');
  await gateway?.exited;
  misbehaving?.closeAllConnections();
  await new Promise((resolve) => misbehaving?.close(resolve));
  await upstream?.close();
  await server?.close();
});

async function newKey(): Promise<{ id: string; api_key: string }> {
  const answer = await owner.client.post('/keys', { project_id: projectId, name: `k${Math.random()}` });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body;
}

/** Anthropic's SDK at the gateway: its base address is the gateway's without `/v1`. */
const anthropic = (apiKey: string) =>
  new Anthropic({ apiKey, baseURL: gateway.url.replace(/\/v1$/, ''), maxRetries: 0 });
const openai = (apiKey: string) => new OpenAI({ apiKey, baseURL: gateway.url, maxRetries: 0 });

interface Row {
  req_id: string;
  api: string | null;
  model: string;
  status: number;
  stream: boolean;
  metrics: Record<string, number | boolean | null>;
  financials: { cost_pkr: number; is_byok: number };
  status_detail: { termination_reason: string; upstream_error: string | null };
  upstream: { model: string; provider: string | null; attempts: Attempt[] | null } | null;
}

/** The key's rows, newest first, once `count` are in the log. */
async function rowsOf(keyId: string, count: number): Promise<Row[]> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const page = await owner.client.get(`/analytics/requests?time_range=1h&limit=200&key_id=${keyId}`);
    expect(page.status).toBe(200);
    const rows = page.body.requests as Row[];
    if (rows.length >= count) return rows;
    await new Promise((resolve) => setTimeout(resolve, FLUSH_MS));
  }
  throw new Error(`fewer than ${count} rows for key ${keyId}`);
}

const micro = (pkr: number) => Math.round(pkr * 1e6);

const PROMPT = 'Explain what a gateway does with a stream, briefly.';

describe("Anthropic's Messages API through the gateway, with @anthropic-ai/sdk", () => {
  it('passes a message through to a target that speaks it: the platform key, the betas, usage and cost in the row', async () => {
    const key = await newKey();
    const client = anthropic(key.api_key);
    const { data: message, response } = await client.messages
      .create(
        { model: 'anthropic/claude-sonnet-4', max_tokens: 300, messages: [{ role: 'user', content: PROMPT }] },
        { headers: { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'prompt-caching-2024-07-31' } },
      )
      .withResponse();
    expect(message.type).toBe('message');
    expect(message.content[0]).toMatchObject({ type: 'text' });
    expect(message.stop_reason).toBe('end_turn');
    expect(response.headers.get('x-svc-served-by')).toBe('anthropic/claude-sonnet-4-20250514');
    // The upstream heard the platform's key, Anthropic's way, and the caller's version and betas.
    expect(upstream.lastApiKey()).toBe(PLATFORM_KEY);
    expect(upstream.lastHeaders()).toMatchObject({
      'anthropic-version': '2023-06-01',
      'anthropic-beta': 'prompt-caching-2024-07-31',
    });

    const [row] = await rowsOf(key.id, 1);
    const usage = message.usage;
    expect(row).toMatchObject({
      api: 'messages',
      model: 'anthropic/claude-sonnet-4',
      status: 200,
      stream: false,
      status_detail: { termination_reason: 'success', upstream_error: null },
      upstream: { model: 'claude-sonnet-4-20250514', provider: 'anthropic' },
    });
    expect(row!.metrics).toMatchObject({
      prompt_tokens: usage.input_tokens,
      tokens_generated: usage.output_tokens,
      cache_read_input_tokens: usage.cache_read_input_tokens ?? 0,
      cache_creation_input_tokens: usage.cache_creation_input_tokens ?? 0,
      tokens_estimated: false,
    });
    // anthropic/claude-sonnet-4: 840 micro-PKR an input token, 4200 an output one, 84 a cached one.
    const cost = usage.input_tokens * 840 + usage.output_tokens * 4200 + (usage.cache_read_input_tokens ?? 0) * 84;
    expect(micro(row!.financials.cost_pkr)).toBe(cost);
  });

  it('streams every event type through, and the stream assembles to the answer', async () => {
    const key = await newKey();
    const client = anthropic(key.api_key);
    const request = {
      model: 'anthropic/claude-sonnet-4',
      max_tokens: 300,
      messages: [{ role: 'user' as const, content: PROMPT }],
    };
    const whole = await client.messages.create(request);
    const stream = await client.messages.create({ ...request, stream: true });
    const types = new Set<string>();
    let text = '';
    for await (const event of stream) {
      types.add(event.type);
      if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
    }
    expect([...types].sort()).toEqual(
      [
        'content_block_delta',
        'content_block_start',
        'content_block_stop',
        'message_delta',
        'message_start',
        'message_stop',
      ].sort(),
    );
    expect(text).toBe((whole.content[0] as { text: string }).text);
    const [streamed] = await rowsOf(key.id, 2);
    expect(streamed).toMatchObject({ stream: true, status: 200, status_detail: { termination_reason: 'success' } });
    expect(streamed!.metrics.ttft_ms).toBeGreaterThan(0);
    expect(streamed!.metrics.tokens_generated).toBe(whole.usage.output_tokens);
  });

  it('keeps thinking blocks and signatures in a stream passed through', async () => {
    const key = await newKey();
    const message = await anthropic(key.api_key)
      .messages.stream({
        model: 'anthropic/claude-sonnet-4',
        max_tokens: 2048,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: [{ role: 'user', content: PROMPT }],
      })
      .finalMessage();
    expect(message.content.map((block) => block.type)).toEqual(['thinking', 'text']);
    expect((message.content[0] as { signature: string }).signature.length).toBeGreaterThan(0);
  });

  it('makes a tool use round trip', async () => {
    const key = await newKey();
    const client = anthropic(key.api_key);
    const tools = [
      {
        name: 'get_weather',
        description: 'The weather in a city',
        input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
      },
    ];
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'What is the weather in Lahore?' }];
    const first = await client.messages.create({
      model: 'anthropic/claude-sonnet-4',
      max_tokens: 400,
      tools,
      messages,
    });
    expect(first.stop_reason).toBe('tool_use');
    const call = first.content.find((block) => block.type === 'tool_use');
    expect(call).toMatchObject({ type: 'tool_use', name: 'get_weather' });
    messages.push({ role: 'assistant', content: first.content });
    messages.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: (call as { id: string }).id, content: 'Sunny, 31 °C' }],
    });
    const second = await client.messages
      .stream({ model: 'anthropic/claude-sonnet-4', max_tokens: 400, tools, messages })
      .finalMessage();
    expect(second.stop_reason).toBe('end_turn');
    expect(second.content[0]).toMatchObject({ type: 'text' });
  });

  it('counts tokens for nothing: the same count as a message, a row that costs nothing', async () => {
    const key = await newKey();
    const client = anthropic(key.api_key);
    const messages = [{ role: 'user' as const, content: PROMPT }];
    const counted = await client.messages.countTokens({ model: 'anthropic/claude-sonnet-4', messages });
    const message = await client.messages.create({ model: 'anthropic/claude-sonnet-4', max_tokens: 50, messages });
    expect(counted.input_tokens).toBe(message.usage.input_tokens + (message.usage.cache_read_input_tokens ?? 0));
    const rows = await rowsOf(key.id, 2);
    const count = rows.find((row) => row.metrics.tokens_generated === 0 && row.financials.cost_pkr === 0);
    expect(count).toMatchObject({
      api: 'count_tokens',
      status: 200,
      metrics: { prompt_tokens: 0, tokens_estimated: false },
    });
  });

  it('translates both ways for a route whose targets speak only chat completions', async () => {
    const key = await newKey();
    const client = anthropic(key.api_key);
    const request = {
      model: 'openai/gpt-4o-mini',
      max_tokens: 300,
      system: 'You are terse.',
      messages: [{ role: 'user' as const, content: PROMPT }],
    };
    const { data: message, response } = await client.messages.create(request).withResponse();
    expect(response.headers.get('x-svc-served-by')).toBe('openai/gpt-4o-mini-2024-07-18');
    expect(message).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'openai/gpt-4o-mini',
      stop_reason: 'end_turn',
    });
    // The same conversation through chat completions: the same text, translated.
    const chat = await openai(key.api_key).chat.completions.create({
      model: 'openai/gpt-4o-mini',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: PROMPT },
      ],
    });
    expect((message.content[0] as { text: string }).text).toBe(chat.choices[0]!.message.content);
    const streamed = await client.messages.stream(request).finalMessage();
    expect(streamed.content).toEqual(message.content);
    expect(streamed.usage.output_tokens).toBe(message.usage.output_tokens);

    const rows = await rowsOf(key.id, 3);
    for (const row of rows) {
      expect(row).toMatchObject({ status: 200, upstream: { model: 'gpt-4o-mini-2024-07-18', provider: 'openai' } });
      expect(['messages', 'chat']).toContain(row.api);
      expect(row.metrics.tokens_estimated).toBe(false);
    }
  });

  it('refuses what cannot be translated without loss, naming it, in Anthropic’s shape', async () => {
    const key = await newKey();
    const refusal = await anthropic(key.api_key)
      .messages.create({
        model: 'openai/gpt-4o-mini',
        max_tokens: 2048,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: [{ role: 'user', content: PROMPT }],
      })
      .catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(Anthropic.BadRequestError);
    expect((refusal as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringMatching(/thinking/) },
    });
    const [row] = await rowsOf(key.id, 1);
    expect(row).toMatchObject({ status: 400, financials: { cost_pkr: 0 } });
  });

  it('ends a stream cut after its first content with an error event the SDK raises, recorded as such', async () => {
    const key = await newKey();
    const stream = await anthropic(key.api_key).messages.create({
      model: 'test/cut-claude',
      max_tokens: 300,
      stream: true,
      messages: [{ role: 'user', content: PROMPT }],
    });
    let text = '';
    const failure = await (async () => {
      for await (const event of stream) {
        if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
      }
    })().catch((error: unknown) => error);
    expect(text.length).toBeGreaterThan(0);
    expect(failure).toBeInstanceOf(Anthropic.APIError);
    const [row] = await rowsOf(key.id, 1);
    expect(row).toMatchObject({ status: 200, status_detail: { termination_reason: 'upstream_stream_aborted' } });
  });

  it('refuses bad input in Anthropic’s shape, each a row: no key, a bad version, not JSON, another API’s body', async () => {
    const key = await newKey();
    const unknown = await anthropic('sk-not-a-key')
      .messages.create({
        model: 'anthropic/claude-sonnet-4',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'hi' }],
      })
      .catch((error: unknown) => error);
    expect(unknown).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((unknown as InstanceType<typeof Anthropic.AuthenticationError>).error).toMatchObject({
      type: 'error',
      error: { type: 'authentication_error' },
    });

    const post = (headers: Record<string, string>, body: string) =>
      fetch(`${gateway.url}/messages`, {
        method: 'POST',
        headers: { 'x-api-key': key.api_key, 'content-type': 'application/json', ...headers },
        body,
      }).then(async (answer) => ({ status: answer.status, body: await answer.json() }));
    const message = JSON.stringify({
      model: 'anthropic/claude-sonnet-4',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'hi' }],
    });
    const shape = (pattern: RegExp) => ({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringMatching(pattern) },
    });
    expect(await post({}, message)).toEqual({ status: 400, body: shape(/anthropic-version: header is required/) });
    expect(await post({ 'anthropic-version': '2019-01-01' }, message)).toEqual({
      status: 400,
      body: shape(/anthropic-version: unknown version/),
    });
    expect(await post({ 'anthropic-version': '2023-06-01' }, '{"model": ')).toEqual({
      status: 400,
      body: shape(/JSON/),
    });
    // A chat completions body: no max_tokens.
    const chatBody = JSON.stringify({
      model: 'anthropic/claude-sonnet-4',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(await post({ 'anthropic-version': '2023-06-01' }, chatBody)).toEqual({
      status: 400,
      body: shape(/max_tokens/),
    });
    // An embeddings model asked for a message.
    const embed = JSON.stringify({ model: 'svc/embed', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    expect(await post({ 'anthropic-version': '2023-06-01' }, embed)).toEqual({
      status: 400,
      body: shape(/embeddings model/),
    });
    // Past the gateway's 8 MiB: Anthropic's 413, answered on the headers. The gateway closes the
    // connection then, so the client may still be writing: the answer is read whatever the write.
    const huge = await new Promise<{ status: number; body: unknown }>((resolve, reject) => {
      const sent = httpRequest(
        `${gateway.url}/messages`,
        {
          method: 'POST',
          headers: {
            'x-api-key': key.api_key,
            'anthropic-version': '2023-06-01',
            'content-type': 'application/json',
            'content-length': String(9 * 1024 * 1024),
          },
        },
        (answer) => {
          let text = '';
          answer.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
          answer.on('end', () => resolve({ status: answer.statusCode ?? 0, body: JSON.parse(text) }));
        },
      );
      sent.on('error', (error: NodeJS.ErrnoException) => {
        if (error.code !== 'EPIPE' && error.code !== 'ECONNRESET') reject(error);
      });
      sent.write('{"model": "anthropic/claude-sonnet-4", "messages": [');
    });
    expect(huge).toEqual({
      status: 413,
      body: { type: 'error', error: { type: 'request_too_large', message: expect.any(String) } },
    });
    // Each call of the known key is a row; the unknown key's has nobody to be filed under.
    const rows = await rowsOf(key.id, 6);
    expect(rows.map((row) => row.status).sort()).toEqual([400, 400, 400, 400, 400, 413]);
    expect(new Set(rows.map((row) => row.api))).toEqual(new Set(['messages']));
  });
});

describe("OpenAI's Responses API and embeddings through the gateway, with the openai package", () => {
  it('answers a response, streamed and not, its usage in the row', async () => {
    const key = await newKey();
    const client = openai(key.api_key);
    const response = await client.responses.create({
      model: 'openai/gpt-4o-mini',
      input: PROMPT,
      instructions: 'Be brief.',
    });
    expect(response.status).toBe('completed');
    expect(response.output_text.length).toBeGreaterThan(0);
    const stream = await client.responses.create({
      model: 'openai/gpt-4o-mini',
      input: PROMPT,
      instructions: 'Be brief.',
      stream: true,
    });
    let text = '';
    let completed: OpenAI.Responses.Response | null = null;
    for await (const event of stream) {
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') completed = event.response;
    }
    expect(text).toBe(response.output_text);
    expect(completed?.usage?.output_tokens).toBe(response.usage?.output_tokens);

    const rows = await rowsOf(key.id, 2);
    const usage = response.usage!;
    const cached = usage.input_tokens_details.cached_tokens;
    for (const row of rows) {
      expect(row).toMatchObject({ api: 'responses', status: 200, upstream: { model: 'gpt-4o-mini-2024-07-18' } });
      expect(row.metrics).toMatchObject({
        prompt_tokens: usage.input_tokens - cached,
        tokens_generated: usage.output_tokens,
        tokens_estimated: false,
      });
    }
    expect(rows.find((row) => row.stream)!.metrics.ttft_ms).toBeGreaterThan(0);
  });

  it('ends a response stream cut after its first content with an error event the SDK raises, recorded as such', async () => {
    const key = await newKey();
    const stream = await openai(key.api_key).responses.create({
      model: 'test/cut-openai',
      input: PROMPT,
      stream: true,
    });
    let text = '';
    const failure = await (async () => {
      for await (const event of stream) if (event.type === 'response.output_text.delta') text += event.delta;
    })().catch((error: unknown) => error);
    expect(text.length).toBeGreaterThan(0);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    const [row] = await rowsOf(key.id, 1);
    expect(row).toMatchObject({
      api: 'responses',
      status: 200,
      status_detail: { termination_reason: 'upstream_stream_aborted' },
    });
  });

  it('continues a response at the target that produced it, and refuses an id it did not answer on a route of several', async () => {
    const key = await newKey();
    const client = openai(key.api_key);
    const { data: first, response } = await client.responses
      .create({ model: 'test/pair', input: PROMPT })
      .withResponse();
    const origin = response.headers.get('x-svc-served-by');
    expect(origin).toMatch(/^(openai|second)\/gpt-4o-mini-2024-07-18$/);
    for (let turn = 0; turn < 4; turn++) {
      const { response: next } = await client.responses
        .create({ model: 'test/pair', input: 'And then?', previous_response_id: first.id })
        .withResponse();
      expect(next.headers.get('x-svc-served-by')).toBe(origin);
    }
    const unknown = await client.responses
      .create({ model: 'test/pair', input: 'And then?', previous_response_id: 'resp_never_seen' })
      .catch((error: unknown) => error);
    expect(unknown).toBeInstanceOf(OpenAI.BadRequestError);
    expect((unknown as Error).message).toMatch(/previous_response_id resp_never_seen was not answered by this gateway/);
    // A route of one target: passed through, and the provider says what it knows.
    const single = await client.responses
      .create({ model: 'openai/gpt-4o-mini', input: 'Hi', previous_response_id: 'resp_never_seen' })
      .catch((error: unknown) => error);
    expect(single).toBeInstanceOf(OpenAI.BadRequestError);
    expect((single as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('previous_response_not_found');
  });

  it('answers a clear 404 for stored responses, and refuses a route none of whose targets speaks the API', async () => {
    const key = await newKey();
    const client = openai(key.api_key);
    const read = await client.responses.retrieve('resp_123').catch((error: unknown) => error);
    expect(read).toBeInstanceOf(OpenAI.NotFoundError);
    expect((read as Error).message).toMatch(/does not read or delete stored responses/);
    const claude = await client.responses
      .create({ model: 'test/claude-only', input: 'Hi' })
      .catch((error: unknown) => error);
    expect(claude).toBeInstanceOf(OpenAI.BadRequestError);
    expect((claude as Error).message).toMatch(/none of its targets speaks OpenAI's API/);
    const [row] = await rowsOf(key.id, 1);
    expect(row).toMatchObject({ model: 'test/claude-only', status: 400 });
  });

  it('embeds strings as floats and base64, billed by their input tokens; refuses a chat model and another API’s body', async () => {
    const key = await newKey();
    const client = openai(key.api_key);
    const floats = await client.embeddings.create({
      model: 'svc/embed',
      input: ['first text', 'second text'],
      encoding_format: 'float',
    });
    expect(floats.data).toHaveLength(2);
    expect(floats.data[0]!.embedding.every((value) => typeof value === 'number')).toBe(true);
    // The SDK asks for base64 by default and decodes it: the same vectors.
    const decoded = await client.embeddings.create({ model: 'svc/embed', input: ['first text', 'second text'] });
    expect(decoded.data[0]!.embedding).toEqual(floats.data[0]!.embedding);
    const tokens = await client.embeddings.create({
      model: 'svc/embed',
      input: [
        [1, 2, 3],
        [4, 5],
      ],
    });
    expect(tokens.data).toHaveLength(2);

    const rows = await rowsOf(key.id, 3);
    const floatRow = rows.at(-1)!;
    expect(floatRow).toMatchObject({ api: 'embeddings', model: 'svc/embed', status: 200, stream: false });
    expect(floatRow.metrics).toMatchObject({
      prompt_tokens: floats.usage.prompt_tokens,
      tokens_generated: 0,
      tokens_estimated: false,
    });
    // svc/embed: 6 micro-PKR an input token.
    expect(micro(floatRow.financials.cost_pkr)).toBe(floats.usage.prompt_tokens * 6);

    const chatModel = await client.embeddings
      .create({ model: 'openai/gpt-4o-mini', input: 'hi' })
      .catch((error: unknown) => error);
    expect(chatModel).toBeInstanceOf(OpenAI.BadRequestError);
    expect((chatModel as Error).message).toMatch(/not an embeddings model/);
    const empty = await client.embeddings.create({ model: 'svc/embed', input: [] }).catch((error: unknown) => error);
    expect(empty).toBeInstanceOf(OpenAI.BadRequestError);
    const embedViaChat = await client.chat.completions
      .create({ model: 'svc/embed', messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: unknown) => error);
    expect(embedViaChat).toBeInstanceOf(OpenAI.BadRequestError);
    expect((embedViaChat as Error).message).toMatch(/is an embeddings model/);
  });
});
