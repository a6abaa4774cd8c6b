import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test as base, expect, type Page } from '@playwright/test';

/**
 * Every test gets its own console: a web shell on a free port with its own data folder,
 * whose embedded server seeds the demo organisation, and a page opened on it. Nothing is
 * shared between tests, so they run in parallel and leave nothing behind.
 */

const ROOT = new URL('../../', import.meta.url).pathname;
const START_TIMEOUT_MS = 60_000;

export interface RunningProcess {
  child: ChildProcess;
  output: string[];
  stop(): Promise<void>;
}

/** Starts a TypeScript entry point of the project with tsx, and waits for a line matching `ready`. */
export async function startProcess(
  entry: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
): Promise<RunningProcess & { match: RegExpMatchArray }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, entry), ...args], {
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

/** A Wednesday afternoon in the demo's time zone: its newest rows are a busy office's. */
export const DEMO_AS_OF = '2026-11-18T10:30:00Z';

/** Waits until the process has printed a line matching `pattern` (or ends, or a minute passes). */
export async function outputMatching(process: RunningProcess, pattern: RegExp): Promise<void> {
  const printed = () => pattern.test(process.output.join(''));
  if (printed()) return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => done(new Error(`no output matching ${pattern}:\n${process.output.join('')}`)),
      START_TIMEOUT_MS,
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

export interface ConsoleShell {
  url: string;
  dataDir: string;
}

export const test = base.extend<{
  shell: ConsoleShell;
  consolePage: Page;
  shellEnv: NodeJS.ProcessEnv;
  wholeHistory: boolean;
}>({
  /** More environment for the web shell (`test.use({ shellEnv: … })`). */
  shellEnv: [{}, { option: true }],
  /** Whether the console is handed over once the demo's history is written (false: at once). */
  wholeHistory: [true, { option: true }],
  shell: async ({ shellEnv, wholeHistory }, use) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gc-e2e-'));
    const shell = await startProcess(
      'main/web/main.ts',
      [],
      // No live demo traffic: the tests count rows (gateway.spec.ts calls the gateway itself). The
      // history drawn as of a fixed instant: the same rows, relative to now, on any day and hour.
      {
        GC_DATA_DIR: dataDir,
        GC_NO_BROWSER: '1',
        GC_PORT: '',
        GC_DEMO_TRAFFIC: '0',
        GC_DEMO_AS_OF: DEMO_AS_OF,
        ...shellEnv,
      },
      /(http:\/\/127\.0\.0\.1:\d+\/#token=[\w-]+)/,
    );
    try {
      // The console lets the demo admin in before its history is written; the tests read it whole.
      if (wholeHistory) await outputMatching(shell, /demo history in place|Embedded server: crashed/);
      await use({ url: shell.match[1]!, dataDir });
    } finally {
      await shell.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
  consolePage: async ({ page, shell }, use) => {
    await page.goto(shell.url);
    await expect(page.getByTestId('connect-screen')).toBeVisible();
    await use(page);
  },
});

export { expect };

/** A fresh control plane of its own, reached as a remote connection (for registration and failure cases). */
export async function startServer(
  dataDir: string,
  options: { args?: string[]; env?: NodeJS.ProcessEnv } = {},
): Promise<RunningProcess & { baseUrl: string }> {
  const server = await startProcess(
    'server/cli.ts',
    ['serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir, ...(options.args ?? [])],
    { SVC_PASSWORD_COST: '14', SVC_LOG_LEVEL: 'warn', ...options.env },
    /listening at (http:\/\/127\.0\.0\.1:\d+)\/api/,
  );
  return { ...server, baseUrl: `${server.match[1]!}/api` };
}
