import { isCount, jsonStringAt, type AnswerFacts, type EventReader, type SseEvent, type Usage } from '../sse-events.js';
import { anthropicErrorType } from '../translate/anthropic-errors.js';
import { messagesOverChat } from './messages-over-chat.js';
import {
  badStream,
  holdsUnbounded,
  positiveInteger,
  sseData,
  textCharacters,
  type ErrorWords,
  withModel,
  type GatewayApi,
} from './api.js';

/**
 * Anthropic's Messages API, `POST /v1/messages`, passed through to targets that speak it:
 * `anthropic-version`, `anthropic-beta` and every field of the body untouched but the model.
 */

/**
 * What is wrong with a request's `anthropic-version`, or null. A version is the date of one of
 * Anthropic's API versions, the first 2023-01-01; a newer one than the gateway has heard of is
 * passed on for its target to judge (the SDKs move to each new version as it comes), so only a
 * missing header, one that is no date, or one before the first is refused here.
 */
export function badVersion(version: string | string[] | undefined): string | null {
  if (version === undefined) return 'anthropic-version: header is required';
  const text = Array.isArray(version) ? version.join(',') : version;
  const date = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  const valid = date !== null && !Number.isNaN(Date.parse(`${text}T00:00:00Z`)) && text >= FIRST_VERSION;
  return valid
    ? null
    : `anthropic-version: unknown version ${JSON.stringify(text.slice(0, 40))}; a version is a date, ${FIRST_VERSION} or later, such as 2023-06-01`;
}

const FIRST_VERSION = '2023-01-01';

/** Blocks whose tokens their characters bound. */
const BOUNDED = new Set(['text', 'tool_use', 'tool_result', 'thinking', 'redacted_thinking']);

const ANTHROPIC_TYPES = new Set([
  'invalid_request_error',
  'authentication_error',
  'billing_error',
  'permission_error',
  'not_found_error',
  'request_too_large',
  'rate_limit_error',
  'timeout_error',
  'api_error',
  'overloaded_error',
]);

/**
 * `{"type": "error", "error": {"type", "message"}}`: the type its status has, or where the status
 * says no more than "invalid request" or "API error", an upstream's own more telling Anthropic
 * type (`overloaded_error` on a 500).
 */
export function anthropicErrorBody(status: number, error: ErrorWords) {
  const byStatus = anthropicErrorType(status);
  const generic = byStatus === 'invalid_request_error' || byStatus === 'api_error';
  const type = generic && ANTHROPIC_TYPES.has(error.type) ? error.type : byStatus;
  return { type: 'error', error: { type, message: error.message } };
}

interface AnthropicUsage {
  input_tokens?: unknown;
  output_tokens?: unknown;
  cache_creation_input_tokens?: unknown;
  cache_read_input_tokens?: unknown;
}

const countOr = (value: unknown, otherwise: number) => (isCount(value) ? value : otherwise);

/**
 * Anthropic's usage in OpenAI's terms: its `input_tokens` leave out what was read from and
 * written to the cache, which the prompt includes here. Null when it counted no prompt.
 */
export function anthropicUsage(usage: AnthropicUsage, previous: Usage | null = null): Usage | null {
  const read = countOr(usage.cache_read_input_tokens, previous?.cachedPrompt ?? 0);
  const write = countOr(usage.cache_creation_input_tokens, previous?.cacheWrite ?? 0);
  const input = isCount(usage.input_tokens) ? usage.input_tokens : previous ? previous.prompt - read - write : null;
  const output = countOr(usage.output_tokens, previous?.completion ?? 0);
  if (input === null || input + read + write === 0) return null;
  return { prompt: input + read + write, completion: output, cachedPrompt: read, cacheWrite: write };
}

interface Block {
  type?: unknown;
  text?: unknown;
  thinking?: unknown;
  input?: unknown;
  name?: unknown;
}

/** Characters a block generated: text, thinking, a tool call's name and input. */
function blockCharacters(block: Block): number {
  let characters = 0;
  if (typeof block.text === 'string') characters += block.text.length;
  if (typeof block.thinking === 'string') characters += block.thinking.length;
  if (typeof block.name === 'string') characters += block.name.length;
  if (block.type === 'tool_use' && block.input !== undefined) characters += JSON.stringify(block.input).length;
  return characters;
}

function messageFacts(text: string): AnswerFacts {
  let answer: { content?: unknown; usage?: AnthropicUsage };
  try {
    answer = JSON.parse(text) as typeof answer;
  } catch {
    return { usage: null, generatedCharacters: text.length };
  }
  if (!answer || typeof answer !== 'object') return { usage: null, generatedCharacters: text.length };
  let generatedCharacters = 0;
  if (Array.isArray(answer.content)) {
    for (const block of answer.content)
      if (block && typeof block === 'object') generatedCharacters += blockCharacters(block as Block);
  }
  return { usage: answer.usage ? anthropicUsage(answer.usage) : null, generatedCharacters };
}

