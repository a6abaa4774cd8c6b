import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { get } from 'node:http';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
// The accounts' module, not seed.ts: seed.ts pulls in the stores and with them better-sqlite3.
import { DEMO_ACCOUNTS } from '../../server/demo/organisation.js';
import type { EmbeddedStatus } from './contract.js';
import { ConsoleError } from './errors.js';
import type { EmbeddedServerControl } from './host.js';
import { LogRing } from './log-ring.js';
import { spawnWithNode, type ServerExit, type ServerProcess, type SpawnServer } from './server-process.js';

/**
 * The embedded control plane: `server/cli.ts serve` in a child process on a free port
 * of 127.0.0.1, never in the host's own process (better-sqlite3 is synchronous).
 *
 * - Port: `--port 0`; the address is read from the line the server prints, then the
 *   server is "ready when it answers": GET {base}/openapi.json is polled until 200.
 * - Demo data: a data folder without `control.db` is new; the server is started with
 *   `--demo` and a marker file (`console-demo.json`) records that the console seeded it,
 *   so the demo admin's credentials are offered on every later launch. A folder the
 *   console did not seed offers none.
 * - Log: the last lines of stdout and stderr are kept for `status().lastLog`, minus any
 *   line that carries a password (the server prints the demo passwords when it seeds).
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
  /** From spawn to answering; 60 s by default. */
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

/** Written into the data folder when the console asked the server to seed the demo data there. */
export const DEMO_MARKER = 'console-demo.json';

const LISTENING = /Control plane listening at (http:\/\/127\.0\.0\.1:\d{1,5}\/api)\s*$/;
const POLL_MS = 100;

/** The demo admin, else the owner: the account offered for one-click sign-in. */
function demoAdmin(): { email: string; password: string } | null {
  const account = DEMO_ACCOUNTS.find((a) => a.role === 'admin') ?? DEMO_ACCOUNTS.find((a) => a.role === 'owner');
  return account ? { email: account.email, password: account.password } : null;
}

interface Run {
  child: ServerProcess;
  exited: Promise<ServerExit>;
  exit: ServerExit | null;
  /** The exit was asked for (stop, or a start that gave up), so it is no crash. */
  expected: boolean;
  address: string | null;
  addressSeen: () => void;
}

type Listener = (status: EmbeddedStatus) => void;

export class EmbeddedServer implements EmbeddedServerControl {
  private readonly dataDir: string;
  private readonly spawnServer: SpawnServer;
  private readonly entry: string;
  private readonly execArgv: string[];
  private readonly readyTimeoutMs: number;
  private readonly stopGraceMs: number;
  private readonly log: LogRing;
  private readonly listeners = new Set<Listener>();

  private state: EmbeddedState = 'stopped';
  private baseUrl: string | null = null;
  private run: Run | null = null;
  private starting: Promise<string> | null = null;
  private stopping: Promise<void> | null = null;
  /** Counts stop() calls, so a start queued behind a stop gives way to a later stop. */
  private stops = 0;
  private demoSeeded: boolean;

  constructor(private readonly options: EmbeddedServerOptions) {
    this.dataDir = resolve(options.dataDir);
    this.spawnServer = options.spawn ?? spawnWithNode;
    this.entry = options.entry ?? SOURCE_ENTRY;
    this.execArgv = options.execArgv ?? (/\.[cm]?ts$/.test(this.entry) ? ['--import', tsxLoader()] : []);
    this.readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
    this.stopGraceMs = options.stopGraceMs ?? 5_000;
    this.log = new LogRing(options.logLines ?? 200, options.onLog);
    this.demoSeeded = this.readMarker() === 'seeded';
  }

  /** The server process's id while one runs (tests use it to simulate a crash). */
  get pid(): number | undefined {
    return this.run?.child.pid;
  }

  /** The demo admin's credentials while the demo data we seeded is in place: for the host's sign-in only. */
  demoCredentials(): { email: string; password: string } | null {
    return this.demoSeeded ? demoAdmin() : null;
  }

  status(): EmbeddedStatus {
    const demo = this.demoCredentials();
    return {
      state: this.state,
      baseUrl: this.state === 'running' ? this.baseUrl : null,
      lastLog: this.log.snapshot(),
      demoAccount: demo ? { email: demo.email } : null,
    };
  }

