import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  PASSWORD,
  TestClient,
  controlSql,
  register,
  startServer,
  unique,
  type Answer,
  type TestServer,
  runOperator,
} from './harness.js';

const ACCESS = 'svc_access_token';
const REFRESH = 'svc_refresh_token';
const ACCESS_TTL = 900;
const REFRESH_TTL = 7 * 24 * 3600;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const RFC3339_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|\+00:00)$/;
const UNAUTHORIZED = { detail: 'Unauthorized' };
const BAD_LOGIN = { error: 'invalid email or password' };

interface SetCookie {
  value: string;
  /** Attribute names lowercased; flags map to true. */
  attributes: Record<string, string | true>;
}

/** The Set-Cookie lines of an answer, by cookie name. */
function setCookies(answer: Answer): Map<string, SetCookie> {
  const raw = answer.headers['set-cookie'];
  const lines = Array.isArray(raw) ? raw : raw ? [raw] : [];
  const cookies = new Map<string, SetCookie>();
  for (const line of lines) {
    const [pair, ...rest] = line.split(';').map((part) => part.trim());
    const eq = pair!.indexOf('=');
    const attributes: Record<string, string | true> = {};
    for (const part of rest) {
      const at = part.indexOf('=');
      if (at === -1) attributes[part.toLowerCase()] = true;
      else attributes[part.slice(0, at).toLowerCase()] = part.slice(at + 1);
    }
    cookies.set(pair!.slice(0, eq), { value: pair!.slice(eq + 1), attributes });
  }
  return cookies;
}

function maxAgeOf(answer: Answer, name: string): number {
  const cookie = setCookies(answer).get(name);
  expect(cookie, `${name} was not set`).toBeDefined();
  return Number(cookie!.attributes['max-age']);
}

/** A client that sends exactly the given cookies, as someone holding copied tokens would. */
function holderOf(server: TestServer, cookies: Record<string, string>): TestClient & { send: TestClient['call'] } {
  const client = new TestClient(server.baseUrl);
  const header = Object.entries(cookies)
    .map(([name, value]) => `${name}=${value}`)
    .join('; ');
  return Object.assign(client, {
    send: (method: string, path: string, body?: unknown) => client.call(method, path, body, { cookie: header }),
  });
}

async function tokensOf(client: TestClient): Promise<{ access: string; refresh: string }> {
  const access = await client.cookie(ACCESS, '/auth/me');
  const refresh = await client.cookie(REFRESH, '/auth/refresh');
  expect(access).toBeDefined();
  expect(refresh).toBeDefined();
  return { access: access!, refresh: refresh! };
}

const admin = runOperator;

async function activity(client: TestClient): Promise<{ actor: string | null; action: string; target: string }[]> {
  const answer = await client.get('/activity');
  expect(answer.status).toBe(200);
  return answer.body.events;
}

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

