import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { register, startServer } from './harness.js';

/**
 * The data folder and its stores are the server's user's alone, also when the folder, or a
 * store, was made earlier with looser permissions.
 */

const root = mkdtempSync(join(tmpdir(), 'gc-private-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const modeOf = (path: string) => statSync(path).mode & 0o777;

describe.runIf(process.platform !== 'win32')('the data folder', () => {
  it('is made private, with every store file in it, when it existed before as 0755', async () => {
    const dataDir = join(root, 'shared-folder');
    mkdirSync(dataDir, { mode: 0o755 });
    chmodSync(dataDir, 0o755);

    const first = await startServer({ dataDir });
    await register(first, { email: 'owner@example.com', org: 'Private Org' });
    await first.close();
    // An older version, or a hand, left the stores readable by others.
    chmodSync(dataDir, 0o755);
    for (const name of ['control.db', 'telemetry.db']) chmodSync(join(dataDir, name), 0o644);

    const server = await startServer({ dataDir });
    try {
      await register(server, { email: 'member@example.com', org: 'Private Org' });
      expect(modeOf(dataDir)).toBe(0o700);
      const files = ['control.db', 'control.db-wal', 'control.db-shm', 'telemetry.db', 'telemetry.db-wal'];
      for (const name of files) {
        const path = join(dataDir, name);
        expect(existsSync(path), name).toBe(true);
        expect(modeOf(path), name).toBe(0o600);
      }
    } finally {
      await server.close();
    }
  });
});
