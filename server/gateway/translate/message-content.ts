import type {
  ChatAssistantMessage,
  ChatImagePart,
  ChatMessage,
  ChatTextPart,
  ChatToolCall,
  ChatToolMessage,
  ChatUserMessage,
} from './chat-shapes.js';
import { invalid, notAvailable } from './refusals.js';
import { given, isObject } from './values.js';

/**
 * Anthropic's conversation (`system`, `messages`) as chat completions' messages. Every block's
 * `cache_control` is dropped: chat completions cache a prompt's prefix without being asked.
 */

/** The article a block's type takes in a sentence: "an image block", "a thinking block". */
const aBlock = (type: string) => `${/^[aeiou]/i.test(type) ? 'an' : 'a'} ${type} block`;

/** One text part as a string, as every chat server reads it; several (or any image) as parts; none as ''. */
function chatContent<Part extends ChatTextPart | ChatImagePart>(parts: Part[]): string | Part[] {
  const only = parts[0];
  if (only === undefined) return '';
  return parts.length === 1 && only.type === 'text' ? only.text : parts;
}

/** A text block's text; its citations (quoting a document the route cannot take) are refused. */
function textOf(block: Record<string, unknown>, path: string): string {
  if (typeof block.text !== 'string') throw invalid(`${path}.text must be a string.`);
  if (Array.isArray(block.citations) ? block.citations.length > 0 : given(block.citations)) {
    throw notAvailable(`${path}.citations`);
  }
  return block.text;
}

/** An image block as an `image_url` part: a base64 image as a `data:` URL, an image's address as it is. */
function imagePart(block: Record<string, unknown>, path: string): ChatImagePart {
  const source = block.source;
  if (!isObject(source)) throw invalid(`${path}.source must be an object.`);
  if (source.type === 'base64') {
    if (typeof source.media_type !== 'string' || typeof source.data !== 'string') {
      throw invalid(`${path}.source must have a media_type and data, both strings.`);
    }
    return { type: 'image_url', image_url: { url: `data:${source.media_type};base64,${source.data}` } };
  }
  if (source.type === 'url') {
    if (typeof source.url !== 'string') throw invalid(`${path}.source.url must be a string.`);
    return { type: 'image_url', image_url: { url: source.url } };
  }
  if (source.type === 'file') throw notAvailable(`${path} (an image from the Files API)`);
  throw invalid(`${path}.source.type must be "base64", "url" or "file".`);
}

/** A block's `type`, checked to be a string. */
function typeOf(block: unknown, path: string): { block: Record<string, unknown>; type: string } {
  if (!isObject(block) || typeof block.type !== 'string') throw invalid(`${path} must be a content block with a type.`);
  return { block, type: block.type };
}

/** Text blocks alone (a system prompt's, a system turn's) as text parts. */
function textParts(content: unknown, path: string): ChatTextPart[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw invalid(`${path} must be a string or an array of text blocks.`);
  return content.map((item, index) => {
    const { block, type } = typeOf(item, `${path}.${index}`);
    if (type !== 'text') throw notAvailable(`${path}.${index} (${aBlock(type)} where only text is taken)`);
    return { type: 'text', text: textOf(block, `${path}.${index}`) };
  });
}

/** The system prompt, a string or text blocks, as a system message (none when it is empty). */
export function systemMessage(system: unknown): ChatMessage[] {
  if (!given(system)) return [];
  const parts = textParts(system, 'system');
  return parts.length === 0 ? [] : [{ role: 'system', content: chatContent(parts) }];
}

/**
 * A `tool_result` block as a `tool` message. Its content is text: a string, or text blocks; an
 * image (or any other block) cannot go in a tool message, and is refused. A result the tool
 * reported as an error (`is_error`) says so in the text, as `Error: ` before it: a tool message
 * has no other way to.
 */
function toolMessage(block: Record<string, unknown>, path: string): ChatToolMessage {
  if (typeof block.tool_use_id !== 'string' || block.tool_use_id === '') {
    throw invalid(`${path}.tool_use_id must be a non-empty string.`);
  }
  let parts: ChatTextPart[] = [];
  if (typeof block.content === 'string') parts = [{ type: 'text', text: block.content }];
  else if (Array.isArray(block.content)) {
    parts = block.content.map((item, index) => {
      const { block: inner, type } = typeOf(item, `${path}.content.${index}`);
      if (type === 'image') throw notAvailable(`${path}.content.${index} (an image in a tool_result)`);
      if (type !== 'text') throw notAvailable(`${path}.content.${index} (${aBlock(type)} in a tool_result)`);
      return { type: 'text', text: textOf(inner, `${path}.content.${index}`) };
    });
  } else if (given(block.content)) throw invalid(`${path}.content must be a string or an array of blocks.`);
  if (block.is_error === true) {
    const [first, ...rest] = parts;
    parts = [{ type: 'text', text: first === undefined ? 'Error' : `Error: ${first.text}` }, ...rest];
  }
  return { role: 'tool', tool_call_id: block.tool_use_id, content: chatContent(parts) };
}

