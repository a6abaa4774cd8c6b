/**
 * A recording fake of the two upstream APIs that coding agents speak, for test/agents: a node:http server on
 * 127.0.0.1 that logs every request (method, path, query, headers with secrets masked, JSON body) and answers
 * - `POST /v1/messages` (Anthropic Messages; `?beta=true` accepted): Anthropic's SSE events when `stream: true`
 *   (message_start, content_block_start, ping, content_block_delta text_delta…, content_block_stop, message_delta
 *   with stop_reason end_turn and usage, message_stop), else a message object;
 * - `POST /v1/messages/count_tokens`: `{ input_tokens }`;
 * - `POST /v1/responses` (OpenAI Responses): the SSE events response.created, response.in_progress,
 *   response.output_item.added, response.content_part.added, response.output_text.delta…, response.output_text.done,
 *   response.content_part.done, response.output_item.done, response.completed (with usage) when `stream: true`,
 *   else a response object;
 * - `GET /v1/models`: one list that reads as both Anthropic's and OpenAI's shape;
 * - anything else: 404, and the request is logged all the same (so is a WebSocket upgrade, refused).
 * Every answer is the same text, `answer`, so a test can look for it in an agent's output; except that a prompt with
 * `[[fake-tool: COMMAND]]` first gets a call of the agent's shell tool (Claude Code's `Bash` tool_use, Codex's
 * `exec_command` function_call), and the answer to the tool's result ends with `Tool said: OUTPUT` (see plan()).
 * Token counts are estimates: a quarter of the JSON body's length.
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const DEFAULT_ANSWER = 'Hello from the recording fake (pong-7f3a).';

export interface RecordedRequest {
  /** Milliseconds since the fake started. */
  at: number;
  method: string;
  path: string;
  query: Record<string, string>;
  /** Lower-case names; secrets (api keys, authorization, cookies) masked. */
  headers: Record<string, string>;
  /** The parsed JSON body; the raw text when it is not JSON; undefined when empty. */
  body: unknown;
  /** The status the fake answered. */
  status: number;
  /** True when the fake streamed its answer (SSE). */
  streamed: boolean;
  /** Set for an HTTP upgrade (WebSocket) request, which the fake refuses. */
  upgrade?: string;
}

export interface RecordingFake {
  /** `http://127.0.0.1:PORT` (no trailing slash, no /v1). */
  url: string;
  port: number;
  answer: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

const SECRET_HEADERS = new Set(['x-api-key', 'authorization', 'proxy-authorization', 'cookie', 'api-key']);

/** Keeps a secret's shape (scheme, first 4 characters, length), never its value. */
export function maskSecret(value: string): string {
  const [scheme, token] = value.includes(' ') ? value.split(/ (.*)/s, 2) : ['', value];
  const shown = `${(token ?? '').slice(0, 4)}…<${(token ?? '').length} chars>`;
  return scheme ? `${scheme} ${shown}` : shown;
}

function maskHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const text = Array.isArray(value) ? value.join(', ') : (value ?? '');
    out[name] = SECRET_HEADERS.has(name) ? maskSecret(text) : text;
  }
  return out;
}

function readBody(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('error', reject);
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      if (!text) return resolve(undefined);
      try {
        resolve(JSON.parse(text));
      } catch {
        resolve(text);
      }
    });
  });
}

/** The answer in a few deltas: words with their following space. */
function deltas(text: string): string[] {
  return text.match(/\S+\s*/g) ?? [text];
}

const estimate = (body: unknown): number => Math.max(1, Math.ceil(JSON.stringify(body ?? '').length / 4));

let serial = 0;
const id = (prefix: string): string => `${prefix}_fake${(++serial).toString().padStart(6, '0')}`;

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function startSse(res: ServerResponse, extra: Record<string, string> = {}): (event: string, data: unknown) => void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...extra });
  return (event, data) => {
    res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
}

/**
 * What the fake answers: its text, or (once) a shell command for the agent's own tool when the conversation's
 * first user text asks for one with `[[fake-tool: COMMAND]]` and no tool result has come back yet. With a result,
 * the text ends with `Tool said: OUTPUT` (the result's text on one line, without Claude Code's system reminders, cut at
 * 300 characters), so a test sees that the command really ran.
 */
type Plan = { kind: 'text'; text: string } | { kind: 'tool'; command: string };
export const TOOL_MARKER = /\[\[fake-tool: ([^\]]+)\]\]/;

