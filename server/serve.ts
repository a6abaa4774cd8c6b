import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { buildApp, type App } from './app.js';
import { resolveConfig, retentionDaysError, type ServerConfigInput } from './config.js';
import { offeredDemoAccount } from './demo/organisation.js';
import { startLiveTraffic, type LiveTraffic } from './demo/live-traffic.js';
import {
  DEMO_ORGANIZATION,
  seedDemo,
  seedDemoHistory,
  seedDemoOrganisation,
  type DemoOrganisation,
} from './demo/seed.js';
import type { ControlRecords } from './stores/control/store.js';
import { clearStaleSocket, isNamedPipe, ownerOnlySocket } from './local-socket.js';
import type { EmbeddedHistory, EmbeddedReady } from './schemas/embedded.js';
import { ANNOUNCE_FLAG, EMBEDDED_ADDRESS } from './schemas/embedded-names.js';
import { DEFAULT_THROTTLE } from './security/sign-in-throttle.js';
import { compileAhead } from './plugins/validation.js';
import { startGateway, type RunningGateway } from './gateway/start.js';
import { upstreamsFromEnv } from './gateway/upstreams.js';

/** Organisations whose first analytics screens the server's threads run once as they start. */
const WARM_ORGANISATIONS = 3;

const FLAGS = {
  host: { type: 'string' },
  port: { type: 'string' },
  socket: { type: 'string' },
  'gateway-port': { type: 'string' },
  'simulated-upstream': { type: 'boolean' },
  'data-dir': { type: 'string' },
  'database-url': { type: 'string' },
  'telemetry-url': { type: 'string' },
  'telemetry-db': { type: 'string' },
  'retention-days': { type: 'string' },
  demo: { type: 'boolean' },
  announce: { type: 'boolean' },
  help: { type: 'boolean' },
} as const;

