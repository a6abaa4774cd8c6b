import { exportJWK, generateKeyPair } from 'jose';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../server/config.js';
import { configFromArgs } from '../../server/serve.js';
import { DEFAULT_THROTTLE, type ThrottleLimits } from '../../server/security/sign-in-throttle.js';
import { PASSWORD, TestClient, register, startServer, unique, type Answer, type TestServer } from './harness.js';

/** Every test server here believes X-Forwarded-For from loopback, so one test can play many addresses. */
const from = (address: string) => ({ 'x-forwarded-for': address });
let addressCount = 0;
const anotherAddress = () => from(`198.51.100.${++addressCount}`);

function startThrottled(limits: Partial<ThrottleLimits>, extra: Parameters<typeof startServer>[0] = {}) {
  return startServer({
    trustedProxies: ['loopback'],
    throttle: { ...DEFAULT_THROTTLE, addressFailures: 1000, addressRegistrations: 1000, ...limits },
    ...extra,
  });
}

function login(server: TestServer, email: string, password: string, headers: Record<string, string>) {
  return new TestClient(server.baseUrl).post('/auth/login', { email, password }, headers);
}

function expectThrottled(answer: Answer, seconds: number): void {
  expect(answer.status, JSON.stringify(answer.body)).toBe(429);
  expect(answer.headers['retry-after']).toBe(String(seconds));
  expect(Object.keys(answer.body)).toEqual(['error']);
  expect(answer.body.error).toContain(`try again in ${seconds} second`);
}

describe('sign-in throttling per account', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startThrottled({ accountFailures: 3 });
  });
  afterAll(() => server.close());

  it('refuses the attempt after N failures from several addresses, with delays that grow, and lets the owner in once a delay is over', async () => {
    const { email } = await register(server);
    for (let i = 0; i < 3; i++)
      expect((await login(server, email, 'wrong password!', anotherAddress())).status).toBe(401);

    // The right password from a fourth address waits too: the count is the account's.
    expectThrottled(await login(server, email, PASSWORD, anotherAddress()), 1);
    server.advance(1000);
    expect((await login(server, email, 'wrong again!!', anotherAddress())).status).toBe(401);
    expectThrottled(await login(server, email, PASSWORD, anotherAddress()), 2);
    // Attempts refused while waiting are not counted: they do not lengthen the wait.
    for (let i = 0; i < 5; i++) expect((await login(server, email, 'guess!!!', anotherAddress())).status).toBe(429);
    server.advance(2000);
    expect((await login(server, email, PASSWORD, anotherAddress())).status).toBe(200);

    // A successful sign-in clears the account's count.
    expect((await login(server, email, 'one typo!', anotherAddress())).status).toBe(401);
    expect((await login(server, email, PASSWORD, anotherAddress())).status).toBe(200);
  });

  it('holds attempts sent side by side: no more than N of them are checked', async () => {
    const { email } = await register(server);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => login(server, email, 'parallel guess!', anotherAddress())),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 401)).toHaveLength(3);
    expect(statuses.filter((status) => status === 429)).toHaveLength(17);
  });

  it('counts an email in any case as the same account', async () => {
    const { email } = await register(server);
    for (const variant of [email, email.toUpperCase(), ` ${email} `]) {
      expect((await login(server, variant, 'wrong password!', anotherAddress())).status).toBe(401);
    }
    expectThrottled(await login(server, email.toUpperCase(), PASSWORD, anotherAddress()), 1);
  });

  it('throttles an unknown email exactly as a known one, so a 429 tells nothing about who exists', async () => {
    const nobody = unique().email;
    for (let i = 0; i < 3; i++)
      expect((await login(server, nobody, 'wrong password!', anotherAddress())).status).toBe(401);
    expectThrottled(await login(server, nobody, 'wrong password!', anotherAddress()), 1);
  });

  it('logs failures and refusals at warn with the account and the address, never the password', async () => {
    const { email } = await register(server);
    const secret = 'my-secret-guess-7731';
    for (let i = 0; i < 4; i++) await login(server, email, secret, from('192.0.2.77'));
    const lines = server
      .logs()
      .split('\n')
      .filter((line) => line.includes(email))
      .map((line) => JSON.parse(line) as { level: number; msg: string; account: string; address: string });
    expect(lines.filter((line) => line.msg === 'sign-in failed')).toHaveLength(3);
    expect(lines.find((line) => line.msg.startsWith('throttled'))).toMatchObject({
      level: 40,
      account: email,
      address: '192.0.2.77',
    });
    for (const line of lines) expect(line.level).toBe(40);
    expect(server.logs()).not.toContain(secret);
  });
});

