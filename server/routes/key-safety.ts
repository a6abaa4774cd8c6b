import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { KeyImpactResult } from '../analytics/query-types.js';
import { bulkKeys, type BulkAction } from '../domain/key-bulk.js';
import { rotateKey } from '../domain/key-rotation.js';
import { invalid, notFound } from '../http-errors.js';
import { parseId } from '../ids.js';
import { sourceIp } from '../plugins/guards.js';
import { authOf } from '../plugins/session.js';
import { errors, isoTime, isoTimeOrNull } from '../schemas/common.js';
import { BulkKeysBody, BulkKeysResult, KeyIdParams, KeyImpact, RotatedKey } from '../schemas/keys.js';
import { isAnalyticsUnavailable, runAnalytics } from './analytics-run.js';

/**
 * Beyond the contract: what the console needs to change keys without fear. Like the
 * contract's key endpoints, any member of the organisation may call them, and a key of
 * another organisation, unknown, malformed or revoked answers 404.
 */

const tags = ['keys'];
const MINUTE = 60_000;
const DAY = 86_400_000;
/** The windows counted: the last few minutes tell whether callers still use the key now. */
const WINDOWS = [5 * MINUTE, DAY, 7 * DAY];
const CALLERS_WINDOW = { ms: 7 * DAY, text: '7d' };
/** Newest requests read for the callers: bounded, whatever the key's traffic (~10 ms of work). */
const CALLERS_SAMPLE = 10_000;
const TOP_CALLERS = 10;
const TOP_VALUES = 5;

export async function keySafetyRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { control, config } = app;

  const activeKey = async (orgId: string, id: string) => {
    const keyId = parseId(id);
    const key = keyId && (await control.keys.get(orgId, keyId));
    if (!key) throw notFound('key not found', { field: 'key_id' });
    return key;
  };

  app.get(
    '/keys/:key_id/impact',
    { schema: { tags, params: KeyIdParams, response: { 200: KeyImpact, ...errors(401, 404) } } },
    async (request, reply) => {
      const { orgId } = authOf(request);
      const key = await activeKey(orgId, request.params.key_id);
      const now = config.now();
      // Unknown (null) while the telemetry store cannot answer: the revocation itself never depends on it.
      let impact: KeyImpactResult | null = null;
      try {
        impact = await runAnalytics(
          app,
          {
            kind: 'impact',
            orgId,
            keyId: key.id,
            now,
            windowsMs: WINDOWS,
            callersWindowMs: CALLERS_WINDOW.ms,
            sampleRows: CALLERS_SAMPLE,
            topCallers: TOP_CALLERS,
            topValues: TOP_VALUES,
          },
          reply,
        );
      } catch (error) {
        if (!isAnalyticsUnavailable(error)) throw error;
      }
      const [last5m, last24h, last7d] = impact?.requests ?? [null, null, null];
      return {
        id: key.id,
        key_prefix: key.key_prefix,
        as_of: isoTime(now),
        requests_last_5m: last5m ?? null,
        requests_last_24h: last24h ?? null,
        requests_last_7d: last7d ?? null,
        last_used_at: isoTimeOrNull(impact?.lastUsed ?? null),
        callers: impact && {
          window: CALLERS_WINDOW.text,
          requests_read: impact.sampled,
          sample_limit: CALLERS_SAMPLE,
          complete: impact.complete,
          distinct_user_agents: impact.distinctUserAgents,
          user_agents: impact.userAgents,
          distinct_metadata_keys: impact.distinctMetadataKeys,
          metadata: impact.metadata.map(({ distinctValues, ...rest }) => ({
            ...rest,
            distinct_values: distinctValues,
          })),
        },
      };
    },
  );

  app.post(
    '/keys/:key_id/rotate',
    {
      schema: {
        tags,
        params: KeyIdParams,
        response: { 201: RotatedKey, ...errors(400, 401, 404, 415) },
      },
    },
    async (request, reply) => {
      const auth = authOf(request);
      const keyId = parseId(request.params.key_id);
      if (!keyId) throw notFound('key not found', { field: 'key_id' });
      const rotated = await rotateKey(control, app.secrets.keyHashSecret, {
        orgId: auth.orgId,
        actorId: auth.accountId,
        keyId,
        rateLimitCeiling: config.rateLimitCeiling,
        sourceIp: sourceIp(request),
        now: config.now(),
      });
      // As POST /keys: the answer carries the new secret, once.
      return reply.code(201).header('cache-control', 'no-store').send(rotated);
    },
  );

  app.post(
    '/keys/bulk',
    { schema: { tags, body: BulkKeysBody, response: { 200: BulkKeysResult, ...errors(401, 415, 422) } } },
    async (request) => {
      const auth = authOf(request);
      const body = request.body;
      let action: BulkAction = { kind: 'revoke' };
      if (body.action === 'update_limits') {
        const limits = body.limits ?? {};
        if (Object.values(limits).every((value) => value === undefined)) {
          throw invalid({
            loc: ['body', 'limits'],
            msg: 'update_limits needs at least one of rate_limit_rpm, credit_limit_pkr, expires_at',
            type: 'missing',
          });
        }
        action = { kind: 'update_limits', limits };
      }
      return bulkKeys(control, {
        orgId: auth.orgId,
        actorId: auth.accountId,
        keyIds: body.key_ids,
        action,
        dryRun: body.dry_run,
        rateLimitCeiling: config.rateLimitCeiling,
        sourceIp: sourceIp(request),
        now: config.now(),
      });
    },
  );
}
