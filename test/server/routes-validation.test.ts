import { describe, expect, it } from 'vitest';
import { catalogueDocument, DEFAULT_FAILOVER } from '../../server/domain/routes-document.js';
import { parseRoutesFile, routesYaml } from '../../server/domain/routes-file.js';
import { formatProblem, type RoutesCheck } from '../../server/domain/routes-validation.js';

/** The environment `key_env` is looked up in: one variable set. */
const ENV = { SVC_TEST_OPENAI_KEY: 'sk-test' };

/** A valid document, as a file would say it, to break one field at a time. */
function sample(): any {
  return {
    providers: {
      openai: { api: 'openai', base_url: 'https://api.openai.com/v1', key_env: 'SVC_TEST_OPENAI_KEY', byok: 'openai' },
      azure: { api: ['openai'], base_url: 'http://10.0.0.7:8080/openai' },
      claude: { api: 'anthropic' },
      both: { api: ['anthropic', 'openai'] },
    },
    routes: {
      'openai/gpt-4o': {
        kind: 'chat',
        price: { input: 700, output: 2800, cache_write: 700, cache_read: 350 },
        prompt_cache: true,
        strategy: 'loadbalance',
        targets: [
          { provider: 'openai', model: 'gpt-4o-2024-08-06', weight: 3 },
          { provider: 'azure', model: 'gpt-4o' },
        ],
        failover: { retries: 0 },
      },
      'svc/embed': {
        kind: 'embeddings',
        price: { input: 6, output: 0, cache_write: 0, cache_read: 0 },
        active: false,
        targets: [{ provider: 'both', model: 'text-embedding-3-small' }],
      },
    },
  };
}

const check = (document: unknown): RoutesCheck => parseRoutesFile(JSON.stringify(document), ENV);

/** The problems of a document with `edit` made to the sample, as `routes check` prints them. */
function problemsOf(edit: (document: any) => void): string[] {
  const document = sample();
  edit(document);
  const checked = check(document);
  if (checked.ok) throw new Error('the document was accepted');
  return checked.problems.map(formatProblem);
}

describe('a valid routes document', () => {
  it('is read with every default filled in', () => {
    const checked = check(sample());
    // A provider no route uses is worth a word, not a refusal.
    expect(checked).toMatchObject({
      ok: true,
      warnings: [{ path: 'providers.claude', message: 'no route uses this provider' }],
    });
    if (!checked.ok) return;
    const { document } = checked;
    expect(document.failover).toEqual(DEFAULT_FAILOVER);
    expect(document.providers.azure).toEqual({
      api: ['openai'],
      base_url: 'http://10.0.0.7:8080/openai',
      key_env: null,
      byok: null,
    });
    expect(document.providers.claude).toEqual({ api: ['anthropic'], base_url: null, key_env: null, byok: null });
    expect(document.routes['openai/gpt-4o']).toEqual({
      kind: 'chat',
      price: { input: 700, output: 2800, cache_write: 700, cache_read: 350 },
      prompt_cache: true,
      strategy: 'loadbalance',
      active: true,
      byok: true,
      targets: [
        { provider: 'openai', model: 'gpt-4o-2024-08-06', weight: 3 },
        { provider: 'azure', model: 'gpt-4o', weight: 1 },
      ],
      // A route's own bounds stay partial: the rest are the document's.
      failover: { retries: 0 },
    });
    expect(document.routes['svc/embed']).toMatchObject({
      prompt_cache: false,
      strategy: 'fallback',
      active: false,
      byok: true,
    });
  });

  it('takes YAML as well as JSON, and the document-wide failover over the defaults', () => {
    const yaml = `
failover:
  max_attempts: 6
  breaker_cooldown_ms: 30000
providers:
  openai: {api: openai}
routes:
  openai/gpt-4o-mini:
    kind: chat
    price: {input: 42, output: 168, cache_write: 42, cache_read: 21}
    targets:
      - {provider: openai, model: gpt-4o-mini}
`;
    const checked = parseRoutesFile(yaml, ENV);
    expect(checked.ok).toBe(true);
    if (checked.ok) {
      expect(checked.document.failover).toEqual({ ...DEFAULT_FAILOVER, max_attempts: 6, breaker_cooldown_ms: 30_000 });
    }
  });

  it('version 1, the catalogue, is valid, and exported then read again is the same document', () => {
    const document = catalogueDocument();
    const yaml = routesYaml({ version: 1, applied_at: Date.parse('2026-11-02T10:00:00Z'), document });
    expect(yaml.startsWith('# version 1, applied 2026-11-02T10:00:00.000Z\n')).toBe(true);
    const again = parseRoutesFile(yaml, {});
    expect(again).toEqual({ ok: true, document, warnings: [] });
    // Its order too: a file exported is the document as stored.
    if (again.ok) expect(JSON.stringify(again.document)).toBe(JSON.stringify(document));
  });
});

