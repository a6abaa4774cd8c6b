import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import type { TSchema } from '@sinclair/typebox';
import type { FastifyBaseLogger } from 'fastify';
import { randomUUID } from 'node:crypto';
import { Pool } from 'undici';
import { badRequest, controlPlaneUnreachable, modelNotFound } from '../admission/refusals.js';
import { storedAttempts } from '../domain/attempts.js';
import {
  DecisionBatch,
  GatewayStatus,
  KeyModels,
  MAX_BREAKERS,
  RowsWritten,
  type AdmissionRequest,
  type Decision,
  type GatewayRow,
} from '../schemas/gateway-internal.js';
import { whyAdmissionRefused } from '../schemas/gateway-internal-checks.js';
import type { RequestRecord } from '../stores/telemetry/request-record.js';
import { fitAdmission } from './admission-request.js';
import type { Authority } from './authority.js';
import type { LocalBreakers } from './gateway-health.js';
import { ROW_TEXT_LIMITS, fitRow } from './request-facts.js';

export interface RemoteOptions {
  /** The control plane's origin, e.g. `https://control.internal:8787`. */
  controlPlane: URL;
  /** One of the control plane's `SVC_GATEWAY_TOKENS`. */
  token: string;
  logger: FastifyBaseLogger;
  /** How often rows are sent (200 ms). */
  flushMs?: number;
  /** An internal call not answered by then has failed (5 s). */
  callTimeoutMs?: number;
  /** The gateway's breakers, reported with each batch of rows (the console's Routes screen). */
  breakers?: LocalBreakers;
}

/** Admission calls at once; requests arriving meanwhile wait and go together in the next. */
const MAX_IN_FLIGHT = 4;
const MAX_ADMISSIONS = 1000;
const MAX_ROWS = 5000;
/** Rows kept while the control plane cannot be reached; past this the oldest are dropped (and said so). */
const MAX_WAITING = 200_000;

/** The control plane answered, but not with what was asked (a status of its own, or a shape it should not have). */
export class ControlPlaneAnswer extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** For a 422 on rows: the indexes of the rows it names (`loc: ['body', 'rows', i, …]`). */
    readonly rows: readonly number[] = [],
  ) {
    super(message);
  }
}

/** The row indexes a 422's `detail` names. */
function rowsNamed(body: unknown): number[] {
  const detail = (body as { detail?: unknown } | null)?.detail;
  if (!Array.isArray(detail)) return [];
  return detail.flatMap((issue) => {
    const loc = (issue as { loc?: unknown } | null)?.loc;
    return Array.isArray(loc) && loc[0] === 'body' && loc[1] === 'rows' && typeof loc[2] === 'number' ? [loc[2]] : [];
  });
}

const checks = {
  decisions: TypeCompiler.Compile(DecisionBatch),
  keyModels: TypeCompiler.Compile(KeyModels),
  written: TypeCompiler.Compile(RowsWritten),
  status: TypeCompiler.Compile(GatewayStatus),
};

/**
 * The control plane in another process, over its internal API: every request is decided there
 * (so a key revoked, expired or changed is refused from its next request on every gateway, and
 * one count of each key's rate and credit holds covers them all), and rows go there in batches.
 * A control plane that cannot be reached refuses requests (503): a gateway never serves a key
 * it cannot check.
 */
export class RemoteAuthority implements Authority {
  private readonly pool: Pool;
  private readonly callTimeoutMs: number;
  private waitingAdmissions: { request: AdmissionRequest; resolve: (decision: Decision) => void }[] = [];
  private admitting = 0;
  private unreachable = false;
  private rows: RequestRecord[] = [];
  private sending: Promise<void> | null = null;
  private readonly timer: NodeJS.Timeout;
  /** This gateway process, as the control plane tells its breakers' reports apart. */
  private readonly instance = `gw-${randomUUID()}`;

