import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { register, startServer, TestClient, type TestServer } from './harness.js';

/**
 * A realistic session of use, then a search of everything the server wrote (its log and
 * the raw bytes of its SQLite files) for any secret that passed through it.
 */

const dataDir = mkdtempSync(join(tmpdir(), 'gc-secrets-'));
let server: TestServer;
const secrets = new Map<string, string>(); // value -> what it is

function remember(label: string, value: string | undefined): void {
  if (!value) throw new Error(`no value for ${label}`);
  secrets.set(value, label);
}

async function rememberCookies(client: TestClient, label: string): Promise<void> {
  remember(`${label} access cookie`, await client.cookie('svc_access_token', '/keys'));
  remember(`${label} refresh cookie`, await client.cookie('svc_refresh_token'));
}

/** The forms a secret could be written in: as is, and base64 or hex of its bytes. */
function forms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  return [secret, bytes.toString('base64'), bytes.toString('hex')];
}

function leaks(haystack: string): string[] {
  const found: string[] = [];
  for (const [secret, label] of secrets) {
    for (const form of forms(secret)) if (haystack.includes(form)) found.push(`${label} (${form})`);
  }
  return found;
}

function fileText(path: string): string {
  // latin1 maps every byte to one character, so any ASCII secret is found wherever it sits.
  return readFileSync(path).toString('latin1');
}

const storeFiles = ['control.db', 'control.db-wal', 'telemetry.db', 'telemetry.db-wal'];

beforeAll(async () => {
  server = await startServer({ dataDir });
  const ownerPassword = `owner-pw-${randomBytes(9).toString('hex')}`;
  const memberPassword = `member-pw-${randomBytes(9).toString('hex')}`;
  const wrongPassword = `wrong-pw-${randomBytes(9).toString('hex')}`;
  remember('owner password', ownerPassword);
  remember('member password', memberPassword);
  remember('wrong password', wrongPassword);

  const owner = await register(server, { password: ownerPassword });
  await rememberCookies(owner.client, 'owner registration');
  const member = await register(server, { org: owner.org, password: memberPassword });
  await rememberCookies(member.client, 'member registration');

  const projectId: string = (await owner.client.get('/projects')).body.projects[0].id;
  const keyIds: string[] = [];
  for (const [i, client] of [owner.client, member.client, owner.client].entries()) {
    const created = await client.post('/keys', {
      project_id: projectId,
      name: `key ${i}`,
      credit_limit_cents: 1_000_000,
    });
    expect(created.status).toBe(201);
    remember(`api key ${i}`, created.body.api_key);
    // The prefix is shown by design; the rest of the secret must never be.
    remember(`api key ${i} after its prefix`, created.body.api_key.slice(created.body.key_prefix.length));
    keyIds.push(created.body.id);
  }
  expect(
    (await owner.client.patch(`/keys/${keyIds[0]}`, { rate_limit_rpm: 300, expires_at: 4_102_444_800 })).status,
  ).toBe(200);
  expect((await owner.client.delete(`/keys/${keyIds[2]}`)).status).toBe(200);

  const providerKeys = {
    openai: `sk-proj-${randomBytes(24).toString('base64url')}`,
    openaiRotated: `sk-proj-${randomBytes(24).toString('base64url')}`,
    anthropic: `sk-ant-api03-${randomBytes(24).toString('base64url')}`,
  };
  for (const [label, value] of Object.entries(providerKeys)) {
    remember(`provider key ${label}`, value);
    remember(`provider key ${label} without its last four`, value.slice(0, -4));
  }
  for (const [provider, apiKey] of [
    ['openai', providerKeys.openai],
    ['openai', providerKeys.openaiRotated],
    ['anthropic', providerKeys.anthropic],
  ] as const) {
    expect((await member.client.post('/vault/keys', { provider, api_key: apiKey })).status).toBe(200);
  }
  expect((await owner.client.delete('/vault/keys/anthropic')).status).toBe(200);

  expect((await owner.client.post('/auth/refresh')).status).toBe(200);
  await rememberCookies(owner.client, 'owner refreshed');
  expect((await owner.client.post('/auth/logout')).status).toBe(200);

  const again = new TestClient(server.baseUrl);
  expect((await again.post('/auth/login', { email: owner.email, password: wrongPassword })).status).toBe(401);
  expect((await again.post('/auth/login', { email: owner.email, password: ownerPassword })).status).toBe(200);
  await rememberCookies(again, 'owner login');
  // The telemetry store is opened on first use.
  expect((await again.get('/keys')).status).toBe(200);

  // Credentials in headers of every kind, valid and not.
  const access = (await again.cookie('svc_access_token', '/keys'))!;
  const apiKey = [...secrets].find(([, label]) => label === 'api key 0')![0];
  const bare = new TestClient(server.baseUrl);
  expect((await bare.get('/keys', { cookie: `svc_access_token=${access}` })).status).toBe(200);
  expect((await bare.get('/keys', { authorization: `Bearer ${apiKey}` })).status).toBe(401);
  const forged = `forged-${randomBytes(16).toString('hex')}`;
  remember('forged cookie', forged);
  expect((await bare.get('/keys', { cookie: `svc_access_token=${forged}` })).status).toBe(401);
  expect((await bare.post('/auth/refresh', undefined, { cookie: `svc_refresh_token=${forged}` })).status).toBe(401);
  expect((await bare.post('/auth/login', `{"email":"x@y.z","password":"${forged}"`, {})).status).toBe(422);
  expect((await again.post('/auth/logout')).status).toBe(200);
});

