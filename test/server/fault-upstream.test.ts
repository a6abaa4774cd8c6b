import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import { fetch, request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { startFaultUpstream, type Fault, type FaultUpstream, type FaultUpstreamOptions } from './fault-upstream.js';

/**
 * The fault-injecting upstream of the failover tests, read through real HTTP with undici: each
 * fault must be what it says, or a failover test built on it proves nothing.
 */

const MESSAGES = [{ role: 'user', content: 'Hello there, fault upstream!' }];
// ceil(28 / 4) + 4
const PROMPT_TOKENS = 11;

const started: FaultUpstream[] = [];
afterEach(async () => {
  for (const upstream of started.splice(0)) await upstream.close();
});

async function upstream(options: FaultUpstreamOptions = {}): Promise<FaultUpstream> {
  const made = await startFaultUpstream(options);
  started.push(made);
  return made;
}

interface Post {
  stream?: boolean;
  usage?: boolean;
  headersTimeout?: number;
  bodyTimeout?: number;
  extra?: Record<string, unknown>;
}

function post(target: FaultUpstream, model: string, { stream = false, usage = false, ...rest }: Post = {}) {
  return request(`${target.url}/chat/completions`, {
    method: 'POST',
    headers: { authorization: 'Bearer sk-test', 'content-type': 'application/json' },
    body: JSON.stringify({
      model,
      messages: MESSAGES,
      stream,
      ...(usage ? { stream_options: { include_usage: true } } : {}),
      ...rest.extra,
    }),
    ...(rest.headersTimeout ? { headersTimeout: rest.headersTimeout } : {}),
    ...(rest.bodyTimeout ? { bodyTimeout: rest.bodyTimeout } : {}),
  });
}

/** The SSE events' data as sent, and the error that ended the body if it did not end cleanly. */
async function readEvents(body: AsyncIterable<Buffer>): Promise<{ data: string[]; error?: { code?: string } }> {
  let text = '';
  try {
    for await (const part of body) text += part.toString('utf8');
  } catch (error) {
    return { data: parse(text), error: error as { code?: string } };
  }
  return { data: parse(text) };
}
function parse(text: string): string[] {
  const events = text.split('\n\n');
  expect(events.pop()).toBe(''); // every event is whole, ended by a blank line
  return events.map((event) => {
    expect(event.startsWith('data: ')).toBe(true);
    return event.slice('data: '.length);
  });
}
/** Content deltas only (the role chunk's '' and the finish chunk are not content). */
const contents = (data: string[]): string[] =>
  data.flatMap((event) => {
    if (!event.startsWith('{"id"')) return [];
    const content = (JSON.parse(event) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content;
    return content ? [content] : [];
  });
const kinds = (target: FaultUpstream, model: string): string[] => target.attemptsOf(model).map(({ fault }) => fault);

describe('answers', () => {
  it('streams chunks, a usage chunk when asked, and [DONE]; the same content whole when not streamed', async () => {
    const target = await upstream({ answerTokens: 6 });
    const answer = await post(target, 'gpt-a', { stream: true, usage: true });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['content-type']).toContain('text/event-stream');
    const { data, error } = await readEvents(answer.body);
    expect(error).toBeUndefined();
    expect(data.at(-1)).toBe('[DONE]');
    const chunks = data.slice(0, -1).map((event) => JSON.parse(event) as ChatCompletionChunk);
    expect(chunks[0]!.choices[0]!.delta).toMatchObject({ role: 'assistant', content: '' });
    expect(chunks.every((chunk) => chunk.model === 'gpt-a' && chunk.object === 'chat.completion.chunk')).toBe(true);
    expect(contents(data)).toHaveLength(6);
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('stop');
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: PROMPT_TOKENS, completion_tokens: 6, total_tokens: PROMPT_TOKENS + 6 },
    });
    expect(contents(data).join('')).toBe(target.contentFor(MESSAGES));

    const whole = await post(target, 'gpt-a');
    expect(await whole.body.json()).toMatchObject({
      object: 'chat.completion',
      model: 'gpt-a',
      choices: [{ message: { role: 'assistant', content: contents(data).join('') }, finish_reason: 'stop' }],
      usage: { prompt_tokens: PROMPT_TOKENS, completion_tokens: 6 },
    });
  });

  it('is deterministic by seed and messages, and cut by max_tokens with finish_reason length', async () => {
    const [one, again, other] = await Promise.all([upstream(), upstream(), upstream({ seed: 2 })]);
    const answer = async (target: FaultUpstream, extra = {}): Promise<ChatCompletion> =>
      (await (await post(target, 'm', { extra })).body.json()) as ChatCompletion;
    const content = async (target: FaultUpstream): Promise<string | null> =>
      (await answer(target)).choices[0]!.message.content;
    expect(await content(one)).toBe(await content(again));
    expect(await content(one)).not.toBe(await content(other));
    const cut = await answer(one, { max_tokens: 3 });
    expect(cut.choices[0]!.finish_reason).toBe('length');
    expect(cut.usage!.completion_tokens).toBe(3);
    expect(one.contentFor(MESSAGES).startsWith(cut.choices[0]!.message.content!)).toBe(true);
  });
});

