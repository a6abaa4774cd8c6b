import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importRow, ndjsonFile } from './request-rows.js';
import { addRoute, register, startServer, type TestClient, type TestServer, runOperator } from './harness.js';

const CEILING = 500;
const SECRET = /^sk_svc_[A-Za-z0-9]{32}$/;
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|\+00:00)$/;

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ rateLimitCeiling: CEILING });
});
afterAll(() => server.close());

const admin = (...args: string[]) => runOperator(server, ...args);

async function projectOf(client: TestClient): Promise<string> {
  const answer = await client.get('/projects');
  expect(answer.status).toBe(200);
  return answer.body.projects[0].id;
}

/** A fresh organisation with its owner's client and its Default project. */
async function freshOrg() {
  const account = await register(server);
  return { ...account, projectId: await projectOf(account.client) };
}

async function createKey(client: TestClient, projectId: string, extra: Record<string, unknown> = {}) {
  const answer = await client.post('/keys', { project_id: projectId, name: 'key', ...extra });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body;
}

/** Settles `costPkr` into the key's spend through the operator's request-log import. */
async function giveSpend(keyId: string, projectId: string, costPkr: number, at = new Date().toISOString()) {
  const row = importRow(keyId, projectId, { timestamp: at, financials: { cost_pkr: costPkr, is_byok: 0 } });
  await admin('import-requests', '--file', ndjsonFile(server.dataDir, [row]));
}

const futureSeconds = (days: number) => Math.floor(Date.now() / 1000) + days * 86_400;

