/**
 * The simulated provider's OpenAI Responses API: `POST /v1/responses` (streamed or not) and
 * `GET /v1/responses/{id}` (see ../simulated-upstream.ts for the rules).
 */
import type { ServerResponse } from 'node:http';
import { openAiFailure, partsText, SERVER_ERROR_MESSAGE } from './chat-completions.js';
import {
  addMessage,
  aside,
  deltaTexts,
  emptyPrompt,
  generate,
  generator,
  hash,
  idTail,
  opaque,
  pieces,
  textTokens,
  toolArguments,
  type Prompt,
} from './generator.js';
import {
  ABORT_AFTER_DELTAS,
  ApiRefusal,
  firstTokenMs,
  isRecord,
  namedEventText,
  Pace,
  sendEvents,
  sendJson,
  type Json,
  type SimulateMode,
  type Simulation,
  type StreamEvent,
} from './wire.js';

/** Responses kept for `previous_response_id` and `GET /v1/responses/{id}` by default; the oldest go first. */
export const DEFAULT_STORED_RESPONSES = 1_000;
/** OpenAI's least max_output_tokens. */
const MIN_OUTPUT_TOKENS = 16;
/** Hidden reasoning tokens of an answer asked to reason: drawn in this range. */
const REASONING_TOKENS = [64, 255] as const;
/** Words of a reasoning summary. */
const SUMMARY_WORDS = [8, 24] as const;
const ENCRYPTED_BYTES = 128;

interface ResponsesRequest {
  body: Record<string, unknown>;
  model: string;
  stream: boolean;
  maxOutputTokens: number | null;
  /** instructions + conversation: what the answer is generated from and what input_tokens count. */
  prompt: Prompt;
  /** The previous response's conversation and this input, without instructions: what a next response continues. */
  conversation: Prompt;
  function: { name: string; parameters: unknown } | null;
  reasoning: { summary: boolean; encrypted: boolean } | null;
  store: boolean;
}

type Item =
  | { type: 'reasoning'; id: string; tokens: number; summary: string[]; deltas: number[]; encrypted: string | null }
  | { type: 'message'; id: string; tokens: string[]; deltas: number[]; cut: boolean }
  | { type: 'function_call'; id: string; callId: string; name: string; args: string; pieces: string[] };

interface Stored {
  response: Json;
  conversation: Prompt;
}

const invalid = (message: string, param: string | null, code: string | null = null): ApiRefusal =>
  new ApiRefusal(400, message, 'invalid_request_error', code, param);

