import type { Random } from './random.js';

/**
 * Who calls the demo gateway: the User-Agent strings real SDKs and tools send, and the
 * `X-SVC-Meta-*` values a team would tag requests with.
 */
export const USER_AGENTS = {
  python: ['OpenAI/Python 1.54.4', 'OpenAI/Python 1.57.0', 'OpenAI/Python 1.59.6', 'openai-python/1.61.1'],
  node: ['OpenAI/JS 4.73.1', 'OpenAI/JS 4.77.0', 'Anthropic/JS 0.33.1', 'anthropic-sdk-typescript/0.36.3'],
  langchain: [
    'langchain-openai/0.2.14 OpenAI/Python 1.57.0',
    'LangChain.js/0.3.6 OpenAI/JS 4.73.1',
    'llama-index/0.12.5 OpenAI/Python 1.57.0',
  ],
  tools: [
    'curl/8.5.0',
    'curl/7.81.0',
    'python-requests/2.32.3',
    'PostmanRuntime/7.43.0',
    'Go-http-client/2.0',
    'axios/1.7.9',
  ],
} as const;

export type CallerKind = keyof typeof USER_AGENTS;

export const CUSTOMERS = [
  'acme-retail',
  'bluefin-bank',
  'indus-telecom',
  'karachi-logistics',
  'lahore-health',
  'margalla-edu',
  'ravi-foods',
  'sindh-energy',
] as const;

/**
 * Metadata as the gateway stores it: header names after `X-SVC-Meta-`, lowercased, as
 * JSON text. Written by hand rather than by JSON.stringify, which was the slowest step
 * of a million-row seed: every value is a plain word or hex, with nothing to escape.
 */
export function requestMetadata(random: Random, features: readonly string[], tagged: number): string {
  if (!random.chance(tagged)) return '{}';
  let json = `{"customer":"${random.pick(CUSTOMERS)}","feature":"${random.pick(features)}","trace_id":"${random.hex(32)}"`;
  if (random.chance(0.15)) json += `,"user_tier":"${random.pick(TIERS)}"`;
  if (random.chance(0.05)) json += `,"experiment":"${random.pick(EXPERIMENTS)}"`;
  return json + '}';
}

const TIERS = ['free', 'pro', 'enterprise'];
const EXPERIMENTS = ['prompt-v2', 'rerank-off', 'short-context'];
