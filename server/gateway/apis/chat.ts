import { answerFacts } from '../sse-events.js';
import {
  badStream,
  holdsUnbounded,
  openAiErrorBody,
  openAiHeaders,
  positiveInteger,
  sseData,
  type GatewayApi,
} from './api.js';

/** Parts whose tokens their characters bound. */
const BOUNDED = new Set(['text', 'refusal']);

/** OpenAI's chat completions: `POST /v1/chat/completions`, the gateway's first API. */
export const chatApi: GatewayApi = {
  name: 'chat',
  wire: 'openai',
  kind: 'chat',
  path: '/chat/completions',
  billed: true,
  malformed(body) {
    if (typeof body.model !== 'string' || body.model === '') return 'model is required.';
    if (!Array.isArray(body.messages) || body.messages.length === 0) return 'messages must be a non-empty array.';
    // Forwarded as sent, a `stream` the upstream reads as true would come back as events the
    // gateway took for one answer: only what both read alike passes.
    const stream = badStream(body.stream);
    if (stream) return stream;
    const options = body.stream_options;
    if (options !== undefined && options !== null && (typeof options !== 'object' || Array.isArray(options))) {
      return 'stream_options must be an object.';
    }
    return null;
  },
  streams: (body) => body.stream === true,
  promptCharacters(body) {
    let characters = 0;
    for (const message of body.messages as unknown[]) {
      const content = (message as { content?: unknown } | null)?.content;
      if (typeof content === 'string') characters += content.length;
      else if (Array.isArray(content)) {
        for (const part of content) {
          const text = (part as { text?: unknown } | null)?.text;
          if (typeof text === 'string') characters += text.length;
        }
      }
    }
    return characters;
  },
  // An image's URL of 60 bytes may cost thousands of prompt tokens, and so may audio or a file.
  uncertainBound: (body) =>
    (body.messages as unknown[]).some((message) => {
      const content = (message as { content?: unknown } | null)?.content;
      return Array.isArray(content) && holdsUnbounded(content, BOUNDED);
    }),
  // Every choice generates its own answer.
  maxGenerated: (body, unset) =>
    (positiveInteger(body.max_completion_tokens ?? body.max_tokens) ?? unset) * (positiveInteger(body.n) ?? 1),
  upstreamBody: (body, model, stream) =>
    JSON.stringify({
      ...body,
      model,
      // Always asked for, to measure the tokens; handed on only to a caller who asked too.
      ...(stream ? { stream_options: { ...(body.stream_options as object | undefined), include_usage: true } } : {}),
    }),
  upstreamHeaders: (apiKey) => openAiHeaders(apiKey),
  answerFacts,
  streamReader: () => null,
  wantsUsage: (body) =>
    body.stream === true && (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true,
  errorBody: openAiErrorBody,
  streamError: (message, code) => sseData(null, { error: { message, type: 'upstream_error', code } }),
};
