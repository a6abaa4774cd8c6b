import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { register, startServer, TestClient, type TestServer } from './harness.js';

let server: TestServer;
let client: TestClient;
let port: string;
let projectId: string;
let keyId: string;

beforeAll(async () => {
  server = await startServer();
  port = new URL(server.baseUrl).port;
  ({ client } = await register(server));
  projectId = (await client.get('/projects')).body.projects[0].id;
  const created = await client.post('/keys', { project_id: projectId, name: 'cross-cutting key' });
  expect(created.status).toBe(201);
  keyId = created.body.id;
});
afterAll(() => server.close());

const validationDetail = {
  detail: expect.arrayContaining([
    { loc: expect.any(Array), msg: expect.any(String), type: expect.any(String) },
  ]) as unknown,
};

describe('request bodies must be JSON', () => {
  it.each([
    ['POST', '/keys', 'text/plain', 'project_id=x&name=y'],
    ['POST', '/keys', 'application/x-www-form-urlencoded', 'project_id=x&name=y'],
    ['POST', '/vault/keys', 'text/plain', 'openai sk-live'],
    ['PATCH', '/keys/{key}', 'text/plain', '{"rate_limit_rpm": 10}'],
    ['PATCH', '/organization', 'application/x-www-form-urlencoded', 'name=Renamed'],
  ])('%s %s with %s answers 415 {"error"}', async (method, path, type, body) => {
    const before = await client.get('/activity');
    const answer = await client.call(method, path.replace('{key}', keyId), body, { 'content-type': type });
    expect(answer.status).toBe(415);
    expect(answer.body).toEqual({ error: expect.any(String) });
    // Nothing happened.
    expect((await client.get('/activity')).body).toEqual(before.body);
  });
});

describe('cross-site requests', () => {
  const own = () => `http://127.0.0.1:${port}`;

  it.each([
    ['a foreign origin', 'https://evil.example'],
    ['a foreign origin on the same port', `http://evil.example:${port}`],
    ['another loopback port', 'http://127.0.0.1:1'],
    ['Origin "null"', 'null'],
  ])('a state-changing request from %s answers 403 and changes nothing', async (_label, origin) => {
    const keysBefore = (await client.get('/keys')).body;
    const attempts = [
      await client.post('/keys', { project_id: projectId, name: 'cross-site' }, { origin }),
      await client.patch(`/keys/${keyId}`, { rate_limit_rpm: 7 }, { origin }),
      await client.delete(`/keys/${keyId}`, { origin }),
      await client.post('/auth/logout', undefined, { origin }),
    ];
    for (const answer of attempts) {
      expect(answer.status).toBe(403);
      expect(answer.body).toEqual({ error: expect.any(String) });
    }
    expect((await client.get('/keys')).body).toEqual(keysBefore);
    expect((await client.get('/auth/me')).status).toBe(200);
  });

  it("the same requests pass with the server's own origin or with no Origin", async () => {
    const variants: Record<string, string>[] = [{ origin: own() }, {}];
    for (const headers of variants) {
      const created = await client.post('/keys', { project_id: projectId, name: 'same-site' }, headers);
      expect(created.status).toBe(201);
      const patched = await client.patch(`/keys/${created.body.id}`, { rate_limit_rpm: 7 }, headers);
      expect(patched.status).toBe(200);
      expect(patched.body.rate_limit_rpm).toBe(7);
      expect((await client.delete(`/keys/${created.body.id}`, headers)).status).toBe(200);
    }
  });

  it('a read with a foreign Origin is not refused', async () => {
    expect((await client.get('/keys', { origin: 'https://evil.example' })).status).toBe(200);
  });
});

describe('DNS rebinding: Host must be a loopback name', () => {
  it.each(['evil.example', 'evil.example:{port}', '10.0.0.5:{port}', 'localhost.evil.example:{port}'])(
    'Host %s answers 403, GET included',
    async (host) => {
      const headers = { host: host.replace('{port}', port) };
      for (const answer of [
        await client.get('/keys', headers),
        await client.get('/openapi.json', headers),
        await client.post('/keys', { project_id: projectId, name: 'rebound' }, headers),
      ]) {
        expect(answer.status).toBe(403);
        expect(answer.body).toEqual({ error: expect.any(String) });
      }
    },
  );

  it.each(['localhost:{port}', '127.0.0.1:{port}', '[::1]:{port}', 'LOCALHOST:{port}'])(
    'Host %s passes',
    async (host) => {
      const answer = await client.get('/keys', { host: host.replace('{port}', port) });
      expect(answer.status).toBe(200);
      expect(answer.body.keys.length).toBeGreaterThan(0);
    },
  );
});

describe('Host checked on every request', () => {
  it('answers each by its own Host when loopback and foreign names alternate', async () => {
    const statuses = [];
    for (const host of [
      'localhost',
      'evil.example',
      'localhost',
      '127.0.0.1',
      'evil.example',
      'evil.example',
      '[::1]',
    ]) {
      statuses.push((await client.get('/keys', { host: `${host}:${port}` })).status);
    }
    expect(statuses).toEqual([200, 403, 200, 200, 403, 403, 200]);
  });
});