let closed = false;
async function closeServer(): Promise<void> {
  if (closed) return;
  closed = true;
  await server.close();
}

afterAll(async () => {
  await closeServer();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('secrets never reach the log or the stores', () => {
  it('the run left secrets to look for and a log to search', () => {
    expect(secrets.size).toBeGreaterThan(20);
    const logs = server.logs();
    expect(logs).toContain('/api/keys');
    expect(logs).toContain('/api/auth/login');
  });

  it('the server log holds no password, API key, provider key or cookie value', () => {
    expect(leaks(server.logs())).toEqual([]);
  });

  it('the log records requests without their Cookie or Authorization header values', () => {
    const logs = server.logs();
    expect(logs).not.toMatch(/svc_access_token=/);
    expect(logs).not.toMatch(/svc_refresh_token=/);
    expect(logs).not.toMatch(/Bearer sk_svc_/);
  });

  it('the raw bytes of control.db, its WAL and telemetry.db hold no secret while the server runs', () => {
    expect(existsSync(join(dataDir, 'control.db'))).toBe(true);
    expect(existsSync(join(dataDir, 'telemetry.db'))).toBe(true);
    for (const name of storeFiles) {
      const path = join(dataDir, name);
      if (!existsSync(path)) continue;
      expect({ file: name, leaks: leaks(fileText(path)) }).toEqual({ file: name, leaks: [] });
    }
  });

  it('control.db holds no secret after the server closes and checkpoints', async () => {
    await closeServer();
    for (const name of storeFiles) {
      const path = join(dataDir, name);
      if (!existsSync(path)) continue;
      expect({ file: name, leaks: leaks(fileText(path)) }).toEqual({ file: name, leaks: [] });
    }
    // The data is really there: the vault hint and key prefixes are stored in the clear.
    expect(fileText(join(dataDir, 'control.db'))).toContain('sk_svc_');
  });
});

describe('log redaction', () => {
  it('censors secret-bearing fields and headers whoever logs them', () => {
    const planted = {
      req: { headers: { cookie: 'svc_access_token=cookie-secret-1', authorization: 'Bearer auth-secret-2' } },
      res: { headers: { 'set-cookie': 'svc_refresh_token=cookie-secret-3' } },
      body: { password: 'password-secret-4', api_key: 'key-secret-5', id_token: 'id-token-secret-6' },
      token: 'token-secret-7',
    };
    server.app.log.warn(planted, 'redaction probe');
    const line = server
      .logs()
      .split('\n')
      .find((entry) => entry.includes('redaction probe'));
    expect(line).toBeDefined();
    for (const secret of [
      'cookie-secret-1',
      'auth-secret-2',
      'cookie-secret-3',
      'password-secret-4',
      'key-secret-5',
      'id-token-secret-6',
      'token-secret-7',
    ]) {
      expect(line).not.toContain(secret);
    }
    expect(line).toContain('[redacted]');
  });
});