describe('error answers', () => {
  it('answers a scripted status in OpenAI error shape, with Retry-After only when scripted', async () => {
    const target = await upstream();
    target.script('m', [
      { kind: 'status', status: 429, retryAfter: '7' },
      { kind: 'status', status: 429 },
      { kind: 'status', status: 500 },
      { kind: 'status', status: 503 },
      { kind: 'status', status: 401 },
      { kind: 'status', status: 502, body: { error: { message: 'bad gateway', type: 'upstream', code: 'x' } } },
    ]);
    const seen = [];
    for (let i = 0; i < 6; i++) {
      const answer = await post(target, 'm', { stream: i % 2 === 0 });
      seen.push({
        status: answer.statusCode,
        retryAfter: answer.headers['retry-after'],
        ...((await answer.body.json()) as object),
      });
    }
    expect(seen).toMatchObject([
      { status: 429, retryAfter: '7', error: { type: 'requests', code: 'rate_limit_exceeded' } },
      { status: 429, retryAfter: undefined, error: { code: 'rate_limit_exceeded' } },
      { status: 500, error: { type: 'server_error', code: null } },
      { status: 503, error: { type: 'server_error' } },
      { status: 401, error: { type: 'invalid_request_error', code: 'invalid_api_key' } },
      { status: 502, error: { message: 'bad gateway', type: 'upstream', code: 'x' } },
    ]);
  });

  it('refuses a too long context and a content policy with 400 and their codes', async () => {
    const target = await upstream();
    target.script('m', [{ kind: 'context_length' }, { kind: 'content_policy', reason: 'Reason: violence.' }]);
    const long = await post(target, 'm');
    expect(long.statusCode).toBe(400);
    expect(await long.body.json()).toMatchObject({
      error: { code: 'context_length_exceeded', type: 'invalid_request_error', param: 'messages' },
    });
    const policy = await post(target, 'm', { stream: true });
    expect(policy.statusCode).toBe(400);
    const { error } = (await policy.body.json()) as { error: { code: string; type: string; message: string } };
    expect(error).toMatchObject({ code: 'content_policy_violation', type: 'invalid_request_error' });
    expect(error.message).toContain('Reason: violence.');
  });
});

