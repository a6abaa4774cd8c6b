import BetterSqlite3 from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { CookieJar } from 'tough-cookie';
import { request as httpRequest } from 'undici';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { runAdmin } from '../../server/admin/commands.js';
import { buildApp, type App } from '../../server/app.js';
import { resolveConfig, type ServerConfig } from '../../server/config.js';
import pg from 'pg';
import { DEFAULT_THROTTLE } from '../../server/security/sign-in-throttle.js';
import { BIGINT_AS_NUMBER } from '../../server/stores/postgres.js';
import type { PgRequestLog } from '../../server/stores/telemetry/postgres/request-log.js';
import { freshDatabase } from '../postgres/database.js';

export interface TestServer {
  app: App;
  baseUrl: string;
  dataDir: string;
  config: ServerConfig;
  /** Everything the server logged so far. */
  logs(): string;
  /** Moves the server's clock forward. */
  advance(ms: number): void;
  close(): Promise<void>;
}

/**
 * The stores this run's servers use: SQLite in the data folder, or with
 * `GC_TEST_CONTROL_STORE=postgres` (vitest's node-postgres project) a fresh PostgreSQL database
 * each, holding the control store and the request log both, so that one suite checks both. A
 * test that names a telemetry file (`telemetryDbPath`) is about that file: its request log
 * stays there.
 */
const ON_POSTGRES = process.env.GC_TEST_CONTROL_STORE === 'postgres';

/** A real server on a free loopback port with its own temporary data folder. */
export async function startServer(overrides: Partial<ServerConfig> = {}): Promise<TestServer> {
  const dataDir = overrides.dataDir ?? mkdtempSync(join(tmpdir(), 'gc-server-'));
  const database = ON_POSTGRES && overrides.databaseUrl === undefined ? await freshDatabase() : null;
  let offset = 0;
  const config = resolveConfig({
    passwordCost: 10,
    logLevel: 'info',
    now: () => Date.now() + offset,
    port: 0,
    // Suites register many accounts from one address; the throttling tests set their own limits.
    throttle: { ...DEFAULT_THROTTLE, addressFailures: 10_000, addressRegistrations: 10_000 },
    ...(database ? { databaseUrl: database.url } : {}),
    ...(database && overrides.telemetryDbPath === undefined ? { telemetryUrl: database.url } : {}),
    ...overrides,
    dataDir,
  });
  let logged = '';
  const logDestination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logged += chunk.toString('utf8');
      done();
    },
  });
  const app = await buildApp(config, { logDestination });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('server has no port');
  return {
    app,
    baseUrl: `http://127.0.0.1:${address.port}/api`,
    dataDir,
    config,
    logs: () => logged,
    advance: (ms) => {
      offset += ms;
    },
    close: async () => {
      await app.close();
      if (!overrides.dataDir) rmSync(dataDir, { recursive: true, force: true });
      await database?.drop();
    },
  };
}

export interface Answer<T = any> {
  status: number;
  body: T;
  headers: Record<string, string | string[] | undefined>;
}

/** An HTTP client with its own cookie jar, as a browser or the console's host would be. */
export class TestClient {
  constructor(
    readonly baseUrl: string,
    /** Shared by clients of several servers on this host, as a browser's is: cookies ignore the port. */
    readonly jar = new CookieJar(),
  ) {}

  async call<T = any>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Answer<T>> {
    const url = this.baseUrl + path;
    const cookie = await this.jar.getCookieString(url);
    const sent: Record<string, string> = { ...headers };
    if (cookie) sent.cookie = cookie;
    if (body !== undefined && !sent['content-type']) sent['content-type'] = 'application/json';
    const response = await httpRequest(url, {
      method: method as 'GET',
      headers: sent,
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const setCookie = response.headers['set-cookie'];
    for (const line of Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : []) {
      await this.jar.setCookie(line, url);
    }
    const text = await response.body.text();
    return {
      status: response.statusCode,
      body: text ? JSON.parse(text) : undefined,
      headers: response.headers as Answer['headers'],
    };
  }

  get<T = any>(path: string, headers?: Record<string, string>) {
    return this.call<T>('GET', path, undefined, headers);
  }
  post<T = any>(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.call<T>('POST', path, body, headers);
  }
  patch<T = any>(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.call<T>('PATCH', path, body, headers);
  }
  delete<T = any>(path: string, headers?: Record<string, string>) {
    return this.call<T>('DELETE', path, undefined, headers);
  }

  /** The value of a cookie the jar would send to `path`. */
  async cookie(name: string, path = '/auth/refresh'): Promise<string | undefined> {
    const cookies = await this.jar.getCookies(this.baseUrl + path);
    return cookies.find((c) => c.key === name)?.value;
  }
}

let counter = 0;
/** A unique email and organisation name per call, so tests never collide. */
export function unique(label = 'user'): { email: string; org: string } {
  counter++;
  const tag = `${label}-${process.pid}-${counter}-${Math.random().toString(36).slice(2, 8)}`;
  return { email: `${tag}@example.test`, org: `Org ${tag}` };
}

export const PASSWORD = 'correct horse battery staple';

/** Registers an account (founding or joining `org`) and returns its signed-in client. */
export async function register(
  server: TestServer,
  options: { email?: string; org?: string; password?: string } = {},
): Promise<{ client: TestClient; email: string; org: string; body: any }> {
  const fresh = unique();
  const email = options.email ?? fresh.email;
  const org = options.org ?? fresh.org;
  const client = new TestClient(server.baseUrl);
  const answer = await client.post('/auth/register', {
    email,
    password: options.password ?? PASSWORD,
    organization_name: org,
  });
  if (answer.status !== 201) throw new Error(`register failed: ${answer.status} ${JSON.stringify(answer.body)}`);
  return { client, email, org, body: answer.body };
}

/** A new organisation, signed in as its owner: its id and its first project's (every organisation starts with one). */
export async function registerOrg(
  server: TestServer,
): Promise<{ client: TestClient; org: string; orgId: string; projectId: string }> {
  const { client, org } = await register(server);
  const orgId = (await server.app.control.organizations.findByName(org))!.id;
  const projectId: string = (await client.get('/projects')).body.projects[0].id;
  return { client, org, orgId, projectId };
}

/** Runs an operator command on the server's data folder; fails with its output unless it succeeds, else returns what it printed. */
/** One statement on its own connection to the database at `url`: the rows it returns. */
async function postgresRows<R>(url: string, sql: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: url, types: BIGINT_AS_NUMBER });
  await client.connect();
  try {
    return (await client.query(sql)).rows as R[];
  } finally {
    await client.end();
  }
}

