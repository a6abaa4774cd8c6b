/**
 * A simulated provider: a real HTTP server on loopback that answers OpenAI's Chat Completions,
 * Responses and Embeddings APIs and Anthropic's Messages API as those providers do, so that the
 * gateway, its tests, the offline demo and the benchmarks have something to forward to without
 * internet. Plain node:http, because it is also a benchmark target: whatever it costs is counted
 * against the gateway in front of it. Each API lives in ./simulated/ (the generator, the HTTP
 * plumbing, one file per API); this file is the server, its options and its routes.
 *
 * Endpoints (anything else answers 404 in OpenAI's error shape):
 * - `POST /v1/chat/completions`: `{model, messages, stream?, stream_options?: {include_usage?},
 *   max_tokens? | max_completion_tokens?}`. Any model name is served. Only `choices[0]` is
 *   generated (`n` is ignored); tools and response formats are ignored.
 * - `POST /v1/responses`: `{model, input: string | items, instructions?, stream?, tools?,
 *   tool_choice?, reasoning?, include?, previous_response_id?, max_output_tokens? (16 or more),
 *   store?, prompt_cache_key?, metadata?}`, answered as OpenAI's Response object or its event
 *   stream (`event: <type>` with `sequence_number`s: response.created, response.in_progress, per
 *   output item its added / deltas / done events, response.completed or response.incomplete).
 *   - Prompt: instructions (as a system message), then the previous response's conversation
 *     (its input and output, not its instructions), then the input's items (a message's text, a
 *     function_call's arguments, a function_call_output's output; other items count nothing).
 *   - `reasoning` (an object whose effort is not `none`): a reasoning item first, of 64-255
 *     drawn reasoning tokens (counted in output_tokens and reasoning_tokens, and in pacing); with
 *     `summary` auto/concise/detailed, a summary of 8-24 words; with `include:
 *     ["reasoning.encrypted_content"]`, an opaque encrypted_content.
 *   - Function tools (`{type: "function", name, parameters}`) and a tool_choice other than `none`,
 *     the input's last item not a function_call_output: a function_call item (tool_choice's named
 *     function, else the first) with arguments drawn to fit `parameters`, instead of a message.
 *   - max_output_tokens below the answer: status `incomplete`, `incomplete_details.reason`
 *     `max_output_tokens`, the message cut (a function call that does not fit is left out).
 *   - Responses are kept (unless `store: false`) once answered in full, the last
 *     `storedResponses` (default 1000) of them: `previous_response_id` must name one (else 400
 *     `previous_response_not_found`), and `GET /v1/responses/{id}` returns it (else 404).
 * - `POST /v1/embeddings`: `{model, input: string | strings | token ids | token id arrays,
 *   encoding_format?: float | base64, dimensions?}`. Unit vectors of `dimensions` (default 8)
 *   float32 components drawn from the seed and each input (not the model); base64 is their
 *   little-endian bytes. prompt_tokens: ceil(characters / 4) per string, the length of a token
 *   array. An empty input or an input of another type: 400.
 * - `POST /v1/messages` (Anthropic): `{model, max_tokens, messages, system?, stream?, tools?,
 *   tool_choice?, thinking?, metadata?}`, answered as Anthropic's message or its event stream
 *   (message_start, ping, per block content_block_start / deltas / stop, message_delta,
 *   message_stop).
 *   - Requests need `anthropic-version` (else 400) and, with `apiKey`, `x-api-key: <apiKey>` or
 *     `Authorization: Bearer <apiKey>` (else 401 `authentication_error`). Errors take Anthropic's
 *     shape `{"type":"error","error":{type, message}}`.
 *   - Prompt: the system prompt as a system message, then the messages; a message's text is its
 *     string, or its text blocks, tool_result contents and tool_use inputs (as JSON).
 *   - usage: input_tokens is the uncached part of the prompt, cache_read_input_tokens the cached
 *     part (the same share as chat's cached_tokens), cache_creation_input_tokens always 0.
 *   - `tools`, a tool_choice other than `none`, the last message the user's without tool_result
 *     blocks: the answer's first sentence, then a tool_use block (tool_choice's named tool, else the
 *     first) with an input drawn to fit its input_schema, stop_reason `tool_use` (streamed: its
 *     JSON in input_json_delta pieces, the first empty). After a tool_result: text, `end_turn`.
 *   - `thinking: {type: "enabled", budget_tokens}` (1024 or more, below max_tokens): a thinking
 *     block of 16-64 words first, with a signature (streamed: thinking_delta, then signature_delta).
 *   - output_tokens: the thinking, text and tool_use tokens (a token per 4 characters of its
 *     input's JSON); max_tokens below them cuts the text (`max_tokens`; a tool call that does
 *     not fit is left out).
 * - `POST /v1/messages/count_tokens` (Anthropic): `{model, messages, system?, tools?}` →
 *   `{input_tokens}`, the whole prompt as a message's usage counts it (input and cached parts).
 * - `GET /v1/models`: a few models in OpenAI's list shape.
 *
 * Determinism: the answer depends only on the seed and the prompt's text (not on the model, the
 * stream flag or a maximum), so a streamed answer assembles to the non-streamed one, a cut answer
 * is a prefix of the uncut one, and one conversation gets the same text through chat, messages
 * (system → `system`) and responses (system → `instructions`).
 * - prompt tokens: ceil(characters / 4) + 4 per message, at least 1.
 * - completion tokens: MIN_COMPLETION..MAX_COMPLETION drawn from seed and prompt; a maximum
 *   below that cuts the answer (finish_reason 'length', stop_reason 'max_tokens', status
 *   'incomplete'). One token is one word of the vocabulary (with its leading space and any
 *   punctuation), so `content.split(' ').length` equals completion_tokens.
 * - cached tokens: prompts of CACHE_MIN_TOKENS or more have a drawn share of 25-90 % cached,
 *   in blocks of 128 tokens as OpenAI reports it; shorter prompts 0.
 *
 * Pacing (`realistic`, default true): nothing, not even the status line, is sent before the
 * first token (after `ttftMs`), so a gateway's time to first byte is the provider's time to first
 * token; then each streamed delta of k tokens follows k × `tpotMs` later (a tool call's JSON
 * piece: a token per 4 characters; a reasoning item's hidden tokens pass before it is done). A
 * non-streamed answer comes whole after ttft + output tokens × tpot; embeddings after ttft;
 * count_tokens at once. `realistic: false` answers at once.
 *
 * Misbehaviour, chosen by the request so that tests and the demo can ask for it, on every
 * generating endpoint (chat, responses, embeddings, messages, count_tokens), each error in its
 * API's shape:
 * - header `x-simulate: error-500` → 500 (OpenAI `server_error`, Anthropic `api_error`).
 * - header `x-simulate: rate-limited` → 429 with `retry-after: 1` (OpenAI: `type: "requests"`,
 *   `code: "rate_limit_exceeded"`, `x-ratelimit-*-requests`; Anthropic: `rate_limit_error`,
 *   `anthropic-ratelimit-requests-*`).
 * - header `x-simulate: overloaded` → OpenAI's 503 `server_error`, Anthropic's 529
 *   `overloaded_error`.
 * - header `x-simulate: abort-stream` → streamed: the opening events and ABORT_AFTER_DELTAS
 *   content deltas, then the socket is destroyed (chat: no finish chunk, no `[DONE]`; messages:
 *   no message_stop; responses: no response.completed; an unterminated chunked body);
 *   non-streamed: the socket is destroyed before any answer.
 * - header `x-simulate: error-event` → streamed: as abort-stream, but then an error event in the
 *   API's form and a proper end (chat: `data: {"error":{…server_error}}`; messages: `event: error`
 *   with `overloaded_error`; responses: `response.failed` whose response carries
 *   `error: {code: "server_error"}`); non-streamed: after the answer's pacing, 500 (OpenAI) or
 *   529 `overloaded_error` (Anthropic) instead of the answer.
 * - header `x-simulate: slow` → SLOW_TTFT_MS more before the first token (also when not
 *   realistic), so that a gateway's timeout can be tested.
 * - a model name containing `-error` → 500 as for `error-500`, so that demo traffic can produce
 *   errors without headers.
 * - any other `x-simulate` value → 400, so that a misspelt mode cannot pass for a working one.
 * - with `outage`, its models answer 503 (Anthropic: 529 `overloaded_error`) during its minutes of
 *   every hour (the demo's provider outage, `DEMO_OUTAGE`: its multi-target routes fail over, its
 *   breakers open and close).
 *
 * Authentication: with `apiKey`, every OpenAI request must carry `Authorization: Bearer
 * <apiKey>`; otherwise 401 (`invalid_api_key`); Anthropic's as above. The last Authorization
 * header, x-api-key header and whole headers received are kept so that a gateway test can check
 * what was forwarded.
 *
 * A client that goes away stops its answer: the one pending timer of that response is cleared.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropicMessages, checkAnthropicHeaders } from './simulated/anthropic-messages.js';
import { chatCompletions } from './simulated/chat-completions.js';
import { embeddingsApi } from './simulated/embeddings.js';
import { DEFAULT_STORED_RESPONSES, responsesApi } from './simulated/responses.js';
import {
  anthropicErrorBody,
  ApiRefusal,
  openAiErrorBody,
  refuse,
  sendJson,
  simulateMode,
  withJsonBody,
  type ErrorShape,
  type SimulateMode,
  type Simulation,
} from './simulated/wire.js';

export { DEFAULT_STORED_RESPONSES } from './simulated/responses.js';

export interface SimulatedUpstreamOptions {
  /** Seed of the deterministic generator (content, token counts, cached share); outcomes are the request's choice. */
  seed?: number;
  /** false: answer at once (benchmarks measure only what the gateway adds). true (default): realistic pacing. */
  realistic?: boolean;
  /** Milliseconds before the first token when realistic (default 300). */
  ttftMs?: number;
  /** Milliseconds per generated token when realistic (default 10). */
  tpotMs?: number;
  /**
   * The key it expects: OpenAI's paths as `Authorization: Bearer`, Anthropic's as `x-api-key` (or
   * a bearer); requests without it answer 401 in the API's error shape. Absent: any key accepted.
   */
  apiKey?: string;
  /** An outage each hour: these models answer 503 (529 on Anthropic's paths) from minute `from` to minute `to` of every hour. */
  outage?: Outage;
  /** The clock of the outage, epoch ms (default Date.now). */
  now?: () => number;
  /** How many responses of the Responses API it keeps, the newest (default DEFAULT_STORED_RESPONSES, 1000). */
  storedResponses?: number;
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
  /** Base URL to give an OpenAI client, e.g. `http://127.0.0.1:PORT/v1` (an Anthropic client takes it without `/v1`). */
  url: string;
  /** Stops listening, ends open connections (and so their pending answers) and resolves. */
  close(): Promise<void>;
  /** Requests received so far, on any path and whatever their answer. */
  readonly requests: number;
  /** The Authorization header of the last request received, as sent. */
  lastAuthorization(): string | undefined;
  /** The x-api-key header of the last request received, as sent (undefined when it had none). */
  lastApiKey(): string | undefined;
  /** The headers of the last request received (`anthropic-version`, `anthropic-beta`…), as Node parsed them. */
  lastHeaders(): Readonly<IncomingHttpHeaders> | undefined;
}