/** The Responses API of one server: its serial numbers and the responses it keeps. */
export function responsesApi(
  sim: Simulation,
  storedResponses = DEFAULT_STORED_RESPONSES,
): {
  create(res: ServerResponse, body: unknown, mode: SimulateMode | null): void;
  retrieve(res: ServerResponse, id: string): void;
} {
  let served = 0;
  const stored = new Map<string, Stored>();

  function keep(id: string, entry: Stored): void {
    stored.set(id, entry);
    if (stored.size > storedResponses) stored.delete(stored.keys().next().value!);
  }

  return {
    create(res, body, mode) {
      const request = parseResponsesRequest(body, stored);
      const failure = openAiFailure(sim, request.model, mode);
      if (failure) throw failure;
      if (mode === 'abort-stream' && !request.stream) {
        res.destroy();
        return;
      }
      const serial = ++served;
      const tail = idTail(serial, sim.seed, request.prompt.text);
      const id = `resp_${tail}`;
      const items = plan(request, serial);
      const outputTokens = items.reduce((sum, item) => sum + itemTokens(item), 0);
      const reasoningTokens = items.reduce((sum, item) => sum + (item.type === 'reasoning' ? item.tokens : 0), 0);
      const cachedTokens = generate(sim.seed, request.prompt, 0).cachedTokens;
      const incomplete =
        request.maxOutputTokens !== null &&
        (items.some((item) => item.type === 'message' && item.cut) || !items.some((item) => item.type !== 'reasoning'));
      const base = responseBase(request, id, Math.floor(Date.now() / 1000));
      const final: Json = {
        ...base,
        status: incomplete ? 'incomplete' : 'completed',
        incomplete_details: incomplete ? { reason: 'max_output_tokens' } : null,
        output: items.map((item) => outputItem(item, true)),
        usage: {
          input_tokens: request.prompt.tokens,
          input_tokens_details: { cached_tokens: cachedTokens },
          output_tokens: outputTokens,
          output_tokens_details: { reasoning_tokens: reasoningTokens },
          total_tokens: request.prompt.tokens + outputTokens,
        },
      };
      const done = (): void => {
        if (!request.store) return;
        const conversation = { ...request.conversation };
        for (const item of items) {
          if (item.type === 'message') addMessage(conversation, 'assistant', item.tokens.join(''));
          if (item.type === 'function_call') addMessage(conversation, 'assistant', item.args);
        }
        keep(id, { response: final, conversation });
      };
      const pace = new Pace(res);
      const firstToken = firstTokenMs(sim, mode);
      const headers = { 'x-request-id': `req_${tail}` };
      if (!request.stream) {
        pace.after(firstToken + sim.tpotMs * outputTokens, () => {
          if (mode === 'error-event') {
            sendJson(res, 500, {
              error: { message: SERVER_ERROR_MESSAGE, type: 'server_error', param: null, code: null },
            });
            return;
          }
          done();
          sendJson(res, 200, final, headers);
        });
        return;
      }
      const events = streamEvents(base, items, final, { firstToken, tpotMs: sim.tpotMs, mode });
      sendEvents(res, pace, events, headers, mode === 'abort-stream', done);
    },

    retrieve(res, id) {
      const entry = stored.get(id);
      if (!entry) throw new ApiRefusal(404, `Response with id '${id}' not found.`, 'invalid_request_error');
      sendJson(res, 200, entry.response);
    },
  };

  function plan(request: ResponsesRequest, serial: number): Item[] {
    const { seed } = sim;
    const { prompt } = request;
    const tail = (salt: string): string => idTail(serial, seed, `${salt}\u0000${prompt.text}`);
    const items: Item[] = [];
    let budget = request.maxOutputTokens ?? Infinity;
    if (request.reasoning) {
      const random = generator(hash(seed, `reasoning\u0000${prompt.text}`));
      const drawn = REASONING_TOKENS[0] + Math.floor(random() * (REASONING_TOKENS[1] - REASONING_TOKENS[0] + 1));
      const tokens = Math.min(drawn, budget);
      const summary = request.reasoning.summary
        ? aside(seed, 'summary', prompt, SUMMARY_WORDS[0], SUMMARY_WORDS[1])
        : { tokens: [], deltas: [] };
      const encrypted = request.reasoning.encrypted ? opaque(seed, 'encrypted', prompt.text, ENCRYPTED_BYTES) : null;
      items.push({
        type: 'reasoning',
        id: `rs_${tail('rs')}`,
        tokens,
        summary: summary.tokens,
        deltas: summary.deltas,
        encrypted,
      });
      budget -= tokens;
    }
    if (request.function) {
      const args = JSON.stringify(
        toolArguments(seed, `tool\u0000${request.function.name}`, prompt, request.function.parameters),
      );
      // A call that does not fit is not begun: the answer is incomplete.
      if (textTokens(args) <= budget) {
        const random = generator(hash(seed, `pieces\u0000${args}`));
        items.push({
          type: 'function_call',
          id: `fc_${tail('fc')}`,
          callId: `call_${tail('call')}`,
          name: request.function.name,
          args,
          pieces: pieces(random, args),
        });
      }
      return items;
    }
    if (budget > 0) {
      const text = generate(seed, prompt, budget === Infinity ? null : budget);
      items.push({
        type: 'message',
        id: `msg_${tail('msg')}`,
        tokens: text.tokens,
        deltas: text.deltas,
        cut: text.cut,
      });
    }
    return items;
  }
}

function itemTokens(item: Item): number {
  if (item.type === 'reasoning') return item.tokens;
  if (item.type === 'message') return item.tokens.length;
  return textTokens(item.args);
}

