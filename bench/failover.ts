// The failover figures of issue 52 section 5, each a ratio to a reference timed in the same run:
// a healthy two-target route against a one-target route, a route whose first target refuses
// connections against the healthy one, the attempts a dead first target receives once its
// breaker has opened and how soon it opens, and `routes apply` → every gateway (the server's and
// `npm run gateway` in another process) serving the new version. The routes are applied to the
// bench's server by the operator's command (`npm run admin -- routes apply`) on its data folder.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { DEFAULT_FAILOVER } from '../server/domain/routes-document.js';
import { chatBody, createKey, runOpenLoop, timing } from './gateway.js';
import type { ApiClient } from './http.js';
import { agent, ok, type Interleaved, type Target } from './open-loop.js';
import { ROOT, startChild, type Child } from './processes.js';
import type { FailoverCounts, FailoverReport, Tail } from './report.js';
import { percentile, round, sleep } from './stats.js';

/**
 * The open-loop case of the four targets: its rate, well below what saturates a two-core machine
 * (a queue would time itself, not the routes), and timed seconds per target (at most) over
 * `FailoverCounts.rounds` rounds, the order reversed every other one, so that a drift of a shared
 * machine weighs on each alike.
 */
const RATE_RPS = 200;
const SECONDS_PER_TARGET = 6;
/** Warm-up before each timed run: the refused route's first one is its outage's first second. */
const WARM_SECONDS = 1;
const OUTAGE_RPS = 20;
const HEALTHY_SECONDS = 2;
const DEFAULT_OUTAGE_SECONDS = 60;
const APPLY_WAIT_MS = 10_000;
const APPLY_POLL_MS = 5;
/** What every target asks the simulated upstream for (it serves any model). */
const UPSTREAM_MODEL = 'gpt-4o-mini-bench';
const PRICE = { input: 10, output: 20, cache_write: 0, cache_read: 0 };

type Log = (line: string) => void;

/** How many of each measurement the failover section takes, unless told. */
export const FAILOVER_COUNTS: FailoverCounts = { rounds: 4, applySamples: 8 };

export interface FailoverBenchOptions {
  api: ApiClient;
  /** The server's data folder, where `routes apply` stores the documents. */
  dataDir: string;
  temp: string;
  /** Base addresses, …/v1. */
  upstreamUrl: string;
  gatewayUrl: string;
  remoteGatewayUrl: string;
  /** Seconds of the outage case after the kill (default 60). */
  outageSeconds?: number;
  /** Timed seconds per target of the open-loop case (at most SECONDS_PER_TARGET; default that). */
  seconds?: number;
  /** FAILOVER_COUNTS unless told. */
  counts?: FailoverCounts;
  log: Log;
}

/** `npm run admin -- <args> --data-dir <dataDir>` in a process of its own: its output, start and exit. */
function admin(dataDir: string, args: string[]): Promise<{ out: string; startedAt: number; exitedAt: number }> {
  return new Promise((resolve, reject) => {
    const startedAt = performance.now();
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'server/cli.ts', 'admin', ...args, '--data-dir', dataDir],
      {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let exitedAt = NaN;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.once('error', reject);
    child.once('exit', () => (exitedAt = performance.now()));
    child.once('close', (code) => {
      if (code === 0) resolve({ out, startedAt, exitedAt });
      else reject(new Error(`admin ${args.join(' ')} exited with ${code}:\n${out.slice(-2000)}`));
    });
  });
}

/** A port nothing listens on: taken from the system, then closed. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** The routes document as YAML reads it (routes export), to edit. */
type Document = { providers: Record<string, unknown>; routes: Record<string, unknown> };

const target = (provider: string) => ({ provider, model: UPSTREAM_MODEL });
const route = (...providers: string[]) => ({
  kind: 'chat',
  price: PRICE,
  strategy: 'fallback',
  targets: providers.map(target),
});

/** The document, written to a file of its own and applied; the apply's start and exit. */
async function apply(dataDir: string, temp: string, document: Document, name: string) {
  const file = join(temp, `routes-${name}.yaml`);
  writeFileSync(file, stringifyYaml(document));
  return admin(dataDir, ['routes', 'apply', '--file', file]);
}

const tail = (sorted: number[]) => ({
  p50: round(percentile(sorted, 50), 1),
  p95: round(percentile(sorted, 95), 1),
  max: round(sorted[sorted.length - 1] ?? NaN, 1),
});

interface OutageCall {
  sentAt: number;
  status: number;
  attempts: number;
  servedBy: string | null;
  requestId: string | null;
}

