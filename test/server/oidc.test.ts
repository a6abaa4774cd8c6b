import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdmin } from '../../server/admin/commands.js';
import { resolveConfig } from '../../server/config.js';
import {
  PASSWORD,
  TestClient,
  register,
  startServer,
  unique,
  type Answer,
  type TestServer,
  storeFlags,
} from './harness.js';

const ISSUER = 'https://id.example.test';
const CLIENT_ID = 'gateway-console.apps.example.test';
const KID = 'test-signing-key-1';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const RFC3339_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|\+00:00)$/;

interface KeyPair {
  privateKey: CryptoKey;
  publicJwk: JWK;
}

async function newKeyPair(): Promise<KeyPair> {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  return { privateKey, publicJwk: await exportJWK(publicKey) };
}

let trusted: KeyPair;
let stranger: KeyPair;
let jwks: { keys: JWK[] };

interface TokenOptions {
  claims?: JWTPayload;
  issuer?: string;
  audience?: string;
  /** Seconds from now; negative for a token that has already expired. */
  expiresIn?: number;
  key?: KeyPair;
  kid?: string;
}

/** An ID token as the identity provider would issue it, with any part overridable. */
function idToken(email: string, options: TokenOptions = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const expiresIn = options.expiresIn ?? 600;
  return new SignJWT({ email, email_verified: true, name: 'Test Person', ...options.claims })
    .setProtectedHeader({ alg: 'RS256', kid: options.kid ?? KID, typ: 'JWT' })
    .setIssuer(options.issuer ?? ISSUER)
    .setAudience(options.audience ?? CLIENT_ID)
    .setSubject(`sub-${email}`)
    .setIssuedAt(Math.min(now, now + expiresIn - 60))
    .setExpirationTime(now + expiresIn)
    .sign((options.key ?? trusted).privateKey);
}

/** The same token with its payload rewritten after signing. */
function tamper(token: string, change: (payload: Record<string, unknown>) => void): string {
  const [header, payload, signature] = token.split('.');
  const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8'));
  change(claims);
  return [header, Buffer.from(JSON.stringify(claims)).toString('base64url'), signature].join('.');
}

function cookieNames(answer: Answer): string[] {
  const raw = answer.headers['set-cookie'];
  const lines = Array.isArray(raw) ? raw : raw ? [raw] : [];
  return lines.map((line) => line.slice(0, line.indexOf('='))).sort();
}

async function actions(client: TestClient): Promise<{ actor: string | null; action: string; target: string }[]> {
  const answer = await client.get('/activity');
  expect(answer.status).toBe(200);
  return answer.body.events;
}

beforeAll(async () => {
  trusted = await newKeyPair();
  stranger = await newKeyPair();
  jwks = { keys: [{ ...trusted.publicJwk, kid: KID, alg: 'RS256', use: 'sig' }] };
});

interface JwksSource {
  location: string;
  close(): Promise<void>;
}

/** The issuer's keys in a local file, as an offline server trusting a local identity provider has them. */
function jwksFile(): JwksSource {
  const dir = mkdtempSync(join(tmpdir(), 'gc-jwks-'));
  const location = join(dir, 'jwks.json');
  writeFileSync(location, JSON.stringify(jwks));
  return { location, close: async () => rmSync(dir, { recursive: true, force: true }) };
}

