/**
 * Runs the coding agents headless and offline against a local base URL: Claude Code (`claude -p`, Anthropic
 * Messages API) and OpenAI Codex (`codex exec`, OpenAI Responses API), both from this project's devDependencies.
 * - Each run gets a throwaway HOME (and CLAUDE_CONFIG_DIR / CODEX_HOME in it), removed afterwards, and an environment
 *   built from scratch: nothing of the caller's (API keys, proxies, config) leaks into the agent.
 * - Each agent is configured to send nothing but its model requests: Claude Code with
 *   CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC and the DISABLE_* switches (without them it calls api.anthropic.com and
 *   sends `HEAD /api/hello` to the base URL), Codex with `[analytics] enabled = false` (else ab.chatgpt.com) and the
 *   plugin features off (else github.com, api.github.com and chatgpt.com for the curated plugins).
 * - `proxy` points HTTP(S)_PROXY/ALL_PROXY at a trap (startProxyTrap) with NO_PROXY for loopback: both agents honour
 *   them, so any attempt to reach another host lands in the trap. `traceNetwork` also runs the agent under strace
 *   (when installed) and reports every IP destination it connected or sent to, DNS included.
 * `baseUrl` is the server's root (`http://127.0.0.1:PORT`, no `/v1`): Claude Code appends `/v1/messages`, and the
 * Codex provider is given `${baseUrl}/v1`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

export interface AgentRunOptions {
  /** The server's root, e.g. `http://127.0.0.1:8080` (no trailing `/v1`). */
  baseUrl: string;
  /** The key the agent sends: `x-api-key` (Claude Code; `bearer` sends `authorization: Bearer`), or `authorization: Bearer` (Codex). */
  apiKey: string;
  prompt: string;
  /** The agent's working directory (its workspace). */
  cwd: string;
  /** The model id the agent asks for. Defaults: `claude-sonnet-4-5`, `gpt-5.5`. */
  model?: string;
  /** Kills the agent (and its process group) after this long; default 60 s. */
  timeoutMs?: number;
  /** A proxy URL (see startProxyTrap) for HTTP(S)_PROXY and ALL_PROXY; loopback stays direct (NO_PROXY). */
  proxy?: string;
  /** Run under `strace` (when installed) and report the IP destinations of every connect/send. */
  traceNetwork?: boolean;
  /** More arguments for the agent's command line. */
  args?: string[];
  /** More environment variables (override the defaults). */
  env?: Record<string, string>;
}

export interface ClaudeCodeRunOptions extends AgentRunOptions {
  /** How the key is sent: ANTHROPIC_API_KEY → `x-api-key` (default), ANTHROPIC_AUTH_TOKEN → `authorization: Bearer`. */
  auth?: 'x-api-key' | 'bearer';
  /** The model Claude Code would use for small background tasks (ANTHROPIC_DEFAULT_HAIKU_MODEL); default `model`. */
  smallModel?: string;
  /** Tools Claude Code may use without asking (`--allowedTools`); default Bash, so a tool round trip can run. */
  allowedTools?: string[];
}

export interface CodexRunOptions extends AgentRunOptions {
  /** Codex's sandbox for the commands it runs; default `read-only` (works as root in a container). */
  sandbox?: 'read-only' | 'workspace-write' | 'danger-full-access';
}

export interface AgentRun {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  durationMs: number;
  timedOut: boolean;
  /** With traceNetwork and strace installed: every `address:port` the agent's processes connected or sent to. */
  destinations?: string[];
}

