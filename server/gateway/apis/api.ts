import type { IncomingHttpHeaders } from 'node:http';
import type { RouteKind, WireApi } from '../../domain/routes-document.js';
import type { RequestApi } from '../../schemas/request-log.js';
import type { AnswerFacts, EventReader } from '../sse-events.js';

/** An error as the gateway words it, before it is put in the caller's API's shape. */
export interface ErrorWords {
  message: string;
  type: string;
  code: string | null;
}

/**
 * One API the gateway serves, passed through to targets that speak it: how its requests are
 * checked, bounded and sent upstream, how its answers and streams are measured, and how its
 * errors are worded for the caller's SDK. The attempt loop (failover.ts) is the same for all.
 */
export interface GatewayApi {
  /** As the request-log row names the API it came in on. */
  name: RequestApi;
  /** The wire format a target's provider must speak to be asked this API. */
  wire: WireApi;
  /** The kind of route it serves. */
  kind: RouteKind;
  /** After the provider's base address (`https://api.openai.com/v1`). */
  path: string;
  /** Charged at the route's price; false for a call that costs nothing upstream (counting tokens). */
  billed: boolean;
  /** What is wrong with the body before anything is asked of the key, or null. */
  malformed(body: Record<string, unknown>): string | null;
  streams(body: Record<string, unknown>): boolean;
  /** The prompt's text in characters, for an estimate where the upstream gives no usage. */
  promptCharacters(body: Record<string, unknown>): number;
  /** The body holds parts whose tokens its characters do not bound (images, files). */
  uncertainBound(body: Record<string, unknown>): boolean;
  /** The most tokens the answer may generate, all its choices together; `unset` stands for a maximum the caller did not set. */
  maxGenerated(body: Record<string, unknown>, unset: number): number;
  /** The caller's body as the target is asked it: its model, whatever the gateway needs measured. */
  upstreamBody(body: Record<string, unknown>, model: string, stream: boolean): string;
  /** Headers the upstream is sent besides the content type. */
  upstreamHeaders(apiKey: string | null, incoming: IncomingHttpHeaders): Record<string, string>;
  answerFacts(text: string): AnswerFacts;
  /** A reader for one stream of this API's events; null for chat completions' own. */
  streamReader(): EventReader | null;
  /** Chat completions only: the caller asked for the usage chunk, which is otherwise kept back. */
  wantsUsage(body: Record<string, unknown>): boolean;
  /** An error answer's body, in the caller's API's shape. */
  errorBody(status: number, error: ErrorWords): unknown;
  /** The event that ends a stream the caller was reading, in its API's shape. */
  streamError(message: string, code: string): string;
  /** How it is asked of a target that speaks only another wire format, where it can be. */
  translations?: Partial<Record<WireApi, Translation>>;
}

/**
 * A request of one API asked of a target in another's (`upstream`), and its answer brought back:
 * the target is asked, measured and failed over as `upstream`; the caller reads its own API.
 */
export interface Translation {
  upstream: GatewayApi;
  /** The caller's body in the target's API, or why it cannot be said there without loss. */
  body(body: Record<string, unknown>, model: string): { ok: true; text: string } | { ok: false; message: string };
  /** A non-streamed answer in the caller's API; null when the target's cannot be read. */
  answer(text: string, body: Record<string, unknown>): string | null;
  /** A stream's translator: each event's data (parsed, or `[DONE]`) in, the caller's events out. */
  stream(body: Record<string, unknown>, promptCharacters: number): StreamTranslator;
}

export interface StreamTranslator {
  push(data: unknown): string;
  /**
   * A chunk that only adds `text` to the answer (`takenByText`), translated without parsing it;
   * null where it must be parsed and `push`ed instead (the stream's first chunk, whose id it takes).
   */
  pushText(text: string): string | null;
  /** The upstream's stream ended without saying it was done. */
  end(): string;
}

/**
 * How `api` is asked of a target that speaks `wires`: as it is (null) where it speaks the API, else
 * translated to a format it speaks, or undefined when it cannot be asked at all.
 */
export function askedAs(api: GatewayApi, wires: readonly WireApi[]): Translation | null | undefined {
  if (wires.includes(api.wire)) return null;
  for (const wire of wires) {
    const translation = api.translations?.[wire];
    if (translation) return translation;
  }
  return undefined;
}

/** The caller's body as the target is asked it, its model the target's: every field as sent. */
export const withModel = (body: Record<string, unknown>, model: string): string => JSON.stringify({ ...body, model });

/** An OpenAI-shaped error body: chat completions, responses and embeddings alike. */
export const openAiErrorBody = (_status: number, error: ErrorWords) => ({ error });

/** Bearer key, JSON body: what every OpenAI-compatible upstream takes. */
export function openAiHeaders(apiKey: string | null): Record<string, string> {
  return apiKey ? { authorization: `Bearer ${apiKey}` } : {};
}

export const positiveInteger = (value: unknown): number | null =>
  typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : null;

/** `stream` as both the gateway and the upstream read it: absent, null or a boolean. */
export function badStream(value: unknown): string | null {
  return value !== undefined && value !== null && typeof value !== 'boolean' ? 'stream must be a boolean.' : null;
}

/** Characters of the text in `value`: strings, and the `text` of parts and blocks, however nested. */
export function textCharacters(value: unknown, depth = 0): number {
  if (typeof value === 'string') return value.length;
  if (depth > 8 || value === null || typeof value !== 'object') return 0;
  if (Array.isArray(value)) {
    let characters = 0;
    for (const item of value) characters += textCharacters(item, depth + 1);
    return characters;
  }
  let characters = 0;
  for (const key of ['text', 'content', 'input', 'output', 'thinking', 'arguments']) {
    characters += textCharacters((value as Record<string, unknown>)[key], depth + 1);
  }
  return characters;
}

/** Whether `value` holds a part or block whose `type` is not among `bounded` (an image, a file). */
export function holdsUnbounded(value: unknown, bounded: ReadonlySet<string>, depth = 0): boolean {
  if (depth > 8 || value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some((item) => holdsUnbounded(item, bounded, depth + 1));
  const record = value as Record<string, unknown>;
  if (typeof record.type === 'string' && !bounded.has(record.type)) return true;
  return holdsUnbounded(record.content, bounded, depth + 1);
}

/** The data line of a server-sent event. */
export const sseData = (name: string | null, data: unknown): string =>
  `${name ? `event: ${name}\n` : ''}data: ${JSON.stringify(data)}\n\n`;