const summary = (output: string): string =>
  output
    .replace(/<system-reminder>[\s\S]*?<\/system-reminder>/g, '')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 300);

function plan(answer: string, toolOutput: string | undefined, requestText: string): Plan {
  if (toolOutput !== undefined) return { kind: 'text', text: `${answer} Tool said: ${summary(toolOutput)}` };
  const marker = TOOL_MARKER.exec(requestText);
  return marker ? { kind: 'tool', command: marker[1]! } : { kind: 'text', text: answer };
}

/** The text of a tool result's content: a string, or text blocks. */
function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content.map((block: any) => (typeof block?.text === 'string' ? block.text : '')).join('');
  return '';
}

function anthropicPlan(req: any, answer: string): Plan {
  const messages: any[] = Array.isArray(req?.messages) ? req.messages : [];
  const last = messages.at(-1);
  const result = Array.isArray(last?.content) ? last.content.find((b: any) => b?.type === 'tool_result') : undefined;
  const hasBash = Array.isArray(req?.tools) && req.tools.some((tool: any) => tool?.name === 'Bash');
  return plan(
    answer,
    result ? resultText(result.content) : undefined,
    hasBash ? JSON.stringify(last?.content ?? '') : '',
  );
}

function anthropicMessage(req: any, answer: string, res: ServerResponse): boolean {
  const model = typeof req?.model === 'string' ? req.model : 'unknown';
  const next = anthropicPlan(req, answer);
  const block =
    next.kind === 'text'
      ? { type: 'text', text: next.text }
      : {
          type: 'tool_use',
          id: id('toolu'),
          name: 'Bash',
          input: { command: next.command, description: 'Run the command' },
        };
  const stopReason = next.kind === 'text' ? 'end_turn' : 'tool_use';
  const usage = { input_tokens: estimate(req), output_tokens: next.kind === 'text' ? deltas(next.text).length : 10 };
  const message = { id: id('msg'), type: 'message', role: 'assistant', model };
  const headers = { 'request-id': id('req') };
  if (req?.stream !== true) {
    res.setHeader('request-id', headers['request-id']);
    sendJson(res, 200, { ...message, content: [block], stop_reason: stopReason, stop_sequence: null, usage });
    return false;
  }
  const send = startSse(res, headers);
  send('message_start', {
    type: 'message_start',
    message: {
      ...message,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: usage.input_tokens,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        output_tokens: 1,
      },
    },
  });
  if (block.type === 'text') {
    send('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    send('ping', { type: 'ping' });
    for (const text of deltas(next.kind === 'text' ? next.text : '')) {
      send('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } });
    }
  } else {
    send('content_block_start', { type: 'content_block_start', index: 0, content_block: { ...block, input: {} } });
    send('ping', { type: 'ping' });
    const json = JSON.stringify(block.input);
    for (const partial_json of [json.slice(0, 10), json.slice(10)]) {
      send('content_block_delta', {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'input_json_delta', partial_json },
      });
    }
  }
  send('content_block_stop', { type: 'content_block_stop', index: 0 });
  send('message_delta', {
    type: 'message_delta',
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: usage.output_tokens },
  });
  send('message_stop', { type: 'message_stop' });
  res.end();
  return true;
}

function openaiPlan(req: any, answer: string): Plan {
  const input: any[] = Array.isArray(req?.input) ? req.input : [];
  const output = input.findLast((item: any) => item?.type === 'function_call_output');
  const hasExec = Array.isArray(req?.tools) && req.tools.some((tool: any) => tool?.name === 'exec_command');
  const lastUser = input.findLast((item: any) => item?.role === 'user');
  return plan(
    answer,
    output ? resultText(output.output) : undefined,
    hasExec ? JSON.stringify(lastUser?.content ?? '') : '',
  );
}