/** The response's fields as OpenAI orders them, but for status, details, output and usage. */
function responseBase(request: ResponsesRequest, id: string, createdAt: number): Record<string, Json> {
  const { body } = request;
  const reasoning = isRecord(body.reasoning) ? body.reasoning : {};
  return {
    id,
    object: 'response',
    created_at: createdAt,
    status: 'in_progress',
    background: false,
    error: null,
    incomplete_details: null,
    instructions: typeof body.instructions === 'string' ? body.instructions : null,
    max_output_tokens: request.maxOutputTokens,
    max_tool_calls: null,
    model: request.model,
    output: [],
    parallel_tool_calls: true,
    previous_response_id: typeof body.previous_response_id === 'string' ? body.previous_response_id : null,
    prompt_cache_key: typeof body.prompt_cache_key === 'string' ? body.prompt_cache_key : null,
    reasoning: { effort: (reasoning.effort as Json) ?? null, summary: (reasoning.summary as Json) ?? null },
    safety_identifier: null,
    service_tier: 'default',
    store: request.store,
    temperature: 1,
    text: { format: { type: 'text' }, verbosity: 'medium' },
    tool_choice: (body.tool_choice as Json) ?? 'auto',
    tools: Array.isArray(body.tools) ? (body.tools as Json[]) : [],
    top_logprobs: 0,
    top_p: 1,
    truncation: 'disabled',
    usage: null,
    user: null,
    metadata: isRecord(body.metadata) ? (body.metadata as Json) : {},
  };
}

/** An output item, complete (`done`) or as `response.output_item.added` first shows it. */
function outputItem(item: Item, done: boolean): Json {
  if (item.type === 'reasoning') {
    return {
      id: item.id,
      type: 'reasoning',
      summary: done && item.summary.length > 0 ? [summaryPart(item.summary.join(''))] : [],
      ...(item.encrypted !== null ? { encrypted_content: done ? item.encrypted : null } : {}),
    };
  }
  if (item.type === 'message') {
    return {
      id: item.id,
      type: 'message',
      status: done ? (item.cut ? 'incomplete' : 'completed') : 'in_progress',
      content: done ? [textPart(item.tokens.join(''))] : [],
      role: 'assistant',
    };
  }
  return {
    id: item.id,
    type: 'function_call',
    status: done ? 'completed' : 'in_progress',
    arguments: done ? item.args : '',
    call_id: item.callId,
    name: item.name,
  };
}

function textPart(text: string): Json {
  return { type: 'output_text', annotations: [], logprobs: [], text };
}

function summaryPart(text: string): Json {
  return { type: 'summary_text', text };
}

/**
 * The stream, as OpenAI sends it: response.created and response.in_progress at the first token,
 * then per output item its added event, its deltas (paced by tpot per token; a reasoning item's
 * hidden tokens pass before it is done), its done events, and response.completed (or
 * response.incomplete) carrying the whole response. `abort-stream` and `error-event` stop after
 * ABORT_AFTER_DELTAS deltas, the first dropping the socket, the second sending response.failed.
 */