describe('POST /auth/register', () => {
  it('founds an organisation with a Default project and makes the founder its owner', async () => {
    const { email, org } = unique('founder');
    const client = new TestClient(server.baseUrl);
    const before = server.config.now();
    const answer = await client.post('/auth/register', { email, password: PASSWORD, organization_name: org });

    expect(answer.status).toBe(201);
    expect(answer.body).toEqual({
      user: {
        user_id: expect.stringMatching(UUID),
        email,
        role: 'owner',
        joined_at: expect.stringMatching(RFC3339_UTC),
      },
      organization: { name: org },
    });
    const joined = Date.parse(answer.body.user.joined_at);
    expect(joined).toBeGreaterThanOrEqual(before - 1000);
    expect(joined).toBeLessThanOrEqual(server.config.now() + 1000);

    const projects = await client.get('/projects');
    expect(projects.status).toBe(200);
    expect(projects.body.projects.map((p: { name: string }) => p.name)).toEqual(['Default']);

    const events = await activity(client);
    expect(events[0]).toMatchObject({ actor: email, action: 'member.joined', target: email });
  });

  it('lets a teammate join by naming the organisation in another case and with spaces', async () => {
    const founder = await register(server);
    const teammate = unique('teammate');
    const client = new TestClient(server.baseUrl);
    const answer = await client.post('/auth/register', {
      email: teammate.email,
      password: PASSWORD,
      organization_name: `  ${founder.org.toUpperCase()}   `,
    });

    expect(answer.status).toBe(201);
    expect(answer.body.user.role).toBe('member');
    expect(answer.body.organization).toEqual({ name: founder.org });

    const members = await founder.client.get('/members');
    expect(members.body.members.map((m: { email: string; role: string }) => [m.email, m.role])).toEqual([
      [founder.email, 'owner'],
      [teammate.email, 'member'],
    ]);
    // Joining did not create a second project.
    expect((await client.get('/projects')).body.projects).toHaveLength(1);
  });

  it('lowercases the email, and the same address in another case is a duplicate (409)', async () => {
    const { email, org } = unique('MixedCase');
    const shouty = email.toUpperCase();
    const first = new TestClient(server.baseUrl);
    const created = await first.post('/auth/register', { email: shouty, password: PASSWORD, organization_name: org });
    expect(created.status).toBe(201);
    expect(created.body.user.email).toBe(email.toLowerCase());
    expect((await first.get('/auth/me')).body.email).toBe(email.toLowerCase());

    const again = await new TestClient(server.baseUrl).post('/auth/register', {
      email: email.toLowerCase(),
      password: 'another password entirely',
      organization_name: unique().org,
    });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ error: expect.any(String) });
    expect(again.headers['x-error-field']).toBe('email');
    expect(setCookies(again).size).toBe(0);
  });

  it('answers 422 with a located detail for a malformed email or a short password', async () => {
    const client = new TestClient(server.baseUrl);
    const { email, org } = unique();

    const badEmail = await client.post('/auth/register', {
      email: 'not-an-email',
      password: PASSWORD,
      organization_name: org,
    });
    expect(badEmail.status).toBe(422);
    expect(badEmail.body).toEqual({
      detail: [{ loc: ['body', 'email'], msg: expect.any(String), type: expect.any(String) }],
    });

    const shortPassword = await client.post('/auth/register', { email, password: 'short', organization_name: org });
    expect(shortPassword.status).toBe(422);
    expect(shortPassword.body).toEqual({
      detail: [{ loc: ['body', 'password'], msg: expect.any(String), type: expect.any(String) }],
    });

    const longPassword = await client.post('/auth/register', {
      email,
      password: 'x'.repeat(257),
      organization_name: org,
    });
    expect(longPassword.status).toBe(422);
    expect(longPassword.body.detail[0].loc).toEqual(['body', 'password']);

    const missing = await client.post('/auth/register', { email, password: PASSWORD });
    expect(missing.status).toBe(422);
    expect(missing.body.detail[0].loc).toEqual(['body', 'organization_name']);

    // Nothing was created by the refused attempts.
    expect(setCookies(shortPassword).size).toBe(0);
    expect((await client.post('/auth/register', { email, password: PASSWORD, organization_name: org })).status).toBe(
      201,
    );
  });

  it('answers 400 {"error"} for a blank, over-long or <> organisation name and creates nothing', async () => {
    const { email } = unique();
    const client = new TestClient(server.baseUrl);
    for (const name of ['   ', '', 'Acme <script>', 'Acme > Co', 'x'.repeat(256)]) {
      const answer = await client.post('/auth/register', { email, password: PASSWORD, organization_name: name });
      expect(answer.status, JSON.stringify(name)).toBe(400);
      expect(answer.body).toEqual({ error: expect.any(String) });
      expect(answer.headers['x-error-field']).toBe('organization_name');
      expect(setCookies(answer).size).toBe(0);
    }
    expect((await client.get('/auth/me')).status).toBe(401);
    // 255 characters is still allowed, and the email was not taken by the refused attempts.
    const longest = `${unique().org}${'y'.repeat(255)}`.slice(0, 255);
    const ok = await client.post('/auth/register', { email, password: PASSWORD, organization_name: longest });
    expect(ok.status).toBe(201);
    expect(ok.body.organization.name).toBe(longest);
  });

  it('refuses to create an organisation whose name hides a bidirectional override, and creates nothing', async () => {
    const { email, org } = unique();
    const client = new TestClient(server.baseUrl);
    const answer = await client.post('/auth/register', {
      email,
      password: PASSWORD,
      organization_name: `${org}\u202E`,
    });
    expect(answer.status).toBe(400);
    expect(answer.headers['x-error-field']).toBe('organization_name');
    expect(setCookies(answer).size).toBe(0);
    const ok = await client.post('/auth/register', { email, password: PASSWORD, organization_name: org });
    expect(ok.status).toBe(201);
  });

  it('sets both session cookies with the exact attributes of the contract', async () => {
    const { email, org } = unique();
    const answer = await new TestClient(server.baseUrl).post('/auth/register', {
      email,
      password: PASSWORD,
      organization_name: org,
    });
    const cookies = setCookies(answer);
    expect([...cookies.keys()].sort()).toEqual([ACCESS, REFRESH]);
    expect(cookies.get(ACCESS)!.attributes).toEqual({
      'max-age': String(ACCESS_TTL),
      path: '/api',
      httponly: true,
      secure: true,
      samesite: 'Lax',
    });
    expect(cookies.get(REFRESH)!.attributes).toEqual({
      'max-age': String(REFRESH_TTL),
      path: '/api/auth',
      httponly: true,
      secure: true,
      samesite: 'Lax',
    });
  });
});

