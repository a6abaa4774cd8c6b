/**
 * The simulated provider's `POST /v1/embeddings` (see ../simulated-upstream.ts for the rules).
 */
import type { ServerResponse } from 'node:http';
import { openAiFailure, SERVER_ERROR_MESSAGE } from './chat-completions.js';
import { generator, hash, idTail } from './generator.js';
import { ApiRefusal, firstTokenMs, isRecord, Pace, sendJson, type SimulateMode, type Simulation } from './wire.js';

export const DEFAULT_DIMENSIONS = 8;
const MAX_DIMENSIONS = 3_072;
const MAX_INPUTS = 2_048;

interface EmbeddingInput {
  /** What the vector is drawn from. */
  key: string;
  tokens: number;
}

interface EmbeddingsRequest {
  model: string;
  inputs: EmbeddingInput[];
  base64: boolean;
  dimensions: number;
}

const invalid = (message: string, param: string, code: string | null = 'invalid_value'): ApiRefusal =>
  new ApiRefusal(400, message, 'invalid_request_error', code, param);

/** Embeddings of one server: its answers' serial numbers. */
export function embeddingsApi(
  sim: Simulation,
): (res: ServerResponse, body: unknown, mode: SimulateMode | null) => void {
  let served = 0;

  return (res, body, mode) => {
    const request = parseEmbeddingsRequest(body);
    const failure = openAiFailure(sim, request.model, mode);
    if (failure) throw failure;
    if (mode === 'abort-stream') {
      res.destroy();
      return;
    }
    let promptTokens = 0;
    const data = request.inputs.map((input, index) => {
      promptTokens += input.tokens;
      const vector = embed(sim.seed, input.key, request.dimensions);
      return { object: 'embedding', index, embedding: request.base64 ? base64(vector) : vector };
    });
    const tail = idTail(++served, sim.seed, request.inputs[0]!.key);
    // Nothing is generated token by token: the answer comes after the first token's delay.
    new Pace(res).after(firstTokenMs(sim, mode), () => {
      if (mode === 'error-event') {
        sendJson(res, 500, { error: { message: SERVER_ERROR_MESSAGE, type: 'server_error', param: null, code: null } });
        return;
      }
      sendJson(
        res,
        200,
        {
          object: 'list',
          data,
          model: request.model,
          usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
        },
        { 'x-request-id': `req_${tail}` },
      );
    });
  };
}

/**
 * A unit vector of `dimensions` float32 components drawn from the seed and the input. The first
 * components are the same draws whatever `dimensions`, so a shorter vector is a longer one cut
 * and scaled back to unit length, as OpenAI's `dimensions` shortens its embeddings.
 */
function embed(seed: number, key: string, dimensions: number): number[] {
  const random = generator(hash(seed, key));
  const raw: number[] = [];
  let sum = 0;
  for (let i = 0; i < dimensions; i++) {
    const value = random() * 2 - 1;
    raw.push(value);
    sum += value * value;
  }
  const norm = Math.sqrt(sum) || 1;
  return raw.map((value) => Math.fround(value / norm));
}

/** The vector as OpenAI's `base64` encoding has it: little-endian float32 bytes. */
function base64(vector: readonly number[]): string {
  const bytes = Buffer.alloc(vector.length * 4);
  for (const [index, value] of vector.entries()) bytes.writeFloatLE(value, index * 4);
  return bytes.toString('base64');
}

function parseEmbeddingsRequest(body: unknown): EmbeddingsRequest {
  if (!isRecord(body)) throw new ApiRefusal(400, 'The request body must be a JSON object.', 'invalid_request_error');
  const { model, input, encoding_format: format, dimensions } = body;
  if (typeof model !== 'string' || model === '') {
    throw invalid('you must provide a model parameter', 'model', null);
  }
  if (format !== undefined && format !== null && format !== 'float' && format !== 'base64') {
    throw invalid(
      `Invalid value for 'encoding_format': expected 'float' or 'base64', got '${String(format)}'.`,
      'encoding_format',
    );
  }
  if (
    dimensions !== undefined &&
    dimensions !== null &&
    (typeof dimensions !== 'number' || !Number.isInteger(dimensions) || dimensions < 1 || dimensions > MAX_DIMENSIONS)
  ) {
    throw invalid(`Invalid 'dimensions': expected an integer from 1 to ${MAX_DIMENSIONS}.`, 'dimensions');
  }
  return {
    model,
    inputs: parseInputs(input),
    base64: format === 'base64',
    dimensions: typeof dimensions === 'number' ? dimensions : DEFAULT_DIMENSIONS,
  };
}

/**
 * `input` as OpenAI takes it: a string, an array of strings, one array of token ids, or an array
 * of them; none empty. A string counts ceil(characters / 4) tokens, a token array its length.
 */
function parseInputs(input: unknown): EmbeddingInput[] {
  const refused = invalid(
    "Invalid 'input': expected a non-empty string, an array of non-empty strings, an array of token ids or an array of non-empty token arrays.",
    'input',
  );
  const isTokens = (value: unknown): value is number[] =>
    Array.isArray(value) && value.length > 0 && value.every((id) => Number.isInteger(id) && (id as number) >= 0);
  const text = (value: string): EmbeddingInput => ({ key: `text\u0000${value}`, tokens: Math.ceil(value.length / 4) });
  const tokens = (value: number[]): EmbeddingInput => ({ key: `tokens\u0000${value.join(',')}`, tokens: value.length });

  if (typeof input === 'string') {
    if (input === '') throw refused;
    return [text(input)];
  }
  if (!Array.isArray(input) || input.length === 0) throw refused;
  if (input.length > MAX_INPUTS) {
    throw invalid(`Invalid 'input': at most ${MAX_INPUTS} inputs are taken, got ${input.length}.`, 'input');
  }
  if (input.every((item) => typeof item === 'string' && item !== '')) return (input as string[]).map(text);
  if (isTokens(input)) return [tokens(input)];
  if (input.every(isTokens)) return (input as number[][]).map(tokens);
  throw refused;
}
