import type { FastifyInstance } from 'fastify';
import type { App } from '../app.js';
import { localAuthority } from './authority.js';
import { buildGateway } from './gateway.js';
import { startSimulatedUpstream, type SimulatedUpstream } from './simulated-upstream.js';

export interface RunningGateway {
  gateway: FastifyInstance;
  /** e.g. http://127.0.0.1:8788/v1 */
  address: string;
  /** The demo's own upstream, when the gateway runs on one. */
  simulated: SimulatedUpstream | null;
  close(): Promise<void>;
}

/**
 * The gateway inside the control plane's process, on `config.gatewayPort` of `config.host`,
 * asking the control plane's admissions directly. A demo (or `--simulated-upstream`) with no upstream configured gets a
 * simulated one, so that it works offline: the console's embedded server always does.
 */
export async function startGateway(app: App, port: number): Promise<RunningGateway> {
  const { config } = app;
  let upstreams = config.upstreams;
  let simulated: SimulatedUpstream | null = null;
  const none = upstreams.fallback === null && Object.keys(upstreams.byProvider).length === 0;
  if (none && (config.demo || config.simulatedUpstream)) {
    simulated = await startSimulatedUpstream({ seed: 1 });
    upstreams = { byProvider: {}, fallback: { baseUrl: simulated.url, apiKey: null } };
  }
  const gateway = buildGateway({
    authority: localAuthority(app.admissions),
    upstreams,
    logger: app.log.child({ component: 'gateway' }),
    now: config.now,
    timeoutMs: config.gatewayTimeoutMs,
  });
  try {
    await gateway.listen({ host: config.host, port });
  } catch (error) {
    // A port in use: nothing of the gateway stays open behind the error.
    await gateway.close();
    await simulated?.close();
    throw error;
  }
  const bound = gateway.server.address();
  const boundPort = typeof bound === 'object' && bound ? bound.port : port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  return {
    gateway,
    address: `http://${host}:${boundPort}/v1`,
    simulated,
    close: async () => {
      await gateway.close();
      await simulated?.close();
    },
  };
}
