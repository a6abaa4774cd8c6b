import {
  DEFAULT_FAILOVER,
  type FailoverSettings,
  type PriceEntry,
  type ProviderEntry,
  type RouteEntry,
  type RouteKind,
  type RoutesDocument,
  type Strategy,
  type TargetEntry,
  type WireApi,
} from './routes-document.js';

/**
 * Validation of the routes document (README, "Routes"): a parsed file (routes-file.ts) in, the
 * document with every default filled in out, or every problem found, each named by its path
 * (`routes.openai/gpt-4o.targets[1].provider`). A problem refuses the whole document; a warning
 * (a `key_env` not set on this machine, which others may have) does not.
 */

export interface Problem {
  /** Where: `providers.openai.base_url`, `routes.svc/auto.targets[0]`; empty for the document as a whole. */
  path: string;
  message: string;
}

export type RoutesCheck =
  { ok: true; document: RoutesDocument; warnings: Problem[] } | { ok: false; problems: Problem[] };

/** `path: message`, as `routes check` prints it. */
export const formatProblem = (problem: Problem): string =>
  problem.path === '' ? problem.message : `${problem.path}: ${problem.message}`;

/**
 * The wire formats each kind of route can be sent upstream in: a target's provider must speak
 * one. A chat route's targets may speak OpenAI's API (chat completions, the Responses API) or
 * Anthropic's Messages API; each request goes to the targets that speak its own API. Embeddings
 * go upstream as OpenAI's only.
 */
export const UPSTREAM_FORMATS: Readonly<Record<RouteKind, readonly WireApi[]>> = {
  chat: ['openai', 'anthropic'],
  embeddings: ['openai'],
};

const WIRE_APIS: readonly WireApi[] = ['openai', 'anthropic'];
const KINDS: readonly RouteKind[] = ['chat', 'embeddings'];
const STRATEGIES: readonly Strategy[] = ['fallback', 'loadbalance'];

/** Provider ids, as the vault names its providers. */
export const PROVIDER_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;
/** Route ids: what callers send as `model` (256 characters at most, as the gateway takes it). */
export const ROUTE_ID = /^[A-Za-z0-9][\w.:@+/-]{0,255}$/;
/** An environment variable's name. */
const KEY_ENV = /^[A-Z_][A-Z0-9_]{0,127}$/;
/** An upstream model id: no spaces or control characters. */
export const UPSTREAM_MODEL = /^[^\s\p{Cc}]{1,256}$/u;

/** PKR per million tokens at most: a request's cost stays an exact number of micro-PKR (below 2^53). */
export const MAX_PRICE = 1_000_000;
const MAX_WEIGHT = 1_000_000;
const MAX_TARGETS = 64;
const MAX_BASE_URL = 2048;

/** Each bound's range: wide enough for any real deployment, inside what the gateways' wire takes. */
export const FAILOVER_RANGES: Readonly<Record<keyof FailoverSettings, readonly [number, number]>> = {
  timeout_ms: [1_000, 3_600_000],
  answer_timeout_ms: [100, 3_600_000],
  first_byte_timeout_ms: [100, 3_600_000],
  stream_idle_timeout_ms: [100, 3_600_000],
  retries: [0, 10],
  max_attempts: [1, 20],
  backoff_ms: [0, 60_000],
  retry_after_max_ms: [0, 600_000],
  breaker_failures: [1, 1_000],
  breaker_cooldown_ms: [100, 3_600_000],
};
const FAILOVER_FIELDS = Object.keys(DEFAULT_FAILOVER) as (keyof FailoverSettings)[];

type Fields = Record<string, unknown>;

const isFields = (value: unknown): value is Fields =>
  typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;

