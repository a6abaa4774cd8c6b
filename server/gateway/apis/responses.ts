import { isCount, jsonStringAt, type AnswerFacts, type EventReader, type SseEvent, type Usage } from '../sse-events.js';
import {
  badStream,
  holdsUnbounded,
  openAiErrorBody,
  openAiHeaders,
  positiveInteger,
  sseData,
  textCharacters,
  withModel,
  type GatewayApi,
} from './api.js';

/**
 * OpenAI's Responses API, `POST /v1/responses`, passed through to targets that speak OpenAI:
 * every field and every event as sent. Usage comes with the response (streamed: in
 * `response.completed`, `response.incomplete` or `response.failed`).
 */

/** Input parts and items whose tokens their characters bound. */
const BOUNDED = new Set([
  'message',
  'input_text',
  'output_text',
  'text',
  'refusal',
  'function_call',
  'function_call_output',
  'reasoning',
  'summary_text',
  'custom_tool_call',
  'custom_tool_call_output',
  'local_shell_call',
  'local_shell_call_output',
  'item_reference',
]);

interface ResponsesUsage {
  input_tokens?: unknown;
  output_tokens?: unknown;
  input_tokens_details?: { cached_tokens?: unknown } | null;
}

/** The Responses API's usage; `input_tokens` includes the cached part, as chat's prompt does. */
function responsesUsage(usage: ResponsesUsage | null | undefined): Usage | null {
  if (!usage || typeof usage !== 'object') return null;
  const { input_tokens: input, output_tokens: output } = usage;
  if (!isCount(input) || input === 0 || !isCount(output)) return null;
  const cached = usage.input_tokens_details?.cached_tokens;
  return {
    prompt: input,
    completion: output,
    cachedPrompt: isCount(cached) && cached <= input ? cached : 0,
    cacheWrite: 0,
  };
}

/** Characters the output items generated: text, refusals, reasoning summaries, calls' names and arguments. */
function outputCharacters(output: unknown): number {
  return Array.isArray(output) ? textCharacters(output) + namesOf(output) : 0;
}

function namesOf(items: unknown[]): number {
  let characters = 0;
  for (const item of items) {
    const name = (item as { name?: unknown } | null)?.name;
    if (typeof name === 'string') characters += name.length;
  }
  return characters;
}

function responseFacts(text: string): AnswerFacts {
  let answer: { output?: unknown; usage?: ResponsesUsage };
  try {
    answer = JSON.parse(text) as typeof answer;
  } catch {
    return { usage: null, generatedCharacters: text.length };
  }
  if (!answer || typeof answer !== 'object') return { usage: null, generatedCharacters: text.length };
  const id = (answer as { id?: unknown }).id;
  return {
    usage: responsesUsage(answer.usage),
    generatedCharacters: outputCharacters(answer.output),
    ...(typeof id === 'string' ? { responseId: id } : {}),
  };
}

/** The events that end a response, each carrying it whole with its usage. */
const ENDINGS = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/** A text delta's start, as OpenAI writes it: its type first. */
const TEXT_DELTA = '{"type":"response.output_text.delta",';
const DELTA_KEY = '"delta":';

class ResponseEvents implements EventReader {
  /**
   * A text delta whose type comes first and which names one `delta`, with no brace before it but
   * the event's own (so that it is the event's key, not a nested object's: a quote inside a
   * string is escaped, so it is a key): its text, unparsed. Nothing else of it is read.
   */
  skim(data: string, event: SseEvent): boolean {
    if (!data.startsWith(TEXT_DELTA)) return false;
    const key = data.indexOf(DELTA_KEY, TEXT_DELTA.length);
    if (key < 0 || data.lastIndexOf('{', key) !== 0 || data.includes(DELTA_KEY, key + DELTA_KEY.length)) return false;
    const text = jsonStringAt(data, key + DELTA_KEY.length);
    if (text === null) return false;
    event.content += text.value;
    return true;
  }

  read(data: unknown, event: SseEvent) {
    const frame = data as {
      type?: unknown;
      delta?: unknown;
      item?: { type?: unknown; name?: unknown };
      response?: { id?: unknown; usage?: ResponsesUsage };
    };
    const type = typeof frame.type === 'string' ? frame.type : '';
    if (type.endsWith('.delta') && typeof frame.delta === 'string') {
      if (type === 'response.output_text.delta') event.content += frame.delta;
      else event.otherCharacters += frame.delta.length;
    } else if (type === 'response.output_item.added') {
      // The model is answering (a reasoning item may go on a while before any text): committed.
      event.otherCharacters += Math.max(1, typeof frame.item?.name === 'string' ? frame.item.name.length : 0);
    } else if (type === 'error' || type === 'response.failed') {
      event.error = true;
    }
    if (type === 'response.created' && typeof frame.response?.id === 'string') event.responseId = frame.response.id;
    if (ENDINGS.has(type)) {
      event.usage = responsesUsage(frame.response?.usage);
      event.finished = true;
      return { done: true };
    }
    return { done: false };
  }
}

export const responsesApi: GatewayApi = {
  name: 'responses',
  wire: 'openai',
  kind: 'chat',
  path: '/responses',
  billed: true,
  malformed(body) {
    if (typeof body.model !== 'string' || body.model === '') return 'model is required.';
    const input = body.input;
    if (typeof input !== 'string' && !Array.isArray(input) && typeof body.previous_response_id !== 'string') {
      return 'input must be a string or an array of input items.';
    }
    if (
      body.previous_response_id !== undefined &&
      body.previous_response_id !== null &&
      typeof body.previous_response_id !== 'string'
    ) {
      return 'previous_response_id must be a string.';
    }
    return badStream(body.stream);
  },
  streams: (body) => body.stream === true,
  promptCharacters: (body) =>
    textCharacters(body.instructions) + textCharacters(body.input) + textCharacters(body.tools),
  uncertainBound: (body) => Array.isArray(body.input) && holdsUnbounded(body.input, BOUNDED),
  maxGenerated: (body, unset) => positiveInteger(body.max_output_tokens) ?? unset,
  upstreamBody: withModel,
  upstreamHeaders: (apiKey) => openAiHeaders(apiKey),
  answerFacts: responseFacts,
  streamReader: () => new ResponseEvents(),
  wantsUsage: () => true,
  errorBody: openAiErrorBody,
  // An error frame the SDKs raise: theirs read `error` in any event's data.
  streamError: (message, code) =>
    sseData('error', { type: 'error', code, message, param: null, error: { message, type: 'upstream_error', code } }),
};
