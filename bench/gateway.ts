// The gateway's figures of issue 32 section 3: what the OpenAI-compatible gateway adds over calling the
// upstream directly and over a bare pass-through proxy, its throughput, how soon its rows can be read,
// and how soon a revoked key is refused. The upstream (answering at once) and the proxy run as child
// processes and the gateway in the server's; this process drives the load, the open-loop cases from
// a process of their own (open-loop-child.ts).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import BetterSqlite3 from 'better-sqlite3';
import type { ApiClient } from './http.js';
import {
  FIRST_BYTE_SPAN,
  OPEN_LOOP_ROUNDS,
  agent,
  caseLength,
  call,
  ok,
  targetHeaders,
  type Interleaved,
  type OpenLoopSpec,
  type Run,
  type Target,
} from './open-loop.js';
import { ROOT, startChild, type Child } from './processes.js';
import type { GatewayCounts, GatewayReport, GatewayTargets, OpenLoopTiming, RevocationResult } from './report.js';
import { percentile, round, sleep } from './stats.js';

/** Requests per second of the open-loop cases. */
export const GATEWAY_RATE_RPS = 500;
/** The server's SVC_RATE_LIMIT_CEILING in the benchmark: the bench keys take it, so that no request is refused as over the limit. */
export const GATEWAY_RATE_CEILING = 100_000_000;
const THROUGHPUT_CONNECTIONS = 64;
const VISIBILITY_TIMEOUT_MS = 10_000;

/** How many of each measurement the gateway section takes, unless told. */
export const GATEWAY_COUNTS: GatewayCounts = {
  openLoopRounds: OPEN_LOOP_ROUNDS,
  throughputRounds: 3,
  visibilitySamples: 50,
  revocationTrials: 200,
};

/** The gateway's group commit: the visibility samples are spread over one period of it. */
const FLUSH_MS = 200;

/** A few prompts, the same for every target: the upstream's answer (8 to 160 tokens) depends on them. */
const PROMPTS = Array.from({ length: 16 }, (_, i) => `Benchmark prompt ${i}: what does a gateway add to a request?`);

type Log = (line: string) => void;

/** The simulated upstream, answering at once, in a process of its own. */
export function startUpstream(temp: string): Promise<Child> {
  return startChild('bench/simulated-upstream-child.ts', [], {
    logPath: join(temp, 'upstream.log'),
    ready: /^listening at (http:\/\/\S+)$/m,
  });
}

/** The bare pass-through proxy (bench/bare-proxy.ts) in front of `upstreamUrl`. */
export function startBareProxy(temp: string, upstreamUrl: string): Promise<Child> {
  return startChild('bench/bare-proxy.ts', [upstreamUrl], {
    logPath: join(temp, 'proxy.log'),
    ready: /^listening at (http:\/\/\S+)$/m,
  });
}

/** The service token the benchmark's gateway in another process presents (fresh each run). */
const SERVICE_TOKEN = randomBytes(24).toString('hex');

/**
 * The server's flags and environment for a gateway on a free port in front of `upstreamUrl`, and
 * an internal API for the gateway in another process (`startRemoteGateway`).
 */
export function gatewayServerSetup(upstreamUrl: string): { args: string[]; env: NodeJS.ProcessEnv } {
  return {
    args: ['--gateway-port', '0'],
    env: {
      SVC_UPSTREAM_URL: upstreamUrl,
      SVC_RATE_LIMIT_CEILING: String(GATEWAY_RATE_CEILING),
      SVC_GATEWAY_TOKENS: SERVICE_TOKEN,
    },
  };
}

/** `npm run gateway` in a process of its own, beside the server at `apiUrl`, in front of `upstreamUrl`. */
export function startRemoteGateway(temp: string, apiUrl: string, upstreamUrl: string): Promise<Child> {
  return startChild('server/cli.ts', ['gateway', '--control-plane', new URL(apiUrl).origin, '--port', '0'], {
    logPath: join(temp, 'remote-gateway.log'),
    ready: /^Gateway listening at (http:\/\/\S+\/v1)/m,
    env: { SVC_GATEWAY_TOKEN: SERVICE_TOKEN, SVC_UPSTREAM_URL: upstreamUrl },
  });
}

