import { randomUUID } from 'node:crypto';
import { badRequest, notFound } from '../http-errors.js';
import { isoTimeOrNull } from '../schemas/common.js';
import type { CreatedKey, UpdatedKey } from '../schemas/keys.js';
import { apiKeyPrefix, hashApiKeySecret, newApiKeySecret } from '../security/tokens.js';
import type { ChangeFields } from '../stores/control/activity.js';
import type { Environment, KeyRow } from '../stores/control/keys.js';
import type { ControlRecords } from '../stores/control/store.js';
import { formatPkr, pkrToMicro } from './money.js';
import { unknownOrInactive } from './route-models.js';

export const DEFAULT_RATE_LIMIT_RPM = 60;

export interface IssueKeyInput {
  orgId: string;
  actorId: string | null;
  projectId: string;
  name: string;
  environment: Environment;
  expiresAt: number | null;
  creditLimitMicro: number | null;
  allowedModels: string[] | null;
  rateLimitRpm: number;
  sourceIp: string;
  now: number;
}

/**
 * Issues a key: checks project, expiry and model scope, stores only the keyed hash,
 * and records `api_key.created`, all in one transaction. The secret is returned once.
 */
export async function issueKey(
  control: ControlRecords,
  keyHashSecret: Buffer,
  input: IssueKeyInput,
): Promise<CreatedKey> {
  const secret = newApiKeySecret();
  const id = randomUUID();
  const keyPrefix = apiKeyPrefix(secret);
  await control.write(async (tx) => {
    if (!(await tx.organizations.project(input.orgId, input.projectId)))
      throw notFound('project not found', { field: 'project_id' });
    if (input.expiresAt !== null && input.expiresAt <= input.now) {
      throw badRequest('expires_at must be in the future', { field: 'expires_at' });
    }
    if (input.allowedModels !== null) {
      if (input.allowedModels.length === 0)
        throw badRequest('allowed_models must not be empty', { field: 'allowed_models' });
      const unknown = unknownOrInactive((await tx.routes.current()).document, input.allowedModels);
      if (unknown.length > 0) {
        throw badRequest(`unknown or inactive model in allowed_models: ${unknown.join(', ')}`, {
          field: 'allowed_models',
        });
      }
    }
    await tx.keys.create({
      id,
      orgId: input.orgId,
      projectId: input.projectId,
      name: input.name,
      keyPrefix,
      secretHash: hashApiKeySecret(secret, keyHashSecret),
      environment: input.environment,
      rateLimitRpm: input.rateLimitRpm,
      expiresAt: input.expiresAt,
      creditLimitMicro: input.creditLimitMicro,
      allowedModels: input.allowedModels,
      createdAt: input.now,
    });
    await tx.activity.record({
      orgId: input.orgId,
      actorId: input.actorId,
      action: 'api_key.created',
      target: keyPrefix,
      sourceIp: input.sourceIp,
      at: input.now,
      change: {
        before: null,
        after: {
          name: input.name,
          environment: input.environment,
          ...limitFields(input),
          allowed_models: input.allowedModels === null ? null : input.allowedModels.join(', '),
        },
      },
    });
  });
  return {
    id,
    name: input.name,
    project_id: input.projectId,
    key_prefix: keyPrefix,
    rate_limit_rpm: input.rateLimitRpm,
    expires_at: isoTimeOrNull(input.expiresAt),
    credit_limit_cents: input.creditLimitMicro,
    allowed_models: input.allowedModels,
    environment: input.environment,
    enforcement_status: { expires_at: 'enforced', credit_limit_cents: 'enforced', allowed_models: 'enforced' },
    api_key: secret,
  };
}

export interface KeyLimitsInput {
  orgId: string;
  actorId: string;
  keyId: string;
  rateLimitRpm: number;
  /** Plain PKR; null or 0 mean unlimited. */
  creditLimitPkr: number | null;
  /** Epoch seconds; null or 0 mean never. */
  expiresAtSeconds: number | null;
  rateLimitCeiling: number;
  sourceIp: string;
  now: number;
}

/**
 * PATCH /keys/{id}: replaces rate limit, credit limit and expiry. The write lock is held
 * from the first read, so concurrent edits of the organisation's keys are serialised and
 * the budget check never races.
 */
export function updateKeyLimits(control: ControlRecords, input: KeyLimitsInput): Promise<UpdatedKey> {
  return replaceKeyLimits(control, {
    ...input,
    creditLimitMicro: input.creditLimitPkr ? pkrToMicro(input.creditLimitPkr) : null,
    expiresAt: input.expiresAtSeconds ? input.expiresAtSeconds * 1000 : null,
  });
}

export interface KeyLimitsReplacement {
  orgId: string;
  actorId: string;
  keyId: string;
  rateLimitRpm: number;
  /** Micro-PKR; null is unlimited. */
  creditLimitMicro: number | null;
  /** Epoch ms; null is never. */
  expiresAt: number | null;
  rateLimitCeiling: number;
  sourceIp: string;
  now: number;
}