const describe = (value: unknown): string => {
  if (value === null || value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (isFields(value)) return 'a map';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return 'a value of another type';
};

const child = (path: string, key: string) => (path === '' ? key : `${path}.${key}`);

class Checker {
  readonly problems: Problem[] = [];
  readonly warnings: Problem[] = [];

  constructor(readonly env: NodeJS.ProcessEnv) {}

  problem(path: string, message: string): void {
    this.problems.push({ path, message });
  }

  warn(path: string, message: string): void {
    this.warnings.push({ path, message });
  }

  /** A map whose fields are all among `known`: unknown fields are problems, each named. Null when it is no map. */
  fields(value: unknown, path: string, known: readonly string[]): Fields | null {
    if (!isFields(value)) {
      this.problem(path, `must be a map of ${known.join(', ')}, not ${describe(value)}`);
      return null;
    }
    for (const key of Object.keys(value)) {
      if (!known.includes(key)) this.problem(child(path, key), `unknown field (known here: ${known.join(', ')})`);
    }
    return value;
  }

  /** A map of ids to entries; null when it is no map. */
  entries(value: unknown, path: string, what: string): [string, unknown][] | null {
    if (!isFields(value)) {
      this.problem(path, `must be a map of ${what} by id, not ${describe(value)}`);
      return null;
    }
    return Object.entries(value);
  }

  oneOf<T extends string>(value: unknown, path: string, allowed: readonly T[], fallback?: T): T | undefined {
    if (value === undefined && fallback !== undefined) return fallback;
    if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
    this.problem(
      path,
      value === undefined
        ? `missing (${allowed.join(' or ')})`
        : `must be ${allowed.join(' or ')}, not ${describe(value)}`,
    );
    return undefined;
  }

  boolean(value: unknown, path: string, fallback: boolean): boolean | undefined {
    if (value === undefined) return fallback;
    if (typeof value === 'boolean') return value;
    this.problem(path, `must be true or false, not ${describe(value)}`);
    return undefined;
  }

  number(value: unknown, path: string, check: (n: number) => string | null): number | undefined {
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      this.problem(path, value === undefined ? 'missing' : `must be a number, not ${describe(value)}`);
      return undefined;
    }
    const wrong = check(value);
    if (wrong !== null) {
      this.problem(path, wrong);
      return undefined;
    }
    return value;
  }

  /** An optional string (absent or null: null) that must match `pattern`. */
  optionalString(value: unknown, path: string, pattern: RegExp, what: string): string | null | undefined {
    if (value === undefined || value === null) return null;
    if (typeof value === 'string' && pattern.test(value)) return value;
    this.problem(path, `must be ${what}, not ${describe(value)}`);
    return undefined;
  }
}

function failoverOverrides(c: Checker, value: unknown, path: string): Partial<FailoverSettings> | undefined {
  if (value === undefined || value === null) return {};
  const fields = c.fields(value, path, FAILOVER_FIELDS);
  if (!fields) return undefined;
  const settings: Partial<FailoverSettings> = {};
  let valid = true;
  for (const name of FAILOVER_FIELDS) {
    if (fields[name] === undefined) continue;
    const [min, max] = FAILOVER_RANGES[name];
    const n = c.number(fields[name], child(path, name), (n) =>
      Number.isInteger(n) && n >= min && n <= max ? null : `must be a whole number from ${min} to ${max}, not ${n}`,
    );
    if (n === undefined) valid = false;
    else settings[name] = n;
  }
  return valid ? settings : undefined;
}

function baseUrl(c: Checker, value: unknown, path: string): string | null | undefined {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value.length > MAX_BASE_URL) {
    c.problem(path, `must be an http or https address, not ${describe(value)}`);
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    c.problem(path, `must be an http or https address, not ${describe(value)}`);
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    c.problem(path, `must be an http or https address, not ${url.protocol.slice(0, -1)}`);
    return undefined;
  }
  if (url.username !== '' || url.password !== '') {
    c.problem(path, 'must not hold credentials: keys never enter the document (name the variable in key_env)');
    return undefined;
  }
  if (url.search !== '' || url.hash !== '') {
    c.problem(path, 'must not have a query or a fragment: the gateway adds the API path to it');
    return undefined;
  }
  return value;
}

function provider(c: Checker, value: unknown, path: string): ProviderEntry | undefined {
  const fields = c.fields(value, path, ['api', 'base_url', 'key_env', 'byok']);
  if (!fields) return undefined;
  let api: WireApi[] | undefined;
  const listed = typeof fields.api === 'string' ? [fields.api] : fields.api;
  if (!Array.isArray(listed) || listed.length === 0) {
    c.problem(
      child(path, 'api'),
      fields.api === undefined
        ? 'missing (openai, anthropic, or a list of both)'
        : `must be openai, anthropic, or a list of both, not ${describe(fields.api)}`,
    );
  } else {
    const apis = listed.map((item, i) =>
      c.oneOf(item, typeof fields.api === 'string' ? child(path, 'api') : `${child(path, 'api')}[${i}]`, WIRE_APIS),
    );
    if (apis.every((item) => item !== undefined)) {
      if (new Set(apis).size !== apis.length) c.problem(child(path, 'api'), 'lists a format twice');
      else api = apis;
    }
  }
  const url = baseUrl(c, fields.base_url, child(path, 'base_url'));
  const keyEnv = c.optionalString(
    fields.key_env,
    child(path, 'key_env'),
    KEY_ENV,
    "an environment variable's name (A-Z, 0-9, _; not a key: keys never enter the document)",
  );
  if (typeof keyEnv === 'string' && !c.env[keyEnv]) {
    c.warn(child(path, 'key_env'), `${keyEnv} is not set on this machine (the gateways that serve it need it)`);
  }
  const byok = c.optionalString(
    fields.byok,
    child(path, 'byok'),
    PROVIDER_ID,
    'a vault provider id ([a-z0-9][a-z0-9_-]*)',
  );
  if (api === undefined || url === undefined || keyEnv === undefined || byok === undefined) return undefined;
  return { api, base_url: url, key_env: keyEnv, byok };
}