describe('throttling per client address', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startThrottled({ accountFailures: 100, addressFailures: 4, addressRegistrations: 3 });
  });
  afterAll(() => server.close());

  it('slows one address guessing across many accounts, and only that address', async () => {
    const sprayer = from('203.0.113.50');
    for (let i = 0; i < 4; i++) {
      expect((await login(server, unique().email, 'Summer2026!', sprayer)).status).toBe(401);
    }
    expectThrottled(await login(server, unique().email, 'Summer2026!', sprayer), 1);
    expect((await login(server, unique().email, 'Summer2026!', from('203.0.113.51'))).status).toBe(401);
  });

  it("does not forget an address's failures when it signs in to an account of its own", async () => {
    const sprayer = from('203.0.113.55');
    const own = await register(server);
    for (let i = 0; i < 3; i++) expect((await login(server, unique().email, 'Winter2026!', sprayer)).status).toBe(401);
    expect((await login(server, own.email, PASSWORD, sprayer)).status).toBe(200);
    expect((await login(server, unique().email, 'Winter2026!', sprayer)).status).toBe(401);
    expectThrottled(await login(server, unique().email, 'Winter2026!', sprayer), 1);
  });

  it('slows a flood of registrations from one address, creating nothing while it waits', async () => {
    const flood = from('203.0.113.60');
    const attempt = (email: string, headers: Record<string, string>) =>
      new TestClient(server.baseUrl).post(
        '/auth/register',
        { email, password: PASSWORD, organization_name: unique().org },
        headers,
      );
    for (let i = 0; i < 3; i++) expect((await attempt(unique().email, flood)).status).toBe(201);
    const refused = unique().email;
    const answer = await attempt(refused, flood);
    expect(answer.status).toBe(429);
    expect(answer.headers['retry-after']).toBe('1');
    expect(answer.body.error).toBe('too many registrations from this address: try again in 1 second');
    // Nothing was made: the same email registers from elsewhere.
    expect((await attempt(refused, from('203.0.113.61'))).status).toBe(201);
    server.advance(1000);
    expect((await attempt(unique().email, flood)).status).toBe(201);
  });

  it('slows refreshes with made-up tokens from one address', async () => {
    const client = new TestClient(server.baseUrl);
    const bogus = { ...from('203.0.113.70'), cookie: 'svc_refresh_token=made-up-token' };
    for (let i = 0; i < 4; i++) expect((await client.post('/auth/refresh', undefined, bogus)).status).toBe(401);
    expectThrottled(await client.post('/auth/refresh', undefined, bogus), 1);
  });
});

