import type { FastifyBaseLogger } from 'fastify';
import { settledCostMicro } from '../domain/route-catalogue.js';
import { modelsOf } from '../domain/route-models.js';
import type { AdmissionRequest, Decision, KeyModels, KeyOwnerWire } from '../schemas/gateway-internal.js';
import { hashApiKeySecret } from '../security/tokens.js';
import { openProviderKey } from '../security/vault-cipher.js';
import type { KeyRow } from '../stores/control/keys.js';
import type { ControlLocation, ControlStore } from '../stores/control/store.js';
import type { RequestRecord } from '../stores/telemetry/request-record.js';
import type { AdmissionQuota } from '../stores/control/admission-quota.js';
import type { TelemetryLocation } from '../stores/telemetry/open.js';
import { BoundWatch } from './bound-watch.js';
import { LiveTelemetry, type Expired } from './live-telemetry.js';
import { Memo } from './memo.js';
import { routePlan, vaultProvidersOf } from './route-plan.js';
import { MemoryQuota } from './memory-quota.js';
import { GatewayRefusal, creditSpent, invalidKey, modelNotAllowed, modelNotFound, wrongKind } from './refusals.js';

export interface AdmissionsOptions {
  control: ControlStore;
  /** Where the control store is, for the thread that settles the rows' spend. */
  controlLocation: ControlLocation;
  telemetry: TelemetryLocation;
  /** Told when rows this server's gateways sent are committed (the request log's reads forget theirs). */
  rowsWritten?: () => void;
  keyHashSecret: Buffer;
  vaultMasterKey: Buffer;
  logger: FastifyBaseLogger;
  /** Milliseconds since the epoch, as the control plane's clock. */
  now: () => number;
  /** How often rows are written (group commit). */
  flushMs: number;
}

/** How long a request's hold outlives its gateway's timeout before it lapses (its row is on its way). */
const HOLD_GRACE_MS = 60_000;

/** A refusal that knows whose key it was (null: an unknown key), so that its row is the key's. */
class Refused extends Error {
  constructor(
    readonly refusal: GatewayRefusal,
    readonly key: KeyOwnerWire | null,
  ) {
    super(refusal.message);
  }
}

/** `work`'s answer, or the refusal it threw, as the wire carries it. */
async function answered<T>(work: () => Promise<T>): Promise<T | Extract<Decision, { kind: 'refused' }>> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof Refused)) throw error;
    return { kind: 'refused', key: error.key, refusal: error.refusal.toWire() };
  }
}

const ownerOf = (key: KeyRow): KeyOwnerWire => ({ id: key.id, org_id: key.org_id, project_id: key.project_id });

function rateHeaders(limit: number, remaining: number, resetMs: number): Record<string, string> {
  return {
    'x-ratelimit-limit-requests': String(limit),
    'x-ratelimit-remaining-requests': String(remaining),
    'x-ratelimit-reset-requests': `${Math.max(1, Math.ceil(resetMs / 1000))}s`,
  };
}

/**
 * The control plane's side of the gateway: it decides each request (key, scope, rate, credit)
 * as the control store has it at that moment, so that a revocation or a change of limits
 * applies from the very next request on every gateway, and it writes their rows. Every
 * gateway asks a control plane (the one in the server's process directly, the others through
 * the internal API); a key's rate and what its requests hold of its credit are counted once,
 * in this process on SQLite, in the database for replicas on PostgreSQL (`sharedQuota`).
 */
export class Admissions {
  private readonly quota: AdmissionQuota;
  private readonly telemetry: LiveTelemetry;
  private readonly digests: Memo<Buffer>;
  /** By organisation, provider and sealed bytes (base64), each joined by a newline. */
  private readonly providerKeys: Memo<string>;
  private readonly bounds = new BoundWatch();

  constructor(private readonly options: AdmissionsOptions) {
    this.digests = new Memo((secret) => hashApiKeySecret(secret, options.keyHashSecret));
    this.providerKeys = new Memo((sealedKey) => {
      const [orgId, provider, sealed] = sealedKey.split('\n') as [string, string, string];
      return openProviderKey(options.vaultMasterKey, orgId, provider, Buffer.from(sealed, 'base64'));
    }, 1_000);
    this.quota = options.control.sharedQuota ?? new MemoryQuota();
    this.quota.reportFailures((error) =>
      options.logger.warn({ err: error }, 'gateway: could not write settled holds; trying again'),
    );
    this.telemetry = new LiveTelemetry({
      controlLocation: options.controlLocation,
      telemetry: options.telemetry,
      quota: this.quota,
      settled: () => {
        options.control.committedElsewhere();
        options.rowsWritten?.();
      },
      log: options.logger,
      flushMs: options.flushMs,
    });
  }

  /** Key, model scope, catalogue, rate and credit, in that order; holds the request's largest possible cost. */
  admit(request: AdmissionRequest): Promise<Decision> {
    return answered(() => this.decide(request));
  }

  /** The key's organisation and the active models it may use (`GET /v1/models`, and rows of requests refused as malformed). */
  keyModels(secret: string): Promise<KeyModels> {
    return answered(async () => {
      const key = await this.keyOf(secret, this.options.now());
      const allowed = key.allowed_models === null ? null : new Set(JSON.parse(key.allowed_models) as string[]);
      const { document } = await this.options.control.routes.current();
      const models = modelsOf(document)
        .filter((model) => model.active && (allowed === null || allowed.has(model.id)))
        .map((model) => ({ id: model.id, provider: model.provider }));
      return { kind: 'known' as const, key: ownerOf(key), models };
    });
  }

