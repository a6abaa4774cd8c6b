import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import type { IncomingHttpHeaders } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Dispatcher } from 'undici';
import { noUpstream } from '../admission/refusals.js';
import type { RoutePlan, TargetPlan } from '../schemas/gateway-internal.js';
import type { Attempt } from '../schemas/request-log.js';
import type { RequestRecord } from '../stores/telemetry/request-record.js';
import { attempt, type AttemptOutcome } from './attempt.js';
import { Cancel } from './cancel.js';
import type { Breakers } from './breakers.js';
import { askedAs, type GatewayApi } from './apis/api.js';
import { deliverAnswer, deliverStream, newMeasured, sendError, type Delivery, type Measured } from './deliver.js';
import { classifyStatus, policyOf, retryAfterMs, unansweredStatus, type FailureClass } from './failure-policy.js';
import type { RowStart } from './request-facts.js';
import { servedRow } from './served-row.js';
import { UpstreamTooLarge } from './sse-events.js';
import type { ResponseOrigins } from './response-origins.js';
import { targetOrder } from './target-order.js';
import { upstreamFailure } from './upstream-errors.js';
import { targetUpstream, type Upstreams } from './upstreams.js';

/**
 * The attempt loop: one request, its route's targets in the strategy's order, one deadline. A
 * target fails over before the first byte reaches the caller, by failure-policy.ts; after it,
 * never. The only retry loop on the request path: nothing below it retries (undici does not,
 * for a POST), and its last answer tells the SDKs not to (`x-should-retry: false`) once it has
 * retried itself, so retries never multiply across layers.
 */

export interface Routing {
  dispatcher: Dispatcher;
  /** The gateway's own ceiling on a request; a route's `timeout_ms` may only shorten it. */
  timeoutMs: number;
  upstreams: Upstreams;
  env: NodeJS.ProcessEnv;
  breakers: Breakers;
  /** In [0, 1): load balancing's and backoff's draws. */
  random: () => number;
  log: FastifyBaseLogger;
}

export interface ServeInput {
  /** The API the request came in on: what its targets are asked, how its answer is measured and worded. */
  api: GatewayApi;
  /** The caller's headers, for what the API hands on (Anthropic's version and betas). */
  incoming: IncomingHttpHeaders;
  /** The caller's query string, `?…` or empty, handed on (Claude Code's `?beta=true`). */
  query: string;
  start: RowStart;
  /** performance.now() at the request's arrival. */
  arrived: number;
  body: Record<string, unknown>;
  promptCharacters: number;
  plan: RoutePlan;
  rateHeaders: Record<string, string>;
  /** Where the Responses API's answers are recorded by the target that produced them; null for other APIs. */
  origins: ResponseOrigins | null;
}

export const targetName = (target: Pick<TargetPlan, 'provider' | 'model'>) => `${target.provider}/${target.model}`;

/** The last failure seen, to answer with when nothing is left to try. */
interface LastFailure {
  outcome: Extract<AttemptOutcome, { kind: 'failed' }>;
  apiKey: string | null;
  isByok: boolean;
}

/** How long a refused platform key keeps its target out: the operator's fix takes longer than a blip. */
const PLATFORM_KEY_OPEN_MS = 60_000;