describe('POST /auth/login', () => {
  it('signs in with the same body as register, sets both cookies and records user.login', async () => {
    const { body: registered, email } = await register(server);
    const client = new TestClient(server.baseUrl);
    const answer = await client.post('/auth/login', { email: `  ${email.toUpperCase()} `, password: PASSWORD });

    expect(answer.status).toBe(200);
    expect(answer.body).toEqual(registered);
    const cookies = setCookies(answer);
    expect(cookies.get(ACCESS)!.attributes).toMatchObject({ 'max-age': '900', path: '/api', httponly: true });
    expect(cookies.get(REFRESH)!.attributes).toMatchObject({ 'max-age': '604800', path: '/api/auth', secure: true });
    expect((await client.get('/auth/me')).status).toBe(200);

    const events = await activity(client);
    expect(events[0]).toMatchObject({ actor: email, action: 'user.login', target: '' });
  });

  it('answers the same 401 for a wrong password, an unknown email and a deactivated account', async () => {
    const { email } = await register(server);
    const client = new TestClient(server.baseUrl);

    const wrongPassword = await client.post('/auth/login', { email, password: `${PASSWORD}!` });
    expect(wrongPassword.status).toBe(401);
    expect(wrongPassword.body).toEqual(BAD_LOGIN);
    expect(setCookies(wrongPassword).size).toBe(0);

    const unknown = await client.post('/auth/login', { email: unique().email, password: PASSWORD });
    expect(unknown.status).toBe(401);
    expect(unknown.body).toEqual(BAD_LOGIN);

    await admin(server, 'deactivate', '--email', email);
    const deactivated = await client.post('/auth/login', { email, password: PASSWORD });
    expect(deactivated.status).toBe(401);
    expect(deactivated.body).toEqual(BAD_LOGIN);
    expect(setCookies(deactivated).size).toBe(0);

    await admin(server, 'activate', '--email', email);
    expect((await client.post('/auth/login', { email, password: PASSWORD })).status).toBe(200);
  });

  it('answers 422 for a body without a password', async () => {
    const answer = await new TestClient(server.baseUrl).post('/auth/login', { email: unique().email });
    expect(answer.status).toBe(422);
    expect(answer.body.detail[0].loc).toEqual(['body', 'password']);
  });
});

