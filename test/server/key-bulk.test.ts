import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { register, registerOrg, runOperator, startServer, type TestClient, type TestServer } from './harness.js';

const CEILING = 500;

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ rateLimitCeiling: CEILING });
});
afterAll(() => server.close());

async function createKeys(client: TestClient, projectId: string, names: string[], extra: Record<string, unknown> = {}) {
  const keys: { id: string; key_prefix: string; name: string; api_key: string }[] = [];
  for (const name of names) {
    const answer = await client.post('/keys', { project_id: projectId, name, ...extra });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    keys.push(answer.body);
  }
  return keys;
}

/** Whether the gateway would take a request of this secret now, as it asks the control plane. */
const admit = async (secret: string) =>
  (
    await server.app.admissions.admit({
      reqId: `req_${randomUUID()}`,
      secret,
      model: 'openai/gpt-4o-mini',
      boundCharacters: 10,
      maxGenerated: 10,
      timeoutMs: 1000,
    })
  ).kind;

const listed = async (client: TestClient) =>
  new Map(((await client.get('/keys')).body.keys as { id: string }[]).map((k) => [k.id, k as Record<string, unknown>]));
const actions = async (client: TestClient) =>
  ((await client.get('/activity?limit=200')).body.events as { action: string; target: string }[]).map(
    (e) => `${e.action} ${e.target}`,
  );

describe('POST /keys/bulk: changing limits', () => {
  it('reports per key in a dry run what applying would do, budget refusals included, and changes nothing; applying then does exactly that', async () => {
    const { client, org, projectId } = await registerOrg(server);
    await runOperator(server, 'deposit', '--org', org, '--pkr', '1000');
    const [a, b, c] = await createKeys(client, projectId, ['alpha', 'beta', 'gamma']);
    const body = { action: 'update_limits', key_ids: [a!.id, b!.id, c!.id], limits: { credit_limit_pkr: 400 } };
    const keysBefore = await listed(client);
    const activityBefore = await actions(client);

    const dry = await client.post('/keys/bulk', { ...body, dry_run: true });
    expect(dry.status, JSON.stringify(dry.body)).toBe(200);
    const unlimited = { rate_limit_rpm: 60, credit_limit_cents: null, expires_at: null };
    const limited = { rate_limit_rpm: 60, credit_limit_cents: 400_000_000, expires_at: null };
    const expected = [
      {
        id: a!.id,
        name: 'alpha',
        key_prefix: a!.key_prefix,
        outcome: 'ok',
        message: null,
        before: unlimited,
        after: limited,
      },
      {
        id: b!.id,
        name: 'beta',
        key_prefix: b!.key_prefix,
        outcome: 'ok',
        message: null,
        before: unlimited,
        after: limited,
      },
      // The third sees the budget as the first two would leave it.
      {
        id: c!.id,
        name: 'gamma',
        key_prefix: c!.key_prefix,
        outcome: 'refused',
        message: 'credit limits would total 1200.00 PKR, above the organisation budget of 1000.00 PKR',
        before: unlimited,
        after: null,
      },
    ];
    expect(dry.body).toEqual({ dry_run: true, results: expected });
    expect(await listed(client)).toEqual(keysBefore);
    expect(await actions(client)).toEqual(activityBefore);

    const applied = await client.post('/keys/bulk', { ...body, dry_run: false });
    expect(applied.status).toBe(200);
    expect(applied.body).toEqual({ dry_run: false, results: expected });
    const keys = await listed(client);
    expect(keys.get(a!.id)).toMatchObject({ credit_limit_cents: 400_000_000 });
    expect(keys.get(b!.id)).toMatchObject({ credit_limit_cents: 400_000_000 });
    expect(keys.get(c!.id)).toMatchObject({ credit_limit_cents: null });
    expect((await actions(client)).slice(0, 3)).toEqual([
      `api_key.updated ${b!.key_prefix}`,
      `api_key.updated ${a!.key_prefix}`,
      ...activityBefore.slice(0, 1),
    ]);
  });

  it('keeps the limits a change leaves out, and refuses per key with PATCH’s own messages', async () => {
    const { client, org, projectId } = await registerOrg(server);
    await runOperator(server, 'deposit', '--org', org, '--pkr', '1000');
    const [kept] = await createKeys(client, projectId, ['kept'], {
      credit_limit_cents: 5_000_000,
      expires_at: '2099-01-01T00:00:00Z',
    });
    const raised = await client.post('/keys/bulk', {
      action: 'update_limits',
      key_ids: [kept!.id],
      limits: { rate_limit_rpm: 300 },
      dry_run: false,
    });
    expect(raised.body.results[0]).toMatchObject({
      outcome: 'ok',
      after: { rate_limit_rpm: 300, credit_limit_cents: 5_000_000, expires_at: '2099-01-01T00:00:00.000Z' },
    });

    const tooFast = await client.post('/keys/bulk', {
      action: 'update_limits',
      key_ids: [kept!.id],
      limits: { rate_limit_rpm: CEILING + 1 },
      dry_run: true,
    });
    expect(tooFast.body.results[0]).toMatchObject({
      outcome: 'refused',
      message: `rate limit ${CEILING + 1} rpm is above the platform ceiling of ${CEILING} rpm`,
    });
    // Clearing with null, as PATCH does: no credit limit, no expiry.
    const cleared = await client.post('/keys/bulk', {
      action: 'update_limits',
      key_ids: [kept!.id],
      limits: { credit_limit_pkr: null, expires_at: null },
      dry_run: false,
    });
    expect(cleared.body.results[0].after).toEqual({ rate_limit_rpm: 300, credit_limit_cents: null, expires_at: null });
  });
});

