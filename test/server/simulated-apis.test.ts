import OpenAI, {
  APIConnectionError,
  APIError,
  AuthenticationError,
  BadRequestError,
  InternalServerError,
  NotFoundError,
  RateLimitError,
} from 'openai';
import type { Response as OpenAIResponse, ResponseStreamEvent } from 'openai/resources/responses/responses';
import { afterEach, describe, expect, it } from 'vitest';
import {
  startSimulatedUpstream,
  type SimulatedUpstream,
  type SimulatedUpstreamOptions,
} from '../../server/gateway/simulated-upstream.js';

/**
 * The simulated provider's other APIs: OpenAI's Responses and Embeddings read by the official
 * `openai` SDK, Anthropic's Messages read over plain fetch (its SDK is not installed here) with
 * the SSE parsed by hand, each against the shapes its provider documents.
 */

const KEY = 'sk-sim-test';
const SYSTEM = 'You are terse.';
const USER = 'Hello there, simulated upstream!';
// ceil(14 / 4) + 4 + ceil(32 / 4) + 4, as chat completions count the same conversation.
const PROMPT_TOKENS = 20;
const LONG = 'lorem ipsum '.repeat(700);
const WEATHER_SCHEMA = {
  type: 'object',
  properties: {
    city: { type: 'string' },
    days: { type: 'integer' },
    unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
    hourly: { type: 'boolean' },
  },
  required: ['city'],
};

const started: SimulatedUpstream[] = [];
afterEach(async () => {
  for (const upstream of started.splice(0)) await upstream.close();
});

async function upstream(options: SimulatedUpstreamOptions = {}): Promise<SimulatedUpstream> {
  const made = await startSimulatedUpstream({ apiKey: KEY, realistic: false, ...options });
  started.push(made);
  return made;
}

function openai(target: SimulatedUpstream, apiKey = KEY): OpenAI {
  return new OpenAI({ apiKey, baseURL: target.url, maxRetries: 0 });
}

function words(text: string): number {
  return text.split(' ').length;
}

function promptTokens(...texts: string[]): number {
  return texts.reduce((sum, text) => sum + Math.ceil(text.length / 4) + 4, 0);
}

// ---------------------------------------------------------------- Anthropic

const ANTHROPIC_HEADERS = { 'x-api-key': KEY, 'anthropic-version': '2023-06-01' };