/** The issuer's keys served over HTTP on loopback. */
async function jwksHttp(): Promise<JwksSource> {
  const http: Server = createServer((request, response) => {
    if (request.url === '/jwks.json') {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(jwks));
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    location: `http://127.0.0.1:${port}/jwks.json`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        http.closeAllConnections();
        http.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

describe.each([
  { mode: 'a JWKS file', source: async () => jwksFile() },
  { mode: 'a JWKS address over HTTP', source: jwksHttp },
])('POST /auth/google with $mode', ({ source }) => {
  let server: TestServer;
  let keys: JwksSource;

  beforeAll(async () => {
    keys = await source();
    server = await startServer({ oidc: { issuer: ISSUER, clientId: CLIENT_ID, jwks: keys.location } });
  });
  afterAll(async () => {
    await server?.close();
    await keys?.close();
  });

  const signIn = (client: TestClient, body: Record<string, unknown>) => client.post('/auth/google', body);

  it('creates an account for a new email that names an organisation, and signs it in', async () => {
    const { email, org } = unique('oidc');
    const client = new TestClient(server.baseUrl);
    const answer = await signIn(client, { id_token: await idToken(email), organization_name: org });

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
    expect(cookieNames(answer)).toEqual(['svc_access_token', 'svc_refresh_token']);

    const me = await client.get('/auth/me');
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({
      user_id: answer.body.user.user_id,
      email,
      role: 'owner',
      organization: { name: org },
    });
    expect((await client.get('/projects')).body.projects).toHaveLength(1);
    expect((await actions(client))[0]).toMatchObject({ actor: email, action: 'member.joined', target: email });

    // The session is an ordinary one: it refreshes and signs out like a password session.
    expect((await client.post('/auth/refresh')).status).toBe(200);
    expect((await client.post('/auth/logout')).status).toBe(200);
    expect((await client.get('/auth/me')).status).toBe(401);
  });

  it('joins an existing organisation named in another case as a member', async () => {
    const founder = await register(server);
    const { email } = unique('oidc-join');
    const client = new TestClient(server.baseUrl);
    const answer = await signIn(client, {
      id_token: await idToken(email),
      organization_name: ` ${founder.org.toLowerCase()} `,
    });
    expect(answer.status).toBe(201);
    expect(answer.body.user.role).toBe('member');
    expect(answer.body.organization).toEqual({ name: founder.org });
    const joined = (await actions(founder.client)).find((event) => event.action === 'member.joined');
    expect(joined).toMatchObject({ actor: email, target: email });
  });

  it('signs an existing account in with 200 and records user.login', async () => {
    const existing = await register(server);
    const client = new TestClient(server.baseUrl);
    // The identity provider may spell the address in another case.
    const answer = await signIn(client, {
      id_token: await idToken(existing.email.toUpperCase()),
      organization_name: 'ignored for an existing account',
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual(existing.body);
    expect(cookieNames(answer)).toEqual(['svc_access_token', 'svc_refresh_token']);

    const me = await client.get('/auth/me');
    expect(me.status).toBe(200);
    expect(me.body.user_id).toBe(existing.body.user.user_id);
    expect((await actions(client))[0]).toMatchObject({ actor: existing.email, action: 'user.login', target: '' });
  });

  it('answers 400 for a new email without organization_name, and creates nothing', async () => {
    const { email, org } = unique('oidc-noorg');
    const client = new TestClient(server.baseUrl);
    const token = await idToken(email);
    const answer = await signIn(client, { id_token: token });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ error: expect.any(String) });
    expect(cookieNames(answer)).toEqual([]);
    expect((await client.get('/auth/me')).status).toBe(401);

    // The email is still free: the same token with an organisation creates the account.
    expect((await signIn(client, { id_token: token, organization_name: org })).status).toBe(201);
  });

  it('does not give an externally created account a usable password', async () => {
    const { email, org } = unique('oidc-nopass');
    expect(
      (await signIn(new TestClient(server.baseUrl), { id_token: await idToken(email), organization_name: org })).status,
    ).toBe(201);
    const login = await new TestClient(server.baseUrl).post('/auth/login', { email, password: PASSWORD });
    expect(login.status).toBe(401);
    expect(login.body).toEqual({ error: 'invalid email or password' });
  });

  it('refuses a deactivated account', async () => {
    const existing = await register(server);
    expect(await runAdmin(['deactivate', '--email', existing.email, ...storeFlags(server)], () => {})).toBe(0);
    const client = new TestClient(server.baseUrl);
    const answer = await signIn(client, { id_token: await idToken(existing.email) });
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual({ error: expect.any(String) });
    expect(cookieNames(answer)).toEqual([]);
  });

  const refused: [string, (email: string) => Promise<string>][] = [
    ['an expired token', (email) => idToken(email, { expiresIn: -60 })],
    ['a token for another audience', (email) => idToken(email, { audience: 'someone-else' })],
    ['a token from another issuer', (email) => idToken(email, { issuer: 'https://evil.example.test' })],
    ['an unverified email', (email) => idToken(email, { claims: { email_verified: false } })],
    ['a token without email_verified', (email) => idToken(email, { claims: { email_verified: undefined } })],
    [
      'a token whose payload was changed after signing',
      async (email) =>
        tamper(await idToken(`someone-else-${email}`), (claims) => {
          claims.email = email;
        }),
    ],
    ['a token signed by another key under the trusted key id', (email) => idToken(email, { key: stranger })],
    ['a token signed by an unknown key', (email) => idToken(email, { key: stranger, kid: 'unknown-key' })],
    ['a token that is not a JWT', async () => 'not.a.jwt'],
  ];

  it.each(refused)('answers 401 {"error"} for %s and creates no session', async (_case, make) => {
    const { email, org } = unique('oidc-bad');
    const client = new TestClient(server.baseUrl);
    const answer = await signIn(client, { id_token: await make(email), organization_name: org });
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual({ error: expect.any(String) });
    expect(Object.keys(answer.body)).toEqual(['error']);
    expect(cookieNames(answer)).toEqual([]);
    expect((await client.get('/auth/me')).status).toBe(401);
    // No account was created either: a good token for that email still founds the organisation.
    const good = await signIn(client, { id_token: await idToken(email), organization_name: org });
    expect(good.status).toBe(201);
    expect(good.body.user.role).toBe('owner');
  });

  it('answers 422 without an id_token', async () => {
    const answer = await signIn(new TestClient(server.baseUrl), { organization_name: 'x' });
    expect(answer.status).toBe(422);
    expect(answer.body.detail[0].loc).toEqual(['body', 'id_token']);
  });
});

describe('POST /auth/google on a server without external identity', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ oidc: null });
  });
  afterAll(() => server.close());

  it('answers 501 and signs nobody in', async () => {
    const { email, org } = unique('oidc-off');
    const client = new TestClient(server.baseUrl);
    const answer = await client.post('/auth/google', { id_token: await idToken(email), organization_name: org });
    expect(answer.status).toBe(501);
    expect(answer.body).toEqual({ error: 'external identity sign-in is not configured' });
    expect(cookieNames(answer)).toEqual([]);
    expect((await client.get('/auth/me')).status).toBe(401);
  });
});

describe('where the signing keys may come from', () => {
  const at = (jwks: string) => () =>
    resolveConfig({ dataDir: tmpdir(), oidc: { issuer: ISSUER, clientId: CLIENT_ID, jwks } });

  it('refuses a plain http address off this machine, and an unknown scheme, before the server starts', () => {
    for (const jwks of [
      'http://id.example.test/jwks.json',
      'http://10.0.0.5/jwks.json',
      'ftp://id.example.test/jwks',
    ]) {
      expect(at(jwks), jwks).toThrow('SVC_OIDC_JWKS must be an https address (plain http only on loopback)');
    }
  });

  it('takes https, http on loopback, and a local file', () => {
    for (const jwks of [
      'https://id.example.test/jwks.json',
      'http://127.0.0.1:8080/jwks.json',
      'http://localhost/jwks.json',
      'http://[::1]:9000/jwks.json',
      '/etc/gateway/jwks.json',
    ]) {
      expect(at(jwks)().oidc?.jwks, jwks).toBe(jwks);
    }
  });
});
