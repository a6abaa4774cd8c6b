import BetterSqlite3 from 'better-sqlite3';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddedServerControl } from '../../main/core/host.js';
import { ConsoleError, errorFromResponse } from '../../main/core/errors.js';
import { ConsoleHost } from '../../main/core/host.js';
import { ownerOnlyFile, ProfileStore } from '../../main/core/profiles.js';
import { runAdmin } from '../../server/admin/commands.js';
import { DEFAULT_THROTTLE } from '../../server/security/sign-in-throttle.js';
import { register, startServer, type TestServer } from '../server/harness.js';

const ACCESS_TTL_SECONDS = 600;

/** Remote profiles never start the embedded server; reaching it here is a bug. */
const noEmbedded: EmbeddedServerControl = {
  start: () => Promise.reject(new Error('embedded server not expected')),
  restart: () => Promise.reject(new Error('embedded server not expected')),
  status: () => ({ state: 'stopped', baseUrl: null, lastLog: [], demoAccount: null }),
  demoCredentials: () => null,
};

let server: TestServer;
const folders: string[] = [];

beforeAll(async () => {
  server = await startServer({ accessTtlSeconds: ACCESS_TTL_SECONDS });
});
afterAll(() => server.close());
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function consoleFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), 'gc-console-'));
  folders.push(folder);
  return folder;
}

function newHost(folder = consoleFolder(), options: { refreshAheadMs?: number } = {}) {
  const signedOut: string[] = [];
  const profiles = new ProfileStore(folder, ownerOnlyFile);
  const host = new ConsoleHost({
    shell: 'web',
    version: 'test',
    profiles,
    embedded: noEmbedded,
    refreshAheadMs: options.refreshAheadMs ?? 1000,
    onSignedOut: (id) => signedOut.push(id),
  });
  return { host, profiles, folder, signedOut };
}

/** Runs a bridge call and returns its result, failing the test with the bridge error otherwise. */
async function call(host: ConsoleHost, name: string, args: unknown): Promise<any> {
  const envelope = await host.dispatch(name, args);
  if (!envelope.ok) throw new Error(`${name} failed: ${envelope.error.status} ${envelope.error.message}`);
  return envelope.result;
}

/** Access tokens the server has issued to an account's sessions: one at sign-in and one per refresh. */
function accessTokensIssued(email: string): number {
  const db = new BetterSqlite3(join(server.dataDir, 'control.db'), { readonly: true });
  try {
    const row = db
      .prepare(
        `SELECT COUNT(*) AS n FROM session_tokens t JOIN sessions s ON s.id = t.session_id
         JOIN accounts a ON a.id = s.account_id WHERE a.email = ? AND t.kind = 'access'`,
      )
      .get(email) as { n: number };
    return row.n;
  } finally {
    db.close();
  }
}

async function signedInProfile(host: ConsoleHost, email?: string) {
  const account = await register(server, email ? { email } : {});
  const profile = await call(host, 'profiles.add', { name: 'Remote', kind: 'remote', baseUrl: server.baseUrl });
  await call(host, 'session.signIn', {
    profileId: profile.id,
    email: account.email,
    password: 'correct horse battery staple',
  });
  return { profileId: profile.id as string, email: account.email, org: account.org };
}

describe('connection profiles', () => {
  it('refuses a plain-http remote address that is not loopback, and one not ending in /api', async () => {
    const { host } = newHost();
    for (const baseUrl of ['http://console.example.com/api', 'https://console.example.com/v1', 'not a url']) {
      const answer = await host.dispatch('profiles.add', { name: 'x', kind: 'remote', baseUrl });
      expect(answer.ok, baseUrl).toBe(false);
      expect(!answer.ok && answer.error.status).toBe(400);
    }
    expect(await call(host, 'profiles.list', {})).toEqual({ profiles: [] });
    const ok = await call(host, 'profiles.add', {
      name: 'Prod',
      kind: 'remote',
      baseUrl: 'https://console.example.com/api/',
    });
    expect(ok).toMatchObject({ name: 'Prod', baseUrl: 'https://console.example.com/api', signedIn: false });
  });

  it('keeps a signed-in profile between launches, its jar readable by the owner only', async () => {
    const first = newHost();
    const { profileId, email } = await signedInProfile(first.host);
    const jarFile = join(first.folder, 'jars', `${profileId}.jar`);
    expect(statSync(jarFile).mode & 0o777).toBe(0o600);

    const relaunched = newHost(first.folder);
    expect((await call(relaunched.host, 'profiles.list', {})).profiles).toEqual([
      expect.objectContaining({ id: profileId, signedIn: true }),
    ]);
    expect(await call(relaunched.host, 'session.me', { profileId })).toMatchObject({ email });
  });

  it('keeps two profiles in separate jars: signing out of one leaves the other signed in', async () => {
    const { host } = newHost();
    const a = await signedInProfile(host);
    const b = await signedInProfile(host);
    expect((await call(host, 'session.me', { profileId: a.profileId })).email).toBe(a.email);
    expect((await call(host, 'session.me', { profileId: b.profileId })).email).toBe(b.email);

    await call(host, 'session.signOut', { profileId: a.profileId });
    const after = await host.dispatch('session.me', { profileId: a.profileId });
    expect(!after.ok && after.error.status).toBe(401);
    expect((await call(host, 'session.me', { profileId: b.profileId })).email).toBe(b.email);
    const views = (await call(host, 'profiles.list', {})).profiles;
    expect(views.find((p: any) => p.id === a.profileId).signedIn).toBe(false);
    expect(views.find((p: any) => p.id === b.profileId).signedIn).toBe(true);
  });
});

