import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test as base, expect, type Page } from '@playwright/test';
import { copyOfDemoFolder } from './demo-folder.js';
import { outputMatching, startProcess, type RunningProcess } from './processes.js';
import { startWebShell } from './web-shell.js';

export { DEMO_AS_OF } from './web-shell.js';

/**
 * Every test gets its own console: a web shell on a free port with its own data folder, whose
 * embedded server holds the demo organisation, and a page opened on it. The folder is a copy of
 * the demo folder global setup seeded (demo-folder.ts), or for a first launch a new one. Nothing
 * is shared between tests, so they run in parallel and leave nothing behind.
 */

/** Environment that shapes the demo a first launch seeds; a copy has the seeded folder's demo. */
const SEEDING_VARIABLES = ['GC_DEMO_ROWS', 'GC_DEMO_AS_OF'];

export interface ConsoleShell {
  url: string;
  dataDir: string;
}

export const test = base.extend<{
  shell: ConsoleShell;
  consolePage: Page;
  shellEnv: NodeJS.ProcessEnv;
  firstLaunch: boolean;
}>({
  /** More environment for the web shell (`test.use({ shellEnv: … })`). */
  shellEnv: [{}, { option: true }],
  /**
   * A first launch: a new, empty data folder, whose demo is seeded as the test runs, handed over
   * at once (the demo admin may sign in before its history is written). Otherwise a copy of the
   * seeded folder, handed over once its server runs, with the demo's history whole.
   */
  firstLaunch: [false, { option: true }],
  shell: async ({ shellEnv, firstLaunch }, use) => {
    const seeding = SEEDING_VARIABLES.filter((name) => shellEnv[name] !== undefined);
    if (!firstLaunch && seeding.length > 0) {
      throw new Error(`${seeding.join(', ')} shape a new folder's demo: use them with test.use({ firstLaunch: true })`);
    }
    const dataDir = firstLaunch ? mkdtempSync(join(tmpdir(), 'gc-e2e-')) : copyOfDemoFolder();
    try {
      const shell = await startWebShell(dataDir, shellEnv);
      try {
        if (!firstLaunch) await outputMatching(shell, /Embedded server: (?:running|crashed)/);
        await use({ url: shell.url, dataDir });
      } finally {
        await shell.stop();
      }
    } finally {
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