describe('broken connections', () => {
  it('reset: the socket is reset before any header', async () => {
    const target = await upstream();
    target.script('m', [{ kind: 'reset' }]);
    await expect(post(target, 'm')).rejects.toMatchObject({ code: 'ECONNRESET' });
    await expect(
      fetch(`${target.url}/chat/completions`, { method: 'POST', body: '{"model":"m"}' }),
    ).rejects.toMatchObject({ cause: { code: 'ECONNRESET' } });
    expect(kinds(target, 'm')).toEqual(['reset', 'reset']);
  });

  it('silent: reads the request, never answers, and records when the client gave up', async () => {
    const target = await upstream();
    target.script('m', [{ kind: 'silent' }]);
    const asked = performance.now();
    await expect(post(target, 'm', { headersTimeout: 200 })).rejects.toMatchObject({
      code: 'UND_ERR_HEADERS_TIMEOUT',
    });
    expect(performance.now() - asked).toBeGreaterThanOrEqual(190);
    await expect.poll(() => target.attempts[0]?.ended).toMatchObject({ by: 'client' });
    expect(target.attempts[0]!.ended!.at - target.attempts[0]!.at).toBeGreaterThanOrEqual(190);
    expect(target.attempts[0]).toMatchObject({ model: 'm', fault: 'silent', stream: false });
    expect(target.attempts[0]!.body).toMatchObject({ model: 'm', messages: MESSAGES });
  });

  it('cut_after: N content deltas, then the socket is destroyed without [DONE]', async () => {
    const target = await upstream();
    target.script('m', [{ kind: 'cut_after', tokens: 3 }]);
    const answer = await post(target, 'm', { stream: true, usage: true });
    expect(answer.statusCode).toBe(200);
    const { data, error } = await readEvents(answer.body);
    expect(error).toMatchObject({ code: 'UND_ERR_SOCKET' });
    expect(contents(data)).toHaveLength(3);
    expect(data).not.toContain('[DONE]');
    await expect.poll(() => target.attempts[0]?.ended).toMatchObject({ by: 'upstream' }); // not the client's doing

    const whole = await post(target, 'm');
    await expect(whole.body.text()).rejects.toMatchObject({ code: 'UND_ERR_SOCKET' }); // half of a longer Content-Length
  });

  it('stall_after: N content deltas (non-streamed: half the body), then nothing on an open socket', async () => {
    const target = await upstream();
    target.script('m', [{ kind: 'stall_after', tokens: 2 }]);
    const streamed = async () => {
      const answer = await post(target, 'm', { stream: true, bodyTimeout: 300 });
      const asked = performance.now();
      const { data, error } = await readEvents(answer.body);
      expect(error).toMatchObject({ code: 'UND_ERR_BODY_TIMEOUT' });
      expect(performance.now() - asked).toBeGreaterThanOrEqual(290);
      expect(contents(data)).toHaveLength(2);
    };
    const whole = async () => {
      const answer = await post(target, 'm', { bodyTimeout: 300 });
      expect(answer.statusCode).toBe(200);
      await expect(answer.body.text()).rejects.toMatchObject({ code: 'UND_ERR_BODY_TIMEOUT' });
    };
    await Promise.all([streamed(), whole()]);
    await expect.poll(() => target.attempts.map(({ ended }) => ended?.by)).toEqual(['client', 'client']);
  });
});

