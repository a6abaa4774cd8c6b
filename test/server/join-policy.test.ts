import { SignJWT, exportJWK, generateKeyPair, type CryptoKey } from 'jose';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  PASSWORD,
  TestClient,
  register,
  runOperator,
  startServer,
  unique,
  type Answer,
  type TestServer,
} from './harness.js';

/** decisions.md, "Join policy": the refusal's exact body. */
const REFUSED = { error: 'this organisation does not accept new members this way' };

const ISSUER = 'https://id.example.test';
const CLIENT_ID = 'gateway-console.apps.example.test';
const KID = 'join-policy-test-key';

let server: TestServer;
let signingKey: CryptoKey;
let jwksDir: string;

beforeAll(async () => {
  // External identity sign-in trusts a local JWKS file, as in oidc.test.ts.
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  signingKey = privateKey;
  jwksDir = mkdtempSync(join(tmpdir(), 'gc-join-jwks-'));
  const jwks = join(jwksDir, 'jwks.json');
  writeFileSync(
    jwks,
    JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: KID, alg: 'RS256', use: 'sig' }] }),
  );
  server = await startServer({ oidc: { issuer: ISSUER, clientId: CLIENT_ID, jwks } });
});
afterAll(async () => {
  await server.close();
  rmSync(jwksDir, { recursive: true, force: true });
});

/** An ID token for `email` as the trusted identity provider would issue it. */
function idToken(email: string): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ email, email_verified: true })
    .setProtectedHeader({ alg: 'RS256', kid: KID, typ: 'JWT' })
    .setIssuer(ISSUER)
    .setAudience(CLIENT_ID)
    .setSubject(`sub-${email}`)
    .setIssuedAt(now)
    .setExpirationTime(now + 600)
    .sign(signingKey);
}

const policy = (org: string, ...args: string[]) => runOperator(server, 'set-join-policy', '--org', org, ...args);

function registerAnswer(client: TestClient, email: string, org: string): Promise<Answer> {
  return client.post('/auth/register', { email, password: PASSWORD, organization_name: org });
}

function setCookies(answer: Answer): string[] {
  const raw = answer.headers['set-cookie'];
  return Array.isArray(raw) ? raw : raw ? [raw] : [];
}

/** What an owner sees of the organisation: a refused join must change none of it. */
async function seenBy(owner: TestClient) {
  const [members, activity] = await Promise.all([owner.get('/members'), owner.get('/activity')]);
  return { members: members.body, activity: activity.body };
}

/** A refused join created nothing: no session, no account (the email is free and cannot sign in). */
async function expectNothingCreated(client: TestClient, answer: Answer, email: string): Promise<void> {
  expect(setCookies(answer)).toEqual([]);
  expect((await client.get('/auth/me')).status).toBe(401);
  expect(await server.app.control.accounts.findByEmail(email)).toBeUndefined();
  const login = await new TestClient(server.baseUrl).post('/auth/login', { email, password: PASSWORD });
  expect(login).toMatchObject({ status: 401, body: { error: 'invalid email or password' } });
}

describe('the join policy by default', () => {
  it('is open for a new organisation, which anyone joins by naming it', async () => {
    const owner = await register(server);
    expect(await owner.client.get('/organization/join-policy')).toMatchObject({
      status: 200,
      body: { policy: 'open', domains: [] },
    });
    const joiner = await register(server, { org: owner.org.toUpperCase() });
    expect(joiner.body.user.role).toBe('member');
    expect(await joiner.client.get('/organization/join-policy')).toMatchObject({
      status: 200,
      body: { policy: 'open', domains: [] },
    });
  });

  it('is read by signed-in members only', async () => {
    const answer = await new TestClient(server.baseUrl).get('/organization/join-policy');
    expect(answer).toMatchObject({ status: 401, body: { detail: 'Unauthorized' } });
  });
});

