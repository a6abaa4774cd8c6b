import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request, type Dispatcher } from 'undici';
import { issueKey } from '../domain/keys.js';
import { writePrivateFile } from '../security/private-files.js';
import { hashApiKeySecret } from '../security/tokens.js';
import type { ControlRecords } from '../stores/control/store.js';
import { CUSTOMERS, USER_AGENTS } from './callers.js';
import { claudeCodeTurns, codexTurns, embedPassages } from './agent-calls.js';
import { ROUTES, type RouteProfile } from './catalogue.js';
import { DEMO_ORGANIZATION } from './organisation.js';
import { Random } from './random.js';

/**
 * A gentle stream of live requests through the demo's own gateway, over HTTP like any caller,
 * so that an offline demo moves: the request log and the charts show traffic as it happens.
 * Most are chat completions; the rest are what coding agents and retrieval pipelines send
 * (agent-calls.ts): Claude-Code-like conversations over the Messages API, Codex-like ones over
 * the Responses API, and embeddings.
 * It calls with a key of its own ("Live demo traffic"), whose secret is kept in the data
 * folder (0600) so that later starts reuse it rather than pile up keys.
 */

export const LIVE_KEY_NAME = 'Live demo traffic';
const SECRET_FILE = 'demo-live-key';
/** About twenty requests a minute: moving, and nothing a laptop notices. */
const MEAN_GAP_MS = 3_000;

const PROMPTS = [
  'Where is my order? It was due on Monday.',
  'Summarise this support ticket in two sentences.',
  'Translate "your refund has been issued" into Urdu.',
  'Draft a polite reply about a delayed delivery.',
  'Classify this message: billing, delivery or other?',
];

export interface LiveTraffic {
  stop(): Promise<void>;
}

/** The live key's secret: the one kept from an earlier start while that key is active, else a new key. */
async function liveKey(
  control: ControlRecords,
  dataDir: string,
  keyHashSecret: Buffer,
  now: number,
): Promise<string | null> {
  const organization = await control.organizations.findByName(DEMO_ORGANIZATION);
  if (!organization) return null;
  const file = join(dataDir, SECRET_FILE);
  if (existsSync(file)) {
    const kept = readFileSync(file, 'utf8').trim();
    const key = await control.keys.findBySecretHash(hashApiKeySecret(kept, keyHashSecret));
    const inForce = key && key.revoked_at === null && (key.expires_at === null || key.expires_at > now);
    if (inForce && key.org_id === organization.id) return kept;
  }
  const [project] = await control.organizations.projects(organization.id);
  if (!project) return null;
  const created = await issueKey(control, keyHashSecret, {
    orgId: organization.id,
    actorId: null,
    projectId: project.id,
    name: LIVE_KEY_NAME,
    environment: 'development',
    expiresAt: null,
    creditLimitMicro: null,
    allowedModels: null,
    rateLimitRpm: 120,
    sourceIp: 'local',
    now,
  });
  writePrivateFile(file, created.api_key);
  return created.api_key;
}

export interface LiveTrafficOptions {
  control: ControlRecords;
  dataDir: string;
  keyHashSecret: Buffer;
  /** The gateway's base address, `http://127.0.0.1:PORT/v1`. */
  gatewayUrl: string;
  now: () => number;
  seed?: number;
  /** Mean milliseconds between requests (3 s). */
  meanGapMs?: number;
  dispatcher?: Dispatcher;
  /** Called with each failure to reach the gateway (the traffic carries on). */
  onError?: (error: unknown) => void;
}

/** Starts the stream; null when the folder holds no demo organisation to call for. */
export async function startLiveTraffic(options: LiveTrafficOptions): Promise<LiveTraffic | null> {
  const secret = await liveKey(options.control, options.dataDir, options.keyHashSecret, options.now());
  if (!secret) return null;
  const random = new Random(options.seed ?? Date.now() % 2 ** 31);
  const chatRoutes = ROUTES.filter((route) => route.api === 'chat');
  // Anthropic's routes speak its Messages API; OpenAI's the Responses API.
  const claudeRoutes = chatRoutes.filter((route) => route.id.startsWith('anthropic/'));
  const openAiRoutes = chatRoutes.filter((route) => route.id.startsWith('openai/'));
  const embeddingRoutes = ROUTES.filter((route) => route.api === 'embeddings');
  let timer: NodeJS.Timeout | null = null;
  let inFlight: Promise<void> | null = null;
  let stopped = false;
  // Stopping cuts a request on its way rather than waiting for the gateway's guillotine.
  const stopping = new AbortController();

  const pickRoute = (routes: readonly RouteProfile[]) => {
    let draw = random.next() * routes.reduce((sum, route) => sum + route.weight, 0);
    for (const route of routes) if ((draw -= route.weight) < 0) return route;
    return routes[0]!;
  };

  const send = async () => {
    const calls = {
      gatewayUrl: options.gatewayUrl,
      secret,
      random,
      signal: stopping.signal,
      dispatcher: options.dispatcher,
    };
    const kind = random.next();
    if (kind < 0.2 && claudeRoutes.length > 0) return claudeCodeTurns(calls, pickRoute(claudeRoutes).id);
    if (kind < 0.35 && openAiRoutes.length > 0) return codexTurns(calls, pickRoute(openAiRoutes).id);
    if (kind < 0.42 && embeddingRoutes.length > 0) return embedPassages(calls, pickRoute(embeddingRoutes).id);
    const route = pickRoute(chatRoutes);
    const stream = random.chance(route.streamShare);
    const response = await request(`${options.gatewayUrl}/chat/completions`, {
      method: 'POST',
      dispatcher: options.dispatcher,
      signal: stopping.signal,
      headers: {
        authorization: `Bearer ${secret}`,
        'content-type': 'application/json',
        'user-agent': random.pick(USER_AGENTS.python),
        'x-svc-meta-customer': random.pick(CUSTOMERS),
        'x-svc-meta-feature': 'live-demo',
      },
      body: JSON.stringify({
        model: route.id,
        stream,
        max_tokens: 120,
        messages: [{ role: 'user', content: random.pick(PROMPTS) }],
      }),
    });
    await response.body.dump({ limit: Number.MAX_SAFE_INTEGER });
    // A refusal (the key revoked or limited by an admin) is worth a line, not silence.
    if (response.statusCode >= 400) throw new Error(`the gateway answered ${response.statusCode}`);
  };

  const schedule = () => {
    if (stopped) return;
    const gap = (options.meanGapMs ?? MEAN_GAP_MS) * (0.5 + random.next());
    timer = setTimeout(() => {
      inFlight = send()
        .catch((error: unknown) => {
          if (!stopped) options.onError?.(error);
        })
        .finally(() => {
          inFlight = null;
          schedule();
        });
    }, gap).unref();
  };
  schedule();

  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      stopping.abort();
      await inFlight;
    },
  };
}
