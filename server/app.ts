import swagger from '@fastify/swagger';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import pino, { type DestinationStream } from 'pino';
import { AccessLog } from './access-log.js';
import { controlLocation, telemetryLocation, type ServerConfig } from './config.js';
import type { Analytics } from './analytics/analytics.js';
import { AnalyticsPool } from './analytics/pool.js';
import { createLogger, lazyChildLogger } from './log.js';
import { errorsPlugin } from './plugins/errors.js';
import { isLoopbackName } from './loopback.js';
import { guardsPlugin } from './plugins/guards.js';
import { securityHeadersPlugin } from './plugins/security-headers.js';
import { sessionPlugin } from './plugins/session.js';
import { validationPlugin } from './plugins/validation.js';
import { apiRoutes } from './routes/index.js';
import { internalGatewayRoutes } from './routes/internal-gateway.js';
import { privateFolder } from './security/private-files.js';
import { SignInThrottle } from './security/sign-in-throttle.js';
import { loadOrCreateSecret } from './security/secret-files.js';
import { openControlStore } from './stores/control/open.js';
import type { ControlStore } from './stores/control/store.js';
import type { TelemetryReads } from './stores/telemetry/open.js';
import type { PgRequestLog } from './stores/telemetry/postgres/request-log.js';
import { TelemetryStore } from './stores/telemetry/store.js';
import { settleOutstandingSpend, sqliteOutbox } from './ingest/spend-outbox.js';
import { Admissions } from './admission/admissions.js';
import { RetentionSweeper, type RetentionSweeperOptions } from './retention/sweeper.js';
import { GatewayHealth } from './gateway/gateway-health.js';

export interface ServerSecrets {
  /** AES-256-GCM key sealing vault entries. */
  vaultMasterKey: Buffer;
  /** HMAC key for API key secrets. */
  keyHashSecret: Buffer;
}

declare module 'fastify' {
  interface FastifyInstance {
    config: ServerConfig;
    control: ControlStore;
    telemetry: TelemetryReads;
    analytics: Analytics;
    secrets: ServerSecrets;
    throttle: SignInThrottle;
    /** Decides every gateway's requests and writes their rows: the one in this process and those elsewhere. */
    admissions: Admissions;
    /** The gateways' breakers, this process's and those others report, for GET /routes. */
    gatewayHealth: GatewayHealth;
    /** Deletes request-log rows past each organisation's retention, in the background. */
    retention: RetentionSweeper;
  }
}

export type App = FastifyInstance;

const SESSION_PURGE_INTERVAL_MS = 3600 * 1000;
/** One per core of the machines this runs on; the event loop stays free for the control plane. */
export const ANALYTICS_WORKERS = 2;
/** How often the gateways' rows are written (group commit): well within a second of the request. */
const GATEWAY_FLUSH_MS = 200;
/** Beyond this many waiting queries, more answer 503 at once rather than piling up. */
const ANALYTICS_MAX_QUEUED = 32;

export interface BuildOptions {
  /** Where log lines go (stdout by default); tests capture them. */
  logDestination?: DestinationStream;
}

/**
 * Spend a crash left between the stores' commits (spend-outbox.ts), settled at the start; a
 * failure is logged, so that the server still starts and a later commit settles what is left.
 */
async function settleLeftSpend(app: App, settle: () => Promise<unknown> | null): Promise<void> {
  try {
    await settle();
  } catch (error) {
    app.log.warn({ err: error }, 'could not settle the spend left in the outbox');
  }
}

