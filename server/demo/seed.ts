import type { PgRequestLog } from '../stores/telemetry/postgres/request-log.js';
import type { ServerSecrets } from '../app.js';
import type { ServerConfig } from '../config.js';
import { issueKey, revokeKey } from '../domain/keys.js';
import { createAccount } from '../domain/sign-up.js';
import { storeProviderKey } from '../domain/vault.js';
import { recordRequestsFrom, type ImportProgress } from '../ingest/record-requests.js';
import { fineCellsSince } from '../stores/telemetry/rollup-grains.js';
import { hashPassword } from '../security/passwords.js';
import { OPERATOR_SOURCE } from '../stores/control/activity.js';
import type { ControlRecords, ControlStore } from '../stores/control/store.js';
import { creditLimitsMicro, depositsMicro } from './budget.js';
import {
  DEMO_ACCOUNTS,
  DEMO_KEYS,
  DEMO_ORGANIZATION,
  DEMO_PROJECTS,
  DEMO_VAULT,
  SHIPPED_HASH_COST,
  type DemoKeySpec,
} from './organisation.js';
import { DAY_MS, HOUR_MS, trafficWindows } from './rhythm.js';
import { trafficSource, type TrafficKey, type TrafficPlan } from './traffic.js';

export { DEMO_ACCOUNTS, DEMO_ORGANIZATION } from './organisation.js';

export interface DemoOptions {
  /** Days of traffic up to now; 30 by default. */
  days?: number;
  /** Request-log rows in all; 50,000 by default, which seeds in a few seconds. */
  rows?: number;
  /** The traffic's seed: the same seed and the same `now` give the same rows. */
  seed?: number;
  /**
   * Draw the traffic as of this instant (ms since the epoch) and move it to end now: the same
   * seed then gives the same rows, relative to now, on any day and at any hour (the tests' demo).
   */
  asOf?: number;
}

export const DEMO_DEFAULTS = { days: 30, rows: 50_000, seed: 1 } as const;

export interface DemoSeeded {
  accounts: typeof DEMO_ACCOUNTS;
  organizationId: string;
  projects: number;
  keys: number;
  rows: number;
}

type DemoConfig = Pick<ServerConfig, 'passwordCost' | 'now' | 'telemetryDbPath'> & {
  /** The request log on PostgreSQL, when it is there rather than in `telemetryDbPath`. */
  requestLog?: PgRequestLog;
};

/** The demo organisation set up, its history still to write (`seedDemoHistory`). */
export interface DemoOrganisation {
  plan: TrafficPlan;
  orgId: string;
  adminId: string;
  keys: Organisation['keys'];
  projects: number;
}

/**
 * Seeds the demo organisation once: owner, admin and member accounts, projects, keys
 * across environments, vault entries, deposits and weeks of request-log rows whose
 * cost is settled into each key's spend. Returns null, touching nothing, when the
 * organisation already exists.
 */
export async function seedDemo(
  control: ControlStore,
  secrets: ServerSecrets,
  config: DemoConfig,
  options: DemoOptions = {},
  progress?: ImportProgress,
): Promise<DemoSeeded | null> {
  const organisation = await seedDemoOrganisation(control, secrets, config, options);
  if (!organisation) return null;
  const rows = await seedDemoHistory(control, config, organisation, { progress });
  return demoSeeded(organisation, rows);
}

function demoSeeded(organisation: DemoOrganisation, rows: number): DemoSeeded {
  return {
    accounts: DEMO_ACCOUNTS,
    organizationId: organisation.orgId,
    projects: organisation.projects,
    keys: organisation.keys.length,
    rows,
  };
}

/**
 * The demo organisation without its history: accounts, projects, keys, vault entries and
 * deposits, in one transaction. Null, touching nothing, when it exists already.
 */