describe('broken streams', () => {
  it('slow_first_token: headers at once, the first token ms later; non-streamed, the answer ms later', async () => {
    const target = await upstream();
    target.script('m', [{ kind: 'slow_first_token', ms: 400 }]);
    const asked = performance.now();
    const answer = await post(target, 'm', { stream: true });
    expect(performance.now() - asked).toBeLessThan(300);
    let firstContent = 0;
    let text = '';
    for await (const part of answer.body as AsyncIterable<Buffer>) {
      text += part.toString('utf8');
      const whole = text.split('\n\n').slice(0, -1); // events ended by their blank line
      if (!firstContent && contents(whole.map((event) => event.slice('data: '.length))).length > 0) {
        firstContent = performance.now() - asked;
      }
    }
    expect(firstContent).toBeGreaterThanOrEqual(395);
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);

    const wholeAsked = performance.now();
    expect((await post(target, 'm')).statusCode).toBe(200);
    expect(performance.now() - wholeAsked).toBeGreaterThanOrEqual(395);
  });

  it('malformed_event: a broken event after N deltas, then the rest to [DONE]', async () => {
    const target = await upstream({ answerTokens: 5 });
    target.script('m', [{ kind: 'malformed_event', after: 2 }]);
    const { data, error } = await readEvents((await post(target, 'm', { stream: true })).body);
    expect(error).toBeUndefined();
    const broken = data.indexOf('{not json');
    expect(contents(data.slice(0, broken))).toHaveLength(2);
    expect(contents(data.slice(broken + 1))).toHaveLength(3);
    expect(data.at(-1)).toBe('[DONE]');

    target.script('m', [{ kind: 'malformed_event', after: 0 }]);
    const whole = await post(target, 'm');
    expect(whole.statusCode).toBe(200);
    expect(await whole.body.text()).toBe('{not json');
  });

  it('no_done: finish and usage, then a clean end without [DONE]', async () => {
    const target = await upstream({ answerTokens: 4 });
    target.script('m', [{ kind: 'no_done' }]);
    const { data, error } = await readEvents((await post(target, 'm', { stream: true, usage: true })).body);
    expect(error).toBeUndefined();
    expect(data).not.toContain('[DONE]');
    expect(contents(data)).toHaveLength(4);
    expect(JSON.parse(data.at(-1)!)).toMatchObject({ usage: { completion_tokens: 4 } });
    expect(JSON.parse(data.at(-2)!)).toMatchObject({ choices: [{ finish_reason: 'stop' }] });
  });

  it('error_event: an SSE error after N deltas (0: as the first event), then the end', async () => {
    const target = await upstream();
    target.script('m', [
      { kind: 'error_event', after: 0 },
      { kind: 'error_event', after: 3 },
    ]);
    const first = await readEvents((await post(target, 'm', { stream: true })).body);
    expect(first.error).toBeUndefined();
    expect(first.data).toHaveLength(1);
    expect(JSON.parse(first.data[0]!)).toMatchObject({ error: { type: 'server_error', code: null } });
    const later = await readEvents((await post(target, 'm', { stream: true })).body);
    expect(later.data).toHaveLength(5); // role chunk, 3 deltas, the error
    expect(contents(later.data)).toHaveLength(3);
    expect(JSON.parse(later.data.at(-1)!)).toHaveProperty('error.message');
  });
});

describe('scripts and timeline', () => {
  it('takes one fault per attempt of each model, the last repeating; reset forgets', async () => {
    const target = await upstream();
    target.script('a', [{ kind: 'status', status: 500 }, { kind: 'status', status: 429 }, { kind: 'ok' }]);
    target.script('c', (attempt) => (attempt % 2 === 0 ? { kind: 'status', status: 503 } : { kind: 'ok' }));
    const statuses = async (model: string, n: number): Promise<number[]> => {
      const seen = [];
      for (let i = 0; i < n; i++) {
        const answer = await post(target, model);
        await answer.body.dump();
        seen.push(answer.statusCode);
      }
      return seen;
    };
    expect(await statuses('a', 4)).toEqual([500, 429, 200, 200]);
    expect(await statuses('b', 1)).toEqual([200]);
    expect(await statuses('c', 3)).toEqual([503, 200, 503]);
    expect(kinds(target, 'a')).toEqual(['status', 'status', 'ok', 'ok']);
    expect(target.attempts.map(({ model }) => model).join('')).toBe('aaaabccc');
    const times = target.attempts.map(({ at }) => at);
    expect(times).toEqual([...times].sort((x, y) => x - y));
    expect(target.attempts[0]!.headers.authorization).toBe('Bearer sk-test');

    // A script set again starts from its first fault.
    target.script('a', [{ kind: 'status', status: 500 }, { kind: 'ok' }]);
    expect(await statuses('a', 2)).toEqual([500, 200]);
    expect(target.attemptsOf('a')).toHaveLength(6);

    target.reset();
    expect(target.attempts).toHaveLength(0);
    expect(await statuses('a', 1)).toEqual([200]);
    await expect.poll(() => target.attempts[0]?.ended).toMatchObject({ by: 'upstream' });
  });

  it('records a body without a model as a bad request (400); other paths answer 404', async () => {
    const target = await upstream();
    const bad = await request(`${target.url}/chat/completions`, { method: 'POST', body: '{"messages":[]}' });
    expect(bad.statusCode).toBe(400);
    expect(await bad.body.json()).toMatchObject({ error: { type: 'invalid_request_error' } });
    expect(target.attempts).toMatchObject([{ model: '', fault: 'bad_request' }]);
    const models = await request(`${target.url}/models`);
    expect(models.statusCode).toBe(404);
    await models.body.dump();
    expect(target.attempts).toHaveLength(1);
  });

  it('downFor: the fault until the clock passes the span, then healthy (a fake clock: a minute in no time)', async () => {
    let clock = 5_000;
    const target = await upstream({ now: () => clock });
    target.downFor('m', 60_000);
    const status = async (): Promise<number> => {
      const answer = await post(target, 'm');
      await answer.body.dump();
      return answer.statusCode;
    };
    expect(await status()).toBe(503);
    clock += 59_999;
    expect(await status()).toBe(503);
    clock += 1;
    expect(await status()).toBe(200);
    expect(target.attempts.map(({ at }) => at)).toEqual([0, 59_999, 60_000]);
  });

  it('downFor on the real clock, scaled: 150 ms stand for a minute', async () => {
    const target = await upstream();
    const fault: Fault = { kind: 'status', status: 429, retryAfter: '60' };
    target.downFor('m', 150, fault);
    expect((await post(target, 'm')).statusCode).toBe(429);
    await new Promise((resolve) => setTimeout(resolve, 160));
    expect((await post(target, 'm')).statusCode).toBe(200);
  });
});