describe('a closed organisation', () => {
  it('refuses a registration naming it with 403 and creates nothing', async () => {
    const owner = await register(server);
    await policy(owner.org, '--policy', 'closed');
    const before = await seenBy(owner.client);

    const { email } = unique('refused');
    const client = new TestClient(server.baseUrl);
    const answer = await registerAnswer(client, email, ` ${owner.org.toLowerCase()} `);
    expect(answer.status).toBe(403);
    expect(answer.body).toEqual(REFUSED);
    await expectNothingCreated(client, answer, email);
    expect(await seenBy(owner.client)).toEqual(before);

    // The email is still free: it founds an organisation of its own, whatever the policies of others.
    const elsewhere = await register(server, { email });
    expect(elsewhere.body.user.role).toBe('owner');
    expect(await owner.client.get('/organization/join-policy')).toMatchObject({
      status: 200,
      body: { policy: 'closed', domains: [] },
    });
  });

  it('refuses a first external sign-in naming it, and creates nothing', async () => {
    const owner = await register(server);
    await policy(owner.org, '--policy', 'closed');
    const before = await seenBy(owner.client);

    const { email } = unique('refused-oidc');
    const token = await idToken(email);
    const client = new TestClient(server.baseUrl);
    const answer = await client.post('/auth/google', { id_token: token, organization_name: owner.org });
    expect(answer.status).toBe(403);
    expect(answer.body).toEqual(REFUSED);
    await expectNothingCreated(client, answer, email);
    expect(await seenBy(owner.client)).toEqual(before);

    // The same token founds a new organisation: founding is never subject to a policy.
    const founded = await client.post('/auth/google', { id_token: token, organization_name: unique('founded').org });
    expect(founded.status).toBe(201);
    expect(founded.body.user.role).toBe('owner');
  });

  it('still signs its existing members in, and opens again', async () => {
    const owner = await register(server);
    const member = await register(server, { org: owner.org });
    await policy(owner.org, '--policy', 'closed');
    const login = await new TestClient(server.baseUrl).post('/auth/login', { email: member.email, password: PASSWORD });
    expect(login.status).toBe(200);
    const viaIdentity = await new TestClient(server.baseUrl).post('/auth/google', {
      id_token: await idToken(member.email),
      organization_name: owner.org,
    });
    expect(viaIdentity.status).toBe(200);

    await policy(owner.org, '--policy', 'open');
    expect((await register(server, { org: owner.org })).body.user.role).toBe('member');
  });
});

describe('an organisation open to some email domains', () => {
  let owner: Awaited<ReturnType<typeof register>>;
  beforeAll(async () => {
    owner = await register(server);
    await policy(owner.org, '--policy', 'domains', '--domains', 'Allowed.Example,partner.example');
  });

  it('shows its domains to a member', async () => {
    expect(await owner.client.get('/organization/join-policy')).toMatchObject({
      status: 200,
      body: { policy: 'domains', domains: ['allowed.example', 'partner.example'] },
    });
  });

  it('takes an email at a listed domain, in any case', async () => {
    const tag = unique('dom').email.split('@')[0];
    const lower = await register(server, { email: `${tag}-a@allowed.example`, org: owner.org });
    expect(lower.body.user.role).toBe('member');
    const upper = await register(server, { email: `${tag}-B@PARTNER.Example`, org: owner.org });
    expect(upper.body.organization).toEqual({ name: owner.org });
  });

  it.each([
    ['another domain', 'elsewhere.example'],
    ['a subdomain of a listed one', 'mail.allowed.example'],
    ['a name that ends like a listed one', 'notallowed.example'],
    ['a listed domain as a subdomain of another', 'allowed.example.evil.example'],
  ])('refuses %s with 403 and creates nothing', async (_case, domain) => {
    const before = await seenBy(owner.client);
    const email = `${unique('dom-refused').email.split('@')[0]}@${domain}`;
    const client = new TestClient(server.baseUrl);
    const answer = await registerAnswer(client, email, owner.org);
    expect(answer.status).toBe(403);
    expect(answer.body).toEqual(REFUSED);
    await expectNothingCreated(client, answer, email);
    expect(await seenBy(owner.client)).toEqual(before);
  });

  it('applies to external identity sign-in too', async () => {
    const tag = unique('dom-oidc').email.split('@')[0];
    const refused = await new TestClient(server.baseUrl).post('/auth/google', {
      id_token: await idToken(`${tag}@elsewhere.example`),
      organization_name: owner.org,
    });
    expect(refused).toMatchObject({ status: 403, body: REFUSED });
    const taken = await new TestClient(server.baseUrl).post('/auth/google', {
      id_token: await idToken(`${tag}@Partner.Example`),
      organization_name: owner.org,
    });
    expect(taken.status).toBe(201);
    expect(taken.body.user.role).toBe('member');
  });
});

describe('the OpenAPI document', () => {
  it('lists the refusal on both sign-up routes and the read of the policy', async () => {
    const doc = (await new TestClient(server.baseUrl).get('/openapi.json')).body;
    const item = (path: string) => doc.paths[Object.keys(doc.paths).find((p) => p.endsWith(path))!];
    expect(Object.keys(item('/auth/register').post.responses)).toContain('403');
    expect(Object.keys(item('/auth/google').post.responses)).toContain('403');
    expect(Object.keys(item('/organization/join-policy').get.responses)).toEqual(['200', '401']);
  });
});