  constructor(private readonly options: RemoteOptions) {
    this.pool = new Pool(options.controlPlane.origin, {
      connections: MAX_IN_FLIGHT + 1,
      keepAliveTimeout: 30_000,
    });
    this.callTimeoutMs = options.callTimeoutMs ?? 5000;
    this.timer = setInterval(() => void this.send(), options.flushMs ?? 200).unref();
  }

  /** Whether the token opens the control plane's internal API; throws with the reason when not. */
  async check(): Promise<void> {
    await this.call('GET', '/status', undefined, checks.status);
  }

  admit(asked: AdmissionRequest): Promise<Decision> {
    const request = fitAdmission(asked);
    // Checked before it joins a batch: the control plane refusing one request must not fail the others.
    const problem = whyAdmissionRefused(request);
    if (problem !== null) return this.refuseAlone(request, problem);
    return new Promise((resolve) => {
      this.waitingAdmissions.push({ request, resolve });
      this.pump();
    });
  }

  /**
   * A request the internal API cannot take (a model name longer than any route's): its key is
   * checked all the same, so that an unknown key is told only that, and a known key's refusal is
   * its row.
   */
  private async refuseAlone(request: AdmissionRequest, problem: string): Promise<Decision> {
    const known = await this.keyModels(request.secret);
    if (known.kind === 'refused') return known;
    const refusal =
      request.model.length > ROW_TEXT_LIMITS.model
        ? modelNotFound(request.model)
        : badRequest(`Invalid request: ${problem}`);
    return { kind: 'refused', key: known.key, refusal: refusal.toWire() };
  }

  async keyModels(secret: string) {
    try {
      return await this.call('POST', '/key-models', { secret }, checks.keyModels);
    } catch (error) {
      this.failed(error);
      return { kind: 'refused' as const, key: null, refusal: controlPlaneUnreachable().toWire() };
    }
  }

  report(row: RequestRecord): void {
    this.rows.push(fitRow(row));
    if (this.rows.length > MAX_WAITING) {
      const dropped = this.rows.splice(0, this.rows.length - MAX_WAITING);
      this.options.logger.error(
        { dropped: dropped.length },
        'gateway telemetry: rows dropped, the control plane has not taken them',
      );
    }
  }

