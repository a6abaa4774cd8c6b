import { settledCostMicro, type TokenCounts } from '../domain/route-catalogue.js';
import { importSource, type ImportSource, type SourceReader } from '../ingest/import-source.js';
import type { RequestRecord } from '../stores/telemetry/request-record.js';
import { type CallerKind, requestMetadata, USER_AGENTS } from './callers.js';
import {
  CACHE_MEDIAN_TOKENS,
  MAX_GENERATED_TOKENS,
  MAX_PROMPT_TOKENS,
  type RouteProfile,
  routeProfile,
  ROUTES,
} from './catalogue.js';
import { drawOutcome, GUILLOTINE_MS, type Outcome } from './outcomes.js';
import { hex8, mix32, Random, weightedIndex } from './random.js';
import { isIncidentHour, LEGACY_CUTOFF_MS, requestTimes, trafficWindows } from './rhythm.js';

/** One key as the traffic sees it. */
export interface TrafficKey {
  id: string;
  projectId: string;
  /** Relative share of the organisation's requests while the key is usable. */
  weight: number;
  /** The key's model scope, or null to use the whole catalogue mix. */
  routes: readonly string[] | null;
  /** Requests fall in [activeFrom, activeUntil): after creation, before expiry or revocation. */
  activeFrom: number;
  activeUntil: number | null;
  creditLimitMicro: number | null;
  /** Share of requests on routes of a vault provider that use the customer's own key. */
  byokShare: number;
  callers: readonly CallerKind[];
  features: readonly string[];
  /** Share of requests that carry `X-SVC-Meta-*` headers. */
  tagged: number;
}

export interface TrafficPlan {
  seed: number;
  orgId: string;
  now: number;
  /**
   * The traffic is drawn as of `now - shift` (its rhythm, incidents and era by that clock) and
   * moved forward by `shift`: a fixed instant gives the same rows, relative to now, on any day.
   */
  shift: number;
  /** Only the rows of these positions in the whole traffic, [from, to): an import in parts. */
  part?: { from: number; to: number };
  days: number;
  rows: number;
  keys: readonly TrafficKey[];
  /** Providers with a key in the organisation's vault: only these can serve BYOK. */
  byokProviders: readonly string[];
}

/** A key stops being chosen once its spend reaches this share of its credit limit. */
const SPEND_CEILING = 0.85;
const ESTIMATED_USAGE_SHARE = 0.01;

interface KeyState {
  key: TrafficKey;
  routes: readonly RouteProfile[];
  routeWeights: readonly number[];
  routeTotal: number;
  userAgent: string;
  spent: number;
}

/** The demo organisation's traffic as an import's source, generated on the import's own thread. */
export function trafficSource(plan: TrafficPlan): ImportSource<TrafficPlan> {
  return importSource(import.meta.url, plan);
}

/** The rows of a `trafficSource`, on the import's thread (server/ingest/import-worker.ts). */
export const readRows: SourceReader<TrafficPlan> = (plan) => ({ records: demoTraffic(plan) });

/**
 * The demo organisation's request log, generated one row at a time in time order.
 * Everything comes from `plan.seed` and the plan's times, so the same plan always
 * yields the same rows, and memory stays flat however many rows are asked for.
 */
export function* demoTraffic(plan: TrafficPlan): Generator<RequestRecord> {
  const random = new Random(plan.seed);
  const byok = new Set(plan.byokProviders);
  const states: KeyState[] = plan.keys.map((key) => {
    const routes = key.routes ? key.routes.map(routeProfile) : ROUTES;
    const routeWeights = routes.map((route) => route.weight);
    // Each application settles on one SDK version; other callers are people poking at it.
    const userAgent = random.pick(USER_AGENTS[random.pick(key.callers)]);
    return { key, routes, routeWeights, routeTotal: sum(routeWeights), userAgent, spent: 0 };
  });
  const idSalt = random.uint32();
  const weights = new Array<number>(states.length).fill(0);
  let counter = 0;
  const { from, to } = plan.part ?? { from: 0, to: plan.rows };
  // A part's rows are drawn after every row before them: each draw depends on all the earlier ones.
  for (const drawnAt of requestTimes(random, plan.seed, trafficWindows(plan.now - plan.shift, plan.days, plan.rows))) {
    if (counter >= to) return;
    const ts = drawnAt + plan.shift;
    const state = pickKey(random, states, weights, ts);
    const route = state.routes[weightedIndex(random, state.routeWeights, state.routeTotal)]!;
    // Time first, like a UUIDv7: ids arrive in order, so the unique index is appended to
    // rather than split at random pages. The counter through a bijection keeps ids unique.
    const reqId = 'req_' + ts.toString(16).padStart(12, '0') + hex8(mix32(counter ^ idSalt)) + random.hex(8);
    const row = requestRow(random, plan, state, route, byok, { ts, drawnAt }, reqId);
    state.spent += row.cost_micro;
    if (counter++ >= from) yield row;
  }
}

