// The open-loop client of the gateway's latency figures: requests on a fixed schedule to the
// upstream, the bare proxy and the gateway, each timed from its scheduled send. Run by
// open-loop-child.ts in a process of its own; `call` and `agent` serve the rest of gateway.ts too.
import { Agent, request } from 'undici';
import { sleep } from './stats.js';

/**
 * Rounds of each open-loop case: the targets' order is reversed every other round. A target's p50
 * drifts by ~0.1 ms from one run of a few seconds to the next as the machine's pace does, a fifth
 * of what the proxy adds: in two rounds the gateway's added p50 came out at 1.18× to 1.48× the
 * proxy's on one build (scratch runs of the chat case, December 2026). Six shorter rounds in turn
 * average the drift out over the same seconds.
 */
export const OPEN_LOOP_ROUNDS = 6;

/**
 * A streamed first-byte case runs this many times as long as a latency case, in as many times the
 * rounds. Its p99 is judged against the proxy's + 1 ms, and at 5,000 samples a target both p99s
 * were the work of 5-10 stalls (a young-generation collection, the machine's pauses) of tens of
 * milliseconds: the same build passed or failed from run to run. More samples, the same
 * estimator and bound: a figure of the gateway more than of where the run's stalls fell.
 */
export const FIRST_BYTE_SPAN = 2;

/** A case's timed seconds per target and its rounds, given the latency cases' (see FIRST_BYTE_SPAN). */
export function caseLength(
  until: 'end' | 'firstByte',
  seconds: number,
  rounds: number,
): { seconds: number; rounds: number } {
  const span = until === 'firstByte' ? FIRST_BYTE_SPAN : 1;
  return { seconds: seconds * span, rounds: rounds * span };
}

export interface Target {
  /** What its runs are keyed by: `direct`, `proxy`, `gateway`, or a failover case's route. */
  name: string;
  /** Base address, …/v1. */
  url: string;
  authorization: string;
  /** The API's path after the base address: `/chat/completions` unless said. */
  path?: string;
  /** Headers of the API's besides the key (Anthropic's `anthropic-version`). */
  headers?: Record<string, string>;
  /** Its own request bodies (another route), instead of the spec's. */
  bodies?: readonly string[];
}

/**
 * Targets timed in one schedule, request by request in turn: a stall of the machine falls on each
 * of them alike, which runs one after the other cannot promise. By default they share `rps` (each
 * at `rps` / their number, over as many times a round's seconds): routes of one gateway compared
 * with each other.
 */
export interface Interleaved {
  name: string;
  members: Target[];
  /**
   * Each member at `rps` (the schedule at `rps` × their number) for a round's seconds: targets
   * compared at the rate each is judged at, such as the proxy and the gateway.
   */
  eachAtRate?: boolean;
}

const membersOf = (entry: Target | Interleaved): Target[] => ('members' in entry ? entry.members : [entry]);

/**
 * An entry's schedule against a lone target's: members sharing `rps` run as many times as long,
 * members each at it run at as many times the rate.
 */
const scaleOf = (entry: Target | Interleaved): { rate: number; length: number } => {
  const members = membersOf(entry).length;
  return 'eachAtRate' in entry && entry.eachAtRate ? { rate: members, length: 1 } : { rate: 1, length: members };
};

export interface Call {
  status: number;
  /** performance.now() at the answer's first body byte (its end when it had no body). */
  firstByteAt: number;
  endAt: number;
  requestId: string | null;
}

export function agent(): Agent {
  return new Agent({ connections: 256, keepAliveTimeout: 30_000, headersTimeout: 30_000, bodyTimeout: 30_000 });
}

/** One chat completion, its body read to the end. */
export async function call(dispatcher: Agent, target: Target, body: string): Promise<Call> {
  const answer = await request(`${target.url}${target.path ?? '/chat/completions'}`, {
    method: 'POST',
    headers: targetHeaders(target),
    body,
    dispatcher,
  });
  let firstByteAt: number | null = null;
  for await (const _chunk of answer.body) firstByteAt ??= performance.now();
  const endAt = performance.now();
  const id = answer.headers['x-request-id'];
  return {
    status: answer.statusCode,
    firstByteAt: firstByteAt ?? endAt,
    endAt,
    requestId: typeof id === 'string' ? id : null,
  };
}

