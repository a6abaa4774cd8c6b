import type { FastifyBaseLogger } from 'fastify';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { createLogger } from '../log.js';
import { DEFAULT_BODY_TIMEOUT_MS, DEFAULT_GATEWAY_TIMEOUT_MS } from './gateway.js';
import { Breakers } from './breakers.js';
import { ControlPlaneAnswer, RemoteAuthority } from './remote-authority.js';
import { listenGateway } from './start.js';
import { upstreamsFromEnv } from './upstreams.js';

export const GATEWAY_USAGE = `usage: SVC_GATEWAY_TOKEN=… npm run gateway -- --control-plane URL [--host 127.0.0.1] [--port 8788] [--simulated-upstream]
  --control-plane       the control plane's address (SVC_CONTROL_PLANE_URL), e.g. http://10.0.0.5:8787
  --host, --port        where callers reach this gateway (SVC_GATEWAY_HOST, SVC_GATEWAY_PORT)
  --simulated-upstream  with no SVC_UPSTREAM_* set, answer from a simulated provider (trials, demos)
  SVC_GATEWAY_TOKEN     one of the control plane's SVC_GATEWAY_TOKENS (an environment variable only:
                        a flag would show in the process list)
  SVC_UPSTREAM_URL / SVC_UPSTREAM_KEY, SVC_UPSTREAM_<PROVIDER>_URL / _KEY: where requests go
  SVC_GATEWAY_TIMEOUT_MS  an upstream that has not finished by then is cut (120000)
  SVC_GATEWAY_BODY_TIMEOUT_MS  a request body not all arrived by then is refused, 408 (30000)`;

const FLAGS = {
  'control-plane': { type: 'string' },
  host: { type: 'string' },
  port: { type: 'string' },
  'simulated-upstream': { type: 'boolean' },
  help: { type: 'boolean' },
} as const;

export interface StandaloneConfig {
  controlPlane: URL;
  token: string;
  host: string;
  port: number;
  simulate: boolean;
  timeoutMs: number;
  bodyTimeoutMs: number;
  logLevel: string;
}

/** Flags, then `SVC_*` variables, then defaults; a bad value is refused with what to give instead. */
export function standaloneConfig(args: string[], env: NodeJS.ProcessEnv): StandaloneConfig {
  const { values } = parseArgs({ args, options: FLAGS, strict: true, allowPositionals: false });
  const address = values['control-plane'] ?? env.SVC_CONTROL_PLANE_URL;
  if (!address) throw new Error('--control-plane is required: the control plane’s address, e.g. http://10.0.0.5:8787');
  const url = URL.canParse(address) ? new URL(address) : null;
  if (!url || !/^https?:$/.test(url.protocol) || !['/', '/api', '/api/'].includes(url.pathname)) {
    throw new Error(`--control-plane must be an http or https address such as http://10.0.0.5:8787, not "${address}"`);
  }
  const token = env.SVC_GATEWAY_TOKEN ?? '';
  if (token === '') throw new Error('SVC_GATEWAY_TOKEN is required: one of the control plane’s SVC_GATEWAY_TOKENS');
  const port = values.port ?? env.SVC_GATEWAY_PORT ?? '8788';
  if (!/^\d{1,5}$/.test(port) || Number(port) > 65_535) throw new Error(`--port must be a port number, not "${port}"`);
  const timeout = env.SVC_GATEWAY_TIMEOUT_MS;
  if (timeout !== undefined && timeout !== '' && !/^[1-9]\d*$/.test(timeout)) {
    throw new Error('SVC_GATEWAY_TIMEOUT_MS must be a positive integer');
  }
  const bodyTimeout = env.SVC_GATEWAY_BODY_TIMEOUT_MS;
  if (bodyTimeout !== undefined && bodyTimeout !== '' && !/^[1-9]\d*$/.test(bodyTimeout)) {
    throw new Error('SVC_GATEWAY_BODY_TIMEOUT_MS must be a positive integer');
  }
  return {
    controlPlane: url,
    token,
    host: values.host ?? env.SVC_GATEWAY_HOST ?? '127.0.0.1',
    port: Number(port),
    simulate: values['simulated-upstream'] ?? env.SVC_SIMULATED_UPSTREAM === '1',
    timeoutMs: timeout ? Math.min(Number(timeout), 3_600_000) : DEFAULT_GATEWAY_TIMEOUT_MS,
    bodyTimeoutMs: bodyTimeout ? Math.min(Number(bodyTimeout), 600_000) : DEFAULT_BODY_TIMEOUT_MS,
    logLevel: env.SVC_LOG_LEVEL ?? 'info',
  };
}

/** What a refused start-up check means to whoever started the gateway. */
function startupProblem(error: unknown, config: StandaloneConfig): string {
  const where = config.controlPlane.origin;
  if (error instanceof ControlPlaneAnswer && error.status === 401) {
    return `the control plane at ${where} refused SVC_GATEWAY_TOKEN: it is not one of its SVC_GATEWAY_TOKENS`;
  }
  if (error instanceof ControlPlaneAnswer && error.status === 404) {
    return `the control plane at ${where} takes no gateways: set SVC_GATEWAY_TOKENS there`;
  }
  const code = (error as { code?: string }).code;
  return `cannot reach the control plane at ${where}: ${code ?? (error as Error).message}`;
}

/** `npm run gateway`: a gateway in a process of its own, beside a control plane elsewhere. */
export async function runGateway(args: string[]): Promise<number> {
  if (args.includes('--help')) {
    console.log(GATEWAY_USAGE);
    return 0;
  }
  const config = standaloneConfig(args, process.env);
  const logger = createLogger(config.logLevel, pino.destination({ dest: 1, sync: false })) as FastifyBaseLogger;
  // One set of breakers: the gateway's, which its authority reports to the control plane.
  const breakers = new Breakers();
  const authority = new RemoteAuthority({ controlPlane: config.controlPlane, token: config.token, logger, breakers });
  try {
    await authority.check();
  } catch (error) {
    await authority.close(0);
    throw new Error(startupProblem(error, config));
  }
  const running = await listenGateway({
    authority,
    breakers,
    upstreams: upstreamsFromEnv(process.env),
    simulate: config.simulate,
    host: config.host,
    port: config.port,
    logger,
    now: Date.now,
    timeoutMs: config.timeoutMs,
    bodyTimeoutMs: config.bodyTimeoutMs,
  }).catch(async (error: unknown) => {
    await authority.close(0);
    throw error;
  });
  const upstream = running.simulated ? ` (upstream: the simulated one at ${running.simulated.url})` : '';
  console.log(`Gateway listening at ${running.address}${upstream}, control plane ${config.controlPlane.origin}`);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping: answering the calls under way, then sending their rows');
    running.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
  return 0;
}