describe('POST /keys', () => {
  it('answers 201 with the secret once, in the exact creation shape', async () => {
    const { client, projectId } = await freshOrg();
    const answer = await client.post('/keys', { project_id: projectId, name: '  ci deploy  ' });
    expect(answer.status).toBe(201);
    // The one answer that carries the secret is kept by no cache.
    expect(answer.headers['cache-control']).toBe('no-store');
    const key = answer.body;
    expect(Object.keys(key).sort()).toEqual(
      [
        'allowed_models',
        'api_key',
        'credit_limit_cents',
        'enforcement_status',
        'environment',
        'expires_at',
        'id',
        'key_prefix',
        'name',
        'project_id',
        'rate_limit_rpm',
      ].sort(),
    );
    expect(key.api_key).toMatch(SECRET);
    expect(key.key_prefix).toBe(key.api_key.slice(0, 15));
    expect(key.key_prefix).toMatch(/^sk_svc_[A-Za-z0-9]{8}$/);
    expect(key.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(key).toMatchObject({
      name: 'ci deploy',
      project_id: projectId,
      rate_limit_rpm: 60,
      expires_at: null,
      credit_limit_cents: null,
      allowed_models: null,
      environment: 'production',
      enforcement_status: { expires_at: 'enforced', credit_limit_cents: 'enforced', allowed_models: 'enforced' },
    });
  });

  it('keeps the given fields, merges duplicate models and reads an expiry without offset as UTC', async () => {
    const { client, projectId } = await freshOrg();
    const key = await createKey(client, projectId, {
      environment: 'testing',
      credit_limit_cents: 2_500_000,
      expires_at: '2099-01-02T03:04:05',
      allowed_models: ['openai/gpt-4o-mini', 'svc/auto', 'openai/gpt-4o-mini'],
    });
    expect(key.environment).toBe('testing');
    expect(key.credit_limit_cents).toBe(2_500_000);
    expect(key.expires_at).toMatch(ISO_UTC);
    expect(Date.parse(key.expires_at)).toBe(Date.UTC(2099, 0, 2, 3, 4, 5));
    expect(key.allowed_models).toEqual(['openai/gpt-4o-mini', 'svc/auto']);

    const withOffset = await createKey(client, projectId, { expires_at: '2099-01-02T08:04:05+05:00' });
    expect(Date.parse(withOffset.expires_at)).toBe(Date.UTC(2099, 0, 2, 3, 4, 5));

    const listed = (await client.get('/keys')).body.keys.find((k: any) => k.id === key.id);
    expect(listed.allowed_models).toEqual(['openai/gpt-4o-mini', 'svc/auto']);
    expect(Date.parse(listed.expires_at)).toBe(Date.UTC(2099, 0, 2, 3, 4, 5));
  });

  it('issues the key at the platform ceiling with use_platform_max_rate_limit', async () => {
    const { client, projectId } = await freshOrg();
    expect((await createKey(client, projectId, { use_platform_max_rate_limit: true })).rate_limit_rpm).toBe(CEILING);
    expect((await createKey(client, projectId, { use_platform_max_rate_limit: false })).rate_limit_rpm).toBe(60);
  });

  it('answers 404 for an unknown, foreign or malformed project id, all alike', async () => {
    const { client } = await freshOrg();
    const other = await freshOrg();
    const answers = await Promise.all(
      [randomUUID(), other.projectId, 'not-a-uuid', other.projectId.toUpperCase()].map((projectId) =>
        client.post('/keys', { project_id: projectId, name: 'x' }),
      ),
    );
    for (const answer of answers) {
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual(answers[0]!.body);
      expect(typeof answer.body.error).toBe('string');
    }
    expect((await client.get('/keys')).body.keys).toEqual([]);
    expect((await other.client.get('/keys')).body.keys).toEqual([]);
  });

  it('refuses an expiry in the past with 400 and a malformed one with 422', async () => {
    const { client, projectId } = await freshOrg();
    const past = await client.post('/keys', { project_id: projectId, name: 'x', expires_at: '2001-01-01T00:00:00Z' });
    expect(past.status).toBe(400);
    expect(past.body.error).toMatch(/expires_at/);

    for (const expires of ['tomorrow', '2026-02-30T00:00:00Z', '2099-13-01']) {
      const answer = await client.post('/keys', { project_id: projectId, name: 'x', expires_at: expires });
      expect(answer.status, expires).toBe(422);
      expect(answer.body.detail[0].loc).toEqual(['body', 'expires_at']);
    }
    expect((await client.get('/keys')).body.keys).toEqual([]);
  });

  it('refuses at creation an expiry past year 9999 once its offset is applied, without breaking the list', async () => {
    const { client, projectId } = await freshOrg();
    const answer = await client.post('/keys', {
      project_id: projectId,
      name: 'x',
      expires_at: '9999-12-31T23:59:59-05:00',
    });
    expect(answer.status).toBe(422);
    expect(answer.body.detail[0].loc).toEqual(['body', 'expires_at']);
    const listed = await client.get('/keys');
    expect(listed.status).toBe(200);
    expect(listed.body.keys).toEqual([]);
  });

  it('refuses an empty model list, and unknown or inactive models, naming them', async () => {
    const { client, projectId } = await freshOrg();
    const empty = await client.post('/keys', { project_id: projectId, name: 'x', allowed_models: [] });
    expect(empty.status).toBe(400);
    expect(typeof empty.body.error).toBe('string');

    const unknown = await client.post('/keys', {
      project_id: projectId,
      name: 'x',
      allowed_models: ['openai/gpt-4o', 'acme/nonexistent-9'],
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toContain('acme/nonexistent-9');
    expect(unknown.body.error).not.toContain('openai/gpt-4o,');

    const seededInactive = await client.post('/keys', {
      project_id: projectId,
      name: 'x',
      allowed_models: ['openai/gpt-3.5-turbo'],
    });
    expect(seededInactive.status).toBe(400);
    expect(seededInactive.body.error).toContain('openai/gpt-3.5-turbo');
    expect((await client.get('/keys')).body.keys).toEqual([]);
  });

  it('checks models against the routes document as it is at request time', async () => {
    const { client, projectId } = await freshOrg();
    await createKey(client, projectId, { allowed_models: ['deepseek/deepseek-chat'] });
    await admin('set-model', '--id', 'deepseek/deepseek-chat', '--active', 'false');
    const deactivated = await client.post('/keys', {
      project_id: projectId,
      name: 'x',
      allowed_models: ['deepseek/deepseek-chat'],
    });
    expect(deactivated.status).toBe(400);
    expect(deactivated.body.error).toContain('deepseek/deepseek-chat');

    const fresh = await client.post('/keys', { project_id: projectId, name: 'x', allowed_models: ['acme/brand-new'] });
    expect(fresh.status).toBe(400);
    await addRoute(server, 'acme/brand-new');
    await createKey(client, projectId, { allowed_models: ['acme/brand-new'] });
  });

  it('answers 422 for a blank or over-long name', async () => {
    const { client, projectId } = await freshOrg();
    for (const name of ['', '   ', 'x'.repeat(201), ' ' + 'y'.repeat(201) + ' ']) {
      const answer = await client.post('/keys', { project_id: projectId, name });
      expect(answer.status, JSON.stringify(name)).toBe(422);
      expect(answer.body.detail[0].loc).toEqual(['body', 'name']);
    }
    const longest = await createKey(client, projectId, { name: ' ' + 'z'.repeat(200) + ' ' });
    expect(longest.name).toBe('z'.repeat(200));
  });

  it('answers 422 for a credit limit that is not a positive integer', async () => {
    const { client, projectId } = await freshOrg();
    for (const limit of [0, -5, 1.5, '100']) {
      const answer = await client.post('/keys', { project_id: projectId, name: 'x', credit_limit_cents: limit });
      expect(answer.status, String(limit)).toBe(422);
      expect(answer.body.detail[0].loc).toEqual(['body', 'credit_limit_cents']);
    }
    expect((await client.get('/keys')).body.keys).toEqual([]);
  });

  it('answers 422 in the validation shape for wrong types and missing fields', async () => {
    const { client, projectId } = await freshOrg();
    const cases: [Record<string, unknown>, string][] = [
      [{ project_id: projectId, name: 5 }, 'name'],
      [{ project_id: 7, name: 'x' }, 'project_id'],
      [{ name: 'x' }, 'project_id'],
      [{ project_id: projectId }, 'name'],
      [{ project_id: projectId, name: 'x', environment: 'staging' }, 'environment'],
      [{ project_id: projectId, name: 'x', allowed_models: 'svc/auto' }, 'allowed_models'],
      [{ project_id: projectId, name: 'x', use_platform_max_rate_limit: 'yes' }, 'use_platform_max_rate_limit'],
      [{ project_id: projectId, name: 'x', expires_at: 4102444800 }, 'expires_at'],
    ];
    for (const [body, field] of cases) {
      const answer = await client.post('/keys', body);
      expect(answer.status, JSON.stringify(body)).toBe(422);
      expect(Object.keys(answer.body)).toEqual(['detail']);
      expect(answer.body.detail.length).toBeGreaterThan(0);
      const [issue] = answer.body.detail;
      expect(issue.loc).toEqual(['body', field]);
      expect(typeof issue.msg).toBe('string');
      expect(typeof issue.type).toBe('string');
    }
    const unknownField = await client.post('/keys', { project_id: projectId, name: 'x', colour: 'blue' });
    expect(unknownField.status).toBe(201);
  });
});

describe('GET /keys', () => {
  it('lists the organisation’s keys newest first, without any secret or hash', async () => {
    const { client, projectId } = await freshOrg();
    const first = await createKey(client, projectId, { name: 'first' });
    server.advance(1000);
    const second = await createKey(client, projectId, { name: 'second', environment: 'development' });
    server.advance(1000);
    const third = await createKey(client, projectId, { name: 'third' });

    const answer = await client.get('/keys');
    expect(answer.status).toBe(200);
    const keys = answer.body.keys;
    expect(keys.map((k: any) => k.name)).toEqual(['third', 'second', 'first']);
    for (const key of keys) {
      expect(Object.keys(key).sort()).toEqual(
        [
          'allowed_models',
          'created_at',
          'credit_limit_cents',
          'environment',
          'expires_at',
          'id',
          'key_prefix',
          'last_used_at',
          'name',
          'project_id',
          'rate_limit_rpm',
        ].sort(),
      );
      expect(key.created_at).toMatch(ISO_UTC);
      expect(key.last_used_at).toBeNull();
      expect(key.key_prefix).toMatch(/^sk_svc_[A-Za-z0-9]{8}$/);
    }
    expect(Date.parse(keys[0].created_at)).toBeGreaterThan(Date.parse(keys[1].created_at));
    expect(keys[1]).toMatchObject({ id: second.id, environment: 'development', rate_limit_rpm: 60 });
    const text = JSON.stringify(answer.body);
    for (const created of [first, second, third]) {
      expect(text).not.toContain(created.api_key);
      expect(text).not.toContain(created.api_key.slice(15));
    }
    expect(text).not.toMatch(/hash|secret|api_key/i);
  });

  it('shows last_used_at once the request log has a request of the key', async () => {
    const { client, projectId } = await freshOrg();
    const used = await createKey(client, projectId, { name: 'used' });
    const idle = await createKey(client, projectId, { name: 'idle' });
    const at = new Date(Date.now() - 60_000).toISOString();
    await giveSpend(used.id, projectId, 0.5, at);
    const keys = (await client.get('/keys')).body.keys;
    expect(keys.find((k: any) => k.id === used.id).last_used_at).toBe(at);
    expect(keys.find((k: any) => k.id === idle.id).last_used_at).toBeNull();
  });

  it('shows only the caller’s organisation and leaves revoked keys out', async () => {
    const mine = await freshOrg();
    const theirs = await freshOrg();
    const kept = await createKey(mine.client, mine.projectId, { name: 'kept' });
    const revoked = await createKey(mine.client, mine.projectId, { name: 'revoked' });
    await createKey(theirs.client, theirs.projectId, { name: 'theirs' });
    expect((await mine.client.delete(`/keys/${revoked.id}`)).status).toBe(200);
    const keys = (await mine.client.get('/keys')).body.keys;
    expect(keys.map((k: any) => k.id)).toEqual([kept.id]);
    expect((await theirs.client.get('/keys')).body.keys.map((k: any) => k.name)).toEqual(['theirs']);
  });
});

describe('PATCH /keys/{id}', () => {
  it('replaces the limits and answers the update shape in micro-PKR and ISO time', async () => {
    const { client, projectId, org } = await freshOrg();
    await admin('deposit', '--org', org, '--pkr', '1000');
    const key = await createKey(client, projectId);
    const expires = futureSeconds(30);
    const answer = await client.patch(`/keys/${key.id}`, {
      rate_limit_rpm: 120,
      credit_limit_pkr: 12.5,
      expires_at: expires,
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      id: key.id,
      key_prefix: key.key_prefix,
      rate_limit_rpm: 120,
      expires_at: new Date(expires * 1000).toISOString(),
      credit_limit_cents: 12_500_000,
    });
    const listed = (await client.get('/keys')).body.keys[0];
    expect(listed).toMatchObject({
      rate_limit_rpm: 120,
      credit_limit_cents: 12_500_000,
      expires_at: new Date(expires * 1000).toISOString(),
    });
  });

  it('is a full replace: an omitted, null or 0 credit limit or expiry clears it', async () => {
    const { client, projectId, org } = await freshOrg();
    await admin('deposit', '--org', org, '--pkr', '1000');
    const key = await createKey(client, projectId, {
      credit_limit_cents: 1_000_000,
      expires_at: '2099-01-01T00:00:00Z',
    });
    const set = { rate_limit_rpm: 30, credit_limit_pkr: 10, expires_at: futureSeconds(5) };
    const clearings = [
      { rate_limit_rpm: 30 },
      { rate_limit_rpm: 30, credit_limit_pkr: null, expires_at: null },
      { rate_limit_rpm: 30, credit_limit_pkr: 0, expires_at: 0 },
    ];
    for (const clearing of clearings) {
      expect((await client.patch(`/keys/${key.id}`, set)).body.credit_limit_cents).toBe(10_000_000);
      const answer = await client.patch(`/keys/${key.id}`, clearing);
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ rate_limit_rpm: 30, credit_limit_cents: null, expires_at: null });
      const listed = (await client.get('/keys')).body.keys[0];
      expect(listed).toMatchObject({ credit_limit_cents: null, expires_at: null, rate_limit_rpm: 30 });
    }
    // Only the expiry omitted: the credit limit is kept as sent, the expiry cleared.
    await client.patch(`/keys/${key.id}`, set);
    const partial = await client.patch(`/keys/${key.id}`, { rate_limit_rpm: 45, credit_limit_pkr: 3 });
    expect(partial.body).toMatchObject({ rate_limit_rpm: 45, credit_limit_cents: 3_000_000, expires_at: null });
  });

  it('converts PKR to micro-PKR by rounding to the nearest unit', async () => {
    const { client, projectId, org } = await freshOrg();
    await admin('deposit', '--org', org, '--pkr', '1000');
    const key = await createKey(client, projectId);
    const cases: [number, number][] = [
      [12.3456789, 12_345_679],
      [0.0000014, 1],
      [2.5000004, 2_500_000],
      [999.9999996, 1_000_000_000],
    ];
    for (const [pkr, micro] of cases) {
      const answer = await client.patch(`/keys/${key.id}`, { rate_limit_rpm: 60, credit_limit_pkr: pkr });
      expect(answer.status, String(pkr)).toBe(200);
      expect(answer.body.credit_limit_cents).toBe(micro);
    }
  });

  it('answers 400 for an expiry that is not strictly in the future', async () => {
    const { client, projectId } = await freshOrg();
    const key = await createKey(client, projectId);
    const now = Math.floor(Date.now() / 1000);
    for (const expires of [now - 3600, now, 1]) {
      const answer = await client.patch(`/keys/${key.id}`, { rate_limit_rpm: 60, expires_at: expires });
      expect(answer.status, String(expires)).toBe(400);
      expect(answer.body.error).toMatch(/expires_at/);
    }
    expect((await client.get('/keys')).body.keys[0].expires_at).toBeNull();
  });

  it('accepts the latest expiry a timestamp can show and refuses a later one without breaking the list', async () => {
    const { client, projectId } = await freshOrg();
    const key = await createKey(client, projectId);
    const latest = 253_402_300_799; // 9999-12-31T23:59:59Z
    const ok = await client.patch(`/keys/${key.id}`, { rate_limit_rpm: 60, expires_at: latest });
    expect(ok.status).toBe(200);
    expect(ok.body.expires_at).toBe('9999-12-31T23:59:59.000Z');
    for (const beyond of [latest + 1, 9_000_000_000_000]) {
      const answer = await client.patch(`/keys/${key.id}`, { rate_limit_rpm: 60, expires_at: beyond });
      expect(answer.status, String(beyond)).toBe(422);
      expect(answer.body.detail[0].loc).toEqual(['body', 'expires_at']);
    }
    const listed = await client.get('/keys');
    expect(listed.status).toBe(200);
    expect(listed.body.keys[0].expires_at).toBe('9999-12-31T23:59:59.000Z');
  });

  it('answers 400 naming both figures for a rate limit above the ceiling', async () => {
    const { client, projectId } = await freshOrg();
    const key = await createKey(client, projectId);
    const answer = await client.patch(`/keys/${key.id}`, { rate_limit_rpm: CEILING + 1 });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toContain(String(CEILING + 1));
    expect(answer.body.error).toContain(String(CEILING));
    expect((await client.patch(`/keys/${key.id}`, { rate_limit_rpm: CEILING })).status).toBe(200);
  });

  it('answers 422 for a missing, zero, string or fractional rate limit and a negative credit limit', async () => {
    const { client, projectId } = await freshOrg();
    const key = await createKey(client, projectId);
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'rate_limit_rpm'],
      [{ credit_limit_pkr: 5 }, 'rate_limit_rpm'],
      [{ rate_limit_rpm: 0 }, 'rate_limit_rpm'],
      [{ rate_limit_rpm: -1 }, 'rate_limit_rpm'],
      [{ rate_limit_rpm: '60' }, 'rate_limit_rpm'],
      [{ rate_limit_rpm: 1.5 }, 'rate_limit_rpm'],
      [{ rate_limit_rpm: 60, credit_limit_pkr: -1 }, 'credit_limit_pkr'],
      [{ rate_limit_rpm: 60, credit_limit_pkr: '5' }, 'credit_limit_pkr'],
      [{ rate_limit_rpm: 60, expires_at: '2099-01-01T00:00:00Z' }, 'expires_at'],
      [{ rate_limit_rpm: 60, expires_at: -1 }, 'expires_at'],
    ];
    for (const [body, field] of cases) {
      const answer = await client.patch(`/keys/${key.id}`, body);
      expect(answer.status, JSON.stringify(body)).toBe(422);
      expect(answer.body.detail[0].loc).toEqual(['body', field]);
      expect(typeof answer.body.detail[0].msg).toBe('string');
      expect(typeof answer.body.detail[0].type).toBe('string');
    }
    expect((await client.get('/keys')).body.keys[0].rate_limit_rpm).toBe(60);
  });

  it('refuses a limit below what the key has already spent, naming both figures', async () => {
    const { client, projectId, org } = await freshOrg();
    await admin('deposit', '--org', org, '--pkr', '1000');
    const key = await createKey(client, projectId);
    await giveSpend(key.id, projectId, 12.34);
    const below = await client.patch(`/keys/${key.id}`, { rate_limit_rpm: 60, credit_limit_pkr: 5 });
    expect(below.status).toBe(400);
    expect(below.body).toEqual({
      error: "credit limit 5.00 PKR is below this key's spend so far of 12.34 PKR",
    });
    const equal = await client.patch(`/keys/${key.id}`, { rate_limit_rpm: 60, credit_limit_pkr: 12.34 });
    expect(equal.status).toBe(200);
    expect(equal.body.credit_limit_cents).toBe(12_340_000);
    // Unlimited is always allowed, whatever the spend.
    expect((await client.patch(`/keys/${key.id}`, { rate_limit_rpm: 60 })).status).toBe(200);
  });

  it('refuses limits that together exceed the budget; revoked and unlimited keys count for nothing', async () => {
    const { client, projectId, org } = await freshOrg();
    await admin('deposit', '--org', org, '--pkr', '600');
    await admin('deposit', '--org', org, '--pkr', '400');
    const a = await createKey(client, projectId, { name: 'a' });
    const b = await createKey(client, projectId, { name: 'b' });
    await createKey(client, projectId, { name: 'unlimited' });
    expect((await client.patch(`/keys/${a.id}`, { rate_limit_rpm: 60, credit_limit_pkr: 600 })).status).toBe(200);

    const over = await client.patch(`/keys/${b.id}`, { rate_limit_rpm: 60, credit_limit_pkr: 900 });
    expect(over.status).toBe(400);
    expect(over.body).toEqual({
      error: 'credit limits would total 1500.00 PKR, above the organisation budget of 1000.00 PKR',
    });
    expect((await client.get('/keys')).body.keys.find((k: any) => k.id === b.id).credit_limit_cents).toBeNull();

    expect((await client.patch(`/keys/${b.id}`, { rate_limit_rpm: 60, credit_limit_pkr: 400 })).status).toBe(200);
    expect((await client.delete(`/keys/${a.id}`)).status).toBe(200);
    const after = await client.patch(`/keys/${b.id}`, { rate_limit_rpm: 60, credit_limit_pkr: 1000 });
    expect(after.status).toBe(200);
    expect(after.body.credit_limit_cents).toBe(1_000_000_000);
  });

  it('refuses any credit limit when the organisation has no budget', async () => {
    const { client, projectId } = await freshOrg();
    const key = await createKey(client, projectId);
    const answer = await client.patch(`/keys/${key.id}`, { rate_limit_rpm: 60, credit_limit_pkr: 1 });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe('credit limits would total 1.00 PKR, above the organisation budget of 0.00 PKR');
  });

  it('answers 404 for a foreign, unknown, malformed or revoked key, with one body', async () => {
    const mine = await freshOrg();
    const theirs = await freshOrg();
    const foreign = await createKey(theirs.client, theirs.projectId);
    const revoked = await createKey(mine.client, mine.projectId);
    expect((await mine.client.delete(`/keys/${revoked.id}`)).status).toBe(200);
    const bodies = [];
    for (const id of [foreign.id, randomUUID(), 'nope', revoked.id]) {
      const answer = await mine.client.patch(`/keys/${id}`, { rate_limit_rpm: 10 });
      expect(answer.status, id).toBe(404);
      bodies.push(answer.body);
    }
    expect(new Set(bodies.map((b) => JSON.stringify(b))).size).toBe(1);
    expect((await theirs.client.get('/keys')).body.keys[0].rate_limit_rpm).toBe(60);
  });

  it('serialises concurrent edits so the limits never exceed the budget', async () => {
    const { client, projectId, org } = await freshOrg();
    await admin('deposit', '--org', org, '--pkr', '1000');
    const keys = [];
    for (let i = 0; i < 30; i++) keys.push(await createKey(client, projectId, { name: `k${i}` }));
    const answers = await Promise.all(
      keys.map((key) => client.patch(`/keys/${key.id}`, { rate_limit_rpm: 60, credit_limit_pkr: 100 })),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    const won = answers.filter((a) => a.status === 200);
    const lost = answers.filter((a) => a.status === 400);
    expect(won.length + lost.length).toBe(30);
    expect(won.length).toBe(10);
    for (const answer of lost) expect(answer.body.error).toMatch(/above the organisation budget of 1000\.00 PKR/);

    const listed = (await client.get('/keys')).body.keys;
    const total = listed.reduce((sum: number, k: any) => sum + (k.credit_limit_cents ?? 0), 0);
    expect(total).toBe(1_000_000_000);
    expect(listed.filter((k: any) => k.credit_limit_cents !== null)).toHaveLength(10);
  });
});

