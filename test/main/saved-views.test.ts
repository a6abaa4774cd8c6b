import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BridgeErrorBody, CallResult } from '../../main/core/contract.js';
import { ConsoleHost } from '../../main/core/host.js';
import { ownerOnlyFile, ProfileStore } from '../../main/core/profiles.js';
import { SavedViewStore } from '../../main/core/saved-views/store.js';
import { MAX_SAVED_VIEWS } from '../../main/core/saved-views/view.js';
import { PASSWORD, register, startServer, type TestServer } from '../server/harness.js';
import { noEmbedded } from './fixtures/no-embedded.js';

/**
 * Saved views through the host's bridge calls, kept in real files of a temporary data folder:
 * what the boundary refuses and where it says so, and what survives a new host on the folder.
 */

type View = CallResult<'views.save'>;

const folder = mkdtempSync(join(tmpdir(), 'gc-saved-views-'));
const hosts: ConsoleHost[] = [];
let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  for (const host of hosts) host.close();
  await server.close();
  rmSync(folder, { recursive: true, force: true });
});

/** A host on `dir` as the shells make one: profiles and saved views in the data folder. */
function hostOn(dir: string): ConsoleHost {
  const host = new ConsoleHost({
    shell: 'web',
    version: 'test',
    profiles: new ProfileStore(dir, ownerOnlyFile),
    embedded: noEmbedded,
    savedViews: new SavedViewStore(join(dir, 'views')),
  });
  hosts.push(host);
  return host;
}

async function ok<T>(host: ConsoleHost, name: string, args: unknown): Promise<T> {
  const answer = await host.dispatch(name, args);
  if (!answer.ok) throw new Error(`${name}: ${answer.error.status} ${answer.error.message}`);
  return answer.result as T;
}

async function refused(host: ConsoleHost, name: string, args: unknown): Promise<BridgeErrorBody> {
  const answer = await host.dispatch(name, args);
  if (answer.ok) throw new Error(`${name} was accepted: ${JSON.stringify(answer.result)}`);
  return answer.error;
}

/** A host on a new folder with one remote profile, signed in: views are kept per account. */
async function setUp() {
  const dir = mkdtempSync(join(folder, 'host-'));
  const host = hostOn(dir);
  const { id: profileId } = await ok<{ id: string }>(host, 'profiles.add', {
    name: 'Remote',
    kind: 'remote',
    baseUrl: server.baseUrl,
  });
  const account = await register(server);
  await ok(host, 'session.signIn', { profileId, email: account.email, password: PASSWORD });
  const save = (name: string, filters: Record<string, string> = { range: '7d' }, screen = 'requests') =>
    ok<View>(host, 'views.save', { profileId, name, screen, filters });
  const list = async () => (await ok<{ views: View[] }>(host, 'views.list', { profileId })).views;
  return { dir, host, profileId, account, save, list, file: join(dir, 'views', `${profileId}.json`) };
}

