import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

// Two cores: test files run in parallel, each on its own server, port and data folder.

/** The server suites that never open the SQLite files themselves: they run on PostgreSQL as well. */
const POSTGRES_SUITES = [
  'activity',
  'admin',
  'analytics',
  'analytics-availability',
  'api-filter',
  'auth',
  'compare',
  'cross-cutting',
  'dashboard',
  'gateway',
  'gateway-attack-rows',
  'gateway-routes',
  'health',
  'isolation',
  'join-policy',
  'join-policy-admin',
  'key-bulk',
  'key-impact',
  'key-rotation',
  'keys',
  'model-prices',
  'oidc',
  'organization',
  'password-policy',
  'reporting-zone-route',
  'request-by-id',
  'retention-api',
  'routes-admin',
  'routes-apply-live',
  'security-headers',
  'spend',
  'target-filter',
  'throttling',
  'top',
  'vault',
];
const shared = { pool: 'forks', testTimeout: 20_000, hookTimeout: 20_000 } as const;

/** The Electron host's files: each mocks `electron` (vi.mock), so each needs modules of its own. */
const NODE_FRESH_MODULES = ['test/main/electron-*.test.ts'];

const renderer = {
  ...shared,
  environment: 'jsdom' as const,
  // A zone that is not UTC, so a test cannot pass by confusing local time with UTC.
  env: { TZ: 'Asia/Karachi' },
  setupFiles: ['test/renderer/setup.ts'],
};

/**
 * The renderer's files that need modules of their own: they mock a module (vi.mock), or test a
 * module's state from its first use (the idle tracker's count of calls, the shell's memory that
 * the control plane has no spend endpoint, the chart chunk not loaded before the preload).
 */
const RENDERER_FRESH_MODULES = [
  'test/renderer/analytics/chart-memo.test.tsx',
  'test/renderer/app/console-idle.test.ts',
  'test/renderer/app/screen-preload.test.tsx',
  'test/renderer/spend/SpendScreen.test.tsx',
];

export default defineConfig({
  test: {
    maxWorkers: 2,
    projects: [
      {
        test: {
          ...shared,
          name: 'node',
          include: ['test/**/*.test.ts'],
          // A throwaway PostgreSQL cluster for the suites that run on both stores.
          globalSetup: ['test/postgres/global-setup.ts'],
          exclude: ['test/e2e/**', 'test/renderer/**', 'node_modules/**', ...NODE_FRESH_MODULES],
          // One module graph per worker, not per file (a second of imports each): servers, stores
          // and clients are made by each test, and nothing a file sets outlives it.
          isolate: false,
        },
      },
      { test: { ...shared, name: 'node-fresh', include: NODE_FRESH_MODULES } },
      {
        // The server's suites again, each server on a fresh PostgreSQL database instead of SQLite
        // (test/server/harness.ts): every rule they check must hold on both control stores.
        test: {
          ...shared,
          name: 'node-postgres',
          include: POSTGRES_SUITES.map((name) => `test/server/${name}.test.ts`),
          env: { GC_TEST_CONTROL_STORE: 'postgres' },
          globalSetup: ['test/postgres/global-setup.ts'],
          isolate: false,
        },
      },
      {
        plugins: [react()],
        test: {
          ...renderer,
          name: 'renderer',
          include: ['test/renderer/**/*.test.{ts,tsx}'],
          exclude: RENDERER_FRESH_MODULES,
          // One jsdom and one module graph per worker, not per file: two minutes of set-up became
          // half a minute. Every file resets what it sets (setup.ts, the fake bridge, the stores).
          isolate: false,
        },
      },
      {
        plugins: [react()],
        test: { ...renderer, name: 'renderer-fresh', include: RENDERER_FRESH_MODULES },
      },
    ],
  },
});
