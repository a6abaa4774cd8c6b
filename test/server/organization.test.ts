import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoute, register, startServer, unique, type TestServer, runOperator } from './harness.js';

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|\+00:00)$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

const admin = (...args: string[]) => runOperator(server, ...args);

describe('PATCH /organization', () => {
  it('lets the owner rename the organisation, trimmed, and shows the new name everywhere', async () => {
    const owner = await register(server);
    const name = unique('renamed').org;
    const answer = await owner.client.patch('/organization', { name: `  ${name}  ` });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ name });
    expect((await owner.client.get('/auth/me')).body.organization).toEqual({ name });
    // A newcomer naming the new name, in another case, joins it.
    const joiner = await register(server, { org: name.toUpperCase() });
    expect(joiner.body.user.role).toBe('member');
    expect(joiner.body.organization).toEqual({ name });
  });

  it('lets an admin rename and refuses a member with 403', async () => {
    const owner = await register(server);
    const promoted = await register(server, { org: owner.org });
    const member = await register(server, { org: owner.org });
    await admin('set-role', '--email', promoted.email, '--role', 'admin');

    const byAdmin = await promoted.client.patch('/organization', { name: unique('by-admin').org });
    expect(byAdmin.status).toBe(200);

    const byMember = await member.client.patch('/organization', { name: unique('by-member').org });
    expect(byMember.status).toBe(403);
    expect(byMember.body).toEqual({ error: 'owner or admin role required' });
    expect((await member.client.get('/auth/me')).body.organization).toEqual(byAdmin.body);
  });

  it('answers 400 for a blank, over-long or <> name, and keeps the old name', async () => {
    const owner = await register(server);
    const bad = ['', '   ', 'x'.repeat(256), ' ' + 'y'.repeat(256), 'Acme <Labs>', 'a>b', '<script>'];
    for (const name of bad) {
      const answer = await owner.client.patch('/organization', { name });
      expect(answer.status, JSON.stringify(name).slice(0, 40)).toBe(400);
      expect(Object.keys(answer.body)).toEqual(['error']);
      expect(answer.headers['x-error-field']).toBe('name');
      expect(typeof answer.body.error).toBe('string');
    }
    expect((await owner.client.get('/auth/me')).body.organization).toEqual({ name: owner.org });
    const longest = 'z'.repeat(250) + unique('n').org.slice(-5);
    const ok = await owner.client.patch('/organization', { name: `  ${longest}  ` });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ name: longest });
  });

  it('refuses control and bidirectional formatting characters, and keeps other scripts and emoji', async () => {
    const owner = await register(server);
    // U+202E turns "Acme Corp" followed by reversed text into a look-alike of another name.
    const hidden = ['Acme\u202Eproc emca', 'Acme\u2066Co\u2069', 'Acme\u200FCo', 'Acme\u0007Co', 'Acme\tCo'];
    for (const name of hidden) {
      const answer = await owner.client.patch('/organization', { name });
      expect(answer.status, JSON.stringify(name)).toBe(400);
      expect(answer.body).toEqual({
        error: 'organization name must not contain control or bidirectional formatting characters',
      });
      expect(answer.headers['x-error-field']).toBe('name');
    }
    expect((await owner.client.get('/auth/me')).body.organization).toEqual({ name: owner.org });
    const name = `Café 日本 👩\u200D💻 ${unique('n').org.slice(-5)}`;
    const ok = await owner.client.patch('/organization', { name });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ name });
  });

  it('answers 422 for a missing or non-string name', async () => {
    const owner = await register(server);
    for (const body of [{}, { name: 42 }, { name: null }]) {
      const answer = await owner.client.patch('/organization', body);
      expect(answer.status, JSON.stringify(body)).toBe(422);
      expect(answer.body.detail[0].loc).toEqual(['body', 'name']);
    }
  });

  it('answers 409 for a name another organisation uses, ignoring case and spaces', async () => {
    const taken = await register(server);
    const owner = await register(server);
    for (const name of [taken.org, taken.org.toUpperCase(), `  ${taken.org.toLowerCase()} `]) {
      const answer = await owner.client.patch('/organization', { name });
      expect(answer.status, name).toBe(409);
      expect(typeof answer.body.error).toBe('string');
      expect(answer.headers['x-error-field']).toBe('name');
    }
    expect((await owner.client.get('/auth/me')).body.organization).toEqual({ name: owner.org });
    expect((await taken.client.get('/auth/me')).body.organization).toEqual({ name: taken.org });
  });

  it('accepts the organisation’s own current name, in any case', async () => {
    const owner = await register(server);
    const same = await owner.client.patch('/organization', { name: owner.org });
    expect(same.status).toBe(200);
    expect(same.body).toEqual({ name: owner.org });
    const recased = await owner.client.patch('/organization', { name: owner.org.toUpperCase() });
    expect(recased.status).toBe(200);
    expect(recased.body).toEqual({ name: owner.org.toUpperCase() });
  });

  it('needs a session', async () => {
    const owner = await register(server);
    await owner.client.post('/auth/logout');
    const answer = await owner.client.patch('/organization', { name: unique().org });
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual({ detail: 'Unauthorized' });
  });
});

