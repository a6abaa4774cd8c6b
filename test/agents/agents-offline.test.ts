/**
 * Claude Code and OpenAI Codex run headless and offline against a recording fake of the Anthropic Messages and
 * OpenAI Responses APIs (recording-fake.ts): each completes a prompt with the fake's answer, runs one tool round trip
 * (the fake asks for a shell command, the agent runs it and sends its output back), and sends nothing anywhere but
 * the fake: no request to another path, nothing through the proxy trap, and (where strace is installed) no connection
 * or datagram, DNS included, to any address but the fake's. The fake's own answers are first read by the official
 * SDKs (@anthropic-ai/sdk, openai), which parse its SSE as they would the real APIs'.
 * AGENTS_RECORD_DIR=dir writes what each agent sent (long strings cut) to dir/claude-code.json and dir/codex.json;
 * test/agents/recorded/ holds such a recording, for reference.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runClaudeCode, runCodex, startProxyTrap, type AgentRun } from './agents.js';
import { startRecordingFake, type RecordedRequest, type RecordingFake } from './recording-fake.js';

const API_KEY = 'gw-test-agents-0123456789abcdef';
const TOOL_PROMPT = 'Run this command and tell me what it printed: [[fake-tool: echo fake-tool-ok-$((6*7))]]';
const RUN_TIMEOUT = 60_000;
/** An agent's run takes 2 to 7 s here (Codex is slower under strace); the margin is for a loaded machine. */
const TEST_TIMEOUT = 90_000;

let fake: RecordingFake;
let trap: Awaited<ReturnType<typeof startProxyTrap>>;
let cwd: string;
const sent = { claude: [] as RecordedRequest[], codex: [] as RecordedRequest[] };

beforeAll(async () => {
  fake = await startRecordingFake();
  trap = await startProxyTrap();
  cwd = await mkdtemp(join(tmpdir(), 'agents-cwd-'));
});

afterAll(async () => {
  await writeRecordings();
  await fake?.close();
  await trap?.close();
  if (cwd) await rm(cwd, { recursive: true, force: true });
});

/** Runs an agent and returns what it sent the fake during the run. */
async function recorded(agent: keyof typeof sent, launch: () => Promise<AgentRun>) {
  const from = fake.requests.length;
  const result = await launch();
  const requests = fake.requests.slice(from);
  sent[agent].push(...requests);
  return { result, requests };
}

/** Nothing left the machine: no proxy use, and every destination strace saw (if any) is the fake. */
function expectOnlyTheFake(result: AgentRun): void {
  expect(trap.hits).toEqual([]);
  if (result.destinations) expect(result.destinations).toEqual([`127.0.0.1:${fake.port}`]);
}

const common = () => ({
  baseUrl: fake.url,
  apiKey: API_KEY,
  cwd,
  proxy: trap.url,
  traceNetwork: true,
  timeoutMs: RUN_TIMEOUT,
});

describe('the recording fake, read by the official SDKs', () => {
  it('answers the Messages API streamed and not, count_tokens and the model list', async () => {
    const from = fake.requests.length;
    const anthropic = new Anthropic({ apiKey: API_KEY, baseURL: fake.url, maxRetries: 0 });
    const params = { model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user' as const, content: 'hi' }] };
    const message = await anthropic.messages.create(params);
    expect(message).toMatchObject({ stop_reason: 'end_turn', content: [{ type: 'text', text: fake.answer }] });
    const streamed = await anthropic.messages.stream(params).finalMessage();
    expect(streamed).toMatchObject({ stop_reason: 'end_turn', content: [{ type: 'text', text: fake.answer }] });
    expect(streamed.usage.output_tokens).toBeGreaterThan(0);
    expect((await anthropic.messages.countTokens(params)).input_tokens).toBeGreaterThan(0);
    expect((await anthropic.models.list()).data.map((model) => model.id)).toContain('claude-sonnet-4-5');
    expect(fake.requests.slice(from).map((r) => `${r.method} ${r.path} ${r.streamed}`)).toEqual([
      'POST /v1/messages false',
      'POST /v1/messages true',
      'POST /v1/messages/count_tokens false',
      'GET /v1/models false',
    ]);
  });

  it('answers the Responses API streamed and not, and 404s (logged) anything else', async () => {
    const from = fake.requests.length;
    const openai = new OpenAI({ apiKey: API_KEY, baseURL: `${fake.url}/v1`, maxRetries: 0 });
    const response = await openai.responses.create({ model: 'gpt-5.5', input: 'hi' });
    expect(response.output_text).toBe(fake.answer);
    const stream = await openai.responses.create({ model: 'gpt-5.5', input: 'hi', stream: true });
    const types: string[] = [];
    let text = '';
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') expect(event.response.usage?.total_tokens).toBeGreaterThan(0);
    }
    expect(text).toBe(fake.answer);
    expect(types.filter((type) => type !== 'response.output_text.delta')).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    await expect(openai.chat.completions.create({ model: 'gpt-5.5', messages: [] })).rejects.toMatchObject({
      status: 404,
    });
    expect(fake.requests.slice(from).map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
      'POST /v1/responses 200',
      'POST /v1/responses 200',
      'POST /v1/chat/completions 404',
    ]);
  });
});