/** The gateway's address, from the line server/serve.ts prints once it listens. */
export async function gatewayAddress(server: Child, timeoutMs = 10_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = /^Gateway listening at (http:\/\/\S+\/v1)/m.exec(server.log());
    if (match) return match[1]!;
    if (Date.now() > deadline) throw new Error(`the server announced no gateway:\n${server.log().slice(-2000)}`);
    await sleep(50);
  }
}

/** The share of all cores busy over `ms` (from /proc/stat), or null where there is none. */
async function busyPercent(ms: number): Promise<number | null> {
  const sample = async () => {
    try {
      const fields = (await readFile('/proc/stat', 'utf8')).split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
      // user nice system idle iowait irq softirq steal: idle and iowait are not busy.
      const total = fields.slice(0, 8).reduce((sum, value) => sum + value, 0);
      return { total, idle: fields[3]! + fields[4]! };
    } catch {
      return null;
    }
  };
  const first = await sample();
  await sleep(ms);
  const second = await sample();
  if (!first || !second || second.total === first.total) return null;
  return round(100 * (1 - (second.idle - first.idle) / (second.total - first.total)), 0);
}

export function chatBody(model: string, prompt: string, stream: boolean): string {
  return JSON.stringify({ model, messages: [{ role: 'user', content: prompt }], ...(stream ? { stream: true } : {}) });
}

export function timing(run: Run): OpenLoopTiming {
  const sorted = [...run.samples].sort((a, b) => a - b);
  const sum = sorted.reduce((total, value) => total + value, 0);
  // Null for a round with no answer: JSON has no NaN, and 0 would read as fast.
  const roundP99s = run.roundEnds.map((end, i) => {
    const own = run.samples.slice(run.roundEnds[i - 1] ?? 0, end).sort((a, b) => a - b);
    return own.length > 0 ? round(percentile(own, 99), 3) : null;
  });
  return {
    sent: run.sent,
    ok: run.ok,
    failed: run.failed,
    p50: round(percentile(sorted, 50), 3),
    p99: round(percentile(sorted, 99), 3),
    mean: round(sum / sorted.length, 3),
    max: round(sorted[sorted.length - 1] ?? NaN, 3),
    maxSendLagMs: round(run.maxSendLagMs, 3),
    roundP99s,
  };
}

/**
 * One open-loop case (open-loop.ts) driven from a process of its own (open-loop-child.ts): what it
 * times is then the targets, not this process's collector and heap. Its runs by target name.
 */
export function runOpenLoop(spec: OpenLoopSpec, log: Log): Promise<Record<string, Run>> {
  return new Promise<Record<string, Run>>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/open-loop-child.ts'], {
      cwd: ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      err += chunk;
      for (const line of chunk.split('\n')) if (line.startsWith('  round ')) log(line);
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code === 0) resolve(JSON.parse(out) as Record<string, Run>);
      else reject(new Error(`the open-loop client exited with ${code}:\n${err.slice(-2000)}`));
    });
    child.stdin.end(JSON.stringify(spec));
  });
}

/**
 * A streamed first-byte case's schedule: the upstream (and `alone`) in runs of their own, the proxy
 * and the gateway in one schedule, request by request in turn, each at the case's rate. The
 * gateway's p99 is judged within 1 ms of the proxy's, and timed in runs one after the other each
 * p99 was where the machine's stalls fell: the same build passed and failed by several ms from run
 * to run. In one schedule a stall falls on both alike.
 */
export const firstByteSchedule = (
  { direct, proxy, gateway }: Record<'direct' | 'proxy' | 'gateway', Target>,
  ...alone: Target[]
): (Target | Interleaved)[] => [
  direct,
  ...alone,
  { name: 'proxy beside gateway', members: [proxy, gateway], eachAtRate: true },
];

/**
 * One open-loop case for the three targets: the upstream, the bare proxy and the gateway; `seconds`
 * and `rounds` are the latency cases' (a first-byte case takes more, caseLength).
 */
async function openLoopCase(
  targets: (Target | Interleaved)[],
  bodies: readonly string[],
  seconds: number,
  rounds: number,
  until: 'end' | 'firstByte',
  log: Log,
): Promise<GatewayTargets<OpenLoopTiming>> {
  const length = caseLength(until, seconds, rounds);
  const runs = await runOpenLoop({ targets, bodies, rps: GATEWAY_RATE_RPS, ...length, until }, log);
  return { direct: timing(runs.direct!), proxy: timing(runs.proxy!), gateway: timing(runs.gateway!) };
}

