import { randomUUID } from 'node:crypto';
import { usageFrom } from '../sse-events.js';
import type { ContentBlock, Message } from './message-shapes.js';
import { isObject } from './values.js';
import { matchedStop, messageUsage, stopReasonOf } from './stop-and-usage.js';

/**
 * A tool call's arguments as a `tool_use` block's `input`, which is always an object. Arguments
 * that are not a JSON object (cut short by `max_tokens`, or a model that wrote them wrong) are
 * `{}`: the caller's tool then refuses its missing input, and the model reads why, as it would of
 * any input it got wrong. Kept as text under some key, they would fail the tool's schema all the
 * same, and be a key the tool never declared. Empty arguments are a call without input.
 */
export function toolInput(args: unknown): Record<string, unknown> {
  if (typeof args !== 'string' || args.trim() === '') return {};
  try {
    const input: unknown = JSON.parse(args);
    return isObject(input) ? input : {};
  } catch {
    return {};
  }
}

/** A message's id from the chat completion's: `msg_` and the upstream's id, or a new one if it gave none. */
export const messageId = (chatId: unknown): string =>
  `msg_${typeof chatId === 'string' && chatId !== '' ? chatId : randomUUID().replace(/-/g, '')}`;

/** The text of a chat message's `content`: a string, or (as some servers write it) text parts. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const part of content) {
    if (isObject(part) && part.type === 'text' && typeof part.text === 'string') text += part.text;
  }
  return text;
}

export interface AnswerOptions {
  /** The request's `stop_sequences`: a stop the upstream names counts only if it is one of them. */
  stopSequences?: readonly string[];
}

/**
 * A non-streamed chat completion (its JSON text) as an Anthropic message (JSON text), or null if
 * the text is not a chat completion. Its first choice gives the content: the message's text (and
 * a refusal's, after it) as a text block, each tool call as a `tool_use` block with its
 * arguments parsed ({@link toolInput}). `requestedModel`: the model the caller asked for, which
 * the message names rather than the target's.
 */
export function chatAnswerToMessage(text: string, requestedModel: string, options: AnswerOptions = {}): string | null {
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isObject(answer) || !Array.isArray(answer.choices)) return null;
  const choices = answer.choices.filter(isObject);
  const choice = choices.find((candidate) => candidate.index === 0) ?? choices[0];
  if (choice === undefined || !isObject(choice.message)) return null;
  const message = choice.message;

  const content: ContentBlock[] = [];
  const refusal = typeof message.refusal === 'string' && message.refusal !== '' ? message.refusal : '';
  const said = contentText(message.content) + refusal;
  if (said !== '') content.push({ type: 'text', text: said });
  if (Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls) {
      if (!isObject(call) || !isObject(call.function) || typeof call.function.name !== 'string') continue;
      content.push({
        type: 'tool_use',
        id: typeof call.id === 'string' && call.id !== '' ? call.id : `toolu_${randomUUID().replace(/-/g, '')}`,
        name: call.function.name,
        input: toolInput(call.function.arguments),
      });
    }
  }

  const stop = stopReasonOf(choice.finish_reason, matchedStop(choice, options.stopSequences), refusal !== '');
  const translated: Message = {
    id: messageId(answer.id),
    type: 'message',
    role: 'assistant',
    model: requestedModel,
    content,
    ...stop,
    usage: messageUsage(usageFrom(answer.usage)),
  };
  return JSON.stringify(translated);
}
