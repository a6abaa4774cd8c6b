/**
 * A fault-injecting OpenAI-compatible upstream for the gateway's failover tests: a real node:http server on
 * 127.0.0.1 answering `POST /v1/chat/completions` in the shapes of server/gateway/simulated-upstream.ts (other
 * paths: 404), each attempt as the test scripted for the request's `model`: one server can stand for several targets.
 * - Deterministic: the content depends on the seed and the messages only (`contentFor`); one token per delta.
 *   Usage: prompt Σ ceil(characters / 4) + 4 per message, completion = deltas; streamed, only with include_usage.
 * - Time: scripts and the timeline read the `now` clock, in ms since start. Tests scale time: "down for a minute"
 *   is `downFor(model, 1000)` against a gateway whose own waits are scaled alike, or a fake clock the test moves.
 *   Pacing (ttftMs, tpotMs) runs on real timers; the defaults (0 and 1 ms) keep tests fast.
 * - Refused connections cannot be per model (a listener accepts before it reads a model): start one upstream per
 *   target and `down()` it; `up()` listens again on the same port.
 * - `close()` destroys every socket, and so clears every timer: a silent or stalled answer cannot keep the test
 *   process alive.
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';

export type Fault =
  /** A normal answer (the default). */
  | { kind: 'ok' }
  /** An error status before any stream; `body` replaces the default OpenAI error for the status. */
  | { kind: 'status'; status: number; retryAfter?: string; body?: object }
  /** 400 `context_length_exceeded`: not worth retrying on the same model. */
  | { kind: 'context_length' }
  /** 400 `content_policy_violation`, with the reason in the message. */
  | { kind: 'content_policy'; reason?: string }
  /** TCP reset once the body is read, before any header: the client sees ECONNRESET. */
  | { kind: 'reset' }
  /** Reads the body and never answers, until the client goes or the upstream closes. */
  | { kind: 'silent' }
  /** Streamed: headers at once, the first token `ms` later. Non-streamed: the answer waits `ms`. (Both in place of ttftMs.) */
  | { kind: 'slow_first_token'; ms: number }
  /** Streamed: the role chunk and `tokens` deltas, then the socket is destroyed (no [DONE]). Non-streamed: half the body, then destroyed. */
  | { kind: 'cut_after'; tokens: number }
  /** As cut_after, but the socket stays open and nothing more comes. */
  | { kind: 'stall_after'; tokens: number }
  /** Streamed: `data: {not json` after `after` deltas, then the rest to [DONE]. Non-streamed: 200 with `{not json`. */
  | { kind: 'malformed_event'; after: number }
  /** Streamed: the whole answer with finish and usage, then the body ends without [DONE]. Non-streamed: as ok. */
  | { kind: 'no_done' }
  /** Streamed: after `after` deltas (0: as the first event) an SSE error event, then the body ends. Non-streamed: 200 with an error body. */
  | { kind: 'error_event'; after: number };
export type FaultKind = Fault['kind'];
/**
 * Faults taken one per attempt from when the script is set (the last repeats), or a function of the
 * attempt's number under this script (from 0) and its time (ms since start by the `now` clock).
 */
export type Script = readonly Fault[] | ((attempt: number, at: number) => Fault);

export interface Attempt {
  /** The request's model ('' when the body was not a chat request). */
  model: string;
  /** When the request arrived, in ms since start by the `now` clock. */
  at: number;
  stream: boolean;
  /** The fault served; 'bad_request' when the body was no JSON object with a model (answered 400). */
  fault: FaultKind | 'bad_request';
  headers: IncomingHttpHeaders;
  body: unknown;
  /**
   * When the response closed (ms since start), and by whom: 'client' when it went away before the answer
   * was complete (a gateway giving up), 'upstream' otherwise (answered, cut, reset, down). Undefined while open.
   */
  ended: { at: number; by: 'upstream' | 'client' } | undefined;
}