/** Opens the data folder's stores and builds the control plane, ready to `listen` or `inject`. */
export async function buildApp(config: ServerConfig, options: BuildOptions = {}): Promise<App> {
  privateFolder(config.dataDir);
  const secrets: ServerSecrets = {
    vaultMasterKey: loadOrCreateSecret(config.dataDir, 'vault-master.key', config.vaultMasterKey),
    keyHashSecret: loadOrCreateSecret(config.dataDir, 'key-hash.secret', config.keyHashSecret),
  };
  // Made here, not by pino, so that the access log writes to the same stream.
  const destination = options.logDestination ?? pino.destination({ dest: 1, sync: true });
  const logger = createLogger(config.logLevel, destination);
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    bodyLimit: 1024 * 1024,
    // request.ip: the socket's peer, or the X-Forwarded-For hop the trusted proxies vouch for.
    trustProxy: config.trustedProxies.length > 0 ? config.trustedProxies : false,
    // Fastify's own request logging writes two lines per request with every header; one
    // short line after the answer says the same for a third of the cost (see onResponse).
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyChildLogger,
  });
  const accessLog = new AccessLog(logger, destination);
  app.addHook('onResponse', (request, reply, done) => {
    accessLog.record({
      reqId: request.id,
      method: request.method,
      url: request.url,
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime),
    });
    done();
  });

  const control = await openControlStore(controlLocation(config), {
    accessSeconds: config.accessTtlSeconds,
    refreshSeconds: config.refreshTtlSeconds,
  });
  app.decorate('config', config);
  app.decorate('secrets', secrets);
  app.decorate('control', control);
  app.decorate('throttle', new SignInThrottle(config.throttle));
  const location = telemetryLocation(config);
  const analyticsLimits = {
    size: ANALYTICS_WORKERS,
    timeoutMs: config.analyticsTimeoutMs,
    maxQueued: ANALYTICS_MAX_QUEUED,
  };
  /** PostgreSQL's request log drops whole days of rows (request-days.ts); SQLite's thins its fine cells (fine-cells.ts). */
  let dropDays: RetentionSweeperOptions['dropDays'];
  let thin: RetentionSweeperOptions['thin'];
  if ('url' in location) {
    // PostgreSQL's driver and queries are loaded only for a request log that is there.
    const [{ PgRequestLog }, { PgAnalytics }] = await Promise.all([
      import('./stores/telemetry/postgres/request-log.js'),
      import('./analytics/postgres-analytics.js'),
    ]);
    const log = await PgRequestLog.open(location.url, { log: app.log });
    dropDays = (horizons) => log.dropDays(horizons);
    app.decorate('telemetry', log);
    app.decorate('analytics', PgAnalytics.open(location.url, analyticsLimits));
    await settleLeftSpend(app, async () => settleOutstandingSpend(control, log));
  } else {
    app.decorate('telemetry', new TelemetryStore(location.path, app.log));
    // Opened now, not at the first read: an import beside this server then finds the store open
    // and writes it in WAL mode, without shutting this server out (import-transaction.ts).
    app.telemetry.reachable();
    // An older store being upgraded is settled by the first commit after its upgrade. The
    // telemetry store's guard does not see an asynchronous failure: settleLeftSpend catches it.
    const store = app.telemetry as TelemetryStore;
    await settleLeftSpend(app, () => store.read((db) => settleOutstandingSpend(control, sqliteOutbox(db))));
    app.decorate('analytics', new AnalyticsPool(location.path, analyticsLimits));
    thin = (since) => app.admissions.thin(since);
  }
  app.decorate('gatewayHealth', new GatewayHealth(config.now));
  app.decorate(
    'admissions',
    new Admissions({
      control,
      controlLocation: control.location,
      telemetry: location,
      rowsWritten: 'url' in location ? () => (app.telemetry as PgRequestLog).forgetReads() : undefined,
      keyHashSecret: secrets.keyHashSecret,
      vaultMasterKey: secrets.vaultMasterKey,
      logger: app.log.child({ component: 'gateway' }),
      now: config.now,
      flushMs: config.gatewayFlushMs ?? GATEWAY_FLUSH_MS,
    }),
  );
  // A timer's exception would end the process; a store busy with an import just waits an hour.
  const purgeSessions = async () => {
    const now = config.now();
    try {
      await control.write((tx) => tx.sessions.purge(now));
    } catch (error) {
      app.log.warn({ err: error }, 'could not purge expired sessions');
    }
    try {
      await app.admissions.purge();
    } catch (error) {
      app.log.warn({ err: error }, "could not purge idle keys' rate counts and holds");
    }
  };
  await purgeSessions();
  const purgeTimer = setInterval(() => void purgeSessions(), SESSION_PURGE_INTERVAL_MS).unref();
  const sweeper: RetentionSweeper = new RetentionSweeper({
    platformDays: config.retentionDays,
    retentions: () => control.organizations.retentions(),
    organizations: () => control.organizations.ids(),
    expire: (orgId, before, limit) => app.admissions.expire(orgId, before, limit),
    dropDays,
    thin,
    now: config.now,
    log: app.log.child({ component: 'retention' }),
  });
  app.decorate('retention', sweeper);
  sweeper.start();
  app.addHook('onClose', async (instance) => {
    accessLog.flush();
    clearInterval(purgeTimer);
    await sweeper.close();
    // The gateways' last rows, before the stores close.
    await instance.admissions.close();
    await instance.analytics.close();
    await instance.telemetry.close();
    await instance.control.close();
  });

  await app.register(swagger, {
    openapi: {
      info: { title: 'Gateway control plane', version: '1.0.0' },
      servers: [{ url: '/' }],
      components: {
        securitySchemes: {
          session: { type: 'apiKey', in: 'cookie', name: 'svc_access_token' },
          serviceToken: { type: 'http', scheme: 'bearer', description: 'A gateway service token (SVC_GATEWAY_TOKENS)' },
        },
      },
      security: [{ session: [] }],
    },
  });
  // The API answers JSON only: nothing in it is to be framed, run as a script or sniffed.
  await app.register(securityHeadersPlugin, {
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    frameguard: { action: 'deny' },
    // Behind a TLS proxy this asks browsers for https on this host only: subdomains are the operator's call.
    strictTransportSecurity: { maxAge: 31_536_000, includeSubDomains: false },
  });
  await app.register(validationPlugin);
  await app.register(errorsPlugin);
  // A socket server is as local as loopback: its requests too must name a loopback host (`localhost`).
  const loopback = config.socket !== undefined || isLoopbackName(config.host);
  await app.register(guardsPlugin, { loopback, allowedOrigins: config.allowedOrigins });
  await app.register(sessionPlugin);
  await app.register(apiRoutes, { prefix: '/api' });
  await app.register(internalGatewayRoutes, { prefix: '/internal/gateway' });
  app.get('/api/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  return app;
}