function pickKey(random: Random, states: readonly KeyState[], weights: number[], ts: number): KeyState {
  let total = 0;
  for (let i = 0; i < states.length; i++) {
    const { key, spent } = states[i]!;
    const usable =
      key.activeFrom <= ts &&
      (key.activeUntil === null || ts < key.activeUntil) &&
      (key.creditLimitMicro === null || spent < key.creditLimitMicro * SPEND_CEILING);
    weights[i] = usable ? key.weight : 0;
    total += weights[i]!;
  }
  if (total === 0) throw new Error(`no demo key is usable at ${new Date(ts).toISOString()}`);
  return states[weightedIndex(random, weights, total)]!;
}

function requestRow(
  random: Random,
  plan: TrafficPlan,
  state: KeyState,
  route: RouteProfile,
  byokProviders: ReadonlySet<string>,
  /** When the row happened, and when it was drawn: its incidents and era follow the latter (TrafficPlan.shift). */
  { ts, drawnAt }: { ts: number; drawnAt: number },
  reqId: string,
): RequestRecord {
  const { key } = state;
  const stream = random.chance(route.streamShare);
  const isByok = route.byokProvider !== null && byokProviders.has(route.byokProvider) && random.chance(key.byokShare);
  // An outage hour hits the routes that lean on Anthropic.
  const incident = isIncidentHour(plan.seed, drawnAt) && route.upstream.some((model) => model.startsWith('claude'));
  let outcome = drawOutcome(random, stream, incident);
  let tokens = drawTokens(random, route, outcome);
  let cost = settledCostMicro(route.price, billedTokens(tokens), isByok);
  if (key.creditLimitMicro !== null && state.spent + cost >= key.creditLimitMicro) {
    // The gateway enforces the limit: the request is refused and nothing is billed.
    outcome = { kind: 'failed', status: 429, reason: 'success', upstreamError: null, atGateway: true };
    tokens = drawTokens(random, route, outcome);
    cost = 0;
  }
  const timing = drawTiming(random, route, stream, outcome, tokens);
  const legacy = drawnAt < LEGACY_CUTOFF_MS;
  const userAgent = random.chance(0.85) ? state.userAgent : random.pick(USER_AGENTS[random.pick(key.callers)]);
  return {
    req_id: reqId,
    ts,
    org_id: plan.orgId,
    project_id: key.projectId,
    key_id: key.id,
    model: route.id,
    status: outcome.kind === 'ok' ? 200 : outcome.status,
    stream: stream ? 1 : 0,
    total_ms: timing.total,
    ttft_ms: timing.ttft,
    tpot_ms: timing.tpot,
    pre_dispatch_ms: timing.preDispatch,
    prompt_tokens: legacy ? null : tokens.prompt,
    tokens_generated: tokens.generated,
    cache_creation_input_tokens: tokens.cacheWrite,
    cache_read_input_tokens: tokens.cacheRead,
    total_tokens: tokens.prompt + tokens.generated + (tokens.cacheWrite ?? 0) + (tokens.cacheRead ?? 0),
    tokens_estimated: tokens.estimated ? 1 : 0,
    cost_micro: cost,
    is_byok: isByok ? 1 : 0,
    termination_reason: outcome.kind === 'ok' ? 'success' : outcome.reason,
    upstream_error: outcome.kind === 'ok' ? null : outcome.upstreamError,
    // Before the cutoff the gateway did not record the resolved model at all.
    upstream_model: legacy ? null : random.pick(route.upstream),
    // The demo's story does not say which target served or how: unknown.
    served_by: null,
    attempts: null,
    api: route.api,
    user_agent: userAgent,
    metadata: requestMetadata(random, key.features, key.tagged),
  };
}

