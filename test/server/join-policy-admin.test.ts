import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runAdmin } from '../../server/admin/commands.js';
import { register, startServer, type TestClient, type TestServer, storeFlags } from './harness.js';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

interface Outcome {
  code: number;
  out: string;
  err: string;
}

/** Runs `npm run admin -- <args>` in process against the running server's data folder, as admin.test.ts does. */
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

const joinPolicy = async (client: TestClient) => (await client.get('/organization/join-policy')).body;
const newestEvent = async (client: TestClient) => (await client.get('/activity')).body.events[0];

describe('set-join-policy', () => {
  it('closes an organisation, records who may join in its activity, and opens it again', async () => {
    const { client, org } = await register(server);
    expect(await ok('set-join-policy', '--org', org.toUpperCase(), '--policy', 'closed')).toBe(
      `join policy of ${org} is now closed`,
    );
    expect(await joinPolicy(client)).toEqual({ policy: 'closed', domains: [] });
    expect(await newestEvent(client)).toMatchObject({
      actor: null,
      action: 'org.join_policy_changed',
      target: 'closed',
      source_ip: 'local',
    });

    expect(await ok('set-join-policy', '--org', org, '--policy', 'open')).toBe(`join policy of ${org} is now open`);
    expect(await joinPolicy(client)).toEqual({ policy: 'open', domains: [] });
    expect(await newestEvent(client)).toMatchObject({ action: 'org.join_policy_changed', target: 'open' });
  });

  it('takes domains trimmed, in lower case, once each, and sorted; another policy drops them', async () => {
    const { client, org } = await register(server);
    const out = await ok(
      'set-join-policy',
      '--org',
      org,
      '--policy',
      'domains',
      '--domains',
      ' B.Example, a.example ,b.example,XN--BCHER-KVA.example',
    );
    expect(out).toBe(`join policy of ${org} is now domains: a.example, b.example, xn--bcher-kva.example`);
    expect(await joinPolicy(client)).toEqual({
      policy: 'domains',
      domains: ['a.example', 'b.example', 'xn--bcher-kva.example'],
    });
    expect(await newestEvent(client)).toMatchObject({
      actor: null,
      action: 'org.join_policy_changed',
      target: 'domains: a.example, b.example, xn--bcher-kva.example',
    });

    // A new list replaces the old one whole.
    await ok('set-join-policy', '--org', org, '--policy', 'domains', '--domains', 'c.example');
    expect(await joinPolicy(client)).toEqual({ policy: 'domains', domains: ['c.example'] });
    await ok('set-join-policy', '--org', org, '--policy', 'closed');
    expect(await joinPolicy(client)).toEqual({ policy: 'closed', domains: [] });
  });

  it('is listed in the help', async () => {
    expect(await ok('help')).toContain(
      'set-join-policy --org NAME --policy open|closed|domains [--domains a.example,b.example]',
    );
  });
});

describe('set-join-policy with bad operator input', () => {
  let client: TestClient;
  let org: string;

  async function state() {
    const [policy, activity, members] = await Promise.all(
      ['/organization/join-policy', '/activity', '/members'].map((path) => client.get(path)),
    );
    return { policy: policy!.body, activity: activity!.body, members: members!.body };
  }

  let before: Awaited<ReturnType<typeof state>>;
  beforeAll(async () => {
    ({ client, org } = await register(server));
    await ok('set-join-policy', '--org', org, '--policy', 'domains', '--domains', 'kept.example');
    before = await state();
    expect(before.policy).toEqual({ policy: 'domains', domains: ['kept.example'] });
  });

  const domains = (list: string) => ['--org', '{org}', '--policy', 'domains', '--domains', list];
  it.each([
    [['--org', 'No Such Organisation', '--policy', 'closed'], /no organization named No Such Organisation/],
    [['--policy', 'closed'], /--org is required/],
    [['--org', '{org}'], /--policy is required/],
    [['--org', '{org}', '--policy', 'sometimes'], /--policy must be open, closed or domains/],
    [['--org', '{org}', '--policy', 'Closed'], /--policy must be open, closed or domains/],
    [['--org', '{org}', '--policy', 'domains'], /--domains is required with --policy domains/],
    [domains(''), /--domains is required with --policy domains/],
    [domains(' , '), /--domains: an empty entry is not a domain name/],
    [['--org', '{org}', '--policy', 'domains', '--domains'], /--domains/],
    [['--org', '{org}', '--policy', 'open', '--domains', 'a.example'], /--domains goes only with --policy domains/],
    [['--org', '{org}', '--policy', 'closed', '--domains', ''], /--domains goes only with --policy domains/],
    [domains('a.example,,b.example'), /an empty entry is not a domain name/],
    [domains('*.a.example'), /"\*\.a\.example" is not a domain name such as a\.example/],
    [domains('@a.example'), /"@a\.example" is not a domain name/],
    [domains('someone@a.example'), /"someone@a\.example" is not a domain name/],
    [domains('localhost'), /"localhost" is not a domain name/],
    [domains('10.0.0.1'), /"10\.0\.0\.1" is not a domain name/],
    [domains('a.example.'), /"a\.example\." is not a domain name/],
    [domains('a..example'), /"a\.\.example" is not a domain name/],
    [domains('b.example,-a.example'), /"-a\.example" is not a domain name/],
    [['--org', '{org}', '--policy', 'domains', '--domains=a-.example'], /"a-\.example" is not a domain name/],
    [domains('a_b.example'), /"a_b\.example" is not a domain name/],
    [domains('bücher.example'), /"bücher\.example" is not a domain name/],
    [domains(`${'x'.repeat(64)}.example`), /is not a domain name/],
    [domains('good.example,bad domain.example'), /"bad domain\.example" is not a domain name/],
    [domains(Array.from({ length: 101 }, (_, i) => `d${i}.example`).join(',')), /at most 100 domains/],
  ])('admin set-join-policy %j exits 2 with a clear message and changes nothing', async (args, message) => {
    const outcome = await admin('set-join-policy', ...args.map((a) => a.replace('{org}', org)));
    expect(outcome.code).toBe(2);
    expect(outcome.err).toMatch(message);
    expect(outcome.out).toBe('');
    expect(await state()).toEqual(before);
  });
});