function anthropic(
  target: SimulatedUpstream,
  path: string,
  body: unknown,
  headers: Record<string, string | undefined> = {},
): Promise<Response> {
  const merged: Record<string, string> = {};
  for (const [name, value] of Object.entries({ ...ANTHROPIC_HEADERS, ...headers })) {
    if (value !== undefined) merged[name] = value;
  }
  return fetch(`${target.url.replace(/\/v1$/, '')}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...merged },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function message(
  target: SimulatedUpstream,
  body: Record<string, unknown>,
  headers: Record<string, string | undefined> = {},
): Promise<any> {
  const answer = await anthropic(target, '/v1/messages', body, headers);
  expect(answer.status).toBe(200);
  return answer.json();
}

interface Sse {
  event: string;
  data: any;
}

function parseSse(text: string): Sse[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((line) => line.startsWith('event: '))!.slice('event: '.length);
      const data = lines.find((line) => line.startsWith('data: '))!.slice('data: '.length);
      return { event, data: JSON.parse(data) };
    });
}

async function streamed(
  target: SimulatedUpstream,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<Sse[]> {
  const answer = await anthropic(target, '/v1/messages', { ...body, stream: true }, headers);
  expect(answer.status).toBe(200);
  expect(answer.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
  const events = parseSse(await answer.text());
  // Every event names its data's type, as Anthropic's do.
  for (const { event, data } of events) expect(data.type).toBe(event);
  return events;
}

/** A message rebuilt from its stream, as Anthropic's SDK accumulates one. */
function assemble(events: Sse[]): any {
  const start = events.find((event) => event.event === 'message_start')!.data.message;
  const built = structuredClone(start);
  const json: string[] = [];
  for (const { data } of events) {
    if (data.type === 'content_block_start') {
      built.content[data.index] = structuredClone(data.content_block);
      json[data.index] = '';
    } else if (data.type === 'content_block_delta') {
      const block = built.content[data.index];
      if (data.delta.type === 'text_delta') block.text += data.delta.text;
      else if (data.delta.type === 'thinking_delta') block.thinking += data.delta.thinking;
      else if (data.delta.type === 'signature_delta') block.signature = data.delta.signature;
      else if (data.delta.type === 'input_json_delta') json[data.index] += data.delta.partial_json;
    } else if (data.type === 'content_block_stop') {
      const block = built.content[data.index];
      if (block.type === 'tool_use') block.input = JSON.parse(json[data.index]!);
    } else if (data.type === 'message_delta') {
      built.stop_reason = data.delta.stop_reason;
      built.stop_sequence = data.delta.stop_sequence;
      built.usage.output_tokens = data.usage.output_tokens;
    }
  }
  return built;
}

/** Reads a body until the server ends or drops it: the text received and whether it was dropped. */
async function readUntilEnd(answer: Response): Promise<{ text: string; dropped: boolean }> {
  const reader = answer.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text, dropped: false };
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    return { text, dropped: true };
  }
}

const CONVERSATION = { system: SYSTEM, messages: [{ role: 'user', content: USER }] };

describe('simulated Anthropic Messages API', () => {
  it('answers a message in Anthropic’s shape, with the text chat completions give the same conversation', async () => {
    const target = await upstream();
    const answer = await message(target, { model: 'claude-sonnet-4-5', max_tokens: 1024, ...CONVERSATION });
    expect(Object.keys(answer)).toEqual([
      'id',
      'type',
      'role',
      'model',
      'content',
      'stop_reason',
      'stop_sequence',
      'usage',
    ]);
    expect(answer.id).toMatch(/^msg_/);
    expect(answer).toMatchObject({ type: 'message', role: 'assistant', model: 'claude-sonnet-4-5' });
    expect(answer.content).toEqual([{ type: 'text', text: expect.stringMatching(/^[A-Z][a-z]+[ ,.a-zA-Z]*\.$/) }]);
    expect(answer.stop_reason).toBe('end_turn');
    expect(answer.stop_sequence).toBeNull();
    const text: string = answer.content[0].text;
    expect(answer.usage).toEqual({
      input_tokens: PROMPT_TOKENS,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: words(text),
    });

    const chat = await openai(target).chat.completions.create({
      model: 'm',
      messages: [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: USER },
      ],
    });
    expect(chat.choices[0]!.message.content).toBe(text);
    expect(chat.usage!.prompt_tokens).toBe(PROMPT_TOKENS);
  });

  it('keeps the last key and headers received, for passthrough tests', async () => {
    const target = await upstream();
    const answer = await anthropic(
      target,
      '/v1/messages',
      { model: 'claude', max_tokens: 10, ...CONVERSATION },
      { 'anthropic-beta': 'prompt-caching-2024-07-31', 'anthropic-version': '2023-06-01' },
    );
    expect(answer.status).toBe(200);
    expect(answer.headers.get('request-id')).toMatch(/^req_/);
    expect(target.lastApiKey()).toBe(KEY);
    expect(target.lastAuthorization()).toBeUndefined();
    expect(target.lastHeaders()?.['anthropic-beta']).toBe('prompt-caching-2024-07-31');
    expect(target.lastHeaders()?.['anthropic-version']).toBe('2023-06-01');

    await openai(target).models.list();
    expect(target.lastApiKey()).toBeUndefined();
    expect(target.lastAuthorization()).toBe(`Bearer ${KEY}`);
  });

  it('streams the events Anthropic sends, assembling to the non-streamed message', async () => {
    const target = await upstream();
    const request = { model: 'claude', max_tokens: 1024, ...CONVERSATION };
    const plain = await message(target, request);
    const events = await streamed(target, request);

    const types = events.map((event) => event.event);
    expect(types.slice(0, 3)).toEqual(['message_start', 'ping', 'content_block_start']);
    expect(types.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
    const deltas = events.filter((event) => event.event === 'content_block_delta');
    expect(deltas.length).toBeGreaterThan(2);
    expect(types.length).toBe(deltas.length + 6);
    for (const delta of deltas) expect(delta.data).toMatchObject({ index: 0, delta: { type: 'text_delta' } });

    const start = events[0]!.data.message;
    expect(start).toMatchObject({ type: 'message', role: 'assistant', content: [], stop_reason: null });
    expect(start.usage).toEqual({ ...plain.usage, output_tokens: 1 });
    expect(events[2]!.data).toEqual({
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'text', text: '' },
    });
    expect(events.at(-2)!.data).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: plain.usage.output_tokens },
    });
    expect(events.at(-1)!.data).toEqual({ type: 'message_stop' });
    expect({ ...assemble(events), id: plain.id }).toEqual(plain);
  });

  it('stops at max_tokens with stop_reason max_tokens, a prefix of the whole answer', async () => {
    const target = await upstream();
    const full = await message(target, { model: 'claude', max_tokens: 1024, ...CONVERSATION });
    const cut = await message(target, { model: 'claude', max_tokens: 3, ...CONVERSATION });
    expect(cut.stop_reason).toBe('max_tokens');
    expect(cut.usage.output_tokens).toBe(3);
    expect(full.content[0].text.startsWith(cut.content[0].text)).toBe(true);
    const events = await streamed(target, { model: 'claude', max_tokens: 3, ...CONVERSATION });
    expect({ ...assemble(events), id: cut.id }).toEqual(cut);
  });

  it('reports a long prompt’s cached share as cache reads, the rest as input, count_tokens the whole', async () => {
    const target = await upstream();
    const messages = [{ role: 'user', content: LONG }];
    const answer = await message(target, { model: 'claude', max_tokens: 1024, messages });
    const chat = await openai(target).chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: LONG }],
    });
    const cached = chat.usage!.prompt_tokens_details!.cached_tokens!;
    expect(cached).toBeGreaterThan(0);
    expect(answer.usage.cache_read_input_tokens).toBe(cached);
    expect(answer.usage.input_tokens).toBe(chat.usage!.prompt_tokens - cached);
    expect(answer.usage.cache_creation_input_tokens).toBe(0);

    const counted = await anthropic(target, '/v1/messages/count_tokens', { model: 'claude', messages });
    expect(counted.status).toBe(200);
    expect(await counted.json()).toEqual({ input_tokens: 2104 });
    expect(answer.usage.input_tokens + answer.usage.cache_read_input_tokens).toBe(2104);
  });

  it('calls the first tool, then answers its result: a round trip, streamed alike', async () => {
    const target = await upstream();
    const tools = [
      { name: 'get_weather', description: 'The weather', input_schema: WEATHER_SCHEMA },
      { name: 'get_time', input_schema: { type: 'object', properties: { zone: { type: 'string' } } } },
    ];
    const first = {
      model: 'claude',
      max_tokens: 1024,
      tools,
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
    };
    const call = await message(target, first);
    expect(call.stop_reason).toBe('tool_use');
    expect(call.content.map((block: any) => block.type)).toEqual(['text', 'tool_use']);
    const [text, use] = call.content;
    expect(text.text).toMatch(/^[A-Z][^.]*\.$/);
    expect(use.id).toMatch(/^toolu_/);
    expect(use.name).toBe('get_weather');
    expect(Object.keys(use.input)).toEqual(['city', 'days', 'unit', 'hourly']);
    expect(use.input).toMatchObject({
      city: expect.any(String),
      days: expect.any(Number),
      unit: expect.stringMatching(/^(celsius|fahrenheit)$/),
      hourly: expect.any(Boolean),
    });
    expect(Number.isInteger(use.input.days)).toBe(true);
    const json = JSON.stringify(use.input);
    expect(call.usage.output_tokens).toBe(words(text.text) + Math.ceil(json.length / 4));

    const events = await streamed(target, first);
    expect({ ...assemble(events), id: call.id }).toEqual({
      ...call,
      content: [call.content[0], { ...use, id: expect.stringMatching(/^toolu_/) }],
    });
    const pieces = events
      .filter((event) => event.data.delta?.type === 'input_json_delta')
      .map((event) => event.data.delta.partial_json);
    expect(pieces[0]).toBe('');
    expect(pieces.length).toBeGreaterThan(2);
    expect(pieces.join('')).toBe(json);
    expect(events.find((event) => event.data.content_block?.type === 'tool_use')!.data.content_block).toEqual({
      type: 'tool_use',
      id: expect.stringMatching(/^toolu_/),
      name: 'get_weather',
      input: {},
    });

    const second = {
      model: 'claude',
      max_tokens: 1024,
      tools,
      messages: [
        ...first.messages,
        { role: 'assistant', content: call.content },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: use.id, content: [{ type: 'text', text: 'Sunny, 21 C' }] }],
        },
      ],
    };
    const answer = await message(target, second);
    expect(answer.stop_reason).toBe('end_turn');
    expect(answer.content).toEqual([{ type: 'text', text: expect.any(String) }]);
    // The tool call counts its text and its input's JSON, the result its content.
    const input = promptTokens('Weather in Paris?', text.text + json, 'Sunny, 21 C');
    expect(answer.usage.input_tokens).toBe(input);
    const counted = await anthropic(target, '/v1/messages/count_tokens', second);
    expect(await counted.json()).toEqual({ input_tokens: input });
    const again = await streamed(target, second);
    expect({ ...assemble(again), id: answer.id }).toEqual(answer);
  });

  it('follows tool_choice: a named tool, or none', async () => {
    const target = await upstream();
    const tools = [
      { name: 'get_weather', input_schema: WEATHER_SCHEMA },
      { name: 'get_time', input_schema: { type: 'object', properties: { zone: { type: 'string' } } } },
    ];
    const base = { model: 'claude', max_tokens: 1024, tools, messages: [{ role: 'user', content: 'Time?' }] };
    const named = await message(target, { ...base, tool_choice: { type: 'tool', name: 'get_time' } });
    expect(named.content[1]).toMatchObject({ type: 'tool_use', name: 'get_time', input: { zone: expect.any(String) } });
    const none = await message(target, { ...base, tool_choice: { type: 'none' } });
    expect(none.stop_reason).toBe('end_turn');
    expect(none.content.map((block: any) => block.type)).toEqual(['text']);
    const unknown = await anthropic(target, '/v1/messages', { ...base, tool_choice: { type: 'tool', name: 'nope' } });
    expect(unknown.status).toBe(400);
  });

  it('thinks first when asked, streamed as thinking and signature deltas', async () => {
    const target = await upstream();
    const request = {
      model: 'claude',
      max_tokens: 2048,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      ...CONVERSATION,
    };
    const answer = await message(target, request);
    expect(answer.content.map((block: any) => block.type)).toEqual(['thinking', 'text']);
    const [thinking, text] = answer.content;
    expect(thinking.thinking).toMatch(/^[A-Z].*\.$/);
    expect(thinking.signature).toMatch(/^[A-Za-z0-9+/]{100,}={0,2}$/);
    expect(answer.usage.output_tokens).toBe(words(thinking.thinking) + words(text.text));
    // The visible answer is the one given without thinking.
    const plain = await message(target, { model: 'claude', max_tokens: 2048, ...CONVERSATION });
    expect(text.text).toBe(plain.content[0].text);

    const events = await streamed(target, request);
    expect({ ...assemble(events), id: answer.id }).toEqual(answer);
    const first = events
      .filter((event) => event.data.index === 0)
      .map((event) => event.data.delta?.type ?? event.event);
    expect(first[0]).toBe('content_block_start');
    expect(first.at(-2)).toBe('signature_delta');
    expect(first.at(-1)).toBe('content_block_stop');
    expect(first.slice(1, -2).every((type) => type === 'thinking_delta')).toBe(true);
    expect(events[2]!.data.content_block).toEqual({ type: 'thinking', thinking: '', signature: '' });

    const small = await anthropic(target, '/v1/messages', {
      ...request,
      thinking: { type: 'enabled', budget_tokens: 512 },
    });
    expect(small.status).toBe(400);
    const over = await anthropic(target, '/v1/messages', { ...request, max_tokens: 1024 });
    expect(over.status).toBe(400);
    expect(((await over.json()) as any).error.type).toBe('invalid_request_error');
  });

  it('counts tokens as a message request’s prompt, system and blocks included', async () => {
    const target = await upstream();
    const body = {
      model: 'claude',
      system: [{ type: 'text', text: SYSTEM }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: USER }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'f', input: { a: 1 } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'done' }] },
      ],
    };
    const counted = await anthropic(target, '/v1/messages/count_tokens', body);
    const expected = promptTokens(SYSTEM, USER, '{"a":1}', 'done');
    expect(await counted.json()).toEqual({ input_tokens: expected });
    const answer = await message(target, { ...body, max_tokens: 100 });
    expect(answer.usage.input_tokens + answer.usage.cache_read_input_tokens).toBe(expected);
    // count_tokens needs no max_tokens, a message does.
    const missing = await anthropic(target, '/v1/messages', body);
    expect(missing.status).toBe(400);
    expect(await missing.json()).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'max_tokens: Field required' },
    });
  });

  it('refuses in Anthropic’s error shape, with each mode’s status', async () => {
    const target = await upstream({ outage: { models: ['claude-down'], fromMinute: 0, toMinute: 60 } });
    const request = { model: 'claude', max_tokens: 100, ...CONVERSATION };
    const refusal = async (body: unknown, headers: Record<string, string | undefined> = {}, path = '/v1/messages') => {
      const answer = await anthropic(target, path, body, headers);
      expect(answer.headers.get('content-type')).toBe('application/json');
      return { status: answer.status, body: (await answer.json()) as any, headers: answer.headers };
    };
    const shape = (type: string, message: string) => ({ type: 'error', error: { type, message } });

    expect(await refusal(request, { 'x-simulate': 'error-500' })).toMatchObject({
      status: 500,
      body: shape('api_error', 'Internal server error'),
    });
    expect(await refusal({ ...request, model: 'claude-error', stream: true })).toMatchObject({ status: 500 });
    const limited = await refusal(request, { 'x-simulate': 'rate-limited' });
    expect(limited.status).toBe(429);
    expect(limited.body.error.type).toBe('rate_limit_error');
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(await refusal({ ...request, stream: true }, { 'x-simulate': 'overloaded' })).toMatchObject({
      status: 529,
      body: shape('overloaded_error', 'Overloaded'),
    });
    expect(await refusal({ ...request, model: 'claude-down' })).toMatchObject({ status: 529 });
    expect(await refusal(request, { 'x-simulate': 'error-500' }, '/v1/messages/count_tokens')).toMatchObject({
      status: 500,
    });

    for (const bad of [
      '{nope',
      [],
      { ...request, model: undefined },
      { ...request, messages: [] },
      { ...request, messages: [{ role: 'system', content: 'x' }] },
      { ...request, messages: [{ role: 'user', content: 5 }] },
      { ...request, max_tokens: 0 },
      { ...request, stream: 'yes' },
    ]) {
      const answer = await refusal(bad);
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual(shape('invalid_request_error', expect.any(String)));
    }
    expect(await refusal(request, { 'x-simulate': 'rate-limit' })).toMatchObject({
      status: 400,
      body: shape('invalid_request_error', expect.stringContaining("Unknown x-simulate mode 'rate-limit'")),
    });
    expect(await refusal(request, {}, '/v1/messages/batches')).toMatchObject({
      status: 404,
      body: shape('not_found_error', 'Not Found'),
    });
  });

  it('authenticates by x-api-key or bearer, and wants anthropic-version', async () => {
    const target = await upstream();
    const request = { model: 'claude', max_tokens: 10, ...CONVERSATION };
    const invalidKey = { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } };

    const missing = await anthropic(target, '/v1/messages', request, { 'x-api-key': undefined });
    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual(invalidKey);
    const wrong = await anthropic(target, '/v1/messages', request, { 'x-api-key': 'sk-wrong' });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toEqual(invalidKey);
    expect(target.lastApiKey()).toBe('sk-wrong');
    const counted = await anthropic(target, '/v1/messages/count_tokens', request, { 'x-api-key': 'sk-wrong' });
    expect(counted.status).toBe(401);

    const bearer = await anthropic(target, '/v1/messages', request, {
      'x-api-key': undefined,
      authorization: `Bearer ${KEY}`,
    });
    expect(bearer.status).toBe(200);

    const unversioned = await anthropic(target, '/v1/messages', request, { 'anthropic-version': undefined });
    expect(unversioned.status).toBe(400);
    expect(await unversioned.json()).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'anthropic-version: header is required' },
    });

    // Without apiKey any key passes; the version is still wanted.
    const open = await upstream({ apiKey: undefined });
    expect((await anthropic(open, '/v1/messages', request, { 'x-api-key': 'anything' })).status).toBe(200);
  });

  it('drops a stream for abort-stream, and ends one with an error event for error-event', async () => {
    const target = await upstream();
    const request = { model: 'claude', max_tokens: 1024, stream: true, ...CONVERSATION };

    const aborted = await readUntilEnd(
      await anthropic(target, '/v1/messages', request, { 'x-simulate': 'abort-stream' }),
    );
    expect(aborted.dropped).toBe(true);
    const cut = parseSse(aborted.text);
    expect(cut.map((event) => event.event)).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
    ]);
    const plainAbort = anthropic(
      target,
      '/v1/messages',
      { ...request, stream: false },
      { 'x-simulate': 'abort-stream' },
    );
    await expect(plainAbort).rejects.toThrow();

    const failed = await readUntilEnd(
      await anthropic(target, '/v1/messages', request, { 'x-simulate': 'error-event' }),
    );
    expect(failed.dropped).toBe(false);
    const events = parseSse(failed.text);
    expect(events.filter((event) => event.event === 'content_block_delta')).toHaveLength(3);
    expect(events.some((event) => event.event === 'message_stop')).toBe(false);
    expect(
      failed.text.endsWith(
        'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
      ),
    ).toBe(true);

    const plainError = await anthropic(
      target,
      '/v1/messages',
      { ...request, stream: false },
      { 'x-simulate': 'error-event' },
    );
    expect(plainError.status).toBe(529);
    expect(((await plainError.json()) as any).error.type).toBe('overloaded_error');
  });

  it('paces a realistic stream: nothing before the first token', async () => {
    const target = await upstream({ realistic: true, ttftMs: 40, tpotMs: 2 });
    const t0 = Date.now();
    const answer = await anthropic(target, '/v1/messages', {
      model: 'claude',
      max_tokens: 1024,
      stream: true,
      ...CONVERSATION,
    });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(35);
    const events = parseSse(await answer.text());
    const tokens = events.at(-2)!.data.usage.output_tokens;
    const firstDelta = events.find((event) => event.event === 'content_block_delta')!.data.delta.text;
    expect(Date.now() - t0).toBeGreaterThanOrEqual(35 + 2 * (tokens - words(firstDelta)) - 5);
  });
});

// ---------------------------------------------------------------- OpenAI Responses

/**
 * The parts of a response that two requests for the same answer share: without ids and dates,
 * nor the fields the SDK's stream helper adds (`output_parsed`, `parsed`, `parsed_arguments`).
 */
function comparable(response: OpenAIResponse): unknown {
  const {
    id: _id,
    created_at: _created,
    output_text: _text,
    output_parsed: _parsed,
    ...rest
  } = response as OpenAIResponse & Record<string, unknown>;
  return {
    ...rest,
    output: response.output.map(({ id: _itemId, call_id: _callId, parsed_arguments: _arguments, ...item }: any) => ({
      ...item,
      ...(item.content ? { content: item.content.map(({ parsed: _part, ...part }: any) => part) } : {}),
    })),
  };
}

async function events(stream: AsyncIterable<ResponseStreamEvent>): Promise<ResponseStreamEvent[]> {
  const all: ResponseStreamEvent[] = [];
  for await (const event of stream) all.push(event);
  return all;
}

describe('simulated OpenAI Responses API', () => {
  it('answers a response in OpenAI’s shape, with the text chat completions give the same conversation', async () => {
    const target = await upstream();
    const client = openai(target);
    const response = await client.responses.create({ model: 'gpt-5-mini', instructions: SYSTEM, input: USER });
    expect(response.id).toMatch(/^resp_/);
    expect(response).toMatchObject({
      object: 'response',
      status: 'completed',
      model: 'gpt-5-mini',
      error: null,
      incomplete_details: null,
      instructions: SYSTEM,
      previous_response_id: null,
      store: true,
      tools: [],
      tool_choice: 'auto',
    });
    expect(response.output).toHaveLength(1);
    const item = response.output[0]!;
    expect(item).toEqual({
      id: expect.stringMatching(/^msg_/),
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: expect.any(String), annotations: [], logprobs: [] }],
    });
    const text = response.output_text;
    expect(text.length).toBeGreaterThan(0);
    expect(response.usage).toEqual({
      input_tokens: PROMPT_TOKENS,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: words(text),
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: PROMPT_TOKENS + words(text),
    });

    const chat = await client.chat.completions.create({
      model: 'm',
      messages: [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: USER },
      ],
    });
    expect(chat.choices[0]!.message.content).toBe(text);
    // An input of items counts as the string did.
    const items = await client.responses.create({
      model: 'm',
      instructions: SYSTEM,
      input: [{ role: 'user', content: [{ type: 'input_text', text: USER }] }],
    });
    expect(items.output_text).toBe(text);
    expect(items.usage!.input_tokens).toBe(PROMPT_TOKENS);
  });

  it('streams the events OpenAI sends, in order, ending with the non-streamed response', async () => {
    const target = await upstream();
    const client = openai(target);
    const request = { model: 'm', instructions: SYSTEM, input: USER };
    const plain = await client.responses.create(request);
    const all = await events(await client.responses.create({ ...request, stream: true }));

    expect(all.map((event) => event.sequence_number)).toEqual(all.map((_, index) => index));
    const types = all.map((event) => event.type);
    const deltas = types.filter((type) => type === 'response.output_text.delta').length;
    expect(deltas).toBeGreaterThan(2);
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      ...Array<string>(deltas).fill('response.output_text.delta'),
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const created = all[0] as Extract<ResponseStreamEvent, { type: 'response.created' }>;
    expect(created.response).toMatchObject({ status: 'in_progress', output: [], usage: null });
    // Each event of the message's content names the item it belongs to, as OpenAI's do.
    const added = all[2] as Extract<ResponseStreamEvent, { type: 'response.output_item.added' }>;
    for (const event of all.slice(3, -2)) expect(event).toMatchObject({ item_id: added.item.id, output_index: 0 });
    const text = all
      .filter(
        (event): event is Extract<ResponseStreamEvent, { type: 'response.output_text.delta' }> =>
          event.type === 'response.output_text.delta',
      )
      .map((event) => event.delta)
      .join('');
    expect(text).toBe(plain.output_text);
    const completed = all.at(-1) as Extract<ResponseStreamEvent, { type: 'response.completed' }>;
    expect(completed.response.usage).toEqual(plain.usage);
    expect(completed.response.id).toBe(created.response.id);

    // The SDK's own accumulator takes the events for a consistent response.
    const final = await client.responses.stream(request).finalResponse();
    expect(final.output_text).toBe(plain.output_text);
    expect(comparable(final)).toEqual(comparable(plain));
  });

  it('reasons first when asked, with a summary and encrypted content on request', async () => {
    const target = await upstream();
    const client = openai(target);
    const request = {
      model: 'o4-mini',
      instructions: SYSTEM,
      input: USER,
      reasoning: { effort: 'low' as const, summary: 'auto' as const },
      include: ['reasoning.encrypted_content' as const],
    };
    const response = await client.responses.create(request);
    expect(response.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
    const reasoning = response.output[0] as any;
    expect(reasoning.id).toMatch(/^rs_/);
    expect(reasoning.summary).toEqual([{ type: 'summary_text', text: expect.stringMatching(/^[A-Z].*\.$/) }]);
    expect(reasoning.encrypted_content).toMatch(/^[A-Za-z0-9+/]+=*$/);
    const usage = response.usage!;
    const reasoningTokens = usage.output_tokens_details.reasoning_tokens;
    expect(reasoningTokens).toBeGreaterThanOrEqual(64);
    expect(reasoningTokens).toBeLessThanOrEqual(255);
    expect(usage.output_tokens).toBe(reasoningTokens + words(response.output_text));
    expect(response.reasoning).toEqual({ effort: 'low', summary: 'auto' });
    // The answer is the one given without reasoning, and the count the same each time.
    const plain = await client.responses.create({ model: 'm', instructions: SYSTEM, input: USER });
    expect(response.output_text).toBe(plain.output_text);
    expect((await client.responses.create(request)).usage).toEqual(usage);

    const all = await events(await client.responses.create({ ...request, stream: true }));
    const types = all.map((event) => event.type);
    expect(types.slice(0, 4)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.reasoning_summary_part.added',
    ]);
    expect(types).toContain('response.reasoning_summary_text.delta');
    expect(types.indexOf('response.reasoning_summary_part.done')).toBeLessThan(
      types.indexOf('response.content_part.added'),
    );
    const final = await client.responses.stream(request).finalResponse();
    expect(comparable(final)).toEqual(comparable(response));

    const none = await client.responses.create({ model: 'm', input: USER });
    expect(none.usage!.output_tokens_details.reasoning_tokens).toBe(0);
    const noSummary = await client.responses.create({ model: 'm', input: USER, reasoning: { effort: 'high' } });
    expect(noSummary.output[0]).toEqual({ id: expect.any(String), type: 'reasoning', summary: [] });
  });

  it('calls a function, then answers its output: by previous_response_id or by the whole conversation', async () => {
    const target = await upstream();
    const client = openai(target);
    const tools = [{ type: 'function' as const, name: 'get_weather', parameters: WEATHER_SCHEMA, strict: false }];
    const call = await client.responses.create({ model: 'm', input: 'Weather in Paris?', tools });
    expect(call.output).toHaveLength(1);
    const item = call.output[0]!;
    expect(item).toEqual({
      id: expect.stringMatching(/^fc_/),
      type: 'function_call',
      status: 'completed',
      arguments: expect.any(String),
      call_id: expect.stringMatching(/^call_/),
      name: 'get_weather',
    });
    const { arguments: args, call_id: callId } = item as { arguments: string; call_id: string };
    expect(JSON.parse(args)).toMatchObject({ city: expect.any(String), days: expect.any(Number) });
    expect(call.usage!.output_tokens).toBe(Math.ceil(args.length / 4));
    expect(call.output_text).toBe('');

    const all = await events(
      await client.responses.create({ model: 'm', input: 'Weather in Paris?', tools, stream: true }),
    );
    const types = all.map((event) => event.type);
    expect(types.filter((type) => type === 'response.function_call_arguments.delta').length).toBeGreaterThan(1);
    expect(types.slice(-3)).toEqual([
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const pieces = all.flatMap((event) =>
      event.type === 'response.function_call_arguments.delta' ? [event.delta] : [],
    );
    expect(pieces.join('')).toBe(args);
    const streamedFinal = await client.responses
      .stream({ model: 'm', input: 'Weather in Paris?', tools })
      .finalResponse();
    expect(comparable(streamedFinal)).toEqual(comparable(call));

    const output = { type: 'function_call_output' as const, call_id: callId, output: 'Sunny, 21 C' };
    const answer = await client.responses.create({ model: 'm', previous_response_id: call.id, input: [output], tools });
    expect(answer.previous_response_id).toBe(call.id);
    expect(answer.output.map((entry) => entry.type)).toEqual(['message']);
    const input = promptTokens('Weather in Paris?', args, 'Sunny, 21 C');
    expect(answer.usage!.input_tokens).toBe(input);

    const whole = await client.responses.create({
      model: 'm',
      input: [
        { role: 'user', content: 'Weather in Paris?' },
        { type: 'function_call', call_id: callId, name: 'get_weather', arguments: args },
        output,
      ],
      tools,
    });
    expect(whole.output_text).toBe(answer.output_text);
    expect(whole.usage!.input_tokens).toBe(input);

    const none = await client.responses.create({ model: 'm', input: 'Weather?', tools, tool_choice: 'none' });
    expect(none.output.map((entry) => entry.type)).toEqual(['message']);
  });

  it('keeps its responses for previous_response_id and GET, unless store is false', async () => {
    const target = await upstream();
    const client = openai(target);
    const first = await client.responses.create({ model: 'm', instructions: SYSTEM, input: USER });
    expect(await client.responses.retrieve(first.id)).toEqual(first);
    const text = first.output_text;
    const next = await client.responses.create({ model: 'm', previous_response_id: first.id, input: 'And then?' });
    // The previous input and output, not its instructions.
    expect(next.usage!.input_tokens).toBe(promptTokens(USER, text, 'And then?'));

    const unknown: unknown = await client.responses
      .create({ model: 'm', previous_response_id: 'resp_nope', input: 'x' })
      .catch((caught: unknown) => caught);
    expect(unknown).toBeInstanceOf(BadRequestError);
    expect((unknown as BadRequestError).error).toEqual({
      message: "Previous response with id 'resp_nope' not found.",
      type: 'invalid_request_error',
      param: 'previous_response_id',
      code: 'previous_response_not_found',
    });

    const unstored = await client.responses.create({ model: 'm', input: USER, store: false });
    expect((unstored as any).store).toBe(false);
    await expect(
      client.responses.create({ model: 'm', previous_response_id: unstored.id, input: 'x' }),
    ).rejects.toMatchObject({ status: 400, code: 'previous_response_not_found' });
    const missing = client.responses.retrieve('resp_nope');
    await expect(missing).rejects.toBeInstanceOf(NotFoundError);
    await expect(missing).rejects.toMatchObject({
      error: { message: "Response with id 'resp_nope' not found.", type: 'invalid_request_error' },
    });

    // A stream's response is kept once completed.
    const stream = await events(await client.responses.create({ model: 'm', input: USER, stream: true }));
    const completed = stream.at(-1) as Extract<ResponseStreamEvent, { type: 'response.completed' }>;
    expect(await client.responses.retrieve(completed.response.id)).toEqual({
      ...completed.response,
      output_text: expect.any(String),
    });
  });

  it('forgets the oldest response past storedResponses', async () => {
    const target = await upstream({ storedResponses: 3 });
    const client = openai(target);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await client.responses.create({ model: 'm', input: `x${i}` })).id);
    await expect(client.responses.retrieve(ids[0]!)).rejects.toBeInstanceOf(NotFoundError);
    for (const id of ids.slice(1)) expect((await client.responses.retrieve(id)).id).toBe(id);
    await expect(
      client.responses.create({ model: 'm', previous_response_id: ids[0]!, input: 'y' }),
    ).rejects.toMatchObject({ code: 'previous_response_not_found' });
  });

  it('paces a realistic stream, and embeddings, by the first token', async () => {
    const target = await upstream({ realistic: true, ttftMs: 40, tpotMs: 2 });
    const client = openai(target);
    let t0 = Date.now();
    const all = await events(await client.responses.create({ model: 'm', input: USER, stream: true }));
    const completed = all.at(-1) as Extract<ResponseStreamEvent, { type: 'response.completed' }>;
    const firstDelta = all.find((event) => event.type === 'response.output_text.delta') as { delta: string };
    expect(Date.now() - t0).toBeGreaterThanOrEqual(
      35 + 2 * (completed.response.usage!.output_tokens - words(firstDelta.delta)) - 5,
    );
    t0 = Date.now();
    await client.embeddings.create({ model: 'm', input: 'a' });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(35);
  });

  it('stops at max_output_tokens: incomplete, streamed as response.incomplete', async () => {
    const target = await upstream();
    const client = openai(target);
    const request = { model: 'm', instructions: SYSTEM, input: USER };
    const full = await client.responses.create(request);
    expect(full.usage!.output_tokens).toBeGreaterThan(16);
    const cut = await client.responses.create({ ...request, max_output_tokens: 16 });
    expect(cut.status).toBe('incomplete');
    expect(cut.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(cut.usage!.output_tokens).toBe(16);
    expect((cut.output[0] as any).status).toBe('incomplete');
    expect(full.output_text.startsWith(cut.output_text)).toBe(true);
    const all = await events(await client.responses.create({ ...request, max_output_tokens: 16, stream: true }));
    expect(all.at(-1)!.type).toBe('response.incomplete');
    await expect(client.responses.create({ ...request, max_output_tokens: 15 })).rejects.toMatchObject({
      status: 400,
      param: 'max_output_tokens',
    });
  });

  it('fails as OpenAI does for each mode, and mid-stream with response.failed', async () => {
    const target = await upstream({ outage: { models: ['gpt-down'], fromMinute: 0, toMinute: 60 } });
    const client = openai(target);
    const request = { model: 'm', input: USER };
    const failing = (headers: Record<string, string>, body: Record<string, unknown> = request) =>
      client.responses.create(body as never, { headers }).then(
        () => {
          throw new Error('answered');
        },
        (caught: unknown) => caught as APIError,
      );

    const serverError = await failing({ 'x-simulate': 'error-500' });
    expect(serverError).toBeInstanceOf(InternalServerError);
    expect(serverError).toMatchObject({ status: 500, type: 'server_error' });
    expect(await failing({}, { model: 'gpt-error', input: USER })).toMatchObject({ status: 500 });
    const limited = await failing({ 'x-simulate': 'rate-limited' });
    expect(limited).toBeInstanceOf(RateLimitError);
    expect(limited).toMatchObject({ status: 429, code: 'rate_limit_exceeded' });
    expect(limited.headers?.get('retry-after')).toBe('1');
    expect(await failing({ 'x-simulate': 'overloaded' })).toMatchObject({ status: 503, type: 'server_error' });
    expect(await failing({}, { model: 'gpt-down', input: USER })).toMatchObject({ status: 503 });
    expect(await failing({ 'x-simulate': 'error-event' })).toMatchObject({ status: 500 });
    expect(await failing({ 'x-simulate': 'abort-stream' })).toBeInstanceOf(APIConnectionError);
    expect(await failing({ 'x-simulate': 'nope' })).toMatchObject({ status: 400, param: 'x-simulate' });
    for (const bad of [{ input: USER }, { model: 'm' }, { model: 'm', input: 5 }, { model: 'm', input: [3] }]) {
      expect(await failing({}, bad)).toBeInstanceOf(BadRequestError);
    }
    const unauthorised = openai(target, 'sk-wrong').responses.create(request);
    await expect(unauthorised).rejects.toBeInstanceOf(AuthenticationError);

    const received: ResponseStreamEvent[] = [];
    const dropped = await (async () => {
      const stream = await client.responses.create(
        { ...request, stream: true },
        { headers: { 'x-simulate': 'abort-stream' } },
      );
      for await (const event of stream) received.push(event);
    })().catch((caught: unknown) => caught);
    expect(dropped).toBeInstanceOf(Error);
    expect(received.filter((event) => event.type === 'response.output_text.delta')).toHaveLength(3);
    expect(received.some((event) => event.type === 'response.completed')).toBe(false);

    const failed = await events(
      await client.responses.create({ ...request, stream: true }, { headers: { 'x-simulate': 'error-event' } }),
    );
    expect(failed.filter((event) => event.type === 'response.output_text.delta')).toHaveLength(3);
    const last = failed.at(-1) as Extract<ResponseStreamEvent, { type: 'response.failed' }>;
    expect(last.type).toBe('response.failed');
    expect(last.response.status).toBe('failed');
    expect(last.response.error).toEqual({ code: 'server_error', message: expect.any(String) });
    expect(last.sequence_number).toBe(failed.length - 1);
  });
});

// ---------------------------------------------------------------- OpenAI Embeddings

function norm(vector: readonly number[]): number {
  return Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
}

describe('simulated OpenAI Embeddings API', () => {
  it('embeds strings as unit vectors of 8 dimensions, the same for the same seed and input', async () => {
    const target = await upstream();
    const client = openai(target);
    const answer = await client.embeddings.create({
      model: 'text-embedding-3-small',
      input: ['hello', 'a longer sentence'],
      encoding_format: 'float',
    });
    expect(answer).toEqual({
      object: 'list',
      data: [
        { object: 'embedding', index: 0, embedding: expect.any(Array) },
        { object: 'embedding', index: 1, embedding: expect.any(Array) },
      ],
      model: 'text-embedding-3-small',
      usage: { prompt_tokens: 2 + 5, total_tokens: 7 },
    });
    const [hello, longer] = answer.data.map((entry) => entry.embedding);
    expect(hello).toHaveLength(8);
    expect(norm(hello!)).toBeCloseTo(1, 6);
    expect(norm(longer!)).toBeCloseTo(1, 6);
    expect(hello).not.toEqual(longer);

    const single = await client.embeddings.create({ model: 'other', input: 'hello', encoding_format: 'float' });
    expect(single.data[0]!.embedding).toEqual(hello);
    expect(single.usage).toEqual({ prompt_tokens: 2, total_tokens: 2 });
    const reseeded = await openai(await upstream({ seed: 2 })).embeddings.create({
      model: 'm',
      input: 'hello',
      encoding_format: 'float',
    });
    expect(reseeded.data[0]!.embedding).not.toEqual(hello);
  });

  it('encodes base64 as little-endian float32, the same vectors the SDK decodes', async () => {
    const target = await upstream();
    const client = openai(target);
    const floats = await client.embeddings.create({ model: 'm', input: ['a', 'b'], encoding_format: 'float' });
    // Without encoding_format the SDK asks for base64 and decodes it.
    const decoded = await client.embeddings.create({ model: 'm', input: ['a', 'b'] });
    expect(decoded.data.map((entry) => entry.embedding)).toEqual(floats.data.map((entry) => entry.embedding));

    const raw = await fetch(`${target.url}/embeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', input: 'a', encoding_format: 'base64' }),
    });
    const body = (await raw.json()) as { data: { embedding: string }[] };
    const bytes = Buffer.from(body.data[0]!.embedding, 'base64');
    expect(bytes).toHaveLength(32);
    const vector = Array.from({ length: 8 }, (_, index) => bytes.readFloatLE(index * 4));
    expect(vector).toEqual(floats.data[0]!.embedding);
  });

  it('takes token arrays, and shortens vectors to dimensions as OpenAI does', async () => {
    const client = openai(await upstream());
    const one = await client.embeddings.create({ model: 'm', input: [1, 2, 3], encoding_format: 'float' });
    expect(one.data).toHaveLength(1);
    expect(one.usage.prompt_tokens).toBe(3);
    const many = await client.embeddings.create({ model: 'm', input: [[1, 2, 3], [4]], encoding_format: 'float' });
    expect(many.data).toHaveLength(2);
    expect(many.data[0]!.embedding).toEqual(one.data[0]!.embedding);
    expect(many.usage).toEqual({ prompt_tokens: 4, total_tokens: 4 });

    const full = (await client.embeddings.create({ model: 'm', input: 'x', encoding_format: 'float' })).data[0]!
      .embedding;
    const short = (await client.embeddings.create({ model: 'm', input: 'x', dimensions: 4, encoding_format: 'float' }))
      .data[0]!.embedding;
    expect(short).toHaveLength(4);
    expect(norm(short)).toBeCloseTo(1, 6);
    const head = full.slice(0, 4);
    short.forEach((value, index) => expect(value).toBeCloseTo(head[index]! / norm(head), 6));
    const wide = (await client.embeddings.create({ model: 'm', input: 'x', dimensions: 64, encoding_format: 'float' }))
      .data[0]!.embedding;
    expect(wide).toHaveLength(64);
  });

  it('refuses empty or mistyped input, and fails for each mode', async () => {
    const target = await upstream();
    const client = openai(target);
    for (const input of ['', [], [''], [[]], ['a', 1], [-1], 5, [1.5], null]) {
      const refused = client.embeddings.create({ model: 'm', input: input as never, encoding_format: 'float' });
      await expect(refused).rejects.toBeInstanceOf(BadRequestError);
      await expect(refused).rejects.toMatchObject({ param: 'input' });
    }
    await expect(
      client.embeddings.create({ model: 'm', input: 'a', encoding_format: 'hex' as never }),
    ).rejects.toMatchObject({ status: 400, param: 'encoding_format' });
    await expect(
      client.embeddings.create({ model: 'm', input: 'a', dimensions: 0, encoding_format: 'float' }),
    ).rejects.toMatchObject({ status: 400, param: 'dimensions' });

    const withMode = (mode: string, model = 'm') =>
      client.embeddings.create({ model, input: 'a', encoding_format: 'float' }, { headers: { 'x-simulate': mode } });
    await expect(withMode('error-500')).rejects.toMatchObject({ status: 500, type: 'server_error' });
    await expect(withMode('rate-limited')).rejects.toBeInstanceOf(RateLimitError);
    await expect(withMode('overloaded')).rejects.toMatchObject({ status: 503 });
    await expect(withMode('error-event')).rejects.toMatchObject({ status: 500 });
    await expect(withMode('abort-stream')).rejects.toBeInstanceOf(APIConnectionError);
    await expect(client.embeddings.create({ model: 'embed-error', input: 'a' })).rejects.toMatchObject({ status: 500 });
  });
});

// ---------------------------------------------------------------- Chat completions' new modes

describe('simulated chat completions, new modes', () => {
  it('answers 503 when overloaded, and reports an error mid-stream for error-event', async () => {
    const client = openai(await upstream());
    const messages = [{ role: 'user' as const, content: USER }];
    await expect(
      client.chat.completions.create({ model: 'm', messages }, { headers: { 'x-simulate': 'overloaded' } }),
    ).rejects.toMatchObject({ status: 503, type: 'server_error' });
    await expect(
      client.chat.completions.create({ model: 'm', messages }, { headers: { 'x-simulate': 'error-event' } }),
    ).rejects.toMatchObject({ status: 500 });

    const stream = await client.chat.completions.create(
      { model: 'm', messages, stream: true },
      { headers: { 'x-simulate': 'error-event' } },
    );
    let contents = 0;
    const error = await (async () => {
      for await (const chunk of stream) if (chunk.choices[0]?.delta.content) contents++;
    })().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(APIError);
    expect(error).toMatchObject({ type: 'server_error' });
    expect(contents).toBe(3);
  });
});