/** Reads flags, then `SVC_*` environment variables, then defaults. */
export function configFromArgs(args: string[], env: NodeJS.ProcessEnv): ServerConfigInput {
  let values;
  try {
    ({ values } = parseArgs({ args, options: FLAGS, strict: true, allowPositionals: false }));
  } catch (error) {
    // Node's message quotes a stray argument, which may be a database address with its password.
    if ((error as { code?: string }).code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
      throw new Error("unexpected argument: a flag's value goes right after the flag (--database-url postgres://…)");
    }
    throw error;
  }
  const port = values.port ?? env.SVC_PORT;
  if (port !== undefined && !/^\d{1,5}$/.test(port)) throw new Error(`--port must be a port number, not "${port}"`);
  const gatewayPort = values['gateway-port'] ?? (env.SVC_GATEWAY_PORT || undefined);
  if (gatewayPort !== undefined && !/^\d{1,5}$/.test(gatewayPort)) {
    throw new Error(`--gateway-port must be a port number, not "${gatewayPort}"`);
  }
  const socket = values.socket ?? (env.SVC_SOCKET || undefined);
  if (socket === '') throw new Error('--socket needs a path');
  // One door: a --host or --port beside --socket would be ignored, misleading whoever gave it.
  if (socket !== undefined && (values.host !== undefined || values.port !== undefined))
    throw new Error('--socket listens on that socket only: drop --host and --port');
  const number = (name: string) => {
    const raw = env[name];
    if (raw === undefined || raw === '') return undefined;
    const value = Number(raw);
    if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer`);
    return value;
  };
  const oidc =
    env.SVC_OIDC_ISSUER && env.SVC_OIDC_CLIENT_ID && env.SVC_OIDC_JWKS
      ? { issuer: env.SVC_OIDC_ISSUER, clientId: env.SVC_OIDC_CLIENT_ID, jwks: env.SVC_OIDC_JWKS }
      : null;
  const input: ServerConfigInput = {
    dataDir: values['data-dir'] ?? env.SVC_DATA_DIR ?? './data',
    host: values.host ?? env.SVC_HOST ?? '127.0.0.1',
    port: port === undefined ? 8787 : Number(port),
    demo: values.demo ?? env.SVC_DEMO === '1',
    oidc,
    allowedOrigins: (env.SVC_ALLOWED_ORIGINS ?? '').split(',').filter(Boolean),
    upstreams: upstreamsFromEnv(env),
    simulatedUpstream: values['simulated-upstream'] ?? env.SVC_SIMULATED_UPSTREAM === '1',
    demoTraffic: env.SVC_DEMO_TRAFFIC !== '0',
    trustedProxies: (env.SVC_TRUSTED_PROXIES ?? '')
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean),
    throttle: {
      accountFailures: number('SVC_SIGNIN_ACCOUNT_FAILURES') ?? DEFAULT_THROTTLE.accountFailures,
      addressFailures: number('SVC_SIGNIN_ADDRESS_FAILURES') ?? DEFAULT_THROTTLE.addressFailures,
      addressRegistrations: number('SVC_REGISTRATIONS_PER_ADDRESS') ?? DEFAULT_THROTTLE.addressRegistrations,
      windowSeconds: number('SVC_THROTTLE_WINDOW_SECONDS') ?? DEFAULT_THROTTLE.windowSeconds,
      maxDelaySeconds: number('SVC_THROTTLE_MAX_DELAY_SECONDS') ?? DEFAULT_THROTTLE.maxDelaySeconds,
    },
    gatewayTokens: (env.SVC_GATEWAY_TOKENS ?? '')
      .split(',')
      .map((token) => token.trim())
      .filter(Boolean),
    logLevel: env.SVC_LOG_LEVEL ?? 'info',
  };
  if (gatewayPort !== undefined) input.gatewayPort = Number(gatewayPort);
  const asOf = env.SVC_DEMO_AS_OF;
  if (asOf) {
    if (
      !/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/.test(asOf) ||
      !Number.isFinite(Date.parse(asOf))
    )
      throw new Error(`SVC_DEMO_AS_OF must be an RFC 3339 instant (2026-11-18T10:30:00Z), not "${asOf}"`);
    input.demoAsOf = Date.parse(asOf);
  }
  if (socket !== undefined) input.socket = isNamedPipe(socket) ? socket : resolve(socket);
  const databaseUrl = values['database-url'] ?? (env.SVC_DATABASE_URL || undefined);
  if (databaseUrl !== undefined) input.databaseUrl = databaseUrl;
  // Demo data goes into a new data folder's own store only; a shared database is seeded on purpose.
  if (databaseUrl !== undefined && input.demo) {
    throw new Error('--demo seeds a new data folder, not a PostgreSQL database: use npm run admin -- seed-demo');
  }
  const telemetry = values['telemetry-db'] ?? env.SVC_TELEMETRY_DB;
  if (telemetry) input.telemetryDbPath = telemetry;
  const telemetryUrl = values['telemetry-url'] ?? (env.SVC_TELEMETRY_URL || undefined);
  if (telemetryUrl !== undefined) input.telemetryUrl = telemetryUrl;
  if (telemetryUrl !== undefined && input.demo) {
    throw new Error('--demo seeds a new data folder, not a PostgreSQL database: use npm run admin -- seed-demo');
  }
  const retention = values['retention-days'] ?? (env.SVC_RETENTION_DAYS || undefined);
  if (retention !== undefined) {
    // Digits only: Number() would take ' 30', '3e1' or '0x1e' as thirty.
    if (!/^\d{1,9}$/.test(retention)) throw retentionDaysError(retention);
    input.retentionDays = Number(retention);
  }
  const optional = {
    accessTtlSeconds: number('SVC_ACCESS_TTL_SECONDS'),
    refreshTtlSeconds: number('SVC_REFRESH_TTL_SECONDS'),
    rateLimitCeiling: number('SVC_RATE_LIMIT_CEILING'),
    analyticsTimeoutMs: number('SVC_ANALYTICS_TIMEOUT_MS'),
    passwordCost: number('SVC_PASSWORD_COST'),
    passwordMinLength: number('SVC_PASSWORD_MIN_LENGTH'),
    gatewayTimeoutMs: number('SVC_GATEWAY_TIMEOUT_MS'),
    demoRows: number('SVC_DEMO_ROWS'),
    gatewayBodyTimeoutMs: number('SVC_GATEWAY_BODY_TIMEOUT_MS'),
    vaultMasterKey: env.SVC_VAULT_MASTER_KEY,
    keyHashSecret: env.SVC_KEY_HASH_SECRET,
  };
  for (const [name, value] of Object.entries(optional))
    if (value !== undefined) Object.assign(input, { [name]: value });
  return input;
}

/** Where an embedded server's announcements go: its parent process's channel. */
type Announce = (message: EmbeddedReady | EmbeddedHistory) => void;

interface ParentPort {
  postMessage(message: unknown): void;
}

/**
 * The channel to the parent process, for `--announce`: an Electron utility process's
 * `process.parentPort`, else Node's IPC channel (`process.send`), unreferenced so that it
 * never keeps the server alive. Null when the process has neither.
 */
function parentChannel(): Announce | null {
  const port: unknown = Reflect.get(process, 'parentPort');
  if (typeof port === 'object' && port !== null && typeof Reflect.get(port, 'postMessage') === 'function') {
    const parent = port as ParentPort;
    return (message) => parent.postMessage(message);
  }
  const send = process.send?.bind(process);
  if (!send || !process.channel) return null;
  process.channel.unref();
  return (message) => {
    send(message, undefined, undefined, () => {
      // The host went away; it learns nothing more, and the server runs on (or ends with it).
    });
  };
}

/** The demo sign-in account, while the folder holds it in the demo organisation. */
async function demoAccountIn(control: ControlRecords): Promise<EmbeddedReady['demo']['account']> {
  const offered = offeredDemoAccount();
  const organization = await control.organizations.findByName(DEMO_ORGANIZATION);
  const account = offered && (await control.accounts.findByEmail(offered.email));
  return organization && account?.org_id === organization.id ? offered : null;
}

export async function serve(args: string[]): Promise<number> {
  if (args.includes('--help')) {
    console.log(
      'usage: npm run server -- [--host H] [--port P | --socket PATH] [--data-dir D] [--database-url postgres://…] [--telemetry-db PATH | --telemetry-url postgres://…] [--retention-days N] [--demo] [--gateway-port G]',
    );
    return 0;
  }
  const config = resolveConfig(configFromArgs(args, process.env));
  // Embedded in the console's host, which hears the address and the demo account over the
  // process's channel: its console then carries no password.
  let announce: Announce | null = null;
  if (args.includes(ANNOUNCE_FLAG)) {
    announce = parentChannel();
    if (!announce) throw new Error(`${ANNOUNCE_FLAG} needs a parent process to tell: an IPC channel or a parent port`);
    // The console's host reaches its server through a socket only its user can open, never a port.
    if (!config.socket) throw new Error(`${ANNOUNCE_FLAG} is for the console's host, which needs --socket`);
  }
  // Before the stores open and the demo seeds: a path that cannot be listened on fails at once.
  if (config.socket) await clearStaleSocket(config.socket);
  // Demo data goes into a new data folder only: a stray --demo or SVC_DEMO=1 must never add
  // an organisation with published passwords to a folder that holds real data.
  const newDataFolder = !existsSync(join(config.dataDir, 'control.db'));
  const app = await buildApp(config);
  const seeding: EmbeddedReady['demo'] = { seeded: false, account: null };
  const demoOptions = { asOf: config.demoAsOf, rows: config.demoRows };
  // The console's first launch: the organisation before the socket opens, its history after, so
  // that a new user signs in within a second and watches the charts fill.
  let history: DemoOrganisation | null = null;
  if (config.demo && !newDataFolder) {
    // The host passes --demo until it has seen a seeding; the refusal is news to a person only.
    if (!announce) console.log('The data folder is not new: demo data not seeded.');
    // The host offers it only for a folder it recorded seeding (one seeded by an older console).
    else seeding.account = await demoAccountIn(app.control);
  } else if (config.demo && announce) {
    history = await seedDemoOrganisation(app.control, app.secrets, config, demoOptions);
    if (!history) console.log(`${DEMO_ORGANIZATION} already exists; demo data not re-seeded.`);
    else {
      console.log(`Demo organisation seeded: ${history.keys.length} keys; its history follows.`);
      seeding.seeded = true;
      seeding.account = await demoAccountIn(app.control);
    }
  } else if (config.demo) {
    const demo = await seedDemo(app.control, app.secrets, config, demoOptions);
    if (!demo) console.log(`${DEMO_ORGANIZATION} already exists; demo data not re-seeded.`);
    else {
      console.log(`Demo data seeded: ${demo.keys} keys, ${demo.rows} request-log rows. Sign in with:`);
      for (const account of demo.accounts)
        console.log(`  ${account.role.padEnd(6)} ${account.email}  ${account.password}`);
    }
  }
  let gateway: RunningGateway | null = null;
  let traffic: LiveTraffic | null = null;
  let writingHistory: Promise<void> | null = null;
  const stopHistory = new AbortController();
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'stopping');
    stopHistory.abort();
    // The history's part under way, the traffic, then the gateway: their rows are written before the stores close.
    Promise.resolve(writingHistory)
      .then(() => traffic?.stop())
      .then(() => gateway?.close())
      .then(() => app.close())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
  if (config.socket) {
    await app.listen({ path: config.socket });
    ownerOnlySocket(config.socket);
    console.log(`Control plane listening on the socket ${config.socket}`);
    gateway = await announceGateway(app);
    if (!history) traffic = await liveTraffic(app, gateway);
    const ready: EmbeddedReady = { kind: 'ready', address: EMBEDDED_ADDRESS, socketPath: config.socket, demo: seeding };
    if (gateway) ready.gateway = gateway.address;
    announce?.(ready);
    await warmAnalytics(app);
    if (history && announce) {
      const started = gateway;
      writingHistory = writeHistory(app, history, announce, stopHistory.signal).then(async (done) => {
        // Live requests join the history once it is whole, never in the middle of it.
        if (done && !stopping) traffic = await liveTraffic(app, started);
      });
    }
    compileAheadWhenSettled(app, writingHistory ?? Promise.resolve());
    return 0;
  }
  await app.listen({ host: config.host, port: config.port });
  const bound = app.server.address();
  const port = typeof bound === 'object' && bound ? bound.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const address = `http://${host}:${port}/api`;
  // Read by people and by bench/run.ts; the console's host hears the announcement instead.
  console.log(`Control plane listening at ${address}`);
  await warmAnalytics(app);
  gateway = await announceGateway(app);
  traffic = await liveTraffic(app, gateway);
  compileAheadWhenSettled(app, Promise.resolve());
  return 0;
}