describe('Claude Code (claude -p) against the Messages API', () => {
  it(
    'completes a prompt with one streamed POST /v1/messages?beta=true and nothing else',
    async () => {
      const { result, requests } = await recorded('claude', () => runClaudeCode({ ...common(), prompt: 'Say hello' }));
      expect(result.exitCode, result.stderr).toBe(0);
      const output = JSON.parse(result.stdout);
      expect(output).toMatchObject({ type: 'result', subtype: 'success', is_error: false });
      expect(output.result).toContain(fake.answer);

      expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /v1/messages']);
      const [request] = requests;
      expect(request!.query).toEqual({ beta: 'true' });
      expect(request!.headers['x-api-key']).toBe(`${API_KEY.slice(0, 4)}…<${API_KEY.length} chars>`);
      expect(request!.headers['anthropic-version']).toBe('2023-06-01');
      expect(request!.headers['anthropic-beta']).toContain('claude-code-20250219');
      expect(request!.body).toMatchObject({ model: 'claude-sonnet-4-5', stream: true, max_tokens: expect.any(Number) });
      expectOnlyTheFake(result);
    },
    TEST_TIMEOUT,
  );

  it(
    'runs the Bash tool the fake asks for and sends its output back as a tool_result',
    async () => {
      const { result, requests } = await recorded('claude', () => runClaudeCode({ ...common(), prompt: TOOL_PROMPT }));
      expect(result.exitCode, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout).result).toContain(`${fake.answer} Tool said: fake-tool-ok-42`);
      expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /v1/messages', 'POST /v1/messages']);
      const messages = (requests[1]!.body as any).messages;
      expect(messages.at(-2).content[0]).toMatchObject({ type: 'tool_use', name: 'Bash' });
      expect(messages.at(-1).content[0]).toMatchObject({ type: 'tool_result', is_error: false });
      expectOnlyTheFake(result);
    },
    TEST_TIMEOUT,
  );
});

describe('Codex (codex exec) against the Responses API', () => {
  it(
    'completes a prompt with one streamed POST /v1/responses and nothing else',
    async () => {
      const { result, requests } = await recorded('codex', () => runCodex({ ...common(), prompt: 'Say hello' }));
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stdout).toContain(fake.answer);

      expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /v1/responses']);
      const [request] = requests;
      expect(request!.headers.authorization).toBe(`Bearer ${API_KEY.slice(0, 4)}…<${API_KEY.length} chars>`);
      expect(request!.headers.accept).toBe('text/event-stream');
      expect(request!.body).toMatchObject({ model: 'gpt-5.5', stream: true, store: false, input: expect.any(Array) });
      expectOnlyTheFake(result);
    },
    TEST_TIMEOUT,
  );

  it(
    'runs exec_command in its read-only sandbox as asked and sends a function_call_output back',
    async () => {
      const { result, requests } = await recorded('codex', () => runCodex({ ...common(), prompt: TOOL_PROMPT }));
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stdout).toContain(`${fake.answer} Tool said:`);
      expect(result.stdout).toContain('fake-tool-ok-42');
      expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /v1/responses', 'POST /v1/responses']);
      const input = (requests[1]!.body as any).input;
      expect(input.at(-2)).toMatchObject({ type: 'function_call', name: 'exec_command' });
      expect(input.at(-1)).toMatchObject({ type: 'function_call_output', call_id: input.at(-2).call_id });
      expectOnlyTheFake(result);
    },
    TEST_TIMEOUT,
  );
});

/** Long strings cut to 300 characters, so a recording shows each request's shape without its whole prompt. */
function abbreviate(value: unknown): unknown {
  if (typeof value === 'string') return value.length > 300 ? `${value.slice(0, 300)}…[${value.length} chars]` : value;
  if (Array.isArray(value)) return value.map(abbreviate);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, abbreviate(inner)]));
  }
  return value;
}

async function writeRecordings(): Promise<void> {
  const dir = process.env.AGENTS_RECORD_DIR;
  if (!dir) return;
  for (const [agent, requests] of Object.entries(sent)) {
    const file = join(dir, agent === 'claude' ? 'claude-code.json' : 'codex.json');
    await writeFile(file, `${JSON.stringify(abbreviate(requests), null, 2)}\n`);
  }
}
