/**
 * The simulated provider's HTTP plumbing, shared by its APIs: reading a JSON body, answering JSON
 * or a paced event stream, the one pending timer of a response, the `x-simulate` modes, and
 * errors shaped as OpenAI or Anthropic shape them.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Generous for long prompts, bounded so that a runaway client cannot fill the memory. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;
/** Between the last event and the dropped socket: long enough for the client to read what was sent first. */
const ABORT_PAUSE_MS = 25;

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** What every API of one simulated server shares. */
export interface Simulation {
  readonly seed: number;
  /** Milliseconds before the first token (0 when not realistic). */
  readonly ttftMs: number;
  /** Milliseconds per generated token (0 when not realistic). */
  readonly tpotMs: number;
  /** Whether `model` is in its outage now. */
  down(model: string): boolean;
}

export const MODES = ['error-500', 'rate-limited', 'abort-stream', 'slow', 'overloaded', 'error-event'] as const;
export type SimulateMode = (typeof MODES)[number];

export const SLOW_TTFT_MS = 5_000;
/** Content deltas sent before `abort-stream` drops a stream or `error-event` ends it with an error. */
export const ABORT_AFTER_DELTAS = 3;

/** The first token's delay for `mode`: `slow` adds SLOW_TTFT_MS, also when not realistic. */
export function firstTokenMs(sim: Simulation, mode: SimulateMode | null): number {
  return sim.ttftMs + (mode === 'slow' ? SLOW_TTFT_MS : 0);
}

/**
 * An error answer already shaped; thrown by validation so that the handlers stay linear. `type`
 * is the API's own (OpenAI's `invalid_request_error`, Anthropic's `rate_limit_error`…).
 */
export class ApiRefusal {
  constructor(
    readonly status: number,
    readonly message: string,
    readonly type: string,
    readonly code: string | null = null,
    readonly param: string | null = null,
    readonly headers: Record<string, string> = {},
  ) {}
}

/** How an API shapes an error's body. */
export type ErrorShape = (refusal: ApiRefusal) => Json;

export function openAiErrorBody(refusal: ApiRefusal): Json {
  return { error: { message: refusal.message, type: refusal.type, param: refusal.param, code: refusal.code } };
}

export function anthropicErrorBody(refusal: ApiRefusal): Json {
  return { type: 'error', error: { type: refusal.type, message: refusal.message } };
}

/**
 * The one pending timer of a response. Every delay goes through it so that a client that
 * disconnects (or `close()`) leaves nothing scheduled.
 */
export class Pace {
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

/** The request's `x-simulate` mode; an unknown one is refused (400) so that a misspelt mode cannot pass for a working one. */
export function simulateMode(req: IncomingMessage): SimulateMode | null {
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

export const INVALID_JSON_MESSAGE =
  "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly.)";

/**
 * Reads the body as JSON, then calls `handle` with it; whatever `handle` or the reading throws
 * or refuses is answered as an error of `shape`.
 */
export function withJsonBody(
  req: IncomingMessage,
  res: ServerResponse,
  shape: ErrorShape,
  handle: (body: unknown) => void,
  invalidJsonMessage = INVALID_JSON_MESSAGE,
): void {
  const parts: Buffer[] = [];
  let size = 0;
  let refused = false;
  req.on('data', (part: Buffer) => {
    if (refused) return;
    size += part.length;
    if (size > MAX_BODY_BYTES) {
      refused = true;
      parts.length = 0;
      refuse(
        res,
        new ApiRefusal(
          413,
          `The request body exceeds ${MAX_BODY_BYTES} bytes.`,
          shape === anthropicErrorBody ? 'request_too_large' : 'invalid_request_error',
        ),
        shape,
      );
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
      refuse(res, new ApiRefusal(400, invalidJsonMessage, 'invalid_request_error'), shape);
      return;
    }
    try {
      handle(body);
    } catch (error) {
      refuse(res, error, shape);
    }
  });
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function sendJson(res: ServerResponse, status: number, body: Json, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function refuse(res: ServerResponse, error: unknown, shape: ErrorShape): void {
  if (!(error instanceof ApiRefusal)) {
    // A bug of the simulator: answered as a provider's own failure would be, never thrown at the server.
    const type = shape === anthropicErrorBody ? 'api_error' : 'server_error';
    sendJson(res, 500, shape(new ApiRefusal(500, String(error), type)));
    return;
  }
  // Past the body limit the rest of the body is not worth reading: the connection ends with the answer.
  sendJson(res, error.status, shape(error), {
    ...error.headers,
    ...(error.status === 413 ? { connection: 'close' } : {}),
  });
}

/** One event of a stream, with the delay before it; events of delay 0 leave in the same write. */
export interface StreamEvent {
  delayMs: number;
  text: string;
}

/**
 * Sends `events` at their pace: the status line and headers with the first of them (so nothing
 * leaves before the first token), then each after its delay. `abort`: after the last event the
 * socket is destroyed (an unterminated chunked body) instead of ended. `onEnd` runs just before
 * the last write of a stream that is not aborted.
 */
export function sendEvents(
  res: ServerResponse,
  pace: Pace,
  events: readonly StreamEvent[],
  headers: Record<string, string>,
  abort: boolean,
  onEnd?: () => void,
): void {
  let at = 0;
  const flush = (): void => {
    let out = '';
    do out += events[at++]!.text;
    while (at < events.length && events[at]!.delayMs <= 0);
    if (!res.headersSent) {
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        ...headers,
      });
    }
    const following = events[at];
    if (following) {
      res.write(out);
      pace.after(following.delayMs, flush);
    } else if (abort) {
      res.write(out, () => pace.after(ABORT_PAUSE_MS, () => res.destroy()));
    } else {
      onEnd?.();
      res.end(out);
    }
  };
  pace.after(events[0]!.delayMs, flush);
}

/** An event of the named-event form Anthropic's and OpenAI's responses streams use. */
export function namedEvent(type: string, data: Json): string {
  return namedEventText(type, JSON.stringify(data));
}

/** The same, its data already written as JSON. */
export const namedEventText = (type: string, json: string): string => `event: ${type}\ndata: ${json}\n\n`;