/** Claude Code's native binary: the platform package's own (present whether or not its postinstall ran). */
export function claudeCodeBinary(): string {
  const libc = process.platform === 'linux' && !(process.report?.getReport() as any)?.header?.glibcVersionRuntime;
  const platform = `${process.platform}-${process.arch}${libc ? '-musl' : ''}`;
  const name = process.platform === 'win32' ? 'claude.exe' : 'claude';
  try {
    const file = join(dirname(require.resolve(`@anthropic-ai/claude-code-${platform}/package.json`)), name);
    if (existsSync(file)) return file;
  } catch {
    // Not installed for this platform: the wrapper's bin, once its postinstall has copied the binary over the stub.
  }
  const bin = join(dirname(require.resolve('@anthropic-ai/claude-code/package.json')), 'bin', 'claude.exe');
  if (statSync(bin).size < 100_000) throw new Error(`Claude Code has no native binary for ${platform}`);
  return bin;
}

/** Codex's npm launcher (bin/codex.js), which finds the platform binary and puts its helpers on PATH. */
export function codexLauncher(): string {
  return join(dirname(require.resolve('@openai/codex/package.json')), 'bin', 'codex.js');
}

function hasStrace(): boolean {
  return process.platform === 'linux' && spawnSync('strace', ['-V'], { stdio: 'ignore' }).status === 0;
}

/** The IP destinations in an strace log of connect/sendto/sendmsg (`address:port`, IPv6 in brackets), each once. */
export function straceDestinations(log: string): string[] {
  const found = new Set<string>();
  const v4 = /sin_port=htons\((\d+)\), sin_addr=inet_addr\("([^"]+)"\)/g;
  const v6 = /sin6_port=htons\((\d+)\),.*?inet_pton\(AF_INET6, "([^"]+)"/g;
  for (const match of log.matchAll(v4)) found.add(`${match[2]}:${match[1]}`);
  for (const match of log.matchAll(v6)) found.add(`[${match[2]}]:${match[1]}`);
  return [...found];
}

/** A base environment that holds nothing of the caller's but PATH. */
function baseEnv(home: string, proxy: string | undefined): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    TMPDIR: join(home, 'tmp'),
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    NO_COLOR: '1',
  };
  if (proxy) {
    for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY']) {
      env[name] = proxy;
      env[name.toLowerCase()] = proxy;
    }
    env.NO_PROXY = env.no_proxy = '127.0.0.1,localhost,::1';
  }
  return env;
}

async function run(
  command: string,
  args: string[],
  options: { cwd: string; env: Record<string, string>; home: string; timeoutMs: number; traceNetwork: boolean },
): Promise<AgentRun> {
  let file = command;
  let argv = args;
  const trace = options.traceNetwork && hasStrace() ? join(options.home, 'strace.log') : undefined;
  if (trace) {
    file = 'strace';
    argv = [
      '-f',
      '--seccomp-bpf',
      '-qq',
      '-o',
      trace,
      '-e',
      'trace=connect,sendto,sendmsg,sendmmsg',
      '-e',
      'signal=none',
      command,
      ...args,
    ];
  }
  const started = performance.now();
  // stdin closed: `codex exec` otherwise waits to read more of the prompt from it.
  const child = spawn(file, argv, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      child.kill('SIGKILL');
    }
  }, options.timeoutMs);
  const [exitCode, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
  clearTimeout(timer);
  const result: AgentRun = { exitCode, signal, stdout, stderr, durationMs: performance.now() - started, timedOut };
  if (trace) result.destinations = straceDestinations(await readFile(trace, 'utf8').catch(() => ''));
  return result;
}

