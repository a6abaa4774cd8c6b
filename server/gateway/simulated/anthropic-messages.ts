/**
 * The simulated provider's Anthropic Messages API: `POST /v1/messages` (streamed or not) and
 * `POST /v1/messages/count_tokens` (see ../simulated-upstream.ts for the rules).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  addMessage,
  aside,
  deltaTexts,
  emptyPrompt,
  firstSentenceLength,
  generate,
  generator,
  hash,
  idTail,
  opaque,
  pieces,
  prefixDeltas,
  textTokens,
  toolArguments,
  type Prompt,
} from './generator.js';
import {
  ABORT_AFTER_DELTAS,
  anthropicErrorBody,
  ApiRefusal,
  firstTokenMs,
  isRecord,
  namedEvent,
  Pace,
  sendEvents,
  sendJson,
  type Json,
  type SimulateMode,
  type Simulation,
  type StreamEvent,
} from './wire.js';

/** Anthropic's minimum thinking budget. */
const MIN_THINKING_BUDGET = 1024;
/** Words of a thinking block. */
const THINKING_WORDS = [16, 64] as const;
const SIGNATURE_BYTES = 96;

interface MessagesRequest {
  model: string;
  /** null for count_tokens, which takes none. */
  maxTokens: number | null;
  stream: boolean;
  prompt: Prompt;
  /** The tool to call now (see `toolToCall`), else null. */
  tool: { name: string; schema: unknown } | null;
  thinking: boolean;
}

type Block =
  | { type: 'thinking'; tokens: string[]; deltas: number[]; signature: string }
  | { type: 'text'; tokens: string[]; deltas: number[] }
  | { type: 'tool_use'; id: string; name: string; json: string; pieces: string[] };

interface Answer {
  id: string;
  blocks: Block[];
  stopReason: 'end_turn' | 'max_tokens' | 'tool_use';
  outputTokens: number;
  usage: { input_tokens: number; cache_creation_input_tokens: number; cache_read_input_tokens: number };
}

const invalid = (message: string): ApiRefusal => new ApiRefusal(400, message, 'invalid_request_error');

/** The overloaded answer: `overloaded`, the outage, and `error-event` of a non-streamed answer. */
const overloaded = (): ApiRefusal => new ApiRefusal(529, 'Overloaded', 'overloaded_error');

/**
 * The checks of the headers every Anthropic request passes first, in Anthropic's error shape:
 * the key (`x-api-key`, or a bearer Authorization) when `apiKey` is set, then `anthropic-version`.
 */
export function checkAnthropicHeaders(req: IncomingMessage, apiKey: string | undefined): void {
  if (apiKey !== undefined && req.headers['x-api-key'] !== apiKey && req.headers.authorization !== `Bearer ${apiKey}`) {
    throw new ApiRefusal(401, 'invalid x-api-key', 'authentication_error');
  }
  if (!req.headers['anthropic-version']) throw invalid('anthropic-version: header is required');
}

/**
 * The refusals made before answering, in this order: the outage (529), `error-500` or a model
 * named `-error` (500), `rate-limited` (429), `overloaded` (529).
 */
function anthropicFailure(sim: Simulation, model: string, mode: SimulateMode | null): ApiRefusal | null {
  if (sim.down(model)) return overloaded();
  if (mode === 'error-500' || model.includes('-error'))
    return new ApiRefusal(500, 'Internal server error', 'api_error');
  if (mode === 'rate-limited') {
    return new ApiRefusal(
      429,
      'This request would exceed the rate limit for your organization of 60 requests per minute. Please try again in 1s.',
      'rate_limit_error',
      null,
      null,
      {
        'retry-after': '1',
        'anthropic-ratelimit-requests-limit': '60',
        'anthropic-ratelimit-requests-remaining': '0',
      },
    );
  }
  if (mode === 'overloaded') return overloaded();
  return null;
}