/** The counts a cost is computed from: a route without a prompt cache reads and writes none. */
function billedTokens(tokens: Tokens): TokenCounts {
  const { prompt, generated } = tokens;
  return { prompt, generated, cacheWrite: tokens.cacheWrite ?? 0, cacheRead: tokens.cacheRead ?? 0 };
}

interface Tokens {
  prompt: number;
  generated: number;
  /** Null on routes without a prompt cache. */
  cacheWrite: number | null;
  cacheRead: number | null;
  estimated: boolean;
}

function drawTokens(random: Random, route: RouteProfile, outcome: Outcome): Tokens {
  const noCache = route.cache ? 0 : null;
  if (outcome.kind === 'failed')
    return { prompt: 0, generated: 0, cacheWrite: noCache, cacheRead: noCache, estimated: false };
  const prompt = clamp(Math.round(random.logNormal(route.prompt.median, route.prompt.sigma)), 1, MAX_PROMPT_TOKENS);
  const full =
    route.generated.median === 0
      ? 0
      : clamp(Math.round(random.logNormal(route.generated.median, route.generated.sigma)), 1, MAX_GENERATED_TOKENS);
  const cacheRead = route.cache ? cacheLeg(random, route.cache.readShare) : null;
  const cacheWrite = route.cache ? cacheLeg(random, route.cache.writeShare) : null;
  if (outcome.kind === 'cut') {
    // The usage block comes at the end of a stream: a cut stream's counts are the gateway's estimate.
    const generated = outcome.beforeFirstToken ? 0 : Math.max(1, Math.round(full * random.between(0.05, 0.9)));
    return { prompt, generated, cacheWrite, cacheRead, estimated: true };
  }
  return { prompt, generated: full, cacheWrite, cacheRead, estimated: random.chance(ESTIMATED_USAGE_SHARE) };
}

/** Tokens read from or written to the prompt cache: usually none, else a whole system prompt or document. */
function cacheLeg(random: Random, share: number): number {
  return random.chance(share) ? clamp(Math.round(random.logNormal(CACHE_MEDIAN_TOKENS, 0.8)), 1024, 150_000) : 0;
}

interface Timing {
  total: number;
  ttft: number | null;
  tpot: number | null;
  preDispatch: number;
}

function drawTiming(random: Random, route: RouteProfile, stream: boolean, outcome: Outcome, tokens: Tokens): Timing {
  const preDispatch = tenths(1.5 + random.logNormal(4, 0.5));
  if (outcome.kind === 'failed') {
    const total =
      outcome.reason === 'proxy_guillotine'
        ? GUILLOTINE_MS + preDispatch + random.between(0, 40)
        : preDispatch + (outcome.atGateway ? random.between(0.3, 3) : random.logNormal(300, 0.7));
    return { total: tenths(total), ttft: null, tpot: null, preDispatch };
  }
  // Time to first token grows with the prompt the upstream has to read first.
  const firstToken = random.logNormal(route.ttftMs, 0.35) + tokens.prompt * 0.02;
  const perToken = random.logNormal(Math.max(route.tpotMs, 0.1), 0.25);
  if (!stream) {
    return {
      total: tenths(preDispatch + firstToken + tokens.generated * perToken + 1),
      ttft: null,
      tpot: null,
      preDispatch,
    };
  }
  if (outcome.kind === 'cut' && outcome.beforeFirstToken) {
    return {
      total: tenths(preDispatch + firstToken * random.between(0.2, 1) + 0.5),
      ttft: null,
      tpot: null,
      preDispatch,
    };
  }
  const ttft = tenths(preDispatch + firstToken);
  const total = tenths(ttft + tokens.generated * perToken + 0.5 + random.logNormal(3, 0.5));
  return { total, ttft, tpot: tenths(perToken), preDispatch };
}

function tenths(ms: number): number {
  return Math.round(ms * 10) / 10;
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}
