import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Agent } from 'undici';
import type { KeyRow } from '../stores/control/keys.js';
import type { ControlStore } from '../stores/control/store.js';
import type { RequestRecord } from '../stores/telemetry/request-record.js';
import { KeyRefusal, admit, keyOf, type AdmissionDeps } from './admission.js';
import { CreditHolds } from './credit-holds.js';
import { forward } from './forward.js';
import { LiveTelemetry } from './live-telemetry.js';
import { GatewayRefusal, badRequest } from './refusals.js';
import { metadataOf, promptCharacters, refusalRow, type RowStart } from './request-facts.js';
import { RequestRate } from './request-rate.js';
import type { Upstreams } from './upstreams.js';

export interface GatewayOptions {
  control: ControlStore;
  telemetryPath: string;
  keyHashSecret: Buffer;
  vaultMasterKey: Buffer;
  upstreams: Upstreams;
  logger: FastifyBaseLogger;
  /** Milliseconds since the epoch, as the control plane's clock. */
  now: () => number;
  /** An upstream that has not finished by then is cut (504, `proxy_guillotine`). */
  timeoutMs?: number;
  /** How often rows are written (group commit). */
  flushMs?: number;
}

const DEFAULT_TIMEOUT_MS = 120_000;
const DEFAULT_FLUSH_MS = 200;

/** Generated tokens assumed for a hold when the caller sets no maximum: the most any route answers. */
const DEFAULT_MAX_GENERATED = 16_000;

interface ChatBody {
  n?: unknown;
  model?: unknown;
  messages?: unknown;
  stream?: unknown;
  max_tokens?: unknown;
  max_completion_tokens?: unknown;
}

function maxGenerated(body: ChatBody): number | null {
  const value = body.max_completion_tokens ?? body.max_tokens;
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : null;
}

/**
 * The OpenAI-compatible gateway: `POST /v1/chat/completions` (streamed or not) and `GET /v1/models`,
 * on a Fastify instance of its own (its own port), beside the control plane whose stores it reads.
 */
export function buildGateway(options: GatewayOptions): FastifyInstance {
  const holds = new CreditHolds();
  const deps: AdmissionDeps = {
    control: options.control,
    keyHashSecret: options.keyHashSecret,
    vaultMasterKey: options.vaultMasterKey,
    upstreams: options.upstreams,
    rate: new RequestRate(),
    holds,
  };
  const telemetry = new LiveTelemetry(
    options.control,
    options.telemetryPath,
    holds,
    options.logger,
    options.flushMs ?? DEFAULT_FLUSH_MS,
  );
  const forwarding = {
    dispatcher: new Agent({ keepAliveTimeout: 30_000, connections: 256 }),
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  };
  const gateway = Fastify({
    loggerInstance: options.logger,
    bodyLimit: 8 * 1024 * 1024,
    logController: new LogController({ disableRequestLogging: true }),
  });
  gateway.addHook('onClose', async () => {
    telemetry.close();
    await forwarding.dispatcher.close();
  });

  gateway.setErrorHandler((thrown: Error & { statusCode?: number }, request, reply) => {
    const error = thrown instanceof KeyRefusal ? thrown.refusal : thrown;
    if (error instanceof GatewayRefusal) return reply.code(error.status).headers(error.headers).send(error.body());
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) return reply.code(status).send(badRequest(error.message).body());
    request.log.error({ err: error }, 'gateway request failed');
    return reply.code(500).send({ error: { message: 'internal error', type: 'server_error', code: null } });
  });
  gateway.setNotFoundHandler((request, reply) =>
    reply.code(404).send(badRequest(`Unknown request URL: ${request.method} ${request.url}.`).body()),
  );

  const rowStart = (request: FastifyRequest, model: string, stream: boolean, ts: number): RowStart => ({
    req_id: `req_${randomUUID().replace(/-/g, '')}`,
    ts,
    model,
    stream: stream ? 1 : 0,
    user_agent: request.headers['user-agent'] ?? '',
    metadata: JSON.stringify(metadataOf(request)),
    org_id: '',
    project_id: null,
    key_id: null,
  });

  gateway.post('/v1/chat/completions', async (request, reply) => {
    const arrived = performance.now();
    const ts = options.now();
    const body = (request.body ?? {}) as ChatBody & Record<string, unknown>;
    const model = typeof body.model === 'string' ? body.model : '';
    const stream = body.stream === true;
    const rowOf = (key: KeyRow): RowStart => ({
      ...rowStart(request, model, stream, ts),
      org_id: key.org_id,
      project_id: key.project_id,
      key_id: key.id,
    });
    let start: RowStart | null = null;
    try {
      const key = keyOf(deps, request.headers.authorization, ts); // an unknown key: refused, no row
      start = rowOf(key);
      if (model === '') throw new KeyRefusal(badRequest('model is required.'), key);
      if (!Array.isArray(body.messages) || body.messages.length === 0) {
        throw new KeyRefusal(badRequest('messages must be a non-empty array.'), key);
      }
      const characters = promptCharacters(body.messages);
      // The hold bounds the prompt by the whole body (tools, images and all) and counts every choice.
      const choices = typeof body.n === 'number' && Number.isInteger(body.n) && body.n > 1 ? body.n : 1;
      const admitted = admit(
        deps,
        key,
        {
          model,
          boundCharacters: JSON.stringify(body).length,
          maxGenerated: (maxGenerated(body) ?? DEFAULT_MAX_GENERATED) * choices,
        },
        ts,
      );
      let row: RequestRecord;
      try {
        row = await forward(reply, forwarding, { start, arrived, body, promptCharacters: characters, admitted });
      } finally {
        holds.release(key.id, admitted.held);
      }
      telemetry.add(row);
      return reply;
    } catch (error) {
      if (!(error instanceof KeyRefusal)) throw error;
      telemetry.add(refusalRow(start ?? rowOf(error.key), error.refusal.status, performance.now() - arrived));
      throw error.refusal;
    }
  });

  gateway.get('/v1/models', async (request) => {
    const key = keyOf(deps, request.headers.authorization, options.now());
    const allowed = key.allowed_models === null ? null : new Set(JSON.parse(key.allowed_models) as string[]);
    const models = options.control.models
      .list()
      .filter((model) => model.active && (allowed === null || allowed.has(model.id)));
    return {
      object: 'list',
      data: models.map((model) => ({ id: model.id, object: 'model', created: 0, owned_by: model.provider })),
    };
  });

  return gateway;
}
