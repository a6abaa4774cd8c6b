import type { FastifyReply } from 'fastify';
import { performance } from 'node:perf_hooks';
import type { RequestRecord } from '../stores/telemetry/request-record.js';
import { estimatedTokens } from './request-facts.js';
import type { Cancel } from './cancel.js';
import type { ErrorWords, GatewayApi, StreamTranslator, Translation } from './apis/api.js';
import { eventData, takenByText, UpstreamTooLarge, type SseEvent, type SseEvents, type Usage } from './sse-events.js';

/**
 * What reaches the caller once the gateway has committed to an attempt (failover.ts): an answer,
 * an error, or a stream passed on as it comes, measured on the way.
 */

/** What the row records of the answer the caller got. */
export interface Measured {
  status: number;
  termination: RequestRecord['termination_reason'];
  upstreamError: string | null;
  ttftMs: number | null;
  tpotMs: number | null;
  usage: Usage | null;
  generatedCharacters: number;
  /** The Responses API's id of the answer, when it named one. */
  responseId: string | null;
}

export const newMeasured = (): Measured => ({
  status: 502,
  termination: 'success',
  upstreamError: null,
  ttftMs: null,
  tpotMs: null,
  usage: null,
  generatedCharacters: 0,
  responseId: null,
});

export interface Delivery {
  reply: FastifyReply;
  /** The caller's API: how its errors are worded. */
  api: GatewayApi;
  /** The API the target was asked in, which its answer is measured by: the caller's unless translated. */
  measure: GatewayApi;
  /** How the target's answer is brought back to the caller's API; null when it speaks it. */
  translation: Translation | null;
  /** The caller's body, which a translation reads (its model, its stop sequences). */
  body: Record<string, unknown>;
  promptCharacters: number;
  /** Sent with every answer: rate limits, the request id, what served it. */
  headers: Record<string, string>;
  /** The provider key the answer was asked with: never handed on, even quoted. */
  apiKey: string | null;
  /** performance.now() at the request's arrival. */
  arrived: number;
}

/**
 * `text` without the provider key the request was sent with: an upstream that quotes it in an
 * answer (an error event mid-stream, a model made to repeat its headers) hands it to nobody.
 * Events are cut whole, so a key is never split between two of them.
 */
function withoutKey(text: string, apiKey: string | null): string {
  return apiKey && text.includes(apiKey) ? text.split(apiKey).join('[redacted]') : text;
}

/**
 * The answer's headers and `more`, in an object of their own. Copied, not spread: on Node 20, V8
 * takes ~1.5 µs for `{ ...headers, key }`, a spread followed by keys of its own, ~0.05 for this.
 */
const headersWith = (delivery: Delivery, ...more: Record<string, string>[]): Record<string, string> =>
  Object.assign({}, delivery.headers, ...more);

/** A JSON answer, whole. */
export function sendJson(delivery: Delivery, status: number, body: string, extra: Record<string, string> = {}): void {
  const { reply } = delivery;
  reply.hijack();
  reply.raw.writeHead(status, headersWith(delivery, extra, { 'content-type': 'application/json' }));
  reply.raw.end(withoutKey(body, delivery.apiKey));
}

/** An error answer, in the caller's API's shape. */
export function sendError(
  delivery: Delivery,
  status: number,
  error: ErrorWords,
  extra: Record<string, string> = {},
): void {
  sendJson(delivery, status, JSON.stringify(delivery.api.errorBody(status, error)), extra);
}

/** A non-streamed answer of the upstream's, then what it says of its usage. */
export function deliverAnswer(delivery: Delivery, status: number, text: string, measured: Measured): void {
  measured.status = status;
  const answer = delivery.translation ? delivery.translation.answer(text, delivery.body) : text;
  if (answer === null) {
    measured.status = 502;
    measured.upstreamError = `the upstream's answer could not be read as ${delivery.measure.name} (${text.length} characters)`;
    sendError(delivery, 502, {
      message: 'The upstream sent an answer that could not be read.',
      type: 'upstream_error',
      code: 'upstream_error',
    });
  } else sendJson(delivery, status, answer);
  // Read once the answer is on its way: the caller does not wait for our measuring.
  const facts = delivery.measure.answerFacts(text);
  measured.usage = facts.usage;
  measured.generatedCharacters = facts.generatedCharacters;
  measured.responseId = facts.responseId ?? null;
}

