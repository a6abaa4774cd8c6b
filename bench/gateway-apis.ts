// The gateway's figures of issue 53, beside the chat completions of gateway.ts and in the same run:
// Anthropic's Messages API passed through (a route whose target speaks `anthropic`) and translated
// (a route whose only target speaks `openai`: the gateway asks the upstream's chat completions),
// OpenAI's Responses API passed through, each against the bare proxy forwarding the same request
// to the same path of the upstream, and embeddings' throughput against the proxy's. The routes are
// version 1's (the bench's seeded store): their answers are checked to have come the way meant.
import { loadavg } from 'node:os';
import { request } from 'undici';
import {
  GATEWAY_RATE_RPS,
  createKey,
  firstByteSchedule,
  runOpenLoop,
  throughputCase,
  timing,
  type CreatedKey,
} from './gateway.js';
import type { ApiClient } from './http.js';
import {
  FIRST_BYTE_SPAN,
  OPEN_LOOP_ROUNDS,
  agent,
  call,
  caseLength,
  ok,
  targetHeaders,
  type Interleaved,
  type Target,
} from './open-loop.js';
import type { ApisCounts, ApisReport, OpenLoopTiming, Tail } from './report.js';
import { round } from './stats.js';

/** How many of each measurement the section takes, unless told. */
export const APIS_COUNTS: ApisCounts = { openLoopRounds: OPEN_LOOP_ROUNDS, throughputRounds: 3 };

/**
 * Version 1's routes: `anthropic` speaks both formats (Messages passed through as is), `openai` only
 * its own (Messages translated to chat completions; Responses passed through).
 */
const ROUTES = { passthrough: 'anthropic/claude-sonnet-4', openai: 'openai/gpt-4o-mini', embeddings: 'svc/embed' };
const ANTHROPIC_VERSION = '2023-06-01';
/** Above the simulated upstream's longest answer (160 tokens): no answer is cut. */
const MAX_TOKENS = 256;
/** A translated answer's id is `msg_` and the chat completion's (translate/chat-answer-to-message.ts). */
const TRANSLATED_ID = /^msg_chatcmpl-/;

const PROMPTS = Array.from({ length: 16 }, (_, i) => `Benchmark prompt ${i}: what does a gateway add to a request?`);

type Log = (line: string) => void;

export interface ApisBenchOptions {
  api: ApiClient;
  /** Base addresses, …/v1. */
  upstreamUrl: string;
  proxyUrl: string;
  gatewayUrl: string;
  /** The server's telemetry.db, where the embeddings runs' rows are looked up. */
  telemetryPath: string;
  /** Timed seconds per target of each open-loop case, and of all throughput runs of a target. */
  seconds: number;
  /** APIS_COUNTS unless told. */
  counts?: ApisCounts;
  log: Log;
}

const messagesBody = (model: string, prompt: string, stream: boolean) =>
  JSON.stringify({
    model,
    max_tokens: MAX_TOKENS,
    messages: [{ role: 'user', content: prompt }],
    ...(stream ? { stream: true } : {}),
  });
const responsesBody = (model: string, prompt: string, stream: boolean) =>
  JSON.stringify({ model, input: prompt, ...(stream ? { stream: true } : {}) });
const embeddingsBody = (prompt: string) => JSON.stringify({ model: ROUTES.embeddings, input: prompt });

/**
 * Each target answers 2xx, then warms (JIT, connections) for a second. Messages' answers are checked
 * to have come the way meant: translated through the `translated` target, passed through elsewhere
 * (`messages`; non-streamed answers only).
 */
async function warmUp(targets: Target[], messages: boolean): Promise<void> {
  const dispatcher = agent();
  try {
    for (const target of targets) {
      const body = target.bodies![0]!;
      const answer = await request(`${target.url}${target.path}`, {
        method: 'POST',
        headers: targetHeaders(target),
        body,
        dispatcher,
      });
      const text = await answer.body.text();
      if (!ok(answer.statusCode))
        throw new Error(
          `${target.name} (${target.url}${target.path}) answered ${answer.statusCode}: ${text.slice(0, 500)}`,
        );
      if (messages) {
        const id = String((JSON.parse(text) as { id?: unknown }).id);
        if (TRANSLATED_ID.test(id) !== (target.name === 'translated'))
          throw new Error(`${target.name} answered message ${id}: the way it came is not the one meant`);
      }
      const until = performance.now() + 1000;
      const worker = async () => {
        while (performance.now() < until) await call(dispatcher, target, body);
      };
      await Promise.all(Array.from({ length: 8 }, worker));
    }
  } finally {
    await dispatcher.close();
  }
}

