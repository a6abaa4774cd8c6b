import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import { Agent } from 'undici';
import { lazyChildLogger } from '../log.js';
import { askedAs, type GatewayApi } from './apis/api.js';
import { chatApi } from './apis/chat.js';
import { embeddingsApi } from './apis/embeddings.js';
import { badVersion, countTokensApi, messagesApi } from './apis/messages.js';
import { responsesApi } from './apis/responses.js';
import { ResponseOrigins } from './response-origins.js';
import { GatewayRefusal, badRequest, invalidKey, namesItsRow } from '../admission/refusals.js';
import { tooDeep, tooDeepError } from './body-checks.js';
import type { KeyModels, KeyOwnerWire } from '../schemas/gateway-internal.js';
import type { Authority } from './authority.js';
import { Breakers } from './breakers.js';
import { serve, targetName, type Routing } from './failover.js';
import { KeyGate, announcesBody, apiKeySecret, bearerSecret, bodyDeadline } from './front-door.js';
import { metadataOf, refusalRow, type RowStart } from './request-facts.js';
import type { Upstreams } from './upstreams.js';
import { closeUpstreams } from './upstream-pool.js';

export interface GatewayOptions {
  /** Who decides each request and takes its row: the control plane, here or elsewhere. */
  authority: Authority;
  upstreams: Upstreams;
  logger: FastifyBaseLogger;
  /** Milliseconds since the epoch, for the rows' timestamps. */
  now: () => number;
  /** An upstream that has not finished by then is cut (504, `proxy_guillotine`). */
  timeoutMs?: number;
  /** A request body not all arrived by then is refused (408) and its connection closed. */
  bodyTimeoutMs?: number;
  /** Where targets' `key_env` are read; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** The targets' breakers: the gateway's own unless given (a test, the console's view of them). */
  breakers?: Breakers;
  /** In [0, 1): load balancing's and backoff's draws; default Math.random. */
  random?: () => number;
}

export const DEFAULT_GATEWAY_TIMEOUT_MS = 120_000;
export const DEFAULT_BODY_TIMEOUT_MS = 30_000;

/** Generated tokens assumed for a hold when the caller sets no maximum: the most any route answers. */
const DEFAULT_MAX_GENERATED = 16_000;

const newRequestId = () => `req_${randomUUID().replace(/-/g, '')}`;

/** The parts of a call's row known when it arrives. */
function rowStart(
  request: FastifyRequest,
  reqId: string,
  model: string,
  stream: boolean,
  ts: number,
  key: KeyOwnerWire,
  api: RowStart['api'],
): RowStart {
  return {
    req_id: reqId,
    ts,
    model,
    stream: stream ? 1 : 0,
    user_agent: request.headers['user-agent'] ?? '',
    metadata: JSON.stringify(metadataOf(request)),
    org_id: key.org_id,
    project_id: key.project_id,
    key_id: key.id,
    api,
  };
}

/**
 * Characters that bound the prompt's tokens from above: the body's bytes as sent (UTF-8 takes at
 * least a byte per UTF-16 unit), or, sent in chunks without a length, the body written again.
 */
function boundCharacters(request: FastifyRequest, body: unknown): number {
  const length = Number(request.headers['content-length']);
  return Number.isSafeInteger(length) && length >= 0 ? length : JSON.stringify(body).length;
}

/** Each path's API; a path under /v1/messages that is not one is answered in Anthropic's shape. */
const APIS: Readonly<Record<string, GatewayApi>> = {
  '/v1/chat/completions': chatApi,
  '/v1/messages': messagesApi,
  '/v1/messages/count_tokens': countTokensApi,
  '/v1/responses': responsesApi,
  '/v1/embeddings': embeddingsApi,
};

const apiOf = (request: FastifyRequest): GatewayApi =>
  APIS[request.routeOptions.url ?? ''] ?? (request.url.startsWith('/v1/messages') ? messagesApi : chatApi);

/**
 * The caller's key: `Authorization: Bearer`, or on Anthropic's paths `x-api-key` too (what
 * Anthropic's SDK and Claude Code send). Null when neither is there or readable.
 */
function callerSecret(request: FastifyRequest): string | null {
  const bearer = bearerSecret(request.headers.authorization);
  if (bearer !== null || apiOf(request).wire !== 'anthropic') return bearer;
  return apiKeySecret(request.headers['x-api-key']);
}

/**
 * The gateway, on a Fastify instance of its own (its own port): OpenAI's chat completions,
 * Responses API and embeddings, Anthropic's Messages API (and its token counting), streamed or
 * not, and `GET /v1/models`. Each call is decided by the control plane (`options.authority`),
 * forwarded to its route's targets that speak its API (failover.ts), measured, and reported as
 * one row; each refusal is worded in the API's own error shape, so each SDK raises its own error.
 */