describe('session refresh', () => {
  it('refreshes shortly before the access cookie lapses, without a 401 first', async () => {
    // Ahead by more than the whole lifetime: every call finds the cookie about to lapse.
    const { host } = newHost(consoleFolder(), { refreshAheadMs: (ACCESS_TTL_SECONDS + 60) * 1000 });
    const { profileId, email } = await signedInProfile(host);
    const before = accessTokensIssued(email);
    const unauthorizedBefore = server.logs().split('"status":401').length;

    await call(host, 'api.listKeys', { profileId });

    expect(accessTokensIssued(email)).toBe(before + 1);
    expect(server.logs().split('"status":401').length).toBe(unauthorizedBefore);
  });

  it('does not refresh while the access cookie is fresh', async () => {
    const { host } = newHost();
    const { profileId, email } = await signedInProfile(host);
    const before = accessTokensIssued(email);
    await call(host, 'api.listKeys', { profileId });
    await call(host, 'api.projects', { profileId });
    expect(accessTokensIssued(email)).toBe(before);
  });

  it('refreshes on the first 401 and retries the call once', async () => {
    const { host } = newHost();
    const { profileId, email } = await signedInProfile(host);
    const before = accessTokensIssued(email);
    // The server's clock passes the access token's end; the jar still believes it fresh.
    server.advance((ACCESS_TTL_SECONDS + 1) * 1000);

    const keys = await call(host, 'api.listKeys', { profileId });

    expect(keys).toEqual({ keys: [] });
    expect(accessTokensIssued(email)).toBe(before + 1);
  });

  it('shares one refresh among ten concurrent calls', async () => {
    const { host } = newHost();
    const { profileId, email } = await signedInProfile(host);
    const before = accessTokensIssued(email);
    server.advance((ACCESS_TTL_SECONDS + 1) * 1000);

    const answers = await Promise.all(Array.from({ length: 10 }, () => host.dispatch('api.listKeys', { profileId })));

    expect(answers.every((answer) => answer.ok)).toBe(true);
    // One rotation: a second refresh with the same refresh token would have revoked the session.
    expect(accessTokensIssued(email)).toBe(before + 1);
    expect(await call(host, 'session.me', { profileId })).toMatchObject({ email });
  });

  it('signs the profile out cleanly when the refresh fails, with no loop', async () => {
    const { host, signedOut } = newHost();
    const { profileId, email } = await signedInProfile(host);
    expect(await runAdmin(['revoke-sessions', '--email', email, '--data-dir', server.dataDir], () => {})).toBe(0);
    const refreshesBefore = server.logs().split('/api/auth/refresh').length;

    const answer = await host.dispatch('api.listKeys', { profileId });

    expect(answer).toEqual({ ok: false, error: { status: 401, message: 'signed out: sign in again' } });
    expect(signedOut).toEqual([profileId]);
    expect((await call(host, 'profiles.list', {})).profiles[0].signedIn).toBe(false);
    // Exactly one refresh attempt (a request and a completion log line), then nothing more.
    expect(server.logs().split('/api/auth/refresh').length - refreshesBefore).toBe(1);
    const again = await host.dispatch('api.listKeys', { profileId });
    expect(!again.ok && again.error.status).toBe(401);
  });
});