describe('GET /auth/me', () => {
  it('describes the signed-in account and its organisation', async () => {
    const { client, body, email, org } = await register(server);
    const me = await client.get('/auth/me');
    expect(me.status).toBe(200);
    expect(me.body).toEqual({
      user_id: body.user.user_id,
      email,
      role: 'owner',
      joined_at: body.user.joined_at,
      organization: { name: org },
    });
  });
});

describe('POST /auth/refresh', () => {
  it('issues a fresh access cookie and rotates the refresh cookie', async () => {
    const { client } = await register(server);
    const before = await tokensOf(client);

    const answer = await client.post('/auth/refresh');
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ message: expect.any(String) });
    const cookies = setCookies(answer);
    expect(cookies.get(ACCESS)!.attributes).toMatchObject({ 'max-age': '900', path: '/api', httponly: true });
    expect(cookies.get(REFRESH)!.attributes).toMatchObject({ path: '/api/auth', httponly: true, secure: true });

    const after = await tokensOf(client);
    expect(after.access).not.toBe(before.access);
    expect(after.refresh).not.toBe(before.refresh);
    expect((await client.get('/auth/me')).status).toBe(200);
  });

  it('keeps the session’s original 7-day end instead of sliding it', async () => {
    const { client } = await register(server);
    const day = 24 * 3600;

    server.advance(day * 1000);
    const first = await client.post('/auth/refresh');
    expect(first.status).toBe(200);
    // Real milliseconds pass between the calls, so allow one second of rounding.
    expect(maxAgeOf(first, REFRESH)).toBeGreaterThanOrEqual(REFRESH_TTL - day - 1);
    expect(maxAgeOf(first, REFRESH)).toBeLessThanOrEqual(REFRESH_TTL - day);
    expect(maxAgeOf(first, ACCESS)).toBe(ACCESS_TTL);

    // Ten minutes before the absolute end: still refreshable, and nothing outlives the end.
    server.advance((6 * day - 600) * 1000);
    const second = await client.post('/auth/refresh');
    expect(second.status).toBe(200);
    expect(maxAgeOf(second, REFRESH)).toBeGreaterThanOrEqual(599);
    expect(maxAgeOf(second, REFRESH)).toBeLessThanOrEqual(600);
    expect(maxAgeOf(second, ACCESS)).toBeLessThanOrEqual(600);
    expect((await client.get('/auth/me')).status).toBe(200);

    // Past the end, neither the access token nor the refresh token works.
    server.advance(601 * 1000);
    const me = await client.get('/auth/me');
    expect(me.status).toBe(401);
    expect(me.body).toEqual(UNAUTHORIZED);
    const late = await client.post('/auth/refresh');
    expect(late.status).toBe(401);
    expect(late.body).toEqual(UNAUTHORIZED);
  });

  it('answers 401 without a refresh cookie, or with an unknown one', async () => {
    const none = await new TestClient(server.baseUrl).post('/auth/refresh');
    expect(none.status).toBe(401);
    expect(none.body).toEqual(UNAUTHORIZED);

    const forged = await holderOf(server, { [REFRESH]: 'A'.repeat(43) }).send('POST', '/auth/refresh');
    expect(forged.status).toBe(401);
    expect(forged.body).toEqual(UNAUTHORIZED);
  });

  it('does not accept an access token in place of a refresh token', async () => {
    const { client } = await register(server);
    const { access } = await tokensOf(client);
    const answer = await holderOf(server, { [REFRESH]: access }).send('POST', '/auth/refresh');
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual(UNAUTHORIZED);
  });
});

