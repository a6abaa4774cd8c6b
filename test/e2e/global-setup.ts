import { execFileSync } from 'node:child_process';
import { seedDemoFolder } from './demo-folder.js';

/**
 * The web shell serves the built page: build it once, from the current sources. Then the demo's
 * data folder, seeded once for the tests to copy (demo-folder.ts); removed at global teardown.
 */
export default async function globalSetup(): Promise<() => void> {
  execFileSync(process.execPath, ['node_modules/vite/bin/vite.js', 'build', '--logLevel', 'warn'], {
    stdio: 'inherit',
  });
  return seedDemoFolder();
}
