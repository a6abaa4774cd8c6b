import { performance } from 'node:perf_hooks';
import { request as undiciRequest, type Dispatcher } from 'undici';
import { Cancel } from './cancel.js';
import { classifyError, classifyStatus, type FailureClass } from './failure-policy.js';
import { SseEvents, UpstreamTooLarge, type EventReader, type SseEvent } from './sse-events.js';

/**
 * One upstream attempt, up to the point where the gateway commits to it: a non-streamed answer
 * read whole, or a stream read up to its first content. Nothing reaches the caller here, so a
 * failure up to that point can still go to another target (failover.ts).
 */

/** The most of an upstream's error body read: an error is a sentence, and the rest is not handed on. */
const ERROR_BODY_BYTES = 64 * 1024;
/** The most of a non-streamed answer held: far past any model's output, well short of the memory it would take. */
export const ANSWER_BYTES = 32 * 1024 * 1024;

export interface AttemptInput {
  dispatcher: Dispatcher;
  url: string;
  headers: Record<string, string>;
  body: string;
  stream: boolean;
  /** How the stream's events are read: the API's reader, or chat completions' (null). */
  reader: EventReader | null;
  /** The request's own end: its deadline, its caller gone. */
  signal: Cancel;
  /** Non-streamed: the whole answer; streamed: the first content. 0: only the request's deadline. */
  limitMs: number;
  isByok: boolean;
}

export type AttemptOutcome =
  | {
      kind: 'failed';
      failure: FailureClass;
      /** The upstream's status, null when it sent none. */
      status: number | null;
      retryAfter: string | undefined;
      /** The upstream's error body (bounded), '' when none. */
      text: string;
    }
  /** Not to be failed over: an answer (2xx, or an error the caller gets as it is). */
  | { kind: 'answer'; status: number; retryAfter: string | undefined; text: string }
  | {
      kind: 'stream';
      /**
       * Events up to and including the first content, and those that came with it (or the whole
       * stream when it had none); malformed ones among them marked so, to be passed over.
       */
      held: SseEvent[];
      /** The held events together as received. */
      heldText: string;
      events: SseEvents;
      /** The rest of the upstream's body; its iteration ends when the attempt is aborted. */
      rest: AsyncIterator<Buffer>;
      /** Ends the upstream's answer: the caller went, or the gateway gave up on it. */
      abort: Cancel;
      /** The stream ended (or said `[DONE]`) while it was held. */
      ended: boolean;
    };

/** The body as text, or null once it goes past `limit` bytes (then it is dropped, not read on). */
export async function textUpTo(
  body: Dispatcher.ResponseData['body'],
  length: string | string[] | undefined,
  limit: number,
): Promise<string | null> {
  // A length within the bound is all the framing lets through: read at undici's own pace.
  if (typeof length === 'string' && Number(length) <= limit) return body.text();
  const parts: Buffer[] = [];
  let bytes = 0;
  for await (const part of body) {
    bytes += (part as Buffer).length;
    if (bytes > limit) {
      body.destroy();
      return null;
    }
    parts.push(part as Buffer);
  }
  return Buffer.concat(parts).toString('utf8');
}

/** Thrown when an attempt's own limit passes: not the request's, which the caller's signal carries. */
class AttemptLimit extends Error {}

/**
 * Makes one attempt. Throws only for what ends the whole request (its signal: the deadline, the
 * caller gone; an answer too large to hold), every failure of the target is an outcome.
 */