describe('GET /members', () => {
  it('lists everyone in the organisation, oldest first, with exact fields', async () => {
    const owner = await register(server);
    const second = await register(server, { org: owner.org });
    const third = await register(server, { org: ` ${owner.org.toLowerCase()} ` });
    const stranger = await register(server);

    const answer = await second.client.get('/members');
    expect(answer.status).toBe(200);
    const members = answer.body.members;
    expect(members.map((m: any) => [m.email, m.role])).toEqual([
      [owner.email, 'owner'],
      [second.email, 'member'],
      [third.email, 'member'],
    ]);
    for (const member of members) {
      expect(Object.keys(member).sort()).toEqual(['email', 'joined_at', 'role', 'user_id']);
      expect(member.user_id).toMatch(UUID);
      expect(member.joined_at).toMatch(ISO_UTC);
    }
    expect(members[0]).toEqual(owner.body.user);
    const times = members.map((m: any) => Date.parse(m.joined_at));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    expect(JSON.stringify(answer.body)).not.toMatch(/password|hash/i);
    expect((await stranger.client.get('/members')).body.members.map((m: any) => m.email)).toEqual([stranger.email]);
  });

  it('shows a role changed by the operator', async () => {
    const owner = await register(server);
    const member = await register(server, { org: owner.org });
    await admin('set-role', '--email', member.email, '--role', 'admin');
    const members = (await owner.client.get('/members')).body.members;
    expect(members.map((m: any) => m.role)).toEqual(['owner', 'admin']);
  });
});

describe('GET /projects', () => {
  it('gives a new organisation one project named Default, and adds projects oldest first', async () => {
    const owner = await register(server);
    const stranger = await register(server);
    const first = await owner.client.get('/projects');
    expect(first.status).toBe(200);
    expect(first.body.projects).toHaveLength(1);
    const [project] = first.body.projects;
    expect(Object.keys(project).sort()).toEqual(['created_at', 'id', 'name']);
    expect(project.name).toBe('Default');
    expect(project.id).toMatch(UUID);
    expect(project.created_at).toMatch(ISO_UTC);

    await admin('add-project', '--org', owner.org, '--name', 'Research');
    const member = await register(server, { org: owner.org });
    const projects = (await member.client.get('/projects')).body.projects;
    expect(projects.map((p: any) => p.name)).toEqual(['Default', 'Research']);
    expect(projects[0]).toEqual(project);
    expect(Date.parse(projects[1].created_at)).toBeGreaterThanOrEqual(Date.parse(projects[0].created_at));
    expect((await stranger.client.get('/projects')).body.projects.map((p: any) => p.name)).toEqual(['Default']);
    expect((await stranger.client.get('/projects')).body.projects[0].id).not.toBe(project.id);
  });
});

describe('GET /models', () => {
  it('lists the catalogue with id, provider and active flag', async () => {
    const { client } = await register(server);
    const answer = await client.get('/models');
    expect(answer.status).toBe(200);
    expect(Object.keys(answer.body)).toEqual(['models']);
    const models = answer.body.models;
    expect(models.length).toBeGreaterThan(5);
    for (const model of models) {
      expect(Object.keys(model).sort()).toEqual(['active', 'id', 'provider']);
      expect(typeof model.id).toBe('string');
      expect(typeof model.provider).toBe('string');
      expect(typeof model.active).toBe('boolean');
    }
    expect(models).toContainEqual({ id: 'openai/gpt-4o-mini', provider: 'openai', active: true });
    expect(models).toContainEqual({ id: 'anthropic/claude-sonnet-4', provider: 'anthropic', active: true });
    expect(models).toContainEqual({ id: 'openai/gpt-3.5-turbo', provider: 'openai', active: false });
    expect(models.some((m: any) => m.id.startsWith('svc/') && m.provider === 'svc')).toBe(true);
  });

  it('reflects route edits by the operator', async () => {
    const { client } = await register(server);
    await addRoute(server, 'acme/widget-1', { active: false });
    expect((await client.get('/models')).body.models).toContainEqual({
      id: 'acme/widget-1',
      provider: 'acme',
      active: false,
    });
    await admin('set-model', '--id', 'acme/widget-1', '--active', 'true');
    expect((await client.get('/models')).body.models).toContainEqual({
      id: 'acme/widget-1',
      provider: 'acme',
      active: true,
    });
  });
});
