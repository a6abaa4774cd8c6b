import type { FastifyReply } from 'fastify';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { request as undiciRequest, type Dispatcher } from 'undici';
import { servedBy } from '../domain/attempts.js';
import { settledCostMicro, type RoutePrice } from '../domain/route-catalogue.js';
import type { RequestRecord } from '../stores/telemetry/request-record.js';
import { estimatedTokens, gatewayRow, type RowStart } from './request-facts.js';
import { upstreamFailure } from './upstream-errors.js';
import { SseEvents, UpstreamTooLarge, answerFacts, mayCarryUsage, type SseEvent, type Usage } from './sse-events.js';

export interface Forwarding {
  dispatcher: Dispatcher;
  /** An upstream that has not answered (or, streaming, finished) by then is cut: 504 / proxy_guillotine. */
  timeoutMs: number;
}

/** Where an admitted request goes and what it costs there. */
export interface Dispatch {
  baseUrl: string;
  /** The organisation's own provider key (BYOK) or the platform's; null: none is sent. */
  apiKey: string | null;
  isByok: boolean;
  /** The target's provider and model, as the routes document names them. */
  provider: string;
  upstreamModel: string;
  price: RoutePrice;
  promptCache: boolean;
  rateHeaders: Record<string, string>;
}

export interface ForwardInput {
  start: RowStart;
  /** performance.now() at the request's arrival. */
  arrived: number;
  body: Record<string, unknown>;
  promptCharacters: number;
  admitted: Dispatch;
}

interface Measured {
  status: number;
  termination: RequestRecord['termination_reason'];
  upstreamError: string | null;
  preDispatchMs: number;
  ttftMs: number | null;
  tpotMs: number | null;
  usage: Usage | null;
  generatedCharacters: number;
  /** The upstream's status once its answer (2xx) began to reach the caller; null while none has. */
  servedStatus: number | null;
}

/** The most of an upstream's error body read: an error is a sentence, and the rest is not handed on. */
const ERROR_BODY_BYTES = 64 * 1024;
/** The most of a non-streamed answer held: far past any model's output, well short of the memory it would take. */
export const ANSWER_BYTES = 32 * 1024 * 1024;