describe('POST /keys/bulk: revoking', () => {
  it("previews, then revokes each key, reporting unknown ids and other organisations' keys as not found and leaving them be", async () => {
    const { client, projectId } = await registerOrg(server);
    const [a, b] = await createKeys(client, projectId, ['one', 'two']);
    const stranger = await registerOrg(server);
    const [theirs] = await createKeys(stranger.client, stranger.projectId, ['theirs']);
    const unknown = randomUUID();
    const body = { action: 'revoke', key_ids: [a!.id, unknown, theirs!.id, b!.id, a!.id] };

    const activityBefore = await actions(client);
    const dry = await client.post('/keys/bulk', { ...body, dry_run: true });
    expect(dry.status).toBe(200);
    expect(dry.body.results.map((r: { id: string; outcome: string }) => [r.id, r.outcome])).toEqual([
      [a!.id, 'ok'],
      [unknown, 'not_found'],
      [theirs!.id, 'not_found'],
      [b!.id, 'ok'],
    ]);
    expect(dry.body.results[0]).toMatchObject({ after: null, before: { rate_limit_rpm: 60 } });
    // A dry run records nothing and revokes nothing: both keys still listed, and still admitted by the gateway.
    expect((await listed(client)).size).toBe(2);
    expect(await actions(client)).toEqual(activityBefore);
    expect(await admit(a!.api_key)).toBe('admitted');
    expect(await admit(b!.api_key)).toBe('admitted');

    const applied = await client.post('/keys/bulk', { ...body, dry_run: false });
    expect(applied.body.results.map((r: { outcome: string }) => r.outcome)).toEqual([
      'ok',
      'not_found',
      'not_found',
      'ok',
    ]);
    expect((await listed(client)).size).toBe(0);
    // Refused by the gateway from the very next request; the other organisation's key still works.
    expect(await admit(a!.api_key)).toBe('refused');
    expect(await admit(b!.api_key)).toBe('refused');
    expect(await admit(theirs!.api_key)).toBe('admitted');
    expect((await listed(stranger.client)).has(theirs!.id)).toBe(true);
    expect((await actions(client)).filter((a) => a.startsWith('api_key.revoked'))).toHaveLength(2);

    // Revoked keys are gone: a second run finds none of them.
    const again = await client.post('/keys/bulk', { ...body, dry_run: true });
    expect(again.body.results.every((r: { outcome: string }) => r.outcome === 'not_found')).toBe(true);
  });
});

describe('POST /keys/bulk: one key named twice', () => {
  it('decides a key given in two cases once: one result, one change recorded', async () => {
    const { client, projectId } = await registerOrg(server);
    const [key] = await createKeys(client, projectId, ['twice']);
    const answer = await client.post('/keys/bulk', {
      action: 'update_limits',
      key_ids: [key!.id.toUpperCase(), key!.id],
      limits: { rate_limit_rpm: 90 },
      dry_run: false,
    });
    expect(answer.status).toBe(200);
    expect(answer.body.results.map((r: { id: string; outcome: string }) => [r.id, r.outcome])).toEqual([
      [key!.id, 'ok'],
    ]);
    expect((await actions(client)).filter((a) => a.startsWith('api_key.updated'))).toHaveLength(1);
  });
});

describe('POST /keys/bulk: validation', () => {
  it('answers 422 in the contract shape for too many keys, none, an unknown action or limits missing', async () => {
    const { client } = await register(server);
    const ids = (n: number) => Array.from({ length: n }, () => randomUUID());
    for (const body of [
      { action: 'revoke', key_ids: ids(101), dry_run: true },
      { action: 'revoke', key_ids: [], dry_run: true },
      { action: 'delete', key_ids: ids(1), dry_run: true },
      { action: 'revoke', key_ids: ids(1) },
      { action: 'update_limits', key_ids: ids(1), dry_run: true },
      { action: 'update_limits', key_ids: ids(1), limits: {}, dry_run: true },
      { action: 'update_limits', key_ids: ids(1), limits: { rate_limit_rpm: 0 }, dry_run: true },
      { action: 'revoke', key_ids: ['x'.repeat(65)], dry_run: true },
    ]) {
      const answer = await client.post('/keys/bulk', body);
      expect(answer.status, JSON.stringify(body)).toBe(422);
      expect(answer.body).toHaveProperty('detail');
    }
    // 100 is the most: answered, each unknown key reported.
    const hundred = await client.post('/keys/bulk', { action: 'revoke', key_ids: ids(100), dry_run: true });
    expect(hundred.status).toBe(200);
    expect(hundred.body.results).toHaveLength(100);
  });
});
