import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runAdmin } from '../../server/admin/commands.js';
import { BATCH_ROWS } from '../../server/ingest/import-batches.js';
import { importRow, ndjsonFile } from './request-rows.js';
import {
  addRoute,
  PASSWORD,
  register,
  TestClient,
  type TestServer,
  startServer,
  storeFlags,
  telemetrySql,
} from './harness.js';

let server: TestServer;
const scratch = mkdtempSync(join(tmpdir(), 'gc-admin-test-'));

beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server.close();
  rmSync(scratch, { recursive: true, force: true });
});

interface Outcome {
  code: number;
  out: string;
  err: string;
}

/** Runs `npm run admin -- <args>` in process against the running server's data folder. */
async function admin(...args: string[]): Promise<Outcome> {
  const printed: string[] = [];
  const errors: string[] = [];
  const spy = vi.spyOn(console, 'error').mockImplementation((...parts: unknown[]) => {
    errors.push(parts.map(String).join(' '));
  });
  try {
    const code = await runAdmin([...args, ...storeFlags(server)], (line) => printed.push(line));
    return { code, out: printed.join('\n'), err: errors.join('\n') };
  } finally {
    spy.mockRestore();
  }
}

async function ok(...args: string[]): Promise<string> {
  const outcome = await admin(...args);
  expect(outcome, `admin ${args.join(' ')}`).toMatchObject({ code: 0, err: '' });
  return outcome.out;
}

async function firstProject(client: TestClient): Promise<string> {
  return (await client.get('/projects')).body.projects[0].id;
}

async function newKey(client: TestClient, projectId: string, extra: object = {}): Promise<string> {
  const created = await client.post('/keys', { project_id: projectId, name: `key ${randomUUID()}`, ...extra });
  expect(created.status).toBe(201);
  return created.body.id;
}

async function login(email: string, password = PASSWORD): Promise<{ status: number; client: TestClient; body: any }> {
  const client = new TestClient(server.baseUrl);
  const answer = await client.post('/auth/login', { email, password });
  return { status: answer.status, client, body: answer.body };
}

describe('deposit', () => {
  it('raises the budget so a credit limit that was refused is now accepted, and writes budget.deposited', async () => {
    const { client, org } = await register(server);
    const keyId = await newKey(client, await firstProject(client));
    const refused = await client.patch(`/keys/${keyId}`, { rate_limit_rpm: 60, credit_limit_pkr: 250 });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toContain('above the organisation budget of 0.00 PKR');

    expect(await ok('deposit', '--org', org, '--pkr', '200')).toContain('200.00 PKR');
    const stillShort = await client.patch(`/keys/${keyId}`, { rate_limit_rpm: 60, credit_limit_pkr: 250 });
    expect(stillShort.status).toBe(400);
    expect(stillShort.body.error).toContain('budget of 200.00 PKR');

    // Deposits add up, and the organisation is found whatever the case of its name.
    expect(await ok('deposit', '--org', org.toUpperCase(), '--pkr', '50.5')).toContain('250.50 PKR');
    const accepted = await client.patch(`/keys/${keyId}`, { rate_limit_rpm: 60, credit_limit_pkr: 250 });
    expect(accepted.status).toBe(200);
    expect(accepted.body.credit_limit_cents).toBe(250_000_000);

    const events = (await client.get('/activity')).body.events;
    const deposits = events.filter((e: { action: string }) => e.action === 'budget.deposited');
    expect(deposits).toHaveLength(2);
    expect(deposits[0]).toMatchObject({ action: 'budget.deposited', target: '', actor: null });
  });
});

