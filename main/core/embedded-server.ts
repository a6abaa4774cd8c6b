import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { get } from 'node:http';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { TypeCheck } from '@sinclair/typebox/compiler';
import type { Agent } from 'undici';
import type { EmbeddedHistory, EmbeddedReady } from '#server/schemas/embedded.js';
import { ANNOUNCE_FLAG } from '#server/schemas/embedded-names.js';
import type { EmbeddedStatus } from './contract.js';
import { socketPlace, type SocketPlace } from './embedded-socket.js';
import { ConsoleError } from './errors.js';
import type { EmbeddedConnection, EmbeddedServerControl } from './host.js';
import { LogRing } from './log-ring.js';
import { spawnWithNode, type ServerExit, type ServerProcess, type SpawnServer } from './server-process.js';

/**
 * The embedded control plane: `server/cli.ts serve` in a child process, never in the host's
 * own process (better-sqlite3 is synchronous).
 *
 * - Door: a Unix socket in the private data folder, or a named pipe on Windows
 *   (embedded-socket.ts), never a TCP port: the console's user is the only one who can reach
 *   it. With `--announce` the server says it listens over the process's channel
 *   ({@link EmbeddedReady}: Node's IPC, or a utility process's parent port), checked here on
 *   arrival; then the server is "ready when it answers": GET /api/openapi.json over the
 *   socket is polled until 200. Its console is for people: only kept.
 * - Requests: `start()` gives the host the address they name (EMBEDDED_ADDRESS, the same at
 *   every start, so the cookie jar's origin is too) with a dispatcher that carries them to
 *   the socket; it lives as long as the server's process.
 * - Demo data: until the console has seen it seed a folder, the server is started with
 *   `--demo`, and seeds only a new folder (its rule, not repeated here). When it says it
 *   seeded, a marker file (`console-demo.json`, 0600) keeps the demo admin's credentials
 *   from its message, so they are offered on every later launch. A folder the console did
 *   not see seeded offers none.
 * - Log: the last lines of stdout and stderr are kept for `status().lastLog`, minus any
 *   line that carries a password (the announcing server prints none; the filter stays).
 * - A crash (any exit not asked for) turns the state to `crashed` and tells the
 *   listeners; `start()` then refuses until `restart()`, so the crash is seen, not hidden.
 * - Dying with the host: the shell calls `stop()` on exit. For a host killed outright,
 *   the default spawner gives the child a pipe as stdin and a one-line preload that
 *   stops the server when that pipe closes, which the OS does when the host dies,
 *   however it dies. Electron ends its utility processes with the app by itself.
 */

export type EmbeddedState = EmbeddedStatus['state'];

export interface EmbeddedServerOptions {
  /** The server's data folder; see {@link appDataDir}. Created when missing. */
  dataDir: string;
  spawn?: SpawnServer;
  /** The server's entry: `server/cli.ts` from source by default, or a built app's bundled CLI. */
  entry?: string;
  /** Runtime flags; by default the tsx loader when the entry is TypeScript, none otherwise. */
  execArgv?: string[];
  /** Added to the host's environment, whose own `SVC_*` variables are not passed on. */
  env?: NodeJS.ProcessEnv;
  /** From spawn to answering; 60 s by default, 180 s for a start that seeds the demo data. */
  readyTimeoutMs?: number;
  /** How long stop() waits after SIGTERM before SIGKILL; 5 s by default. */
  stopGraceMs?: number;
  /** Lines kept for `status().lastLog`; 200 by default. */
  logLines?: number;
  /** Every log line that is kept (passwords already filtered out), e.g. for the web shell's console. */
  onLog?: (line: string) => void;
}

/** The server's entry next to this module: TypeScript when run from source, JavaScript when built. */
export const SOURCE_ENTRY = fileURLToPath(
  new URL(import.meta.url.endsWith('.ts') ? '../../server/cli.ts' : '../../server/cli.js', import.meta.url),
);
/** The tsx loader, looked up only when running from source: a built app need not ship it. */
function tsxLoader(): string {
  return pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
}

/**
 * Written into the data folder when the server said it seeded the demo data there:
 * `{"demo":"seeded","account":{"email":…,"password":…}}`, readable by its owner only.
 */
