import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildApp } from './app.js';
import { resolveConfig, type ServerConfigInput } from './config.js';
import { DEMO_ORGANIZATION, seedDemo } from './demo/seed.js';

const FLAGS = {
  host: { type: 'string' },
  port: { type: 'string' },
  'data-dir': { type: 'string' },
  'telemetry-db': { type: 'string' },
  demo: { type: 'boolean' },
  help: { type: 'boolean' },
} as const;

/** Reads flags, then `SVC_*` environment variables, then defaults. */
export function configFromArgs(args: string[], env: NodeJS.ProcessEnv): ServerConfigInput {
  const { values } = parseArgs({ args, options: FLAGS, strict: true, allowPositionals: false });
  const port = values.port ?? env.SVC_PORT;
  if (port !== undefined && !/^\d{1,5}$/.test(port)) throw new Error(`--port must be a port number, not "${port}"`);
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
    logLevel: env.SVC_LOG_LEVEL ?? 'info',
  };
  const telemetry = values['telemetry-db'] ?? env.SVC_TELEMETRY_DB;
  if (telemetry) input.telemetryDbPath = telemetry;
  const optional = {
    accessTtlSeconds: number('SVC_ACCESS_TTL_SECONDS'),
    refreshTtlSeconds: number('SVC_REFRESH_TTL_SECONDS'),
    rateLimitCeiling: number('SVC_RATE_LIMIT_CEILING'),
    analyticsTimeoutMs: number('SVC_ANALYTICS_TIMEOUT_MS'),
    passwordCost: number('SVC_PASSWORD_COST'),
    vaultMasterKey: env.SVC_VAULT_MASTER_KEY,
    keyHashSecret: env.SVC_KEY_HASH_SECRET,
  };
  for (const [name, value] of Object.entries(optional))
    if (value !== undefined) Object.assign(input, { [name]: value });
  return input;
}

export async function serve(args: string[]): Promise<number> {
  if (args.includes('--help')) {
    console.log('usage: npm run server -- [--host H] [--port P] [--data-dir D] [--telemetry-db PATH] [--demo]');
    return 0;
  }
  const config = resolveConfig(configFromArgs(args, process.env));
  // Demo data goes into a new data folder only: a stray --demo or SVC_DEMO=1 must never add
  // an organisation with published passwords to a folder that holds real data.
  const newDataFolder = !existsSync(join(config.dataDir, 'control.db'));
  const app = await buildApp(config);
  if (config.demo && !newDataFolder) {
    console.log('The data folder is not new: demo data not seeded.');
  } else if (config.demo) {
    const demo = await seedDemo(app.control, app.secrets, config);
    if (!demo) console.log(`${DEMO_ORGANIZATION} already exists; demo data not re-seeded.`);
    else {
      console.log(`Demo data seeded: ${demo.keys} keys, ${demo.rows} request-log rows. Sign in with:`);
      for (const account of demo.accounts)
        console.log(`  ${account.role.padEnd(6)} ${account.email}  ${account.password}`);
    }
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'stopping');
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
  await app.listen({ host: config.host, port: config.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  console.log(`Control plane listening at http://${host}:${port}/api`);
  return 0;
}
