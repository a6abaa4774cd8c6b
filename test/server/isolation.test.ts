import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { register, startServer, type TestClient, type TestServer, runOperator } from './harness.js';

/**
 * Two organisations side by side. Whatever A sends that names one of B's records must
 * look exactly like a record that never existed, and must leave B's data untouched.
 */

interface Tenant {
  client: TestClient;
  email: string;
  org: string;
  projectIds: string[];
  keyIds: string[];
  keyPrefixes: string[];
  revokedKeyId: string;
  providers: string[];
}

let server: TestServer;
let a: Tenant;
let b: Tenant;

const admin = (...args: string[]) => runOperator(server, ...args);

async function tenant(label: string, providers: string[]): Promise<Tenant> {
  const { client, email, org } = await register(server, {
    email: `${label}-${randomUUID()}@example.test`,
    org: `Org ${label} ${randomUUID()}`,
  });
  await register(server, { org }); // a teammate, so /members has more than one row
  await admin('add-project', '--org', org, '--name', `${label} second project`);
  const projects = (await client.get('/projects')).body.projects as { id: string }[];
  expect(projects).toHaveLength(2);
  const keyIds: string[] = [];
  const keyPrefixes: string[] = [];
  for (const [i, project] of projects.entries()) {
    const created = await client.post('/keys', { project_id: project.id, name: `${label} key ${i}` });
    expect(created.status).toBe(201);
    keyIds.push(created.body.id);
    keyPrefixes.push(created.body.key_prefix);
  }
  const revoked = await client.post('/keys', { project_id: projects[0]!.id, name: `${label} revoked key` });
  expect((await client.delete(`/keys/${revoked.body.id}`)).status).toBe(200);
  for (const provider of providers) {
    const stored = await client.post('/vault/keys', { provider, api_key: `${label}-${provider}-provider-secret` });
    expect(stored.status).toBe(200);
  }
  return {
    client,
    email,
    org,
    projectIds: projects.map((p) => p.id),
    keyIds,
    keyPrefixes,
    revokedKeyId: revoked.body.id,
    providers,
  };
}

/** What B sees of its own data; compared before and after A's attempts. */
async function snapshot(t: Tenant) {
  const [keys, vault, activity, projects, members] = await Promise.all([
    t.client.get('/keys'),
    t.client.get('/vault/keys'),
    t.client.get('/activity?limit=200'),
    t.client.get('/projects'),
    t.client.get('/members'),
  ]);
  for (const answer of [keys, vault, activity, projects, members]) expect(answer.status).toBe(200);
  return {
    keys: keys.body,
    vault: vault.body,
    activity: activity.body,
    projects: projects.body,
    members: members.body,
  };
}

beforeAll(async () => {
  server = await startServer();
  a = await tenant('alpha', ['openai']);
  b = await tenant('bravo', ['openai', 'mistral']);
});
afterAll(() => server.close());

const patchBody = { rate_limit_rpm: 120, credit_limit_pkr: null, expires_at: null };

type Probe = (id: string) => Promise<{ status: number; body: unknown }>;

const keyEndpoints: [string, Probe][] = [
  ['PATCH /keys/{id}', (id) => a.client.patch(`/keys/${encodeURIComponent(id)}`, patchBody)],
  ['DELETE /keys/{id}', (id) => a.client.delete(`/keys/${encodeURIComponent(id)}`)],
  ['POST /keys with project_id', (id) => a.client.post('/keys', { project_id: id, name: 'intruder' })],
];

describe('tenant isolation', () => {
  it.each(keyEndpoints)("%s: B's id answers exactly like a never-existing or malformed id", async (name, probe) => {
    const before = await snapshot(b);
    const foreignIds = (name.startsWith('POST') ? b.projectIds : [...b.keyIds, b.revokedKeyId]).flatMap((id) => [
      id,
      id.toUpperCase(),
    ]);
    const missing = await probe(randomUUID());
    const malformed = await probe('not-a-uuid');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: expect.any(String) });
    expect({ status: malformed.status, body: malformed.body }).toEqual({ status: 404, body: missing.body });
    for (const id of foreignIds) {
      const answer = await probe(id);
      expect({ id, status: answer.status, body: answer.body }).toEqual({ id, status: 404, body: missing.body });
    }
    expect(await snapshot(b)).toEqual(before);
  });

  it.each([
    ['a provider only B has', () => b.providers.find((p) => !a.providers.includes(p))!],
    ['a provider nobody has', () => 'neverstored'],
    ['a malformed provider name', () => 'Not A Provider!'],
  ])('DELETE /vault/keys/{provider} for %s answers the same 404', async (_name, provider) => {
    const before = await snapshot(b);
    const reference = await a.client.delete('/vault/keys/neverstored-reference');
    expect(reference.status).toBe(404);
    expect(reference.body).toEqual({ error: expect.any(String) });
    const answer = await a.client.delete(`/vault/keys/${encodeURIComponent(provider())}`);
    expect(answer).toMatchObject({ status: 404, body: reference.body });
    expect(await snapshot(b)).toEqual(before);
  });

  it("deleting a provider both hold removes only A's entry", async () => {
    const before = await snapshot(b);
    const shared = a.providers.find((p) => b.providers.includes(p))!;
    expect((await a.client.delete(`/vault/keys/${shared}`)).status).toBe(200);
    const aVault = (await a.client.get('/vault/keys')).body.keys as { provider: string }[];
    expect(aVault.map((k) => k.provider)).not.toContain(shared);
    expect(await snapshot(b)).toEqual(before);
    expect(before.vault.keys.map((k: { provider: string }) => k.provider)).toContain(shared);
    // Put it back for the other cases.
    expect((await a.client.post('/vault/keys', { provider: shared, api_key: 'alpha-restored-secret' })).status).toBe(
      200,
    );
  });

  it.each(['/keys', '/projects', '/members', '/vault/keys', '/activity?limit=200'])(
    "A's GET %s never contains B's records",
    async (path) => {
      const answer = await a.client.get(path);
      expect(answer.status).toBe(200);
      const text = JSON.stringify(answer.body);
      const foreign = [b.email, b.org, ...b.projectIds, ...b.keyIds, b.revokedKeyId, ...b.keyPrefixes, 'mistral'];
      for (const value of foreign) expect(text).not.toContain(value);
      // And A does see its own records there.
      const own: Record<string, string[]> = {
        '/keys': a.keyIds,
        '/projects': a.projectIds,
        '/members': [a.email],
        '/vault/keys': a.providers,
        '/activity?limit=200': [a.email, ...a.keyPrefixes],
      };
      for (const value of own[path]!) expect(text).toContain(value);
    },
  );

  it("B's own ids still work for B after A's attempts", async () => {
    const updated = await b.client.patch(`/keys/${b.keyIds[0]}`, patchBody);
    expect(updated.status).toBe(200);
    expect(updated.body.rate_limit_rpm).toBe(120);
    const created = await b.client.post('/keys', { project_id: b.projectIds[1], name: 'bravo later key' });
    expect(created.status).toBe(201);
  });
});