  /** Queues rows for the next group commit; an answered request's cost stays held until written. */
  record(rows: readonly RequestRecord[]): void {
    const now = this.options.now();
    for (const row of rows) {
      this.bounds.settled(row.req_id, row.cost_micro, now);
      this.telemetry.add(row);
    }
  }

  /** Forgets the rate counts and holds of keys idle for more than a minute; returns how many keys. */
  purge(): Promise<number> {
    return this.quota.purge(this.options.now());
  }

  /** Retention: deletes at most `limit` of the organisation's rows older than `before`, between batches of rows. */
  expire(orgId: string, before: number, limit: number): Promise<Expired> {
    return this.telemetry.expire(orgId, before, limit);
  }

  /** Deletes an hour of the fine rollup cells before `since` (fine-cells.ts), between batches of rows. */
  thin(since: number): Promise<Expired> {
    return this.telemetry.thin(since);
  }

  /** Resolves once every row queued so far is committed. */
  written(): Promise<void> {
    return this.telemetry.written();
  }

  /** Writes the rows still waiting. */
  close(): Promise<void> {
    return this.telemetry.close();
  }

  private async keyOf(secret: string, now: number): Promise<KeyRow> {
    const key = await this.options.control.keys.findBySecretHash(this.digests.get(secret));
    if (!key) throw new Refused(invalidKey(), null);
    if (key.revoked_at !== null || (key.expires_at !== null && key.expires_at <= now)) {
      throw new Refused(invalidKey(), ownerOf(key));
    }
    return key;
  }

  /**
   * Every read is awaited before the quota is asked: from there to its answer nothing else of
   * this request awaits, so the quota sees the key as it is.
   */
  private async decide(request: AdmissionRequest): Promise<Decision> {
    const now = this.options.now();
    let releases = this.quota.releases;
    let key = await this.keyOf(request.secret, now);
    const refuse = (refusal: GatewayRefusal) => new Refused(refusal, ownerOf(key));
    const checkScope = () => {
      const allowed = key.allowed_models === null ? null : (JSON.parse(key.allowed_models) as string[]);
      if (allowed !== null && !allowed.includes(request.model)) throw refuse(modelNotAllowed(request.model));
    };
    checkScope();
    // The newest version of the routes document: the request plans from it once and keeps to it.
    const stored = await this.options.control.routes.current();
    const vaults = vaultProvidersOf(stored, request.model);
    const sealedKeys: [string, Buffer][] = [];
    for (const vault of vaults) {
      const sealed = await this.options.control.vault.sealed(key.org_id, vault);
      if (sealed !== undefined) sealedKeys.push([vault, sealed]);
    }
    // A row written while the reads were awaited (a store over the network) moved its cost from
    // the holds into the key's spend, which the key read before it lacks: read the key again.
    while (this.quota.releasedSince(key.id, releases)) {
      releases = this.quota.releases;
      key = await this.keyOf(request.secret, now);
      checkScope();
    }
    // Opened in memory, never logged; kept opened while the store holds the same sealed bytes.
    const opened = new Map(
      sealedKeys.map(([vault, sealed]) => [
        vault,
        this.providerKeys.get(`${key.org_id}\n${vault}\n${sealed.toString('base64')}`),
      ]),
    );
    const plan = routePlan(stored, request.model, (vault) => opened.get(vault) ?? null);
    if (plan === null) throw refuse(modelNotFound(request.model));
    if (request.kind !== undefined && plan.kind !== request.kind) throw refuse(wrongKind(request.model, plan.kind));
    // Characters bound the prompt's tokens from above, and the dearer of the input prices covers a
    // cache write. Held at the full price unless every target would be served on the customer's key.
    const promptPrice = Math.max(plan.price.input, plan.price.cacheWrite);
    const bound = settledCostMicro(
      { ...plan.price, input: promptPrice },
      { prompt: request.boundCharacters, generated: request.maxGenerated, cacheWrite: 0, cacheRead: 0 },
      plan.targets.every((target) => target.providerKey !== null),
    );
    const limit = key.credit_limit_micro;
    // A request whose cost its body does not bound holds all the key has left: no other request of
    // the key starts while it runs, so the limit is passed by its own cost at most.
    const uncertain = limit !== null && (request.boundUncertain === true || this.bounds.distrusted(request.model, now));
    const held = uncertain ? Math.max(bound, limit - key.spent_micro) : bound;

    const verdict = await this.quota.take({
      keyId: key.id,
      reqId: request.reqId,
      rateLimitRpm: key.rate_limit_rpm,
      creditLimitMicro: key.credit_limit_micro,
      spentMicro: key.spent_micro,
      heldMicro: held,
      now,
      lapsesAt: now + request.timeoutMs + HOLD_GRACE_MS,
    });
    if (verdict.kind === 'rate') {
      const retryAfter = String(Math.max(1, Math.ceil(verdict.resetMs / 1000)));
      throw refuse(
        new GatewayRefusal(
          429,
          `Rate limit reached: ${key.rate_limit_rpm} requests per minute for this key.`,
          'requests',
          'rate_limit_exceeded',
          { ...rateHeaders(key.rate_limit_rpm, 0, verdict.resetMs), 'retry-after': retryAfter },
        ),
      );
    }
    if (verdict.kind === 'credit') throw refuse(creditSpent());
    if (limit !== null) this.bounds.watch(request.reqId, request.model, held);
    return {
      kind: 'admitted',
      key: ownerOf(key),
      plan,
      rateHeaders: rateHeaders(key.rate_limit_rpm, verdict.remaining, verdict.resetMs),
    };
  }
}