export async function seedDemoOrganisation(
  control: ControlStore,
  secrets: ServerSecrets,
  config: DemoConfig,
  options: DemoOptions = {},
): Promise<DemoOrganisation | null> {
  const days = positive('days', options.days ?? DEMO_DEFAULTS.days);
  const rows = positive('rows', options.rows ?? DEMO_DEFAULTS.rows);
  const seed = options.seed ?? DEMO_DEFAULTS.seed;
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff)
    throw new Error('seed must be a 32-bit unsigned integer');
  if (await control.organizations.findByName(DEMO_ORGANIZATION)) return null;

  // The shipped hashes at the production cost; another cost (the tests' lower one) hashes anew,
  // one at a time: each scrypt run at a high cost holds 128 MiB.
  const hashes: string[] = [];
  for (const account of DEMO_ACCOUNTS) {
    hashes.push(
      config.passwordCost === SHIPPED_HASH_COST
        ? account.shippedHash
        : await hashPassword(account.password, config.passwordCost),
    );
  }

  const now = config.now();
  const shift = options.asOf === undefined ? 0 : now - options.asOf;
  const trafficStart = Math.min(...trafficWindows(now - shift, days, rows).map((w) => w.start)) + shift;
  // Everything the traffic needs exists a week before its first request.
  const base = Math.min(trafficStart, now - 30 * DAY_MS) - 7 * DAY_MS;
  const limits = creditLimitsMicro(DEMO_KEYS, rows);
  const deposits = depositsMicro([...limits.values()]);

  const org = await control.write((tx) => setUpOrganisation(tx, secrets, { now, base, hashes, limits, deposits }));
  const plan: TrafficPlan = {
    seed,
    orgId: org.id,
    now,
    shift,
    days,
    rows,
    keys: org.keys.map(({ traffic }) => traffic),
    byokProviders: DEMO_VAULT.map((v) => v.provider),
  };
  return { plan, orgId: org.id, adminId: org.actors.admin, keys: org.keys, projects: DEMO_PROJECTS.length + 1 };
}

/**
 * The demo organisation's history: its request-log rows, their spend settled into the keys,
 * then the revocations they preceded. With `newestFirst`, the newest that many rows are imported
 * and committed first, then the rest, so that a console signed in meanwhile sees the recent days
 * within seconds; otherwise one import. Returns the rows written.
 */
export async function seedDemoHistory(
  control: ControlStore,
  config: DemoConfig,
  organisation: DemoOrganisation,
  options: {
    newestFirst?: number;
    progress?: ImportProgress;
    signal?: AbortSignal;
    /** After each part's commit, with the rows committed so far. */
    landed?: (rows: number) => void;
  } = {},
): Promise<number> {
  const { plan } = organisation;
  const split = Math.max(0, plan.rows - Math.min(options.newestFirst ?? plan.rows, plan.rows));
  // Each part is an import of its own (a worker, a transaction), and draws every row before it
  // again (a row's draw depends on all the earlier ones): two parts at most.
  const parts =
    split === 0
      ? [{ from: 0, to: plan.rows }]
      : [
          { from: split, to: plan.rows },
          { from: 0, to: split },
        ];
  const telemetry = config.requestLog ?? config.telemetryDbPath;
  let written = 0;
  for (const part of parts) {
    // Stopped between parts: what is committed stays, whole parts only.
    options.signal?.throwIfAborted();
    // As a server's sweep would leave them: no minute or five-minute cells of the older days.
    const progress = { report: () => undefined, ...options.progress, fineCellsSince: fineCellsSince(plan.now) };
    written += await recordRequestsFrom(control, telemetry, trafficSource({ ...plan, part }), progress);
    options.landed?.(written);
  }
  // Revoked once its requests are in, as it would have been in real life.
  for (const { spec, traffic } of organisation.keys) {
    if (spec.lifecycle.kind !== 'revoked') continue;
    await revokeKey(control, {
      orgId: organisation.orgId,
      actorId: organisation.adminId,
      keyId: traffic.id,
      sourceIp: OPERATOR_SOURCE,
      now: plan.now - spec.lifecycle.daysAgo * DAY_MS,
    });
  }
  return written;
}

interface SetUp {
  now: number;
  base: number;
  hashes: string[];
  limits: Map<string, number>;
  deposits: number[];
}

interface Organisation {
  id: string;
  actors: Record<'owner' | 'admin', string>;
  keys: { spec: DemoKeySpec; traffic: TrafficKey }[];
}