describe('an invalid routes document names each problem by its path', () => {
  it('a target on a provider the document does not have', () => {
    expect(
      problemsOf((d) => {
        d.routes['openai/gpt-4o'].targets[1].provider = 'opnai';
      }),
    ).toEqual(['routes.openai/gpt-4o.targets[1].provider: unknown provider "opnai"']);
  });

  it('an id defined twice, in YAML or JSON, providers, routes or fields', () => {
    const yaml = `providers:
  openai: {api: openai}
  openai: {api: anthropic}
routes:
  openai/gpt-4o:
    kind: chat
    kind: embeddings
    price: {input: 1, output: 1, cache_write: 1, cache_read: 1}
    targets: [{provider: openai, model: gpt-4o}]
`;
    const yamlCheck = parseRoutesFile(yaml, ENV);
    expect(yamlCheck.ok).toBe(false);
    if (!yamlCheck.ok) {
      expect(yamlCheck.problems.map(formatProblem)).toEqual([
        'providers.openai: defined twice (lines 2 and 3): each id and field once',
        'routes.openai/gpt-4o.kind: defined twice (lines 6 and 7): each id and field once',
      ]);
    }
    const json = '{"providers": {"openai": {"api": "openai"}}, "routes": {"a/b": {}, "a/b": {}}}';
    const jsonCheck = parseRoutesFile(json, ENV);
    expect(jsonCheck.ok ? [] : jsonCheck.problems.map(formatProblem)).toEqual([
      'routes.a/b: defined twice (line 1): each id and field once',
    ]);
  });

  it('a route without targets, or with the same target twice', () => {
    expect(problemsOf((d) => delete d.routes['svc/embed'].targets)).toEqual([
      'routes.svc/embed.targets: missing: a route needs at least one target ({provider, model})',
    ]);
    expect(problemsOf((d) => (d.routes['svc/embed'].targets = []))).toEqual([
      'routes.svc/embed.targets: must name at least one target',
    ]);
    expect(
      problemsOf((d) => (d.routes['openai/gpt-4o'].targets[1] = { provider: 'openai', model: 'gpt-4o-2024-08-06' })),
    ).toEqual(['routes.openai/gpt-4o.targets[1]: the same provider and model as targets[0]']);
  });

  it('a weight that is not a positive number', () => {
    expect(problemsOf((d) => (d.routes['openai/gpt-4o'].targets[0].weight = 0))).toEqual([
      'routes.openai/gpt-4o.targets[0].weight: must be more than 0, not 0',
    ]);
    expect(problemsOf((d) => (d.routes['openai/gpt-4o'].targets[0].weight = -2))).toEqual([
      'routes.openai/gpt-4o.targets[0].weight: must be more than 0, not -2',
    ]);
    expect(problemsOf((d) => (d.routes['openai/gpt-4o'].targets[0].weight = 'heavy'))).toEqual([
      'routes.openai/gpt-4o.targets[0].weight: must be a number, not "heavy"',
    ]);
  });

  it('a price missing, in part, negative or not a finite number: no route is ever served at a cost of 0', () => {
    expect(problemsOf((d) => delete d.routes['svc/embed'].price)).toEqual([
      'routes.svc/embed.price: missing: every route has a price (input, output, cache_write, cache_read; PKR per million tokens)',
    ]);
    expect(problemsOf((d) => delete d.routes['svc/embed'].price.cache_read)).toEqual([
      'routes.svc/embed.price.cache_read: missing',
    ]);
    expect(problemsOf((d) => (d.routes['svc/embed'].price.output = -1))).toEqual([
      'routes.svc/embed.price.output: must not be negative, not -1',
    ]);
    expect(problemsOf((d) => (d.routes['svc/embed'].price.input = '6'))).toEqual([
      'routes.svc/embed.price.input: must be a number, not "6"',
    ]);
    const infinite = parseRoutesFile(
      'providers: {openai: {api: openai}}\nroutes:\n  a/b: {kind: chat, price: {input: .inf, output: 1, cache_write: 0, cache_read: 0}, targets: [{provider: openai, model: m}]}\n',
      ENV,
    );
    expect(infinite.ok ? [] : infinite.problems.map(formatProblem)).toEqual([
      'routes.a/b.price.input: must be a number, not Infinity',
    ]);
  });

  it('a kind a target’s provider cannot serve: embeddings go upstream in OpenAI’s format only; chat in either', () => {
    expect(problemsOf((d) => (d.routes['svc/embed'].targets[0].provider = 'claude'))).toEqual([
      'routes.svc/embed.targets[0].provider: provider "claude" speaks anthropic; the gateway sends embeddings requests ' +
        "upstream in openai format, so an embeddings route's provider must speak it",
    ]);
    // A chat route may mix them: each request goes to the targets that speak its API.
    const mixed = sample();
    mixed.routes['openai/gpt-4o'].targets[1].provider = 'claude';
    expect(check(mixed)).toMatchObject({ ok: true });
  });

  it('a base_url that is not an http or https address, or holds credentials', () => {
    const baseUrl = (value: unknown) => problemsOf((d) => (d.providers.azure.base_url = value));
    expect(baseUrl('ftp://files.example/v1')).toEqual([
      'providers.azure.base_url: must be an http or https address, not ftp',
    ]);
    expect(baseUrl('api.openai.com/v1')).toEqual([
      'providers.azure.base_url: must be an http or https address, not "api.openai.com/v1"',
    ]);
    expect(baseUrl('https://user:sk-secret@api.example/v1')).toEqual([
      'providers.azure.base_url: must not hold credentials: keys never enter the document (name the variable in key_env)',
    ]);
    expect(baseUrl('https://api.example/v1?key=1')).toEqual([
      'providers.azure.base_url: must not have a query or a fragment: the gateway adds the API path to it',
    ]);
  });

  it('a provider id outside [a-z0-9][a-z0-9_-]*, a route id with spaces', () => {
    expect(
      problemsOf((d) => {
        d.providers.OpenAI = { api: 'openai' };
        d.routes['openai/gpt-4o'].targets[0].provider = 'OpenAI';
      }),
    ).toEqual(['providers.OpenAI: a provider id is [a-z0-9][a-z0-9_-]*, 64 characters at most']);
    expect(problemsOf((d) => (d.routes['my model'] = d.routes['svc/embed']))).toEqual([
      'routes.my model: a route id is what callers send as model: letters, digits and . _ : @ + / -, 256 at most',
    ]);
  });

  it('unknown fields, each named, at every level', () => {
    expect(
      problemsOf((d) => {
        d.version = 3;
        d.providers.openai.api_key = 'sk-do-not-keep';
        d.routes['svc/embed'].prices = {};
        d.routes['openai/gpt-4o'].targets[0].weigth = 2;
        d.routes['openai/gpt-4o'].failover.retry = 2;
      }),
    ).toEqual([
      'version: unknown field (known here: failover, providers, routes)',
      'providers.openai.api_key: unknown field (known here: api, base_url, key_env, byok)',
      'routes.openai/gpt-4o.targets[0].weigth: unknown field (known here: provider, model, weight)',
      'routes.openai/gpt-4o.failover.retry: unknown field (known here: timeout_ms, answer_timeout_ms, first_byte_timeout_ms, ' +
        'stream_idle_timeout_ms, retries, max_attempts, backoff_ms, retry_after_max_ms, breaker_failures, breaker_cooldown_ms)',
      'routes.svc/embed.prices: unknown field (known here: kind, price, prompt_cache, strategy, active, byok, targets, failover)',
    ]);
  });

  it('a key_env that is not a variable name; one not set here is a warning only', () => {
    expect(problemsOf((d) => (d.providers.openai.key_env = 'sk-live-123'))).toEqual([
      'providers.openai.key_env: must be an environment variable\'s name (A-Z, 0-9, _; not a key: keys never enter the document), not "sk-live-123"',
    ]);
    const document = sample();
    document.providers.azure.key_env = 'SVC_AZURE_KEY_NOT_SET';
    const checked = check(document);
    expect(checked.ok).toBe(true);
    if (checked.ok) {
      expect(checked.warnings.map(formatProblem)).toEqual([
        'providers.azure.key_env: SVC_AZURE_KEY_NOT_SET is not set on this machine (the gateways that serve it need it)',
        'providers.claude: no route uses this provider',
      ]);
      expect(checked.document.providers.azure!.key_env).toBe('SVC_AZURE_KEY_NOT_SET');
    }
  });

  it('failover bounds outside their range or not whole numbers', () => {
    expect(
      problemsOf((d) => {
        d.failover = { max_attempts: 0, retries: 11 };
        d.routes['openai/gpt-4o'].failover = { first_byte_timeout_ms: 1.5, max_attempts: 21 };
      }),
    ).toEqual([
      'failover.retries: must be a whole number from 0 to 10, not 11',
      'failover.max_attempts: must be a whole number from 1 to 20, not 0',
      'routes.openai/gpt-4o.failover.first_byte_timeout_ms: must be a whole number from 100 to 3600000, not 1.5',
      'routes.openai/gpt-4o.failover.max_attempts: must be a whole number from 1 to 20, not 21',
    ]);
  });

  it('a wire format, kind, strategy or flag the document does not know', () => {
    expect(
      problemsOf((d) => {
        d.providers.claude.api = ['anthropic', 'anthropic'];
        d.providers.azure.api = 'gemini';
        d.routes['openai/gpt-4o'].strategy = 'random';
        d.routes['svc/embed'].kind = 'images';
        d.routes['svc/embed'].active = 'yes';
        d.routes['svc/embed'].byok = 0;
      }),
    ).toEqual([
      'providers.azure.api: must be openai or anthropic, not "gemini"',
      'providers.claude.api: lists a format twice',
      'routes.openai/gpt-4o.strategy: must be fallback or loadbalance, not "random"',
      // The route's target on azure is not checked against a provider that is itself invalid.
      'routes.svc/embed.kind: must be chat or embeddings, not "images"',
      'routes.svc/embed.active: must be true or false, not "yes"',
      'routes.svc/embed.byok: must be true or false, not 0',
    ]);
  });

  it('a file that is no document at all', () => {
    const problems = (text: string) => {
      const checked = parseRoutesFile(text, ENV);
      return checked.ok ? [] : checked.problems.map(formatProblem);
    };
    expect(problems('')).toEqual(['the document is empty: it needs providers and routes']);
    expect(problems('[1, 2]')).toEqual(['must be a map of failover, providers, routes, not a list']);
    expect(problems('providers: {openai: {api: openai}\nroutes: {}')[0]).toMatch(/line 2/);
    expect(problems('providers: {}')).toEqual(['routes: missing: a map of routes by id']);
  });

  it('no routes at all is valid, with a warning', () => {
    const checked = parseRoutesFile('providers: {}\nroutes: {}\n', ENV);
    expect(checked).toMatchObject({
      ok: true,
      warnings: [{ path: 'routes', message: 'no routes: every request will be refused as an unknown model' }],
    });
  });
});
