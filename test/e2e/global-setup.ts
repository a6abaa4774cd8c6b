import { execFileSync } from 'node:child_process';

/** The web shell serves the built page: build it once, from the current sources. */
export default function globalSetup(): void {
  execFileSync(process.execPath, ['node_modules/vite/bin/vite.js', 'build', '--logLevel', 'warn'], {
    stdio: 'inherit',
  });
}