export const DEMO_MARKER = 'console-demo.json';

/** From spawn to answering, and for a first start, which seeds the demo data before it listens. */
const READY_MS = 60_000;
const SEEDING_READY_MS = 180_000;
const POLL_MS = 100;

/** What a start needs once its server is spawned: the checks of its messages, and a dispatcher to its socket. */
interface Tools {
  ready: TypeCheck<typeof EmbeddedReady>;
  history: TypeCheck<typeof EmbeddedHistory>;
  Agent: typeof Agent;
}
let tools: Promise<Tools> | null = null;

/**
 * Loaded after the first spawn, not with this module: typebox and undici take a few hundred
 * milliseconds to load, which a first launch then spends while its server starts instead of
 * before it (the web shell spawns the server before it loads the rest of itself).
 */
function loadTools(): Promise<Tools> {
  tools ??= Promise.all([
    import('@sinclair/typebox/compiler'),
    import('undici'),
    import('#server/schemas/embedded.js'),
  ]).then(([{ TypeCompiler }, { Agent }, schemas]) => ({
    ready: TypeCompiler.Compile(schemas.EmbeddedReady),
    history: TypeCompiler.Compile(schemas.EmbeddedHistory),
    Agent,
  }));
  return tools;
}

type Credentials = { email: string; password: string };

interface Run {
  child: ServerProcess;
  exited: Promise<ServerExit>;
  exit: ServerExit | null;
  /** The exit was asked for (stop, or a start that gave up), so it is no crash. */
  expected: boolean;
  /** The server's first message: its announcement, or 'malformed' when it failed the check. */
  ready: EmbeddedReady | 'malformed' | null;
  /** How far its demo history is, as it last said; null when it writes none. */
  history: EmbeddedHistory | null;
  /** Where it was told to listen. */
  place: SocketPlace;
  /** Carries requests to its socket once it answers; closed when the process has gone. */
  dispatcher: Agent | null;
}

type Listener = (status: EmbeddedStatus) => void;

export class EmbeddedServer implements EmbeddedServerControl {
  private readonly dataDir: string;
  private readonly spawnServer: SpawnServer;
  private readonly entry: string;
  private readonly execArgv: string[];
  private readonly readyTimeoutMs: number | undefined;
  private readonly stopGraceMs: number;
  private readonly log: LogRing;
  private readonly listeners = new Set<Listener>();

  private state: EmbeddedState = 'stopped';
  private connection: EmbeddedConnection | null = null;
  /** The running server's gateway address, as it announced it. */
  private gateway: string | null = null;
  private run: Run | null = null;
  private starting: Promise<EmbeddedConnection> | null = null;
  private stopping: Promise<void> | null = null;
  /** Counts stop() calls, so a start queued behind a stop gives way to a later stop. */
  private stops = 0;
  /** The demo admin's credentials, once the server has said it seeded this folder. */
  private demoAccount: Credentials | null = null;

  constructor(private readonly options: EmbeddedServerOptions) {
    this.dataDir = resolve(options.dataDir);
    this.spawnServer = options.spawn ?? spawnWithNode;
    this.entry = options.entry ?? SOURCE_ENTRY;
    this.execArgv = options.execArgv ?? (/\.[cm]?ts$/.test(this.entry) ? ['--import', tsxLoader()] : []);
    this.readyTimeoutMs = options.readyTimeoutMs;
    this.stopGraceMs = options.stopGraceMs ?? 5_000;
    this.log = new LogRing(options.logLines ?? 200, options.onLog);
    this.adoptDemo(this.readMarker()?.account ?? null);
  }

  /** The server process's id while one runs (tests use it to simulate a crash). */
  get pid(): number | undefined {
    return this.run?.child.pid;
  }

  /** The socket (or pipe) the running server was told to listen on, for people and tests. */
  get socketPath(): string | undefined {
    return this.run?.place.path;
  }

  /** The demo admin's credentials while the demo data we seeded is in place: for the host's sign-in only. */
  demoCredentials(): Credentials | null {
    return this.demoAccount ? { ...this.demoAccount } : null;
  }