export function buildGateway(options: GatewayOptions): FastifyInstance {
  const { authority } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULT_GATEWAY_TIMEOUT_MS;
  const upstreamPool = new Agent({ keepAliveTimeout: 30_000, connections: 256 });
  const routing: Routing = {
    dispatcher: upstreamPool,
    timeoutMs,
    upstreams: options.upstreams,
    env: options.env ?? process.env,
    breakers: options.breakers ?? new Breakers(),
    random: options.random ?? Math.random,
    log: options.logger,
  };
  const gateway = Fastify({
    loggerInstance: options.logger,
    bodyLimit: 8 * 1024 * 1024,
    logController: new LogController({ disableRequestLogging: true }),
    // A request's logger only when it logs (an error): pino's child per request costs every call.
    childLoggerFactory: lazyChildLogger,
  });
  // The body is read, not merged into anything: JSON.parse's own `__proto__` keys stay plain data,
  // and secure-json-parse's scan of every body for them is not needed.
  gateway.removeContentTypeParser('application/json');
  gateway.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, text, done) => {
    if (tooDeep(text as string)) return done(tooDeepError(), undefined);
    try {
      done(null, JSON.parse(text as string));
    } catch {
      done(Object.assign(new Error('The request body is not valid JSON.'), { statusCode: 400 }), undefined);
    }
  });
  gateway.addHook('onClose', async () => {
    await authority.close();
    await closeUpstreams(upstreamPool, gateway.log);
  });

  // Who the caller of a request with a body is, as the front door found them: the handler and
  // the error handler read it rather than ask the authority again.
  const callers = new WeakMap<IncomingMessage, { secret: string; key: KeyOwnerWire }>();
  const gate = new KeyGate(authority);
  const bodyTimeoutMs = options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS;

  /** Refused with a body still to come: the connection goes, so nothing more of it is read. */
  const closing = (request: FastifyRequest, reply: FastifyReply) => {
    if (announcesBody(request.raw)) reply.header('connection', 'close');
  };

  // The front door: every request that may carry a body (GET and HEAD never have one read) is
  // refused here, on its headers, unless its key is in force; one that passes gets a deadline for
  // its body. An unknown URL is answered here too, its body unread.
  gateway.addHook('onRequest', (request, reply, done) => {
    if (request.method === 'GET' || request.method === 'HEAD') return done();
    if (request.is404) {
      closing(request, reply);
      return done(
        new GatewayRefusal(
          404,
          `Unknown request URL: ${request.method} ${request.url}.`,
          'invalid_request_error',
          null,
        ),
      );
    }
    const secret = callerSecret(request);
    if (secret === null) {
      closing(request, reply);
      return done(invalidKey()); // nobody to ask about, no row
    }
    const admitAtTheDoor = (known: KeyModels) => {
      if (known.kind === 'refused') {
        // A revoked or expired key's call is still its row; an unknown key's has nobody to be filed under.
        if (known.key !== null) {
          const start = rowStart(request, newRequestId(), '', false, options.now(), known.key, apiOf(request).name);
          authority.report(refusalRow(start, known.refusal.status, reply.elapsedTime));
        }
        closing(request, reply);
        return done(GatewayRefusal.fromWire(known.refusal));
      }
      callers.set(request.raw, { secret, key: known.key });
      if (announcesBody(request.raw)) bodyDeadline(request.raw, bodyTimeoutMs);
      done();
    };
    // A key the door remembers is answered without a promise: most requests, on the hot path.
    const known = gate.check(secret);
    if (known instanceof Promise) known.then(admitAtTheDoor, done);
    else admitAtTheDoor(known);
  });

  /** A refusal in the request's API's shape. */
  const refused = (request: FastifyRequest, reply: FastifyReply, refusal: GatewayRefusal) =>
    reply
      .code(refusal.status)
      .headers(refusal.headers)
      .send(apiOf(request).errorBody(refusal.status, refusal.body().error));

  gateway.setErrorHandler(async (error: Error & { statusCode?: number }, request, reply) => {
    if (error instanceof GatewayRefusal) return refused(request, reply, error);
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      recordUnread(request, reply, status);
      // Too large, too slow, another type: what is left of the body is not read.
      if (!request.raw.complete) reply.header('connection', 'close');
      return refused(request, reply, new GatewayRefusal(status, error.message, 'invalid_request_error', null));
    }
    request.log.error({ err: error }, 'gateway request failed');
    return refused(request, reply, new GatewayRefusal(500, 'internal error', 'server_error', null));
  });
  gateway.setNotFoundHandler((request, reply) =>
    refused(
      request,
      reply,
      new GatewayRefusal(404, `Unknown request URL: ${request.method} ${request.url}.`, 'invalid_request_error', null),
    ),
  );

  /**
   * A chat request refused before its body could be read (not JSON, too large, too slow, another
   * content type): still a call of the key's, so still its row.
   */
  const recordUnread = (request: FastifyRequest, reply: FastifyReply, status: number): void => {
    if (request.method !== 'POST' || APIS[request.routeOptions.url ?? ''] === undefined) return;
    const caller = callers.get(request.raw);
    if (!caller) return;
    const reqId = newRequestId();
    const start = rowStart(
      request,
      reqId,
      '',
      false,
      Math.round(options.now() - reply.elapsedTime),
      caller.key,
      apiOf(request).name,
    );
    authority.report(refusalRow(start, status, reply.elapsedTime));
    reply.header('x-request-id', reqId);
  };

  const secretOf = (request: FastifyRequest): string => {
    const secret = callerSecret(request);
    if (secret === null) throw invalidKey(); // nobody to ask about, no row
    return secret;
  };

  // Which target produced each response this process served: a request continuing one
  // (`previous_response_id`) goes there, where its state is.
  const origins = new ResponseOrigins();

  const handle = (api: GatewayApi) => async (request: FastifyRequest, reply: FastifyReply) => {
    const arrived = performance.now();
    const ts = options.now();
    const body = (request.body ?? {}) as Record<string, unknown>;
    // Set by the front door for every POST it lets in.
    const caller = callers.get(request.raw);
    if (!caller) throw invalidKey();
    const { secret } = caller;
    const model = typeof body.model === 'string' ? body.model : '';
    const stream = api.streams(body);
    const reqId = newRequestId();
    const startOf = (key: KeyOwnerWire) => rowStart(request, reqId, model, stream, ts, key, api.name);
    // A refusal of a known key is its row; an unknown key's has nobody to be filed under.
    const refuse = (refusal: GatewayRefusal, key: KeyOwnerWire | null): GatewayRefusal => {
      if (key === null) return refusal;
      authority.report(refusalRow(startOf(key), refusal.status, performance.now() - arrived));
      if (namesItsRow(refusal)) reply.header('x-request-id', reqId);
      return refusal;
    };

    const problem =
      (api.wire === 'anthropic' ? badVersion(request.headers['anthropic-version']) : null) ?? api.malformed(body);
    if (problem !== null) throw refuse(badRequest(problem), caller.key);
    const decision = await authority.admit({
      reqId,
      secret,
      model,
      kind: api.kind,
      // The hold bounds the prompt by the whole body (tools, images and all).
      boundCharacters: boundCharacters(request, body),
      boundUncertain: api.uncertainBound(body),
      maxGenerated: api.maxGenerated(body, DEFAULT_MAX_GENERATED),
      timeoutMs,
    });
    if (decision.kind === 'refused') throw refuse(GatewayRefusal.fromWire(decision.refusal), decision.key);
    let plan = decision.plan;
    // Those that speak the API, or one it is translated to.
    const speaking = plan.targets.filter((target) => askedAs(api, target.api) !== undefined);
    if (speaking.length === 0) {
      throw refuse(
        badRequest(
          `The model ${model} is not served over this API here: none of its targets speaks ${api.wire === 'anthropic' ? "Anthropic's Messages API" : "OpenAI's API"}.`,
        ),
        decision.key,
      );
    }
    const previous = body.previous_response_id;
    if (api === responsesApi && typeof previous === 'string' && speaking.length > 1) {
      // Only the target that produced a response keeps it: the continuation goes there, or nowhere.
      const origin = origins.get(previous);
      const there = origin === null ? [] : speaking.filter((target) => targetName(target) === origin);
      if (there.length === 0) {
        throw refuse(
          badRequest(
            `previous_response_id ${previous.slice(0, 64)} was not answered by this gateway, and the model ${model} has several targets: only the one that produced it keeps its state. Send the conversation's items in input instead.`,
          ),
          decision.key,
        );
      }
      plan = { ...plan, targets: there };
    }
    const queryAt = request.url.indexOf('?');
    const row = await serve(reply, routing, {
      api,
      incoming: request.headers,
      query: queryAt < 0 ? '' : request.url.slice(queryAt),
      start: startOf(decision.key),
      arrived,
      body,
      promptCharacters: api.promptCharacters(body),
      plan,
      rateHeaders: decision.rateHeaders,
      origins: api === responsesApi ? origins : null,
    });
    authority.report(row);
    return reply;
  };
  for (const [path, api] of Object.entries(APIS)) gateway.post(path, handle(api));

  // Stored responses are the provider's: this gateway keeps none to read or delete.
  const notKept = async (request: FastifyRequest, reply: FastifyReply) => {
    const known = await authority.keyModels(secretOf(request));
    if (known.kind === 'refused') throw GatewayRefusal.fromWire(known.refusal);
    return refused(
      request,
      reply,
      new GatewayRefusal(
        404,
        'This gateway does not read or delete stored responses: continue one with previous_response_id in POST /v1/responses.',
        'invalid_request_error',
        'unsupported_endpoint',
      ),
    );
  };
  gateway.get('/v1/responses/:id', notKept);
  gateway.delete('/v1/responses/:id', notKept);

  gateway.get('/v1/models', async (request) => {
    const known = await authority.keyModels(secretOf(request));
    if (known.kind === 'refused') throw GatewayRefusal.fromWire(known.refusal);
    return {
      object: 'list',
      data: known.models.map((model) => ({ id: model.id, object: 'model', created: 0, owned_by: model.provider })),
    };
  });

  return gateway;
}
