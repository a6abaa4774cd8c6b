import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { DEFAULT_RATE_LIMIT_RPM, issueKey, revokeKey, updateKeyLimits } from '../domain/keys.js';
import { parseIsoTimestamp } from '../domain/time.js';
import { invalid, notFound } from '../http-errors.js';
import { parseId } from '../ids.js';
import type { KeyRow } from '../stores/control/keys.js';
import { sourceIp } from '../plugins/guards.js';
import { authOf } from '../plugins/session.js';
import { MessageBody, errors, isoTime, isoTimeOrNull } from '../schemas/common.js';
import { CreateKeyBody, CreatedKey, KeyIdParams, KeyList, UpdateKeyBody, UpdatedKey } from '../schemas/keys.js';

const tags = ['keys'];
const NAME_MAX = 200;

export async function keyRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { control, config, telemetry } = app;

  app.post(
    '/keys',
    { schema: { tags, body: CreateKeyBody, response: { 201: CreatedKey, ...errors(400, 401, 404, 415, 422) } } },
    async (request, reply) => {
      const auth = authOf(request);
      const body = request.body;
      const name = body.name.trim();
      if (name.length === 0 || [...name].length > NAME_MAX) {
        throw invalid({
          loc: ['body', 'name'],
          msg: `name must be 1 to ${NAME_MAX} characters`,
          type: 'string_length',
        });
      }
      const expiresAt = body.expires_at === undefined ? null : parseIsoTimestamp(body.expires_at);
      if (body.expires_at !== undefined && expiresAt === null) {
        throw invalid({
          loc: ['body', 'expires_at'],
          msg: 'expires_at must be an ISO 8601 date-time',
          type: 'datetime',
        });
      }
      const projectId = parseId(body.project_id);
      if (!projectId) throw notFound('project not found', { field: 'project_id' });
      const created = await issueKey(control, app.secrets.keyHashSecret, {
        orgId: auth.orgId,
        actorId: auth.accountId,
        projectId,
        name,
        environment: body.environment ?? 'production',
        expiresAt,
        creditLimitMicro: body.credit_limit_cents ?? null,
        allowedModels: body.allowed_models ? [...new Set(body.allowed_models)] : null,
        rateLimitRpm: body.use_platform_max_rate_limit ? config.rateLimitCeiling : DEFAULT_RATE_LIMIT_RPM,
        sourceIp: sourceIp(request),
        now: config.now(),
      });
      // The answer carries the key's secret, once: no cache along the way may keep it.
      return reply.code(201).header('cache-control', 'no-store').send(created);
    },
  );

  // The listing as JSON text, kept while the key rows and their last uses are the same
  // cached objects: the hottest read of the console then costs no serialisation either.
  const listings = new WeakMap<readonly Readonly<KeyRow>[], { lastUsed: Map<string, number> | null; json: string }>();
  app.get('/keys', { schema: { tags, response: { 200: KeyList, ...errors(401) } } }, async (request, reply) => {
    const keys = await control.keys.list(authOf(request).orgId);
    // Null when the telemetry store is unreachable: every last_used_at is then unknown.
    const lastUsed = await telemetry.lastUsedByKey(keys);
    let listing = listings.get(keys);
    if (!listing || listing.lastUsed !== lastUsed) {
      listing = { lastUsed, json: JSON.stringify(keyList(keys, lastUsed)) };
      listings.set(keys, listing);
    }
    // A string payload skips Fastify's serializer: the schema still documents the shape.
    return reply.type('application/json; charset=utf-8').send(listing.json as unknown as KeyList);
  });

  app.patch(
    '/keys/:key_id',
    {
      schema: {
        tags,
        params: KeyIdParams,
        body: UpdateKeyBody,
        response: { 200: UpdatedKey, ...errors(400, 401, 404, 415, 422) },
      },
    },
    async (request) => {
      const auth = authOf(request);
      const keyId = parseId(request.params.key_id);
      if (!keyId) throw notFound('key not found', { field: 'key_id' });
      return updateKeyLimits(control, {
        orgId: auth.orgId,
        actorId: auth.accountId,
        keyId,
        rateLimitRpm: request.body.rate_limit_rpm,
        creditLimitPkr: request.body.credit_limit_pkr ?? null,
        expiresAtSeconds: request.body.expires_at ?? null,
        rateLimitCeiling: config.rateLimitCeiling,
        sourceIp: sourceIp(request),
        now: config.now(),
      });
    },
  );

  app.delete(
    '/keys/:key_id',
    { schema: { tags, params: KeyIdParams, response: { 200: MessageBody, ...errors(401, 404) } } },
    async (request) => {
      const auth = authOf(request);
      const keyId = parseId(request.params.key_id);
      if (!keyId) throw notFound('key not found', { field: 'key_id' });
      await revokeKey(control, {
        orgId: auth.orgId,
        actorId: auth.accountId,
        keyId,
        sourceIp: sourceIp(request),
        now: config.now(),
      });
      return { message: 'key revoked' };
    },
  );
}

function keyList(keys: readonly Readonly<KeyRow>[], lastUsed: Map<string, number> | null): KeyList {
  return {
    keys: keys.map((key) => ({
      id: key.id,
      name: key.name,
      key_prefix: key.key_prefix,
      project_id: key.project_id,
      created_at: isoTime(key.created_at),
      last_used_at: isoTimeOrNull(lastUsed?.get(key.id) ?? null),
      rate_limit_rpm: key.rate_limit_rpm,
      expires_at: isoTimeOrNull(key.expires_at),
      credit_limit_cents: key.credit_limit_micro,
      allowed_models: key.allowed_models === null ? null : (JSON.parse(key.allowed_models) as string[]),
      environment: key.environment,
    })),
  };
}