export interface FaultUpstreamOptions {
  seed?: number;
  /** Ms before the first token (default 0). */
  ttftMs?: number;
  /** Ms between streamed deltas, and per token before a non-streamed answer (default 1). */
  tpotMs?: number;
  /** Tokens (= deltas) of a full answer, cut by max_tokens with finish_reason 'length' (default 8). */
  answerTokens?: number;
  /** The clock of scripts and timeline (default performance.now). */
  now?: () => number;
}

export interface FaultUpstream {
  /** Base URL to give an OpenAI client: `http://127.0.0.1:PORT/v1`. */
  readonly url: string;
  readonly port: number;
  /** Sets the model's script, replacing its previous one. */
  script(model: string, faults: Script): void;
  /** `fault` (default 503) for the next `ms` by the clock, then ok. */
  downFor(model: string, ms: number, fault?: Fault): void;
  readonly attempts: readonly Attempt[];
  attemptsOf(model: string): Attempt[];
  /** Forgets scripts and attempts (the clock's origin stays). */
  reset(): void;
  /** The answer's tokens for these messages, joined: what a complete answer's content is. */
  contentFor(messages: unknown): string;
  /** Closes the listener and destroys open sockets: connections are refused until up(). */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  /** down() for good; idempotent. */
  close(): Promise<void>;
}

const OK: Fault = { kind: 'ok' };
/** Between the last bytes and the destroyed socket, so the client reads what was sent before it sees the end. */
const CUT_PAUSE_MS = 10;
const WORDS = 'the gateway sends each request to a provider and counts every token it returns'.split(' ');
const SERVER_ERROR = 'The server had an error while processing your request. Sorry about that!';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const errorBody = (message: string, type: string, code: string | null = null, param: string | null = null): string =>
  JSON.stringify({ error: { message, type, param, code } });

function send(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function defaultError(status: number, model: string): string {
  if (status === 401) return errorBody('Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key');
  if (status === 429) {
    const message = `Rate limit reached for ${model} on requests per min (RPM): Limit 60, Used 60, Requested 1.`;
    return errorBody(message, 'requests', 'rate_limit_exceeded');
  }
  if (status === 503) return errorBody('The server is overloaded or not ready yet.', 'server_error');
  if (status >= 500) return errorBody(SERVER_ERROR, 'server_error');
  return errorBody(`Request failed with status ${status}.`, 'invalid_request_error');
}

/** Prompt text (the generator's input) and prompt tokens, as the simulated upstream counts them. */
function readPrompt(messages: unknown): { text: string; tokens: number } {
  let text = '';
  let tokens = 0;
  for (const message of Array.isArray(messages) ? messages : []) {
    const content = isRecord(message) ? message.content : undefined;
    const parts = Array.isArray(content) ? content.map((part) => (isRecord(part) ? part.text : '')) : [content];
    const own = parts.filter((part): part is string => typeof part === 'string').join('');
    text += `${isRecord(message) ? String(message.role) : ''}\u0000${own}\u0000`;
    tokens += Math.ceil(own.length / 4) + 4;
  }
  return { text, tokens: Math.max(1, tokens) };
}

/** FNV-1a of the prompt into mulberry32: the same words for the same seed and messages, on every run. */
function words(seed: number, text: string, count: number): string[] {
  let s = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) s = Math.imul(s ^ text.charCodeAt(i), 0x01000193) >>> 0;
  const random = (): number => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return Array.from({ length: count }, (_, i) => `${i === 0 ? '' : ' '}${WORDS[Math.floor(random() * WORDS.length)]}`);
}