describe('set-role', () => {
  it('lets a member rename the organisation once promoted, and takes it back when demoted', async () => {
    const { client: owner, org } = await register(server);
    const { client: member, email } = await register(server, { org });
    const refused = await member.patch('/organization', { name: `${org} by member` });
    expect(refused).toMatchObject({ status: 403, body: { error: 'owner or admin role required' } });
    const eventsBefore = (await owner.get('/activity')).body.events;

    expect(await ok('set-role', '--email', email, '--role', 'admin')).toContain('admin');
    const members = (await owner.get('/members')).body.members;
    expect(members.find((m: { email: string }) => m.email === email).role).toBe('admin');
    // The member's existing session picks the new role up at once.
    const renamed = await member.patch('/organization', { name: `${org} renamed` });
    expect(renamed).toMatchObject({ status: 200, body: { name: `${org} renamed` } });
    // set-role itself writes no activity event; the rename does.
    const eventsAfter = (await owner.get('/activity')).body.events;
    expect(eventsAfter.slice(1)).toEqual(eventsBefore);
    expect(eventsAfter[0]).toMatchObject({ action: 'org.renamed', actor: email });

    await ok('set-role', '--email', email.toUpperCase(), '--role', 'member');
    expect((await member.patch('/organization', { name: org })).status).toBe(403);
  });
});

describe('deactivate and activate', () => {
  it('a deactivated account gets 401 at once and cannot sign in; activated, it signs in again', async () => {
    const { client, email } = await register(server);
    expect((await client.get('/auth/me')).status).toBe(200);

    await ok('deactivate', '--email', email);
    expect(await client.get('/auth/me')).toMatchObject({ status: 401, body: { detail: 'Unauthorized' } });
    expect((await client.get('/keys')).status).toBe(401);
    expect((await client.post('/auth/refresh')).status).toBe(401);
    const refused = await login(email);
    expect(refused).toMatchObject({ status: 401, body: { error: 'invalid email or password' } });

    await ok('activate', '--email', email);
    const again = await login(email);
    expect(again.status).toBe(200);
    expect((await again.client.get('/auth/me')).body.email).toBe(email);
    // Tokens issued before the deactivation stay dead.
    expect((await client.get('/auth/me')).status).toBe(401);
  });
});

describe('revoke-sessions', () => {
  it('ends every session of the account at once', async () => {
    const { client: first, email } = await register(server);
    const second = (await login(email)).client;
    const other = await register(server); // someone else's session must survive
    for (const c of [first, second]) expect((await c.get('/auth/me')).status).toBe(200);

    expect(await ok('revoke-sessions', '--email', email)).toContain('ended 2 session(s)');
    for (const c of [first, second]) {
      expect(await c.get('/auth/me')).toMatchObject({ status: 401, body: { detail: 'Unauthorized' } });
      expect((await c.post('/auth/refresh')).status).toBe(401);
    }
    expect((await other.client.get('/auth/me')).status).toBe(200);
    expect((await login(email)).status).toBe(200);
  });
});

describe('add-project', () => {
  it('creates a project that the organisation sees and can issue keys in', async () => {
    const { client, org } = await register(server);
    const out = await ok('add-project', '--org', org, '--name', 'Batch jobs');
    const projects = (await client.get('/projects')).body.projects;
    expect(projects.map((p: { name: string }) => p.name)).toEqual(['Default', 'Batch jobs']);
    const added = projects[1];
    expect(out).toContain(added.id);
    expect(Date.parse(added.created_at)).not.toBeNaN();
    await newKey(client, added.id);
  });
});