async function withHome<T>(prefix: string, body: (home: string) => Promise<T>): Promise<T> {
  const home = await mkdtemp(join(tmpdir(), prefix));
  try {
    await mkdir(join(home, 'tmp'));
    return await body(home);
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

/**
 * `claude -p PROMPT --output-format json` against `baseUrl`: stdout is one JSON result
 * (`{ type: 'result', subtype: 'success', is_error, result, num_turns, usage, modelUsage, … }`).
 */
export function runClaudeCode(options: ClaudeCodeRunOptions): Promise<AgentRun> {
  const model = options.model ?? 'claude-sonnet-4-5';
  return withHome('claude-code-', async (home) => {
    const env: Record<string, string> = {
      ...baseEnv(home, options.proxy),
      CLAUDE_CONFIG_DIR: join(home, '.claude'),
      ANTHROPIC_BASE_URL: options.baseUrl,
      [options.auth === 'bearer' ? 'ANTHROPIC_AUTH_TOKEN' : 'ANTHROPIC_API_KEY']: options.apiKey,
      ANTHROPIC_DEFAULT_HAIKU_MODEL: options.smallModel ?? model,
      ANTHROPIC_SMALL_FAST_MODEL: options.smallModel ?? model,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_BUG_COMMAND: '1',
      ...options.env,
    };
    const args = [
      '-p',
      options.prompt,
      '--model',
      model,
      '--output-format',
      'json',
      '--max-turns',
      '4',
      '--no-session-persistence',
      '--allowedTools',
      (options.allowedTools ?? ['Bash']).join(','),
      ...(options.args ?? []),
    ];
    return run(claudeCodeBinary(), args, {
      cwd: options.cwd,
      env,
      home,
      timeoutMs: options.timeoutMs ?? 60_000,
      traceNetwork: options.traceNetwork ?? false,
    });
  });
}

/** The config.toml of a Codex home that talks to `baseUrl` only: a `gateway` provider on the Responses API. */
export function codexConfig(options: { baseUrl: string; model: string; sandbox: string; envKey: string }): string {
  return [
    `model = ${JSON.stringify(options.model)}`,
    'model_provider = "gateway"',
    'approval_policy = "never"',
    `sandbox_mode = ${JSON.stringify(options.sandbox)}`,
    'check_for_update_on_startup = false',
    '',
    '[analytics]',
    'enabled = false',
    '',
    '[features]',
    'plugins = false',
    'remote_plugin = false',
    'apps = false',
    '',
    '[model_providers.gateway]',
    'name = "Gateway"',
    `base_url = ${JSON.stringify(`${options.baseUrl.replace(/\/+$/, '')}/v1`)}`,
    `env_key = ${JSON.stringify(options.envKey)}`,
    'wire_api = "responses"',
    '',
  ].join('\n');
}

/**
 * `codex exec --skip-git-repo-check --ephemeral PROMPT` against `baseUrl`: stdout is the agent's last message,
 * stderr its transcript (commands it ran, warnings).
 */
export function runCodex(options: CodexRunOptions): Promise<AgentRun> {
  const model = options.model ?? 'gpt-5.5';
  return withHome('codex-', async (home) => {
    const codexHome = join(home, '.codex');
    await mkdir(codexHome);
    const config = codexConfig({
      baseUrl: options.baseUrl,
      model,
      sandbox: options.sandbox ?? 'read-only',
      envKey: 'GATEWAY_KEY',
    });
    await writeFile(join(codexHome, 'config.toml'), config);
    const env: Record<string, string> = {
      ...baseEnv(home, options.proxy),
      CODEX_HOME: codexHome,
      GATEWAY_KEY: options.apiKey,
      ...options.env,
    };
    const args = ['exec', '--skip-git-repo-check', '--ephemeral', '--color', 'never', ...(options.args ?? [])];
    return run(process.execPath, [codexLauncher(), ...args, options.prompt], {
      cwd: options.cwd,
      env,
      home,
      timeoutMs: options.timeoutMs ?? 60_000,
      traceNetwork: options.traceNetwork ?? false,
    });
  });
}

/**
 * A proxy that lets nothing through: every connection to it is logged (its first line, e.g. `CONNECT host:443`)
 * and answered 403. Point an agent's proxy variables at it to see whether it tries to reach anything else.
 */
export async function startProxyTrap(): Promise<{ url: string; hits: string[]; close(): Promise<void> }> {
  const hits: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.once('data', (data) => {
      hits.push(data.toString('latin1').split('\r\n')[0] ?? '');
      socket.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
    });
    socket.on('error', () => undefined);
    socket.setTimeout(5_000, () => socket.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
