import { estimatedTokens } from '../request-facts.js';
import { chatAnswerToMessage } from '../translate/chat-answer-to-message.js';
import { ChatStreamToMessages } from '../translate/chat-stream-to-messages.js';
import { messagesToChat } from '../translate/messages-to-chat.js';
import type { Translation } from './api.js';
import { chatApi } from './chat.js';

/**
 * Anthropic's Messages API asked of a target that speaks only OpenAI's chat completions
 * (translate/ says what is translated, and refuses what cannot be without loss).
 */

const stopSequences = (body: Record<string, unknown>): readonly string[] | undefined =>
  Array.isArray(body.stop_sequences) ? body.stop_sequences.filter((stop) => typeof stop === 'string') : undefined;

/** The model the caller asked for: the answer names it, as the Messages API's answers do. */
const asked = (body: Record<string, unknown>) => (typeof body.model === 'string' ? body.model : '');

export const messagesOverChat: Translation = {
  upstream: chatApi,
  body(body, model) {
    const translated = messagesToChat(body, model);
    return translated.ok ? { ok: true, text: JSON.stringify(translated.body) } : translated;
  },
  answer: (text, body) => chatAnswerToMessage(text, asked(body), { stopSequences: stopSequences(body) }),
  stream: (body, promptCharacters) =>
    new ChatStreamToMessages(asked(body), {
      inputTokensEstimate: estimatedTokens(promptCharacters),
      stopSequences: stopSequences(body),
    }),
};