describe('sign-in and sign-out', () => {
  it('makes no refresh attempt for a profile that never signed in', async () => {
    const { host, signedOut } = newHost();
    const profile = await call(host, 'profiles.add', { name: 'New', kind: 'remote', baseUrl: server.baseUrl });
    const refreshesBefore = server.logs().split('/api/auth/refresh').length;
    const answer = await host.dispatch('api.listKeys', { profileId: profile.id });
    expect(!answer.ok && answer.error.status).toBe(401);
    expect(server.logs().split('/api/auth/refresh').length).toBe(refreshesBefore);
    expect(signedOut).toEqual([]);
  });

  it('refuses the demo sign-in for a remote profile', async () => {
    const { host } = newHost();
    const profile = await call(host, 'profiles.add', { name: 'Remote', kind: 'remote', baseUrl: server.baseUrl });
    const answer = await host.dispatch('session.signInDemo', { profileId: profile.id });
    expect(!answer.ok && answer.error.status).toBe(400);
  });

  it('ends the server session when a profile is removed', async () => {
    const { host, profiles } = newHost();
    const { profileId } = await signedInProfile(host);
    const copied = await profiles.jar(profileId).getCookieString(`${server.baseUrl}/keys`);
    await call(host, 'profiles.remove', { profileId });
    expect((await fetch(`${server.baseUrl}/keys`, { headers: { cookie: copied } })).status).toBe(401);
    expect((await call(host, 'profiles.list', {})).profiles).toEqual([]);
  });

  it('signs out on this side even when the server cannot be reached', async () => {
    const gone = await startServer();
    const { host } = newHost();
    const account = await register(gone);
    const profile = await call(host, 'profiles.add', { name: 'Gone', kind: 'remote', baseUrl: gone.baseUrl });
    await call(host, 'session.signIn', {
      profileId: profile.id,
      email: account.email,
      password: 'correct horse battery staple',
    });
    await gone.close();
    expect(await host.dispatch('session.signOut', { profileId: profile.id })).toEqual({ ok: true, result: {} });
    expect((await call(host, 'profiles.list', {})).profiles[0].signedIn).toBe(false);
  });

  it('answers a deactivated account with the server’s message and keeps the profile signed out', async () => {
    const { host } = newHost();
    const account = await register(server);
    expect(await runAdmin(['deactivate', '--email', account.email, '--data-dir', server.dataDir], () => {})).toBe(0);
    const profile = await call(host, 'profiles.add', { name: 'Remote', kind: 'remote', baseUrl: server.baseUrl });

    const answer = await host.dispatch('session.signIn', {
      profileId: profile.id,
      email: account.email,
      password: 'correct horse battery staple',
    });

    expect(answer).toEqual({ ok: false, error: { status: 401, message: 'invalid email or password' } });
    expect((await call(host, 'profiles.list', {})).profiles[0].signedIn).toBe(false);
  });

  it('signs out a deactivated account on its next call', async () => {
    const { host, signedOut } = newHost();
    const { profileId, email } = await signedInProfile(host);
    await runAdmin(['deactivate', '--email', email, '--data-dir', server.dataDir], () => {});
    const answer = await host.dispatch('api.listKeys', { profileId });
    expect(!answer.ok && answer.error.status).toBe(401);
    expect(signedOut).toEqual([profileId]);
  });

  it('logs out on the server too: a copy of the old cookies no longer works', async () => {
    const { host, profiles } = newHost();
    const { profileId } = await signedInProfile(host);
    const stolen = await profiles.jar(profileId).getCookieString(`${server.baseUrl}/keys`);
    await call(host, 'session.signOut', { profileId });
    const response = await fetch(`${server.baseUrl}/keys`, { headers: { cookie: stolen } });
    expect(response.status).toBe(401);
  });
});

