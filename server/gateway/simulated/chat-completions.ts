/**
 * The simulated provider's `POST /v1/chat/completions` (see ../simulated-upstream.ts for the rules).
 */
import type { ServerResponse } from 'node:http';
import { addMessage, deltaTexts, emptyPrompt, generate, idTail, type Generation, type Prompt } from './generator.js';
import {
  ABORT_AFTER_DELTAS,
  ApiRefusal,
  firstTokenMs,
  isRecord,
  Pace,
  sendEvents,
  sendJson,
  type Json,
  type SimulateMode,
  type Simulation,
  type StreamEvent,
} from './wire.js';

interface ChatRequest {
  model: string;
  stream: boolean;
  includeUsage: boolean;
  maxTokens: number | null;
  prompt: Prompt;
}

export const SERVER_ERROR_MESSAGE = 'The server had an error while processing your request. Sorry about that!';
export const OVERLOADED_MESSAGE = 'The server is overloaded or not ready yet.';

/**
 * The refusals every OpenAI-shaped API makes before it answers, in this order: the outage (503),
 * `error-500` or a model named `-error` (500), `rate-limited` (429), `overloaded` (503).
 */
export function openAiFailure(sim: Simulation, model: string, mode: SimulateMode | null): ApiRefusal | null {
  if (sim.down(model)) return new ApiRefusal(503, OVERLOADED_MESSAGE, 'server_error');
  if (mode === 'error-500' || model.includes('-error'))
    return new ApiRefusal(500, SERVER_ERROR_MESSAGE, 'server_error');
  if (mode === 'rate-limited') {
    return new ApiRefusal(
      429,
      `Rate limit reached for ${model} on requests per min (RPM): Limit 60, Used 60, Requested 1. Please try again in 1s.`,
      'requests',
      'rate_limit_exceeded',
      null,
      {
        'retry-after': '1',
        'x-ratelimit-limit-requests': '60',
        'x-ratelimit-remaining-requests': '0',
        'x-ratelimit-reset-requests': '1s',
      },
    );
  }
  if (mode === 'overloaded') return new ApiRefusal(503, OVERLOADED_MESSAGE, 'server_error');
  return null;
}

/** Chat completions of one server: its answers' serial numbers. */
export function chatCompletions(
  sim: Simulation,
): (res: ServerResponse, body: unknown, mode: SimulateMode | null) => void {
  let served = 0;

  return (res, body, mode) => {
    const request = parseChatRequest(body);
    const failure = openAiFailure(sim, request.model, mode);
    if (failure) throw failure;
    if (mode === 'abort-stream' && !request.stream) {
      res.destroy();
      return;
    }
    const pace = new Pace(res);
    const completion = generate(sim.seed, request.prompt, request.maxTokens);
    const firstToken = firstTokenMs(sim, mode);
    const id = `chatcmpl-${idTail(++served, sim.seed, request.prompt.text)}`;
    const created = Math.floor(Date.now() / 1000);
    if (!request.stream) {
      pace.after(firstToken + sim.tpotMs * completion.tokens.length, () => {
        if (mode === 'error-event') {
          sendJson(res, 500, {
            error: { message: SERVER_ERROR_MESSAGE, type: 'server_error', param: null, code: null },
          });
          return;
        }
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
                finish_reason: finishReason(completion),
              },
            ],
            usage: chatUsage(request, completion),
          },
          { 'x-request-id': `req_${id}` },
        );
      });
      return;
    }
    streamCompletion(res, pace, { id, created, request, completion, firstToken, mode });
  };

  function streamCompletion(
    res: ServerResponse,
    pace: Pace,
    plan: {
      id: string;
      created: number;
      request: ChatRequest;
      completion: Generation;
      firstToken: number;
      mode: SimulateMode | null;
    },
  ): void {
    const { id, created, request, completion } = plan;
    const cutShort = plan.mode === 'abort-stream' || plan.mode === 'error-event';
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
    const delta = (content: Json, finish: Json = null, role?: string): Json => ({
      index: 0,
      delta: finish === null ? { ...(role ? { role, refusal: null } : {}), content } : {},
      logprobs: null,
      finish_reason: finish,
    });

    const events: StreamEvent[] = [{ delayMs: plan.firstToken, text: chunk([delta('', null, 'assistant')]) }];
    const texts = deltaTexts(completion.tokens, completion.deltas);
    for (const [index, size] of completion.deltas.entries()) {
      if (cutShort && index === ABORT_AFTER_DELTAS) break;
      events.push({ delayMs: index === 0 ? 0 : sim.tpotMs * size, text: chunk([delta(texts[index]!)]) });
    }
    if (plan.mode === 'error-event') {
      // As OpenAI reports a failure after the stream has begun: an error object in place of a chunk, then the end.
      events.push({
        delayMs: 0,
        text: `data: ${JSON.stringify({ error: { message: SERVER_ERROR_MESSAGE, type: 'server_error', param: null, code: null } })}\n\n`,
      });
    } else if (!cutShort) {
      events.push({ delayMs: 0, text: chunk([delta(null, finishReason(completion))]) });
      if (request.includeUsage) events.push({ delayMs: 0, text: chunk([], chatUsage(request, completion)) });
      events.push({ delayMs: 0, text: 'data: [DONE]\n\n' });
    }
    sendEvents(res, pace, events, { 'x-request-id': `req_${id}` }, plan.mode === 'abort-stream');
  }
}

function finishReason(completion: Generation): 'stop' | 'length' {
  return completion.cut ? 'length' : 'stop';
}

function chatUsage(request: ChatRequest, completion: Generation): Json {
  const count = completion.tokens.length;
  return {
    prompt_tokens: request.prompt.tokens,
    completion_tokens: count,
    total_tokens: request.prompt.tokens + count,
    prompt_tokens_details: { cached_tokens: completion.cachedTokens, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
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
  const prompt = emptyPrompt();
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
    addMessage(prompt, message.role, partsText(message.content));
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
    prompt: { text: prompt.text, tokens: Math.max(1, prompt.tokens) },
  };
}

/** A message's text: a string, or the `text` of the parts of a content array (images and audio count nothing). */
export function partsText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const part of content) if (isRecord(part) && typeof part.text === 'string') text += part.text;
  return text;
}
