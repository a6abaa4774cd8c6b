import { join } from 'node:path';
import { DEMO_ACCOUNTS } from '../server/demo/organisation.js';
import { gatewayAddress, gatewayServerSetup } from './gateway.js';
import { ApiClient } from './http.js';
import { startChild, type Child } from './processes.js';

export type Cleanups = (() => void | Promise<void>)[];

// The bench times the engine, not the deadline policy: a slow search is measured, not cut off.
const SERVER_ENV = { SVC_PASSWORD_COST: '10', SVC_ACCESS_TTL_SECONDS: '86400', SVC_ANALYTICS_TIMEOUT_MS: '600000' };

/**
 * `npm run server` on `dataDir` with its gateway on a free port, in front of the simulated
 * upstream at `upstreamUrl` (which must be running first: the server reads its address at start).
 * `name` tells its log (`server-<name>.log` in `temp`) from another server's.
 */
export async function startServer(
  dataDir: string,
  temp: string,
  upstreamUrl: string,
  cleanups: Cleanups,
  options: { name?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<{ server: Child; gatewayUrl: string }> {
  const gateway = gatewayServerSetup(upstreamUrl);
  const server = await startChild(
    'server/cli.ts',
    ['serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir, ...gateway.args],
    {
      logPath: join(temp, options.name ? `server-${options.name}.log` : 'server.log'),
      ready: /^Control plane listening at (http:\/\/\S+)$/m,
      env: { ...SERVER_ENV, ...gateway.env, ...options.env },
    },
  );
  cleanups.push(() => server.stop());
  return { server, gatewayUrl: await gatewayAddress(server) };
}

/** The demo organisation's admin, signed in to `server`. */
export async function signIn(server: Child): Promise<ApiClient> {
  const admin = DEMO_ACCOUNTS.find((account) => account.role === 'admin')!;
  return ApiClient.signIn(server.url, admin.email, admin.password);
}
