/**
 * The simulated provider's deterministic generator, shared by every API it speaks: an answer
 * depends only on the seed and the prompt's text, so the same conversation asked through chat
 * completions, Anthropic's messages or OpenAI's responses gets the same words.
 *
 * - Prompt tokens: ceil(characters / 4) + 4 per message (`addMessage`), at least 1.
 * - Completion tokens: MIN_COMPLETION..MAX_COMPLETION drawn from seed and prompt; a maximum below
 *   that cuts the same answer. One token is one word of the vocabulary (with its leading space and
 *   any punctuation), so `text.split(' ').length` is the token count.
 * - Cached tokens: prompts of CACHE_MIN_TOKENS or more have a drawn share of 25-90 % cached, in
 *   blocks of CACHE_BLOCK tokens; shorter prompts 0.
 */

export const MIN_COMPLETION = 8;
export const MAX_COMPLETION = 160;
export const CACHE_MIN_TOKENS = 1024;
export const CACHE_BLOCK = 128;

const VOCABULARY = [
  'the', 'gateway', 'request', 'model', 'token', 'answer', 'provider', 'latency', 'stream', 'cache',
  'prompt', 'route', 'key', 'budget', 'limit', 'usage', 'response', 'client', 'server', 'cost',
  'is', 'was', 'can', 'will', 'should', 'may', 'must', 'often', 'rarely', 'always',
  'fast', 'slow', 'cheap', 'reliable', 'simple', 'careful', 'steady', 'quiet', 'clear', 'useful',
  'and', 'but', 'so', 'then', 'because', 'while', 'when', 'before', 'after', 'with',
  'every', 'each', 'some', 'most', 'few', 'one', 'two', 'many', 'this', 'that',
  'returns', 'sends', 'reads', 'counts', 'keeps', 'checks', 'measures', 'forwards', 'waits', 'retries',
]; // prettier-ignore

/** The generator's input: the roles and texts of the messages, and their token count. */
export interface Prompt {
  text: string;
  tokens: number;
}

export function emptyPrompt(): Prompt {
  return { text: '', tokens: 0 };
}

/** Adds one message to `prompt`: its role and text to the generator's input, its tokens to the count. */
export function addMessage(prompt: Prompt, role: string, text: string): void {
  prompt.text += `${role}\u0000${text}\u0000`;
  prompt.tokens += Math.ceil(text.length / 4) + 4;
}

export interface Generation {
  /** One entry per token; joined they make the text. */
  tokens: string[];
  /** How many tokens each streamed delta carries, summing to tokens.length. */
  deltas: number[];
  /** Whether the maximum cut the planned answer. */
  cut: boolean;
  /** The cached part of the prompt's tokens. */
  cachedTokens: number;
}

/** The answer to `prompt` (whose tokens must be at least 1), at most `maxTokens` tokens long. */
export function generate(seed: number, prompt: Prompt, maxTokens: number | null): Generation {
  const random = generator(hash(seed, prompt.text));
  // Drawn before the tokens and whatever the bounds, so that a maximum only cuts the same answer.
  const planned = MIN_COMPLETION + Math.floor(random() * (MAX_COMPLETION - MIN_COMPLETION + 1));
  const cacheShare = 0.25 + random() * 0.65;
  const count = maxTokens === null ? planned : Math.min(planned, maxTokens);
  const tokens = prose(random, count, planned);
  const deltas = deltaSizes(random, count);
  const cachedTokens =
    prompt.tokens >= CACHE_MIN_TOKENS ? Math.floor((prompt.tokens * cacheShare) / CACHE_BLOCK) * CACHE_BLOCK : 0;
  return { tokens, deltas, cut: count < planned, cachedTokens };
}

/**
 * A text of its own beside the answer (a thinking block, a reasoning summary): `min..max` words
 * drawn from the seed, `salt` and the prompt, in tokens and deltas as an answer is.
 */
export function aside(seed: number, salt: string, prompt: Prompt, min: number, max: number): Generation {
  const random = generator(hash(seed, `${salt}\u0000${prompt.text}`));
  const count = min + Math.floor(random() * (max - min + 1));
  const tokens = prose(random, count, count);
  return { tokens, deltas: deltaSizes(random, count), cut: false, cachedTokens: 0 };
}