/** The share of the demo's history written first: its newest days, while the rest waits. */
const NEWEST_SHARE = 0.2;

/**
 * Writes the demo organisation's history while the server answers, telling the host how far it
 * is. Resolves true once it is whole, false when it stopped short (logged and told).
 */
async function writeHistory(
  app: App,
  organisation: DemoOrganisation,
  announce: Announce,
  signal: AbortSignal,
): Promise<boolean> {
  const of = organisation.plan.rows;
  let rows = 0;
  const tell = (failed?: string) => announce({ kind: 'history', rows, of, ...(failed ? { failed } : {}) });
  tell();
  try {
    rows = await seedDemoHistory(app.control, app.config, organisation, {
      newestFirst: Math.ceil(of * NEWEST_SHARE),
      signal,
      landed: (committed) => {
        rows = committed;
        // The last part's news waits for the line saying the demo is seeded.
        if (rows < of) tell();
      },
    });
    console.log(`Demo data seeded: ${organisation.keys.length} keys, ${rows} request-log rows.`);
    tell();
    return true;
  } catch (error) {
    if (signal.aborted) return false;
    app.log.error({ err: error }, 'the demo history could not be written');
    tell('the demo history could not be written: see the server log');
    return false;
  }
}

/**
 * The demo's live requests, through a gateway on the simulated upstream only: never against a
 * real provider, whose answers cost money.
 */
