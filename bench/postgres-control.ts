import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import autocannon, { type Options as CannonOptions } from 'autocannon';
import pg from 'pg';
import { runAdmin } from '../server/admin/commands.js';
import { startCluster } from '../test/postgres/cluster.js';
import { cpuMs, treeCpuMs } from './cpu-time.js';
import { startUpstream } from './gateway.js';
import type { ApiClient } from './http.js';
import type { Child } from './processes.js';
import type { ControlStoreRun, Figure, PostgresControlReport } from './report.js';
import { signIn, startServer, type Cleanups } from './server.js';
import { percentile, round } from './stats.js';

/**
 * The control store on PostgreSQL against SQLite, in one run on one machine: GET /keys and the
 * gateway's requests (each one an admission, whose rate and credit hold PostgreSQL keeps for every
 * replica), and what each request costs the database in CPU. A 2-core machine cannot show replicas
 * adding throughput; the database's CPU per request says how many one database can carry.
 * The request log stays in SQLite on both sides here: postgres-request-log.ts compares the two
 * request logs.
 */

const CONNECTIONS = 50;
/**
 * Keys the gateway's load cycles through: traffic spread over keys, as a platform's is. One key
 * alone would measure its lock in the database, taken by one admission after another.
 */
const GATEWAY_KEYS = 20;
const ROUNDS = 3;
const BACKENDS = ['sqlite', 'postgres'] as const;
type Backend = (typeof BACKENDS)[number];
type Load = keyof PostgresControlReport['rounds'];

const CHAT = JSON.stringify({
  model: 'openai/gpt-4o-mini',
  messages: [{ role: 'user', content: 'Benchmark prompt: what does a gateway add to a request?' }],
});

interface Target {
  server: Child;
  client: ApiClient;
  gatewayUrl: string;
  apiKeys: string[];
}

/** A database of its own in a throwaway cluster with fsync on, stopped with the run. */
export async function startBenchDatabase(cleanups: Cleanups): Promise<{ url: string; pid: () => number }> {
  const cluster = await startCluster({ durable: true });
  cleanups.push(() => cluster.stop());
  const admin = new pg.Client({ connectionString: cluster.url });
  await admin.connect();
  try {
    await admin.query('CREATE DATABASE bench');
  } finally {
    await admin.end();
  }
  const url = new URL(cluster.url);
  url.pathname = '/bench';
  return { url: url.toString(), pid: () => cluster.pid() };
}

/**
 * Copies the control store of `dataDir` (a seeded SQLite data folder) into `databaseUrl` with
 * `admin migrate-store`, and makes a second folder (returned) with the same request log and
 * secrets, for the server on PostgreSQL.
 */
export async function copyControlStore(
  dataDir: string,
  temp: string,
  databaseUrl: string,
  log: (line: string) => void,
): Promise<string> {
  log('copying the control store into PostgreSQL (admin migrate-store)');
  const code = await runAdmin(['migrate-store', '--data-dir', dataDir, '--database-url', databaseUrl], () => {});
  if (code !== 0) throw new Error(`migrate-store exited with ${code}`);
  const pgDir = join(temp, 'data-postgres');
  mkdirSync(pgDir, { mode: 0o700 });
  for (const file of ['telemetry.db', 'telemetry.db-wal', 'vault-master.key', 'key-hash.secret']) {
    if (existsSync(join(dataDir, file))) copyFileSync(join(dataDir, file), join(pgDir, file));
  }
  return pgDir;
}

/**
 * `dataDir` served from SQLite, and `pgDir` (`copyControlStore`) with its control store in
 * `database`. The gateway's load writes rows into both folders' request logs: run it last.
 */
export async function measureControlStores(o: {
  dataDir: string;
  pgDir: string;
  temp: string;
  database: { url: string; pid: () => number };
  seconds: number;
  log: (line: string) => void;
  cleanups: Cleanups;
}): Promise<PostgresControlReport> {
  const databaseUrl = o.database.url;
  const pgDir = o.pgDir;
  const upstream = await startUpstream(o.temp);
  o.cleanups.push(() => upstream.stop());
  const targets: Record<Backend, Target> = {
    sqlite: await startTarget(o.dataDir, o.temp, upstream.url, 'sqlite', {}, o.cleanups),
    postgres: await startTarget(pgDir, o.temp, upstream.url, 'postgres', { SVC_DATABASE_URL: databaseUrl }, o.cleanups),
  };
  o.log(`servers: SQLite pid ${targets.sqlite.server.pid}, PostgreSQL pid ${targets.postgres.server.pid}`);

  const rounds: PostgresControlReport['rounds'] = { keys: [], gateway: [] };
  for (let r = 0; r < ROUNDS; r++) {
    for (const load of ['keys', 'gateway'] as const) {
      const runs = {} as Record<Backend, ControlStoreRun>;
      for (const backend of BACKENDS) {
        runs[backend] = await measure(targets[backend], load, o.seconds, o.database.pid());
      }
      rounds[load].push(runs);
      o.log(
        `  round ${r + 1}/${ROUNDS} ${load}: SQLite ${round(runs.sqlite.rps, 0)} req/s, ` +
          `PostgreSQL ${round(runs.postgres.rps, 0)} req/s (database ${runs.postgres.databaseCpuUs} µs CPU a request)`,
      );
    }
  }
  for (const target of Object.values(targets)) await target.server.stop();
  await upstream.stop();
  const medians = {
    keys: medianRuns(rounds.keys),
    gateway: medianRuns(rounds.gateway),
  };
  return { connections: CONNECTIONS, seconds: o.seconds, rounds, medians, figures: figures(medians) };
}