interface StreamEvent {
  type?: unknown;
  message?: { usage?: AnthropicUsage };
  content_block?: Block;
  delta?: { type?: unknown; text?: unknown; partial_json?: unknown; thinking?: unknown; stop_reason?: unknown };
  usage?: AnthropicUsage;
}

/** A text delta as Anthropic writes it, its index's digits between the two parts, its text after. */
const TEXT_DELTA = '{"type":"content_block_delta","index":';
const TEXT_DELTA_BODY = ',"delta":{"type":"text_delta","text":';

/** One stream's events: usage from `message_start`, completed by each `message_delta`. */
class MessageEvents implements EventReader {
  private usage: Usage | null = null;

  /** A text delta written exactly as Anthropic writes one, nothing after its text: its text, unparsed. */
  skim(data: string, event: SseEvent): boolean {
    if (!data.startsWith(TEXT_DELTA)) return false;
    const body = data.indexOf(TEXT_DELTA_BODY, TEXT_DELTA.length);
    if (body < 0 || !/^\d+$/.test(data.slice(TEXT_DELTA.length, body))) return false;
    const text = jsonStringAt(data, body + TEXT_DELTA_BODY.length);
    if (text === null || text.end !== data.length - 3 || !data.endsWith('}}')) return false;
    event.content += text.value;
    return true;
  }

  read(data: unknown, event: SseEvent) {
    const frame = data as StreamEvent;
    switch (frame.type) {
      case 'message_start':
        this.usage = frame.message?.usage ? anthropicUsage(frame.message.usage) : null;
        return { done: false };
      case 'content_block_start':
        if (frame.content_block) event.otherCharacters += blockCharacters(frame.content_block);
        return { done: false };
      case 'content_block_delta': {
        const delta = frame.delta ?? {};
        if (typeof delta.text === 'string') event.content += delta.text;
        if (typeof delta.thinking === 'string') event.otherCharacters += delta.thinking.length;
        if (typeof delta.partial_json === 'string') event.otherCharacters += delta.partial_json.length;
        return { done: false };
      }
      case 'message_delta':
        if (frame.usage) this.usage = anthropicUsage(frame.usage, this.usage);
        event.usage = this.usage;
        if (typeof frame.delta?.stop_reason === 'string') event.finished = true;
        return { done: false };
      case 'message_stop':
        event.finished = true;
        return { done: true };
      case 'error':
        event.error = true;
        return { done: false };
      default:
        return { done: false };
    }
  }
}

export const messagesApi: GatewayApi = {
  name: 'messages',
  wire: 'anthropic',
  kind: 'chat',
  path: '/messages',
  billed: true,
  malformed(body) {
    if (typeof body.model !== 'string' || body.model === '') return 'model: Field required';
    if (!Array.isArray(body.messages) || body.messages.length === 0) return 'messages: must be a non-empty array';
    if (positiveInteger(body.max_tokens) === null) return 'max_tokens: Field required (a positive integer)';
    return badStream(body.stream);
  },
  streams: (body) => body.stream === true,
  promptCharacters: (body) => textCharacters(body.system) + textCharacters(body.messages) + textCharacters(body.tools),
  uncertainBound: (body) => holdsUnbounded(body.messages, BOUNDED) || holdsUnbounded(body.system, BOUNDED),
  maxGenerated: (body, unset) => positiveInteger(body.max_tokens) ?? unset,
  upstreamBody: withModel,
  upstreamHeaders(apiKey, incoming) {
    const headers: Record<string, string> = {
      'anthropic-version': String(incoming['anthropic-version'] ?? '2023-06-01'),
    };
    const beta = incoming['anthropic-beta'];
    if (beta !== undefined) headers['anthropic-beta'] = Array.isArray(beta) ? beta.join(',') : beta;
    if (apiKey) headers['x-api-key'] = apiKey;
    return headers;
  },
  answerFacts: messageFacts,
  streamReader: () => new MessageEvents(),
  wantsUsage: () => true,
  errorBody: anthropicErrorBody,
  translations: { openai: messagesOverChat },
  streamError: (message, code) =>
    sseData('error', {
      type: 'error',
      error: { type: code === 'stream_stalled' ? 'timeout_error' : 'api_error', message },
    }),
};

/**
 * `POST /v1/messages/count_tokens`: passed through like a message, never streamed, free (Anthropic
 * charges nothing for it), its row counting no tokens.
 */
export const countTokensApi: GatewayApi = {
  ...messagesApi,
  name: 'count_tokens',
  path: '/messages/count_tokens',
  billed: false,
  malformed(body) {
    if (typeof body.model !== 'string' || body.model === '') return 'model: Field required';
    if (!Array.isArray(body.messages) || body.messages.length === 0) return 'messages: must be a non-empty array';
    return null;
  },
  streams: () => false,
  maxGenerated: () => 1,
  answerFacts: () => ({ usage: null, generatedCharacters: 0 }),
  streamReader: () => null,
  // Chat completions count no tokens without generating: only Anthropic's own targets answer it.
  translations: {},
};
