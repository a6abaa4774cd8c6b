import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse, stringify } from 'yaml';
import { runAdmin } from '../../server/admin/commands.js';
import { startSimulatedUpstream, type SimulatedUpstream } from '../../server/gateway/simulated-upstream.js';
import { startGateway } from './gateway-harness.js';
import { register, startServer, storeFlags, type TestClient, type TestServer } from './harness.js';

/** `npm run admin -- routes …` against a running server's control store (SQLite, or PostgreSQL in node-postgres). */

let server: TestServer;
let owner: { client: TestClient };
let upstream: SimulatedUpstream;
let gateway: FastifyInstance;
let gatewayUrl: string;
const scratch = mkdtempSync(join(tmpdir(), 'gc-routes-admin-'));

beforeAll(async () => {
  server = await startServer();
  owner = await register(server);
  upstream = await startSimulatedUpstream({ realistic: false });
  // No upstream of its own for any provider: a route reaches one only by its document's base_url.
  ({ gateway, url: gatewayUrl } = await startGateway(server, { byProvider: {}, fallback: null }));
});
afterAll(async () => {
  await gateway.close();
  await upstream.close();
  await server.close();
  rmSync(scratch, { recursive: true, force: true });
});

interface Outcome {
  code: number;
  out: string;
  err: string;
}

/** Runs the admin command in process, as admin.test.ts does: its exit code, stdout and stderr. */
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

let files = 0;
/** A file in the scratch folder holding `content` (data as YAML, or text as it is). */
function file(content: unknown): string {
  const path = join(scratch, `routes-${++files}.yaml`);
  writeFileSync(path, typeof content === 'string' ? content : stringify(content));
  return path;
}