async function liveTraffic(app: App, gateway: RunningGateway | null): Promise<LiveTraffic | null> {
  if (!gateway?.simulated || !app.config.demoTraffic) return null;
  const traffic = await startLiveTraffic({
    control: app.control,
    dataDir: app.config.dataDir,
    keyHashSecret: app.secrets.keyHashSecret,
    gatewayUrl: gateway.address,
    now: app.config.now,
    onError: (error) => app.log.warn({ err: error }, 'live demo traffic: a request failed'),
  });
  if (traffic)
    console.log(`Live demo traffic: a request every few seconds through the gateway (SVC_DEMO_TRAFFIC=0 stops it)`);
  return traffic;
}

/**
 * A served control plane's first analytics screen should not wait for the threads to load,
 * nor for their first runs of its queries (for the organisations most likely to open it).
 * Started once the server answers, not before: on a small machine the threads' loading
 * would slow the start that a first launch's sign-in waits for.
 */
async function warmAnalytics(app: App): Promise<void> {
  app.analytics.warm(await app.control.organizations.likelyNext(WARM_ORGANISATIONS));
}

/**
 * How long after its start has settled a server compiles its routes' schemas ahead. On two
 * cores, compiling them at once (~1 s of the event loop then, ~0.5 s since answers' unions are
 * simpler) beside a console's first launch took its sign-in page from ~0.8 to ~1.2 s. Compiled
 * ahead, a first sign-in at ten million rows painted Analytics in 0.5-0.75 s, against 0.7-1 s.
 */
const COMPILE_AHEAD_AFTER_MS = 2_000;

/**
 * The routes' schemas compiled in the background (`compileAhead`), so that the first person to
 * sign in does not wait for them: once `settled` (a first launch's demo history written) and a
 * moment more.
 */
function compileAheadWhenSettled(app: App, settled: Promise<unknown>): void {
  void settled
    .then(() => new Promise((resolve) => setTimeout(resolve, COMPILE_AHEAD_AFTER_MS).unref()))
    .then(() => compileAhead(app, () => !app.server.listening));
}

/** Starts the gateway when `--gateway-port` asks for one, once the control plane listens, and says where. */
async function announceGateway(app: App): Promise<RunningGateway | null> {
  if (app.config.gatewayPort === undefined) return null;
  let gateway: RunningGateway;
  try {
    gateway = await startGateway(app, app.config.gatewayPort);
  } catch (error) {
    // The control plane must not run on half started: it closes, and the error ends the process.
    await app.close();
    throw error;
  }
  const upstream = gateway.simulated ? ` (upstream: the simulated one at ${gateway.simulated.url})` : '';
  console.log(`Gateway listening at ${gateway.address}${upstream}`);
  return gateway;
}