interface CannonRun {
  rps: number;
  ok: number;
  errors: number;
}

/** Closed loop with autocannon, non-streamed; `onId` hears the x-request-id of every 2xx answer. */
async function cannon(
  target: Target,
  body: string,
  seconds: number,
  onId: (id: string | null) => void,
): Promise<CannonRun> {
  const url = `${target.url}${target.path ?? '/chat/completions'}`;
  const headers = targetHeaders(target);
  const result = await autocannon({
    url,
    connections: THROUGHPUT_CONNECTIONS,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        path: new URL(url).pathname,
        headers,
        body,
        onResponse: (status, _body, _context, answerHeaders) => {
          if (!ok(status)) return;
          const id = answerHeaders['x-request-id'];
          onId(typeof id === 'string' ? id : null);
        },
      },
    ],
  });
  return { rps: result.requests.average, ok: result['2xx'], errors: result.errors + result.timeouts + result.non2xx };
}

/**
 * Throughput of the proxy and the gateway (on chat completions, or another API's path), alternating
 * for `rounds` rounds (each run after a one-second warm-up), medians compared. Then every 2xx
 * answer of the gateway's runs, warm-ups included, is looked up in telemetry.db among the rows of
 * its key.
 */
export async function throughputCase(
  proxy: Target,
  gateway: Target,
  keyId: string,
  body: string,
  seconds: number,
  rounds: number,
  telemetryPath: string,
  log: Log,
): Promise<GatewayReport['throughput']> {
  const runSeconds = Math.max(1, Math.round(seconds / rounds));
  const ids: string[] = [];
  let answered = 0;
  let withoutId = 0;
  const onGatewayAnswer = (id: string | null) => {
    answered++;
    if (id === null) withoutId++;
    else ids.push(id);
  };
  const ignore = () => {};
  const errors = { proxy: 0, gateway: 0 };
  const runs: GatewayReport['throughput']['rounds'] = [];
  for (let r = 0; r < rounds; r++) {
    await cannon(proxy, body, 1, ignore);
    const proxyRun = await cannon(proxy, body, runSeconds, ignore);
    const warm = await cannon(gateway, body, 1, onGatewayAnswer);
    const gatewayRun = await cannon(gateway, body, runSeconds, onGatewayAnswer);
    errors.proxy += proxyRun.errors;
    errors.gateway += warm.errors + gatewayRun.errors;
    runs.push({ proxyRps: proxyRun.rps, gatewayRps: gatewayRun.rps });
    log(`  round ${r + 1}/${rounds}: proxy ${round(proxyRun.rps, 0)} req/s, gateway ${round(gatewayRun.rps, 0)} req/s`);
  }
  const median = (values: number[]) =>
    percentile(
      [...values].sort((a, b) => a - b),
      50,
    );
  const proxyRps = median(runs.map((r) => r.proxyRps));
  const gatewayRps = median(runs.map((r) => r.gatewayRps));
  log(`  checking that the gateway's ${answered} answers each have a row`);
  const rows = await rowsOfKey(telemetryPath, keyId, answered, withoutId === 0 ? ids : null);
  return {
    connections: THROUGHPUT_CONNECTIONS,
    seconds: runSeconds,
    rounds: runs,
    proxyRps,
    gatewayRps,
    ratio: round(gatewayRps / proxyRps, 3),
    errors,
    rows,
  };
}

/**
 * The key's rows in telemetry.db once the gateway has written what it holds (the count has reached
 * `answered` and stopped growing, or 15 s have gone), matched by req_id when every answer carried one.
 */
async function rowsOfKey(
  telemetryPath: string,
  keyId: string,
  answered: number,
  ids: string[] | null,
): Promise<GatewayReport['throughput']['rows']> {
  const db = new BetterSqlite3(telemetryPath, { readonly: true, fileMustExist: true });
  try {
    const count = db.prepare('SELECT COUNT(*) FROM requests WHERE key_id = ?').pluck();
    const deadline = performance.now() + 15_000;
    let last = -1;
    let steady = 0;
    while (performance.now() < deadline && steady < 3) {
      const now = Number(count.get(keyId));
      steady = now >= answered && now === last ? steady + 1 : 0;
      last = now;
      await sleep(FLUSH_MS);
    }
    const rowIds = new Set(db.prepare('SELECT req_id FROM requests WHERE key_id = ?').pluck().all(keyId) as string[]);
    if (ids === null) {
      return {
        answered,
        found: Math.min(rowIds.size, answered),
        missing: Math.max(0, answered - rowIds.size),
        extra: Math.max(0, rowIds.size - answered),
        checkedBy: 'row count',
      };
    }
    const found = ids.filter((id) => rowIds.has(id)).length;
    return { answered, found, missing: answered - found, extra: rowIds.size - found, checkedBy: 'x-request-id' };
  } finally {
    db.close();
  }
}