async function exported(): Promise<{ version: number; document: any; text: string }> {
  const { code, out } = await admin('routes', 'export');
  expect(code).toBe(0);
  const version = Number(/^# version (\d+), applied \d{4}-\d\d-\d\dT[\d:.]+Z$/m.exec(out)![1]);
  return { version, document: parse(out), text: out };
}

const models = async () => (await owner.client.get('/models')).body.models as { id: string; active: boolean }[];
const history = async () => (await admin('routes', 'history')).out;

/** The README's example: one route over two providers, the second reached at its own address. */
function twoProviderRoute(document: any, id: string): void {
  document.providers.backup = { api: 'openai', base_url: upstream.url };
  document.routes[id] = {
    kind: 'chat',
    price: { input: 42, output: 168, cache_write: 42, cache_read: 21 },
    prompt_cache: true,
    strategy: 'fallback',
    targets: [
      { provider: 'backup', model: 'gpt-4o-mini' },
      { provider: 'openai', model: 'gpt-4o-mini-2024-07-18' },
    ],
  };
}

describe('routes export', () => {
  it('prints the current version as YAML, its number and time in a comment; --out writes the same', async () => {
    const { version, text, document } = await exported();
    expect(text).toMatch(/^# version \d+, applied /);
    expect(document.routes['openai/gpt-4o-mini'].price).toEqual({
      input: 42,
      output: 168,
      cache_write: 42,
      cache_read: 21,
    });
    const out = join(scratch, 'exported.yaml');
    expect(await admin('routes', 'export', '--out', out)).toEqual({
      code: 0,
      out: `wrote version ${version} to ${out}`,
      err: '',
    });
    expect(readFileSync(out, 'utf8')).toBe(`${text}\n`);
  });

  it('exported then applied again is the same document: nothing is stored', async () => {
    const before = await history();
    const { version, text } = await exported();
    expect(await admin('routes', 'apply', '--file', file(text))).toEqual({
      code: 0,
      out: `version ${version} is this document already; nothing was stored`,
      err: '',
    });
    expect(await history()).toBe(before);
  });
});

describe('routes check', () => {
  it('exits 0 with a summary, or 1 naming each problem by its path, and stores nothing either way', async () => {
    const before = await history();
    const { document } = await exported();
    expect(await admin('routes', 'check', '--file', file(document))).toMatchObject({
      code: 0,
      out: expect.stringMatching(/^valid: \d+ route\(s\), \d+ active, over \d+ provider\(s\)$/),
      err: '',
    });
    document.routes['openai/gpt-4o'].targets[0].provider = 'opnai';
    delete document.routes['openai/gpt-4o-mini'].price;
    expect(await admin('routes', 'check', '--file', file(document))).toEqual({
      code: 1,
      out: '',
      err: [
        'routes.openai/gpt-4o-mini.price: missing: every route has a price (input, output, cache_write, cache_read; PKR per million tokens)',
        'routes.openai/gpt-4o.targets[0].provider: unknown provider "opnai"',
        'invalid: 2 problem(s); nothing was stored',
      ].join('\n'),
    });
    expect(await history()).toBe(before);
  });

  it('prints a warning for a key_env not set on this machine, and exits 0', async () => {
    const { document } = await exported();
    document.providers.openai.key_env = 'SVC_TEST_UNSET_ROUTES_KEY';
    const outcome = await admin('routes', 'check', '--file', file(document));
    expect(outcome.code).toBe(0);
    expect(outcome.err).toBe(
      'warning: providers.openai.key_env: SVC_TEST_UNSET_ROUTES_KEY is not set on this machine (the gateways that serve it need it)',
    );
  });
});

describe('routes check and apply, one document', () => {
  it('refuses a second --file (usage, exit 2) and stores nothing', async () => {
    const before = await history();
    const { document } = await exported();
    for (const verb of ['check', 'apply']) {
      expect(await admin('routes', verb, '--file', file(document), '--file', file(document))).toEqual({
        code: 2,
        out: '',
        err: '--file is given once: the routes document to read',
      });
    }
    expect(await history()).toBe(before);
  });
});

describe('routes check, anywhere', () => {
  it('needs no store: a data folder that does not exist stays so', async () => {
    const nowhere = join(scratch, 'no-data-folder');
    const spy = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const bad = file('providers: {}\nroutes:\n  a/b: {kind: chat}\n');
      expect(await runAdmin(['routes', 'check', '--file', bad, '--data-dir', nowhere], () => undefined)).toBe(1);
      expect(spy.mock.calls.map((call) => String(call[0]))).toContain(
        'routes.a/b.targets: missing: a route needs at least one target ({provider, model})',
      );
    } finally {
      spy.mockRestore();
    }
    expect(existsSync(nowhere)).toBe(false);
  });
});

describe('routes apply', () => {
  it('stores the next version, which the gateway serves from its next request; an invalid document changes nothing', async () => {
    const id = 'acme/fast-mini';
    const { version, document } = await exported();
    twoProviderRoute(document, id);
    expect(await admin('routes', 'apply', '--file', file(document))).toMatchObject({
      code: 0,
      out: expect.stringMatching(new RegExp(`^applied version ${version + 1}: `)),
    });
    expect(await models()).toContainEqual({ id, provider: 'acme', active: true });

    const key = (await owner.client.post('/keys', { project_id: await projectId(), name: 'routes' })).body;
    const client = new OpenAI({ apiKey: key.api_key, baseURL: gatewayUrl, maxRetries: 0 });
    const ask = () => client.chat.completions.create({ model: id, messages: [{ role: 'user', content: 'Hello' }] });
    const answer = await ask();
    expect(answer.choices[0]!.message.content).toBeTruthy();

    // Invalid: refused whole, the route still served as it was.
    const before = await history();
    const broken = structuredClone(document);
    delete broken.routes[id];
    broken.routes['openai/gpt-4o'].price.input = -1;
    const refused = await admin('routes', 'apply', '--file', file(broken));
    expect(refused.code).toBe(1);
    expect(refused.err).toBe(
      'routes.openai/gpt-4o.price.input: must not be negative, not -1\ninvalid: 1 problem(s); nothing was stored',
    );
    expect(await history()).toBe(before);
    await ask();

    // Removed: an unknown model from the very next request.
    delete document.routes[id];
    delete document.providers.backup;
    expect((await admin('routes', 'apply', '--file', file(document))).code).toBe(0);
    await expect(ask()).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    expect((await models()).map((model) => model.id)).not.toContain(id);
  });

  it('with --expect-version, is refused unless that is the current version, saying which is', async () => {
    const { version, document } = await exported();
    document.routes['openai/gpt-4.1'].price.input = 555;
    const edited = file(document);
    document.routes['openai/gpt-4.1'].price.input = 556;
    const racing = file(document);
    expect(await admin('routes', 'apply', '--file', edited, '--expect-version', String(version))).toMatchObject({
      code: 0,
      out: expect.stringMatching(new RegExp(`^applied version ${version + 1}: `)),
    });
    const before = await history();
    expect(await admin('routes', 'apply', '--file', racing, '--expect-version', String(version))).toEqual({
      code: 1,
      out: '',
      err:
        `refused: the current version is ${version + 1}, not ${version}; nothing was stored. ` +
        `Export version ${version + 1}, make your change to it, and apply with --expect-version ${version + 1}`,
    });
    expect(await history()).toBe(before);
    const prices = (await owner.client.get('/models/prices')).body.prices;
    expect(prices.find((p: { model: string }) => p.model === 'openai/gpt-4.1').input).toBe(555);
  });
});

describe('routes history', () => {
  it('lists every version, newest first, when it was applied and by what', async () => {
    const lines = (await history()).split('\n');
    expect(lines[0]).toBe('version  applied at                source');
    const versions = lines.slice(1).map((line) => /^\s*(\d+) {2}(\S+) {2}(.+)$/.exec(line)!);
    expect(versions.map((match) => Number(match[1]))).toEqual(
      Array.from({ length: versions.length }, (_, i) => versions.length - i),
    );
    expect(versions.at(-1)![3]).toBe('seed');
    expect(versions[0]![3]).toBe('routes apply');
    for (const match of versions) expect(Number.isNaN(Date.parse(match[2]!))).toBe(false);
  });
});

describe('routes usage mistakes', () => {
  it.each([
    [['routes'], /^routes needs one of: export/],
    [['routes', 'frobnicate'], /^unknown routes command "frobnicate"/],
    [['routes', 'apply'], /^--file is required/],
    [['routes', 'check'], /^--file is required/],
    [['routes', 'apply', '--file', '/no/such/routes.yaml'], /^cannot read \/no\/such\/routes.yaml/],
    [
      ['routes', 'apply', '--file', 'x.yaml', '--expect-version', 'latest'],
      /^--expect-version must be a version number/,
    ],
    [['routes', 'apply', '--file', 'x.yaml', '--expect-version', '0'], /^--expect-version must be a version number/],
    [['routes', 'export', '--out', '/no/such/folder/routes.yaml'], /^cannot write \/no\/such\/folder\/routes.yaml/],
  ])('admin %j exits 2 with a clear message and changes nothing', async (args, message) => {
    const before = await history();
    const outcome = await admin(...args);
    expect(outcome.code).toBe(2);
    expect(outcome.err).toMatch(message);
    expect(await history()).toBe(before);
  });
});

async function projectId(): Promise<string> {
  return (await owner.client.get('/projects')).body.projects[0].id;
}