/** Sentences of `count` words from the vocabulary; the `planned` answer, not a cut one, ends on a full stop. */
function prose(random: () => number, count: number, planned: number): string[] {
  const tokens: string[] = [];
  let sentenceLeft = 0;
  for (let i = 0; i < count; i++) {
    let word = VOCABULARY[Math.floor(random() * VOCABULARY.length)]!;
    if (sentenceLeft === 0) {
      sentenceLeft = 5 + Math.floor(random() * 10);
      word = word[0]!.toUpperCase() + word.slice(1);
    }
    sentenceLeft--;
    if (sentenceLeft === 0 || i === planned - 1) word += '.';
    else if (random() < 0.06) word += ',';
    tokens.push(i === 0 ? word : ` ${word}`);
  }
  return tokens;
}

/** Streamed deltas of 1 to 3 tokens. */
function deltaSizes(random: () => number, count: number): number[] {
  const deltas: number[] = [];
  for (let left = count; left > 0;) {
    const size = Math.min(left, 1 + Math.floor(random() * 3));
    deltas.push(size);
    left -= size;
  }
  return deltas;
}

/** The tokens of `tokens` grouped by `deltas`, each group joined: the texts of the streamed deltas. */
export function deltaTexts(tokens: readonly string[], deltas: readonly number[]): string[] {
  const texts: string[] = [];
  let next = 0;
  for (const size of deltas) {
    texts.push(tokens.slice(next, next + size).join(''));
    next += size;
  }
  return texts;
}

/** A word of the vocabulary, drawn. */
export function word(random: () => number): string {
  return VOCABULARY[Math.floor(random() * VOCABULARY.length)]!;
}

/** `text` in pieces of 4 to 12 characters, as a provider streams a tool call's JSON arguments. */
export function pieces(random: () => number, text: string): string[] {
  const out: string[] = [];
  for (let at = 0; at < text.length;) {
    const size = 4 + Math.floor(random() * 9);
    out.push(text.slice(at, at + size));
    at += size;
  }
  return out;
}

/** Tokens of a text that is not made of the vocabulary's words (a tool call's arguments): a token per 4 characters. */
export function textTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** The first `count` tokens' deltas: `deltas` up to where they reach `count`, the last one shortened. */
export function prefixDeltas(deltas: readonly number[], count: number): number[] {
  const out: number[] = [];
  for (let left = count, i = 0; left > 0 && i < deltas.length; i++) {
    const size = Math.min(left, deltas[i]!);
    out.push(size);
    left -= size;
  }
  return out;
}

/** How many tokens the answer's first sentence takes (the whole answer when it has no full stop). */
export function firstSentenceLength(tokens: readonly string[]): number {
  const end = tokens.findIndex((token) => token.endsWith('.'));
  return end === -1 ? tokens.length : end + 1;
}

/**
 * Arguments for a tool call, drawn from the seed, `salt` and the prompt, that fit the tool's
 * JSON schema as far as its top-level `properties` go: a string is a word of the vocabulary (or
 * one of its `enum`), an integer 0-99, a number 0-100 with one decimal, a boolean, an array
 * empty, an object empty. A schema without properties gets `{}`.
 */
export function toolArguments(seed: number, salt: string, prompt: Prompt, schema: unknown): Record<string, unknown> {
  const random = generator(hash(seed, `${salt}\u0000${prompt.text}`));
  const properties = isObject(schema) && isObject(schema.properties) ? schema.properties : {};
  const input: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(properties)) {
    const type = isObject(property) ? property.type : undefined;
    const choices = isObject(property) && Array.isArray(property.enum) ? property.enum : null;
    if (choices && choices.length > 0) input[name] = choices[Math.floor(random() * choices.length)];
    else if (type === 'integer') input[name] = Math.floor(random() * 100);
    else if (type === 'number') input[name] = Math.round(random() * 1000) / 10;
    else if (type === 'boolean') input[name] = random() < 0.5;
    else if (type === 'array') input[name] = [];
    else if (type === 'object') input[name] = {};
    else input[name] = word(random);
  }
  return input;
}

/** An opaque token (a thinking block's signature, encrypted reasoning): `bytes` drawn bytes in base64. */
export function opaque(seed: number, salt: string, text: string, bytes: number): string {
  const random = generator(hash(seed, `${salt}\u0000${text}`));
  const out = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i++) out[i] = Math.floor(random() * 256);
  return out.toString('base64');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** FNV-1a over the seed and the text: cheap, stable across platforms and runs. */
export function hash(seed: number, text: string): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** mulberry32: a 32-bit state is plenty for a few hundred draws per answer. */
export function generator(state: number): () => number {
  let s = state >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An id's deterministic tail: the request's number on its server, then a hash of what it answers. */
export function idTail(serial: number, seed: number, text: string): string {
  return `sim${serial.toString(36)}${hash(seed, text).toString(36)}`;
}