  status(): EmbeddedStatus {
    const demo = this.demoCredentials();
    const said = this.state === 'running' ? this.run?.history : null;
    const history = said ? { rows: said.rows, of: said.of, ...(said.failed ? { failed: said.failed } : {}) } : null;
    return {
      state: this.state,
      baseUrl: this.state === 'running' ? (this.connection?.baseUrl ?? null) : null,
      lastLog: this.log.snapshot(),
      demoAccount: demo ? { email: demo.email } : null,
      ...(this.state === 'running' && this.gateway ? { gatewayUrl: this.gateway } : {}),
      ...(history ? { demoHistory: history } : {}),
    };
  }

  /** Told of every change of state, with the new status; returns the way to stop listening. */
  onChange(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  start(): Promise<EmbeddedConnection> {
    if (this.starting) return this.starting;
    if (!this.stopping) {
      if (this.state === 'running' && this.connection) return Promise.resolve(this.connection);
      if (this.state === 'crashed') return Promise.reject(this.crashedError());
    }
    const stops = this.stops;
    const starting = (async () => {
      if (this.stopping) await this.stopping;
      if (this.stops !== stops) throw new ConsoleError(503, 'the embedded server was stopped before it was ready');
      if (this.state === 'crashed') throw this.crashedError();
      if (this.state === 'running' && this.connection) return this.connection;
      return this.launch();
    })();
    this.starting = starting;
    const done = () => {
      if (this.starting === starting) this.starting = null;
    };
    starting.then(done, done);
    return starting;
  }

  async restart(): Promise<EmbeddedConnection> {
    await this.stop();
    return this.start();
  }

  /** SIGTERM, then SIGKILL after the grace period; resolves once the process has gone. */
  stop(): Promise<void> {
    this.stops += 1;
    if (this.stopping) return this.stopping;
    const run = this.run;
    this.run = null;
    this.starting = null;
    const stopping = (async () => {
      if (run) {
        run.expected = true;
        await this.terminate(run);
      }
      this.connection = null;
      this.setState('stopped');
    })().finally(() => {
      if (this.stopping === stopping) this.stopping = null;
    });
    this.stopping = stopping;
    return stopping;
  }

  private async launch(): Promise<EmbeddedConnection> {
    this.log.clear();
    let place: SocketPlace;
    try {
      // 0700 here too, though the server narrows it before it listens: the socket will be inside.
      mkdirSync(this.dataDir, { recursive: true, mode: 0o700 });
      place = socketPlace(this.dataDir);
    } catch (error) {
      this.crash(`could not prepare the data folder ${this.dataDir}: ${errorMessage(error)}`);
      throw this.crashedError();
    }
    // Asking for the demo data is safe: the server seeds a new folder only, and says whether it did.
    const marker = this.readMarker();
    this.adoptDemo(marker?.account ?? null);
    // Written before asking, so that a start cut off between seeding and announcing (the host
    // quit, the deadline) still finds the folder marked as the console's at the next start.
    let pending = false;
    if (!this.demoAccount && marker === null) pending = this.writeMarker({ demo: 'pending' });
    this.connection = null;
    // The gateway on a free loopback port, answered by the simulated upstream: the console is offline-first.
    const args = [
      'serve',
      '--socket',
      place.path,
      '--data-dir',
      this.dataDir,
      '--gateway-port',
      '0',
      '--simulated-upstream',
      ANNOUNCE_FLAG,
    ];
    if (!this.demoAccount) args.push('--demo');
    const env: NodeJS.ProcessEnv = {};
    for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('SVC_')) env[name] = value;
    Object.assign(env, this.options.env);

    this.setState('starting');
    // Seeding a month of demo traffic comes before the address: on a slow or busy machine it
    // alone can take a minute, and giving up then would leave a new user with nothing.
    const readyMs = this.readyTimeoutMs ?? (this.demoAccount ? READY_MS : SEEDING_READY_MS);
    const deadline = Date.now() + readyMs;
    let child: ServerProcess;
    try {
      child = this.spawnServer({ entry: this.entry, args, execArgv: this.execArgv, env });
    } catch (error) {
      place.release();
      this.crash(`could not start the embedded server: ${errorMessage(error)}`);
      throw this.crashedError();
    }
    const loading = loadTools();
    let loadFailed: string | null = null;
    let readySeen = () => {};
    const announced = new Promise<void>((resolve) => (readySeen = resolve));
    loading.catch((error: unknown) => {
      loadFailed = errorMessage(error);
      readySeen();
    });
    let exitSeen: (exit: ServerExit) => void = () => {};
    const run: Run = {
      child,
      exited: new Promise<ServerExit>((resolve) => (exitSeen = resolve)),
      exit: null,
      expected: false,
      ready: null,
      history: null,
      place,
      dispatcher: null,
    };
    this.run = run;
    // The boundary: a message is the server's word only once it passes the schema. In order,
    // each once the checks have loaded.
    let inbox: Promise<void> = Promise.resolve();
    child.onMessage((message) => {
      inbox = inbox
        .then(() => loading)
        .then((checks) => {
          if (run.ready === null) {
            run.ready = checks.ready.Check(message) ? message : 'malformed';
            readySeen();
            return;
          }
          // Later, how far the demo's history is: news for the renderer's progress, nothing more.
          if (!checks.history.Check(message) || message.rows > message.of) return;
          run.history = message;
          if (this.run === run && this.state === 'running') this.setState('running');
        })
        .catch(() => {});
    });
    this.log.follow(child.stdout);
    this.log.follow(child.stderr);
    child.onExit((exit) => {
      run.exit = exit;
      // Its socket is gone with it: whatever reached it is of no more use.
      void run.dispatcher?.destroy().catch(() => undefined);
      run.place.release();
      exitSeen(exit);
      if (run.expected || this.run !== run) return;
      this.run = null;
      this.crash(describeExit(exit, this.state === 'running'));
    });

    // The address first, then an answer; a stop, an exit or the deadline ends the wait.
    await raceUntil([announced, run.exited], deadline);
    this.checkStillStarting(run);
    if (loadFailed) return this.giveUp(run, `could not be heard: ${loadFailed}`);
    if (run.ready === null) return this.giveUp(run, `printed no address within ${seconds(readyMs)}`);
    if (run.ready === 'malformed') return this.giveUp(run, 'announced itself in a message the console cannot read');
    const { address, socketPath, demo } = run.ready;
    // Seeded before it listened: recorded now, however the start goes on. A folder marked
    // before this start (seeded by an older console, or a start cut off) gets the account the
    // server names; a folder it did not seed loses the marker written for this start.
    if (demo.account && (demo.seeded || marker !== null)) this.recordDemo(demo.account);
    else if (pending && !demo.seeded) this.removeMarker();
    if (socketPath !== place.path) return this.giveUp(run, `listens on ${socketPath}, not on the socket it was given`);
    // The API's cheapest answer, 401 to a request without a session: its OpenAPI document is built
    // on first request, which a new user's sign-in would wait for.
    const probe = new URL(`${address}/auth/me`);
    // Loaded: the announcement was checked with them.
    const { Agent } = await loading;
    for (;;) {
      if (await answers(socketPath, probe, Math.max(1, Math.min(2_000, deadline - Date.now())))) break;
      this.checkStillStarting(run);
      if (Date.now() >= deadline)
        return this.giveUp(run, `did not answer ${probe.pathname} within ${seconds(readyMs)}`);
      await raceUntil([run.exited], Math.min(deadline, Date.now() + POLL_MS));
      this.checkStillStarting(run);
    }
    this.checkStillStarting(run);

    run.dispatcher = new Agent({ connect: { socketPath } });
    this.connection = { baseUrl: address, dispatcher: run.dispatcher };
    this.gateway = run.ready.gateway ?? null;
    this.setState('running');
    return this.connection;
  }

