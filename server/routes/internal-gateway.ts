import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { createHash, timingSafeEqual } from 'node:crypto';
import { badRequest as refusedRequest } from '../admission/refusals.js';
import { attemptsText } from '../domain/attempts.js';
import { ApiError, notFound } from '../http-errors.js';
import { ErrorBody } from '../schemas/common.js';
import {
  AdmissionBatch,
  DecisionBatch,
  type Decision,
  GatewayStatus,
  KeyModels,
  KeyModelsRequest,
  RowBatch,
  RowsWritten,
  type AdmissionRequest,
  type GatewayRow,
  type RowRefused,
} from '../schemas/gateway-internal.js';
import { whyAdmissionRefused, whyRowRefused } from '../schemas/gateway-internal-checks.js';
import type { KeyOwner } from '../stores/control/keys.js';
import type { RequestRecord } from '../stores/telemetry/request-record.js';

const digest = (token: string) => createHash('sha256').update(token).digest();
const BEARER = /^Bearer\s+(\S+)\s*$/i;

const refusedToken = () => new ApiError(401, { error: 'invalid service token' });
const tags = ['internal: gateways'];
const security = [{ serviceToken: [] }];
const failures = { 400: ErrorBody, 401: ErrorBody, 404: ErrorBody };

/**
 * The internal API that gateways in other processes call (server/schemas/gateway-internal.ts),
 * under `/internal/gateway`, beside the console's `/api`. A service token from
 * `SVC_GATEWAY_TOKENS` opens it; without tokens configured it does not exist (404).
 */
export async function internalGatewayRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  // Compared as digests of equal length, in constant time, against every token (rotation: old and new both set).
  const tokens = app.config.gatewayTokens.map(digest);
  app.addHook('onRequest', async (request: FastifyRequest) => {
    if (tokens.length === 0) throw notFound('not found');
    const presented = BEARER.exec(request.headers.authorization ?? '')?.[1];
    if (!presented) throw refusedToken();
    const candidate = digest(presented);
    let known = false;
    for (const token of tokens) known = timingSafeEqual(token, candidate) || known;
    if (!known) throw refusedToken();
  });

  app.get(
    '/status',
    {
      schema: {
        tags,
        security,
        summary: 'Whether the token opens this API',
        response: { 200: GatewayStatus, ...failures },
      },
    },
    async () => ({ service: 'gateway-control' as const }),
  );

  app.post(
    '/admissions',
    {
      bodyLimit: 4 * 1024 * 1024,
      schema: {
        tags,
        security,
        summary: 'Decide requests: key, model scope, rate and credit, as the control store has them now',
        body: AdmissionBatch,
        response: { 200: DecisionBatch, ...failures },
      },
    },
    async (request) => {
      // One after another, in the batch's order: each decision takes from the key's rate and credit.
      // A request this API cannot read is refused alone (400, no key: nobody was checked), not the batch.
      const decisions: Decision[] = [];
      for (const one of request.body.requests) {
        const problem = whyAdmissionRefused(one);
        if (problem === null) decisions.push(await app.admissions.admit(one as AdmissionRequest));
        else decisions.push({ kind: 'refused', key: null, refusal: refusedRequest(`request ${problem}`).toWire() });
      }
      return { decisions };
    },
  );

  app.post(
    '/key-models',
    {
      schema: {
        tags,
        security,
        summary: "A key's owner and the models it may use",
        body: KeyModelsRequest,
        response: { 200: KeyModels, ...failures },
      },
    },
    async (request) => app.admissions.keyModels(request.body.secret),
  );

  app.post(
    '/requests',
    {
      bodyLimit: 16 * 1024 * 1024,
      schema: {
        tags,
        security,
        summary: 'Store request-log rows; answers once they are committed',
        body: RowBatch,
        response: { 200: RowsWritten, ...failures },
      },
    },
    async (request) => {
      const { gateway, breakers } = request.body;
      if (gateway !== undefined && breakers !== undefined) app.gatewayHealth.report(gateway, breakers);
      // A batch's rows share a few keys: each is looked up once.
      const keys = new Map<string, KeyOwner | undefined>();
      const rows: RequestRecord[] = [];
      // The good rows are stored and the others named: a row refused costs only itself.
      const refused: RowRefused[] = [];
      for (const [index, sent] of request.body.rows.entries()) {
        const problem = whyRowRefused(sent);
        if (problem !== null) {
          refused.push({ index, reason: problem });
          continue;
        }
        const row = sent as GatewayRow;
        // Filed under the key's organisation and project as the control store has them, not as sent.
        if (!keys.has(row.key_id)) keys.set(row.key_id, await app.control.keys.find(row.key_id));
        const key = keys.get(row.key_id);
        if (key) rows.push(storedRow(row, key));
        else refused.push({ index, reason: 'unknown key' });
      }
      if (refused.length > 0) {
        request.log.warn(
          { refused: refused.length, first: refused[0] },
          'internal gateway API: rows refused, the rest stored',
        );
      }
      if (rows.length > 0) {
        app.admissions.record(rows);
        await app.admissions.written();
      }
      return refused.length > 0 ? { stored: rows.length, refused } : { stored: rows.length };
    },
  );
}

/**
 * A gateway's row filed under its key's organisation and project. Written out field by field:
 * V8 gives `{ ...row, org_id, project_id }` a new hidden class per row, tens of microseconds each.
 */
function storedRow(row: GatewayRow, key: KeyOwner): RequestRecord {
  return {
    req_id: row.req_id,
    ts: row.ts,
    org_id: key.org_id,
    project_id: key.project_id,
    key_id: row.key_id,
    model: row.model,
    status: row.status,
    stream: row.stream,
    total_ms: row.total_ms,
    ttft_ms: row.ttft_ms,
    tpot_ms: row.tpot_ms,
    pre_dispatch_ms: row.pre_dispatch_ms,
    prompt_tokens: row.prompt_tokens,
    tokens_generated: row.tokens_generated,
    cache_creation_input_tokens: row.cache_creation_input_tokens,
    cache_read_input_tokens: row.cache_read_input_tokens,
    total_tokens: row.total_tokens,
    tokens_estimated: row.tokens_estimated,
    cost_micro: row.cost_micro,
    is_byok: row.is_byok,
    termination_reason: row.termination_reason,
    upstream_error: row.upstream_error,
    upstream_model: row.upstream_model,
    served_by: row.served_by ?? null,
    attempts: row.attempts ? attemptsText(row.attempts) : null,
    api: row.api ?? null,
    user_agent: row.user_agent,
    metadata: row.metadata,
  };
}
