import { isCount, type AnswerFacts } from '../sse-events.js';
import { openAiErrorBody, openAiHeaders, sseData, withModel, type GatewayApi } from './api.js';

/** OpenAI's embeddings, `POST /v1/embeddings`: never streamed, nothing generated, the input billed. */

function embeddingFacts(text: string): AnswerFacts {
  let answer: { usage?: { prompt_tokens?: unknown } | null };
  try {
    answer = JSON.parse(text) as typeof answer;
  } catch {
    return { usage: null, generatedCharacters: 0 };
  }
  const prompt = answer?.usage?.prompt_tokens;
  return {
    usage: isCount(prompt) && prompt > 0 ? { prompt, completion: 0, cachedPrompt: 0, cacheWrite: 0 } : null,
    generatedCharacters: 0,
  };
}

/** A string, a list of strings, a list of tokens or a list of lists of tokens; none empty. */
function badInput(input: unknown): string | null {
  const tokens = (value: unknown) =>
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((token) => Number.isInteger(token) && (token as number) >= 0);
  if (typeof input === 'string') return input === '' ? 'input must not be empty.' : null;
  if (!Array.isArray(input) || input.length === 0) return 'input must be a string or a non-empty array.';
  if (input.every((item) => typeof item === 'string' && item !== '')) return null;
  if (tokens(input) || input.every(tokens)) return null;
  return 'input must be a string, an array of strings, an array of tokens or an array of token arrays, none empty.';
}

export const embeddingsApi: GatewayApi = {
  name: 'embeddings',
  wire: 'openai',
  kind: 'embeddings',
  path: '/embeddings',
  billed: true,
  malformed(body) {
    if (typeof body.model !== 'string' || body.model === '') return 'model is required.';
    const input = badInput(body.input);
    if (input) return input;
    const format = body.encoding_format;
    if (format !== undefined && format !== 'float' && format !== 'base64') {
      return 'encoding_format must be "float" or "base64".';
    }
    return null;
  },
  streams: () => false,
  // A token of a token array is at least one character of the body: the body's bytes bound them.
  promptCharacters: (body) =>
    typeof body.input === 'string'
      ? body.input.length
      : (body.input as unknown[]).reduce<number>(
          (sum, item) => sum + (typeof item === 'string' ? item.length : Array.isArray(item) ? item.length * 4 : 4),
          0,
        ),
  uncertainBound: () => false,
  maxGenerated: () => 1,
  upstreamBody: withModel,
  upstreamHeaders: (apiKey) => openAiHeaders(apiKey),
  answerFacts: embeddingFacts,
  streamReader: () => null,
  wantsUsage: () => false,
  errorBody: openAiErrorBody,
  streamError: (message, code) => sseData(null, { error: { message, type: 'upstream_error', code } }),
};