/** The Messages API of one server: its answers' serial numbers. */
export function anthropicMessages(sim: Simulation): {
  create(res: ServerResponse, body: unknown, mode: SimulateMode | null): void;
  countTokens(res: ServerResponse, body: unknown, mode: SimulateMode | null): void;
} {
  let served = 0;

  return {
    create(res, body, mode) {
      const request = parseMessagesRequest(body, true);
      const failure = anthropicFailure(sim, request.model, mode);
      if (failure) throw failure;
      if (mode === 'abort-stream' && !request.stream) {
        res.destroy();
        return;
      }
      const answer = plan(request, ++served);
      const pace = new Pace(res);
      const firstToken = firstTokenMs(sim, mode);
      const headers = { 'request-id': `req_${answer.id.slice('msg_'.length)}` };
      if (!request.stream) {
        pace.after(firstToken + sim.tpotMs * answer.outputTokens, () => {
          if (mode === 'error-event') sendJson(res, 529, anthropicErrorBody(overloaded()));
          else sendJson(res, 200, message(request, answer), headers);
        });
        return;
      }
      const events = streamEvents(request, answer, { firstToken, tpotMs: sim.tpotMs, mode });
      sendEvents(res, pace, events, headers, mode === 'abort-stream');
    },

    countTokens(res, body, mode) {
      const request = parseMessagesRequest(body, false);
      const failure = anthropicFailure(sim, request.model, mode);
      if (failure) throw failure;
      if (mode === 'abort-stream') {
        res.destroy();
        return;
      }
      // Nothing is generated: no pacing but `slow`'s.
      new Pace(res).after(mode === 'slow' ? firstTokenMs(sim, mode) : 0, () => {
        if (mode === 'error-event') sendJson(res, 529, anthropicErrorBody(overloaded()));
        else sendJson(res, 200, { input_tokens: request.prompt.tokens });
      });
    },
  };

  function plan(request: MessagesRequest, serial: number): Answer {
    const { seed } = sim;
    const { prompt } = request;
    const id = `msg_${idTail(serial, seed, prompt.text)}`;
    const blocks: Block[] = [];
    let budget = request.maxTokens ?? Infinity;
    if (request.thinking) {
      // The budget is at least 1024 and below max_tokens: a thinking block always fits.
      const thinking = aside(seed, 'thinking', prompt, THINKING_WORDS[0], THINKING_WORDS[1]);
      const signature = opaque(seed, 'signature', thinking.tokens.join(''), SIGNATURE_BYTES);
      blocks.push({ type: 'thinking', tokens: thinking.tokens, deltas: thinking.deltas, signature });
      budget -= thinking.tokens.length;
    }
    let stopReason: Answer['stopReason'];
    let cachedTokens: number;
    if (request.tool) {
      const full = generate(seed, prompt, null);
      cachedTokens = full.cachedTokens;
      const json = JSON.stringify(toolArguments(seed, `tool\u0000${request.tool.name}`, prompt, request.tool.schema));
      const sentence = firstSentenceLength(full.tokens);
      if (sentence + textTokens(json) <= budget) {
        blocks.push({
          type: 'text',
          tokens: full.tokens.slice(0, sentence),
          deltas: prefixDeltas(full.deltas, sentence),
        });
        const random = generator(hash(seed, `pieces\u0000${json}`));
        // Anthropic opens a tool's arguments with an empty piece.
        const tool = { id: `toolu_${idTail(serial, seed, `${request.tool.name}\u0000${prompt.text}`)}` };
        blocks.push({
          type: 'tool_use',
          id: tool.id,
          name: request.tool.name,
          json,
          pieces: ['', ...pieces(random, json)],
        });
        stopReason = 'tool_use';
      } else {
        // A call that does not fit is not begun: the sentence, cut, and max_tokens.
        const count = Math.min(sentence, budget);
        blocks.push({ type: 'text', tokens: full.tokens.slice(0, count), deltas: prefixDeltas(full.deltas, count) });
        stopReason = 'max_tokens';
      }
    } else {
      const text = generate(seed, prompt, budget === Infinity ? null : budget);
      cachedTokens = text.cachedTokens;
      blocks.push({ type: 'text', tokens: text.tokens, deltas: text.deltas });
      stopReason = text.cut ? 'max_tokens' : 'end_turn';
    }
    let outputTokens = 0;
    for (const block of blocks)
      outputTokens += block.type === 'tool_use' ? textTokens(block.json) : block.tokens.length;
    return {
      id,
      blocks,
      stopReason,
      outputTokens,
      usage: {
        // Anthropic's input_tokens leave out the cached part.
        input_tokens: prompt.tokens - cachedTokens,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: cachedTokens,
      },
    };
  }
}