describe('a refusal names the request field it concerns in x-error-field, beside the unchanged body', () => {
  it('for a refused key edit: over the budget, over the ceiling, expired, and an unknown key', async () => {
    const { client, projectId } = await freshOrg();
    const key = await createKey(client, projectId);
    const over = await client.patch(`/keys/${key.id}`, { rate_limit_rpm: 60, credit_limit_pkr: 1 });
    expect(over.status).toBe(400);
    expect(over.headers['x-error-field']).toBe('credit_limit_pkr');
    expect(over.body).toEqual({
      error: 'credit limits would total 1.00 PKR, above the organisation budget of 0.00 PKR',
    });
    const cases: [Record<string, unknown>, string][] = [
      [{ rate_limit_rpm: CEILING + 1 }, 'rate_limit_rpm'],
      [{ rate_limit_rpm: 60, expires_at: 1 }, 'expires_at'],
    ];
    for (const [body, field] of cases) {
      const answer = await client.patch(`/keys/${key.id}`, body);
      expect(answer.status, field).toBe(400);
      expect(answer.headers['x-error-field']).toBe(field);
      expect(Object.keys(answer.body)).toEqual(['error']);
    }
    for (const id of [randomUUID(), 'nope']) {
      const missing = await client.patch(`/keys/${id}`, { rate_limit_rpm: 60 });
      expect(missing.status).toBe(404);
      expect(missing.headers['x-error-field']).toBe('key_id');
      expect(missing.body).toEqual({ error: 'key not found' });
    }
  });

  it('for a refused key creation, and never on a 422 (its loc names the field) or a success', async () => {
    const { client, projectId } = await freshOrg();
    const cases: [Record<string, unknown>, string, number][] = [
      [{ project_id: randomUUID() }, 'project_id', 404],
      [{ project_id: 'nope' }, 'project_id', 404],
      [{ expires_at: '2001-01-01T00:00:00Z' }, 'expires_at', 400],
      [{ allowed_models: [] }, 'allowed_models', 400],
      [{ allowed_models: ['no/such-model'] }, 'allowed_models', 400],
    ];
    for (const [extra, field, status] of cases) {
      const answer = await client.post('/keys', { project_id: projectId, name: 'k', ...extra });
      expect(answer.status, JSON.stringify(extra)).toBe(status);
      expect(answer.headers['x-error-field'], JSON.stringify(extra)).toBe(field);
      expect(Object.keys(answer.body)).toEqual(['error']);
    }
    const invalid = await client.post('/keys', { project_id: projectId, name: '   ' });
    expect(invalid.status).toBe(422);
    expect(invalid.headers['x-error-field']).toBeUndefined();
    expect(invalid.body.detail[0].loc).toEqual(['body', 'name']);
    const created = await client.post('/keys', { project_id: projectId, name: 'k' });
    expect(created.status).toBe(201);
    expect(created.headers['x-error-field']).toBeUndefined();
  });
});