function price(c: Checker, value: unknown, path: string): PriceEntry | undefined {
  if (value === undefined) {
    c.problem(
      path,
      'missing: every route has a price (input, output, cache_write, cache_read; PKR per million tokens)',
    );
    return undefined;
  }
  const fields = c.fields(value, path, ['input', 'output', 'cache_write', 'cache_read']);
  if (!fields) return undefined;
  const part = (name: keyof PriceEntry) =>
    c.number(fields[name], child(path, name), (n) =>
      n < 0
        ? `must not be negative, not ${n}`
        : n > MAX_PRICE
          ? `must be at most ${MAX_PRICE} PKR per million tokens`
          : null,
    );
  const input = part('input');
  const output = part('output');
  const cacheWrite = part('cache_write');
  const cacheRead = part('cache_read');
  if (input === undefined || output === undefined || cacheWrite === undefined || cacheRead === undefined)
    return undefined;
  return { input, output, cache_write: cacheWrite, cache_read: cacheRead };
}

function target(
  c: Checker,
  value: unknown,
  path: string,
  kind: RouteKind | undefined,
  providers: ReadonlyMap<string, ProviderEntry | undefined>,
): TargetEntry | undefined {
  const fields = c.fields(value, path, ['provider', 'model', 'weight']);
  if (!fields) return undefined;
  let providerId: string | undefined;
  if (typeof fields.provider !== 'string') {
    c.problem(
      child(path, 'provider'),
      fields.provider === undefined ? 'missing' : `must be a provider id, not ${describe(fields.provider)}`,
    );
  } else if (!providers.has(fields.provider)) {
    c.problem(child(path, 'provider'), `unknown provider ${JSON.stringify(fields.provider)}`);
  } else {
    providerId = fields.provider;
    const entry = providers.get(providerId);
    // A provider that is itself invalid has its own problems already.
    if (entry && kind !== undefined && !entry.api.some((api) => UPSTREAM_FORMATS[kind].includes(api))) {
      c.problem(
        child(path, 'provider'),
        `provider "${providerId}" speaks ${entry.api.join(' and ')}; the gateway sends ${kind} requests upstream ` +
          `in ${UPSTREAM_FORMATS[kind].join(' or ')} format, so an ${kind} route's provider must speak it`,
      );
      providerId = undefined;
    }
  }
  let model: string | undefined;
  if (typeof fields.model === 'string' && UPSTREAM_MODEL.test(fields.model)) model = fields.model;
  else {
    c.problem(
      child(path, 'model'),
      fields.model === undefined
        ? 'missing (the model id the provider is asked for)'
        : `must be a model id (1 to 256 characters, no spaces), not ${describe(fields.model)}`,
    );
  }
  const weight =
    fields.weight === undefined
      ? 1
      : c.number(fields.weight, child(path, 'weight'), (n) =>
          n <= 0 ? `must be more than 0, not ${n}` : n > MAX_WEIGHT ? `must be at most ${MAX_WEIGHT}` : null,
        );
  if (providerId === undefined || model === undefined || weight === undefined) return undefined;
  return { provider: providerId, model, weight };
}

