/**
 * A simulated OpenAI-compatible provider: a real HTTP server on loopback that answers the
 * Chat Completions API as providers do, so that the gateway, its tests, the offline demo and
 * the benchmarks have something to forward to without internet. Plain node:http, because it is
 * also a benchmark target: whatever it costs is counted against the gateway in front of it.
 *
 * Endpoints (anything else answers 404 in OpenAI's error shape):
 * - `POST /v1/chat/completions`: `{model, messages, stream?, stream_options?: {include_usage?},
 *   max_tokens? | max_completion_tokens?}`. Any model name is served. Only `choices[0]` is
 *   generated (`n` is ignored); tools and response formats are ignored.
 * - `GET /v1/models`: a few models in OpenAI's list shape.
 *
 * Determinism: the answer depends only on the seed and the messages (not on the model, the
 * stream flag or max_tokens), so a streamed answer assembles to the non-streamed one and a
 * max_tokens answer is a prefix of the unbounded one.
 * - prompt_tokens: ceil(characters / 4) + 4 per message, at least 1.
 * - completion tokens: MIN_COMPLETION..MAX_COMPLETION drawn from seed and prompt; max_tokens
 *   below that cuts the answer with finish_reason 'length'. One token is one word of the
 *   vocabulary (with its leading space and any punctuation), so `content.split(' ').length`
 *   equals completion_tokens.
 * - cached_tokens: prompts of CACHE_MIN_TOKENS or more have a drawn share of 25-90 % cached,
 *   in blocks of 128 tokens as OpenAI reports it; shorter prompts 0.
 *
 * Pacing (`realistic`, default true): nothing, not even the status line, is sent before the
 * first token (after `ttftMs`), so a gateway's time to first byte is the provider's time to first
 * token; then each streamed delta of k tokens follows k × `tpotMs` later. A non-streamed answer
 * comes whole after ttft + tokens × tpot. `realistic: false` answers at once.
 *
 * Misbehaviour, chosen by the request so that tests and the demo can ask for it:
 * - header `x-simulate: error-500` → 500, `{"error":{"type":"server_error",…}}`.
 * - header `x-simulate: rate-limited` → 429 with `retry-after: 1` and OpenAI's rate-limit error
 *   (`type: "requests"`, `code: "rate_limit_exceeded"`).
 * - header `x-simulate: abort-stream` → streamed: the role delta and ABORT_AFTER_DELTAS content
 *   deltas, then the socket is destroyed (no finish chunk, no `[DONE]`, an unterminated chunked
 *   body); non-streamed: the socket is destroyed before any answer.
 * - header `x-simulate: slow` → SLOW_TTFT_MS more before the first token (also when not
 *   realistic), so that a gateway's timeout can be tested.
 * - a model name containing `-error` → 500 as for `error-500`, so that demo traffic can produce
 *   errors without headers.
 * - any other `x-simulate` value → 400, so that a misspelt mode cannot pass for a working one.
 * - with `outage`, its models answer 503 during its minutes of every hour (the demo's provider
 *   outage, `DEMO_OUTAGE`: its multi-target routes fail over, its breakers open and close).
 * The header modes act on chat completions only.
 *
 * Authentication: with `apiKey`, every request must carry `Authorization: Bearer <apiKey>`;
 * otherwise 401 (`invalid_api_key`). The last Authorization header received is kept so that a
 * gateway test can check which key was forwarded.
 *
 * A client that goes away stops its answer: the one pending timer of that response is cleared.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SimulatedUpstreamOptions {
  /** Seed of the deterministic generator (content, token counts, cached share); outcomes are the request's choice. */
  seed?: number;
  /** false: answer at once (benchmarks measure only what the gateway adds). true (default): realistic pacing. */
  realistic?: boolean;
  /** Milliseconds before the first token when realistic (default 300). */
  ttftMs?: number;
  /** Milliseconds per generated token when realistic (default 10). */
  tpotMs?: number;
  /** The bearer key it expects; requests without it answer 401 in OpenAI's error shape. Absent: any key accepted. */
  apiKey?: string;
  /** An outage each hour: these models answer 503 from minute `from` to minute `to` of every hour. */
  outage?: Outage;
  /** The clock of the outage, epoch ms (default Date.now). */
  now?: () => number;
}

/** A provider down for a few minutes each hour, as the demo's story has it. */
export interface Outage {
  models: readonly string[];
  fromMinute: number;
  toMinute: number;
}

