import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { App } from '../app.js';
import { randomUUID } from 'node:crypto';
import { localAuthority, type Authority } from './authority.js';
import { Breakers } from './breakers.js';
import { buildGateway } from './gateway.js';
import { DEMO_OUTAGE, startSimulatedUpstream, type Outage, type SimulatedUpstream } from './simulated-upstream.js';
import type { Upstreams } from './upstreams.js';

export interface RunningGateway {
  gateway: FastifyInstance;
  /** e.g. http://127.0.0.1:8788/v1 */
  address: string;
  /** The demo's own upstream, when the gateway runs on one. */
  simulated: SimulatedUpstream | null;
  /** Its targets' breakers. */
  breakers: Breakers;
  close(): Promise<void>;
}

export interface GatewaySetup {
  authority: Authority;
  upstreams: Upstreams;
  /** With no upstream configured, answer from a simulated one (the demo, tests, a trial run). */
  simulate: boolean;
  host: string;
  port: number;
  logger: FastifyBaseLogger;
  now: () => number;
  timeoutMs: number;
  /** A request body not all arrived by then is refused (408); the gateway's default when absent. */
  bodyTimeoutMs?: number;
  /** The simulated upstream's hourly outage (the demo's). */
  outage?: Outage;
  /** The targets' breakers, when someone else reads them too (a remote authority reporting them). */
  breakers?: Breakers;
}

/** A gateway listening on `setup.host`:`setup.port`, wherever its authority is. */
export async function listenGateway(setup: GatewaySetup): Promise<RunningGateway> {
  let upstreams = setup.upstreams;
  let simulated: SimulatedUpstream | null = null;
  const none = upstreams.fallback === null && Object.keys(upstreams.byProvider).length === 0;
  if (none && setup.simulate) {
    simulated = await startSimulatedUpstream({ seed: 1, outage: setup.outage });
    upstreams = { byProvider: {}, fallback: { baseUrl: simulated.url, apiKey: null } };
  }
  const breakers = setup.breakers ?? new Breakers();
  const gateway = buildGateway({
    breakers,
    authority: setup.authority,
    upstreams,
    logger: setup.logger,
    now: setup.now,
    timeoutMs: setup.timeoutMs,
    bodyTimeoutMs: setup.bodyTimeoutMs,
  });
  try {
    await gateway.listen({ host: setup.host, port: setup.port });
  } catch (error) {
    // A port in use: nothing of the gateway stays open behind the error.
    await gateway.close();
    await simulated?.close();
    throw error;
  }
  const bound = gateway.server.address();
  const boundPort = typeof bound === 'object' && bound ? bound.port : setup.port;
  const host = setup.host.includes(':') ? `[${setup.host}]` : setup.host;
  return {
    gateway,
    address: `http://${host}:${boundPort}/v1`,
    simulated,
    breakers,
    close: async () => {
      await gateway.close();
      await simulated?.close();
    },
  };
}

/**
 * The gateway inside the control plane's process, on `config.gatewayPort` of `config.host`,
 * asking the control plane's admissions directly. A demo (or `--simulated-upstream`) with no
 * upstream configured gets a simulated one, so that it works offline: the console's embedded
 * server always does.
 */
export async function startGateway(app: App, port: number): Promise<RunningGateway> {
  const { config } = app;
  const running = await listenGateway({
    authority: localAuthority(app.admissions),
    upstreams: config.upstreams,
    simulate: config.demo || config.simulatedUpstream,
    host: config.host,
    port,
    logger: app.log.child({ component: 'gateway' }),
    now: config.now,
    timeoutMs: config.gatewayTimeoutMs,
    bodyTimeoutMs: config.gatewayBodyTimeoutMs,
    // The demo's story includes a provider's outage; a trial run on `--simulated-upstream` does not.
    outage: config.demo && config.demoTraffic ? DEMO_OUTAGE : undefined,
  });
  // The Routes screen reads this gateway's breakers live, until it closes.
  const detach = app.gatewayHealth.attach(`local-${randomUUID()}`, running.breakers);
  return {
    ...running,
    close: async () => {
      detach();
      await running.close();
    },
  };
}
