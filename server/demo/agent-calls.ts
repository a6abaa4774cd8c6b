import { request, type Dispatcher } from 'undici';
import { CUSTOMERS } from './callers.js';
import type { Random } from './random.js';

/**
 * The calls of the demo's live traffic other than chat completions, made as the clients our
 * users run make them: a Claude-Code-like conversation over Anthropic's Messages API (streamed,
 * with its tools: the model asks for one, the agent sends its result back), a Codex-like one over
 * the Responses API (a function call, then its output as the next turn), and embeddings as a
 * retrieval pipeline asks them. Each turn is a call of its own through the gateway, so a row.
 */

export interface AgentCallOptions {
  gatewayUrl: string;
  secret: string;
  random: Random;
  signal: AbortSignal;
  dispatcher?: Dispatcher;
}

const TASKS = [
  'Find why the nightly export job fails and fix it.',
  'Add a test for the refund calculation.',
  'Rename the billing module and update its imports.',
  'Explain what the retry policy in the client does.',
  'Make the dashboard query use the new index.',
];

const CLAUDE_CODE_AGENT = 'claude-cli/2.1.332 (external, cli)';
const CODEX_AGENT = 'codex_exec/0.171.0 (Debian 12.0.0; x86_64) dumb (codex_exec; 0.171.0)';

const BASH_TOOL = {
  name: 'Bash',
  description: 'Executes a bash command and returns its output.',
  input_schema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
};

const EXEC_TOOL = {
  type: 'function',
  name: 'exec_command',
  description: 'Runs a command in the workspace and returns its output.',
  parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] },
};

/** One call through the gateway; its answer read whole, as text. */
async function post(options: AgentCallOptions, path: string, headers: Record<string, string>, body: unknown) {
  const answer = await request(`${options.gatewayUrl}${path}`, {
    method: 'POST',
    dispatcher: options.dispatcher,
    signal: options.signal,
    headers: {
      'content-type': 'application/json',
      'x-svc-meta-customer': options.random.pick(CUSTOMERS),
      'x-svc-meta-feature': 'live-demo',
      ...headers,
    },
    body: JSON.stringify(body),
  });
  const text = await answer.body.text();
  // A refusal (the key revoked or limited by an admin) is worth a line, not silence.
  if (answer.statusCode >= 400) throw new Error(`the gateway answered ${answer.statusCode} on ${path}`);
  return text;
}

/** Two turns of a coding agent over the Messages API: a tool asked for, its result sent back. */
export async function claudeCodeTurns(options: AgentCallOptions, model: string): Promise<void> {
  const headers = {
    'x-api-key': options.secret,
    'anthropic-version': '2023-06-01',
    'anthropic-beta': 'claude-code-20250219,interleaved-thinking-2025-05-14',
    'user-agent': CLAUDE_CODE_AGENT,
  };
  const task = options.random.pick(TASKS);
  const body = {
    model,
    max_tokens: 1024,
    stream: true,
    system: [{ type: 'text', text: 'You are a coding agent working in the user’s repository.' }],
    tools: [BASH_TOOL],
    messages: [{ role: 'user', content: task }] as unknown[],
  };
  const first = await post(options, '/messages?beta=true', headers, body);
  const call = /"type":"tool_use","id":"([^"]+)"/.exec(first);
  if (!call) return;
  body.messages.push(
    { role: 'assistant', content: [{ type: 'tool_use', id: call[1], name: 'Bash', input: { command: 'git status' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: call[1], content: 'nothing to commit' }] },
  );
  await post(options, '/messages?beta=true', headers, body);
}

/** Two turns of a coding agent over the Responses API: a function call, then its output. */
export async function codexTurns(options: AgentCallOptions, model: string): Promise<void> {
  const headers = { authorization: `Bearer ${options.secret}`, 'user-agent': CODEX_AGENT };
  const first = await post(options, '/responses', headers, {
    model,
    stream: true,
    instructions: 'You are a coding agent. Run commands to inspect the workspace before you answer.',
    input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: options.random.pick(TASKS) }] }],
    tools: [EXEC_TOOL],
    reasoning: { effort: 'low' },
    prompt_cache_key: `demo-${Math.floor(options.random.next() * 1e9)}`,
  });
  const id = /"type":"response\.created"[^\n]*?"id":"([^"]+)"/.exec(first)?.[1];
  const call = /"call_id":"([^"]+)"/.exec(first)?.[1];
  if (!id || !call) return;
  await post(options, '/responses', headers, {
    model,
    stream: true,
    previous_response_id: id,
    input: [{ type: 'function_call_output', call_id: call, output: 'ok: 3 files changed' }],
    tools: [EXEC_TOOL],
  });
}

/** A batch of passages embedded for a search index. */
export async function embedPassages(options: AgentCallOptions, model: string): Promise<void> {
  const passages = Array.from({ length: 1 + Math.floor(options.random.next() * 8) }, () => options.random.pick(TASKS));
  await post(
    options,
    '/embeddings',
    { authorization: `Bearer ${options.secret}`, 'user-agent': 'llama-index/0.12.5 OpenAI/Python 1.57.0' },
    { model, input: passages },
  );
}