describe('external identity sign-in throttling', () => {
  let server: TestServer;
  beforeAll(async () => {
    const { publicKey } = await generateKeyPair('RS256');
    const dir = mkdtempSync(join(tmpdir(), 'gc-jwks-'));
    writeFileSync(join(dir, 'jwks.json'), JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1' }] }));
    server = await startThrottled(
      { addressFailures: 2 },
      { oidc: { issuer: 'https://id.example.test', clientId: 'console', jwks: join(dir, 'jwks.json') } },
    );
  });
  afterAll(() => server.close());

  it('refuses an address that keeps sending tokens that do not verify', async () => {
    const client = new TestClient(server.baseUrl);
    const attempt = () => client.post('/auth/google', { id_token: 'not.a.token' }, from('203.0.113.80'));
    expect((await attempt()).status).toBe(401);
    expect((await attempt()).status).toBe(401);
    expectThrottled(await attempt(), 1);
  });
});

describe('throttling settings', () => {
  it('are read from the environment, and refuse what is not a positive integer', () => {
    const input = configFromArgs([], {
      SVC_SIGNIN_ACCOUNT_FAILURES: '7',
      SVC_SIGNIN_ADDRESS_FAILURES: '40',
      SVC_REGISTRATIONS_PER_ADDRESS: '9',
      SVC_THROTTLE_WINDOW_SECONDS: '600',
      SVC_THROTTLE_MAX_DELAY_SECONDS: '120',
    });
    expect(input.throttle).toEqual({
      accountFailures: 7,
      addressFailures: 40,
      addressRegistrations: 9,
      windowSeconds: 600,
      maxDelaySeconds: 120,
    });
    expect(configFromArgs([], {}).throttle).toEqual(DEFAULT_THROTTLE);
    expect(() => configFromArgs([], { SVC_SIGNIN_ACCOUNT_FAILURES: 'five' })).toThrow(
      'SVC_SIGNIN_ACCOUNT_FAILURES must be a positive integer',
    );
  });

  it('cap the delay at the ceiling and forget counts after the window', async () => {
    const server = await startThrottled({ accountFailures: 1, maxDelaySeconds: 4, windowSeconds: 60 });
    try {
      const { email } = await register(server);
      const delays: string[] = [];
      for (let i = 0; i < 5; i++) {
        expect((await login(server, email, 'wrong password!', anotherAddress())).status).toBe(401);
        const refused = await login(server, email, PASSWORD, anotherAddress());
        delays.push(String(refused.headers['retry-after']));
        server.advance(Number(refused.headers['retry-after']) * 1000);
      }
      expect(delays).toEqual(['1', '2', '4', '4', '4']);
      server.advance(60_001);
      expect((await login(server, email, 'wrong password!', anotherAddress())).status).toBe(401);
      expect((await login(server, email, PASSWORD, anotherAddress())).headers['retry-after']).toBe('1');
    } finally {
      await server.close();
    }
  });
});

describe('X-Forwarded-For', () => {
  it('is ignored unless it comes from a trusted proxy: the socket address is the caller', async () => {
    const server = await startServer();
    try {
      const owner = await register(server);
      await login(server, owner.email, PASSWORD, from('203.0.113.9'));
      const events = (await owner.client.get('/activity')).body.events as { action: string; source_ip: string }[];
      expect(events.find((event) => event.action === 'user.login')?.source_ip).toBe('127.0.0.1');
    } finally {
      await server.close();
    }
  });

  it('is walked from the socket back through trusted proxies only', async () => {
    const server = await startServer({ trustedProxies: ['loopback', '10.0.0.0/8'] });
    try {
      const owner = await register(server);
      // The client forged the first entry; the first untrusted hop from the right is the caller.
      await login(server, owner.email, PASSWORD, from('1.1.1.1, 203.0.113.9, 10.1.2.3'));
      const events = (await owner.client.get('/activity')).body.events as { action: string; source_ip: string }[];
      expect(events.find((event) => event.action === 'user.login')?.source_ip).toBe('203.0.113.9');
    } finally {
      await server.close();
    }
  });

  it('refuses a trusted-proxy entry that is not an address, a range or a known name', () => {
    const at = (entry: string) => () => resolveConfig({ dataDir: tmpdir(), trustedProxies: [entry] });
    for (const entry of ['10.0.0.0/33', 'proxy.example', '10.0.0.1/8/2', '::1/129']) {
      expect(at(entry), entry).toThrow('SVC_TRUSTED_PROXIES');
    }
    for (const entry of ['loopback', 'uniquelocal', '10.0.0.0/8', '2001:db8::/32', '192.0.2.1']) {
      expect(at(entry), entry).not.toThrow();
    }
    expect(configFromArgs([], { SVC_TRUSTED_PROXIES: 'loopback, 10.0.0.0/8' }).trustedProxies).toEqual([
      'loopback',
      '10.0.0.0/8',
    ]);
  });
});
