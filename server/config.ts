import { isIP } from 'node:net';
import { join, resolve } from 'node:path';
import { MAX_RETENTION_DAYS } from './domain/retention.js';
import { isLoopbackName } from './loopback.js';
import type { Upstreams } from './gateway/upstreams.js';
import type { ControlLocation } from './stores/control/store.js';
import type { TelemetryLocation } from './stores/telemetry/open.js';
import { DEFAULT_THROTTLE, type ThrottleLimits } from './security/sign-in-throttle.js';
import { PASSWORD_MIN_LENGTH_DEFAULT, checkPasswordMinLength } from './security/password-policy.js';

export interface OidcConfig {
  /** Expected `iss` of ID tokens. */
  issuer: string;
  /** Expected `aud`: this control plane's client id at the identity provider. */
  clientId: string;
  /** Where the issuer's signing keys are: an https address (http on loopback only) or a local JWKS file. */
  jwks: string;
}

export interface ServerConfig {
  host: string;
  port: number;
  /**
   * A Unix socket's path (a Windows named pipe) to listen on instead of host and port: how the
   * console embeds the server, reachable by its user only (local-socket.ts). The guards treat
   * such a server as on loopback.
   */
  socket?: string;
  dataDir: string;
  /**
   * A PostgreSQL database for the control store (postgres://…, `--database-url`); none: `control.db`
   * in the data folder. It may hold a password: it is never logged or put in an error message.
   */
  databaseUrl?: string;
  telemetryDbPath: string;
  /**
   * A PostgreSQL database for the request log (`--telemetry-url`, the same as the control store's
   * or another); none: `telemetryDbPath`. Never logged, as `databaseUrl`.
   */
  telemetryUrl?: string;
  /** Seed the demo organisation when the data folder is new. */
  demo: boolean;
  accessTtlSeconds: number;
  refreshTtlSeconds: number;
  /** Highest `rate_limit_rpm` a key may have. */
  rateLimitCeiling: number;
  /** An analytics query running longer answers 503 and its worker is replaced. */
  analyticsTimeoutMs: number;
  /** log2 of scrypt's N for new password hashes. */
  passwordCost: number;
  /** Shortest new password, 8 (the contract's) to 64; ASVS 5.0 V6.2.1 recommends 15. */
  passwordMinLength: number;
  oidc: OidcConfig | null;
  /** Failed sign-ins and registrations before growing delays; see sign-in-throttle.ts. */
  throttle: ThrottleLimits;
  /**
   * Proxies whose `X-Forwarded-For` is believed (addresses, CIDR ranges, or proxy-addr's
   * `loopback`, `linklocal`, `uniquelocal`); from anyone else the socket's address is the caller's.
   */
  trustedProxies: string[];
  /** The OpenAI-compatible gateway's port (on `host`); none: no gateway in this process. */
  gatewayPort?: number;
  /** Where the gateway sends each provider's requests. */
  upstreams: Upstreams;
  /** With no upstream configured, the gateway answers from a simulated one (always so with `demo`). */
  simulatedUpstream: boolean;
  /** Live requests through a gateway on the simulated upstream, for a folder with the demo organisation. */
  demoTraffic: boolean;
  /**
   * The demo's history drawn as of this instant and moved to end now (`SVC_DEMO_AS_OF`, RFC 3339):
   * the same rows on any day, for tests. None: drawn as of now.
   */
  demoAsOf?: number;
  /** Request-log rows of a new demo (`SVC_DEMO_ROWS`); 50,000 by default. */
  demoRows?: number;
  /** An upstream that has not finished a request by then is cut (504, `proxy_guillotine`). */
  gatewayTimeoutMs: number;
  /** A request body not all arrived by then is refused (408) and its connection closed. */
  gatewayBodyTimeoutMs: number;
  /** How often the gateways' rows are written (200 ms); tests write sooner. */
  gatewayFlushMs?: number;
  /**
   * Service tokens of gateways in other processes (`SVC_GATEWAY_TOKENS`), for the internal API;
   * none: the internal API answers 404.
   */
  gatewayTokens: string[];
  /** Origins besides the server's own that may send state-changing requests. */
  allowedOrigins: string[];
  /**
   * Request-log rows older than this many days are deleted in the background (`--retention-days`);
   * null keeps every row. An organisation may set a shorter one of its own (domain/retention.ts).
   */
  retentionDays: number | null;
  /** Base64 32-byte secrets; generated in the data folder when absent. */
  vaultMasterKey?: string;
  keyHashSecret?: string;
  logLevel: string;
  /** Milliseconds since the epoch; replaceable so tests can move time. */
  now: () => number;
}

export type ServerConfigInput = Partial<ServerConfig> & { dataDir: string };