  /** Sends the rows left, for up to `graceMs`, then lets go of the control plane. */
  async close(graceMs = 5000): Promise<void> {
    clearInterval(this.timer);
    const deadline = Date.now() + graceMs;
    while (this.rows.length > 0 && Date.now() < deadline) {
      const before = this.rows.length;
      await this.send();
      if (this.rows.length >= before) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (this.rows.length > 0) {
      this.options.logger.error({ rows: this.rows.length }, 'gateway telemetry: rows not sent before stopping');
    }
    await this.pool.close();
  }

  private pump(): void {
    while (this.admitting < MAX_IN_FLIGHT && this.waitingAdmissions.length > 0) {
      const batch = this.waitingAdmissions.splice(0, MAX_ADMISSIONS);
      this.admitting++;
      this.call('POST', '/admissions', { requests: batch.map((one) => one.request) }, checks.decisions)
        .then((answer) => {
          if (answer.decisions.length !== batch.length) {
            throw new ControlPlaneAnswer(200, 'the control plane answered a different number of decisions');
          }
          this.reachable();
          batch.forEach((one, index) => one.resolve(answer.decisions[index]!));
        })
        .catch((error: unknown) => {
          this.failed(error);
          const refusal = controlPlaneUnreachable().toWire();
          for (const one of batch) one.resolve({ kind: 'refused', key: null, refusal });
        })
        .finally(() => {
          this.admitting--;
          this.pump();
        });
    }
  }

  /** One batch of rows at a time; kept for the next tick when the control plane does not take them. */
  private send(): Promise<void> {
    if (this.sending || this.rows.length === 0) return this.sending ?? Promise.resolve();
    const batch = this.rows.slice(0, MAX_ROWS);
    // Every row a gateway makes has its key; one without would have nothing to be filed under.
    const sent = batch.filter((row): row is RequestRecord & { key_id: string } => row.key_id !== null);
    const rows = sent.map(wireRow);
    const forget = (done: readonly RequestRecord[]) => {
      const gone = new Set(done);
      this.rows = this.rows.filter((row) => !gone.has(row));
    };
    const breakers = this.options.breakers?.view().slice(0, MAX_BREAKERS);
    const body = breakers ? { rows, gateway: this.instance, breakers } : { rows };
    this.sending = this.call('POST', '/requests', body, checks.written)
      .then(
        (answer) => {
          this.reachable();
          forget(batch);
          // Stored apart from these, which would be refused again: said, not sent again.
          const refused = answer.refused ?? [];
          if (refused.length > 0) {
            this.options.logger.error(
              { rows: refused.length, reason: refused[0]!.reason },
              'gateway telemetry: rows refused by the control plane, dropped',
            );
          }
        },
        (error: unknown) => {
          if (!(error instanceof ControlPlaneAnswer) || (error.status !== 400 && error.status !== 422)) {
            this.failed(error);
            return;
          }
          // Rows the control plane refuses as such would block all that follow: those it names are
          // dropped and the rest sent again; a refusal that names none drops the batch.
          const named = error.rows.filter((index) => index < sent.length).map((index) => sent[index]!);
          const dropped = named.length > 0 ? named : batch;
          this.options.logger.error(
            { reason: error.message, rows: dropped.length },
            'gateway telemetry: rows refused by the control plane, dropped',
          );
          forget(dropped);
        },
      )
      .finally(() => {
        this.sending = null;
      });
    return this.sending;
  }

  private async call<T extends TSchema>(
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    check: TypeCheck<T>,
  ): Promise<T['static']> {
    const answer = await this.pool.request({
      path: `/internal/gateway${path}`,
      method,
      headers: {
        authorization: `Bearer ${this.options.token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      headersTimeout: this.callTimeoutMs,
      bodyTimeout: this.callTimeoutMs,
    });
    const text = await answer.body.text();
    if (answer.statusCode !== 200) {
      let reason = `status ${answer.statusCode}`;
      let parsed: unknown = null;
      try {
        parsed = JSON.parse(text);
        const error = (parsed as { error?: unknown }).error;
        if (typeof error === 'string') reason += `: ${error.slice(0, 200)}`;
      } catch {
        // Not JSON: the status says enough.
      }
      throw new ControlPlaneAnswer(answer.statusCode, `the control plane answered ${reason}`, rowsNamed(parsed));
    }
    const value: unknown = JSON.parse(text);
    if (!check.Check(value)) throw new ControlPlaneAnswer(200, 'the control plane answered in an unexpected shape');
    return value;
  }

  private failed(error: unknown): void {
    if (this.unreachable) return;
    this.unreachable = true;
    // The error's code and message only: the call's body holds a caller's secret.
    const { code, message } = error as { code?: string; message?: string };
    this.options.logger.warn(
      { code, reason: message },
      'gateway: the control plane cannot be reached; refusing requests',
    );
  }

  private reachable(): void {
    if (!this.unreachable) return;
    this.unreachable = false;
    this.options.logger.info('gateway: the control plane answers again');
  }
}

/**
 * A row as the internal API takes it: the key says whose it is, so no organisation or project.
 * Written out field by field: `{ ...rest, termination_reason }` costs V8 a new hidden class per
 * row, tens of microseconds each, up to 5000 rows a batch on the gateway's event loop.
 */
function wireRow(row: RequestRecord & { key_id: string }): GatewayRow {
  return {
    req_id: row.req_id,
    ts: row.ts,
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
    // The gateway measures only the contract's four reasons; the control plane checks them again.
    termination_reason: row.termination_reason as GatewayRow['termination_reason'],
    upstream_error: row.upstream_error,
    upstream_model: row.upstream_model,
    served_by: row.served_by,
    // The row keeps them as text; the wire as items, each checked by the control plane. A row
    // has one or a few: a parse of a hundred bytes or so, against the whole row's stringify.
    attempts: storedAttempts(row.attempts),
    api: row.api,
    user_agent: row.user_agent,
    metadata: row.metadata,
  };
}
