import { ApiError } from '../http-errors.js';
import { parseId } from '../ids.js';
import { isoTimeOrNull } from '../schemas/common.js';
import type { BulkKeyLimits, BulkKeyOutcome, BulkKeysResult } from '../schemas/keys.js';
import type { KeyRow } from '../stores/control/keys.js';
import type { ControlRecords } from '../stores/control/store.js';
import { pkrToMicro } from './money.js';
import { replaceKeyLimits, revokeKey } from './keys.js';

export type BulkAction = { kind: 'revoke' } | { kind: 'update_limits'; limits: BulkKeyLimits };

export interface BulkKeysInput {
  orgId: string;
  actorId: string;
  keyIds: readonly string[];
  action: BulkAction;
  dryRun: boolean;
  rateLimitCeiling: number;
  sourceIp: string;
  now: number;
}

/** Thrown to undo a dry run's writes: nothing else may throw it. */
const DRY_RUN = Symbol('dry run');

/**
 * Revokes keys or changes their limits, key by key in the order given, through the same code
 * as DELETE and PATCH /keys/{id} (so the same refusals, in the same words). Each key is
 * decided on its own, in a savepoint: a refused key leaves the others be, and a key later in
 * the list sees the budget as the earlier ones left it. All of it is one transaction: the
 * changes commit together, and a dry run runs the very same work and rolls it back, so its
 * report is what applying would do (unless something else changes in between).
 */
export async function bulkKeys(control: ControlRecords, input: BulkKeysInput): Promise<BulkKeysResult> {
  // The same key written in two cases is one key: decided (and recorded) once.
  const ids = new Map<string, string>();
  for (const given of input.keyIds) {
    const id = parseId(given) ?? given;
    if (!ids.has(id)) ids.set(id, given);
  }
  // One key after another: a key later in the list sees what the earlier ones wrote.
  const work = async (tx: ControlRecords) => {
    const outcomes: BulkKeyOutcome[] = [];
    for (const id of ids.values()) outcomes.push(await oneKey(tx, input, id));
    return outcomes;
  };
  if (!input.dryRun) return { dry_run: false, results: await control.write(work) };
  let results: BulkKeyOutcome[] = [];
  try {
    await control.write(async (tx) => {
      results = await work(tx);
      throw DRY_RUN;
    });
  } catch (error) {
    if (error !== DRY_RUN) throw error;
  }
  return { dry_run: true, results };
}

async function oneKey(tx: ControlRecords, input: BulkKeysInput, id: string): Promise<BulkKeyOutcome> {
  const keyId = parseId(id);
  const key = keyId ? await tx.keys.get(input.orgId, keyId) : undefined;
  if (!key) {
    return {
      id,
      name: null,
      key_prefix: null,
      outcome: 'not_found',
      message: 'key not found',
      before: null,
      after: null,
    };
  }
  const before = limitsOf(key);
  const common = {
    orgId: input.orgId,
    actorId: input.actorId,
    keyId: key.id,
    sourceIp: input.sourceIp,
    now: input.now,
  };
  try {
    const after = await tx.write(async (savepoint) => {
      if (input.action.kind === 'revoke') {
        await revokeKey(savepoint, common);
        return null;
      }
      const next = nextLimits(key, input.action.limits);
      const updated = await replaceKeyLimits(savepoint, {
        ...common,
        ...next,
        rateLimitCeiling: input.rateLimitCeiling,
      });
      return {
        rate_limit_rpm: updated.rate_limit_rpm,
        credit_limit_cents: updated.credit_limit_cents,
        expires_at: updated.expires_at,
      };
    });
    return { id: key.id, name: key.name, key_prefix: key.key_prefix, outcome: 'ok', message: null, before, after };
  } catch (error) {
    // A refusal of this key (PATCH's 400s, a key gone meanwhile) is its outcome; anything else is a fault.
    if (!(error instanceof ApiError) || (error.statusCode !== 400 && error.statusCode !== 404)) throw error;
    return {
      id: key.id,
      name: key.name,
      key_prefix: key.key_prefix,
      outcome: 'refused',
      message: error.message,
      before,
      after: null,
    };
  }
}

function limitsOf(key: KeyRow) {
  return {
    rate_limit_rpm: key.rate_limit_rpm,
    credit_limit_cents: key.credit_limit_micro,
    expires_at: isoTimeOrNull(key.expires_at),
  };
}

/** PATCH replaces all three limits: the ones the bulk change leaves out keep the key's own. */
function nextLimits(key: KeyRow, limits: BulkKeyLimits) {
  const credit = limits.credit_limit_pkr;
  const expires = limits.expires_at;
  return {
    rateLimitRpm: limits.rate_limit_rpm ?? key.rate_limit_rpm,
    // As in PATCH: null or 0 mean unlimited, never.
    creditLimitMicro: credit === undefined ? key.credit_limit_micro : credit ? pkrToMicro(credit) : null,
    expiresAt: expires === undefined ? key.expires_at : expires ? expires * 1000 : null,
  };
}