/** The demo's outage: OpenAI's gpt-4o-mini, from minute 20 to 24 of each hour, so `svc/` routes show their fallbacks. */
export const DEMO_OUTAGE: Outage = { models: ['gpt-4o-mini-2024-07-18'], fromMinute: 20, toMinute: 24 };

/** Whether `outage` holds at `at` (epoch ms). */
export function inOutage(outage: Outage, at: number): boolean {
  const minute = new Date(at).getUTCMinutes();
  return minute >= outage.fromMinute && minute < outage.toMinute;
}

export interface SimulatedUpstream {
  /** Base URL to give an OpenAI client, e.g. `http://127.0.0.1:PORT/v1`. */
  url: string;
  /** Stops listening, ends open connections (and so their pending answers) and resolves. */
  close(): Promise<void>;
  /** Requests received so far, on any path and whatever their answer. */
  readonly requests: number;
  /** The Authorization header of the last request received, as sent. */
  lastAuthorization(): string | undefined;
}

const DEFAULT_SEED = 1;
const DEFAULT_TTFT_MS = 300;
const DEFAULT_TPOT_MS = 10;
const SLOW_TTFT_MS = 5_000;
const ABORT_AFTER_DELTAS = 3;
/** Between the last delta and the dropped socket: long enough for the client to read what was sent first. */
const ABORT_PAUSE_MS = 25;
const MIN_COMPLETION = 8;
const MAX_COMPLETION = 160;
const CACHE_MIN_TOKENS = 1024;
const CACHE_BLOCK = 128;
/** Generous for long prompts, bounded so that a runaway client cannot fill the memory. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

const MODES = ['error-500', 'rate-limited', 'abort-stream', 'slow'] as const;
type SimulateMode = (typeof MODES)[number];

const MODELS = [
  'gpt-4o-mini-2024-07-18',
  'gpt-4o-2024-08-06',
  'gpt-4.1-2025-04-14',
  'gpt-4.1-mini-2025-04-14',
  'o3-mini-2025-01-31',
];
/** A fixed date, so that the list is the same on every run. */
const MODELS_CREATED = 1_721_172_741;

const VOCABULARY = [
  'the', 'gateway', 'request', 'model', 'token', 'answer', 'provider', 'latency', 'stream', 'cache',
  'prompt', 'route', 'key', 'budget', 'limit', 'usage', 'response', 'client', 'server', 'cost',
  'is', 'was', 'can', 'will', 'should', 'may', 'must', 'often', 'rarely', 'always',
  'fast', 'slow', 'cheap', 'reliable', 'simple', 'careful', 'steady', 'quiet', 'clear', 'useful',
  'and', 'but', 'so', 'then', 'because', 'while', 'when', 'before', 'after', 'with',
  'every', 'each', 'some', 'most', 'few', 'one', 'two', 'many', 'this', 'that',
  'returns', 'sends', 'reads', 'counts', 'keeps', 'checks', 'measures', 'forwards', 'waits', 'retries',
]; // prettier-ignore

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

interface ChatRequest {
  model: string;
  stream: boolean;
  includeUsage: boolean;
  maxTokens: number | null;
  /** Roles and texts of the messages, the input of the generator. */
  promptText: string;
  promptTokens: number;
}

interface Completion {
  /** One entry per token; joined they make the content. */
  tokens: string[];
  /** How many tokens each streamed delta carries, summing to tokens.length. */
  deltas: number[];
  finishReason: 'stop' | 'length';
  usage: Json;
}

/** An error answer already shaped; thrown by validation so that the handler stays linear. */
class ApiRefusal {
  constructor(
    readonly status: number,
    readonly message: string,
    readonly type: string,
    readonly code: string | null = null,
    readonly param: string | null = null,
  ) {}
}

/**
 * The one pending timer of a response. Every delay goes through it so that a client that
 * disconnects (or `close()`) leaves nothing scheduled.
 */
class Pace {
  private timer: NodeJS.Timeout | undefined;
  gone = false;

  constructor(res: ServerResponse) {
    res.once('close', () => {
      this.gone = true;
      clearTimeout(this.timer);
      this.timer = undefined;
    });
  }

  /** Runs `step` after `ms`, at once when `ms` is 0: the unpaced path must not wait a tick per chunk. */
  after(ms: number, step: () => void): void {
    if (this.gone) return;
    if (ms <= 0) {
      step();
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.gone) step();
    }, ms);
  }
}

