import { defineConfig } from '@playwright/test';

/**
 * End to end: the built console in Chromium, through the web shell and its embedded server,
 * down to the SQLite files. Chromium is the system's (.ci/run installs Debian's package);
 * Playwright never downloads a browser here.
 */
export default defineConfig({
  testDir: 'test/e2e',
  testMatch: '**/*.spec.ts',
  globalSetup: './test/e2e/global-setup.ts',
  // Two cores: each worker runs a web shell, an embedded server and a browser.
  workers: 2,
  fullyParallel: true,
  forbidOnly: true,
  retries: 0,
  timeout: 90_000,
  expect: { timeout: 15_000 },
  reporter: [['list']],
  outputDir: 'test-results/e2e',
  use: {
    browserName: 'chromium',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
    viewport: { width: 1280, height: 820 },
    // The layout test formats its widest values in Node as the page does: one locale for both.
    locale: 'en-US',
    screenshot: 'only-on-failure',
    trace: 'retain-on-failure',
    permissions: ['clipboard-read', 'clipboard-write'],
  },
});
