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
import { GatewayRefusal, badRequest, invalidKey, namesItsRow } from '../admission/refusals.js';
import { tooDeep, tooDeepError } from './body-checks.js';
import type { KeyModels, KeyOwnerWire } from '../schemas/gateway-internal.js';
import type { Authority } from './authority.js';
import { Breakers } from './breakers.js';
import { serve, type Routing } from './failover.js';
import { KeyGate, announcesBody, bearerSecret, bodyDeadline } from './front-door.js';
import { metadataOf, promptCharacters, refusalRow, uncertainBound, type RowStart } from './request-facts.js';
import type { Upstreams } from './upstreams.js';

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

interface ChatBody {
  n?: unknown;
  model?: unknown;
  messages?: unknown;
  stream?: unknown;
  stream_options?: unknown;
  max_tokens?: unknown;
  max_completion_tokens?: unknown;
}

function maxGenerated(body: ChatBody): number | null {
  const value = body.max_completion_tokens ?? body.max_tokens;
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : null;
}

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

/** What is wrong with a chat request's body before anything is asked of the key, or null. */
function malformed(body: ChatBody): string | null {
  if (typeof body.model !== 'string' || body.model === '') return 'model is required.';
  if (!Array.isArray(body.messages) || body.messages.length === 0) return 'messages must be a non-empty array.';
  // Forwarded as sent, a `stream` the upstream reads as true would come back as events the
  // gateway took for one answer: only what both read alike passes.
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') {
    return 'stream must be a boolean.';
  }
  const options = body.stream_options;
  if (options !== undefined && options !== null && (typeof options !== 'object' || Array.isArray(options))) {
    return 'stream_options must be an object.';
  }
  return null;
}

/**
 * The OpenAI-compatible gateway: `POST /v1/chat/completions` (streamed or not) and `GET /v1/models`,
 * on a Fastify instance of its own (its own port). Each call is decided by the control plane
 * (`options.authority`), forwarded to the route's upstream, measured, and reported as one row.
 */
export function buildGateway(options: GatewayOptions): FastifyInstance {
  const { authority } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULT_GATEWAY_TIMEOUT_MS;
  const routing: Routing = {
    dispatcher: new Agent({ keepAliveTimeout: 30_000, connections: 256 }),
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
    await routing.dispatcher.close();
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
    const secret = bearerSecret(request.headers.authorization);
    if (secret === null) {
      closing(request, reply);
      return done(invalidKey()); // nobody to ask about, no row
    }
    const admitAtTheDoor = (known: KeyModels) => {
      if (known.kind === 'refused') {
        // A revoked or expired key's call is still its row; an unknown key's has nobody to be filed under.
        if (known.key !== null) {
          const start = rowStart(request, newRequestId(), '', false, options.now(), known.key, 'chat');
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

  gateway.setErrorHandler(async (error: Error & { statusCode?: number }, request, reply) => {
    if (error instanceof GatewayRefusal) return reply.code(error.status).headers(error.headers).send(error.body());
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      recordUnread(request, reply, status);
      // Too large, too slow, another type: what is left of the body is not read.
      if (!request.raw.complete) reply.header('connection', 'close');
      return reply.code(status).send(badRequest(error.message).body());
    }
    request.log.error({ err: error }, 'gateway request failed');
    return reply.code(500).send({ error: { message: 'internal error', type: 'server_error', code: null } });
  });
  gateway.setNotFoundHandler((request, reply) =>
    reply.code(404).send(badRequest(`Unknown request URL: ${request.method} ${request.url}.`).body()),
  );

  /**
   * A chat request refused before its body could be read (not JSON, too large, too slow, another
   * content type): still a call of the key's, so still its row.
   */
  const recordUnread = (request: FastifyRequest, reply: FastifyReply, status: number): void => {
    if (request.method !== 'POST' || request.routeOptions.url !== '/v1/chat/completions') return;
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
      'chat',
    );
    authority.report(refusalRow(start, status, reply.elapsedTime));
    reply.header('x-request-id', reqId);
  };

  const secretOf = (request: FastifyRequest): string => {
    const secret = bearerSecret(request.headers.authorization);
    if (secret === null) throw invalidKey(); // nobody to ask about, no row
    return secret;
  };

  gateway.post('/v1/chat/completions', async (request, reply) => {
    const arrived = performance.now();
    const ts = options.now();
    const body = (request.body ?? {}) as ChatBody & Record<string, unknown>;
    // Set by the front door for every POST it lets in.
    const caller = callers.get(request.raw);
    if (!caller) throw invalidKey();
    const { secret } = caller;
    const model = typeof body.model === 'string' ? body.model : '';
    const stream = body.stream === true;
    const reqId = newRequestId();
    const startOf = (key: KeyOwnerWire) => rowStart(request, reqId, model, stream, ts, key, 'chat');
    // A refusal of a known key is its row; an unknown key's has nobody to be filed under.
    const refuse = (refusal: GatewayRefusal, key: KeyOwnerWire | null): GatewayRefusal => {
      if (key === null) return refusal;
      authority.report(refusalRow(startOf(key), refusal.status, performance.now() - arrived));
      if (namesItsRow(refusal)) reply.header('x-request-id', reqId);
      return refusal;
    };

    const problem = malformed(body);
    if (problem !== null) throw refuse(badRequest(problem), caller.key);
    const messages = body.messages as unknown[];
    // The hold bounds the prompt by the whole body (tools, images and all) and counts every choice.
    const choices = typeof body.n === 'number' && Number.isInteger(body.n) && body.n > 1 ? body.n : 1;
    const decision = await authority.admit({
      reqId,
      secret,
      model,
      boundCharacters: boundCharacters(request, body),
      boundUncertain: uncertainBound(messages),
      maxGenerated: (maxGenerated(body) ?? DEFAULT_MAX_GENERATED) * choices,
      timeoutMs,
    });
    if (decision.kind === 'refused') throw refuse(GatewayRefusal.fromWire(decision.refusal), decision.key);
    const row = await serve(reply, routing, {
      start: startOf(decision.key),
      arrived,
      body,
      promptCharacters: promptCharacters(messages),
      plan: decision.plan,
      rateHeaders: decision.rateHeaders,
    });
    authority.report(row);
    return reply;
  });

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