/** What every request to `target` carries. */
export const targetHeaders = (target: Target): Record<string, string> => ({
  'content-type': 'application/json',
  authorization: target.authorization,
  ...target.headers,
});

export const ok = (status: number) => status >= 200 && status < 300;

export interface Run {
  samples: number[];
  /** Where each of its rounds' samples end in `samples`, in the order run. */
  roundEnds: number[];
  sent: number;
  ok: number;
  failed: number;
  maxSendLagMs: number;
}

const emptyRun = (): Run => ({ samples: [], roundEnds: [], sent: 0, ok: 0, failed: 0, maxSendLagMs: 0 });

/** What one open-loop case asks of the client process. */
export interface OpenLoopSpec {
  targets: (Target | Interleaved)[];
  bodies: readonly string[];
  rps: number;
  /**
   * Timed seconds per target, over all rounds: an interleaved group that shares `rps` runs its
   * members' times over (each member gets a target's samples), one whose members each run at it once.
   */
  seconds: number;
  until: 'end' | 'firstByte';
  /** Seconds of warm-up before each timed run (default: a fifth of a round, between 0.5 and 1). */
  warmSeconds?: number;
  /** Rounds (default OPEN_LOOP_ROUNDS). */
  rounds?: number;
}

/**
 * Open loop: `rps` requests a second on a fixed schedule for `seconds`, whatever the answers do,
 * each timed from its scheduled send time (so that a slow answer, or a late send, is counted
 * and delays no later request's clock) to its last byte or its first.
 */
async function openLoop(
  dispatcher: Agent,
  entry: Target | Interleaved,
  spec: OpenLoopSpec,
  seconds: number,
  runs: Record<string, Run> = {},
): Promise<void> {
  const { until } = spec;
  const rps = spec.rps * scaleOf(entry).rate;
  const members = membersOf(entry);
  const intos = members.map((member) => (runs[member.name] ??= emptyRun()));
  const interval = 1000 / rps;
  const total = Math.max(1, Math.round(rps * seconds));
  const pending: Promise<void>[] = [];
  const start = performance.now() + 5;
  let i = 0;
  while (i < total) {
    const now = performance.now();
    for (; i < total && start + i * interval <= now; i++) {
      const scheduled = start + i * interval;
      const target = members[i % members.length]!;
      const into = intos[i % members.length]!;
      const bodies = target.bodies ?? spec.bodies;
      into.maxSendLagMs = Math.max(into.maxSendLagMs, now - scheduled);
      into.sent++;
      pending.push(
        call(dispatcher, target, bodies[Math.floor(i / members.length) % bodies.length]!).then(
          (answer) => {
            if (!ok(answer.status)) {
              into.failed++;
              return;
            }
            into.ok++;
            into.samples.push((until === 'end' ? answer.endAt : answer.firstByteAt) - scheduled);
          },
          () => {
            into.failed++;
          },
        ),
      );
    }
    if (i < total) await sleep(start + i * interval - performance.now());
  }
  await Promise.all(pending);
}

/**
 * One open-loop case for its targets (the upstream, the proxy and the gateway; or routes): OPEN_LOOP_ROUNDS rounds, the order reversed every
 * other round so that a drift of the machine weighs on each alike, each run after a warm-up on
 * the same connections. Samples of a target are pooled over its rounds.
 */
export async function openLoopCase(spec: OpenLoopSpec, log: (line: string) => void): Promise<Record<string, Run>> {
  const rounds = spec.rounds ?? OPEN_LOOP_ROUNDS;
  const roundSeconds = spec.seconds / rounds;
  const warmSeconds = spec.warmSeconds ?? Math.min(1, Math.max(0.5, roundSeconds / 5));
  const runs: Record<string, Run> = {};
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? spec.targets : [...spec.targets].reverse();
    for (const entry of order) {
      const dispatcher = agent();
      try {
        await openLoop(dispatcher, entry, spec, warmSeconds);
        await openLoop(dispatcher, entry, spec, roundSeconds * scaleOf(entry).length, runs);
        for (const { name } of membersOf(entry)) {
          runs[name]!.roundEnds.push(runs[name]!.samples.length);
          log(`  round ${r + 1}/${rounds} ${name}: ${runs[name]!.sent} sent so far, ${runs[name]!.failed} failed`);
        }
      } finally {
        await dispatcher.close();
      }
    }
  }
  return runs;
}