export async function measureApis(o: ApisBenchOptions): Promise<ApisReport> {
  const { api, log } = o;
  const counts = o.counts ?? APIS_COUNTS;
  const loadBefore = loadavg()[0]!;
  const catalogue = JSON.parse(await api.get('/models')) as { models: { id: string; active: boolean }[] };
  for (const id of Object.values(ROUTES))
    if (!catalogue.models.some((m) => m.id === id && m.active)) throw new Error(`the catalogue has no active ${id}`);
  const projects = JSON.parse(await api.get('/projects')) as { projects: { id: string }[] };
  const projectId = projects.projects[0]!.id;
  const latencyKey = await createKey(api, projectId, 'bench APIs latency', true);
  const throughputKey = await createKey(api, projectId, 'bench embeddings throughput', true);
  const bearer = (key: CreatedKey) => `Bearer ${key.api_key}`;

  // The same request to the upstream, the proxy and the gateway, on the API's own path.
  type Three = Record<'direct' | 'proxy' | 'gateway', Target>;
  const targetsOf = (path: string, headers: Record<string, string>, bodies: string[], key: CreatedKey): Three => {
    const target = (name: string, url: string): Target => ({
      name,
      url,
      authorization: bearer(key),
      path,
      headers,
      bodies,
    });
    return {
      direct: target('direct', o.upstreamUrl),
      proxy: target('proxy', o.proxyUrl),
      gateway: target('gateway', o.gatewayUrl),
    };
  };
  const messages = (stream: boolean): Three & { translated: Target } => {
    const three = targetsOf(
      '/messages',
      { 'anthropic-version': ANTHROPIC_VERSION },
      PROMPTS.map((prompt) => messagesBody(ROUTES.passthrough, prompt, stream)),
      latencyKey,
    );
    // The same prompts through a route whose only target speaks chat completions.
    const translated = PROMPTS.map((prompt) => messagesBody(ROUTES.openai, prompt, stream));
    return { ...three, translated: { ...three.gateway, name: 'translated', bodies: translated } };
  };
  const responses = (stream: boolean) =>
    targetsOf(
      '/responses',
      {},
      PROMPTS.map((prompt) => responsesBody(ROUTES.openai, prompt, stream)),
      latencyKey,
    );
  // Timed through the proxy and the gateway; warmed on the latency key, so that the throughput
  // key's rows are the timed runs' alone.
  const embeddings = (key: CreatedKey) => targetsOf('/embeddings', {}, PROMPTS.map(embeddingsBody), key);

  log(`gateway APIs: warming /v1/messages, /v1/responses and /v1/embeddings`);
  const warmEmbeddings = embeddings(latencyKey);
  await warmUp(Object.values(messages(false)), true);
  await warmUp([...Object.values(responses(false)), warmEmbeddings.proxy, warmEmbeddings.gateway], false);
  // Streamed as well: the gateway reads each API's events (and translates them) for streams alone.
  await warmUp([...Object.values(messages(true)), ...Object.values(responses(true))], false);

  /**
   * One open-loop case of `targets` (each named as its key) from a client process of its own, in
   * runs of their own unless `schedule` says otherwise.
   */
  const openLoop = async <Name extends string>(
    targets: Record<Name, Target>,
    until: 'end' | 'firstByte',
    schedule?: (Target | Interleaved)[],
  ): Promise<Record<Name, OpenLoopTiming>> => {
    const names = Object.keys(targets) as Name[];
    const list = names.map((name) => targets[name]);
    const spec = {
      targets: schedule ?? list,
      bodies: list[0]!.bodies!,
      rps: GATEWAY_RATE_RPS,
      ...caseLength(until, o.seconds, counts.openLoopRounds),
      until,
    };
    const runs = await runOpenLoop(spec, log);
    const timings = {} as Record<Name, OpenLoopTiming>;
    for (const name of names) timings[name] = timing(runs[name]!);
    return timings;
  };
  const over =
    (direct: OpenLoopTiming) =>
    (through: OpenLoopTiming): Tail => ({
      p50: round(through.p50 - direct.p50, 3),
      p99: round(through.p99 - direct.p99, 3),
    });

  const each = `${GATEWAY_RATE_RPS} req/s open loop, ${o.seconds} s per target`;
  const eachFirstByte = `${GATEWAY_RATE_RPS} req/s open loop, ${caseLength('firstByte', o.seconds, counts.openLoopRounds).seconds} s per target`;
  log(`gateway APIs: /v1/messages non-streamed (passed through, translated), ${each}`);
  const messagesLatency = await openLoop(messages(false), 'end');
  log(`gateway APIs: /v1/messages streamed time to first byte, ${eachFirstByte}`);
  const streamedMessages = messages(true);
  // The translated route is judged on what it adds over the upstream against what the proxy adds.
  // Its p50s: each timed alone, as the upstream is (the proxy beside the gateway shares the machine
  // with it), as every added p50 is. Its p99s: the three in one schedule, each at the rate, as the
  // pair's first-byte p99s are. Timed apart, each p99 was where the machine's stalls fell: one
  // stalled round of the upstream alone (54.8 ms, its others 3.5 to 17) left the proxy 2.7 ms of
  // added p99 in one report where the seven before had left it 5.7 to 17.
  const proxyAlone = { ...streamedMessages.proxy, name: 'proxyAlone' };
  const inTurn = {
    directInTurn: { ...streamedMessages.direct, name: 'directInTurn' },
    proxyInTurn: { ...streamedMessages.proxy, name: 'proxyInTurn' },
    translatedInTurn: { ...streamedMessages.translated, name: 'translatedInTurn' },
  };
  const { directInTurn, proxyInTurn, translatedInTurn, ...messagesTtfb } = await openLoop(
    { ...streamedMessages, proxyAlone, ...inTurn },
    'firstByte',
    [
      ...firstByteSchedule(streamedMessages, proxyAlone, streamedMessages.translated),
      { name: 'upstream, proxy and translated', members: Object.values(inTurn), eachAtRate: true },
    ],
  );
  const messagesTtfbInTurn = { direct: directInTurn, proxy: proxyInTurn, translated: translatedInTurn };
  log(`gateway APIs: /v1/responses non-streamed, ${each}`);
  const responsesLatency = await openLoop(responses(false), 'end');
  log(`gateway APIs: /v1/responses streamed time to first byte, ${eachFirstByte}`);
  const streamedResponses = responses(true);
  const responsesTtfb = await openLoop(streamedResponses, 'firstByte', firstByteSchedule(streamedResponses));

  log(`gateway APIs: /v1/embeddings throughput, against the bare proxy`);
  const measured = embeddings(throughputKey);
  const embeddingsThroughput = await throughputCase(
    measured.proxy,
    measured.gateway,
    throughputKey.id,
    embeddingsBody(PROMPTS[0]!),
    o.seconds,
    counts.throughputRounds,
    o.telemetryPath,
    log,
  );

  const messagesAdded = over(messagesLatency.direct);
  // p50 of the runs alone, p99 of the schedule in turn (see above).
  const messagesFirstByteAdded = (alone: OpenLoopTiming, inTurn: OpenLoopTiming): Tail => ({
    p50: over(messagesTtfb.direct)(alone).p50,
    p99: over(messagesTtfbInTurn.direct)(inTurn).p99,
  });
  const responsesAdded = over(responsesLatency.direct);
  return {
    setup: {
      routes: ROUTES,
      anthropicVersion: ANTHROPIC_VERSION,
      maxTokens: MAX_TOKENS,
      rateRps: GATEWAY_RATE_RPS,
      secondsPerTarget: o.seconds,
      rounds: counts.openLoopRounds,
      firstByteSpan: FIRST_BYTE_SPAN,
      loadAverage: { before: round(loadBefore, 2), after: round(loadavg()[0]!, 2) },
    },
    messages: {
      latency: messagesLatency,
      ttfb: messagesTtfb,
      ttfbInTurn: messagesTtfbInTurn,
      added: {
        proxy: messagesAdded(messagesLatency.proxy),
        gateway: messagesAdded(messagesLatency.gateway),
        translated: messagesAdded(messagesLatency.translated),
      },
      firstByteAdded: {
        proxy: messagesFirstByteAdded(messagesTtfb.proxyAlone, messagesTtfbInTurn.proxy),
        translated: messagesFirstByteAdded(messagesTtfb.translated, messagesTtfbInTurn.translated),
      },
    },
    responses: {
      latency: responsesLatency,
      ttfb: responsesTtfb,
      added: { proxy: responsesAdded(responsesLatency.proxy), gateway: responsesAdded(responsesLatency.gateway) },
    },
    embeddings: embeddingsThroughput,
  };
}