/**
 * The signing keys decide who may sign in: fetched in the clear, anyone on the path could
 * swap them and sign tokens of their own. So an address is https, or http on this machine.
 */
function checkJwks(jwks: string): void {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(jwks)) return; // a local file
  const url = URL.canParse(jwks) ? new URL(jwks) : null;
  if (url?.protocol === 'https:' || (url?.protocol === 'http:' && isLoopbackName(url.hostname))) return;
  throw new Error('SVC_OIDC_JWKS must be an https address (plain http only on loopback) or a local file');
}

/** Shortest service token: 32 characters, as `openssl rand -hex 16` or longer gives. */
export const GATEWAY_TOKEN_MIN_LENGTH = 32;

function checkGatewayToken(token: string): void {
  // The token itself never goes into the message: it is a secret, and logs keep startup errors.
  if (token.length < GATEWAY_TOKEN_MIN_LENGTH || !/^[\x21-\x7e]+$/.test(token)) {
    throw new Error(
      `SVC_GATEWAY_TOKENS: each token must be at least ${GATEWAY_TOKEN_MIN_LENGTH} visible ASCII characters (openssl rand -hex 32)`,
    );
  }
}

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** An address, a CIDR range or one of proxy-addr's names; a typo must not trust the wrong hop. */
function checkTrustedProxy(entry: string): void {
  if (PROXY_NAMES.has(entry)) return;
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  const bits = family === 4 ? 32 : 128;
  const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits);
  if (family === 0 || !prefixOk || rest.length > 0) {
    throw new Error(
      `SVC_TRUSTED_PROXIES: "${entry}" is not an address, a CIDR range, loopback, linklocal or uniquelocal`,
    );
  }
}

/** Told without the address itself, which may carry a password. */
function checkDatabaseUrl(url: string, flag = '--database-url'): void {
  if (!/^postgres(ql)?:\/\/./.test(url)) throw new Error(`${flag} must be a postgres:// address`);
}

/** The refusal of a retention that is not a whole number of days the horizon rule takes. */
export function retentionDaysError(given: string): Error {
  return new Error(`--retention-days must be a whole number of days from 1 to ${MAX_RETENTION_DAYS}, not "${given}"`);
}

function checkRetentionDays(days: number): void {
  if (!Number.isInteger(days) || days < 1 || days > MAX_RETENTION_DAYS) throw retentionDaysError(String(days));
}

/** Where the control store is: the PostgreSQL database given, else `control.db` in the data folder. */
export function controlLocation(config: Pick<ServerConfig, 'dataDir' | 'databaseUrl'>): ControlLocation {
  return config.databaseUrl === undefined ? { path: join(config.dataDir, 'control.db') } : { url: config.databaseUrl };
}

/** Where the request log is: the PostgreSQL database given, else the telemetry file. */
export function telemetryLocation(config: Pick<ServerConfig, 'telemetryDbPath' | 'telemetryUrl'>): TelemetryLocation {
  return config.telemetryUrl === undefined ? { path: config.telemetryDbPath } : { url: config.telemetryUrl };
}

export function resolveConfig(input: ServerConfigInput): ServerConfig {
  if (input.oidc) checkJwks(input.oidc.jwks);
  if (input.databaseUrl !== undefined) checkDatabaseUrl(input.databaseUrl);
  if (input.telemetryUrl !== undefined) checkDatabaseUrl(input.telemetryUrl, '--telemetry-url');
  for (const entry of input.trustedProxies ?? []) checkTrustedProxy(entry);
  for (const token of input.gatewayTokens ?? []) checkGatewayToken(token);
  if (input.passwordMinLength !== undefined) checkPasswordMinLength(input.passwordMinLength);
  if (input.retentionDays !== undefined && input.retentionDays !== null) checkRetentionDays(input.retentionDays);
  const dataDir = resolve(input.dataDir);
  return {
    host: '127.0.0.1',
    port: 8787,
    demo: false,
    accessTtlSeconds: 900,
    refreshTtlSeconds: 7 * 24 * 3600,
    rateLimitCeiling: 10_000,
    analyticsTimeoutMs: 30_000,
    passwordCost: 17,
    passwordMinLength: PASSWORD_MIN_LENGTH_DEFAULT,
    oidc: null,
    throttle: DEFAULT_THROTTLE,
    trustedProxies: [],
    upstreams: { byProvider: {}, fallback: null },
    simulatedUpstream: false,
    demoTraffic: true,
    gatewayTimeoutMs: 120_000,
    gatewayBodyTimeoutMs: 30_000,
    gatewayTokens: [],
    allowedOrigins: [],
    retentionDays: null,
    logLevel: 'info',
    now: Date.now,
    ...input,
    dataDir,
    telemetryDbPath: resolve(input.telemetryDbPath ?? join(dataDir, 'telemetry.db')),
  };
}