export function startSimulatedUpstream(options: SimulatedUpstreamOptions = {}): Promise<SimulatedUpstream> {
  const seed = options.seed ?? DEFAULT_SEED;
  const realistic = options.realistic ?? true;
  const ttftMs = realistic ? Math.max(0, options.ttftMs ?? DEFAULT_TTFT_MS) : 0;
  const tpotMs = realistic ? Math.max(0, options.tpotMs ?? DEFAULT_TPOT_MS) : 0;
  const expected = options.apiKey === undefined ? undefined : `Bearer ${options.apiKey}`;

  let requests = 0;
  let lastAuthorization: string | undefined;
  let served = 0;

  // Nagle would hold back the small, paced deltas of a stream.
  const server = createServer({ noDelay: true }, (req, res) => {
    requests++;
    lastAuthorization = req.headers.authorization;
    // A client that goes away while sending its body is not an error of the simulator.
    req.on('error', () => res.destroy());
    try {
      route(req, res);
    } catch (error) {
      refuse(res, error);
    }
  });

  function route(req: IncomingMessage, res: ServerResponse): void {
    if (expected !== undefined && req.headers.authorization !== expected) {
      req.resume();
      throw req.headers.authorization === undefined
        ? new ApiRefusal(401, "You didn't provide an API key.", 'invalid_request_error')
        : new ApiRefusal(401, 'Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key');
    }
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'POST' && path === '/v1/chat/completions') {
      const mode = simulateMode(req);
      readJson(
        req,
        (body) => {
          try {
            chatCompletion(res, parseChatRequest(body), mode);
          } catch (error) {
            refuse(res, error);
          }
        },
        (error) => refuse(res, error),
      );
      return;
    }
    req.resume();
    if (req.method === 'GET' && path === '/v1/models') {
      sendJson(res, 200, {
        object: 'list',
        data: MODELS.map((id) => ({ id, object: 'model', created: MODELS_CREATED, owned_by: 'simulated' })),
      });
      return;
    }
    throw new ApiRefusal(404, `Invalid URL (${req.method ?? 'GET'} ${path})`, 'invalid_request_error');
  }

  function chatCompletion(res: ServerResponse, request: ChatRequest, mode: SimulateMode | null): void {
    const { outage } = options;
    if (outage && outage.models.includes(request.model) && inOutage(outage, (options.now ?? Date.now)())) {
      throw new ApiRefusal(503, 'The server is overloaded or not ready yet.', 'server_error');
    }
    if (mode === 'error-500' || request.model.includes('-error')) {
      throw new ApiRefusal(
        500,
        'The server had an error while processing your request. Sorry about that!',
        'server_error',
      );
    }
    if (mode === 'rate-limited') {
      sendJson(
        res,
        429,
        errorBody(
          new ApiRefusal(
            429,
            `Rate limit reached for ${request.model} on requests per min (RPM): Limit 60, Used 60, Requested 1. Please try again in 1s.`,
            'requests',
            'rate_limit_exceeded',
          ),
        ),
        {
          'retry-after': '1',
          'x-ratelimit-limit-requests': '60',
          'x-ratelimit-remaining-requests': '0',
          'x-ratelimit-reset-requests': '1s',
        },
      );
      return;
    }
    if (mode === 'abort-stream' && !request.stream) {
      res.destroy();
      return;
    }
    const pace = new Pace(res);
    const completion = complete(seed, request);
    const firstToken = ttftMs + (mode === 'slow' ? SLOW_TTFT_MS : 0);
    const id = `chatcmpl-sim${(++served).toString(36)}${hash(seed, request.promptText).toString(36)}`;
    const created = Math.floor(Date.now() / 1000);
    if (!request.stream) {
      pace.after(firstToken + tpotMs * completion.tokens.length, () =>
        sendJson(
          res,
          200,
          {
            id,
            object: 'chat.completion',
            created,
            model: request.model,
            system_fingerprint: 'fp_simulated',
            choices: [
              {
                index: 0,
                message: { role: 'assistant', content: completion.tokens.join(''), refusal: null },
                logprobs: null,
                finish_reason: completion.finishReason,
              },
            ],
            usage: completion.usage,
          },
          { 'x-request-id': `req_${id}` },
        ),
      );
      return;
    }
    streamCompletion(res, pace, { id, created, request, completion, firstToken, abort: mode === 'abort-stream' });
  }

  function streamCompletion(
    res: ServerResponse,
    pace: Pace,
    plan: {
      id: string;
      created: number;
      request: ChatRequest;
      completion: Completion;
      firstToken: number;
      abort: boolean;
    },
  ): void {
    const { id, created, request, completion } = plan;
    // OpenAI puts `usage: null` on every chunk once usage is asked for: a gateway must meet the same stream here.
    const chunk = (choices: Json[], usage: Json = null): string =>
      `data: ${JSON.stringify({
        id,
        object: 'chat.completion.chunk',
        created,
        model: request.model,
        system_fingerprint: 'fp_simulated',
        choices,
        ...(request.includeUsage ? { usage } : {}),
      })}\n\n`;
    const delta = (content: Json, finishReason: Json = null, role?: string): Json => ({
      index: 0,
      delta: finishReason === null ? { ...(role ? { role, refusal: null } : {}), content } : {},
      logprobs: null,
      finish_reason: finishReason,
    });

    // Each event with the delay before it; events of delay 0 leave in the same write.
    const events: { delayMs: number; text: string }[] = [
      { delayMs: plan.firstToken, text: chunk([delta('', null, 'assistant')]) },
    ];
    let next = 0;
    for (const [index, size] of completion.deltas.entries()) {
      if (plan.abort && index === ABORT_AFTER_DELTAS) break;
      const content = completion.tokens.slice(next, next + size).join('');
      next += size;
      events.push({ delayMs: index === 0 ? 0 : tpotMs * size, text: chunk([delta(content)]) });
    }
    if (!plan.abort) {
      events.push({ delayMs: 0, text: chunk([delta(null, completion.finishReason)]) });
      if (request.includeUsage) events.push({ delayMs: 0, text: chunk([], completion.usage) });
      events.push({ delayMs: 0, text: 'data: [DONE]\n\n' });
    }

    let at = 0;
    const flush = (): void => {
      let out = '';
      do out += events[at++]!.text;
      while (at < events.length && events[at]!.delayMs <= 0);
      if (!res.headersSent) {
        res.writeHead(200, {
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-cache',
          'x-request-id': `req_${id}`,
        });
      }
      const following = events[at];
      if (following) {
        res.write(out);
        pace.after(following.delayMs, flush);
      } else if (plan.abort) {
        res.write(out, () => pace.after(ABORT_PAUSE_MS, () => res.destroy()));
      } else {
        res.end(out);
      }
    };
    pace.after(events[0]!.delayMs, flush);
  }

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      const { port } = server.address() as AddressInfo;
      let closing: Promise<void> | undefined;
      resolve({
        url: `http://127.0.0.1:${port}/v1`,
        close: () =>
          (closing ??= new Promise<void>((done, fail) => {
            server.close((error) => (error ? fail(error) : done()));
            server.closeAllConnections();
          })),
        get requests() {
          return requests;
        },
        lastAuthorization: () => lastAuthorization,
      });
    });
  });
}