/**
 * `bench/mortal` at OUTAGE_RPS on a fixed schedule: HEALTHY_SECONDS with its first target's
 * upstream alive, then that process SIGKILLed, then `outageSeconds` more. Each answer's
 * `x-svc-attempts` and `x-svc-served-by` are kept.
 */
async function outageCase(
  mortal: Child,
  gatewayUrl: string,
  authorization: string,
  outageSeconds: number,
  log: Log,
): Promise<{ calls: OutageCall[]; killedAt: number; sent: number; failed: number }> {
  const dispatcher = agent();
  const body = chatBody('bench/mortal', 'Failover benchmark: answer briefly.', false);
  const interval = 1000 / OUTAGE_RPS;
  const total = OUTAGE_RPS * (HEALTHY_SECONDS + outageSeconds);
  const killIndex = OUTAGE_RPS * HEALTHY_SECONDS;
  const calls: OutageCall[] = [];
  const pending: Promise<void>[] = [];
  let failed = 0;
  let killedAt = NaN;
  const start = performance.now() + 5;
  try {
    for (let i = 0; i < total; i++) {
      const scheduled = start + i * interval;
      await sleep(Math.max(0, scheduled - performance.now()));
      if (i === killIndex) {
        process.kill(mortal.pid, 'SIGKILL');
        killedAt = performance.now();
        log(`  upstream of bench-mortal (pid ${mortal.pid}) killed`);
      }
      if (i > killIndex && (i - killIndex) % (OUTAGE_RPS * 15) === 0)
        log(`  ${(i - killIndex) / OUTAGE_RPS} s into the outage`);
      const sentAt = performance.now();
      pending.push(
        request(`${gatewayUrl}/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization },
          body,
          dispatcher,
        }).then(
          async (answer) => {
            await answer.body.dump();
            const header = (name: string) => {
              const value = answer.headers[name];
              return typeof value === 'string' ? value : null;
            };
            if (!ok(answer.statusCode)) failed++;
            calls.push({
              sentAt,
              status: answer.statusCode,
              attempts: Number(header('x-svc-attempts') ?? NaN),
              servedBy: header('x-svc-served-by'),
              requestId: header('x-request-id'),
            });
          },
          () => {
            failed++;
          },
        ),
      );
    }
    await Promise.all(pending);
  } finally {
    await dispatcher.close();
  }
  calls.sort((a, b) => a.sentAt - b.sentAt);
  return { calls, killedAt, sent: total, failed };
}

/** The rows of `requestIds` through GET /analytics/requests: their attempts on `dead` that were made (not skipped). */
async function rowAttempts(
  api: ApiClient,
  keyId: string,
  requestIds: Set<string>,
  dead: string,
): Promise<{ matched: number; deadAttempts: number } | null> {
  type Row = { req_id: string; upstream: { attempts?: { target: string; decision: string }[] | null } | null };
  const deadline = performance.now() + 10_000;
  for (;;) {
    let matched = 0;
    let deadAttempts = 0;
    for (let offset = 0; ; offset += 200) {
      const page = JSON.parse(
        await api.get(`/analytics/requests?time_range=1h&key_id=${keyId}&limit=200&offset=${offset}`),
      ) as { total: number; requests: Row[] };
      for (const row of page.requests) {
        if (!requestIds.has(row.req_id)) continue;
        matched++;
        for (const entry of row.upstream?.attempts ?? [])
          if (entry.target === dead && entry.decision !== 'skipped') deadAttempts++;
      }
      if (page.requests.length < 200 || offset + 200 >= page.total) break;
    }
    if (matched >= requestIds.size) return { matched, deadAttempts };
    if (performance.now() > deadline) return matched > 0 ? { matched, deadAttempts } : null;
    await sleep(250);
  }
}

/** Polls `model` at a gateway until answered 200, or until `deadline`: the time of the 200's answer, or null. */
async function firstServed(
  dispatcher: ReturnType<typeof agent>,
  gatewayUrl: string,
  authorization: string,
  model: string,
  deadline: number,
): Promise<number | null> {
  const body = chatBody(model, 'Routes apply: answer briefly.', false);
  while (performance.now() < deadline) {
    const answer = await request(`${gatewayUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization },
      body,
      dispatcher,
    });
    await answer.body.dump();
    if (answer.statusCode === 200) return performance.now();
    if (answer.statusCode !== 404) throw new Error(`${gatewayUrl} answered ${answer.statusCode} for ${model}`);
    await sleep(APPLY_POLL_MS);
  }
  return null;
}

export async function measureFailover(o: FailoverBenchOptions): Promise<FailoverReport> {
  const { api, log } = o;
  const counts = o.counts ?? FAILOVER_COUNTS;
  const loadBefore = loadavg()[0]!;
  const outageSeconds = o.outageSeconds ?? DEFAULT_OUTAGE_SECONDS;
  const secondsPerTarget = Math.min(SECONDS_PER_TARGET, o.seconds ?? SECONDS_PER_TARGET);
  const projects = JSON.parse(await api.get('/projects')) as { projects: { id: string }[] };
  const projectId = projects.projects[0]!.id;
  const key = await createKey(api, projectId, 'bench failover', true);
  const outageKey = await createKey(api, projectId, 'bench failover outage', true);
  const authorization = `Bearer ${key.api_key}`;

  const mortal = await startChild('bench/simulated-upstream-child.ts', [], {
    logPath: join(o.temp, 'upstream-mortal.log'),
    ready: /^listening at (http:\/\/\S+)$/m,
  });
  try {
    const port = await closedPort();
    const exported = join(o.temp, 'routes-exported.yaml');
    await admin(o.dataDir, ['routes', 'export', '--out', exported]);
    const document = parseYaml(readFileSync(exported, 'utf8')) as Document;
    const provider = (baseUrl: string) => ({ api: 'openai', base_url: baseUrl });
    Object.assign(document.providers, {
      'bench-a': provider(o.upstreamUrl),
      'bench-b': provider(o.upstreamUrl),
      'bench-c': provider(o.upstreamUrl),
      'bench-refused': provider(`http://127.0.0.1:${port}/v1`),
      'bench-mortal': provider(mortal.url),
    });
    Object.assign(document.routes, {
      'bench/single': route('bench-a'),
      'bench/pair': route('bench-a', 'bench-b'),
      'bench/refused': route('bench-refused', 'bench-b'),
      'bench/mortal': route('bench-mortal', 'bench-c'),
    });
    const applied = await apply(o.dataDir, o.temp, document, 'failover');
    log(
      `failover: routes applied (${applied.out.trim().split('\n').pop()}); first target of bench/refused at port ${port}`,
    );

    // Both gateways serve the new routes before anything is timed.
    const warm = agent();
    try {
      for (const url of [o.gatewayUrl, o.remoteGatewayUrl]) {
        for (const model of ['bench/single', 'bench/pair', 'bench/mortal']) {
          const at = await firstServed(warm, url, authorization, model, performance.now() + APPLY_WAIT_MS);
          if (at === null) throw new Error(`${url} never served ${model}`);
        }
      }
    } finally {
      await warm.close();
    }

    log(`failover: one target, two, first refused; ${RATE_RPS} req/s open loop, ${secondsPerTarget} s per target`);
    const prompts = Array.from({ length: 16 }, (_, i) => `Failover benchmark prompt ${i}: what does a gateway add?`);
    const bodies = (model: string) => prompts.map((prompt) => chatBody(model, prompt, false));
    // The routes are compared with each other: interleaved, so that a stall falls on each alike.
    // Run one after the other, the two-target route's p99 over the one-target's went from 0.4× to
    // 1.7× between runs of the same code.
    const routeTarget = (name: string): Target => ({
      name,
      url: o.gatewayUrl,
      authorization,
      bodies: bodies(`bench/${name}`),
    });
    const targets: (Target | Interleaved)[] = [
      { name: 'direct', url: o.upstreamUrl, authorization, bodies: bodies(UPSTREAM_MODEL) },
      { name: 'routes', members: [routeTarget('single'), routeTarget('pair'), routeTarget('refused')] },
    ];
    const runs = await runOpenLoop(
      {
        targets,
        bodies: bodies(UPSTREAM_MODEL),
        rps: RATE_RPS,
        seconds: secondsPerTarget,
        until: 'end',
        warmSeconds: WARM_SECONDS,
        rounds: counts.rounds,
      },
      log,
    );
    const latency = {
      direct: timing(runs.direct!),
      single: timing(runs.single!),
      pair: timing(runs.pair!),
      refused: timing(runs.refused!),
    };
    const added = (name: 'single' | 'pair' | 'refused'): Tail => ({
      p50: round(latency[name].p50 - latency.direct.p50, 3),
      p99: round(latency[name].p99 - latency.direct.p99, 3),
    });

    log(`failover: outage of bench/mortal's first target, ${OUTAGE_RPS} req/s, ${outageSeconds} s after the kill`);
    const outage = await outageCase(mortal, o.gatewayUrl, `Bearer ${outageKey.api_key}`, outageSeconds, log);
    const dead = `bench-mortal/${UPSTREAM_MODEL}`;
    const deadAttempts = (call: OutageCall) =>
      call.servedBy === dead ? 0 : !ok(call.status) || !Number.isFinite(call.attempts) ? 1 : call.attempts - 1;
    const afterKill = outage.calls.filter((call) => call.sentAt >= outage.killedAt);
    const openIndex = afterKill.findIndex((call) => call.servedBy !== dead && call.attempts === 1 && ok(call.status));
    const before = openIndex < 0 ? afterKill : afterKill.slice(0, openIndex);
    const after = openIndex < 0 ? [] : afterKill.slice(openIndex);
    const sum = (calls: OutageCall[]) => calls.reduce((total, call) => total + deadAttempts(call), 0);
    const probes = after.filter((call) => deadAttempts(call) > 0);
    const afterIds = new Set(after.flatMap((call) => (call.requestId === null ? [] : [call.requestId])));
    const rows = after.length > 0 ? await rowAttempts(api, outageKey.id, afterIds, dead) : null;
    const breakerOpenMs = openIndex < 0 ? null : round(afterKill[openIndex]!.sentAt - outage.killedAt, 1);
    log(
      `  breaker open ${breakerOpenMs ?? 'never'} ms after the kill; ${sum(after)} attempts on the dead target over ` +
        `${after.length} requests after it (${probes.length} probes)`,
    );

    log(`failover: routes apply → both gateways serve the new route, ${counts.applySamples} samples`);
    const local: number[] = [];
    const remote: number[] = [];
    const every: number[] = [];
    const commands: number[] = [];
    let notServed = 0;
    const dispatcher = agent();
    try {
      for (let i = 0; i < counts.applySamples; i++) {
        const model = `bench/apply-${i + 1}`;
        Object.assign(document.routes, { [model]: route('bench-a') });
        const run = await apply(o.dataDir, o.temp, document, `apply-${i + 1}`);
        commands.push(run.exitedAt - run.startedAt);
        const deadline = run.exitedAt + APPLY_WAIT_MS;
        const [here, there] = await Promise.all([
          firstServed(dispatcher, o.gatewayUrl, authorization, model, deadline),
          firstServed(dispatcher, o.remoteGatewayUrl, authorization, model, deadline),
        ]);
        if (here === null || there === null) {
          notServed++;
          continue;
        }
        local.push(here - run.exitedAt);
        remote.push(there - run.exitedAt);
        every.push(Math.max(here, there) - run.exitedAt);
        log(`  sample ${i + 1}: ${round(here - run.exitedAt, 1)} ms here, ${round(there - run.exitedAt, 1)} ms remote`);
      }
    } finally {
      await dispatcher.close();
    }
    const sorted = (values: number[]) => [...values].sort((a, b) => a - b);

    return {
      setup: {
        upstreamModel: UPSTREAM_MODEL,
        breakerFailures: DEFAULT_FAILOVER.breaker_failures,
        breakerCooldownMs: DEFAULT_FAILOVER.breaker_cooldown_ms,
        retries: DEFAULT_FAILOVER.retries,
        rateRps: RATE_RPS,
        secondsPerTarget,
        rounds: counts.rounds,
        warmSeconds: WARM_SECONDS,
        outageRps: OUTAGE_RPS,
        healthySeconds: HEALTHY_SECONDS,
        outageSeconds,
        loadAverage: { before: round(loadBefore, 2), after: round(loadavg()[0]!, 2) },
      },
      latency,
      added: { single: added('single'), pair: added('pair'), refused: added('refused') },
      outage: {
        sent: outage.sent,
        failed: outage.failed,
        afterKill: afterKill.length,
        breakerOpenMs,
        beforeOpen: { requests: before.length, deadAttempts: sum(before) },
        afterOpen: {
          requests: after.length,
          deadAttempts: sum(after),
          perRequest: after.length === 0 ? NaN : round(sum(after) / after.length, 4),
          probes: probes.length,
        },
        rows: rows && { ...rows, perRequest: rows.matched === 0 ? NaN : round(rows.deadAttempts / rows.matched, 4) },
        probeAtMs: probes.map((call) => round(call.sentAt - outage.killedAt, 0)),
      },
      apply: {
        samples: counts.applySamples,
        localMs: tail(sorted(local)),
        remoteMs: tail(sorted(remote)),
        everyMs: tail(sorted(every)),
        notServed,
        commandMs: round(percentile(sorted(commands), 50), 0),
      },
    };
  } finally {
    await mortal.stop();
  }
}