describe('POST /auth/logout', () => {
  it('revokes both tokens at once, expires both cookies and records user.logout', async () => {
    const { client, email } = await register(server);
    const tokens = await tokensOf(client);
    const watcher = await register(server, { org: (await client.get('/auth/me')).body.organization.name });

    const answer = await client.post('/auth/logout');
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ message: expect.any(String) });
    const cookies = setCookies(answer);
    for (const [name, path] of [
      [ACCESS, '/api'],
      [REFRESH, '/api/auth'],
    ] as const) {
      const cookie = cookies.get(name);
      expect(cookie, name).toBeDefined();
      expect(cookie!.value).toBe('');
      expect(cookie!.attributes.path).toBe(path);
      const expired =
        cookie!.attributes['max-age'] === '0' || Date.parse(String(cookie!.attributes.expires)) <= Date.now();
      expect(expired, name).toBe(true);
    }
    expect(await client.cookie(ACCESS, '/auth/me')).toBeUndefined();
    expect(await client.cookie(REFRESH)).toBeUndefined();

    // Copies of the old tokens are dead server-side, not just dropped by the browser.
    const holder = holderOf(server, { [ACCESS]: tokens.access, [REFRESH]: tokens.refresh });
    const me = await holder.send('GET', '/auth/me');
    expect(me.status).toBe(401);
    expect(me.body).toEqual(UNAUTHORIZED);
    const refresh = await holder.send('POST', '/auth/refresh');
    expect(refresh.status).toBe(401);
    expect(refresh.body).toEqual(UNAUTHORIZED);

    const events = await activity(watcher.client);
    expect(events.find((e) => e.action === 'user.logout')).toMatchObject({ actor: email, target: '' });
  });

  it('needs a session', async () => {
    const answer = await new TestClient(server.baseUrl).post('/auth/logout');
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual(UNAUTHORIZED);
  });
});

describe('one kept-alive connection carrying several sessions', () => {
  it("answers each request as its own cookie's caller, and a session ended elsewhere at once", async () => {
    const first = await register(server);
    const second = await register(server);
    const a = await tokensOf(first.client);
    const b = await tokensOf(second.client);
    // One socket: undici's Client holds a single connection.
    const connection = new Client(new URL(server.baseUrl).origin);
    const me = async (access: string) => {
      const answer = await connection.request({
        method: 'GET',
        path: '/api/auth/me',
        headers: { cookie: `${ACCESS}=${access}` },
      });
      const body = (await answer.body.json()) as { email?: string };
      return answer.statusCode === 200 ? body.email : answer.statusCode;
    };
    try {
      const callers = [];
      for (const access of [a.access, b.access, a.access, `${a.access}x`, b.access, b.access])
        callers.push(await me(access));
      expect(callers).toEqual([first.email, second.email, first.email, 401, second.email, second.email]);
      expect((await first.client.post('/auth/logout')).status).toBe(200);
      expect(await me(a.access)).toBe(401);
      expect(await me(b.access)).toBe(second.email);
    } finally {
      await connection.close();
    }
  });
});