function openaiResponse(req: any, answer: string, res: ServerResponse): boolean {
  const model = typeof req?.model === 'string' ? req.model : 'unknown';
  const next = openaiPlan(req, answer);
  const inputTokens = estimate(req?.input);
  const outputTokens = next.kind === 'text' ? deltas(next.text).length : 10;
  const base = {
    id: id('resp'),
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    model,
    instructions: req?.instructions ?? null,
    tools: req?.tools ?? [],
    parallel_tool_calls: req?.parallel_tool_calls ?? true,
    reasoning: req?.reasoning ?? null,
    store: req?.store ?? false,
    metadata: {},
    error: null,
    incomplete_details: null,
  };
  const itemId = id(next.kind === 'text' ? 'msg' : 'fc');
  const part = { type: 'output_text', text: next.kind === 'text' ? next.text : '', annotations: [] };
  const args = next.kind === 'tool' ? JSON.stringify({ cmd: next.command }) : '';
  const item =
    next.kind === 'text'
      ? { id: itemId, type: 'message', status: 'completed', role: 'assistant', content: [part] }
      : {
          id: itemId,
          type: 'function_call',
          status: 'completed',
          call_id: id('call'),
          name: 'exec_command',
          arguments: args,
        };
  const usage = {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: inputTokens + outputTokens,
  };
  const completed = { ...base, status: 'completed', output: [item], usage };
  if (req?.stream !== true) {
    sendJson(res, 200, completed);
    return false;
  }
  let sequence = 0;
  const sse = startSse(res, { 'x-request-id': id('req') });
  const send = (data: Record<string, unknown> & { type: string }): void =>
    sse(data.type, { ...data, sequence_number: sequence++ });
  const inProgress = { ...base, status: 'in_progress', output: [], usage: null };
  send({ type: 'response.created', response: inProgress });
  send({ type: 'response.in_progress', response: inProgress });
  if (item.type === 'message') {
    send({
      type: 'response.output_item.added',
      output_index: 0,
      item: { ...item, status: 'in_progress', content: [] },
    });
    const at = { item_id: itemId, output_index: 0, content_index: 0 };
    send({ type: 'response.content_part.added', ...at, part: { ...part, text: '' } });
    for (const delta of deltas(part.text)) send({ type: 'response.output_text.delta', ...at, delta, logprobs: [] });
    send({ type: 'response.output_text.done', ...at, text: part.text, logprobs: [] });
    send({ type: 'response.content_part.done', ...at, part });
  } else {
    send({
      type: 'response.output_item.added',
      output_index: 0,
      item: { ...item, status: 'in_progress', arguments: '' },
    });
    const at = { item_id: itemId, output_index: 0 };
    send({ type: 'response.function_call_arguments.delta', ...at, delta: args });
    send({ type: 'response.function_call_arguments.done', ...at, arguments: args });
  }
  send({ type: 'response.output_item.done', output_index: 0, item });
  send({ type: 'response.completed', response: completed });
  res.end();
  return true;
}

const MODELS = ['claude-sonnet-4-5', 'claude-haiku-4-5', 'gpt-5-codex', 'gpt-5'];

export async function startRecordingFake(options: { answer?: string; port?: number } = {}): Promise<RecordingFake> {
  const answer = options.answer ?? DEFAULT_ANSWER;
  const started = Date.now();
  const requests: RecordedRequest[] = [];

  const record = (req: IncomingMessage, body: unknown): RecordedRequest => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const entry: RecordedRequest = {
      at: Date.now() - started,
      method: req.method ?? '',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: maskHeaders(req.headers),
      body,
      status: 0,
      streamed: false,
    };
    requests.push(entry);
    return entry;
  };

  const server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const entry = record(req, body);
      const route = `${req.method} ${entry.path.replace(/\/+$/, '')}`;
      if (route === 'POST /v1/messages') {
        entry.status = 200;
        entry.streamed = anthropicMessage(body, answer, res);
      } else if (route === 'POST /v1/messages/count_tokens') {
        entry.status = 200;
        sendJson(res, 200, { input_tokens: estimate((body as any)?.messages ?? body) });
      } else if (route === 'POST /v1/responses') {
        entry.status = 200;
        entry.streamed = openaiResponse(body, answer, res);
      } else if (route === 'GET /v1/models') {
        entry.status = 200;
        const created = Math.floor(started / 1000);
        const data = MODELS.map((model) => ({
          id: model,
          type: 'model',
          object: 'model',
          display_name: model,
          created_at: new Date(started).toISOString(),
          created,
          owned_by: 'fake',
        }));
        sendJson(res, 200, { object: 'list', data, has_more: false, first_id: MODELS[0], last_id: MODELS.at(-1) });
      } else {
        entry.status = 404;
        sendJson(res, 404, {
          type: 'error',
          error: { type: 'not_found_error', message: `recording fake: no route for ${route}` },
        });
      }
    })().catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: String(error) } });
      else res.destroy();
    });
  });
  server.on('upgrade', (req, socket) => {
    const entry = record(req, undefined);
    entry.status = 404;
    entry.upgrade = String(req.headers.upgrade ?? '');
    socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
  });

  server.listen(options.port ?? 0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    answer,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