/** Everything but the traffic, in time order so that the activity log reads naturally. */
async function setUpOrganisation(tx: ControlRecords, secrets: ServerSecrets, setUp: SetUp): Promise<Organisation> {
  const { now, base } = setUp;
  const actor = { sourceIp: OPERATOR_SOURCE };
  const members: { accountId: string; orgId: string }[] = [];
  for (const [i, demo] of DEMO_ACCOUNTS.entries()) {
    const { account, organization } = await createAccount(tx, {
      email: demo.email,
      passwordHash: setUp.hashes[i] ?? null,
      organizationName: DEMO_ORGANIZATION,
      now: base + i * HOUR_MS,
      ...actor,
    });
    // Sign-up only makes owners and members; an admin is promoted by the operator.
    if (demo.role === 'admin') await tx.accounts.setRole(account.id, 'admin');
    members.push({ accountId: account.id, orgId: organization.id });
  }
  const [owner, admin] = members;
  if (!owner || !admin) throw new Error('demo accounts missing');
  const orgId = owner.orgId;
  const deposit = async (amountMicro: number, at: number) => {
    await tx.organizations.deposit(orgId, amountMicro, at);
    await tx.activity.record({ orgId, actorId: null, action: 'budget.deposited', target: '', at, ...actor });
  };
  const [firstDeposit = 0, ...topUps] = setUp.deposits;
  await deposit(firstDeposit, base + 3 * HOUR_MS);

  const projectIds = new Map<string, string>();
  for (const project of await tx.organizations.projects(orgId)) projectIds.set(project.name, project.id);
  for (const [i, name] of DEMO_PROJECTS.entries()) {
    projectIds.set(name, (await tx.organizations.addProject(orgId, name, base + (4 + i) * HOUR_MS)).id);
  }
  for (const [i, { provider, apiKey }] of DEMO_VAULT.entries()) {
    await storeProviderKey(tx, secrets.vaultMasterKey, {
      orgId,
      actorId: owner.accountId,
      provider,
      apiKey,
      now: base + (8 + i) * HOUR_MS,
      ...actor,
    });
  }

  const createdAt = (spec: DemoKeySpec, i: number) =>
    spec.createdDaysAgo === null ? base + DAY_MS + i * HOUR_MS : now - spec.createdDaysAgo * DAY_MS;
  const planned = DEMO_KEYS.map((spec, i) => ({ spec, at: createdAt(spec, i) })).sort((a, b) => a.at - b.at);
  const keys: Organisation['keys'] = [];
  const topUpAt = now - 10 * DAY_MS;
  for (const { spec, at } of planned) {
    if (at > topUpAt && topUps.length > 0) await deposit(topUps.shift() ?? 0, topUpAt);
    const projectId = projectIds.get(spec.project);
    if (!projectId) throw new Error(`no demo project ${spec.project}`);
    const creditLimitMicro = setUp.limits.get(spec.name) ?? null;
    const lifecycle = spec.lifecycle;
    const expiresAt =
      lifecycle.kind === 'expires'
        ? now + lifecycle.daysFromNow * DAY_MS
        : lifecycle.kind === 'expired'
          ? now - lifecycle.daysAgo * DAY_MS
          : null;
    const created = await issueKey(tx, secrets.keyHashSecret, {
      orgId,
      actorId: spec.issuedBy === 'owner' ? owner.accountId : admin.accountId,
      projectId,
      name: spec.name,
      environment: spec.environment,
      expiresAt,
      creditLimitMicro,
      allowedModels: spec.allowedModels,
      rateLimitRpm: spec.rateLimitRpm,
      now: at,
      ...actor,
    });
    keys.push({
      spec,
      traffic: {
        id: created.id,
        projectId,
        weight: spec.weight,
        routes: spec.allowedModels,
        activeFrom: at,
        activeUntil: lifecycle.kind === 'revoked' ? now - lifecycle.daysAgo * DAY_MS : expiresAt,
        creditLimitMicro,
        byokShare: spec.byokShare,
        callers: spec.callers,
        features: spec.features,
        tagged: spec.tagged,
      },
    });
  }
  for (const amount of topUps) await deposit(amount, topUpAt);
  return { id: orgId, actors: { owner: owner.accountId, admin: admin.accountId }, keys };
}

function positive(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer`);
  return value;
}