export async function startFaultUpstream(options: FaultUpstreamOptions = {}): Promise<FaultUpstream> {
  const seed = options.seed ?? 1;
  const ttftMs = options.ttftMs ?? 0;
  const tpotMs = options.tpotMs ?? 1;
  const answerTokens = Math.max(1, options.answerTokens ?? 8);
  const now = options.now ?? (() => performance.now());
  const start = now();
  const elapsed = (): number => now() - start;

  const scripts = new Map<string, { script: Script; taken: number }>();
  const attempts: Attempt[] = [];
  const responses = new Set<ServerResponse>();
  let port = 0;
  let listening = false;
  let stopping = false;
  let closed: Promise<void> | undefined;
  let served = 0;

  function faultFor(model: string, at: number): Fault {
    const entry = scripts.get(model);
    if (!entry) return OK;
    const { script } = entry;
    const attempt = entry.taken++;
    return typeof script === 'function' ? script(attempt, at) : (script[Math.min(attempt, script.length - 1)] ?? OK);
  }

  const server = createServer({ noDelay: true }, (req, res) => {
    const at = elapsed();
    responses.add(res);
    res.once('close', () => responses.delete(res));
    req.on('error', () => res.destroy());
    if (req.method !== 'POST' || (req.url ?? '').split('?')[0] !== '/v1/chat/completions') {
      req.resume();
      return send(res, 404, errorBody(`Invalid URL (${req.method} ${req.url})`, 'invalid_request_error'));
    }
    // The one pending timer of this response: a stream schedules its next step only once the last has run.
    let timer: NodeJS.Timeout | undefined;
    const later = (ms: number, step: () => void): void => {
      if (!res.destroyed) timer = setTimeout(() => !res.destroyed && step(), ms);
    };
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(parts).toString('utf8'));
      } catch {
        // answered 400 below, as a body without a model
      }
      const model = isRecord(body) && typeof body.model === 'string' ? body.model : '';
      const stream = isRecord(body) && body.stream === true;
      const fault = model === '' ? undefined : faultFor(model, at);
      const kind = fault?.kind ?? 'bad_request';
      const attempt: Attempt = { model, at, stream, fault: kind, headers: req.headers, body, ended: undefined };
      attempts.push(attempt);
      let cut = false; // the upstream ended this answer itself: not the client going away
      res.once('close', () => {
        clearTimeout(timer);
        attempt.ended = { at: elapsed(), by: res.writableFinished || cut || stopping ? 'upstream' : 'client' };
      });
      if (fault === undefined || !isRecord(body)) {
        return send(res, 400, errorBody('The body must be a JSON object with a model.', 'invalid_request_error'));
      }
      const prompt = readPrompt(body.messages);
      const max = body.max_completion_tokens ?? body.max_tokens;
      const count = typeof max === 'number' && max >= 1 ? Math.min(answerTokens, Math.floor(max)) : answerTokens;
      const tokens = words(seed, prompt.text, count);
      const finish = count < answerTokens ? 'length' : 'stop';
      const usage = { prompt_tokens: prompt.tokens, completion_tokens: count, total_tokens: prompt.tokens + count };
      const id = `chatcmpl-fault${++served}`;
      const created = Math.floor(Date.now() / 1000);
      const writeThenCut = (text: string): void =>
        void res.write(text, () =>
          later(CUT_PAUSE_MS, () => {
            cut = true;
            res.destroy();
          }),
        );

      switch (fault.kind) {
        case 'status': {
          const text = fault.body === undefined ? defaultError(fault.status, model) : JSON.stringify(fault.body);
          return send(
            res,
            fault.status,
            text,
            fault.retryAfter === undefined ? {} : { 'retry-after': fault.retryAfter },
          );
        }
        case 'context_length': {
          const message = `This model's maximum context length is 128000 tokens. However, your messages resulted in ${prompt.tokens} tokens. Please reduce the length of the messages.`;
          return send(res, 400, errorBody(message, 'invalid_request_error', 'context_length_exceeded', 'messages'));
        }
        case 'content_policy': {
          const message = `Your request was rejected as a result of our safety system. ${fault.reason ?? 'Your prompt may contain text that is not allowed by our safety system.'}`;
          return send(res, 400, errorBody(message, 'invalid_request_error', 'content_policy_violation'));
        }
        case 'reset':
          cut = true;
          return void req.socket.resetAndDestroy();
        case 'silent':
          return;
      }
      const first = fault.kind === 'slow_first_token' ? fault.ms : ttftMs;

      if (!stream) {
        const message = { role: 'assistant', content: tokens.join(''), refusal: null };
        const choices = [{ index: 0, message, logprobs: null, finish_reason: finish }];
        const text = JSON.stringify({ id, object: 'chat.completion', created, model, choices, usage });
        return later(first + tpotMs * count, () => {
          if (fault.kind === 'malformed_event') return send(res, 200, '{not json');
          if (fault.kind === 'error_event') return send(res, 200, errorBody(SERVER_ERROR, 'server_error'));
          if (fault.kind !== 'cut_after' && fault.kind !== 'stall_after') return send(res, 200, text);
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
          const half = text.slice(0, Math.floor(text.length / 2));
          if (fault.kind === 'cut_after') writeThenCut(half);
          else res.write(half);
        });
      }

      // OpenAI puts `usage: null` on every chunk once usage is asked for.
      const includeUsage = isRecord(body.stream_options) && body.stream_options.include_usage === true;
      const chunk = (choices: Json[], chunkUsage: Json = null): string =>
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices, ...(includeUsage ? { usage: chunkUsage } : {}) })}\n\n`;
      const choice = (delta: Json, finish_reason: Json = null): Json => ({
        index: 0,
        delta,
        logprobs: null,
        finish_reason,
      });
      // The normal stream, each event with the delay before it; events 1..count are the deltas.
      let events = [
        { delay: first, text: chunk([choice({ role: 'assistant', content: '', refusal: null })]) },
        ...tokens.map((token, i) => ({ delay: i === 0 ? 0 : tpotMs, text: chunk([choice({ content: token })]) })),
        { delay: 0, text: chunk([choice({}, finish)]) },
        ...(includeUsage ? [{ delay: 0, text: chunk([], usage) }] : []),
        { delay: 0, text: 'data: [DONE]\n\n' },
      ];
      const upTo = (n: number): number => 1 + Math.min(Math.max(0, n), count);
      if (fault.kind === 'cut_after' || fault.kind === 'stall_after') events = events.slice(0, upTo(fault.tokens));
      if (fault.kind === 'malformed_event')
        events.splice(upTo(fault.after), 0, { delay: 0, text: 'data: {not json\n\n' });
      if (fault.kind === 'no_done') events.pop();
      if (fault.kind === 'error_event') {
        events = fault.after <= 0 ? [] : events.slice(0, upTo(fault.after));
        events.push({
          delay: events.length === 0 ? first : 0,
          text: `data: ${errorBody(SERVER_ERROR, 'server_error')}\n\n`,
        });
      }

      const head = (): void => {
        if (res.headersSent) return;
        res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
        res.flushHeaders();
      };
      if (fault.kind === 'slow_first_token') head();
      let next = 0;
      // Events due together leave in one write; after the last, the fault decides how the body ends.
      const flush = (): void => {
        let out = '';
        do out += events[next++]!.text;
        while (next < events.length && events[next]!.delay <= 0);
        head();
        const following = events[next];
        if (following) {
          res.write(out);
          later(following.delay, flush);
        } else if (fault.kind === 'cut_after') writeThenCut(out);
        else if (fault.kind === 'stall_after') res.write(out);
        else res.end(out);
      };
      later(events[0]!.delay, flush);
    });
  });
  const listen = (): Promise<void> =>
    new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        port = (server.address() as AddressInfo).port;
        listening = true;
        stopping = false;
        resolve();
      });
    });
  // Destroying the sockets closes their responses, whose close clears their timers and records their end.
  const down = async (): Promise<void> => {
    if (!listening) return;
    listening = false;
    stopping = true;
    const closing = [...responses].map((res) => once(res, 'close'));
    const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await Promise.all([stopped, ...closing]);
  };

  await listen();
  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    script: (model, script) => void scripts.set(model, { script, taken: 0 }),
    downFor(model, ms, fault = { kind: 'status', status: 503 }) {
      const until = elapsed() + ms;
      scripts.set(model, { script: (_attempt, at) => (at < until ? fault : OK), taken: 0 });
    },
    attempts,
    attemptsOf: (model) => attempts.filter((attempt) => attempt.model === model),
    reset() {
      scripts.clear();
      attempts.length = 0;
    },
    contentFor: (messages) => words(seed, readPrompt(messages).text, answerTokens).join(''),
    down,
    up: () =>
      closed ? Promise.reject(new Error('the fault upstream is closed')) : listening ? Promise.resolve() : listen(),
    close: () => (closed ??= down()),
  };
}