/**
 * A request's answer read → its row found by GET /analytics/requests (searched by its req_id, polled
 * every 5 ms), `count` times. The samples start at points spread over one group-commit period.
 */
async function rowVisibility(
  api: ApiClient,
  gateway: Target,
  keyId: string,
  bodies: readonly string[],
  count: number,
  log: Log,
): Promise<GatewayReport['rowVisible']> {
  const dispatcher = agent();
  const samples: number[] = [];
  let notSeen = 0;
  try {
    for (let i = 0; i < count; i++) {
      await sleep(((i * 37) % count) * (FLUSH_MS / count));
      const answer = await call(dispatcher, gateway, bodies[i % bodies.length]!);
      if (!ok(answer.status)) throw new Error(`the gateway answered ${answer.status} to a visibility sample`);
      if (answer.requestId === null) throw new Error('the gateway answered without x-request-id: no row to look for');
      const path = `/analytics/requests?time_range=1h&key_id=${keyId}&search=${encodeURIComponent(answer.requestId)}&limit=1`;
      let seenAt: number | null = null;
      while (performance.now() - answer.endAt < VISIBILITY_TIMEOUT_MS) {
        const page = JSON.parse(await api.get(path)) as { total: number };
        if (page.total > 0) {
          seenAt = performance.now();
          break;
        }
        await sleep(5);
      }
      if (seenAt === null) notSeen++;
      else samples.push(seenAt - answer.endAt);
    }
  } finally {
    await dispatcher.close();
  }
  const sorted = samples.sort((a, b) => a - b);
  log(`  ${sorted.length} rows seen, ${notSeen} not seen`);
  return {
    samples: sorted.length,
    p50: round(percentile(sorted, 50), 1),
    p95: round(percentile(sorted, 95), 1),
    max: round(sorted[sorted.length - 1] ?? NaN, 1),
    notSeen,
  };
}

export interface CreatedKey {
  id: string;
  api_key: string;
  rate_limit_rpm: number;
}

export async function createKey(
  api: ApiClient,
  projectId: string,
  name: string,
  platformMaxRate: boolean,
): Promise<CreatedKey> {
  const answer = await api.send('POST', '/keys', {
    project_id: projectId,
    name,
    ...(platformMaxRate ? { use_platform_max_rate_limit: true } : {}),
  });
  if (answer.status !== 201) throw new Error(`POST /keys: ${answer.status} ${answer.text.slice(0, 500)}`);
  return JSON.parse(answer.text) as CreatedKey;
}