const DEFAULT_SEED = 1;
const DEFAULT_TTFT_MS = 300;
const DEFAULT_TPOT_MS = 10;

const MODELS = [
  'gpt-4o-mini-2024-07-18',
  'gpt-4o-2024-08-06',
  'gpt-4.1-2025-04-14',
  'gpt-4.1-mini-2025-04-14',
  'o3-mini-2025-01-31',
];
/** A fixed date, so that the list is the same on every run. */
const MODELS_CREATED = 1_721_172_741;

const RESPONSE_PATH = /^\/v1\/responses\/([^/]+)$/;

export function startSimulatedUpstream(options: SimulatedUpstreamOptions = {}): Promise<SimulatedUpstream> {
  const realistic = options.realistic ?? true;
  const { outage } = options;
  const sim: Simulation = {
    seed: options.seed ?? DEFAULT_SEED,
    ttftMs: realistic ? Math.max(0, options.ttftMs ?? DEFAULT_TTFT_MS) : 0,
    tpotMs: realistic ? Math.max(0, options.tpotMs ?? DEFAULT_TPOT_MS) : 0,
    down: (model) =>
      outage !== undefined && outage.models.includes(model) && inOutage(outage, (options.now ?? Date.now)()),
  };
  const expected = options.apiKey === undefined ? undefined : `Bearer ${options.apiKey}`;
  const chat = chatCompletions(sim);
  const responses = responsesApi(sim, Math.max(1, options.storedResponses ?? DEFAULT_STORED_RESPONSES));
  const embeddings = embeddingsApi(sim);
  const messages = anthropicMessages(sim);

  let requests = 0;
  let lastHeaders: IncomingHttpHeaders | undefined;

  // Nagle would hold back the small, paced deltas of a stream.
  const server = createServer({ noDelay: true }, (req, res) => {
    requests++;
    lastHeaders = req.headers;
    // A client that goes away while sending its body is not an error of the simulator.
    req.on('error', () => res.destroy());
    const path = (req.url ?? '/').split('?')[0]!;
    const anthropic = path === '/v1/messages' || path.startsWith('/v1/messages/');
    const shape = anthropic ? anthropicErrorBody : openAiErrorBody;
    try {
      if (anthropic) routeAnthropic(req, res, path);
      else route(req, res, path);
    } catch (error) {
      refuse(res, error, shape);
    }
  });

  /** Reads the mode, then the body, and hands both to `handle`; refusals in `shape`. */
  function generating(
    req: IncomingMessage,
    res: ServerResponse,
    shape: ErrorShape,
    handle: (res: ServerResponse, body: unknown, mode: SimulateMode | null) => void,
  ): void {
    const mode = simulateMode(req);
    withJsonBody(req, res, shape, (body) => handle(res, body, mode));
  }

  function route(req: IncomingMessage, res: ServerResponse, path: string): void {
    if (expected !== undefined && req.headers.authorization !== expected) {
      req.resume();
      throw req.headers.authorization === undefined
        ? new ApiRefusal(401, "You didn't provide an API key.", 'invalid_request_error')
        : new ApiRefusal(401, 'Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key');
    }
    if (req.method === 'POST') {
      const handle =
        path === '/v1/chat/completions'
          ? chat
          : path === '/v1/responses'
            ? responses.create
            : path === '/v1/embeddings'
              ? embeddings
              : undefined;
      if (handle) {
        generating(req, res, openAiErrorBody, handle);
        return;
      }
    }
    req.resume();
    if (req.method === 'GET' && path === '/v1/models') {
      sendJson(res, 200, {
        object: 'list',
        data: MODELS.map((id) => ({ id, object: 'model', created: MODELS_CREATED, owned_by: 'simulated' })),
      });
      return;
    }
    const stored = req.method === 'GET' ? RESPONSE_PATH.exec(path) : null;
    if (stored) {
      responses.retrieve(res, decodeURIComponent(stored[1]!));
      return;
    }
    throw new ApiRefusal(404, `Invalid URL (${req.method ?? 'GET'} ${path})`, 'invalid_request_error');
  }

  function routeAnthropic(req: IncomingMessage, res: ServerResponse, path: string): void {
    try {
      checkAnthropicHeaders(req, options.apiKey);
    } catch (error) {
      req.resume();
      throw error;
    }
    if (req.method === 'POST' && path === '/v1/messages') {
      generating(req, res, anthropicErrorBody, messages.create);
      return;
    }
    if (req.method === 'POST' && path === '/v1/messages/count_tokens') {
      generating(req, res, anthropicErrorBody, messages.countTokens);
      return;
    }
    req.resume();
    throw new ApiRefusal(404, 'Not Found', 'not_found_error');
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
        lastAuthorization: () => lastHeaders?.authorization,
        lastApiKey: () => {
          const key = lastHeaders?.['x-api-key'];
          return Array.isArray(key) ? key[0] : key;
        },
        lastHeaders: () => lastHeaders,
      });
    });
  });
}