export interface HeldStream {
  held: SseEvent[];
  heldText: string;
  events: SseEvents;
  rest: AsyncIterator<Buffer>;
  abort: Cancel;
  ended: boolean;
}

/** Thrown into a stream's reading when it has sent nothing for `idleMs`. */
class Stalled extends Error {}

/**
 * Passes a stream on from its first content: what arrived together leaves together, in one
 * system call. A stream that then fails (cut, stalled, too large, an error event) ends with an error
 * event the SDKs raise, and the row says so: never a truncated success.
 */
export async function deliverStream(
  delivery: Delivery,
  stream: HeldStream,
  options: { wantsUsage: boolean; idleMs: number; onMalformed: () => void },
  measured: Measured,
): Promise<void> {
  const { reply } = delivery;
  const { events } = stream;
  reply.hijack();
  reply.raw.writeHead(
    200,
    headersWith(delivery, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    }),
  );
  measured.status = 200;
  let firstTokenAt: number | null = null;
  let finished = false;
  let failedInStream = false;
  let corked = false;
  const translator = delivery.translation?.stream(delivery.body, delivery.promptCharacters) ?? null;
  /** `text`: the batch's events together as received, malformed ones included. */
  const pass = async (batch: SseEvent[], text: string) => {
    // A malformed event is left out, and an event that may carry usage alone from a caller who
    // did not ask for it (its SDK would yield an empty chunk); the rest is handed on as sent, in
    // slices of the text it came in, or translated. The slices are written one by one, not joined:
    // joined, they would be copied whole into one string before the write (most streams' last
    // batch is cut around the usage event that most callers do not ask for: ~12 KB of a bench
    // stream's ~83 KB of heap). Written in one turn, they leave in one system call (http corks it).
    const passed: string[] = [];
    if (translator) {
      let translated = '';
      for (const event of batch) if (!event.malformed) translated += translatedEvent(translator, event);
      passed.push(translated);
    } else {
      let from = 0;
      let at = 0;
      for (const event of batch) {
        if (event.malformed || (event.usageOnly && !options.wantsUsage)) {
          passed.push(text.slice(from, at));
          from = at + event.raw.length;
        }
        at += event.raw.length;
      }
      passed.push(text.slice(from, at));
    }
    // The stream's last events, the upstream's end usually right behind them: held back until the
    // caller's answer ends (`end` uncorks) or this turn of the event loop is over at the latest, so
    // that they and the answer's end leave in one write. Sent apart, the end was a second system
    // call and a second packet for the caller, every stream: at 500 streams a second, held back the
    // server's CPU time was 11 % less (six alternating runs of each).
    if (events.done && !corked) {
      corked = true;
      reply.raw.cork();
      setImmediate(() => {
        if (!reply.raw.writableEnded) reply.raw.uncork();
      });
    }
    // A caller reading slower than the upstream writes: wait for them, and so stop reading the
    // upstream (its socket fills, and it waits too), rather than hold what they have not read.
    // Not for the last events: nothing is read for them, and the end follows them at once.
    let room = true;
    for (const slice of passed) if (slice !== '') room = reply.raw.write(withoutKey(slice, delivery.apiKey)) && room;
    if (!room && !corked) await stream.abort.until(reply.raw, 'drain');
    const at = performance.now();
    for (const event of batch) {
      if (event.malformed) continue;
      if (event.content.length > 0 || event.otherCharacters > 0) {
        firstTokenAt ??= at;
        measured.generatedCharacters += event.content.length + event.otherCharacters;
      }
      if (event.usage) measured.usage = event.usage;
      if (event.responseId !== undefined) measured.responseId ??= event.responseId;
      if (event.finished) finished = true;
      if (event.error && !failedInStream) {
        failedInStream = true;
        measured.termination = 'upstream_stream_aborted';
        measured.upstreamError = 'the upstream sent an error event mid-stream';
      }
    }
  };
  const idle = setTimeout(() => stream.abort.abort(new Stalled('stalled')), options.idleMs || 2 ** 31 - 1);
  let ended = stream.ended;
  try {
    await pass(stream.held, stream.heldText);
    while (!ended) {
      const next = await stream.rest.next();
      idle.refresh();
      const raws = next.done ? events.end() : events.cut(next.value);
      const batch: SseEvent[] = [];
      for (const raw of raws) {
        const event = events.read(raw);
        if (event.malformed) options.onMalformed();
        batch.push(event);
      }
      await pass(batch, events.text);
      ended = next.done === true;
    }
    measureTiming(delivery, measured, firstTokenAt);
    if (!events.done && !finished && !failedInStream) {
      measured.termination = 'upstream_stream_aborted';
      measured.upstreamError = 'upstream closed the stream before [DONE]';
      reply.raw.end(delivery.api.streamError('The upstream ended the stream before it was complete.', 'stream_cut'));
    } else {
      // A translation whose upstream finished without saying it was done closes the caller's stream itself.
      reply.raw.end(translator && !events.done ? translator.end() : undefined);
    }
  } catch (error) {
    measureTiming(delivery, measured, firstTokenAt);
    const reason = stream.abort.reason;
    if (reply.raw.destroyed || reply.raw.writableEnded) throw error;
    measured.termination = 'upstream_stream_aborted';
    if (reason instanceof Stalled) {
      measured.upstreamError = `the upstream's stream stalled: nothing for ${options.idleMs / 1000} s`;
      reply.raw.end(delivery.api.streamError('The upstream stopped sending; the stream was ended.', 'stream_stalled'));
    } else if (error instanceof UpstreamTooLarge) {
      measured.upstreamError = `the upstream sent ${error.message}`;
      reply.raw.end(delivery.api.streamError(measured.upstreamError, 'upstream_error'));
    } else if (stream.abort.aborted && !(reason instanceof Error && reason.message === 'attempt over')) {
      // The request's deadline or its caller: the caller of failover.ts records which.
      throw error;
    } else {
      measured.upstreamError = 'upstream closed the stream before [DONE]';
      reply.raw.end(delivery.api.streamError('The upstream ended the stream before it was complete.', 'stream_cut'));
    }
  } finally {
    clearTimeout(idle);
    // An upstream not read to its end is ended here, whatever stopped the reading (an event too
    // large, an error; a caller gone or a stall aborted it already). One read to its end has
    // nothing left to end, and an abort would cost its error's stack trace (~2 µs) and undici's ending of it.
    if (!ended) stream.abort.abort(new Error('attempt over'));
  }
}

/** A chat completions event in the caller's API, by its translator. */
export function translatedEvent(translator: StreamTranslator, event: SseEvent): string {
  // Most of a stream's events: their text, read already, translated without parsing them again.
  const text = takenByText(event) ? translator.pushText(event.content) : null;
  if (text !== null) return text;
  const data = eventData(event.raw);
  if (data === '') return '';
  if (data === '[DONE]') return translator.push('[DONE]');
  try {
    return translator.push(JSON.parse(data));
  } catch {
    return '';
  }
}

function measureTiming(delivery: Delivery, measured: Measured, firstTokenAt: number | null): void {
  if (firstTokenAt === null) return;
  const endedAt = performance.now();
  measured.ttftMs = firstTokenAt - delivery.arrived;
  const generated = measured.usage?.completion ?? estimatedTokens(measured.generatedCharacters);
  measured.tpotMs = generated > 1 ? (endedAt - firstTokenAt) / (generated - 1) : null;
}