describe('routes apply and set-model', () => {
  it('edit the routes seen in GET /models and checked by POST /keys', async () => {
    const { client } = await register(server);
    const projectId = await firstProject(client);
    const model = (id: string) =>
      client.get('/models').then((a) => a.body.models.find((m: { id: string }) => m.id === id));
    const scoped = (id: string) =>
      client.post('/keys', { project_id: projectId, name: 'scoped', allowed_models: [id] });

    const id = `acme/super-model-${randomUUID().slice(0, 8)}`;
    expect(await model(id)).toBeUndefined();
    const unknown = await scoped(id);
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toContain(id);

    expect(await addRoute(server, id)).toMatch(/^applied version \d+/);
    expect(await model(id)).toEqual({ id, provider: 'acme', active: true });
    const created = await scoped(id);
    expect(created.status).toBe(201);
    expect(created.body.allowed_models).toEqual([id]);

    expect(await ok('set-model', '--id', id, '--active', 'false')).toMatch(
      new RegExp(`^route ${id} is inactive: applied version \\d+$`),
    );
    expect(await model(id)).toEqual({ id, provider: 'acme', active: false });
    const inactive = await scoped(id);
    expect(inactive.status).toBe(400);
    expect(inactive.body.error).toContain(id);
    // Turned off already: no new version.
    expect(await ok('set-model', '--id', id, '--active', 'false')).toMatch(/is inactive already \(version \d+\)/);

    await ok('set-model', '--id', id, '--active', 'true');
    expect((await scoped(id)).status).toBe(201);
    expect(await ok('routes', 'history')).toMatch(/set-model\n.*set-model\n.*routes apply/);
  });
});

describe('bad operator input', () => {
  let client: TestClient;
  let org: string;
  let memberEmail: string;
  let keyId: string;

  async function state() {
    const [members, projects, models, activity, keys, me] = await Promise.all(
      ['/members', '/projects', '/models', '/activity', '/keys', '/auth/me'].map((path) => client.get(path)),
    );
    const budget = await client.patch(`/keys/${keyId}`, { rate_limit_rpm: 60, credit_limit_pkr: 1_000_000 });
    return {
      members: members!.body,
      projects: projects!.body,
      models: models!.body,
      activity: activity!.body,
      keys: keys!.body,
      me: me!.status,
      budget: budget.body,
    };
  }

  let before: Awaited<ReturnType<typeof state>>;
  beforeAll(async () => {
    ({ client, org } = await register(server));
    ({ email: memberEmail } = await register(server, { org }));
    keyId = await newKey(client, await firstProject(client));
    await ok('deposit', '--org', org, '--pkr', '10');
    before = await state();
    expect(before.budget.error).toContain('budget of 10.00 PKR');
  });

  const long = 'x'.repeat(201);
  it.each([
    [['deposit', '--org', 'No Such Organisation', '--pkr', '5'], /no organization named No Such Organisation/],
    [['deposit', '--org', '{org}', '--pkr=-5'], /--pkr must be a positive amount/],
    [['deposit', '--org', '{org}', '--pkr', '-5'], /--pkr/],
    [['deposit', '--org', '{org}', '--pkr', '0'], /--pkr must be a positive amount/],
    [['deposit', '--org', '{org}', '--pkr', 'lots'], /--pkr must be a positive amount/],
    [['deposit', '--org', '{org}'], /--pkr is required/],
    [['set-role', '--email', '{member}', '--role', 'superuser'], /--role must be owner, admin or member/],
    [['set-role', '--email', 'nobody@example.test', '--role', 'admin'], /no account with email nobody@example.test/],
    [['deactivate', '--email', 'nobody@example.test'], /no account with email/],
    [['activate'], /--email is required/],
    [['revoke-sessions', '--email', 'nobody@example.test'], /no account with email/],
    [['add-project', '--org', 'No Such Organisation', '--name', 'P'], /no organization named/],
    [['add-project', '--org', '{org}', '--name', long], /--name must be at most 200 characters/],
    [['add-model', '--id', 'acme/x'], /unknown command "add-model"/],
    [
      ['set-model', '--id', 'acme/never-added', '--active', 'false'],
      /no route acme\/never-added in the routes document/,
    ],
    [['set-model', '--id', 'openai/gpt-4o-mini', '--active', 'maybe'], /--active must be true or false/],
    [['frobnicate'], /unknown command "frobnicate"/],
    [['deposit', '--org', '{org}', '--pkr', '5', '--bogus'], /bogus/],
  ])('admin %j exits non-zero with a clear message and changes nothing', async (args, message) => {
    const outcome = await admin(...args.map((a) => a.replace('{org}', org).replace('{member}', memberEmail)));
    expect(outcome.code).not.toBe(0);
    expect(outcome.err).toMatch(message);
    expect(await state()).toEqual(before);
  });
});

