import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

// Two cores: test files run in parallel, each on its own server, port and data folder.
const shared = { pool: 'forks', testTimeout: 20_000, hookTimeout: 20_000 } as const;

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
          exclude: ['test/e2e/**', 'test/renderer/**', 'node_modules/**'],
        },
      },
      {
        plugins: [react()],
        test: {
          ...shared,
          name: 'renderer',
          include: ['test/renderer/**/*.test.{ts,tsx}'],
          environment: 'jsdom',
          // A zone that is not UTC, so a test cannot pass by confusing local time with UTC.
          env: { TZ: 'Asia/Karachi' },
          setupFiles: ['test/renderer/setup.ts'],
        },
      },
    ],
  },
});