function simulateMode(req: IncomingMessage): SimulateMode | null {
  const header = req.headers['x-simulate'];
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value === '') return null;
  const mode = MODES.find((known) => known === value.trim().toLowerCase());
  if (!mode) {
    req.resume();
    throw new ApiRefusal(
      400,
      `Unknown x-simulate mode '${value}'; known: ${MODES.join(', ')}.`,
      'invalid_request_error',
      null,
      'x-simulate',
    );
  }
  return mode;
}

function readJson(req: IncomingMessage, onBody: (body: unknown) => void, onError: (error: ApiRefusal) => void): void {
  const parts: Buffer[] = [];
  let size = 0;
  let refused = false;
  req.on('data', (part: Buffer) => {
    if (refused) return;
    size += part.length;
    if (size > MAX_BODY_BYTES) {
      refused = true;
      parts.length = 0;
      onError(new ApiRefusal(413, `The request body exceeds ${MAX_BODY_BYTES} bytes.`, 'invalid_request_error'));
      return;
    }
    parts.push(part);
  });
  req.on('end', () => {
    if (refused) return;
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(parts, size).toString('utf8'));
    } catch {
      onError(
        new ApiRefusal(
          400,
          "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly.)",
          'invalid_request_error',
        ),
      );
      return;
    }
    onBody(body);
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseChatRequest(body: unknown): ChatRequest {
  if (!isRecord(body)) throw new ApiRefusal(400, 'The request body must be a JSON object.', 'invalid_request_error');
  const { model, messages, stream, stream_options: streamOptions } = body;
  if (typeof model !== 'string' || model === '') {
    throw new ApiRefusal(400, 'you must provide a model parameter', 'invalid_request_error', null, 'model');
  }
  if (!Array.isArray(messages) || messages.length === 0) {
    throw new ApiRefusal(400, "'messages' must be a non-empty array.", 'invalid_request_error', null, 'messages');
  }
  let promptText = '';
  let promptTokens = 0;
  for (const [index, message] of messages.entries()) {
    if (!isRecord(message) || typeof message.role !== 'string') {
      throw new ApiRefusal(
        400,
        `messages[${index}] must be an object with a role.`,
        'invalid_request_error',
        null,
        `messages[${index}]`,
      );
    }
    const text = messageText(message.content);
    promptText += `${message.role}\u0000${text}\u0000`;
    promptTokens += Math.ceil(text.length / 4) + 4;
  }
  const maxField = body.max_completion_tokens !== undefined ? 'max_completion_tokens' : 'max_tokens';
  const max = body[maxField];
  if (max !== undefined && max !== null && (typeof max !== 'number' || !Number.isInteger(max) || max < 1)) {
    throw new ApiRefusal(400, `'${maxField}' must be a positive integer.`, 'invalid_request_error', null, maxField);
  }
  return {
    model,
    stream: stream === true,
    includeUsage: isRecord(streamOptions) && streamOptions.include_usage === true,
    maxTokens: typeof max === 'number' ? max : null,
    promptText,
    promptTokens: Math.max(1, promptTokens),
  };
}

/** A message's text: a string, or the text parts of a content array (images and audio count nothing). */
function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const part of content) if (isRecord(part) && typeof part.text === 'string') text += part.text;
  return text;
}