/** A `tool_use` block as a tool call, its input written as the call's JSON arguments. */
function toolCall(block: Record<string, unknown>, path: string): ChatToolCall {
  if (typeof block.id !== 'string' || block.id === '') throw invalid(`${path}.id must be a non-empty string.`);
  if (typeof block.name !== 'string' || block.name === '') throw invalid(`${path}.name must be a non-empty string.`);
  if (!isObject(block.input)) throw invalid(`${path}.input must be an object.`);
  // A call made by a server tool's code (programmatic tool calling) is that tool's business.
  if (given(block.caller) && !(isObject(block.caller) && block.caller.type === 'direct')) {
    throw notAvailable(`${path}.caller`);
  }
  return { id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input) } };
}

/**
 * A user turn: its `tool_result` blocks as `tool` messages, in their order, then the rest (text,
 * images) as one user message. Anthropic takes tool results only at the start of a user turn,
 * so this is their order in any request it accepts; chat completions take a tool's message only
 * straight after the assistant's call, before any other.
 */
function userMessages(content: unknown[], path: string): ChatMessage[] {
  const tools: ChatToolMessage[] = [];
  const parts: (ChatTextPart | ChatImagePart)[] = [];
  content.forEach((item, index) => {
    const at = `${path}.${index}`;
    const { block, type } = typeOf(item, at);
    if (type === 'text') parts.push({ type: 'text', text: textOf(block, at) });
    else if (type === 'image') parts.push(imagePart(block, at));
    else if (type === 'tool_result') tools.push(toolMessage(block, at));
    else throw notAvailable(`${at} (${aBlock(type)} in a user turn)`);
  });
  const user: ChatUserMessage[] =
    parts.length > 0 || tools.length === 0 ? [{ role: 'user', content: chatContent(parts) }] : [];
  return [...tools, ...user];
}

/**
 * An assistant turn: its text as the message's content, its `tool_use` blocks as its tool calls.
 * A chat message holds its text before its calls: text Anthropic had after a call comes before
 * it (models write text, then call).
 */
function assistantMessage(content: unknown[], path: string): ChatAssistantMessage {
  const parts: ChatTextPart[] = [];
  const calls: ChatToolCall[] = [];
  content.forEach((item, index) => {
    const at = `${path}.${index}`;
    const { block, type } = typeOf(item, at);
    if (type === 'text') parts.push({ type: 'text', text: textOf(block, at) });
    else if (type === 'tool_use') calls.push(toolCall(block, at));
    else throw notAvailable(`${at} (${aBlock(type)} in an assistant turn)`);
  });
  const message: ChatAssistantMessage = {
    role: 'assistant',
    content: parts.length === 0 && calls.length > 0 ? null : chatContent(parts),
  };
  if (calls.length > 0) message.tool_calls = calls;
  return message;
}

/** The conversation's turns as chat messages. */
export function chatMessages(messages: unknown): ChatMessage[] {
  if (!Array.isArray(messages) || messages.length === 0) throw invalid('messages must be a non-empty array.');
  const chat: ChatMessage[] = [];
  messages.forEach((message, index) => {
    const path = `messages.${index}`;
    if (!isObject(message)) throw invalid(`${path} must be an object.`);
    const { role, content } = message;
    if (role === 'system') {
      // A system turn in the conversation: text alone, as the system prompt.
      const parts = textParts(content, `${path}.content`);
      if (parts.length > 0) chat.push({ role: 'system', content: chatContent(parts) });
      return;
    }
    if (role !== 'user' && role !== 'assistant') throw invalid(`${path}.role must be "user" or "assistant".`);
    if (typeof content === 'string') {
      chat.push(role === 'user' ? { role, content } : { role, content });
      return;
    }
    if (!Array.isArray(content)) throw invalid(`${path}.content must be a string or an array of content blocks.`);
    if (role === 'user') chat.push(...userMessages(content, `${path}.content`));
    else chat.push(assistantMessage(content, `${path}.content`));
  });
  // Anthropic continues a last assistant turn (a prefill); chat completions would answer after it.
  const last = messages.length - 1;
  if ((messages[last] as Record<string, unknown>).role === 'assistant') {
    throw notAvailable(`messages.${last} (a last assistant turn for the model to continue)`);
  }
  return chat;
}
