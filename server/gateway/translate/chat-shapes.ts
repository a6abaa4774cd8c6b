/**
 * The part of OpenAI's chat completions request that a translated Anthropic Messages request
 * uses: written here rather than imported, as the `openai` package is only the tests' (which
 * check that every body built here is one of its `ChatCompletionCreateParams`).
 */

export interface ChatTextPart {
  type: 'text';
  text: string;
}

export interface ChatImagePart {
  type: 'image_url';
  /** An `https:` address, or the image itself as a `data:` URL. */
  image_url: { url: string };
}

export interface ChatToolCall {
  id: string;
  type: 'function';
  /** `arguments`: the tool's input written as JSON. */
  function: { name: string; arguments: string };
}

export interface ChatSystemMessage {
  role: 'system';
  content: string | ChatTextPart[];
}

export interface ChatUserMessage {
  role: 'user';
  content: string | (ChatTextPart | ChatImagePart)[];
}

export interface ChatAssistantMessage {
  role: 'assistant';
  /** Null when the turn only called tools. */
  content: string | ChatTextPart[] | null;
  tool_calls?: ChatToolCall[];
}

export interface ChatToolMessage {
  role: 'tool';
  tool_call_id: string;
  content: string | ChatTextPart[];
}

export type ChatMessage = ChatSystemMessage | ChatUserMessage | ChatAssistantMessage | ChatToolMessage;

export interface ChatFunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters: Record<string, unknown>; strict?: boolean };
}

export type ChatToolChoice = 'auto' | 'required' | 'none' | { type: 'function'; function: { name: string } };

/** A chat completions request, as {@link messagesToChat} writes it. */
export interface ChatRequestBody {
  model: string;
  messages: ChatMessage[];
  max_completion_tokens: number;
  stop?: string[];
  temperature?: number;
  top_p?: number;
  user?: string;
  tools?: ChatFunctionTool[];
  tool_choice?: ChatToolChoice;
  parallel_tool_calls?: boolean;
  stream?: true;
  stream_options?: { include_usage: true };
}
