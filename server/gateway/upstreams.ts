/** Where a provider's requests go: an OpenAI-compatible base address (…/v1) and the platform's key for it. */
export interface Upstream {
  baseUrl: string;
  apiKey: string | null;
}

export interface Upstreams {
  /** By provider, as {@link providerVariable} spells it (`OPENAI`, `ANTHROPIC`…). */
  byProvider: Record<string, Upstream>;
  /** For every provider without one of its own; null when there is none. */
  fallback: Upstream | null;
}

function upstreamAt(variable: string, url: string, key: string | undefined): Upstream {
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
    throw new Error(`${variable} must be an http or https address, such as https://api.openai.com/v1`);
  }
  return { baseUrl: url.replace(/\/+$/, ''), apiKey: key || null };
}

const PROVIDER_URL = /^SVC_UPSTREAM_([A-Z0-9_]+)_URL$/;

/**
 * `SVC_UPSTREAM_URL` / `SVC_UPSTREAM_KEY` for every provider, `SVC_UPSTREAM_<PROVIDER>_URL` /
 * `_KEY` for one (the provider's name in capitals, other characters as `_`).
 */
export function upstreamsFromEnv(env: NodeJS.ProcessEnv): Upstreams {
  const byProvider: Record<string, Upstream> = {};
  for (const [name, value] of Object.entries(env)) {
    const match = PROVIDER_URL.exec(name);
    if (!match || !value) continue;
    byProvider[match[1]!] = upstreamAt(name, value, env[`SVC_UPSTREAM_${match[1]}_KEY`]);
  }
  const fallback = env.SVC_UPSTREAM_URL
    ? upstreamAt('SVC_UPSTREAM_URL', env.SVC_UPSTREAM_URL, env.SVC_UPSTREAM_KEY)
    : null;
  return { byProvider, fallback };
}

/** The provider's name as its environment variables spell it: `SVC_UPSTREAM_${providerVariable(p)}_URL`. */
export const providerVariable = (provider: string) => provider.toUpperCase().replace(/[^A-Z0-9]/g, '_');

/** The upstream that serves `provider`, or null when none is configured. */
export function upstreamFor(upstreams: Upstreams, provider: string): Upstream | null {
  return upstreams.byProvider[providerVariable(provider)] ?? upstreams.fallback;
}

/**
 * Where a planned target's requests go, with the key sent: the organisation's own (BYOK), else the
 * platform's from the target's `keyEnv` on this machine. A target without an address of its own
 * takes its provider's `SVC_UPSTREAM_*`; null when there is none.
 */
export function targetUpstream(
  upstreams: Upstreams,
  target: { provider: string; baseUrl: string | null; keyEnv: string | null; providerKey: string | null },
  env: NodeJS.ProcessEnv,
): (Upstream & { isByok: boolean }) | null {
  const configured = target.baseUrl === null ? upstreamFor(upstreams, target.provider) : null;
  const baseUrl = target.baseUrl?.replace(/\/+$/, '') ?? configured?.baseUrl;
  if (baseUrl === undefined) return null;
  const platformKey = target.keyEnv === null ? (configured?.apiKey ?? null) : env[target.keyEnv] || null;
  return { baseUrl, apiKey: target.providerKey ?? platformKey, isByok: target.providerKey !== null };
}