describe('validation and defaults', () => {
  it('malformed JSON answers 422 with the detail list', async () => {
    const answer = await client.post('/keys', '{"project_id": "x", name', {});
    expect(answer.status).toBe(422);
    expect(answer.body).toEqual(validationDetail);
    expect(answer.body.detail[0].loc[0]).toBe('body');
  });

  it('a JSON body with a charset parameter is accepted', async () => {
    const answer = await client.post('/keys', JSON.stringify({ project_id: projectId, name: 'charset' }), {
      'content-type': 'application/json; charset=utf-8',
    });
    expect(answer.status).toBe(201);
  });

  it('a value of the wrong type answers 422 naming the field', async () => {
    const answer = await client.post('/keys', { project_id: projectId, name: 'typed', credit_limit_cents: '5' });
    expect(answer.status).toBe(422);
    expect(answer.body).toEqual(validationDetail);
    expect(answer.body.detail[0].loc).toEqual(['body', 'credit_limit_cents']);
  });

  it('a missing required field names the field', async () => {
    const answer = await client.patch(`/keys/${keyId}`, { credit_limit_pkr: 5 });
    expect(answer.status).toBe(422);
    expect(answer.body).toEqual(validationDetail);
    expect(answer.body.detail[0].loc).toEqual(['body', 'rate_limit_rpm']);
  });

  it.each(['limit=abc', 'offset=-1', 'limit=0', 'offset=x'])(
    'GET /activity?%s answers 422 naming the query parameter',
    async (query) => {
      const answer = await client.get(`/activity?${query}`);
      expect(answer.status).toBe(422);
      expect(answer.body).toEqual(validationDetail);
      expect(answer.body.detail[0].loc).toEqual(['query', query.split('=')[0]]);
    },
  );

  it('a blank query parameter is treated as omitted', async () => {
    const blank = await client.get('/activity?limit=&offset=');
    expect(blank.status).toBe(200);
    expect(blank.body.limit).toBe(50);
    expect(blank.body.offset).toBe(0);
    expect(blank.body.events).toEqual((await client.get('/activity')).body.events);
  });

  it('limit above 200 is clamped', async () => {
    const answer = await client.get('/activity?limit=5000');
    expect(answer.status).toBe(200);
    expect(answer.body.limit).toBe(200);
  });

  it('an unknown route answers 404 {"error"}', async () => {
    for (const answer of [
      await client.get('/no-such-endpoint'),
      await client.post('/no-such-endpoint', {}),
      await new TestClient(server.baseUrl).get('/no-such-endpoint'),
      await new TestClient(server.baseUrl.replace(/\/api$/, '')).get('/keys'),
    ]) {
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual({ error: expect.any(String) });
    }
  });

  it('unknown body fields are ignored', async () => {
    const created = await client.post('/keys', {
      project_id: projectId,
      name: 'extra fields',
      rate_limit_rpm: 5,
      organization_id: randomUUID(),
      surprise: { nested: true },
    });
    expect(created.status).toBe(201);
    // rate_limit_rpm is not an input at creation: the key gets the default.
    expect(created.body.rate_limit_rpm).toBe(60);
    expect(created.body).not.toHaveProperty('surprise');
    const patched = await client.patch(`/keys/${created.body.id}`, { rate_limit_rpm: 30, colour: 'blue' });
    expect(patched.status).toBe(200);
    expect(patched.body.rate_limit_rpm).toBe(30);
  });

  it('an unauthenticated request with a bad body answers 401 before validation', async () => {
    const stranger = new TestClient(server.baseUrl);
    for (const answer of [
      await stranger.post('/keys', { name: 42 }),
      await stranger.post('/keys', '{not json', {}),
      await stranger.patch(`/keys/${keyId}`, { rate_limit_rpm: 'fast' }),
      await stranger.post('/vault/keys', 'plain text', { 'content-type': 'text/plain' }),
      await stranger.get('/activity?limit=abc'),
    ]) {
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual({ detail: 'Unauthorized' });
    }
  });
});

describe('OpenAPI document', () => {
  const PATHS = [
    '/auth/register',
    '/auth/login',
    '/auth/google',
    '/auth/refresh',
    '/auth/logout',
    '/auth/me',
    '/organization',
    '/members',
    '/projects',
    '/keys',
    '/keys/{key_id}',
    '/vault/keys',
    '/vault/keys/{provider}',
    '/activity',
    '/models',
    '/analytics/spend',
    '/analytics/top',
    '/analytics/compare',
  ];

  it('GET /api/openapi.json is an OpenAPI 3 document listing every endpoint', async () => {
    const answer = await new TestClient(server.baseUrl).get('/openapi.json');
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    const doc = answer.body;
    expect(doc.openapi).toMatch(/^3\./);
    expect(doc.info).toMatchObject({ title: expect.any(String), version: expect.any(String) });
    const serverPrefix = String(doc.servers?.[0]?.url ?? '').replace(/\/$/, '');
    const listed = Object.keys(doc.paths).map((path) => serverPrefix + path);
    for (const path of PATHS) expect(listed).toContain(`/api${path}`);
    const keyItem = doc.paths[Object.keys(doc.paths).find((p) => p.endsWith('/keys/{key_id}'))!];
    expect(Object.keys(keyItem)).toEqual(expect.arrayContaining(['patch', 'delete']));
  });
});

describe('the access log', () => {
  it('writes one line per answered request: its id, method, URL, status and time', async () => {
    const answer = await server.app.inject({ method: 'GET', url: '/api/models?probe=access-line' });
    expect(answer.statusCode).toBe(401);
    // Lines are written at the end of the turn that answered.
    await vi.waitFor(() => expect(server.logs()).toContain('access-line'));
    const lines = server
      .logs()
      .split('\n')
      .filter((entry) => entry.includes('access-line'))
      .map((entry) => JSON.parse(entry) as Record<string, unknown>);
    expect(lines).toEqual([
      expect.objectContaining({
        msg: 'request completed',
        reqId: expect.stringMatching(/^req-/),
        method: 'GET',
        url: '/api/models?probe=access-line',
        status: 401,
        ms: expect.any(Number),
      }),
    ]);
  });
});