describe('saved views in the host', () => {
  it('keeps views by name in an owner-only file that a new host on the folder reads back', async () => {
    const { dir, profileId, save, list, file } = await setUp();
    await save('Slow checkout', { range: '7d', q: 'checkout', min_cost: '0.50' });
    await save('analytics week', { range: '7d' }, 'analytics');
    expect((await list()).map((v) => [v.name, v.screen])).toEqual([
      ['analytics week', 'analytics'],
      ['Slow checkout', 'requests'],
    ]);
    expect(statSync(file).mode & 0o777).toBe(0o600);

    const again = hostOn(dir);
    const views = (await ok<{ views: View[] }>(again, 'views.list', { profileId })).views;
    expect(views.find((v) => v.name === 'Slow checkout')?.filters).toEqual({
      range: '7d',
      q: 'checkout',
      min_cost: '0.50',
    });
  });

  it("never stores the web shell's token, whatever the parameters hold", async () => {
    const { save, list, file } = await setUp();
    const view = await save('With token', { range: '24h', token: 'per-launch-secret' });
    expect(view.filters).toEqual({ range: '24h' });
    expect((await list())[0]?.filters).toEqual({ range: '24h' });
    expect(readFileSync(file, 'utf8')).not.toContain('per-launch-secret');
  });

  it('refuses what the boundary forbids, naming the field', async () => {
    const { host, profileId } = await setUp();
    const attempt = (patch: Record<string, unknown>) =>
      refused(host, 'views.save', { profileId, name: 'A view', screen: 'requests', filters: {}, ...patch });

    expect(await attempt({ name: '' })).toMatchObject({ status: 422, field: 'name' });
    expect(await attempt({ name: 'x'.repeat(101) })).toMatchObject({ status: 422, field: 'name' });
    expect(await attempt({ name: '   ' })).toEqual({
      status: 400,
      message: 'a saved view needs a name',
      field: 'name',
    });
    expect(await attempt({ screen: 'settings' })).toMatchObject({ status: 422, field: 'screen' });
    const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`p${i}`, 'x']));
    expect(await attempt({ filters: many })).toMatchObject({ status: 422, field: 'filters' });
    expect(await attempt({ filters: { q: 'x'.repeat(1001) } })).toMatchObject({ status: 422, field: 'filters' });
    expect(await attempt({ filters: { 'Not-a-name': 'x' } })).toMatchObject({ status: 422, field: 'filters' });
    expect(await attempt({ filters: { q: 3 } })).toMatchObject({ status: 422, field: 'filters' });
    expect(await refused(host, 'views.list', { profileId: 'no-such-profile' })).toMatchObject({ status: 404 });
  });

  it('keeps names unique per profile whatever their case, on save and on rename', async () => {
    const { host, profileId, save, list } = await setUp();
    const first = await save('Errors today');
    const second = await save('Big spenders');
    expect(
      await refused(host, 'views.save', { profileId, name: ' ERRORS today ', screen: 'keys', filters: {} }),
    ).toEqual({ status: 409, message: 'there is already a saved view named "ERRORS today"', field: 'name' });
    expect(await refused(host, 'views.rename', { profileId, viewId: second.id, name: 'errors TODAY' })).toMatchObject({
      status: 409,
      field: 'name',
    });

    // A view may take its own name in another case.
    const renamed = await ok<View>(host, 'views.rename', { profileId, viewId: first.id, name: ' Errors Today ' });
    expect(renamed).toEqual({ ...first, name: 'Errors Today' });
    expect((await list()).map((v) => v.name)).toEqual(['Big spenders', 'Errors Today']);

    // Another account on the same connection has views, and names, of its own.
    await ok(host, 'session.signOut', { profileId });
    const other = await register(server);
    await ok(host, 'session.signIn', { profileId, email: other.email, password: PASSWORD });
    expect(await list()).toEqual([]);
    await ok(host, 'views.save', { profileId, name: 'Errors today', screen: 'requests', filters: {} });
    expect((await list()).map((v) => v.name)).toEqual(['Errors today']);
  });

  it('removes a view, and says so when a view is gone', async () => {
    const { host, profileId, save, list, file } = await setUp();
    const kept = await save('Kept');
    const gone = await save('Gone');
    await ok(host, 'views.remove', { profileId, viewId: gone.id });
    expect(await list()).toEqual([kept]);
    expect(readFileSync(file, 'utf8')).not.toContain('Gone');
    expect(await refused(host, 'views.remove', { profileId, viewId: gone.id })).toMatchObject({ status: 404 });
    expect(await refused(host, 'views.rename', { profileId, viewId: gone.id, name: 'Back' })).toMatchObject({
      status: 404,
    });
  });

  it(`keeps at most ${MAX_SAVED_VIEWS} views per profile`, async () => {
    const { host, profileId, save, list } = await setUp();
    for (let i = 0; i < MAX_SAVED_VIEWS; i++) await save(`View ${i}`);
    const error = await refused(host, 'views.save', { profileId, name: 'One more', screen: 'requests', filters: {} });
    expect(error.status).toBe(409);
    expect(error.message).toContain(`at most ${MAX_SAVED_VIEWS}`);
    expect(await list()).toHaveLength(MAX_SAVED_VIEWS);
  });

  it('goes with its profile: the file is removed and the views are not listed again', async () => {
    const { dir, host, profileId, save, file } = await setUp();
    await save('Short-lived');
    expect(readdirSync(join(dir, 'views'))).toContain(`${profileId}.json`);
    await ok(host, 'profiles.remove', { profileId });
    expect(readdirSync(join(dir, 'views'))).not.toContain(`${profileId}.json`);
    expect(() => statSync(file)).toThrow();
    expect(await refused(host, 'views.list', { profileId })).toMatchObject({ status: 404 });
  });

  it('sets a corrupt file aside, says so, and starts the profile afresh', async () => {
    const { dir, profileId } = await setUp();
    const file = join(dir, 'views', `${profileId}.json`);
    writeFileSync(file, '{"users": {"u": {"views": [{"id": 1, "name": ');
    const host = hostOn(dir);
    expect(await ok(host, 'views.list', { profileId })).toEqual({ views: [], set_aside: 1 });
    const setAside = readdirSync(join(dir, 'views')).filter((name) => name.startsWith(`${profileId}.json.bad-`));
    expect(setAside).toHaveLength(1);
    expect(readFileSync(join(dir, 'views', setAside[0]!), 'utf8')).toBe(
      '{"users": {"u": {"views": [{"id": 1, "name": ',
    );

    await ok(host, 'views.save', { profileId, name: 'Fresh', screen: 'analytics', filters: { range: '30d' } });
    expect(readFileSync(file, 'utf8')).toContain('"Fresh"');
  });

  it('reads a hand-edited file view by view: keeps the good ones, each id and name once, and says how many it left out', async () => {
    const { dir, profileId, save } = await setUp();
    const good = await save('Good');
    const file = join(dir, 'views', `${profileId}.json`);
    const { users } = JSON.parse(readFileSync(file, 'utf8')) as { users: Record<string, { views: unknown[] }> };
    const [userId] = Object.keys(users);
    const views = [
      good,
      // An extra field is not passed over the bridge: the view is left out whole.
      { id: 'extra', name: 'Extra', screen: 'requests', filters: {}, secret: 'x' },
      { id: 'bad-screen', name: 'Bad screen', screen: 'settings', filters: {} },
      { id: 'bad-filter', name: 'Bad filter', screen: 'requests', filters: { 'Not-a-name': 'x' } },
      { id: '', name: 'No id', screen: 'requests', filters: {} },
      { id: 'bidi', name: 'evil\u202eview', screen: 'requests', filters: {} },
      // The same id twice, and the same name in another case: the first of each is kept.
      { id: good.id, name: 'Twin', screen: 'requests', filters: {} },
      { id: 'same-name', name: 'GOOD', screen: 'requests', filters: {} },
      // What is never stored is not read back either: it would be written into the address.
      {
        id: 'tokened',
        name: 'Tokened',
        screen: 'requests',
        filters: { range: '7d', token: 'secret', request: 'req_1' },
      },
    ];
    writeFileSync(file, JSON.stringify({ users: { [userId!]: { views } } }));

    const again = hostOn(dir);
    const answer = await ok<{ views: View[]; set_aside: number }>(again, 'views.list', { profileId });
    expect(answer.views).toEqual([
      good,
      { id: 'tokened', name: 'Tokened', screen: 'requests', filters: { range: '7d' } },
    ]);
    expect(answer.set_aside).toBe(7);
    expect(readdirSync(join(dir, 'views')).some((name) => name.startsWith(`${profileId}.json.bad-`))).toBe(true);
    // Renaming the kept view renames it alone.
    await ok(again, 'views.rename', { profileId, viewId: good.id, name: 'Still good' });
    expect((await ok<{ views: View[] }>(again, 'views.list', { profileId })).views.map((v) => v.name)).toEqual([
      'Still good',
      'Tokened',
    ]);
  });

  it('refuses a name with control or bidirectional characters at name', async () => {
    const { host, profileId } = await setUp();
    for (const name of ['evil\u202eweiv', 'tab\there', 'line\nbreak']) {
      expect(await refused(host, 'views.save', { profileId, name, screen: 'requests', filters: {} })).toMatchObject({
        status: 422,
        field: 'name',
      });
    }
  });

  it('needs someone signed in: the views are an account’s', async () => {
    const { host, profileId } = await setUp();
    await ok(host, 'session.signOut', { profileId });
    expect(await refused(host, 'views.list', { profileId })).toMatchObject({ status: 401 });
  });
});