  /** Throws when the run ended while starting: stopped by the host, or exited (a crash, already recorded). */
  private checkStillStarting(run: Run): void {
    if (this.run === run && run.exit === null) return;
    if (run.expected) throw new ConsoleError(503, 'the embedded server was stopped before it was ready');
    throw this.crashedError();
  }

  /** Ends a start that took too long; the process goes first, so the reason is the last line of the log. */
  private async giveUp(run: Run, reason: string): Promise<never> {
    run.expected = true;
    this.run = null;
    const stops = this.stops;
    await this.terminate(run);
    if (this.stops !== stops) throw new ConsoleError(503, 'the embedded server was stopped before it was ready');
    this.crash(`the embedded server ${reason}; stopped it`);
    throw this.crashedError();
  }

  private async terminate(run: Run): Promise<void> {
    if (run.exit) return;
    run.child.kill('SIGTERM');
    if (await raceUntil([run.exited], Date.now() + this.stopGraceMs)) return;
    run.child.kill('SIGKILL');
    await raceUntil([run.exited], Date.now() + this.stopGraceMs);
  }

  private crash(message: string): void {
    this.log.push(`[console] ${message}`);
    this.connection = null;
    this.setState('crashed');
  }

  private crashedError(): ConsoleError {
    // Its last log lines are in status(), for the renderer to show.
    return new ConsoleError(503, 'the embedded server has crashed; restart it');
  }

