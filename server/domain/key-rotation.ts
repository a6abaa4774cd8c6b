import { ApiError, badRequest, notFound } from '../http-errors.js';
import type { RotatedKey } from '../schemas/keys.js';
import type { ControlRecords } from '../stores/control/store.js';
import { checkBudget, checkRateLimit, issueKey } from './keys.js';
import { formatPkr } from './money.js';

export interface RotateKeyInput {
  orgId: string;
  actorId: string;
  keyId: string;
  rateLimitCeiling: number;
  sourceIp: string;
  now: number;
}

/**
 * Issues a replacement for a key: same name, project, environment, model scope, rate limit
 * and expiry, with a new secret. A credit limit is a lifetime cap on what a key may spend,
 * and the replacement starts with nothing spent, so it carries over what the old key has
 * left (its limit less its spend): rotating changes the secret, never the allowance. The
 * old key stays active until the admin revokes it (callers need time to move), so while
 * both exist both limits count against the budget, and the replacement is refused when they
 * would not fit. All checks and the write are one transaction; the replacement's creation
 * is recorded as `api_key.created`, and
 * the rotation as `api_key.rotated` on the old key.
 */
export function rotateKey(control: ControlRecords, keyHashSecret: Buffer, input: RotateKeyInput): Promise<RotatedKey> {
  return control.write(async (tx) => {
    const old = await tx.keys.get(input.orgId, input.keyId);
    if (!old) throw notFound('key not found', { field: 'key_id' });
    if (old.expires_at !== null && old.expires_at <= input.now) {
      throw badRequest(
        `this key expired on ${new Date(old.expires_at).toISOString()}, so a replacement would expire at once: ` +
          'set a later expiry on it first (Edit), or create a new key',
        { field: 'expires_at' },
      );
    }
    checkRateLimit(old.rate_limit_rpm, input.rateLimitCeiling);
    let creditLimitMicro: number | null = null;
    if (old.credit_limit_micro !== null) {
      creditLimitMicro = old.credit_limit_micro - old.spent_micro;
      if (creditLimitMicro <= 0) {
        throw badRequest(
          `this key has spent ${formatPkr(old.spent_micro)} PKR of its ${formatPkr(old.credit_limit_micro)} PKR ` +
            'credit limit, so a replacement would have nothing left to spend: raise its credit limit first (Edit), ' +
            'then rotate',
          { field: 'credit_limit_pkr' },
        );
      }
      await checkBudget(
        tx,
        input.orgId,
        null,
        creditLimitMicro,
        ' while the old key is still active: deposit more credit or lower another key’s credit limit, then rotate again',
      );
    }
    // Nested in this transaction (a savepoint): the project and the model scope are checked
    // again there, so a project removed or a model retired since refuses the rotation.
    const created = await withHint(() =>
      issueKey(tx, keyHashSecret, {
        orgId: input.orgId,
        actorId: input.actorId,
        projectId: old.project_id,
        name: old.name,
        environment: old.environment,
        expiresAt: old.expires_at,
        creditLimitMicro,
        allowedModels: old.allowed_models === null ? null : (JSON.parse(old.allowed_models) as string[]),
        rateLimitRpm: old.rate_limit_rpm,
        sourceIp: input.sourceIp,
        now: input.now,
      }),
    );
    // The rotation itself, on the old key: which key replaces it and the credit carried over.
    await tx.activity.record({
      orgId: input.orgId,
      actorId: input.actorId,
      action: 'api_key.rotated',
      target: old.key_prefix,
      sourceIp: input.sourceIp,
      at: input.now,
      change: {
        before: { key_prefix: old.key_prefix, credit_limit_cents: old.credit_limit_micro },
        after: { key_prefix: created.key_prefix, credit_limit_cents: creditLimitMicro },
      },
    });
    return { ...created, replaces: { id: old.id, key_prefix: old.key_prefix } };
  });
}

/** The model scope cannot be edited: when a model of it was retired, the way on is a new key. */
async function withHint<T>(issue: () => Promise<T>): Promise<T> {
  try {
    return await issue();
  } catch (error) {
    if (error instanceof ApiError && error.field === 'allowed_models') {
      throw badRequest(
        `${error.message}: a replacement keeps the old key’s model scope, so create a new key with the models ` +
          'still offered instead',
        { field: 'allowed_models' },
      );
    }
    throw error;
  }
}