/** Serves the request over its route's targets; returns its row. */
export async function serve(reply: FastifyReply, routing: Routing, input: ServeInput): Promise<RequestRecord> {
  const { plan, body, api } = input;
  const settings = plan.failover;
  const stream = api.streams(body);
  const wantsUsage = api.wantsUsage(body);
  const request = new Cancel();
  const budgetMs = Math.min(routing.timeoutMs, settings.timeout_ms);
  const deadline = input.arrived + budgetMs;
  const guillotine = setTimeout(
    () => request.abort(new Error('guillotine')),
    Math.max(0, deadline - performance.now()),
  );
  const onClose = () => {
    if (!reply.raw.writableFinished) request.abort(new Error('client disconnected'));
  };
  reply.raw.on('close', onClose);
  // Gone before we got here (while its body was read): nothing is sent upstream.
  if (reply.raw.destroyed || !reply.raw.socket || reply.raw.socket.destroyed) {
    request.abort(new Error('client disconnected'));
  }

  const measured = newMeasured();
  const attempts: Attempt[] = [];
  const preDispatchMs = performance.now() - input.arrived;
  let served: { target: TargetPlan; isByok: boolean } | null = null;
  let current: string | null = null;
  let malformed = 0;
  const onMalformed = () => {
    malformed += 1;
    // Once a request: an upstream that garbles one event usually garbles many.
    if (malformed === 1) {
      routing.log.warn({ req_id: input.start.req_id, target: current }, 'gateway: skipped a malformed stream event');
    }
  };
  const made = () => attempts.filter((entry) => entry.decision !== 'skipped').length;
  // Copied, then added to, not spread: see `headersWith` in deliver.ts.
  const headersFor = (target: TargetPlan | null): Record<string, string> => {
    const headers = Object.assign({}, input.rateHeaders);
    headers['x-request-id'] = input.start.req_id;
    headers['x-svc-attempts'] = String(made());
    if (target) headers['x-svc-served-by'] = targetName(target);
    return headers;
  };

  try {
    const order = targetOrder(plan, routing.breakers, routing.random);
    const excludedModels = new Set<string>();
    let last: LastFailure | null = null;
    /** Why the request could not be said in a target's API, when that is why a target was skipped. */
    let untranslatable: string | null = null;
    let index = 0;
    let triesHere = 0;
    let openUntil = Infinity;
    // A target that answered 429 with a Retry-After the request can wait out, left for others:
    // asked again once they have all failed and its wait is over.
    let revisit: { target: TargetPlan; at: number } | null = null;
    for (;;) {
      if (index >= order.length || made() >= settings.max_attempts) {
        if (revisit === null || made() >= settings.max_attempts || revisit.at >= deadline) break;
        await request.sleep(Math.max(0, revisit.at - performance.now()));
        order.push(revisit.target);
        index = order.length - 1;
        triesHere = 0;
        revisit = null;
        continue;
      }
      const target = order[index]!;
      const name = targetName(target);
      const skip = (error: string) => {
        attempts.push({ target: name, status: null, error, ms: 0, decision: 'skipped' });
        index += 1;
        triesHere = 0;
      };
      if (excludedModels.has(target.model)) {
        skip('context_length');
        continue;
      }
      // Asked in the caller's API where the target speaks it, else in one it can be translated to.
      const translation = askedAs(api, target.api);
      const upstream = translation !== undefined ? targetUpstream(routing.upstreams, target, routing.env) : null;
      if (upstream === null || translation === undefined) {
        skip('unsupported');
        continue;
      }
      const asked = translation?.upstream ?? api;
      let upstreamBody: string;
      if (translation) {
        const translated = translation.body(body, target.model);
        if (!translated.ok) {
          untranslatable = translated.message;
          skip('untranslatable');
          continue;
        }
        upstreamBody = translated.text;
      } else upstreamBody = api.upstreamBody(body, target.model, stream);
      const passage = routing.breakers.take(name);
      if (passage.kind === 'open') {
        openUntil = Math.min(openUntil, passage.untilMs);
        skip('breaker_open');
        continue;
      }
      current = name;
      const began = performance.now();
      const headers = { 'content-type': 'application/json', ...asked.upstreamHeaders(upstream.apiKey, input.incoming) };
      const outcome = await attempt(
        {
          dispatcher: routing.dispatcher,
          url: `${upstream.baseUrl}${asked.path}${translation ? '' : input.query}`,
          headers,
          body: upstreamBody,
          stream,
          reader: asked.streamReader(),
          signal: request,
          limitMs: stream ? settings.first_byte_timeout_ms : settings.answer_timeout_ms,
          isByok: upstream.isByok,
        },
        onMalformed,
      );
      const ms = performance.now() - began;
      const delivery: Delivery = {
        reply,
        api,
        measure: asked,
        translation,
        body,
        promptCharacters: input.promptCharacters,
        headers: {},
        apiKey: upstream.apiKey,
        arrived: input.arrived,
      };
      if (outcome.kind !== 'failed') {
        routing.breakers.succeeded(name);
        current = null;
        served = { target, isByok: upstream.isByok };
        attempts.push({
          target: name,
          status: outcome.kind === 'stream' ? 200 : outcome.status,
          error: null,
          ms,
          decision: 'served',
        });
        delivery.headers = headersFor(target);
        if (outcome.kind === 'stream') {
          await deliverStream(
            delivery,
            outcome,
            // A translator reads the usage chunk itself, and sends what the caller's API says of it.
            { wantsUsage: wantsUsage || translation !== null, idleMs: settings.stream_idle_timeout_ms, onMalformed },
            measured,
          );
        } else if (outcome.status >= 200 && outcome.status <= 299) {
          deliverAnswer(delivery, outcome.status, outcome.text, measured);
        } else {
          const failure = upstreamFailure(
            outcome.status,
            outcome.retryAfter,
            outcome.text,
            [upstream.apiKey],
            upstream.isByok,
          );
          attempts[attempts.length - 1]!.error = classifyStatus(outcome.status, outcome.text, upstream.isByok);
          measured.status = failure.status;
          measured.upstreamError = failure.rowError;
          sendError(delivery, failure.status, failure.body.error, failure.headers);
        }
        return finish();
      }

      // The target failed before anything reached the caller.
      const policy = policyOf(outcome.failure);
      const waitMs = retryAfterMs(outcome.retryAfter, Date.now());
      if (policy.breaker) {
        const openFor =
          outcome.failure === 'platform_key' ? Math.max(PLATFORM_KEY_OPEN_MS, settings.breaker_cooldown_ms) : undefined;
        routing.breakers.failed(name, settings, openFor);
      }
      if (outcome.failure === 'rate_limited' && waitMs !== null) routing.breakers.limited(name, waitMs);
      current = null;
      if (outcome.failure === 'platform_key') {
        routing.log.warn(
          { target: name, status: outcome.status },
          `gateway: ${target.provider} refused the platform's key; its targets are skipped until it is fixed (key_env of provider ${target.provider})`,
        );
      }
      if (outcome.failure === 'context_length') excludedModels.add(target.model);
      last = { outcome, apiKey: upstream.apiKey, isByok: upstream.isByok };
      const entry: Attempt = { target: name, status: outcome.status, error: outcome.failure, ms, decision: 'gave_up' };
      attempts.push(entry);
      if (made() >= settings.max_attempts || (!policy.sameTarget && !policy.nextTarget)) break;
      const elsewhere = policy.nextTarget && order.slice(index + 1).some((other) => !excludedModels.has(other.model));
      const remaining = deadline - performance.now();
      // A 429 goes elsewhere at once; waited out here only when nowhere else can serve, and only
      // when its Retry-After fits the bounds. Without one, it backs off as a 5xx does.
      const wait =
        outcome.failure === 'rate_limited' && waitMs !== null
          ? waitMs <= settings.retry_after_max_ms && waitMs < remaining && !elsewhere
            ? waitMs
            : null
          : policy.sameTarget && triesHere < settings.retries && !(outcome.failure === 'rate_limited' && elsewhere)
            ? backoff(settings.backoff_ms, triesHere, routing.random)
            : null;
      if (wait !== null && wait < remaining) {
        entry.decision = 'retried';
        triesHere += 1;
        await request.sleep(wait);
        // The target's breaker opened meanwhile (this request's failures, or others'): it is not asked again.
        continue;
      }
      if (!elsewhere) {
        index = order.length;
        continue;
      }
      entry.decision = 'next';
      if (outcome.failure === 'rate_limited' && waitMs !== null && waitMs <= settings.retry_after_max_ms) {
        const at = performance.now() + waitMs;
        if (revisit === null || at < revisit.at) revisit = { target, at };
      }
      index += 1;
      triesHere = 0;
    }
    // Nothing served: the last failure as the caller's answer, or every target's breaker open.
    const delivery: Delivery = {
      ...unanswered(reply, api, input),
      headers: headersFor(null),
      apiKey: last?.apiKey ?? null,
    };
    // The gateway retried already: an SDK that retries too would multiply the attempts.
    if (made() > 1) delivery.headers['x-should-retry'] = 'false';
    if (last === null && untranslatable !== null) {
      // Nothing lost in silence: the caller hears what its targets' API cannot say.
      measured.status = 400;
      measured.upstreamError = untranslatable;
      sendError(delivery, 400, { message: untranslatable, type: 'invalid_request_error', code: 'untranslatable' });
      return finish();
    }
    if (last === null && openUntil === Infinity) {
      // No target this gateway can reach at all: the operator's configuration, not an outage.
      const refusal = noUpstream(plan.targets.map((target) => target.provider).join(', '));
      measured.status = refusal.status;
      measured.upstreamError = refusal.message;
      sendError(delivery, refusal.status, refusal.body().error);
      return finish();
    }
    if (last === null) {
      const seconds = Math.max(1, Math.ceil((openUntil - performance.now()) / 1000));
      measured.status = 503;
      measured.upstreamError = 'every target of the route is failing (breakers open)';
      sendError(
        delivery,
        503,
        {
          message: `Every target of ${plan.route} is failing; try again in ${seconds} s.`,
          type: 'upstream_error',
          code: 'breaker_open',
        },
        { 'retry-after': String(seconds) },
      );
      return finish();
    }
    answerFailure(delivery, last, measured);
    return finish();
  } catch (error) {
    if (current !== null) {
      // A request ended mid-attempt: the target is blamed only for its own silence.
      if ((request.reason as Error | undefined)?.message === 'guillotine') routing.breakers.failed(current, settings);
      else routing.breakers.released(current);
      const timedOut = (request.reason as Error | undefined)?.message === 'guillotine';
      attempts.push({
        target: current,
        status: null,
        error: timedOut ? 'timeout' : 'client',
        ms: 0,
        decision: 'gave_up',
      });
    }
    endRequest({ ...unanswered(reply, api, input), headers: headersFor(null) }, request, error, measured, budgetMs);
    return finish();
  } finally {
    clearTimeout(guillotine);
    reply.raw.off('close', onClose);
  }

  function finish(): RequestRecord {
    if (served && measured.responseId !== null) input.origins?.set(measured.responseId, targetName(served.target));
    return servedRow(input, {
      measured,
      preDispatchMs,
      served: served && { model: served.target.model, isByok: served.isByok, name: targetName(served.target) },
      price: plan.price,
      promptCache: plan.promptCache,
      billed: api.billed,
      attempts,
    });
  }
}