describe('lifecycle', () => {
  it('down refuses connections and ends open ones; up listens again on the same port', async () => {
    const target = await upstream();
    target.script('m', [{ kind: 'silent' }, { kind: 'ok' }]);
    const pending = post(target, 'm').then(
      () => 'answered',
      (error: { code?: string }) => error.code,
    );
    await expect.poll(() => target.attempts.length).toBe(1);
    await target.down();
    expect(await pending).toBe('UND_ERR_SOCKET');
    expect(target.attempts[0]!.ended).toMatchObject({ by: 'upstream' }); // not given up by the client
    await expect(post(target, 'm')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await target.up();
    const answer = await post(target, 'm');
    expect(answer.statusCode).toBe(200);
    await answer.body.dump();
    expect(new URL(target.url).port).toBe(String(target.port));

    // Down again, once up: open answers are ended as the first time.
    target.script('m', [{ kind: 'stall_after', tokens: 1 }]);
    const stalled = await post(target, 'm', { stream: true });
    const read = readEvents(stalled.body);
    await target.down();
    expect((await read).error).toMatchObject({ code: 'UND_ERR_SOCKET' });
    expect(target.attempts.at(-1)!.ended).toMatchObject({ by: 'upstream' });
    await expect(post(target, 'm')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('close ends silent, stalled and waiting answers: a process that used them exits by itself', async () => {
    const code = `
      import { startFaultUpstream } from ${JSON.stringify(new URL('./fault-upstream.ts', import.meta.url).href)};
      const upstream = await startFaultUpstream();
      upstream.script('m', [{ kind: 'silent' }, { kind: 'stall_after', tokens: 1 }, { kind: 'slow_first_token', ms: 600000 }]);
      const ask = (stream) => fetch(upstream.url + '/chat/completions', {
        method: 'POST', body: JSON.stringify({ model: 'm', stream, messages: [{ role: 'user', content: 'hi' }] }),
      });
      const silent = ask(false).then(() => 'answered', (error) => 'silent ended');
      const stalled = await ask(true);
      const reader = stalled.body.getReader();
      await reader.read();
      const slow = ask(false).then(() => 'answered', () => 'slow ended'); // its timer of ten minutes must go too
      while (upstream.attempts.length < 3) await new Promise((resolve) => setTimeout(resolve, 5));
      await upstream.close();
      console.log(await silent, await reader.read().then(() => 'read', () => 'stall ended'), await slow);
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
      cwd: new URL('../..', import.meta.url),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (part: Buffer) => (out += part.toString()));
    const killer = setTimeout(() => child.kill(), 15_000);
    const exit = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    clearTimeout(killer);
    expect(exit).toBe(0);
    expect(out.trim()).toBe('silent ended stall ended slow ended');
  });
});
