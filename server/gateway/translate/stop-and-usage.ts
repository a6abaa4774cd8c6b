import type { Usage } from '../sse-events.js';
import type { MessageUsage, StopReason } from './message-shapes.js';

/**
 * The stop sequence a choice says it stopped on, or null. OpenAI does not say (a stop sequence
 * ends a choice with `stop`, as the model's own end does); vLLM writes the sequence in the
 * choice's `stop_reason`, SGLang in its `matched_stop` (both write a token's number when a stop
 * token, not a sequence, ended it). With `stopSequences`, only one of them counts.
 */
export function matchedStop(choice: object, stopSequences?: readonly string[]): string | null {
  const { stop_reason: stopReason, matched_stop: matched } = choice as {
    stop_reason?: unknown;
    matched_stop?: unknown;
  };
  const said = typeof stopReason === 'string' ? stopReason : typeof matched === 'string' ? matched : null;
  if (said === null || said === '') return null;
  return stopSequences === undefined || stopSequences.includes(said) ? said : null;
}

/**
 * Why the message stopped, from a choice's `finish_reason`: `length` is `max_tokens`,
 * `tool_calls` (or the older `function_call`) `tool_use`, `content_filter` a `refusal`, as is a
 * `stop` on a turn that refused (a `refusal` in the message); a `stop` on a stop sequence the
 * upstream names is `stop_sequence`, any other end `end_turn`.
 */
export function stopReasonOf(
  finishReason: unknown,
  matched: string | null,
  refused: boolean,
): { stop_reason: StopReason; stop_sequence: string | null } {
  switch (finishReason) {
    case 'length':
      return { stop_reason: 'max_tokens', stop_sequence: null };
    case 'tool_calls':
    case 'function_call':
      return { stop_reason: 'tool_use', stop_sequence: null };
    case 'content_filter':
      return { stop_reason: 'refusal', stop_sequence: null };
    default:
      if (refused) return { stop_reason: 'refusal', stop_sequence: null };
      if (finishReason === 'stop' && matched !== null) return { stop_reason: 'stop_sequence', stop_sequence: matched };
      return { stop_reason: 'end_turn', stop_sequence: null };
  }
}

/**
 * Anthropic's usage from the upstream's: its `input_tokens` leave out what was read from a cache
 * (OpenAI's `prompt_tokens` count it), which is `cache_read_input_tokens`; chat completions
 * report no cache writes, so `cache_creation_input_tokens` is 0. Unknown usage counts 0 tokens
 * out and `inputEstimate` in.
 */
export function messageUsage(usage: Usage | null, inputEstimate = 0): MessageUsage {
  if (usage === null) {
    return {
      input_tokens: inputEstimate,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: 0,
    };
  }
  return {
    input_tokens: usage.prompt - usage.cachedPrompt,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: usage.cachedPrompt,
    output_tokens: usage.completion,
  };
}
