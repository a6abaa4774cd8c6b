import type { ChatFunctionTool, ChatRequestBody, ChatToolChoice } from './chat-shapes.js';
import { chatMessages, systemMessage } from './message-content.js';
import { Untranslatable, invalid, notAvailable } from './refusals.js';
import { given, isObject } from './values.js';

/**
 * The fields of a Messages request that are translated, or dropped because chat completions do
 * the same without them: `cache_control` (chat completions cache a prompt's prefix unasked),
 * `service_tier` (standard capacity is what a target gives). Any other field is refused by name:
 * those Anthropic documents and chat completions have no way to (`top_k`, `container`,
 * `mcp_servers`, `context_management`, `output_config`, `inference_geo`…), and those it may add,
 * which no translation can know the meaning of. `model` is the route's, given apart.
 */
const TRANSLATED = new Set([
  'model',
  'messages',
  'max_tokens',
  'system',
  'metadata',
  'stop_sequences',
  'stream',
  'temperature',
  'top_p',
  'tools',
  'tool_choice',
  'thinking',
  'cache_control',
  'service_tier',
]);

/** Chat completions take at most this many stop sequences. */
const MOST_STOP_SEQUENCES = 4;

/** A `Tool` (custom, the caller's own) as a function tool; Anthropic's server tools are refused. */
function functionTool(tool: unknown, path: string): ChatFunctionTool {
  if (!isObject(tool)) throw invalid(`${path} must be an object.`);
  if (given(tool.type) && tool.type !== 'custom') {
    throw notAvailable(`${path} (${String(tool.type)}, one of Anthropic's server tools)`);
  }
  if (typeof tool.name !== 'string' || tool.name === '') throw invalid(`${path}.name must be a non-empty string.`);
  if (!isObject(tool.input_schema)) throw invalid(`${path}.input_schema must be an object.`);
  if (given(tool.description) && typeof tool.description !== 'string') {
    throw invalid(`${path}.description must be a string.`);
  }
  // Loaded only when a tool search finds it: the search is a server tool.
  if (tool.defer_loading === true) throw notAvailable(`${path}.defer_loading`);
  // Called from code Anthropic runs (programmatic tool calling): a server tool again.
  const callers = tool.allowed_callers;
  if (given(callers) && !(Array.isArray(callers) && callers.every((caller) => caller === 'direct'))) {
    throw notAvailable(`${path}.allowed_callers`);
  }
  // Examples the model is shown: a function tool has no place for them.
  if (Array.isArray(tool.input_examples) ? tool.input_examples.length > 0 : given(tool.input_examples)) {
    throw notAvailable(`${path}.input_examples`);
  }
  const fn: ChatFunctionTool['function'] = {
    name: tool.name,
    ...(typeof tool.description === 'string' ? { description: tool.description } : {}),
    parameters: tool.input_schema,
    // Anthropic's strict tools, as OpenAI's: calls that always match the schema.
    ...(typeof tool.strict === 'boolean' ? { strict: tool.strict } : {}),
  };
  return { type: 'function', function: fn };
}

/** `tool_choice`, and whether it forbids parallel calls (`disable_parallel_tool_use`). */
function toolChoice(choice: unknown, hasTools: boolean): { choice?: ChatToolChoice; parallel?: false } {
  if (!given(choice)) return {};
  if (!isObject(choice)) throw invalid('tool_choice must be an object.');
  const parallel = choice.disable_parallel_tool_use === true && hasTools ? { parallel: false as const } : {};
  switch (choice.type) {
    case 'auto':
      // With no tools there is nothing to choose: chat completions refuse a choice without them.
      return hasTools ? { choice: 'auto', ...parallel } : {};
    case 'none':
      return hasTools ? { choice: 'none' } : {};
    case 'any':
      if (!hasTools) throw invalid('tool_choice "any" needs tools.');
      return { choice: 'required', ...parallel };
    case 'tool':
      if (!hasTools) throw invalid('tool_choice "tool" needs tools.');
      if (typeof choice.name !== 'string' || choice.name === '') {
        throw invalid('tool_choice.name must be a non-empty string.');
      }
      return { choice: { type: 'function', function: { name: choice.name } }, ...parallel };
    default:
      throw invalid('tool_choice.type must be "auto", "any", "tool" or "none".');
  }
}

function translate(body: unknown, model: string): ChatRequestBody {
  if (!isObject(body)) throw invalid('The request body must be a JSON object.');
  for (const [field, value] of Object.entries(body)) {
    if (!TRANSLATED.has(field) && given(value)) throw notAvailable(field);
  }
  // Thinking off is as if not asked; on (`enabled`, `adaptive`) it is refused.
  if (given(body.thinking) && !(isObject(body.thinking) && body.thinking.type === 'disabled')) {
    throw notAvailable('thinking');
  }
  const maxTokens = body.max_tokens;
  if (typeof maxTokens !== 'number' || !Number.isSafeInteger(maxTokens) || maxTokens < 1) {
    throw invalid('max_tokens must be a positive integer.');
  }

  const messages = [...systemMessage(body.system), ...chatMessages(body.messages)];
  const chat: ChatRequestBody = { model, messages, max_completion_tokens: maxTokens };

  if (given(body.tools)) {
    if (!Array.isArray(body.tools)) throw invalid('tools must be an array.');
    const tools = body.tools.map((tool, index) => functionTool(tool, `tools.${index}`));
    if (tools.length > 0) chat.tools = tools;
  }
  const { choice, parallel } = toolChoice(body.tool_choice, chat.tools !== undefined);
  if (choice !== undefined) chat.tool_choice = choice;
  if (parallel !== undefined) chat.parallel_tool_calls = parallel;

  if (given(body.stop_sequences)) {
    const stops = body.stop_sequences;
    if (!Array.isArray(stops) || !stops.every((stop) => typeof stop === 'string')) {
      throw invalid('stop_sequences must be an array of strings.');
    }
    if (stops.length > MOST_STOP_SEQUENCES) {
      throw notAvailable(`stop_sequences beyond the ${MOST_STOP_SEQUENCES}th`);
    }
    if (stops.length > 0) chat.stop = stops;
  }
  for (const field of ['temperature', 'top_p'] as const) {
    const value = body[field];
    if (!given(value)) continue;
    if (typeof value !== 'number' || !Number.isFinite(value)) throw invalid(`${field} must be a number.`);
    chat[field] = value;
  }
  if (given(body.metadata)) {
    if (!isObject(body.metadata)) throw invalid('metadata must be an object.');
    const userId = body.metadata.user_id;
    if (given(userId) && typeof userId !== 'string') throw invalid('metadata.user_id must be a string.');
    if (typeof userId === 'string' && userId !== '') chat.user = userId;
  }
  if (given(body.stream) && typeof body.stream !== 'boolean') throw invalid('stream must be a boolean.');
  if (body.stream === true) {
    chat.stream = true;
    // The usage comes in a last chunk of its own only if asked for.
    chat.stream_options = { include_usage: true };
  }
  return chat;
}

/**
 * An Anthropic Messages request (`POST /v1/messages`) as an OpenAI chat completions request for
 * `model`, or why it cannot be one without losing part of it: the first problem found, in one
 * sentence naming its field. See `TRANSLATED` and message-content.ts for what is translated.
 */
export function messagesToChat(
  body: unknown,
  model: string,
): { ok: true; body: ChatRequestBody } | { ok: false; message: string } {
  try {
    return { ok: true, body: translate(body, model) };
  } catch (error) {
    if (error instanceof Untranslatable) return { ok: false, message: error.message };
    throw error;
  }
}
