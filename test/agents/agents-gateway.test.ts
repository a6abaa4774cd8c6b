/**
 * Claude Code and OpenAI Codex, headless, through the gateway as `npm run gateway` starts it, on
 * the simulated upstream: each completes a prompt (the simulated model asks for a tool, the agent
 * answers with its result, the model ends its turn), every call of theirs is served, and each is
 * a row of the key's with its tokens and cost. Routes named as the agents name their default
 * models keep the requests in the shape they send a real provider.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RoutesDocument } from '../../server/domain/routes-document.js';
import { startSimulatedUpstream, type SimulatedUpstream } from '../../server/gateway/simulated-upstream.js';
import { startGatewayProcess, type GatewayProcess } from '../server/gateway-process-harness.js';
import { register, startServer, type TestClient, type TestServer } from '../server/harness.js';
import { runClaudeCode, runCodex, startProxyTrap, type AgentRun } from './agents.js';

const TOKEN = 'agents-gateway-token-0123456789abcdefghijklmn';
const FLUSH_MS = 50;
const RUN_TIMEOUT = 60_000;
const TEST_TIMEOUT = 90_000;

let server: TestServer;
let upstream: SimulatedUpstream;
let gateway: GatewayProcess;
let trap: Awaited<ReturnType<typeof startProxyTrap>>;
let owner: { client: TestClient };
let projectId: string;
let cwd: string;

/** Version 1 with the agents' default model names as routes: Claude Code's to Anthropic's API, Codex's to OpenAI's. */
function withAgentRoutes(document: RoutesDocument): RoutesDocument {
  const route = (provider: string, model: string) => ({
    kind: 'chat' as const,
    price: { input: 500, output: 2000, cache_write: 625, cache_read: 50 },
    prompt_cache: true,
    strategy: 'fallback' as const,
    active: true,
    byok: false,
    targets: [{ provider, model, weight: 1 }],
    failover: {},
  });
  return {
    ...document,
    routes: {
      ...document.routes,
      'claude-sonnet-4-5': route('anthropic', 'claude-sonnet-4-5-20250929'),
      'gpt-5.5': route('openai', 'gpt-5.5-2026-01-01'),
    },
  };
}

beforeAll(async () => {
  server = await startServer({ gatewayTokens: [TOKEN], gatewayFlushMs: FLUSH_MS });
  upstream = await startSimulatedUpstream({ realistic: true, ttftMs: 10, tpotMs: 1 });
  const stored = await server.app.control.routes.current();
  const applied = await server.app.control.write((tx) =>
    tx.routes.apply(withAgentRoutes(stored.document), 'test', Date.now()),
  );
  if (applied.kind !== 'applied') throw new Error(`routes not applied: ${JSON.stringify(applied)}`);
  gateway = await startGatewayProcess(new URL(server.baseUrl).origin, {
    SVC_GATEWAY_TOKEN: TOKEN,
    SVC_UPSTREAM_URL: upstream.url,
  });
  trap = await startProxyTrap();
  owner = await register(server);
  projectId = (await owner.client.get('/projects')).body.projects[0].id;
  cwd = await mkdtemp(join(tmpdir(), 'agents-gateway-'));
});

afterAll(async () => {
  gateway?.child.kill('SIGTERM');
  await gateway?.exited;
  await trap?.close();
  await upstream?.close();
  await server?.close();
  if (cwd) await rm(cwd, { recursive: true, force: true });
});

async function newKey(): Promise<{ id: string; api_key: string }> {
  const answer = await owner.client.post('/keys', { project_id: projectId, name: `agent ${Math.random()}` });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body;
}

interface Row {
  api: string | null;
  model: string;
  status: number;
  stream: boolean;
  metrics: Record<string, number | boolean | null>;
  financials: { cost_pkr: number };
  status_detail: { termination_reason: string };
  upstream: { provider: string | null } | null;
  user_agent: string;
}

/** The key's rows once the log holds every call the gateway answered (they are written every FLUSH_MS). */
async function rowsOf(keyId: string, atLeast: number): Promise<Row[]> {
  let rows: Row[] = [];
  for (let attempt = 0; attempt < 100; attempt++) {
    const page = await owner.client.get(`/analytics/requests?time_range=1h&limit=200&key_id=${keyId}`);
    rows = page.body.requests as Row[];
    if (rows.length >= atLeast) return rows;
    await new Promise((resolve) => setTimeout(resolve, FLUSH_MS));
  }
  throw new Error(`fewer than ${atLeast} rows: ${JSON.stringify(rows)}`);
}

function expectServed(run: AgentRun, rows: Row[], model: string, provider: string): void {
  expect(run.timedOut, run.stderr).toBe(false);
  expect(trap.hits).toEqual([]);
  for (const row of rows) {
    expect(row).toMatchObject({ model, status: 200, stream: true, upstream: { provider } });
    expect(row.status_detail.termination_reason).toBe('success');
    expect(row.metrics.tokens_generated).toBeGreaterThan(0);
    expect(row.metrics.tokens_estimated).toBe(false);
    expect(row.financials.cost_pkr).toBeGreaterThan(0);
  }
}

describe('coding agents through the gateway, offline', () => {
  it(
    'Claude Code completes a prompt over the Messages API, each of its turns a row',
    async () => {
      const key = await newKey();
      const run = await runClaudeCode({
        baseUrl: gateway.url.replace(/\/v1$/, ''),
        apiKey: key.api_key,
        prompt: 'Say hello to the gateway.',
        cwd,
        proxy: trap.url,
        timeoutMs: RUN_TIMEOUT,
      });
      expect(run.exitCode, `${run.stdout}\n${run.stderr}`).toBe(0);
      const result = JSON.parse(run.stdout) as { subtype: string; is_error: boolean; result: string };
      expect(result).toMatchObject({ subtype: 'success', is_error: false });
      expect(result.result.length).toBeGreaterThan(0);
      const rows = await rowsOf(key.id, 1);
      expectServed(run, rows, 'claude-sonnet-4-5', 'anthropic');
      expect(new Set(rows.map((row) => row.api))).toEqual(new Set(['messages']));
      expect(rows[0]!.user_agent).toMatch(/^claude-cli\//);
    },
    TEST_TIMEOUT,
  );

  it(
    'Codex completes a prompt over the Responses API, each of its turns a row',
    async () => {
      const key = await newKey();
      const run = await runCodex({
        baseUrl: gateway.url.replace(/\/v1$/, ''),
        apiKey: key.api_key,
        prompt: 'Say hello to the gateway.',
        cwd,
        proxy: trap.url,
        timeoutMs: RUN_TIMEOUT,
      });
      expect(run.exitCode, `${run.stdout}\n${run.stderr}`).toBe(0);
      expect(run.stdout.trim().length).toBeGreaterThan(0);
      const rows = await rowsOf(key.id, 1);
      expectServed(run, rows, 'gpt-5.5', 'openai');
      expect(new Set(rows.map((row) => row.api))).toEqual(new Set(['responses']));
      expect(rows[0]!.user_agent).toMatch(/^codex_exec\//);
    },
    TEST_TIMEOUT,
  );
});
