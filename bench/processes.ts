import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { sleep } from './stats.js';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface Child {
  pid: number;
  /** The address in the line that `ready` matches. */
  url: string;
  /** The output so far (stdout and stderr go to one log file). */
  log(): string;
  stop(): Promise<void>;
}

/**
 * Starts `node --import tsx <script> ...args` (what the `tsx` command runs, minus the
 * extra process, so that `pid` is the process being measured), output to `logPath`,
 * and waits up to `timeoutMs` for the line `ready` matches; its first group is the address.
 */
export async function startChild(
  script: string,
  args: string[],
  options: { logPath: string; ready: RegExp; env?: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<Child> {
  const fd = openSync(options.logPath, 'w');
  let child: ChildProcess;
  try {
    // Compiled JavaScript runs as it is, the way `npm start` runs the app; sources through tsx.
    child = spawn(process.execPath, [...(script.endsWith('.ts') ? ['--import', 'tsx'] : []), script, ...args], {
      cwd: ROOT,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', fd, fd],
    });
  } finally {
    closeSync(fd);
  }
  const log = () => readFileSync(options.logPath, 'utf8');
  let exited = child.exitCode !== null;
  const exit = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true;
      resolve();
    });
  });
  const stop = async () => {
    if (exited) return;
    child.kill('SIGTERM');
    // Up to 5 s to close cleanly, then forced.
    const clean = await Promise.race([exit.then(() => true), sleep(5000).then(() => false)]);
    if (!clean && !exited) {
      child.kill('SIGKILL');
      await Promise.race([exit, sleep(2000)]);
    }
  };
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  try {
    while (Date.now() < deadline) {
      const match = options.ready.exec(log());
      if (match) return { pid: child.pid!, url: match[1]!, log, stop };
      if (exited) throw new Error(`${script} exited before listening:\n${log().slice(-2000)}`);
      await sleep(50);
    }
    throw new Error(
      `${script} did not start listening within ${options.timeoutMs ?? 30_000} ms:\n${log().slice(-2000)}`,
    );
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * The peak anonymous RSS of a process (RssAnon in /proc/<pid>/status, sampled every
 * `everyMs`): private memory only, not the file-backed pages of mapped databases.
 */
export class RssSampler {
  peakAnonBytes = 0;
  peakFileBytes = 0;
  samples = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly pid: number,
    everyMs = 100,
  ) {
    this.sample();
    this.timer = setInterval(() => this.sample(), everyMs);
    this.timer.unref();
  }

  sample(): void {
    let status: string;
    try {
      status = readFileSync(`/proc/${this.pid}/status`, 'utf8');
    } catch {
      return; // Not Linux, or the process has gone.
    }
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    const anon = kb('RssAnon');
    const file = kb('RssFile');
    if (Number.isFinite(anon)) {
      this.samples++;
      this.peakAnonBytes = Math.max(this.peakAnonBytes, anon);
    }
    if (Number.isFinite(file)) this.peakFileBytes = Math.max(this.peakFileBytes, file);
  }

  stop(): void {
    this.sample();
    clearInterval(this.timer);
  }
}
