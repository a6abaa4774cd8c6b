import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

/** The project's own entry points run as child processes of the tests: a web shell, a server. */

const ROOT = new URL('../../', import.meta.url).pathname;
/** How long a process may take to print what is waited for, unless the caller says otherwise. */
const START_TIMEOUT_MS = 60_000;

export interface RunningProcess {
  child: ChildProcess;
  output: string[];
  stop(): Promise<void>;
}

/**
 * Starts an entry point of the project (`main/web/main.ts`) as compiled into dist/ by global
 * setup, and waits for a line matching `ready`.
 */
export async function startProcess(
  entry: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
): Promise<RunningProcess & { match: RegExpMatchArray }> {
  const child = spawn(process.execPath, [join(ROOT, 'dist', entry.replace(/\.ts$/, '.js')), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((done) => child.once('exit', done));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  };
  const match = await new Promise<RegExpMatchArray>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${entry} not ready:\n${output.join('')}`)), START_TIMEOUT_MS);
    const seen = (chunk: Buffer) => {
      output.push(chunk.toString());
      const found = output.join('').match(ready);
      if (found) {
        clearTimeout(timer);
        resolve(found);
      }
    };
    child.stdout!.on('data', seen);
    child.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${entry} ended (${code}) before it was ready:\n${output.join('')}`));
    });
  });
  return { child, output, stop, match };
}

/** Waits until the process has printed a line matching `pattern` (or ends, or `timeoutMs` passes: a minute). */
export async function outputMatching(
  process: RunningProcess,
  pattern: RegExp,
  timeoutMs = START_TIMEOUT_MS,
): Promise<void> {
  const printed = () => pattern.test(process.output.join(''));
  if (printed()) return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => done(new Error(`no output matching ${pattern}:\n${process.output.join('')}`)),
      timeoutMs,
    );
    const seen = () => {
      if (printed()) done();
    };
    const ended = () => done(new Error(`ended before printing ${pattern}:\n${process.output.join('')}`));
    const done = (error?: Error) => {
      clearTimeout(timer);
      process.child.stdout?.off('data', seen);
      process.child.off('exit', ended);
      if (error) reject(error);
      else resolve();
    };
    // After startProcess's own listener, which appends the chunk to the output first.
    process.child.stdout?.on('data', seen);
    process.child.once('exit', ended);
  });
}