describe('sessions: every way a session ends answers 401 on the very next request', () => {
  const expectUnauthorized = (answer: Answer) => {
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual(UNAUTHORIZED);
  };

  it('no cookie', async () => {
    const client = new TestClient(server.baseUrl);
    expectUnauthorized(await client.get('/auth/me'));
    expectUnauthorized(await client.get('/keys'));
    expectUnauthorized(await client.get('/activity'));
  });

  it('an expired access token, which a refresh then replaces', async () => {
    const { client } = await register(server);
    server.advance((ACCESS_TTL - 5) * 1000);
    expect((await client.get('/auth/me')).status).toBe(200);
    server.advance(6 * 1000);
    expectUnauthorized(await client.get('/auth/me'));
    expectUnauthorized(await client.get('/projects'));

    expect((await client.post('/auth/refresh')).status).toBe(200);
    expect((await client.get('/auth/me')).status).toBe(200);
  });

  it('a rotated refresh token presented again, which revokes the whole session', async () => {
    const { client } = await register(server);
    const stolen = await tokensOf(client);
    expect((await client.post('/auth/refresh')).status).toBe(200);
    const current = await tokensOf(client);
    expect((await client.get('/auth/me')).status).toBe(200);

    const replay = await holderOf(server, { [REFRESH]: stolen.refresh }).send('POST', '/auth/refresh');
    expectUnauthorized(replay);

    // The legitimate holder's newest tokens died with the session.
    expectUnauthorized(await client.get('/auth/me'));
    expect(await tokensOf(client)).toEqual(current);
    expectUnauthorized(await client.post('/auth/refresh'));
    // The old access token was never brought back either.
    expectUnauthorized(await holderOf(server, { [ACCESS]: stolen.access }).send('GET', '/auth/me'));
  });

  it('logout', async () => {
    const { client } = await register(server);
    const { access } = await tokensOf(client);
    expect((await client.post('/auth/logout')).status).toBe(200);
    expectUnauthorized(await client.get('/auth/me'));
    expectUnauthorized(await holderOf(server, { [ACCESS]: access }).send('GET', '/auth/me'));
  });

  it('deactivation by the operator, immediately and for every session of the account', async () => {
    const { client, email } = await register(server);
    const second = new TestClient(server.baseUrl);
    expect((await second.post('/auth/login', { email, password: PASSWORD })).status).toBe(200);
    const bystander = await register(server);

    expect(await admin(server, 'deactivate', '--email', email)).toContain(email);
    expectUnauthorized(await client.get('/auth/me'));
    expectUnauthorized(await second.get('/keys'));
    expectUnauthorized(await client.post('/auth/refresh'));
    // Another account's session is untouched.
    expect((await bystander.client.get('/auth/me')).status).toBe(200);
  });

  it('revoke-sessions by the operator ends every session of the account at once', async () => {
    const { client, email } = await register(server);
    const second = new TestClient(server.baseUrl);
    expect((await second.post('/auth/login', { email, password: PASSWORD })).status).toBe(200);
    const bystander = await register(server);

    expect(await admin(server, 'revoke-sessions', '--email', email)).toMatch(/2 session/);
    expectUnauthorized(await client.get('/auth/me'));
    expectUnauthorized(await second.get('/auth/me'));
    expectUnauthorized(await client.post('/auth/refresh'));
    expectUnauthorized(await second.post('/auth/refresh'));
    expect((await bystander.client.get('/auth/me')).status).toBe(200);

    // The account itself still works: signing in again starts a new session.
    expect((await client.post('/auth/login', { email, password: PASSWORD })).status).toBe(200);
    expect((await client.get('/auth/me')).status).toBe(200);
  });
});

describe('session tokens', () => {
  it('are random and opaque, and only their hashes reach the database', async () => {
    const { client, body, email } = await register(server);
    expect((await client.post('/auth/refresh')).status).toBe(200);
    const { access, refresh } = await tokensOf(client);

    for (const token of [access, refresh]) {
      expect(token).toMatch(/^[A-Za-z0-9_-]{43,}$/); // no JWT dots, no readable claims
      expect(token).not.toContain(body.user.user_id);
      expect(Buffer.from(token, 'base64url').toString('latin1')).not.toContain(email);
    }
    expect(access).not.toBe(refresh);

    const rows = await controlSql<Record<string, unknown>>(server, 'SELECT * FROM session_tokens');
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      for (const value of Object.values(row)) {
        const text = Buffer.isBuffer(value) ? value.toString('latin1') : String(value);
        expect(text).not.toContain(access);
        expect(text).not.toContain(refresh);
        if (Buffer.isBuffer(value)) {
          expect(value.equals(Buffer.from(access, 'base64url'))).toBe(false);
          expect(value.equals(Buffer.from(refresh, 'base64url'))).toBe(false);
        }
      }
    }

    // Nor anywhere else in the files on disk (the write-ahead log included), on SQLite.
    const dbPath = join(server.dataDir, 'control.db');
    for (const file of [dbPath, `${dbPath}-wal`]) {
      if (!existsSync(file)) continue;
      const bytes = readFileSync(file);
      for (const token of [access, refresh]) {
        expect(bytes.includes(Buffer.from(token, 'utf8'))).toBe(false);
        expect(bytes.includes(Buffer.from(token, 'base64url'))).toBe(false);
      }
    }
  });
});
