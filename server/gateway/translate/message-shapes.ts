/**
 * The part of Anthropic's Messages API answer that a translated chat completion fills in: the
 * message, its content blocks and usage, and the events of its stream.
 */

export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'refusal';

export interface MessageUsage {
  /** Prompt tokens not read from a cache. */
  input_tokens: number;
  /** Always 0: chat completions report no cache writes. */
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
}

export interface TextBlock {
  type: 'text';
  text: string;
}

export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
}

export type ContentBlock = TextBlock | ToolUseBlock;

export interface Message {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: ContentBlock[];
  stop_reason: StopReason | null;
  stop_sequence: string | null;
  usage: MessageUsage;
}

/** The usage of a `message_delta`: input counts only once the upstream has told them. */
export type DeltaUsage = Pick<MessageUsage, 'output_tokens'> & Partial<MessageUsage>;

export type StreamEvent =
  | { type: 'message_start'; message: Message }
  | { type: 'ping' }
  | { type: 'content_block_start'; index: number; content_block: ContentBlock }
  | {
      type: 'content_block_delta';
      index: number;
      delta: { type: 'text_delta'; text: string } | { type: 'input_json_delta'; partial_json: string };
    }
  | { type: 'content_block_stop'; index: number }
  | {
      type: 'message_delta';
      delta: { stop_reason: StopReason; stop_sequence: string | null };
      usage: DeltaUsage;
    }
  | { type: 'message_stop' }
  | { type: 'error'; error: { type: string; message: string } };