async function startTarget(
  dataDir: string,
  temp: string,
  upstreamUrl: string,
  name: Backend,
  env: NodeJS.ProcessEnv,
  cleanups: Cleanups,
): Promise<Target> {
  const { server, gatewayUrl } = await startServer(dataDir, temp, upstreamUrl, cleanups, { name, env });
  const client = await signIn(server);
  const projects = JSON.parse(await client.get('/projects')) as { projects: { id: string }[] };
  const apiKeys: string[] = [];
  for (let i = 0; i < GATEWAY_KEYS; i++) {
    const created = await client.send('POST', '/keys', {
      project_id: projects.projects[0]!.id,
      name: `bench ${name} ${i}`,
      use_platform_max_rate_limit: true,
    });
    if (created.status !== 201) throw new Error(`POST /keys: ${created.status} ${created.text.slice(0, 300)}`);
    apiKeys.push((JSON.parse(created.text) as { api_key: string }).api_key);
  }
  return { server, client, gatewayUrl, apiKeys };
}

/** One timed run after a one-second warm-up, with the CPU the server and the database used meanwhile. */
async function measure(target: Target, load: Load, seconds: number, postmaster: number): Promise<ControlStoreRun> {
  const options: CannonOptions =
    load === 'keys'
      ? { url: `${target.client.baseUrl}/keys`, connections: CONNECTIONS, headers: { cookie: target.client.cookie } }
      : {
          url: `${target.gatewayUrl}/chat/completions`,
          connections: CONNECTIONS,
          // Each connection cycles through the keys.
          requests: target.apiKeys.map((apiKey) => ({
            method: 'POST',
            path: new URL(`${target.gatewayUrl}/chat/completions`).pathname,
            headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
            body: CHAT,
          })),
        };
  await autocannon({ ...options, duration: 1 });
  const before = { server: cpuMs(target.server.pid), database: treeCpuMs(postmaster) };
  const result = await autocannon({ ...options, duration: seconds });
  const after = { server: cpuMs(target.server.pid), database: treeCpuMs(postmaster) };
  if (result.errors > 0 || result.non2xx > 0) {
    throw new Error(`autocannon ${load}: ${result.errors} errors, ${result.non2xx} non-2xx answers`);
  }
  const requests = result.requests.total;
  const perRequest = (a: number | null, b: number | null) =>
    a === null || b === null || requests === 0 ? null : round(((b - a) * 1000) / requests, 1);
  return {
    rps: result.requests.average,
    serverCpuUs: perRequest(before.server, after.server),
    databaseCpuUs: perRequest(before.database, after.database),
  };
}

function medianRuns(runs: Record<Backend, ControlStoreRun>[]): Record<Backend, ControlStoreRun> {
  const median = (values: (number | null)[]) => {
    const known = values.filter((value): value is number => value !== null).sort((a, b) => a - b);
    return known.length === values.length ? percentile(known, 50) : null;
  };
  const of = (backend: Backend): ControlStoreRun => ({
    rps: median(runs.map((run) => run[backend].rps))!,
    serverCpuUs: median(runs.map((run) => run[backend].serverCpuUs)),
    databaseCpuUs: median(runs.map((run) => run[backend].databaseCpuUs)),
  });
  return { sqlite: of('sqlite'), postgres: of('postgres') };
}

function figures(medians: PostgresControlReport['medians']): Figure[] {
  const ratio = (load: Load) => round(medians[load].postgres.rps / medians[load].sqlite.rps, 3);
  const replicaCores = (load: Load) => {
    const { serverCpuUs, databaseCpuUs } = medians[load].postgres;
    return serverCpuUs === null || databaseCpuUs === null || databaseCpuUs === 0
      ? null
      : round(serverCpuUs / databaseCpuUs, 1);
  };
  const known = (value: number | null) => value ?? NaN;
  return [
    {
      figure: 'GET /keys per replica, PostgreSQL ÷ SQLite',
      value: ratio('keys'),
      unit: '×',
      reference: 'the server on SQLite, same run',
      target: '≥ 0.5',
      pass: ratio('keys') >= 0.5,
    },
    {
      figure: 'gateway requests per replica, PostgreSQL ÷ SQLite',
      value: ratio('gateway'),
      unit: '×',
      reference: 'the server on SQLite, same run',
      target: '–',
      pass: null,
    },
    {
      figure: 'database CPU per GET /keys',
      value: known(medians.keys.postgres.databaseCpuUs),
      unit: 'µs',
      reference: `server ${medians.keys.postgres.serverCpuUs ?? '–'} µs`,
      target: '–',
      pass: null,
    },
    {
      figure: 'database CPU per gateway request',
      value: known(medians.gateway.postgres.databaseCpuUs),
      unit: 'µs',
      reference: `server ${medians.gateway.postgres.serverCpuUs ?? '–'} µs`,
      target: '–',
      pass: null,
    },
    {
      figure: 'replica cores one database core carries, GET /keys',
      value: known(replicaCores('keys')),
      unit: 'cores',
      reference: 'server CPU ÷ database CPU a request',
      target: '–',
      pass: null,
    },
    {
      figure: 'replica cores one database core carries, gateway',
      value: known(replicaCores('gateway')),
      unit: 'cores',
      reference: 'server CPU ÷ database CPU a request',
      target: '–',
      pass: null,
    },
  ];
}