function streamEvents(
  base: Record<string, Json>,
  items: readonly Item[],
  final: Json,
  { firstToken, tpotMs, mode }: { firstToken: number; tpotMs: number; mode: SimulateMode | null },
): StreamEvent[] {
  const events: StreamEvent[] = [];
  let sequence = 0;
  let delayMs = firstToken;
  /** An event of `type`: its sequence number, the output item it is `at` if any, then `data`. */
  const add = (type: string, data: Record<string, Json>, at: ItemAt | null = null): void => {
    events.push({ delayMs, text: sequencedEvent(type, sequence++, at, data) });
    delayMs = 0;
  };
  const cutShort = mode === 'abort-stream' || mode === 'error-event';
  let sent = 0;
  const ended = (): boolean => cutShort && sent === ABORT_AFTER_DELTAS;
  let first = true;
  /** A delta `tokens` tokens long: the first of the answer leaves with response.created, each later one tokens × tpot after. */
  const delta = (type: string, data: Record<string, Json>, tokens: number, at: ItemAt): void => {
    if (!first) delayMs += tokens * tpotMs;
    first = false;
    add(type, data, at);
    sent++;
  };

  add('response.created', { response: base });
  add('response.in_progress', { response: base });
  for (const [index, item] of items.entries()) {
    if (ended()) break;
    const at: ItemAt = { item_id: item.id, output_index: index };
    add('response.output_item.added', { output_index: index, item: outputItem(item, false) });
    if (item.type === 'reasoning') {
      const summary = item.summary.join('');
      if (item.summary.length > 0) {
        add('response.reasoning_summary_part.added', { summary_index: 0, part: summaryPart('') }, at);
        for (const [n, text] of deltaTexts(item.summary, item.deltas).entries()) {
          if (ended()) break;
          delta('response.reasoning_summary_text.delta', { summary_index: 0, delta: text }, item.deltas[n]!, at);
        }
        if (ended()) break;
        add('response.reasoning_summary_text.done', { summary_index: 0, text: summary }, at);
        add('response.reasoning_summary_part.done', { summary_index: 0, part: summaryPart(summary) }, at);
      }
      // The hidden reasoning takes its tokens' time.
      delayMs += Math.max(0, item.tokens - item.summary.length) * tpotMs;
      first = false;
    } else if (item.type === 'message') {
      const text = item.tokens.join('');
      add('response.content_part.added', { content_index: 0, part: textPart('') }, at);
      for (const [n, piece] of deltaTexts(item.tokens, item.deltas).entries()) {
        if (ended()) break;
        delta('response.output_text.delta', { content_index: 0, delta: piece, logprobs: [] }, item.deltas[n]!, at);
      }
      if (ended()) break;
      add('response.output_text.done', { content_index: 0, text, logprobs: [] }, at);
      add('response.content_part.done', { content_index: 0, part: textPart(text) }, at);
    } else {
      for (const piece of item.pieces) {
        if (ended()) break;
        delta('response.function_call_arguments.delta', { delta: piece }, textTokens(piece), at);
      }
      if (ended()) break;
      add('response.function_call_arguments.done', { name: item.name, arguments: item.args }, at);
    }
    add('response.output_item.done', { output_index: index, item: outputItem(item, true) });
  }
  if (mode === 'error-event') {
    add('response.failed', {
      response: { ...base, status: 'failed', error: { code: 'server_error', message: SERVER_ERROR_MESSAGE } },
    });
  } else if (!cutShort) {
    const status = (final as { status: string }).status;
    add(status === 'completed' ? 'response.completed' : 'response.incomplete', { response: final });
  }
  return events;
}

/** Where in the response an event's output item is. */
interface ItemAt {
  item_id: string;
  output_index: number;
}

/**
 * `namedEvent(type, { type, sequence_number, ...at, ...data })`, the same text, without building
 * that object: on Node 20, V8 takes ~2.5 µs to spread `at` into a literal that then adds keys of
 * its own, three quarters of the time a stream of the bench's took to make (250 µs, ~60 without).
 */
function sequencedEvent(type: string, sequence: number, at: ItemAt | null, data: Record<string, Json>): string {
  let json = `{"type":${JSON.stringify(type)},"sequence_number":${sequence}`;
  if (at) json += `,"item_id":${JSON.stringify(at.item_id)},"output_index":${at.output_index}`;
  const fields = JSON.stringify(data);
  return namedEventText(type, fields === '{}' ? `${json}}` : `${json},${fields.slice(1)}`);
}