function complete(seed: number, request: ChatRequest): Completion {
  const random = generator(hash(seed, request.promptText));
  // Drawn before the tokens and whatever the bounds, so that max_tokens only cuts the same answer.
  const planned = MIN_COMPLETION + Math.floor(random() * (MAX_COMPLETION - MIN_COMPLETION + 1));
  const cacheShare = 0.25 + random() * 0.65;
  const count = request.maxTokens === null ? planned : Math.min(planned, request.maxTokens);

  const tokens: string[] = [];
  let sentenceLeft = 0;
  for (let i = 0; i < count; i++) {
    let word = VOCABULARY[Math.floor(random() * VOCABULARY.length)]!;
    if (sentenceLeft === 0) {
      sentenceLeft = 5 + Math.floor(random() * 10);
      word = word[0]!.toUpperCase() + word.slice(1);
    }
    sentenceLeft--;
    // The planned answer, not a cut one, ends on a full stop.
    if (sentenceLeft === 0 || i === planned - 1) word += '.';
    else if (random() < 0.06) word += ',';
    tokens.push(i === 0 ? word : ` ${word}`);
  }

  const deltas: number[] = [];
  for (let left = count; left > 0;) {
    const size = Math.min(left, 1 + Math.floor(random() * 3));
    deltas.push(size);
    left -= size;
  }

  const cached =
    request.promptTokens >= CACHE_MIN_TOKENS
      ? Math.floor((request.promptTokens * cacheShare) / CACHE_BLOCK) * CACHE_BLOCK
      : 0;
  return {
    tokens,
    deltas,
    finishReason: count < planned ? 'length' : 'stop',
    usage: {
      prompt_tokens: request.promptTokens,
      completion_tokens: count,
      total_tokens: request.promptTokens + count,
      prompt_tokens_details: { cached_tokens: cached, audio_tokens: 0 },
      completion_tokens_details: {
        reasoning_tokens: 0,
        audio_tokens: 0,
        accepted_prediction_tokens: 0,
        rejected_prediction_tokens: 0,
      },
    },
  };
}

/** FNV-1a over the seed and the text: cheap, stable across platforms and runs. */
function hash(seed: number, text: string): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** mulberry32: a 32-bit state is plenty for a few hundred draws per answer. */
function generator(state: number): () => number {
  let s = state >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function errorBody(refusal: ApiRefusal): Json {
  return { error: { message: refusal.message, type: refusal.type, param: refusal.param, code: refusal.code } };
}

function sendJson(res: ServerResponse, status: number, body: Json, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function refuse(res: ServerResponse, error: unknown): void {
  if (!(error instanceof ApiRefusal)) {
    // A bug of the simulator: answered as a provider's own failure would be, never thrown at the server.
    sendJson(res, 500, errorBody(new ApiRefusal(500, String(error), 'server_error')));
    return;
  }
  // Past the body limit the rest of the body is not worth reading: the connection ends with the answer.
  sendJson(res, error.status, errorBody(error), error.status === 413 ? { connection: 'close' } : {});
}