// ─────────────────────────────────────────────────────────────────────────────────────────────────
// REVOCATION → REFUSAL, for any gateway.
// Takes the gateway's base address (…/v1) and a client signed in to the control plane whose keys that
// gateway serves: point it at a gateway in another process (`npm run gateway`, not built yet) to
// measure how soon a revocation made through the API reaches it. The gateway must have an upstream
// for `model`. Each trial: create a key, use it (must be answered 2xx), DELETE /keys/{id}, then call
// at once and again until refused (401), for at most `maxWaitMs`.
// ─────────────────────────────────────────────────────────────────────────────────────────────────
export async function measureRevocation(
  gatewayUrl: string,
  api: ApiClient,
  options: { projectId: string; model: string; trials?: number; maxWaitMs?: number; where?: string },
): Promise<RevocationResult> {
  const trials = options.trials ?? GATEWAY_COUNTS.revocationTrials;
  const maxWaitMs = options.maxWaitMs ?? 5_000;
  const body = chatBody(options.model, 'Revocation trial: answer briefly.', false);
  const dispatcher = agent();
  let servedAfterDelete = 0;
  let refusedAtOnce = 0;
  let neverRefused = 0;
  const delays: number[] = [];
  try {
    for (let i = 0; i < trials; i++) {
      const key = await createKey(api, options.projectId, `bench revocation ${i + 1}`, false);
      const target: Target = { name: 'gateway', url: gatewayUrl, authorization: `Bearer ${key.api_key}` };
      const used = await call(dispatcher, target, body);
      if (!ok(used.status)) throw new Error(`a new key was answered ${used.status} before its revocation`);
      const revoked = await api.send('DELETE', `/keys/${key.id}`);
      if (revoked.status !== 200) throw new Error(`DELETE /keys/${key.id}: ${revoked.status} ${revoked.text}`);
      const deletedAt = performance.now();
      let first = true;
      for (;;) {
        const after = await call(dispatcher, target, body);
        if (after.status === 401) {
          delays.push(after.endAt - deletedAt);
          if (first) refusedAtOnce++;
          break;
        }
        if (ok(after.status)) servedAfterDelete++;
        first = false;
        if (after.endAt - deletedAt > maxWaitMs) {
          neverRefused++;
          break;
        }
      }
    }
  } finally {
    await dispatcher.close();
  }
  const sorted = delays.sort((a, b) => a - b);
  return {
    gatewayUrl,
    where: options.where ?? `at ${gatewayUrl}`,
    trials,
    servedAfterDelete,
    refusedAtOnce,
    neverRefused,
    firstRefusalMs: {
      p50: round(percentile(sorted, 50), 3),
      p95: round(percentile(sorted, 95), 3),
      max: round(sorted[sorted.length - 1] ?? NaN, 3),
    },
  };
}

export interface GatewayBenchOptions {
  /** Signed in to the control plane whose gateway is measured. */
  api: ApiClient;
  /** Base addresses, …/v1. */
  upstreamUrl: string;
  proxyUrl: string;
  gatewayUrl: string;
  /** A gateway in another process (`npm run gateway`), where revocation is measured. */
  remoteGatewayUrl: string;
  /** The server's telemetry.db, where the throughput runs' rows are looked up. */
  telemetryPath: string;
  /** Timed seconds per target of each open-loop case, and of all throughput runs of a target. */
  seconds: number;
  /** GATEWAY_COUNTS unless told. */
  counts?: GatewayCounts;
  log: Log;
}

