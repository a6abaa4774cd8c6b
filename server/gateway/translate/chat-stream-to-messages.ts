import { randomUUID } from 'node:crypto';
import { type Usage, usageFrom } from '../sse-events.js';
import { anthropicErrorType } from './anthropic-errors.js';
import { messageId } from './chat-answer-to-message.js';
import type { StreamEvent } from './message-shapes.js';
import { isObject } from './values.js';
import { matchedStop, messageUsage, stopReasonOf } from './stop-and-usage.js';

/** One server-sent event of Anthropic's stream, as sent: its name, its JSON, a blank line. */
const frame = (event: StreamEvent): string => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;

/** A text delta's frame, as `frame` writes it: most of a stream's, written out in a seventh of the time. */
const textDelta = (index: number, text: string): string =>
  `event: content_block_delta\ndata: {"type":"content_block_delta","index":${index},"delta":{"type":"text_delta","text":${JSON.stringify(text)}}}\n\n`;

export interface StreamOptions {
  /**
   * The prompt's tokens as the gateway estimates them, for `message_start`'s `input_tokens`
   * (default 0): the upstream only counts them in its last chunk, which `message_delta` hands on.
   */
  inputTokensEstimate?: number;
  /** The request's `stop_sequences`: a stop the upstream names counts only if it is one of them. */
  stopSequences?: readonly string[];
}

/** What the translator has seen of the upstream's stream, for the gateway to measure and file. */
export interface StreamFacts {
  /** The upstream's usage, once a chunk carried it (with `include_usage`, the last one). */
  usage: Usage | null;
  /** Characters generated: text, a refusal, tool calls' names and arguments (for an estimate). */
  generatedCharacters: number;
  /** The choice's `finish_reason`, once it came. */
  finishReason: string | null;
  /** `message_start` has been sent: the caller has had something. */
  started: boolean;
  /** `message_stop` or an error has been sent: nothing more will be. */
  ended: boolean;
}

/**
 * An OpenAI chat completions stream, chunk by chunk, as Anthropic's Messages stream.
 *
 * {@link push} takes each `data:` payload of the upstream's events, parsed (or the string
 * `[DONE]`), and returns the events to send the caller, as text (often several, sometimes none).
 * The first chunk opens the message (`message_start`, then a `ping`); text opens a text block,
 * each tool call (by its `index`) a `tool_use` block of its own, each block closed when another
 * opens or the choice finishes. Block indexes count from 0 in the order blocks open, as the
 * SDKs expect. A delta for a tool call whose block has closed (no upstream known interleaves
 * them) is still sent, at that block's index, where clients that accumulate by index put it.
 *
 * `message_delta` carries the stop reason and usage, so it waits for the usage: OpenAI sends it
 * in a chunk of its own after the one with `finish_reason` (as `include_usage` asks). It is
 * sent, with `message_stop`, once both are known, or at `[DONE]` (or {@link end}) with what
 * is: without usage, `output_tokens` is 0 and `message_start`'s estimate stands for the input.
 */
export class ChatStreamToMessages {
  private started = false;
  private ended = false;
  private usage: Usage | null = null;
  private generatedCharacters = 0;
  private finishReason: string | null = null;
  private matched: string | null = null;
  private refused = false;
  private nextBlock = 0;
  /** The block open now: its index, and whether it is text or which tool call's. */
  private open: { index: number; toolCall: number | null } | null = null;
  /** The block index of each tool call, by the call's index in the chunks. */
  private readonly toolBlocks = new Map<number, number>();
  private lastToolCall = 0;

  constructor(
    private readonly requestedModel: string,
    private readonly options: StreamOptions = {},
  ) {}

  /** What the stream has shown so far. */
  get facts(): StreamFacts {
    return {
      usage: this.usage,
      generatedCharacters: this.generatedCharacters,
      finishReason: this.finishReason,
      started: this.started,
      ended: this.ended,
    };
  }

  /** The events to send for one of the upstream's `data:` payloads: its JSON parsed, or `[DONE]`. */
  push(data: unknown): string {
    if (this.ended) return '';
    if (data === '[DONE]') return this.finish();
    if (!isObject(data)) return '';
    if (data.error !== undefined && data.error !== null) return this.upstreamError(data.error);
    let out = this.start(data.id);
    const usage = usageFrom(data.usage);
    if (usage !== null) this.usage = usage;
    const choices = Array.isArray(data.choices) ? data.choices : [];
    for (const choice of choices) {
      // The gateway asks for one choice; any other an upstream sends is not the message's.
      if (!isObject(choice) || (choice.index !== undefined && choice.index !== 0)) continue;
      const delta = isObject(choice.delta) ? choice.delta : {};
      if (typeof delta.content === 'string' && delta.content !== '') out += this.text(delta.content);
      if (typeof delta.refusal === 'string' && delta.refusal !== '') {
        this.refused = true;
        out += this.text(delta.refusal);
      }
      if (Array.isArray(delta.tool_calls)) {
        for (const call of delta.tool_calls) if (isObject(call)) out += this.toolCall(call);
      }
      if (typeof choice.finish_reason === 'string' && this.finishReason === null) {
        this.finishReason = choice.finish_reason;
        this.matched = matchedStop(choice, this.options.stopSequences);
        out += this.closeBlock();
      }
    }
    if (this.finishReason !== null && this.usage !== null) out += this.stop();
    return out;
  }