/** Milliseconds before retry number `tries` + 1 on one target: doubling, with full jitter around it. */
function backoff(baseMs: number, tries: number, random: () => number): number {
  return Math.round(baseMs * 2 ** tries * (0.5 + random()));
}

/** A delivery of the gateway's own words: an error, no target's answer. */
function unanswered(reply: FastifyReply, api: GatewayApi, input: ServeInput): Omit<Delivery, 'headers'> {
  return {
    reply,
    api,
    measure: api,
    translation: null,
    body: input.body,
    promptCharacters: input.promptCharacters,
    apiKey: null,
    arrived: input.arrived,
  };
}

/** The answer when every attempt failed: the upstream's own error where it sent one. */
function answerFailure(delivery: Delivery, last: LastFailure, measured: Measured): void {
  const { outcome } = last;
  if (outcome.status !== null && outcome.status !== 200) {
    const failure = upstreamFailure(outcome.status, outcome.retryAfter, outcome.text, [last.apiKey], last.isByok);
    measured.status = failure.status;
    measured.upstreamError = failure.rowError;
    sendError(delivery, failure.status, failure.body.error, failure.headers);
    return;
  }
  if (outcome.failure === 'stream_error') {
    const failure = upstreamFailure(502, undefined, outcome.text, [last.apiKey], last.isByok);
    measured.status = 502;
    measured.upstreamError = `stream error event: ${failure.body.error.message}`;
    sendError(delivery, 502, failure.body.error);
    return;
  }
  const { status, message } = unansweredStatus(outcome.failure);
  measured.status = status;
  measured.upstreamError = rowErrorOf(outcome.failure);
  const type = status === 504 ? 'timeout' : 'upstream_error';
  sendError(delivery, status, { message, type, code: type });
}