describe('typed client', () => {
  let fake: Server;
  let fakeUrl: string;
  /** When set, the fake answers 401 to data calls and 503 to refresh: a control plane mid-restart. */
  let restarting = false;
  beforeAll(async () => {
    // A remote control plane of another version: its key list lacks `environment`.
    fake = createServer((request, response) => {
      response.setHeader('content-type', 'application/json');
      if (restarting) {
        response.statusCode = request.url === '/api/auth/refresh' ? 503 : 401;
        response.end(
          JSON.stringify(request.url === '/api/auth/refresh' ? { error: 'restarting' } : { detail: 'Unauthorized' }),
        );
        return;
      }
      if (request.url === '/api/auth/login') {
        response.setHeader('set-cookie', [
          'svc_access_token=a; Path=/api; Max-Age=900; HttpOnly; Secure; SameSite=Lax',
          'svc_refresh_token=r; Path=/api/auth; Max-Age=604800; HttpOnly; Secure; SameSite=Lax',
        ]);
        response.end(
          JSON.stringify({
            user: {
              user_id: '5a7c6b1e-1f2a-4c3b-9d4e-5f6a7b8c9d0e',
              email: 'a@b.c',
              role: 'owner',
              joined_at: '2026-01-01T00:00:00.000Z',
            },
            organization: { name: 'Other' },
          }),
        );
        return;
      }
      response.end(
        JSON.stringify({
          keys: [
            {
              id: '5a7c6b1e-1f2a-4c3b-9d4e-5f6a7b8c9d0e',
              name: 'k',
              key_prefix: 'sk_svc_abcdefgh',
              project_id: '5a7c6b1e-1f2a-4c3b-9d4e-5f6a7b8c9d0e',
              created_at: '2026-01-01T00:00:00.000Z',
              last_used_at: null,
              rate_limit_rpm: 60,
              expires_at: null,
              credit_limit_cents: null,
              allowed_models: null,
            },
          ],
        }),
      );
    });
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
    const address = fake.address();
    fakeUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/api`;
  });
  afterAll(() => new Promise<void>((resolve) => fake.close(() => resolve())));

  it('names the field when a remote server answers another shape', async () => {
    const { host } = newHost();
    const profile = await call(host, 'profiles.add', { name: 'Old', kind: 'remote', baseUrl: fakeUrl });
    await call(host, 'session.signIn', { profileId: profile.id, email: 'a@b.c', password: 'whatever!' });
    const answer = await host.dispatch('api.listKeys', { profileId: profile.id });
    expect(answer.ok).toBe(false);
    expect(!answer.ok && answer.error.status).toBe(502);
    expect(!answer.ok && answer.error.message).toContain('/keys/0/environment');
  });

  it('keeps the session when the refresh fails for another reason than 401', async () => {
    const { host, signedOut } = newHost();
    const profile = await call(host, 'profiles.add', { name: 'Flaky', kind: 'remote', baseUrl: fakeUrl });
    await call(host, 'session.signIn', { profileId: profile.id, email: 'a@b.c', password: 'whatever!' });
    restarting = true;
    try {
      const answer = await host.dispatch('api.listKeys', { profileId: profile.id });
      expect(answer).toEqual({ ok: false, error: { status: 503, message: 'restarting' } });
    } finally {
      restarting = false;
    }
    expect(signedOut).toEqual([]);
    expect((await call(host, 'profiles.list', {})).profiles[0].signedIn).toBe(true);
  });

  it('reports an unreachable server as a network failure, status 0', async () => {
    const { host } = newHost();
    const profile = await call(host, 'profiles.add', {
      name: 'Gone',
      kind: 'remote',
      baseUrl: 'http://127.0.0.1:9/api',
    });
    const answer = await host.dispatch('session.signIn', {
      profileId: profile.id,
      email: 'a@b.c',
      password: 'whatever!',
    });
    expect(!answer.ok && answer.error.status).toBe(0);
    expect(!answer.ok && answer.error.message).toContain('cannot reach the control plane');
  });

  it('refuses bad arguments at the boundary without calling the server', async () => {
    const { host } = newHost();
    const { profileId, email } = await signedInProfile(host);
    const before = accessTokensIssued(email);
    const answer = await host.dispatch('api.updateKey', {
      profileId,
      params: { key_id: 'x' },
      body: { rate_limit_rpm: '60' },
    });
    expect(!answer.ok && answer.error.status).toBe(422);
    expect(!answer.ok && answer.error.message).toContain('/body/rate_limit_rpm');
    expect(accessTokensIssued(email)).toBe(before);
  });
});

describe('a throttled sign-in', () => {
  it("reaches the renderer with the server's sentence and its Retry-After in seconds", async () => {
    const throttled = await startServer({ throttle: { ...DEFAULT_THROTTLE, accountFailures: 1 } });
    try {
      const { host } = newHost();
      const profile = await call(host, 'profiles.add', { name: 'Remote', kind: 'remote', baseUrl: throttled.baseUrl });
      const attempt = () =>
        host.dispatch('session.signIn', { profileId: profile.id, email: 'ada@example.com', password: 'not it at all' });
      expect(await attempt()).toMatchObject({ ok: false, error: { status: 401 } });
      expect(await attempt()).toEqual({
        ok: false,
        error: { status: 429, message: 'too many failed sign-ins: try again in 1 second', retryAfterSeconds: 1 },
      });
    } finally {
      await throttled.close();
    }
  });
});

describe('an error keeps the request field it concerns', () => {
  it('from the x-error-field header of an {"error"} answer, the body’s sentence unchanged', () => {
    const error = errorFromResponse(400, { error: 'any sentence at all' }, { field: 'credit_limit_pkr' });
    expect(error).toBeInstanceOf(ConsoleError);
    expect(error.toBody()).toEqual({ status: 400, message: 'any sentence at all', field: 'credit_limit_pkr' });
    expect(errorFromResponse(404, { error: 'key not found' }).toBody()).toEqual({
      status: 404,
      message: 'key not found',
    });
  });

  it('from the first issue’s loc of a 422, after its body, query or path location', () => {
    const detail = [{ loc: ['body', 'credit_limit_cents'], msg: 'must be >= 1', type: 'minimum' }];
    const fromBody = errorFromResponse(422, { detail });
    expect(fromBody.field).toBe('credit_limit_cents');
    expect(fromBody.toBody()).toEqual({
      status: 422,
      message: 'credit_limit_cents: must be >= 1',
      field: 'credit_limit_cents',
      detail,
    });
    const nested = [{ loc: ['body', 'allowed_models', 0], msg: 'too long', type: 'maxLength' }];
    expect(errorFromResponse(422, { detail: nested }).field).toBe('allowed_models');
    const query = [{ loc: ['query', 'limit'], msg: 'must be >= 1', type: 'minimum' }];
    expect(errorFromResponse(422, { detail: query }).field).toBe('limit');
    expect(errorFromResponse(422, { detail: [{ loc: ['path', 'key_id'], msg: 'x', type: 'x' }] }).field).toBe('key_id');
    // A body that is not JSON concerns no one field.
    const whole = [{ loc: ['body'], msg: 'body is not valid JSON', type: 'json_invalid' }];
    expect(errorFromResponse(422, { detail: whole }).field).toBeUndefined();
    expect(errorFromResponse(401, { detail: 'Unauthorized' }).field).toBeUndefined();
  });

  it('from the host’s own argument check, by the failing argument’s path', async () => {
    const { host } = newHost();
    const typed = await host.dispatch('api.updateKey', {
      profileId: 'p',
      params: { key_id: 'x' },
      body: { rate_limit_rpm: '60' },
    });
    expect(!typed.ok && typed.error).toMatchObject({ status: 422, field: 'rate_limit_rpm' });
    const missing = await host.dispatch('api.createKey', { profileId: 'p', body: { project_id: 'x' } });
    expect(!missing.ok && missing.error).toMatchObject({ status: 422, field: 'name' });
    const nested = await host.dispatch('api.createKey', {
      profileId: 'p',
      body: { project_id: 'x', name: 'k', allowed_models: [42] },
    });
    expect(!nested.ok && nested.error).toMatchObject({ status: 422, field: 'allowed_models' });
    const hostCall = await host.dispatch('profiles.add', { name: 'X', kind: 'nope' });
    expect(!hostCall.ok && hostCall.error).toMatchObject({ status: 422, field: 'kind' });
    const noBody = await host.dispatch('api.createKey', { profileId: 'p' });
    expect(!noBody.ok && noBody.error.status).toBe(422);
    expect(!noBody.ok && 'field' in noBody.error).toBe(false);
  });

  it('across the whole path from the control plane: a refused key edit and creation', async () => {
    const { host } = newHost();
    const { profileId } = await signedInProfile(host);
    const projectId = (await call(host, 'api.projects', { profileId })).projects[0].id;
    const key = await call(host, 'api.createKey', { profileId, body: { project_id: projectId, name: 'k' } });
    const over = await host.dispatch('api.updateKey', {
      profileId,
      params: { key_id: key.id },
      body: { rate_limit_rpm: 60, credit_limit_pkr: 1 },
    });
    expect(over).toEqual({
      ok: false,
      error: {
        status: 400,
        message: 'credit limits would total 1.00 PKR, above the organisation budget of 0.00 PKR',
        field: 'credit_limit_pkr',
      },
    });
    // The server's own 422 (a blank name passes the schema, not the route's check) names it by loc.
    const blank = await host.dispatch('api.createKey', { profileId, body: { project_id: projectId, name: '   ' } });
    expect(!blank.ok && blank.error).toMatchObject({ status: 422, field: 'name' });
    const elsewhere = await host.dispatch('api.createKey', {
      profileId,
      body: { project_id: '5a7c6b1e-1f2a-4c3b-9d4e-5f6a7b8c9d0e', name: 'k' },
    });
    expect(!elsewhere.ok && elsewhere.error).toEqual({
      status: 404,
      message: 'project not found',
      field: 'project_id',
    });
  });
});