  /**
   * `push` for a chunk whose one choice only adds `text` (the gateway asks for one choice), read
   * without parsing it; null before the message has started, which the first chunk's id names.
   */
  pushText(text: string): string | null {
    if (this.ended) return '';
    if (!this.started) return null;
    return text === '' ? '' : this.text(text);
  }

  /**
   * The events that end the stream when the upstream's ends without `[DONE]`: as `[DONE]` once
   * the choice has finished; before that, the answer was cut, and the caller is told so.
   */
  end(): string {
    if (this.ended) return '';
    if (this.finishReason !== null) return this.finish();
    return this.error('The upstream ended its stream before the answer was complete.');
  }

  /**
   * An `error` event, for a stream cut short (the upstream failed, timed out, sent what cannot be
   * read): Anthropic's SDKs raise it as an error of its `type`. Nothing is sent after it.
   */
  error(message: string, type = 'api_error'): string {
    if (this.ended) return '';
    this.ended = true;
    return frame({ type: 'error', error: { type, message } });
  }

  /** An `{"error": …}` chunk: the upstream failed inside its stream. */
  private upstreamError(error: unknown): string {
    const fields = isObject(error) ? error : {};
    const message =
      typeof fields.message === 'string' && fields.message !== ''
        ? fields.message
        : 'The upstream failed during its answer.';
    const status = typeof fields.code === 'number' ? fields.code : 500;
    return this.error(message, anthropicErrorType(status));
  }

  private start(chatId: unknown): string {
    if (this.started) return '';
    this.started = true;
    return (
      frame({
        type: 'message_start',
        message: {
          id: messageId(chatId),
          type: 'message',
          role: 'assistant',
          model: this.requestedModel,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: messageUsage(null, this.options.inputTokensEstimate ?? 0),
        },
      }) + frame({ type: 'ping' })
    );
  }

  private text(text: string): string {
    this.generatedCharacters += text.length;
    let out = '';
    if (this.open === null || this.open.toolCall !== null) {
      out += this.closeBlock();
      this.open = { index: this.nextBlock++, toolCall: null };
      out += frame({ type: 'content_block_start', index: this.open.index, content_block: { type: 'text', text: '' } });
    }
    return out + textDelta(this.open.index, text);
  }

  private toolCall(call: Record<string, unknown>): string {
    // Chunks number each call; an upstream that does not means the one it began last.
    const callIndex = typeof call.index === 'number' ? call.index : this.lastToolCall;
    this.lastToolCall = callIndex;
    const fn = isObject(call.function) ? call.function : {};
    let out = '';
    let block = this.toolBlocks.get(callIndex);
    if (block === undefined) {
      out += this.closeBlock();
      block = this.nextBlock++;
      this.toolBlocks.set(callIndex, block);
      this.open = { index: block, toolCall: callIndex };
      const name = typeof fn.name === 'string' ? fn.name : '';
      this.generatedCharacters += name.length;
      const id = typeof call.id === 'string' && call.id !== '' ? call.id : `toolu_${randomUUID().replace(/-/g, '')}`;
      out += frame({
        type: 'content_block_start',
        index: block,
        content_block: { type: 'tool_use', id, name, input: {} },
      });
    }
    if (typeof fn.arguments === 'string' && fn.arguments !== '') {
      this.generatedCharacters += fn.arguments.length;
      out += frame({
        type: 'content_block_delta',
        index: block,
        delta: { type: 'input_json_delta', partial_json: fn.arguments },
      });
    }
    return out;
  }

  private closeBlock(): string {
    if (this.open === null) return '';
    const { index } = this.open;
    this.open = null;
    return frame({ type: 'content_block_stop', index });
  }

  /** `[DONE]`: the message ends with what is known, if it has not yet. */
  private finish(): string {
    return this.start(undefined) + this.closeBlock() + this.stop();
  }

  private stop(): string {
    this.ended = true;
    const usage = this.usage === null ? { output_tokens: 0 } : messageUsage(this.usage);
    return (
      frame({
        type: 'message_delta',
        delta: stopReasonOf(this.finishReason, this.matched, this.refused),
        usage,
      }) + frame({ type: 'message_stop' })
    );
  }
}