function message(request: MessagesRequest, answer: Answer): Json {
  return {
    id: answer.id,
    type: 'message',
    role: 'assistant',
    model: request.model,
    content: answer.blocks.map((block): Json => {
      if (block.type === 'thinking') {
        return { type: 'thinking', thinking: block.tokens.join(''), signature: block.signature };
      }
      if (block.type === 'text') return { type: 'text', text: block.tokens.join('') };
      return { type: 'tool_use', id: block.id, name: block.name, input: JSON.parse(block.json) as Json };
    }),
    stop_reason: answer.stopReason,
    stop_sequence: null,
    usage: { ...answer.usage, output_tokens: answer.outputTokens },
  };
}

/**
 * The stream, as Anthropic sends it: message_start and a ping at the first token, each block's
 * start, deltas (paced by tpot per token) and stop, then message_delta and message_stop.
 * `abort-stream` and `error-event` stop after ABORT_AFTER_DELTAS deltas, the first dropping the
 * socket, the second sending an `error` event and ending.
 */
function streamEvents(
  request: MessagesRequest,
  answer: Answer,
  { firstToken, tpotMs, mode }: { firstToken: number; tpotMs: number; mode: SimulateMode | null },
): StreamEvent[] {
  const events: StreamEvent[] = [
    {
      delayMs: firstToken,
      text: namedEvent('message_start', {
        type: 'message_start',
        message: {
          id: answer.id,
          type: 'message',
          role: 'assistant',
          model: request.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { ...answer.usage, output_tokens: 1 },
        },
      }),
    },
    { delayMs: 0, text: namedEvent('ping', { type: 'ping' }) },
  ];
  const cutShort = mode === 'abort-stream' || mode === 'error-event';
  let sent = 0;
  let first = true;
  const ended = (): boolean => cutShort && sent === ABORT_AFTER_DELTAS;
  const add = (type: string, data: Json, delayMs = 0): void => {
    events.push({ delayMs, text: namedEvent(type, data) });
  };
  /** A content delta `tokens` tokens long; the first of the answer leaves with message_start. */
  const delta = (index: number, body: Json, tokens: number): void => {
    add('content_block_delta', { type: 'content_block_delta', index, delta: body }, first ? 0 : tokens * tpotMs);
    first = false;
    sent++;
  };

  for (const [index, block] of answer.blocks.entries()) {
    if (ended()) break;
    if (block.type === 'thinking') {
      add('content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      });
      const texts = deltaTexts(block.tokens, block.deltas);
      for (const [at, text] of texts.entries()) {
        if (ended()) break;
        delta(index, { type: 'thinking_delta', thinking: text }, block.deltas[at]!);
      }
      if (ended()) break;
      delta(index, { type: 'signature_delta', signature: block.signature }, 0);
    } else if (block.type === 'text') {
      add('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      const texts = deltaTexts(block.tokens, block.deltas);
      for (const [at, text] of texts.entries()) {
        if (ended()) break;
        delta(index, { type: 'text_delta', text }, block.deltas[at]!);
      }
    } else {
      add('content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
      });
      for (const piece of block.pieces) {
        if (ended()) break;
        delta(index, { type: 'input_json_delta', partial_json: piece }, textTokens(piece));
      }
    }
    if (ended()) break;
    add('content_block_stop', { type: 'content_block_stop', index });
  }
  if (mode === 'error-event') {
    add('error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
  } else if (!cutShort) {
    add('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: answer.stopReason, stop_sequence: null },
      usage: { output_tokens: answer.outputTokens },
    });
    add('message_stop', { type: 'message_stop' });
  }
  return events;
}

function parseMessagesRequest(body: unknown, generating: boolean): MessagesRequest {
  if (!isRecord(body)) throw invalid('The request body must be a JSON object.');
  const { model, messages, system, stream, tools, tool_choice: toolChoice, thinking } = body;
  if (typeof model !== 'string' || model === '') throw invalid('model: Field required');
  if (!Array.isArray(messages)) throw invalid('messages: Field required');
  if (messages.length === 0) throw invalid('messages: at least one message is required');
  let maxTokens: number | null = null;
  if (generating) {
    const max = body.max_tokens;
    if (max === undefined || max === null) throw invalid('max_tokens: Field required');
    if (typeof max !== 'number' || !Number.isInteger(max)) throw invalid('max_tokens: Input should be a valid integer');
    if (max < 1) throw invalid('max_tokens: Input should be greater than or equal to 1');
    maxTokens = max;
  }
  if (stream !== undefined && typeof stream !== 'boolean') throw invalid('stream: Input should be a valid boolean');

  const prompt = emptyPrompt();
  if (system !== undefined) {
    if (typeof system !== 'string' && !Array.isArray(system)) throw invalid('system: Input should be a valid list');
    addMessage(prompt, 'system', contentText(system, 'system'));
  }
  for (const [index, entry] of messages.entries()) {
    if (!isRecord(entry)) throw invalid(`messages.${index}: Input should be a valid dictionary`);
    if (entry.role !== 'user' && entry.role !== 'assistant') {
      throw invalid(`messages.${index}.role: Input should be 'user' or 'assistant'`);
    }
    addMessage(prompt, entry.role, contentText(entry.content, `messages.${index}.content`));
  }
  prompt.tokens = Math.max(1, prompt.tokens);

  return {
    model,
    maxTokens,
    stream: stream === true,
    prompt,
    tool: toolToCall(tools, toolChoice, messages.at(-1) as Record<string, unknown>),
    thinking: thinkingEnabled(thinking, maxTokens),
  };
}

/**
 * The text a message's content counts: a string, or its blocks' — a text block's text, a
 * tool_result's content (a string or text blocks), a tool_use's input as JSON. Thinking blocks,
 * images and documents count nothing.
 */
function contentText(content: unknown, field: string): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw invalid(`${field}: Input should be a valid list`);
  let text = '';
  for (const [index, block] of content.entries()) {
    if (!isRecord(block) || typeof block.type !== 'string') throw invalid(`${field}.${index}.type: Field required`);
    if (block.type === 'text') {
      if (typeof block.text !== 'string') throw invalid(`${field}.${index}.text: Field required`);
      text += block.text;
    } else if (block.type === 'tool_use') {
      text += JSON.stringify(block.input ?? {});
    } else if (block.type === 'tool_result') {
      if (typeof block.content === 'string') text += block.content;
      else if (Array.isArray(block.content)) text += contentText(block.content, `${field}.${index}.content`);
    }
  }
  return text;
}