function parseResponsesRequest(body: unknown, stored: ReadonlyMap<string, Stored>): ResponsesRequest {
  if (!isRecord(body)) throw invalid('The request body must be a JSON object.', null);
  const { model, input, instructions, stream, tools, tool_choice: toolChoice, reasoning, include } = body;
  if (typeof model !== 'string' || model === '') {
    throw invalid("Missing required parameter: 'model'.", 'model', 'missing_required_parameter');
  }
  if (stream !== undefined && stream !== null && typeof stream !== 'boolean') {
    throw invalid("Invalid type for 'stream': expected a boolean.", 'stream', 'invalid_type');
  }
  if (instructions !== undefined && instructions !== null && typeof instructions !== 'string') {
    throw invalid("Invalid type for 'instructions': expected a string.", 'instructions', 'invalid_type');
  }
  const max = body.max_output_tokens;
  if (max !== undefined && max !== null) {
    if (typeof max !== 'number' || !Number.isInteger(max)) {
      throw invalid("Invalid type for 'max_output_tokens': expected an integer.", 'max_output_tokens', 'invalid_type');
    }
    if (max < MIN_OUTPUT_TOKENS) {
      throw invalid(
        `Invalid 'max_output_tokens': integer below minimum value. Expected a value >= ${MIN_OUTPUT_TOKENS}, but got ${max} instead.`,
        'max_output_tokens',
        'integer_below_min_value',
      );
    }
  }

  // The previous response's conversation, then this input: what a next response continues.
  const conversation = emptyPrompt();
  const previous = body.previous_response_id;
  if (previous !== undefined && previous !== null) {
    const entry = typeof previous === 'string' ? stored.get(previous) : undefined;
    if (!entry) {
      throw invalid(
        `Previous response with id '${String(previous)}' not found.`,
        'previous_response_id',
        'previous_response_not_found',
      );
    }
    conversation.text = entry.conversation.text;
    conversation.tokens = entry.conversation.tokens;
  }
  let lastType: unknown = 'message';
  if (typeof input === 'string') {
    addMessage(conversation, 'user', input);
  } else if (Array.isArray(input)) {
    for (const [index, item] of input.entries()) {
      if (!isRecord(item)) {
        throw invalid(`Invalid type for 'input[${index}]': expected an object.`, `input[${index}]`, 'invalid_type');
      }
      addItem(conversation, item, index);
      lastType = item.type ?? 'message';
    }
  } else {
    throw invalid("Missing required parameter: 'input'.", 'input', 'missing_required_parameter');
  }
  const prompt = emptyPrompt();
  if (typeof instructions === 'string') addMessage(prompt, 'system', instructions);
  prompt.text += conversation.text;
  prompt.tokens = Math.max(1, prompt.tokens + conversation.tokens);

  return {
    body,
    model,
    stream: stream === true,
    maxOutputTokens: typeof max === 'number' ? max : null,
    prompt,
    conversation,
    function: lastType === 'function_call_output' ? null : functionToCall(tools, toolChoice),
    reasoning: reasoningAsked(reasoning, include),
    store: body.store !== false,
  };
}

/**
 * An input item's text, as a message of the conversation: a message's content (a string or its
 * parts' text), a function_call's arguments, a function_call_output's output. Other items
 * (reasoning, references) count nothing.
 */
function addItem(conversation: Prompt, item: Record<string, unknown>, index: number): void {
  const type = item.type ?? 'message';
  if (type === 'message') {
    if (typeof item.role !== 'string') {
      throw invalid(
        `Missing required parameter: 'input[${index}].role'.`,
        `input[${index}].role`,
        'missing_required_parameter',
      );
    }
    addMessage(conversation, item.role, partsText(item.content));
  } else if (type === 'function_call') {
    addMessage(conversation, 'assistant', typeof item.arguments === 'string' ? item.arguments : '');
  } else if (type === 'function_call_output') {
    addMessage(conversation, 'tool', typeof item.output === 'string' ? item.output : partsText(item.output));
  }
}

/** The function to call: with function tools and a tool_choice other than `none`, the named one, else the first. */
function functionToCall(tools: unknown, choice: unknown): ResponsesRequest['function'] {
  if (tools === undefined || tools === null) return null;
  if (!Array.isArray(tools)) throw invalid("Invalid type for 'tools': expected an array.", 'tools', 'invalid_type');
  const functions = tools.filter(
    (tool): tool is { name: string; parameters?: unknown } =>
      isRecord(tool) && tool.type === 'function' && typeof tool.name === 'string',
  );
  if (choice === 'none') return null;
  let chosen = functions[0];
  if (isRecord(choice) && choice.type === 'function') {
    chosen = functions.find((tool) => tool.name === choice.name);
    if (!chosen) {
      throw invalid(`Tool choice '${String(choice.name)}' not found in 'tools' parameter.`, 'tool_choice', null);
    }
  }
  return chosen ? { name: chosen.name, parameters: chosen.parameters } : null;
}

/** Whether the request asks to reason (a `reasoning` object whose effort is not `none`), with a summary, encrypted. */
function reasoningAsked(reasoning: unknown, include: unknown): ResponsesRequest['reasoning'] {
  if (reasoning === undefined || reasoning === null) return null;
  if (!isRecord(reasoning))
    throw invalid("Invalid type for 'reasoning': expected an object.", 'reasoning', 'invalid_type');
  if (reasoning.effort === 'none') return null;
  return {
    summary: ['auto', 'concise', 'detailed'].includes(String(reasoning.summary)),
    encrypted: Array.isArray(include) && include.includes('reasoning.encrypted_content'),
  };
}
