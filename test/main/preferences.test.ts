import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BridgeEnvelope } from '../../main/core/contract.js';
import { ConsoleHost } from '../../main/core/host.js';
import { PreferenceStore } from '../../main/core/preferences.js';
import { ownerOnlyFile, ProfileStore } from '../../main/core/profiles.js';
import { PASSWORD, register, startServer, type TestServer } from '../server/harness.js';
import { noEmbedded } from './fixtures/no-embedded.js';

let server: TestServer;
let folder: string;
beforeAll(async () => {
  server = await startServer();
  folder = mkdtempSync(join(tmpdir(), 'gc-console-prefs-'));
});
afterAll(async () => {
  await server.close();
  rmSync(folder, { recursive: true, force: true });
});

/** A web-shell host on `dir`, as the shell makes it: its preferences kept in the data folder. */
function hostOn(dir: string): ConsoleHost {
  return new ConsoleHost({
    shell: 'web',
    version: 'test',
    profiles: new ProfileStore(dir, ownerOnlyFile),
    embedded: noEmbedded,
    preferences: new PreferenceStore(join(dir, 'preferences')),
  });
}

async function ok<T>(host: ConsoleHost, name: string, args: unknown): Promise<T> {
  const answer = await host.dispatch(name, args);
  if (!answer.ok) throw new Error(`${name}: ${answer.error.status} ${answer.error.message}`);
  return answer.result as T;
}

async function refused(host: ConsoleHost, name: string, args: unknown) {
  const answer: BridgeEnvelope<unknown> = await host.dispatch(name, args);
  if (answer.ok) throw new Error(`${name} was not refused`);
  return answer.error;
}

async function setUp() {
  const dir = mkdtempSync(join(folder, 'host-'));
  const hosts: ConsoleHost[] = [];
  const open = () => {
    const host = hostOn(dir);
    hosts.push(host);
    return host;
  };
  const host = open();
  const { id: profileId } = await ok<{ id: string }>(host, 'profiles.add', {
    name: 'Remote',
    kind: 'remote',
    baseUrl: server.baseUrl,
  });
  return { dir, host, profileId, open, close: () => hosts.forEach((h) => h.close()) };
}

describe('theme preference in the host', () => {
  it('is kept per account on a profile, and survives a sign-out and a restart of the host', async () => {
    const { host, profileId, open, close } = await setUp();
    const ana = await register(server);
    const ben = await register(server);
    try {
      await ok(host, 'session.signIn', { profileId, email: ana.email, password: PASSWORD });
      expect(await ok(host, 'prefs.get', { profileId })).toEqual({ theme: 'system', saved: false });
      expect(await ok(host, 'prefs.setTheme', { profileId, theme: 'dark' })).toEqual({ theme: 'dark' });

      await ok(host, 'session.signOut', { profileId });
      await ok(host, 'session.signIn', { profileId, email: ben.email, password: PASSWORD });
      // Another account on the same connection has its own choice, not Ana's.
      expect(await ok(host, 'prefs.get', { profileId })).toEqual({ theme: 'system', saved: false });
      await ok(host, 'prefs.setTheme', { profileId, theme: 'light' });

      await ok(host, 'session.signOut', { profileId });
      await ok(host, 'session.signIn', { profileId, email: ana.email, password: PASSWORD });
      expect(await ok(host, 'prefs.get', { profileId })).toEqual({ theme: 'dark', saved: true });

      // A new host on the same data folder (the console restarted, still signed in) reads it back,
      // learning who is signed in from the server.
      const restarted = open();
      expect(await ok(restarted, 'prefs.get', { profileId })).toEqual({ theme: 'dark', saved: true });
    } finally {
      close();
    }
  });

  it('refuses a theme it does not know at the boundary, naming the field', async () => {
    const { host, profileId, close } = await setUp();
    const ana = await register(server);
    try {
      await ok(host, 'session.signIn', { profileId, email: ana.email, password: PASSWORD });
      const error = await refused(host, 'prefs.setTheme', { profileId, theme: 'sepia' });
      expect(error).toMatchObject({ status: 422, field: 'theme' });
      expect(await ok(host, 'prefs.get', { profileId })).toEqual({ theme: 'system', saved: false });
    } finally {
      close();
    }
  });

  it('answers 401 when nobody is signed in on the profile, and 404 for a profile it does not have', async () => {
    const { host, profileId, close } = await setUp();
    try {
      expect(await refused(host, 'prefs.get', { profileId })).toMatchObject({ status: 401 });
      expect(await refused(host, 'prefs.setTheme', { profileId, theme: 'dark' })).toMatchObject({ status: 401 });
      expect(await refused(host, 'prefs.get', { profileId: 'no-such-profile' })).toMatchObject({ status: 404 });
    } finally {
      close();
    }
  });

  it('forgets a removed profile’s preferences with it', async () => {
    const { dir, host, profileId, close } = await setUp();
    const ana = await register(server);
    try {
      await ok(host, 'session.signIn', { profileId, email: ana.email, password: PASSWORD });
      await ok(host, 'prefs.setTheme', { profileId, theme: 'dark' });
      const file = join(dir, 'preferences', `${profileId}.json`);
      expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ users: { [ana.body.user.user_id]: { theme: 'dark' } } });
      await ok(host, 'profiles.remove', { profileId });
      expect(existsSync(file)).toBe(false);
    } finally {
      close();
    }
  });
});

describe('PreferenceStore', () => {
  it('sets aside a file it did not write and starts from the defaults', () => {
    const dir = mkdtempSync(join(folder, 'store-'));
    writeFileSync(join(dir, 'p1.json'), JSON.stringify({ users: { u1: { theme: 'purple' } } }));
    const store = new PreferenceStore(dir);
    expect(store.get('p1', 'u1')).toEqual({ theme: 'system' });
    expect(readdirSync(dir).some((name) => name.startsWith('p1.json.bad-'))).toBe(true);
    store.setTheme('p1', 'u1', 'light');
    expect(new PreferenceStore(dir).get('p1', 'u1')).toEqual({ theme: 'light' });
  });

  it('never reads a user id that is an inherited name as a saved choice', () => {
    const store = new PreferenceStore(null);
    expect(store.get('p1', '__proto__')).toEqual({ theme: 'system' });
    expect(store.get('p1', 'constructor')).toEqual({ theme: 'system' });
  });
});
