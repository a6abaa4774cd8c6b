import { execFileSync } from 'node:child_process';
import { seedDemoFolder } from './demo-folder.js';

/**
 * The app as `npm run build` makes it, once, from the current sources: the page the web shell
 * serves, and the shell and the server compiled, which the tests run as a built app runs (each
 * test starts both: compiled, a start takes half the time it takes under tsx). Then the demo's
 * data folder, seeded once for the tests to copy (demo-folder.ts); removed at global teardown.
 */
export default async function globalSetup(): Promise<() => void> {
  execFileSync(process.execPath, ['--import', 'tsx', 'scripts/build.ts'], { stdio: 'inherit' });
  return seedDemoFolder();
}