/** The body as text, or null once it goes past `limit` bytes (then it is dropped, not read on). */
async function textUpTo(
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

/**
 * `text` without the provider key the request was sent with: an upstream that quotes it in an
 * answer (an error event mid-stream, a model made to repeat its headers) hands it to nobody.
 * Events are cut whole, so a key is never split between two of them.
 */
function withoutKey(text: string, apiKey: string | null): string {
  return apiKey && text.includes(apiKey) ? text.split(apiKey).join('[redacted]') : text;
}

/** Sends the request upstream and the answer to the caller; returns the request's row. */
export async function forward(
  reply: FastifyReply,
  forwarding: Forwarding,
  input: ForwardInput,
): Promise<RequestRecord> {
  const { admitted, body } = input;
  const stream = body.stream === true;
  const wantsUsage = stream && (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
  const upstreamBody = {
    ...body,
    model: admitted.upstreamModel,
    // Always asked for, to measure the tokens; handed on only to a caller who asked too.
    ...(stream ? { stream_options: { ...(body.stream_options as object | undefined), include_usage: true } } : {}),
  };
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(new Error('guillotine')), forwarding.timeoutMs);
  let clientGone = false;
  const onClose = () => {
    if (!reply.raw.writableFinished) {
      clientGone = true;
      abort.abort(new Error('client disconnected'));
    }
  };
  reply.raw.on('close', onClose);
  // Gone before we got here (while its body was read): nothing is sent upstream.
  // (The request stream is no witness: it is destroyed once its body has been read.)
  if (reply.raw.destroyed || !reply.raw.socket || reply.raw.socket.destroyed) {
    clientGone = true;
    abort.abort(new Error('client disconnected'));
  }

  const measured: Measured = {
    status: 502,
    termination: 'success',
    upstreamError: null,
    preDispatchMs: 0,
    ttftMs: null,
    tpotMs: null,
    usage: null,
    generatedCharacters: 0,
    servedStatus: null,
  };
  let headersSent = false;
  // As OpenAI's API does: the caller can quote it, and it finds the row in the request log.
  const requestId = { 'x-request-id': input.start.req_id };
  try {
    measured.preDispatchMs = performance.now() - input.arrived;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (admitted.apiKey) headers.authorization = `Bearer ${admitted.apiKey}`;
    const upstream = await undiciRequest(`${admitted.baseUrl}/chat/completions`, {
      method: 'POST',
      headers,
      body: JSON.stringify(upstreamBody),
      dispatcher: forwarding.dispatcher,
      signal: abort.signal,
    });
    measured.status = upstream.statusCode;
    if (upstream.statusCode < 200 || upstream.statusCode > 299) {
      const text = (await textUpTo(upstream.body, upstream.headers['content-length'], ERROR_BODY_BYTES)) ?? '';
      const retryAfter = upstream.headers['retry-after'];
      const failure = upstreamFailure(
        upstream.statusCode,
        typeof retryAfter === 'string' ? retryAfter : undefined,
        text,
        [admitted.apiKey],
        admitted.isByok,
      );
      measured.status = failure.status;
      measured.upstreamError = failure.rowError;
      headersSent = true;
      reply.hijack();
      reply.raw.writeHead(failure.status, {
        ...admitted.rateHeaders,
        ...requestId,
        ...failure.headers,
        'content-type': 'application/json',
      });
      reply.raw.end(JSON.stringify(failure.body));
    } else if (!stream || upstream.statusCode !== 200) {
      const text = await textUpTo(upstream.body, upstream.headers['content-length'], ANSWER_BYTES);
      if (text === null) throw new UpstreamTooLarge(`an answer of more than ${ANSWER_BYTES} bytes`);
      headersSent = true;
      measured.servedStatus = upstream.statusCode;
      reply.hijack();
      reply.raw.writeHead(measured.status, {
        ...admitted.rateHeaders,
        ...requestId,
        'content-type': 'application/json',
      });
      reply.raw.end(withoutKey(text, admitted.apiKey));
      // Read once the answer is on its way: the caller does not wait for our measuring.
      const facts = answerFacts(text);
      measured.usage = facts.usage;
      measured.generatedCharacters = facts.generatedCharacters;
    } else {
      reply.hijack();
      reply.raw.writeHead(200, {
        ...admitted.rateHeaders,
        ...requestId,
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
      });
      // The status line leaves with the first events, in one packet (Node holds it until the first write).
      headersSent = true;
      measured.servedStatus = 200;
      const events = new SseEvents();
      let firstTokenAt: number | null = null;
      const chunks = async function* () {
        for await (const chunk of upstream.body) yield events.cut(chunk as Buffer);
        yield events.end();
      };
      for await (const raws of chunks()) {
        // What arrived together leaves together, in one write, before it is measured: only an
        // event that may be a usage-only chunk is read first, to keep it back from a caller who
        // did not ask for it (its SDK would yield an empty chunk).
        let passed = '';
        // Per event: read already (it may carry usage), or false when it cannot.
        const read: (SseEvent | false)[] = [];
        for (const raw of raws) {
          if (wantsUsage) {
            passed += raw;
            continue;
          }
          const withUsage = mayCarryUsage(raw);
          const event = withUsage ? events.read(raw, true) : false;
          read.push(event);
          if (!event || !event.usageOnly) passed += raw;
        }
        // A caller reading slower than the upstream writes: wait for them, and so stop reading the
        // upstream (its socket fills, and it waits too), rather than hold what they have not read.
        // The gateway's timeout still bounds a caller who never reads again.
        if (passed !== '' && !reply.raw.write(withoutKey(passed, admitted.apiKey))) {
          await once(reply.raw, 'drain', { signal: abort.signal });
        }
        const at = performance.now();
        raws.forEach((raw, index) => {
          const seen = read[index];
          const event = seen || events.read(raw, seen);
          if (event.content.length > 0 || event.otherCharacters > 0) {
            firstTokenAt ??= at;
            measured.generatedCharacters += event.content.length + event.otherCharacters;
          }
          if (event.usage) measured.usage = event.usage;
        });
      }
      const endedAt = performance.now();
      if (firstTokenAt !== null) {
        measured.ttftMs = firstTokenAt - input.arrived;
        const generated = measured.usage?.completion ?? estimatedTokens(measured.generatedCharacters);
        measured.tpotMs = generated > 1 ? (endedAt - firstTokenAt) / (generated - 1) : null;
      }
      if (!events.done) {
        measured.termination = 'upstream_stream_aborted';
        measured.upstreamError = 'upstream closed the stream before [DONE]';
      }
      reply.raw.end();
    }
  } catch (error) {
    const reason = abort.signal.aborted ? String((abort.signal.reason as Error | undefined)?.message) : '';
    if (clientGone || reason === 'client disconnected') {
      measured.termination = 'client_disconnect';
      if (!headersSent) measured.status = 499;
    } else if (reason === 'guillotine') {
      measured.termination = 'proxy_guillotine';
      measured.upstreamError = `no answer from upstream within ${forwarding.timeoutMs / 1000} s`;
      if (!headersSent) measured.status = 504;
    } else if (error instanceof UpstreamTooLarge) {
      measured.termination = 'upstream_stream_aborted';
      measured.upstreamError = `the upstream sent ${error.message}`;
      if (!headersSent) measured.status = 502;
    } else {
      measured.termination = headersSent ? 'upstream_stream_aborted' : 'success';
      // The error's code only: its message may name hosts of the operator's network.
      measured.upstreamError = `upstream connection failed: ${(error as { code?: string }).code ?? 'no answer'}`;
      if (!headersSent) measured.status = 502;
    }
    if (!headersSent && !clientGone) {
      headersSent = true;
      reply.hijack();
      const status = measured.status;
      const type = status === 504 ? 'timeout' : 'upstream_error';
      reply.raw.writeHead(status, { ...requestId, 'content-type': 'application/json' });
      reply.raw.end(JSON.stringify({ error: { message: measured.upstreamError, type, code: type } }));
    } else if (error instanceof UpstreamTooLarge && !clientGone && !reply.raw.writableEnded) {
      // Mid-stream, an error event is what the SDKs raise as an APIError; then the stream ends, without [DONE].
      const body = { error: { message: measured.upstreamError, type: 'upstream_error', code: 'upstream_error' } };
      reply.raw.end(`data: ${JSON.stringify(body)}\n\n`);
    } else if (!reply.raw.writableEnded) {
      reply.raw.destroy();
    }
  } finally {
    clearTimeout(timer);
    reply.raw.off('close', onClose);
  }
  return rowOf(input, measured);
}

/** What ended a served attempt, as an attempt's error class; null when it ended well. */
const SERVED_ERRORS: Readonly<Record<string, string | null>> = {
  success: null,
  client_disconnect: null,
  upstream_stream_aborted: 'stream_cut',
  proxy_guillotine: 'timeout',
};

function rowOf(input: ForwardInput, measured: Measured): RequestRecord {
  const { price, promptCache, isByok, provider, upstreamModel } = input.admitted;
  const totalMs = performance.now() - input.arrived;
  // One attempt, recorded when its answer went to the caller; otherwise unknown here.
  const target = servedBy(provider, upstreamModel);
  const served =
    measured.servedStatus === null
      ? null
      : {
          target,
          status: measured.servedStatus,
          error: SERVED_ERRORS[measured.termination] ?? null,
          ms: totalMs - measured.preDispatchMs,
          decision: 'served' as const,
        };
  const usage = measured.usage;
  const answered = measured.status < 400;
  // Counted from the upstream's usage; estimated from the text only when it gave none.
  const estimated = answered && usage === null;
  const cached = promptCache ? (usage?.cachedPrompt ?? 0) : 0;
  // An upstream that reports more cached tokens than prompt tokens is wrong, not owed a refund.
  const prompt = usage ? Math.max(0, usage.prompt - cached) : answered ? estimatedTokens(input.promptCharacters) : 0;
  const generated = usage ? usage.completion : answered ? Math.ceil(measured.generatedCharacters / 4) : 0;
  const cacheRead = promptCache ? cached : null;
  const cacheWrite = promptCache ? 0 : null;
  const cost = answered ? settledCostMicro(price, { prompt, generated, cacheWrite: 0, cacheRead: cached }, isByok) : 0;
  return gatewayRow(input.start, {
    status: measured.status,
    total_ms: totalMs,
    ttft_ms: measured.ttftMs,
    tpot_ms: measured.tpotMs,
    pre_dispatch_ms: measured.preDispatchMs,
    prompt_tokens: prompt,
    tokens_generated: generated,
    cache_creation_input_tokens: cacheWrite,
    cache_read_input_tokens: cacheRead,
    total_tokens: prompt + generated + cached,
    tokens_estimated: estimated ? 1 : 0,
    cost_micro: cost,
    is_byok: isByok ? 1 : 0,
    termination_reason: measured.termination,
    upstream_error: measured.upstreamError,
    upstream_model: upstreamModel,
    served_by: served && target,
    attempts: served && [served],
  });
}
