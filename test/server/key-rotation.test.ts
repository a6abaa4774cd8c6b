import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addRoute,
  controlSql,
  register,
  registerOrg,
  runOperator,
  startServer,
  type TestClient,
  type TestServer,
} from './harness.js';

const SECRET = /^sk_svc_[A-Za-z0-9]{32}$/;

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

async function createKey(client: TestClient, projectId: string, extra: Record<string, unknown> = {}) {
  const answer = await client.post('/keys', { project_id: projectId, name: 'billing worker', ...extra });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body;
}

/** Settles spend into a key as the gateway's rows do (see Admissions), without going through one. */
const settle = (keyId: string, micro: number) => server.app.control.write((tx) => tx.keys.settle(keyId, micro));

const listed = async (client: TestClient) => (await client.get('/keys')).body.keys as Record<string, unknown>[];
const activity = async (client: TestClient) =>
  (await client.get('/activity?limit=200')).body.events as { action: string; target: string }[];

describe('POST /keys/{id}/rotate', () => {
  it('issues a replacement with the same project, environment, model scope and limits, and a new secret once', async () => {
    const { client, org, projectId } = await registerOrg(server);
    await runOperator(server, 'deposit', '--org', org, '--pkr', '1000');
    const old = await createKey(client, projectId, {
      environment: 'development',
      allowed_models: ['openai/gpt-4o-mini'],
      credit_limit_cents: 250_000_000,
      expires_at: '2099-01-01T00:00:00Z',
    });
    // A rate limit set since creation is carried over too.
    expect(
      (await client.patch(`/keys/${old.id}`, { rate_limit_rpm: 120, credit_limit_pkr: 250, expires_at: 4_070_908_800 }))
        .status,
    ).toBe(200);

    const answer = await client.post(`/keys/${old.id}/rotate`);
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    expect(answer.headers['cache-control']).toBe('no-store');
    const rotated = answer.body;
    expect(rotated).toMatchObject({
      name: 'billing worker',
      project_id: projectId,
      environment: 'development',
      allowed_models: ['openai/gpt-4o-mini'],
      rate_limit_rpm: 120,
      credit_limit_cents: 250_000_000,
      expires_at: '2099-01-01T00:00:00.000Z',
      replaces: { id: old.id, key_prefix: old.key_prefix },
    });
    expect(rotated.api_key).toMatch(SECRET);
    expect(rotated.api_key).not.toBe(old.api_key);
    expect(rotated.id).not.toBe(old.id);
    expect(rotated.key_prefix).toBe(rotated.api_key.slice(0, 15));

    // Both keys stay active until the admin revokes the old one.
    const keys = await listed(client);
    expect(keys.map((k) => k.id).sort()).toEqual([old.id, rotated.id].sort());
    const events = await activity(client);
    // The replacement's creation, then the rotation itself on the old key (issue 27).
    expect(events[0]).toMatchObject({ action: 'api_key.rotated', target: old.key_prefix });
    expect(events[1]).toMatchObject({ action: 'api_key.created', target: rotated.key_prefix });
    // The secret is nowhere but in that answer: not in the control store (only its hash is kept),
    // neither its rows nor, on SQLite, its files; not in the server's log.
    const stored = await controlSql<Record<string, unknown>>(server, 'SELECT * FROM api_keys');
    expect(stored.length).toBeGreaterThan(0);
    for (const row of stored) {
      for (const value of Object.values(row)) {
        const text = Buffer.isBuffer(value) ? value.toString('latin1') : String(value);
        expect(text).not.toContain(rotated.api_key);
      }
    }
    for (const file of ['control.db', 'control.db-wal']) {
      const path = join(server.dataDir, file);
      if (existsSync(path)) expect(readFileSync(path).includes(rotated.api_key), file).toBe(false);
    }
    expect(server.logs()).toContain(`/keys/${old.id}/rotate`);
    expect(server.logs()).not.toContain(rotated.api_key);
  });

  it('carries over what the old key has left of its credit limit, a lifetime cap: the replacement starts with nothing spent', async () => {
    const { client, org, projectId } = await registerOrg(server);
    await runOperator(server, 'deposit', '--org', org, '--pkr', '1000');
    const old = await createKey(client, projectId, { credit_limit_cents: 100_000_000 });
    await settle(old.id, 99_250_000);

    const answer = await client.post(`/keys/${old.id}/rotate`);
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    // 100 PKR less 99.25 spent: 0.75 PKR left, not a fresh 100.
    expect(answer.body.credit_limit_cents).toBe(750_000);
    expect((await listed(client)).find((k) => k.id === answer.body.id)).toMatchObject({ credit_limit_cents: 750_000 });
  });

  it('refuses to replace a key that has spent its whole credit limit, saying how to go on, and changes nothing', async () => {
    const { client, org, projectId } = await registerOrg(server);
    await runOperator(server, 'deposit', '--org', org, '--pkr', '1000');
    const old = await createKey(client, projectId, { credit_limit_cents: 10_000_000 });
    await settle(old.id, 10_000_000);
    const before = await activity(client);

    const answer = await client.post(`/keys/${old.id}/rotate`);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe(
      'this key has spent 10.00 PKR of its 10.00 PKR credit limit, so a replacement would have nothing left to ' +
        'spend: raise its credit limit first (Edit), then rotate',
    );
    expect(answer.headers['x-error-field']).toBe('credit_limit_pkr');
    expect(await listed(client)).toHaveLength(1);
    expect(await activity(client)).toEqual(before);
  });

  it('refuses a replacement whose model scope names a model retired since, saying how to go on', async () => {
    const { client, projectId } = await registerOrg(server);
    const model = `openai/retiring-${randomUUID().slice(0, 8)}`;
    await addRoute(server, model);
    const old = await createKey(client, projectId, { allowed_models: [model, 'openai/gpt-4o-mini'] });
    await runOperator(server, 'set-model', '--id', model, '--active', 'false');

    const answer = await client.post(`/keys/${old.id}/rotate`);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe(
      `unknown or inactive model in allowed_models: ${model}: a replacement keeps the old key’s model scope, ` +
        'so create a new key with the models still offered instead',
    );
    expect((await listed(client)).map((k) => k.id)).toEqual([old.id]);
  });

  it('refuses a replacement whose credit limit the budget cannot hold beside the old key, saying what to do, and changes nothing', async () => {
    const { client, org, projectId } = await registerOrg(server);
    await runOperator(server, 'deposit', '--org', org, '--pkr', '1000');
    const old = await createKey(client, projectId, { credit_limit_cents: 600_000_000 });
    const before = await activity(client);

    const answer = await client.post(`/keys/${old.id}/rotate`);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe(
      'credit limits would total 1200.00 PKR, above the organisation budget of 1000.00 PKR while the old key is ' +
        'still active: deposit more credit or lower another key’s credit limit, then rotate again',
    );
    expect((await listed(client)).map((k) => k.id)).toEqual([old.id]);
    expect(await activity(client)).toEqual(before);

    // With room in the budget the same rotation goes through.
    await runOperator(server, 'deposit', '--org', org, '--pkr', '200');
    expect((await client.post(`/keys/${old.id}/rotate`)).status).toBe(201);
  });

  it('refuses to replace an expired key, which would expire at once', async () => {
    const { client, projectId } = await registerOrg(server);
    const old = await createKey(client, projectId, { expires_at: new Date(Date.now() + 60_000).toISOString() });
    server.advance(120_000);
    try {
      const answer = await client.post(`/keys/${old.id}/rotate`);
      expect(answer.status).toBe(400);
      expect(answer.body.error).toMatch(/^this key expired on .*set a later expiry on it first/);
      expect(await listed(client)).toHaveLength(1);
    } finally {
      server.advance(-120_000);
    }
  });

  it("answers 404 for another organisation's key, an unknown, malformed or revoked one", async () => {
    const { client, projectId } = await registerOrg(server);
    const key = await createKey(client, projectId);
    const stranger = await register(server);
    expect((await stranger.client.post(`/keys/${key.id}/rotate`)).status).toBe(404);
    expect((await client.post(`/keys/${randomUUID()}/rotate`)).status).toBe(404);
    expect((await client.post('/keys/nope/rotate')).status).toBe(404);
    expect((await client.delete(`/keys/${key.id}`)).status).toBe(200);
    const revoked = await client.post(`/keys/${key.id}/rotate`);
    expect(revoked.status).toBe(404);
    expect(revoked.body).toEqual({ error: 'key not found' });
    expect(await listed(client)).toHaveLength(0);
  });
});