  private setState(state: EmbeddedState): void {
    this.state = state;
    const status = this.status();
    for (const listener of this.listeners) {
      try {
        listener(status);
      } catch {
        // A listener's failure is its own; the lifecycle goes on.
      }
    }
  }

  /** Offers `account` for the demo sign-in, and keeps its password out of the log. */
  private adoptDemo(account: Credentials | null): void {
    if (!account) return;
    this.demoAccount = account;
    this.log.hide(account.password);
  }

  /** The server said it seeded the demo data: its admin is offered now and on every later launch. */
  private recordDemo(account: Credentials | null): void {
    this.adoptDemo(account);
    // Offered for this run of the host only when it fails; a later one asks again.
    this.writeMarker({ demo: 'seeded', account });
  }

  /** Writes the marker for its owner alone (chmod too: an existing file keeps its mode on write). */
  private writeMarker(content: { demo: 'pending' } | { demo: 'seeded'; account: Credentials | null }): boolean {
    const path = join(this.dataDir, DEMO_MARKER);
    try {
      writeFileSync(path, `${JSON.stringify(content)}\n`, { mode: 0o600 });
      chmodSync(path, 0o600);
      return true;
    } catch (error) {
      this.log.push(`[console] could not write ${DEMO_MARKER}: ${errorMessage(error)}`);
      return false;
    }
  }

  private removeMarker(): void {
    rmSync(join(this.dataDir, DEMO_MARKER), { force: true });
  }

  /**
   * The marker, null when there is none: the console seeded this folder (or began to), and the
   * demo admin it recorded. Older consoles wrote `pending` or `seeded` without the account; such
   * a folder is asked for --demo again, and the server names the account it holds.
   */
  private readMarker(): { account: Credentials | null } | null {
    try {
      const content = JSON.parse(readFileSync(join(this.dataDir, DEMO_MARKER), 'utf8')) as {
        demo?: unknown;
        account?: { email?: unknown; password?: unknown } | null;
      };
      const email = content.account?.email;
      const password = content.account?.password;
      if (content.demo !== 'seeded' && content.demo !== 'pending') return null;
      return {
        account:
          content.demo === 'seeded' && typeof email === 'string' && typeof password === 'string'
            ? { email, password }
            : null,
      };
    } catch {
      return null;
    }
  }
}

function describeExit(exit: ServerExit, wasRunning: boolean): string {
  const how = exit.error
    ? `could not be started (${exit.error.message})`
    : exit.signal
      ? `was ended by ${exit.signal}`
      : `exited with code ${exit.code ?? 'unknown'}`;
  return `the embedded server ${how}${wasRunning ? '' : ' before it was ready'}`;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

/** Whether one of `promises` settles before `deadline`. */
async function raceUntil(promises: Promise<unknown>[], deadline: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([...promises.map((promise) => promise.then(() => true)), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** GET `url` over the socket answering 401 (no session) within `timeoutMs`, on a connection of its own closed at once. */
function answers(socketPath: string, url: URL, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const options = { socketPath, path: url.pathname, headers: { host: url.host }, agent: false, timeout: timeoutMs };
    const request = get(options, (response) => {
      response.resume();
      resolve(response.statusCode === 401);
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(false));
  });
}