/** A failover's attempts: a timeout moved on, a retry after a 503, then the target that served. */
const ATTEMPTS = [
  { target: 'openai/gpt-4o-mini-2024-07-18', status: null, error: 'first_byte_timeout', ms: 2000, decision: 'next' },
  { target: 'azure/gpt-4o-mini', status: 503, error: 'server_error', ms: 41.5, decision: 'retried' },
  { target: 'azure/gpt-4o-mini', status: 200, error: null, ms: 812.25, decision: 'served' },
];

describe('import-requests', () => {
  let client: TestClient;
  let org: string;
  let projectId: string;
  let keyId: string;
  async function rowCount(): Promise<number> {
    const [counted] = await telemetrySql<{ n: number }>(server, 'SELECT COUNT(*) AS n FROM requests');
    return Number(counted!.n);
  }

  const row = (cost: number, overrides: Record<string, unknown> = {}) =>
    importRow(keyId, projectId, { financials: { cost_pkr: cost, is_byok: 0 }, ...overrides });

  /** A line in the import's second batch of rows. */
  const LATER_LINE = BATCH_ROWS + 52;

  const file = (lines: (object | string)[]) => ndjsonFile(scratch, lines);

  const limit = (pkr: number) => client.patch(`/keys/${keyId}`, { rate_limit_rpm: 60, credit_limit_pkr: pkr });

  beforeAll(async () => {
    ({ client, org } = await register(server));
    projectId = await firstProject(client);
    keyId = await newKey(client, projectId);
    await ok('deposit', '--org', org, '--pkr', '1000');
  });

  it('imports every row of a valid file and settles the cost into the key spend', async () => {
    expect((await limit(1)).status).toBe(200); // nothing spent yet
    const unattributed = { key: null, project: null, organization_name: org };
    const path = file([
      row(1.25, { timestamp: '2026-11-20T10:00:00Z' }),
      row(2.5),
      '',
      row(0.25, { status: 429, metrics: { ...row(0).metrics, ttft_ms: null, tpot_ms: null } }),
      row(3, { key: null }), // a project-only row settles no key spend
      row(7, unattributed),
    ]);
    const countBefore = await rowCount();
    // Said before the commit, which is most of a large import's last minute.
    expect((await ok('import-requests', '--file', path)).split('\n')).toEqual([
      '5 request(s) written; finishing the rollups and search index, then committing',
      'imported 5 request(s)',
    ]);
    expect(await rowCount()).toBe(countBefore + 5);

    const below = await limit(3.99);
    expect(below.status).toBe(400);
    expect(below.body.error).toBe("credit limit 3.99 PKR is below this key's spend so far of 4.00 PKR");
    expect((await limit(4)).status).toBe(200);

    const listed = (await client.get('/keys')).body.keys.find((k: { id: string }) => k.id === keyId);
    expect(listed.last_used_at).not.toBeNull();
  });

  const cases: [string, () => (object | string)[], RegExp][] = [
    ['a malformed line', () => [row(1), row(1), '{"req_id": "cut off", '], /line 3\b.*not valid JSON/],
    ['a row of the wrong shape', () => [row(1), row(1), row(1, { status: 'ok' })], /line 3\b.*status/],
    ['a bad timestamp', () => [row(1), row(1), row(1, { timestamp: 'yesterday' })], /line 3\b.*timestamp/],
    ['an unknown key id', () => [row(1), row(1), row(1, { key: { id: randomUUID() } })], /line 3\b.*unknown key/],
    ['a malformed key id', () => [row(1), row(1), row(1, { key: { id: 'not-a-uuid' } })], /line 3\b.*unknown key/],
    [
      'an unknown project',
      () => [row(1), row(1), row(1, { key: null, project: { id: randomUUID() } })],
      /line 3\b.*unknown project/,
    ],
    [
      'a request id imported before',
      () => [row(1), row(1), row(1, { req_id: importedReqId })],
      /line 3\b.*already imported/,
    ],
    [
      'a request id repeated in the file',
      () => {
        const first = row(1);
        return [first, row(1), { ...first }];
      },
      /line 3\b.*already imported/,
    ],
    // Rows are written 16 to a statement, the last few of a batch one by one.
    ['a request id repeated within a statement of many rows', () => repeatAt(40, 2, 20), /line 21\b.*already imported/],
    ['a request id repeated among the last rows', () => repeatAt(40, 2, 35), /line 36\b.*already imported/],
    [
      // The line is counted across batches, not within one.
      'a request id imported before, in a later batch of rows',
      () =>
        Array.from({ length: LATER_LINE }, (_, i) => row(0.5, i === LATER_LINE - 1 ? { req_id: importedReqId } : {})),
      new RegExp(`line ${LATER_LINE}\\b.*already imported`),
    ],
    [
      // Reported at the first fault, the repeat, though the reader reaches the bad line first.
      'a repeated request id before a malformed line',
      () => {
        const first = row(1);
        return [first, { ...first }, '{'];
      },
      /line 2\b.*already imported/,
    ],
    [
      'a row without key, project or organization_name',
      () => [row(1), row(1), row(1, { key: null, project: null })],
      /line 3\b.*organization_name/,
    ],
    [
      'an unknown organization_name',
      () => [row(1), row(1), row(1, { key: null, project: null, organization_name: 'No Such Organisation' })],
      /line 3\b.*unknown organization/,
    ],
    ['a bad line after a blank one, counted', () => [row(1), '', '[]', row(1)], /line 3\b/],
    ['more than 20 attempts', () => [row(1), row(1, { upstream: withAttempts(21) })], /line 2\b.*attempts/],
    ['an api the gateway does not serve', () => [row(1), row(1, { api: 'graphql' })], /line 2\b.*\/api\b/],
    [
      'an attempt with a decision the gateway does not make',
      () => [row(1), row(1, { upstream: { ...withAttempts(1), attempts: [{ ...ATTEMPTS[0], decision: 'hoped' }] } })],
      /line 2\b.*decision/,
    ],
    [
      'a provider with a slash',
      () => [row(1), row(1, { upstream: { model: 'gpt-4o', provider: 'openai/x', attempts: null } })],
      /line 2\b.*provider/,
    ],
    ['a bad line at the end of a long file', () => [...Array.from({ length: 40 }, () => row(0.5)), '{'], /line 41\b/],
  ];

  /** A row's `upstream` with its first `count` attempts of a 21-attempt failover. */
  function withAttempts(count: number) {
    const attempts = Array.from({ length: count }, (_, i) => ATTEMPTS[i % ATTEMPTS.length]!);
    return { model: 'gpt-4o-mini', provider: 'azure', attempts };
  }

  /** `count` rows, where the one at `repeat` has the request id of the one at `original`. */
  function repeatAt(count: number, original: number, repeat: number): object[] {
    const rows = Array.from({ length: count }, () => row(0.5));
    return rows.map((r, i) => (i === repeat ? { ...r, req_id: rows[original]!.req_id } : r));
  }

  let importedReqId: string;
  beforeAll(async () => {
    const known = row(0);
    importedReqId = known.req_id;
    await ok('import-requests', '--file', file([known]));
  });

  it.each(cases)('a file with %s is rejected whole, naming the line', async (_label, lines, message) => {
    const count = await rowCount();
    const outcome = await admin('import-requests', '--file', file(lines()));
    expect(outcome.code).not.toBe(0);
    expect(outcome.err).toMatch(message);
    expect(outcome.out).toBe('');
    expect(await rowCount()).toBe(count);
    // The key's spend did not move: a limit equal to the spend so far is still accepted.
    expect((await limit(4)).status).toBe(200);
    expect((await limit(3.99)).body.error).toContain('spend so far of 4.00 PKR');
  });

  it('imports several files in one run, every row of each, and settles their cost once', async () => {
    const countBefore = await rowCount();
    const spent = 4; // the spend so far, from the first test
    const paths = [file([row(0.5), row(0.25)]), file([row(1)]), file(['', row(0.25)])];
    const flags = paths.flatMap((path) => ['--file', path]);
    expect((await ok('import-requests', ...flags)).split('\n')).toEqual([
      '4 request(s) written; finishing the rollups and search index, then committing',
      'imported 4 request(s) from 3 files',
    ]);
    expect(await rowCount()).toBe(countBefore + 4);
    expect((await limit(spent + 1.99)).body.error).toContain(`spend so far of ${(spent + 2).toFixed(2)} PKR`);
    expect((await limit(spent + 2)).status).toBe(200);
    expect((await limit(spent)).status).toBe(400);
  });

  /** Lines of the first file, of a second, and the message that names the second's fault. */
  const severalCases: [string, () => [(object | string)[], (object | string)[]], RegExp][] = [
    [
      'a malformed line',
      () => [
        [row(1), row(1)],
        [row(1), '{'],
      ],
      /line 2: not valid JSON/,
    ],
    ['an unknown key', () => [[row(1)], [row(1, { key: { id: randomUUID() } })]], /line 1: unknown key/],
    [
      'a request id of the first file repeated',
      () => {
        const first = row(1);
        return [
          [first, row(1)],
          [row(1), { ...first }],
        ];
      },
      /line 2: request id .* already imported/,
    ],
    [
      // Lines are counted from each file's start, though the first file's rows fill batches.
      'a request id of the first file repeated after a batch of rows',
      () => {
        const rows = Array.from({ length: LATER_LINE }, () => row(0.5));
        return [rows, [row(1), row(1), { ...rows[LATER_LINE - 1]! }]];
      },
      /line 3: request id .* already imported/,
    ],
  ];

  it.each(severalCases)(
    'files whose second has %s are rejected together, naming its file and line',
    async (_label, lines, message) => {
      const count = await rowCount();
      const [first, second] = lines().map((fileLines) => file(fileLines));
      const outcome = await admin('import-requests', '--file', first!, '--file', second!);
      expect(outcome.code).not.toBe(0);
      expect(outcome.err.startsWith(`${second!} line`)).toBe(true);
      expect(outcome.err).toMatch(message);
      expect(outcome.out).toBe('');
      // The first file's rows are not kept either, nor their spend.
      expect(await rowCount()).toBe(count);
      expect((await limit(6)).status).toBe(200);
      expect((await limit(5.99)).body.error).toContain('spend so far of 6.00 PKR');
    },
  );

  it('refuses files named without a --file each (a glob), importing none', async () => {
    const count = await rowCount();
    const [first, second] = [file([row(1)]), file([row(1)])];
    const outcome = await admin('import-requests', '--file', first, second);
    expect(outcome).toMatchObject({ code: 2, out: '' });
    expect(outcome.err).toContain(`unexpected argument ${second}: name each file with a --file of its own`);
    expect(await rowCount()).toBe(count);
  });

  it('keeps the target that served and every attempt, read back as imported and imported again alike', async () => {
    const upstream = { model: 'gpt-4o-mini', provider: 'azure', attempts: ATTEMPTS };
    const full = row(0, { upstream: { ...upstream, attempts: ATTEMPTS.map((a) => ({ ...a, note: 'not kept' })) } });
    const bare = row(0); // `upstream: {model}` only, as files written before them
    const nulls = row(0, { upstream: { model: 'gpt-4o', provider: null, attempts: null } });
    await ok('import-requests', '--file', file([full, bare, nulls]));
    const read = async (reqId: string) => {
      const answer = await client.get(`/analytics/requests/${reqId}`);
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      return answer.body as { upstream: unknown };
    };
    const exported = await read(full.req_id);
    expect(exported.upstream).toEqual(upstream);
    expect((await read(bare.req_id)).upstream).toEqual({ model: bare.upstream.model, provider: null, attempts: null });
    expect((await read(nulls.req_id)).upstream).toEqual({ model: 'gpt-4o', provider: null, attempts: null });
    const again = { ...exported, req_id: `req-${randomUUID()}` };
    await ok('import-requests', '--file', file([again]));
    expect((await read(again.req_id)).upstream).toEqual(upstream);
    const [stored] = await telemetrySql<{ served_by: string }>(
      server,
      `SELECT served_by FROM requests WHERE req_id = '${again.req_id}'`,
    );
    expect(stored!.served_by).toBe('azure/gpt-4o-mini');
  });

  it("finds imported rows by their metadata's keys and values, and by the trace id set aside from its shape", async () => {
    const trace = randomUUID().replaceAll('-', '');
    const zephyr = row(0, { metadata: { Customer: 'Zephyr-Retail', Trace_Id: trace } });
    const orchid = row(0, { metadata: { customer: 'orchid-foods', feature: 'digest' } });
    const bare = row(0, { metadata: {} });
    await ok('import-requests', '--file', file([zephyr, orchid, bare]));
    const found = async (text: string) => {
      const page = await client.get(`/analytics/requests?time_range=24h&search=${encodeURIComponent(text)}`);
      expect(page.status, JSON.stringify(page.body)).toBe(200);
      return (page.body.requests as { req_id: string }[]).map((r) => r.req_id).sort();
    };
    expect(await found('zephyr')).toEqual([zephyr.req_id]);
    expect(await found('orchid')).toEqual([orchid.req_id]);
    expect(await found(trace)).toEqual([zephyr.req_id]);
    expect(await found('digest')).toEqual([orchid.req_id]);
    expect(await found('customer')).toEqual([zephyr.req_id, orchid.req_id].sort());
    const read = await client.get(`/analytics/requests/${zephyr.req_id}`);
    expect(read.body.metadata).toEqual({ customer: 'Zephyr-Retail', trace_id: trace });
  });

  it('keeps the api a line gives, and an absent or null one as unknown; a row read back imports again alike', async () => {
    const given = row(0, { api: 'responses' });
    const absent = row(0); // files written before rows said it
    const unknown = row(0, { api: null });
    await ok('import-requests', '--file', file([given, absent, unknown]));
    const read = async (reqId: string) => {
      const answer = await client.get(`/analytics/requests/${reqId}`);
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      return answer.body as { api: unknown };
    };
    const exported = await read(given.req_id);
    expect(exported.api).toBe('responses');
    expect((await read(absent.req_id)).api).toBeNull();
    expect((await read(unknown.req_id)).api).toBeNull();
    const again = { ...exported, req_id: `req-${randomUUID()}` };
    await ok('import-requests', '--file', file([again]));
    expect((await read(again.req_id)).api).toBe('responses');
    const stored = await telemetrySql<{ req_id: string; api: string | null }>(
      server,
      `SELECT req_id, api FROM requests WHERE req_id IN ('${again.req_id}', '${absent.req_id}')`,
    );
    expect(Object.fromEntries(stored.map((r) => [r.req_id, r.api]))).toEqual({
      [again.req_id]: 'responses',
      [absent.req_id]: null,
    });
  });

  it('a missing file is reported by name, and none of the others imported', async () => {
    const path = join(scratch, 'no-such-file.ndjson');
    const outcome = await admin('import-requests', '--file', path);
    expect(outcome.code).not.toBe(0);
    expect(outcome.err).toContain(path);

    const count = await rowCount();
    const among = await admin('import-requests', '--file', file([row(0)]), '--file', path);
    expect(among).toMatchObject({ code: 2, out: '' });
    expect(among.err).toContain(`no such file: ${path}`);
    expect(await rowCount()).toBe(count);
  });
});