/**
 * The tool to call: with `tools` and a `tool_choice` other than `none`, when the last message is
 * the user's and carries no tool_result: `tool_choice`'s named tool, else the first.
 */
function toolToCall(tools: unknown, choice: unknown, last: Record<string, unknown>): MessagesRequest['tool'] {
  if (tools === undefined) return null;
  if (!Array.isArray(tools)) throw invalid('tools: Input should be a valid list');
  for (const [index, tool] of tools.entries()) {
    if (!isRecord(tool) || typeof tool.name !== 'string') throw invalid(`tools.${index}.name: Field required`);
  }
  const declared = tools as { name: string; input_schema?: unknown }[];
  if (choice !== undefined && (!isRecord(choice) || !['auto', 'any', 'tool', 'none'].includes(String(choice.type)))) {
    throw invalid("tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'");
  }
  let chosen = declared[0];
  if (isRecord(choice) && choice.type === 'tool') {
    chosen = declared.find((tool) => tool.name === choice.name);
    if (!chosen) throw invalid(`tool_choice.name: Tool '${String(choice.name)}' not found in tools`);
  }
  if (!chosen || (isRecord(choice) && choice.type === 'none')) return null;
  const answersTool =
    Array.isArray(last.content) && last.content.some((block) => isRecord(block) && block.type === 'tool_result');
  if (last.role !== 'user' || answersTool) return null;
  return { name: chosen.name, schema: chosen.input_schema };
}

/** Whether the request asks for thinking, with a budget Anthropic would take. */
function thinkingEnabled(thinking: unknown, maxTokens: number | null): boolean {
  if (thinking === undefined || thinking === null) return false;
  if (!isRecord(thinking) || (thinking.type !== 'enabled' && thinking.type !== 'disabled')) {
    throw invalid("thinking.type: Input should be 'enabled' or 'disabled'");
  }
  if (thinking.type === 'disabled') return false;
  const budget = thinking.budget_tokens;
  if (typeof budget !== 'number' || !Number.isInteger(budget)) {
    throw invalid('thinking.enabled.budget_tokens: Field required');
  }
  if (budget < MIN_THINKING_BUDGET) {
    throw invalid(`thinking.enabled.budget_tokens: Input should be greater than or equal to ${MIN_THINKING_BUDGET}`);
  }
  if (maxTokens !== null && maxTokens <= budget) {
    throw invalid('`max_tokens` must be greater than `thinking.budget_tokens`.');
  }
  return true;
}
