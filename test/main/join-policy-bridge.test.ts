import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callNames } from '../../main/core/contract.js';
import { ConsoleHost, type EmbeddedServerControl } from '../../main/core/host.js';
import { ownerOnlyFile, ProfileStore } from '../../main/core/profiles.js';
import { PASSWORD, register, runOperator, startServer, type TestServer } from '../server/harness.js';

/** Remote profiles never start the embedded server. */
const noEmbedded: EmbeddedServerControl = {
  start: () => Promise.reject(new Error('embedded server not expected')),
  restart: () => Promise.reject(new Error('embedded server not expected')),
  status: () => ({ state: 'stopped', baseUrl: null, lastLog: [], demoAccount: null }),
  demoCredentials: () => null,
};

let server: TestServer;
let folder: string;
beforeAll(async () => {
  server = await startServer();
  folder = mkdtempSync(join(tmpdir(), 'gc-console-join-'));
});
afterAll(async () => {
  await server.close();
  rmSync(folder, { recursive: true, force: true });
});

describe('the join policy across the bridge', () => {
  it('is a call the Electron preload is told of', () => {
    expect(callNames).toContain('api.joinPolicy');
  });

  it("reads the signed-in organisation's policy through the host, and checks the call's arguments", async () => {
    const host = new ConsoleHost({
      shell: 'web',
      version: 'test',
      profiles: new ProfileStore(folder, ownerOnlyFile),
      embedded: noEmbedded,
    });
    const account = await register(server);
    const added = await host.dispatch('profiles.add', { name: 'Remote', kind: 'remote', baseUrl: server.baseUrl });
    if (!added.ok) throw new Error(added.error.message);
    const profileId = (added.result as { id: string }).id;
    const signedIn = await host.dispatch('session.signIn', { profileId, email: account.email, password: PASSWORD });
    expect(signedIn.ok).toBe(true);

    expect(await host.dispatch('api.joinPolicy', { profileId })).toEqual({
      ok: true,
      result: { policy: 'open', domains: [] },
    });
    await runOperator(server, 'set-join-policy', '--org', account.org, '--policy', 'domains', '--domains', 'a.example');
    expect(await host.dispatch('api.joinPolicy', { profileId })).toEqual({
      ok: true,
      result: { policy: 'domains', domains: ['a.example'] },
    });

    const unnamed = await host.dispatch('api.joinPolicy', {});
    expect(unnamed.ok).toBe(false);
    expect(!unnamed.ok && unnamed.error.status).toBe(422);
  });
});
