import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  PASSWORD,
  TestClient,
  controlSql,
  register,
  startServer,
  unique,
  type TestServer,
  runOperator,
} from './harness.js';

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|\+00:00)$/;

let server: TestServer;
beforeAll(async () => {
  // As behind a load balancer on the private network: its X-Forwarded-For is believed.
  server = await startServer({ trustedProxies: ['loopback', '10.0.0.0/8'] });
});
afterAll(() => server.close());

const admin = (...args: string[]) => runOperator(server, ...args);

async function activity(client: TestClient, query = '') {
  const answer = await client.get(`/activity${query}`);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body as {
    events: { actor: string | null; action: string; target: string; timestamp: string; source_ip: string }[];
    limit: number;
    offset: number;
  };
}

describe('GET /activity', () => {
  it('records every administrative action with actor, target and source, newest first', async () => {
    const owner = await register(server);
    const teammate = await register(server, { org: owner.org });
    const forwarded = { 'x-forwarded-for': '203.0.113.7, 10.0.0.1' };

    const laptop = new TestClient(server.baseUrl);
    const login = await laptop.post('/auth/login', { email: owner.email, password: PASSWORD }, forwarded);
    expect(login.status).toBe(200);

    const projectId = (await owner.client.get('/projects')).body.projects[0].id;
    const key = (await laptop.post('/keys', { project_id: projectId, name: 'ci' }, forwarded)).body;
    expect(key.api_key).toBeDefined();
    expect((await owner.client.patch(`/keys/${key.id}`, { rate_limit_rpm: 30 })).status).toBe(200);
    expect((await teammate.client.delete(`/keys/${key.id}`)).status).toBe(200);

    const providerSecret = 'sk-live-provider-secret-a1b2c3d4e5f6';
    const ipv6 = { 'x-forwarded-for': '2001:db8::1' };
    expect(
      (await teammate.client.post('/vault/keys', { provider: 'openai', api_key: providerSecret }, ipv6)).status,
    ).toBe(200);
    expect((await owner.client.delete('/vault/keys/openai')).status).toBe(200);

    const newName = unique('renamed').org;
    expect(
      (await owner.client.patch('/organization', { name: newName }, { 'x-forwarded-for': 'garbage, 1.2.3.4' })).status,
    ).toBe(200);
    await admin('deposit', '--org', newName, '--pkr', '250');
    expect((await teammate.client.post('/auth/logout')).status).toBe(200);

    const page = await activity(owner.client);
    expect(page.limit).toBe(50);
    expect(page.offset).toBe(0);
    const events = page.events;
    const lines = events.map((e) => [e.action, e.actor, e.target, e.source_ip]);
    expect(lines).toEqual([
      ['user.logout', teammate.email, '', '127.0.0.1'],
      ['budget.deposited', null, '', expect.any(String)],
      ['org.renamed', owner.email, newName, '1.2.3.4'],
      ['vault_key.revoked', owner.email, 'openai', '127.0.0.1'],
      ['vault_key.set', teammate.email, 'openai', '2001:db8::1'],
      ['api_key.revoked', teammate.email, key.key_prefix, '127.0.0.1'],
      ['api_key.updated', owner.email, key.key_prefix, '127.0.0.1'],
      ['api_key.created', owner.email, key.key_prefix, '203.0.113.7'],
      ['user.login', owner.email, '', '203.0.113.7'],
      ['member.joined', teammate.email, teammate.email, '127.0.0.1'],
      ['member.joined', owner.email, owner.email, '127.0.0.1'],
    ]);
    for (const event of events) {
      expect(Object.keys(event).sort()).toEqual(['action', 'actor', 'source_ip', 'target', 'timestamp']);
      expect(event.timestamp).toMatch(ISO_UTC);
    }
    const times = events.map((e) => Date.parse(e.timestamp));
    expect([...times].sort((a, b) => b - a)).toEqual(times);

    // Any member of the organisation reads the same trail.
    const joiner = await register(server, { org: newName });
    const seenByJoiner = (await activity(joiner.client)).events;
    expect(seenByJoiner[0]).toMatchObject({ action: 'member.joined', actor: joiner.email, target: joiner.email });
    expect(seenByJoiner.slice(1)).toEqual(events);

    // No secret ever reaches the trail.
    const text = JSON.stringify(seenByJoiner);
    expect(text).not.toContain(key.api_key);
    expect(text).not.toContain(key.api_key.slice(15));
    expect(text).not.toContain(providerSecret);
    expect(text).not.toContain(PASSWORD);
  });

  it('never shows one organisation’s events to another', async () => {
    const busy = await register(server);
    const projectId = (await busy.client.get('/projects')).body.projects[0].id;
    await busy.client.post('/keys', { project_id: projectId, name: 'k' });
    await busy.client.post('/vault/keys', { provider: 'google', api_key: 'AIza-secret-value-9876' });
    await admin('deposit', '--org', busy.org, '--pkr', '10');

    const quiet = await register(server);
    const events = (await activity(quiet.client)).events;
    expect(events).toEqual([
      {
        actor: quiet.email,
        action: 'member.joined',
        target: quiet.email,
        timestamp: expect.stringMatching(ISO_UTC),
        source_ip: '127.0.0.1',
      },
    ]);
    expect((await activity(busy.client)).events).toHaveLength(4);
  });

  it('pages with limit and offset: default 50, clamped to 200, a short page is the last', async () => {
    const { client } = await register(server);
    for (let i = 0; i < 64; i++) {
      const answer = await client.post('/vault/keys', { provider: `p${i}`, api_key: `provider-key-${i}-xyz` });
      expect(answer.status).toBe(200);
    }
    // 64 vault_key.set events and member.joined.
    const first = await activity(client);
    expect(first.limit).toBe(50);
    expect(first.offset).toBe(0);
    expect(first.events).toHaveLength(50);
    expect(first.events[0]!.target).toBe('p63');

    const all = await activity(client, '?limit=500');
    expect(all.limit).toBe(200);
    expect(all.events).toHaveLength(65);
    expect(all.events.at(-1)!.action).toBe('member.joined');
    expect(all.events.slice(0, 50)).toEqual(first.events);

    const blank = await activity(client, '?limit=&offset=');
    expect(blank.limit).toBe(50);
    expect(blank.offset).toBe(0);

    const pageOne = await activity(client, '?limit=20&offset=0');
    const pageTwo = await activity(client, '?limit=20&offset=20');
    expect(pageTwo.offset).toBe(20);
    expect([...pageOne.events, ...pageTwo.events]).toEqual(all.events.slice(0, 40));
    const last = await activity(client, '?limit=20&offset=60');
    expect(last.events).toEqual(all.events.slice(60));
    expect(last.events.length).toBeLessThan(20);
    expect((await activity(client, '?offset=65')).events).toEqual([]);
    expect((await activity(client, '?limit=200')).events).toHaveLength(65);
    expect((await activity(client, '?limit=100000000000000000000')).limit).toBe(200);
  });

  it('answers 422 for a limit below 1, a negative offset or a non-number', async () => {
    const { client } = await register(server);
    const cases: [string, string][] = [
      ['?limit=0', 'limit'],
      ['?limit=-3', 'limit'],
      ['?limit=abc', 'limit'],
      ['?limit=1.5', 'limit'],
      ['?offset=-1', 'offset'],
      ['?offset=x', 'offset'],
      ['?offset=100000000000000000000', 'offset'],
    ];
    for (const [query, field] of cases) {
      const answer = await client.get(`/activity${query}`);
      expect(answer.status, query).toBe(422);
      expect(answer.body.detail[0].loc).toEqual(['query', field]);
      expect(typeof answer.body.detail[0].msg).toBe('string');
    }
  });

  it('needs a session', async () => {
    const anonymous = new TestClient(server.baseUrl);
    const answer = await anonymous.get('/activity');
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual({ detail: 'Unauthorized' });
  });
});

describe('the activity table', () => {
  it('refuses UPDATE and DELETE even from a direct database connection', async () => {
    const { client } = await register(server);
    const before = await activity(client);
    const count = async (where = '') =>
      (await controlSql<{ n: number }>(server, `SELECT COUNT(*) AS n FROM activity ${where}`))[0]!.n;
    const rows = await count();
    expect(rows).toBeGreaterThan(0);
    for (const statement of [
      "UPDATE activity SET target = 'tampered'",
      "UPDATE activity SET actor_id = NULL WHERE action = 'member.joined'",
      'DELETE FROM activity',
      'DELETE FROM activity WHERE id = (SELECT MAX(id) FROM activity)',
    ]) {
      await expect(controlSql(server, statement)).rejects.toThrow(/append-only/);
    }
    expect(await count()).toBe(rows);
    expect(await count("WHERE target = 'tampered'")).toBe(0);
    expect(await activity(client)).toEqual(before);
  });
});