/** Every gateway figure but the memory and the verdicts (report.ts `gatewayFigures`). */
export async function measureGateway(
  o: GatewayBenchOptions,
): Promise<Omit<GatewayReport, 'figures' | 'memory' | 'apis' | 'failover'>> {
  const { api, log } = o;
  const counts = o.counts ?? GATEWAY_COUNTS;
  const loadBefore = loadavg()[0]!;
  // The benchmark's processes share the machine already: anything else running skews every figure.
  const busyBefore = await busyPercent(1000);
  if (busyBefore !== null && busyBefore > 10)
    log(`warning: the machine is ${busyBefore}% busy while the benchmark idles: the figures will be unsteady`);
  const projects = JSON.parse(await api.get('/projects')) as { projects: { id: string }[] };
  const projectId = projects.projects[0]?.id;
  if (!projectId) throw new Error('the organisation has no project');
  const catalogue = JSON.parse(await api.get('/models')) as { models: { id: string; active: boolean }[] };
  const model = catalogue.models.find((m) => m.active)?.id;
  if (!model) throw new Error('the catalogue has no active route');

  const latencyKey = await createKey(api, projectId, 'bench gateway latency', true);
  const throughputKey = await createKey(api, projectId, 'bench gateway throughput', true);
  const visibilityKey = await createKey(api, projectId, 'bench gateway visibility', true);
  if (latencyKey.rate_limit_rpm < GATEWAY_RATE_CEILING)
    log(`warning: the bench keys allow ${latencyKey.rate_limit_rpm} requests/minute only (SVC_RATE_LIMIT_CEILING)`);

  // The same request to each target, with the same header: the upstream takes any key.
  const bearer = (key: CreatedKey) => `Bearer ${key.api_key}`;
  const three: Record<'direct' | 'proxy' | 'gateway', Target> = {
    direct: { name: 'direct', url: o.upstreamUrl, authorization: bearer(latencyKey) },
    proxy: { name: 'proxy', url: o.proxyUrl, authorization: bearer(latencyKey) },
    gateway: { name: 'gateway', url: o.gatewayUrl, authorization: bearer(latencyKey) },
  };
  const targets = [three.direct, three.proxy, three.gateway];
  const plain = PROMPTS.map((prompt) => chatBody(model, prompt, false));
  const streamed = PROMPTS.map((prompt) => chatBody(model, prompt, true));

  // Each target answers, and warms (JIT, connections) before anything is timed: streamed too, for
  // the gateway's reading of a stream's events runs for streams alone, while the proxy's path is
  // the same for both. Warmed on answers alone, the gateway's first-byte p99 was 29.6 and 36.6 ms
  // against the proxy's 21.4 and 18.5; warmed on streams as well, 17.8 and 19.7 against 18.1 and
  // 17.4 (alternating scratch runs of this section's two cases on the 10M store).
  let requestIdHeader = true;
  const warm = agent();
  try {
    for (const target of targets) {
      const first = await call(warm, target, plain[0]!);
      if (!ok(first.status)) throw new Error(`${target.name} (${target.url}) answered ${first.status}`);
      if (target.name === 'gateway' && first.requestId === null) {
        requestIdHeader = false;
        log('warning: the gateway answers without x-request-id: rows are counted, not matched');
      }
      for (const body of [plain[0]!, streamed[0]!]) {
        const until = performance.now() + 1000;
        const worker = async () => {
          while (performance.now() < until) await call(warm, target, body);
        };
        await Promise.all(Array.from({ length: 8 }, worker));
      }
    }
  } finally {
    await warm.close();
  }

  log(`gateway: non-streamed latency, ${GATEWAY_RATE_RPS} req/s open loop, ${o.seconds} s per target`);
  const latency = await openLoopCase(targets, plain, o.seconds, counts.openLoopRounds, 'end', log);
  const added = (through: OpenLoopTiming) => ({
    p50: round(through.p50 - latency.direct.p50, 3),
    p99: round(through.p99 - latency.direct.p99, 3),
  });

  log(
    `gateway: streamed time to first byte, ${GATEWAY_RATE_RPS} req/s open loop, ${caseLength('firstByte', o.seconds, counts.openLoopRounds).seconds} s per target, the proxy and the gateway in one schedule`,
  );
  const ttfb = await openLoopCase(
    firstByteSchedule(three),
    streamed,
    o.seconds,
    counts.openLoopRounds,
    'firstByte',
    log,
  );

  log(`gateway: throughput, ${THROUGHPUT_CONNECTIONS} connections, against the bare proxy`);
  const throughputTarget = (target: Target): Target => ({ ...target, authorization: bearer(throughputKey) });
  const throughput = await throughputCase(
    throughputTarget(targets[1]!),
    throughputTarget(targets[2]!),
    throughputKey.id,
    plain[0]!,
    o.seconds,
    counts.throughputRounds,
    o.telemetryPath,
    log,
  );

  const samples = counts.visibilitySamples;
  log(`gateway: request end → row visible, ${samples} samples`);
  const visibilityTarget = { ...targets[2]!, authorization: bearer(visibilityKey) };
  const rowVisible = requestIdHeader
    ? await rowVisibility(api, visibilityTarget, visibilityKey.id, plain, samples, log)
    : { samples: 0, p50: NaN, p95: NaN, max: NaN, notSeen: samples };

  log(`gateway: revocation → refusal, ${counts.revocationTrials} trials, through a gateway in another process`);
  const revocation = await measureRevocation(o.remoteGatewayUrl, api, {
    projectId,
    model,
    trials: counts.revocationTrials,
    where: 'in another process (npm run gateway)',
  });

  return {
    setup: {
      model,
      upstream: 'server/gateway/simulated-upstream.ts, answering at once, in a process of its own',
      rateRps: GATEWAY_RATE_RPS,
      secondsPerTarget: o.seconds,
      rounds: counts.openLoopRounds,
      firstByteSpan: FIRST_BYTE_SPAN,
      requestIdHeader,
      rateLimitRpm: latencyKey.rate_limit_rpm,
      loadAverage: { before: round(loadBefore, 2), after: round(loadavg()[0]!, 2) },
      busyBeforePercent: busyBefore,
    },
    latency: { ...latency, proxyAdded: added(latency.proxy), gatewayAdded: added(latency.gateway) },
    ttfb,
    throughput,
    rowVisible,
    revocation,
  };
}