/**
 * Runs one statement on the server's control store beside the server, as someone holding the
 * database file or its credentials would: the rows it returns, or the store's own error.
 */
export async function controlSql<R>(server: TestServer, sql: string): Promise<R[]> {
  const { databaseUrl } = server.config;
  if (databaseUrl !== undefined) return postgresRows<R>(databaseUrl, sql);
  const db = new BetterSqlite3(join(server.dataDir, 'control.db'), { fileMustExist: true, timeout: 5_000 });
  try {
    const statement = db.prepare(sql);
    if (statement.reader) return statement.all() as R[];
    statement.run();
    return [];
  } finally {
    db.close();
  }
}

/** The admin command's flags for the server's stores: its data folder, and its PostgreSQL databases if it has them. */
export function storeFlags(server: TestServer): string[] {
  const { databaseUrl, telemetryUrl } = server.config;
  return [
    '--data-dir',
    server.dataDir,
    ...(databaseUrl === undefined ? [] : ['--database-url', databaseUrl]),
    ...(telemetryUrl === undefined ? [] : ['--telemetry-url', telemetryUrl]),
  ];
}

/** Where `recordRequests` writes the server's request log: its telemetry file, or its PostgreSQL store. */
export function requestLog(server: TestServer): string | PgRequestLog {
  return server.config.telemetryUrl === undefined
    ? server.config.telemetryDbPath
    : (server.app.telemetry as PgRequestLog);
}

/** Runs one read on the server's request log beside the server: the rows it returns. */
export async function telemetrySql<R>(server: TestServer, sql: string): Promise<R[]> {
  const { telemetryUrl, telemetryDbPath } = server.config;
  if (telemetryUrl !== undefined) return postgresRows<R>(telemetryUrl, sql);
  const db = new BetterSqlite3(telemetryDbPath, { readonly: true, fileMustExist: true, timeout: 5_000 });
  try {
    return db.prepare(sql).all() as R[];
  } finally {
    db.close();
  }
}

export async function runOperator(server: TestServer, ...args: string[]): Promise<string> {
  const lines: string[] = [];
  const code = await runAdmin([...args, ...storeFlags(server)], (line) => lines.push(line));
  if (code !== 0) throw new Error(`admin ${args.join(' ')} exited with ${code}:\n${lines.join('\n')}`);
  return lines.join('\n');
}

/**
 * Applies a new version of the server's routes document as an operator would: the current one
 * exported, changed by `edit` (the file's data, as YAML reads it), applied. What `routes apply` printed.
 */
export async function editRoutes(server: TestServer, edit: (document: any) => void): Promise<string> {
  const file = join(server.dataDir, `routes-${randomUUID()}.yaml`);
  try {
    await runOperator(server, 'routes', 'export', '--out', file);
    const document = parseYaml(readFileSync(file, 'utf8'));
    edit(document);
    writeFileSync(file, stringifyYaml(document));
    return await runOperator(server, 'routes', 'apply', '--file', file);
  } finally {
    rmSync(file, { force: true });
  }
}

/** Adds a priced chat route served by the `openai` provider (its own provider by its id's prefix). */
export function addRoute(server: TestServer, id: string, options: { active?: boolean } = {}): Promise<string> {
  return editRoutes(server, (document) => {
    document.routes[id] = {
      kind: 'chat',
      price: { input: 10, output: 20, cache_write: 0, cache_read: 0 },
      active: options.active ?? true,
      targets: [{ provider: 'openai', model: id.slice(id.indexOf('/') + 1) }],
    };
  });
}
