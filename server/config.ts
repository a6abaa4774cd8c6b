import { join, resolve } from 'node:path';
import { isLoopbackName } from './loopback.js';

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
  dataDir: string;
  telemetryDbPath: string;
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
  oidc: OidcConfig | null;
  /** Origins besides the server's own that may send state-changing requests. */
  allowedOrigins: string[];
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

export function resolveConfig(input: ServerConfigInput): ServerConfig {
  if (input.oidc) checkJwks(input.oidc.jwks);
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
    oidc: null,
    allowedOrigins: [],
    logLevel: 'info',
    now: Date.now,
    ...input,
    dataDir,
    telemetryDbPath: resolve(input.telemetryDbPath ?? join(dataDir, 'telemetry.db')),
  };
}