function rowErrorOf(failure: FailureClass): string {
  switch (failure) {
    case 'connect':
      return 'upstream connection failed: refused or unreachable';
    case 'timeout':
      return 'no answer from upstream in time';
    case 'first_byte_timeout':
      return 'no first content from upstream in time';
    case 'stream_cut':
      return 'upstream closed the stream before any content';
    default:
      return 'upstream connection failed: reset before an answer';
  }
}

/** The request ended by its deadline, its caller, or an answer too large, whatever was under way. */
function endRequest(delivery: Delivery, signal: Cancel, error: unknown, measured: Measured, budgetMs: number): void {
  const { reply } = delivery;
  const reason = signal.aborted ? String((signal.reason as Error | undefined)?.message) : '';
  const headersSent = reply.raw.headersSent;
  if (reason === 'client disconnected') {
    measured.termination = 'client_disconnect';
    if (!headersSent) measured.status = 499;
  } else if (reason === 'guillotine') {
    measured.termination = 'proxy_guillotine';
    measured.upstreamError = `no answer from upstream within ${budgetMs / 1000} s`;
    if (!headersSent) measured.status = 504;
  } else if (error instanceof UpstreamTooLarge) {
    measured.termination = 'upstream_stream_aborted';
    measured.upstreamError = `the upstream sent ${error.message}`;
    if (!headersSent) measured.status = 502;
  } else {
    throw error;
  }
  const message = measured.upstreamError ?? 'The request ended early.';
  if (!headersSent && reason !== 'client disconnected') {
    const type = measured.status === 504 ? 'timeout' : 'upstream_error';
    sendError(delivery, measured.status, { message, type, code: type });
  } else if (headersSent && !reply.raw.writableEnded && reason !== 'client disconnected') {
    reply.raw.end(delivery.api.streamError(message, 'upstream_error'));
  } else if (!reply.raw.writableEnded) {
    reply.raw.destroy();
  }
}