export async function attempt(input: AttemptInput, onMalformed: () => void): Promise<AttemptOutcome> {
  const abort = new Cancel();
  const ended = () => abort.abort(input.signal.reason);
  input.signal.once('abort', ended);
  const limit = input.limitMs > 0 ? setTimeout(() => abort.abort(new AttemptLimit('limit')), input.limitMs) : undefined;
  let kind: AttemptOutcome['kind'] | null = null;
  try {
    const outcome = await attemptWithin(input, abort, onMalformed);
    kind = outcome.kind;
    return outcome;
  } catch (error) {
    if (input.signal.aborted) throw input.signal.reason;
    if (error instanceof UpstreamTooLarge) throw error;
    const failure: FailureClass =
      abort.reason instanceof AttemptLimit ? (input.stream ? 'first_byte_timeout' : 'timeout') : classifyError(error);
    return { kind: 'failed', failure, status: null, retryAfter: undefined, text: '' };
  } finally {
    clearTimeout(limit);
    // A committed stream keeps listening: the caller may still go, mid-stream.
    if (kind !== 'stream') {
      input.signal.off('abort', ended);
      // An answer's body is read to its end (or dropped past its bound) already: nothing is left to
      // end, and an abort would cost its error's stack trace (~2 µs) and undici's ending of the request.
      if (kind !== 'answer') abort.abort(new Error('attempt over'));
    }
  }
}

async function attemptWithin(input: AttemptInput, abort: Cancel, onMalformed: () => void): Promise<AttemptOutcome> {
  const upstream = await undiciRequest(input.url, {
    method: 'POST',
    headers: input.headers,
    body: input.body,
    dispatcher: input.dispatcher,
    signal: abort,
  });
  const retryAfterHeader = upstream.headers['retry-after'];
  const retryAfter = typeof retryAfterHeader === 'string' ? retryAfterHeader : undefined;
  if (upstream.statusCode < 200 || upstream.statusCode > 299) {
    const text = (await textUpTo(upstream.body, upstream.headers['content-length'], ERROR_BODY_BYTES)) ?? '';
    const failure = classifyStatus(upstream.statusCode, text, input.isByok);
    if (failure === 'client' || failure === 'content_policy') {
      return { kind: 'answer', status: upstream.statusCode, retryAfter, text };
    }
    return { kind: 'failed', failure, status: upstream.statusCode, retryAfter, text };
  }
  if (!input.stream || upstream.statusCode !== 200) {
    const text = await textUpTo(upstream.body, upstream.headers['content-length'], ANSWER_BYTES);
    if (text === null) throw new UpstreamTooLarge(`an answer of more than ${ANSWER_BYTES} bytes`);
    return { kind: 'answer', status: upstream.statusCode, retryAfter, text };
  }
  // Held until the first content: a stream that fails before it can still go elsewhere.
  const events = new SseEvents(input.reader);
  const rest = (upstream.body as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  const held: SseEvent[] = [];
  let heldText = '';
  const failedWith = (failure: FailureClass, text: string): AttemptOutcome => {
    upstream.body.destroy();
    return { kind: 'failed', failure, status: 200, retryAfter: undefined, text };
  };
  for (;;) {
    const next = await rest.next();
    const raws = next.done ? events.end() : events.cut(next.value);
    heldText += events.text;
    // What arrived together is held together: the first content may come with more behind it.
    let content = false;
    for (const raw of raws) {
      const event = events.read(raw);
      if (event.malformed) onMalformed();
      else if (event.error && !content) return failedWith('stream_error', dataOf(raw));
      held.push(event);
      content ||= event.content.length > 0 || event.otherCharacters > 0;
    }
    const ended = next.done === true;
    if (content || events.done) return { kind: 'stream', held, heldText, events, rest, abort, ended };
    if (next.done) {
      // No content and no [DONE]: a cut, unless the upstream said it had finished.
      if (held.some((event) => event.finished)) return { kind: 'stream', held, heldText, events, rest, abort, ended };
      return failedWith('stream_cut', '');
    }
  }
}

/** The data of an event, its `event:` line and framing left out: an error's JSON. */
const dataOf = (raw: string): string =>
  raw
    .split(/\r?\n/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).trim())
    .join('\n');

/** Milliseconds since `since` (performance.now()), for an attempt's row entry. */
export const elapsed = (since: number) => performance.now() - since;