function route(
  c: Checker,
  value: unknown,
  path: string,
  providers: ReadonlyMap<string, ProviderEntry | undefined>,
): RouteEntry | undefined {
  const fields = c.fields(value, path, [
    'kind',
    'price',
    'prompt_cache',
    'strategy',
    'active',
    'byok',
    'targets',
    'failover',
  ]);
  if (!fields) return undefined;
  const kind = c.oneOf(fields.kind, child(path, 'kind'), KINDS);
  const routePrice = price(c, fields.price, child(path, 'price'));
  const promptCache = c.boolean(fields.prompt_cache, child(path, 'prompt_cache'), false);
  const strategy = c.oneOf(fields.strategy, child(path, 'strategy'), STRATEGIES, 'fallback');
  const active = c.boolean(fields.active, child(path, 'active'), true);
  const byok = c.boolean(fields.byok, child(path, 'byok'), true);
  const targetsPath = child(path, 'targets');
  let targets: TargetEntry[] | undefined;
  if (!Array.isArray(fields.targets) || fields.targets.length === 0) {
    c.problem(
      targetsPath,
      Array.isArray(fields.targets)
        ? 'must name at least one target'
        : fields.targets === undefined
          ? 'missing: a route needs at least one target ({provider, model})'
          : `must be a list of targets, not ${describe(fields.targets)}`,
    );
  } else if (fields.targets.length > MAX_TARGETS) {
    c.problem(targetsPath, `must be at most ${MAX_TARGETS} targets, not ${fields.targets.length}`);
  } else {
    const each = fields.targets.map((item, i) => target(c, item, `${targetsPath}[${i}]`, kind, providers));
    const seen = new Map<string, number>();
    each.forEach((entry, i) => {
      if (!entry) return;
      const key = `${entry.provider}\n${entry.model}`;
      const first = seen.get(key);
      if (first === undefined) seen.set(key, i);
      else c.problem(`${targetsPath}[${i}]`, `the same provider and model as targets[${first}]`);
    });
    if (each.every((entry) => entry !== undefined) && seen.size === each.length) targets = each;
  }
  const failover = failoverOverrides(c, fields.failover, child(path, 'failover'));
  if (
    kind === undefined ||
    routePrice === undefined ||
    promptCache === undefined ||
    strategy === undefined ||
    active === undefined ||
    byok === undefined ||
    targets === undefined ||
    failover === undefined
  ) {
    return undefined;
  }
  return { kind, price: routePrice, prompt_cache: promptCache, strategy, active, byok, targets, failover };
}

/**
 * Checks a parsed routes file (YAML or JSON, as plain data) and fills in its defaults. `env`
 * is where a provider's `key_env` is looked for (a variable unset is a warning only).
 */
export function validateRoutes(value: unknown, env: NodeJS.ProcessEnv = process.env): RoutesCheck {
  const c = new Checker(env);
  if (value === undefined || value === null) {
    return { ok: false, problems: [{ path: '', message: 'the document is empty: it needs providers and routes' }] };
  }
  const top = c.fields(value, '', ['failover', 'providers', 'routes']);
  if (!top) return { ok: false, problems: c.problems };

  const overrides = failoverOverrides(c, top.failover, 'failover');

  // Maps, not objects: an id such as `__proto__` is a problem to name, never a prototype to set.
  const providers = new Map<string, ProviderEntry | undefined>();
  if (top.providers === undefined) c.problem('providers', 'missing: a map of providers by id');
  for (const [id, entry] of c.entries(top.providers ?? {}, 'providers', 'providers') ?? []) {
    const path = child('providers', id);
    if (!PROVIDER_ID.test(id)) c.problem(path, 'a provider id is [a-z0-9][a-z0-9_-]*, 64 characters at most');
    providers.set(id, provider(c, entry, path));
  }

  const routes = new Map<string, RouteEntry | undefined>();
  if (top.routes === undefined) c.problem('routes', 'missing: a map of routes by id');
  const listed = c.entries(top.routes ?? {}, 'routes', 'routes') ?? [];
  for (const [id, entry] of listed) {
    const path = child('routes', id);
    if (!ROUTE_ID.test(id)) {
      c.problem(path, 'a route id is what callers send as model: letters, digits and . _ : @ + / -, 256 at most');
    }
    routes.set(id, route(c, entry, path, providers));
  }
  if (isFields(top.routes) && listed.length === 0) {
    c.warn('routes', 'no routes: every request will be refused as an unknown model');
  }
  const used = new Set([...routes.values()].flatMap((entry) => entry?.targets.map((t) => t.provider) ?? []));
  for (const id of providers.keys()) {
    if (!used.has(id) && c.problems.length === 0) c.warn(child('providers', id), 'no route uses this provider');
  }

  if (c.problems.length > 0 || overrides === undefined) return { ok: false, problems: c.problems };
  const failover = { ...DEFAULT_FAILOVER };
  for (const name of FAILOVER_FIELDS) if (overrides[name] !== undefined) failover[name] = overrides[name];
  return {
    ok: true,
    document: {
      failover,
      providers: Object.fromEntries(providers) as Record<string, ProviderEntry>,
      routes: Object.fromEntries(routes) as Record<string, RouteEntry>,
    },
    warnings: c.warnings,
  };
}