/** PATCH's checks and write in limits already converted: the one code every change of a key's limits goes through. */
export function replaceKeyLimits(control: ControlRecords, input: KeyLimitsReplacement): Promise<UpdatedKey> {
  const { creditLimitMicro, expiresAt } = input;
  return control.write(async (tx) => {
    const key = await tx.keys.get(input.orgId, input.keyId);
    if (!key) throw notFound('key not found', { field: 'key_id' });
    checkRateLimit(input.rateLimitRpm, input.rateLimitCeiling);
    if (expiresAt !== null && expiresAt <= input.now) {
      throw badRequest('expires_at must be in the future', { field: 'expires_at' });
    }
    if (creditLimitMicro !== null) await checkCreditLimit(tx, key, creditLimitMicro);
    await tx.keys.setLimits(key.id, { rateLimitRpm: input.rateLimitRpm, expiresAt, creditLimitMicro });
    await tx.activity.record({
      orgId: input.orgId,
      actorId: input.actorId,
      action: 'api_key.updated',
      target: key.key_prefix,
      sourceIp: input.sourceIp,
      at: input.now,
      change: {
        before: limitFields({
          rateLimitRpm: key.rate_limit_rpm,
          creditLimitMicro: key.credit_limit_micro,
          expiresAt: key.expires_at,
        }),
        after: limitFields({ rateLimitRpm: input.rateLimitRpm, creditLimitMicro, expiresAt }),
      },
    });
    return {
      id: key.id,
      key_prefix: key.key_prefix,
      rate_limit_rpm: input.rateLimitRpm,
      expires_at: isoTimeOrNull(expiresAt),
      credit_limit_cents: creditLimitMicro,
    };
  });
}

/**
 * A key's limits as its activity events record them, in the API's own field names and units
 * (micro-PKR, ISO time; null is unlimited or never). Named fields only: never the secret.
 */
export function limitFields(limits: {
  rateLimitRpm: number;
  creditLimitMicro: number | null;
  expiresAt: number | null;
}): ChangeFields {
  return {
    rate_limit_rpm: limits.rateLimitRpm,
    credit_limit_cents: limits.creditLimitMicro,
    expires_at: isoTimeOrNull(limits.expiresAt),
  };
}

export function checkRateLimit(rateLimitRpm: number, ceiling: number): void {
  if (rateLimitRpm > ceiling) {
    throw badRequest(`rate limit ${rateLimitRpm} rpm is above the platform ceiling of ${ceiling} rpm`, {
      field: 'rate_limit_rpm',
    });
  }
}

/** Every refusal here concerns the PATCH body's `credit_limit_pkr`, including the organisation's headroom. */
const CREDIT_FIELD = { field: 'credit_limit_pkr' };

async function checkCreditLimit(control: ControlRecords, key: KeyRow, limitMicro: number): Promise<void> {
  if (limitMicro === 0) throw badRequest('credit limit must be at least 0.000001 PKR', CREDIT_FIELD);
  if (limitMicro < key.spent_micro) {
    throw badRequest(
      `credit limit ${formatPkr(limitMicro)} PKR is below this key's spend so far of ${formatPkr(key.spent_micro)} PKR`,
      CREDIT_FIELD,
    );
  }
  await checkBudget(control, key.org_id, key.id, limitMicro);
}

/**
 * Invariant (b): `limitMicro` for one key (`keyId`, or a key not yet issued when null) plus
 * the limits of the organisation's other active keys stays within its budget. `hint` is
 * added to the refusal: what the caller can do about it where it is not PATCH.
 */
export async function checkBudget(
  control: ControlRecords,
  orgId: string,
  keyId: string | null,
  limitMicro: number,
  hint = '',
): Promise<void> {
  // No key has the empty id: every active key counts as "other".
  const total = limitMicro + (await control.keys.otherLimitsMicro(orgId, keyId ?? ''));
  const budget = await control.organizations.budgetMicro(orgId);
  if (total > budget) {
    throw badRequest(
      `credit limits would total ${formatPkr(total)} PKR, above the organisation budget of ${formatPkr(budget)} PKR${hint}`,
      CREDIT_FIELD,
    );
  }
}

export function revokeKey(
  control: ControlRecords,
  input: { orgId: string; actorId: string; keyId: string; sourceIp: string; now: number },
): Promise<void> {
  return control.write(async (tx) => {
    const key = await tx.keys.get(input.orgId, input.keyId);
    if (!key || !(await tx.keys.revoke(input.orgId, key.id, input.now))) {
      throw notFound('key not found', { field: 'key_id' });
    }
    await tx.activity.record({
      orgId: input.orgId,
      actorId: input.actorId,
      action: 'api_key.revoked',
      target: key.key_prefix,
      sourceIp: input.sourceIp,
      at: input.now,
    });
  });
}