describe('DELETE /keys/{id}', () => {
  it('revokes once; the key is then gone from every key endpoint', async () => {
    const { client, projectId } = await freshOrg();
    const key = await createKey(client, projectId);
    const first = await client.delete(`/keys/${key.id}`);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ message: 'key revoked' });
    const second = await client.delete(`/keys/${key.id}`);
    expect(second.status).toBe(404);
    expect(typeof second.body.error).toBe('string');
    expect((await client.patch(`/keys/${key.id}`, { rate_limit_rpm: 60 })).status).toBe(404);
    expect((await client.get('/keys')).body.keys).toEqual([]);
  });

  it('answers a malformed id exactly like an unknown one, and never touches another organisation', async () => {
    const mine = await freshOrg();
    const theirs = await freshOrg();
    const foreign = await createKey(theirs.client, theirs.projectId);
    const random = await mine.client.delete(`/keys/${randomUUID()}`);
    const malformed = await mine.client.delete('/keys/not-a-key');
    const other = await mine.client.delete(`/keys/${foreign.id}`);
    expect([random.status, malformed.status, other.status]).toEqual([404, 404, 404]);
    expect(malformed.body).toEqual(random.body);
    expect(other.body).toEqual(random.body);
    expect((await theirs.client.get('/keys')).body.keys.map((k: any) => k.id)).toEqual([foreign.id]);
  });
});