  /** Told of every change of state, with the new status; returns the way to stop listening. */
  onChange(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  start(): Promise<string> {
    if (this.starting) return this.starting;
    if (!this.stopping) {
      if (this.state === 'running' && this.baseUrl) return Promise.resolve(this.baseUrl);
      if (this.state === 'crashed') return Promise.reject(this.crashedError());
    }
    const stops = this.stops;
    const starting = (async () => {
      if (this.stopping) await this.stopping;
      if (this.stops !== stops) throw new ConsoleError(503, 'the embedded server was stopped before it was ready');
      if (this.state === 'crashed') throw this.crashedError();
      if (this.state === 'running' && this.baseUrl) return this.baseUrl;
      return this.launch();
    })();
    this.starting = starting;
    const done = () => {
      if (this.starting === starting) this.starting = null;
    };
    starting.then(done, done);
    return starting;
  }

  async restart(): Promise<string> {
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
      this.baseUrl = null;
      this.setState('stopped');
    })().finally(() => {
      if (this.stopping === stopping) this.stopping = null;
    });
    this.stopping = stopping;
    return stopping;
  }

  private async launch(): Promise<string> {
    this.log.clear();
    let demo: boolean;
    try {
      mkdirSync(this.dataDir, { recursive: true });
      demo = this.demoFlag();
    } catch (error) {
      this.crash(`could not prepare the data folder ${this.dataDir}: ${errorMessage(error)}`);
      throw this.crashedError();
    }
    this.baseUrl = null;
    const args = ['serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', this.dataDir];
    if (demo) args.push('--demo');
    const env: NodeJS.ProcessEnv = {};
    for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('SVC_')) env[name] = value;
    Object.assign(env, this.options.env);

    this.setState('starting');
    const deadline = Date.now() + this.readyTimeoutMs;
    let child: ServerProcess;
    try {
      child = this.spawnServer({ entry: this.entry, args, execArgv: this.execArgv, env });
    } catch (error) {
      this.crash(`could not start the embedded server: ${errorMessage(error)}`);
      throw this.crashedError();
    }
    let addressSeen = () => {};
    const addressed = new Promise<void>((resolve) => (addressSeen = resolve));
    let exitSeen: (exit: ServerExit) => void = () => {};
    const run: Run = {
      child,
      exited: new Promise<ServerExit>((resolve) => (exitSeen = resolve)),
      exit: null,
      expected: false,
      address: null,
      addressSeen,
    };
    this.run = run;
    const onLine = (line: string) => {
      const match = run.address === null ? LISTENING.exec(line) : null;
      if (match?.[1]) {
        run.address = match[1];
        run.addressSeen();
      }
    };
    this.log.follow(child.stdout, onLine);
    this.log.follow(child.stderr, () => {});
    child.onExit((exit) => {
      run.exit = exit;
      exitSeen(exit);
      if (run.expected || this.run !== run) return;
      this.run = null;
      this.crash(describeExit(exit, this.state === 'running'));
    });

    // The address first, then an answer; a stop, an exit or the deadline ends the wait.
    await raceUntil([addressed, run.exited], deadline);
    this.checkStillStarting(run);
    if (run.address === null) return this.giveUp(run, `printed no address within ${seconds(this.readyTimeoutMs)}`);
    const probe = `${run.address}/openapi.json`;
    for (;;) {
      if (await answers(probe, Math.max(1, Math.min(2_000, deadline - Date.now())))) break;
      this.checkStillStarting(run);
      if (Date.now() >= deadline)
        return this.giveUp(run, `did not answer at ${probe} within ${seconds(this.readyTimeoutMs)}`);
      await raceUntil([run.exited], Math.min(deadline, Date.now() + POLL_MS));
      this.checkStillStarting(run);
    }
    this.checkStillStarting(run);

    if (demo) this.markDemoSeeded();
    this.baseUrl = run.address;
    this.setState('running');
    return run.address;
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
    this.baseUrl = null;
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

  /** Whether to pass --demo: a new data folder, or one whose seeding the console began but never saw finish. */
  private demoFlag(): boolean {
    const marker = this.readMarker();
    if (marker === 'seeded') {
      this.demoSeeded = true;
      return false;
    }
    if (marker === 'pending') return true;
    if (existsSync(join(this.dataDir, 'control.db'))) return false;
    this.writeMarker('pending');
    return true;
  }

  /** Reaching "running" with --demo means seeded: the server seeds before it listens. */
  private markDemoSeeded(): void {
    this.writeMarker('seeded');
    this.demoSeeded = true;
  }

  private readMarker(): 'pending' | 'seeded' | null {
    try {
      const content = JSON.parse(readFileSync(join(this.dataDir, DEMO_MARKER), 'utf8')) as { demo?: unknown };
      return content.demo === 'seeded' || content.demo === 'pending' ? content.demo : null;
    } catch {
      return null;
    }
  }

  private writeMarker(demo: 'pending' | 'seeded'): void {
    writeFileSync(join(this.dataDir, DEMO_MARKER), `${JSON.stringify({ demo })}\n`, { mode: 0o600 });
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

/** GET answering 200 within `timeoutMs`, on a connection of its own that is closed at once. */
function answers(url: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const request = get(url, { agent: false, timeout: timeoutMs }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(false));
  });
}
