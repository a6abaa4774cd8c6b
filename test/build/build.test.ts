import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type * as EmbeddedModule from '../../main/core/embedded-server.js';
import { DEMO_ACCOUNTS } from '../../server/demo/organisation.js';

/**
 * The real build (`npm run build`'s scripts/build.ts), once, into a folder of its own under
 * dist/ (inside the project, so the compiled code's bare imports find node_modules; dist/ is
 * ignored by git, ESLint and Prettier), then the compiled server run with plain Node: no tsx
 * anywhere, so every module, the stores' migrations and the analytics worker thread must come
 * from the build.
 */

const root = resolve(import.meta.dirname, '../..');
const BUILD_TIMEOUT_MS = 240_000;
const SERVER_TIMEOUT_MS = 60_000;

let out: string;
let dataDir: string;
let buildOutput = '';

/** Runs a command to its end; resolves with its exit code and output (no timeouts of its own: the hook's). */
function run(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** This environment without anything that would load tsx or configure the server. */
function plainEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (name === 'NODE_OPTIONS' || name.startsWith('SVC_') || name.startsWith('VITEST')) continue;
    env[name] = value;
  }
  return { ...env, ...extra };
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)));
}

beforeAll(async () => {
  mkdirSync(join(root, 'dist'), { recursive: true });
  out = mkdtempSync(join(root, 'dist', 'build-test-'));
  dataDir = mkdtempSync(join(tmpdir(), 'gc-build-data-'));
  const tsx = join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs');
  const result = await run(process.execPath, [tsx, 'scripts/build.ts', '--out-dir', out], plainEnv());
  buildOutput = result.output;
  if (result.code !== 0) throw new Error(`the build failed (${result.code}):\n${result.output}`);
}, BUILD_TIMEOUT_MS);

afterAll(() => {
  if (out) rmSync(out, { recursive: true, force: true });
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('npm run build', () => {
  it('lays out the renderer, the compiled server and host, their migrations and the bundled preload', () => {
    expect(buildOutput).toMatch(/Built into/);
    expect(existsSync(join(out, 'renderer', 'index.html'))).toBe(true);
    for (const file of [
      'server/cli.js',
      'server/analytics/pool.js',
      'server/analytics/worker.js',
      'server/stores/telemetry/upgrade-worker.js',
      'main/electron/main.js',
      'main/web/main.js',
      'main/core/embedded-server.js',
    ]) {
      expect(existsSync(join(out, file)), file).toBe(true);
    }
    // Every migration of the sources sits next to its compiled store.
    const migrations = filesUnder(join(root, 'server')).filter((file) => /migrations[\\/].*\.sql$/.test(file));
    expect(migrations.length).toBeGreaterThan(0);
    for (const file of migrations) expect(existsSync(join(out, 'server', file)), file).toBe(true);
    // Only JavaScript, maps and SQL: no TypeScript (tests included) made it in.
    const compiled = [...filesUnder(join(out, 'server')), ...filesUnder(join(out, 'main'))];
    expect(compiled.filter((file) => !/\.(js|cjs|map|sql)$/.test(file))).toEqual([]);
    expect(existsSync(join(out, 'test'))).toBe(false);
  });

  it('splits the renderer: no chunk over 500 kB, and the page before sign-in ships neither a screen nor recharts', () => {
    // Vite's own warning, as `npm run build` would print it.
    expect(buildOutput).not.toMatch(/larger than 500 kB/);
    const assets = join(out, 'renderer', 'assets');
    const chunks = readdirSync(assets).filter((file) => file.endsWith('.js'));
    expect(chunks.length).toBeGreaterThan(8);
    for (const chunk of chunks) expect(statSync(join(assets, chunk)).size, chunk).toBeLessThanOrEqual(500_000);

    // What the page loads before its first paint: the entry script and the modules it preloads.
    const html = readFileSync(join(out, 'renderer', 'index.html'), 'utf8');
    const initial = [
      ...html.matchAll(/<(?:script[^>]*src|link[^>]*rel="modulepreload"[^>]*href)="\.\/assets\/([^"]+\.js)"/g),
    ].map((match) => match[1]!);
    expect(initial.length).toBeGreaterThan(0);
    // Each chunk's source map names the modules inside it (the bundler's runtime chunk has none: no module).
    const sourcesOf = (chunk: string): string[] => {
      const map = join(assets, `${chunk}.map`);
      if (!existsSync(map)) return [];
      return (JSON.parse(readFileSync(map, 'utf8')) as { sources: string[] }).sources;
    };
    const before = initial.flatMap(sourcesOf);
    expect(before.some((source) => source.includes('screens/connect/'))).toBe(true);
    expect(before.filter((source) => source.includes('node_modules/recharts/'))).toEqual([]);
    expect(before.filter((source) => /screens\/(?!connect\/)/.test(source))).toEqual([]);
    // recharts is in the build, in chunks of its own that no screen without a chart imports.
    const charting = chunks.filter((chunk) =>
      sourcesOf(chunk).some((source) => source.includes('node_modules/recharts/')),
    );
    expect(charting.length).toBeGreaterThan(0);
    for (const chunk of charting)
      expect(sourcesOf(chunk).filter((source) => source.includes('renderer/src/'))).toEqual([]);
    // Static imports only: the shell names it too, but in the list it preloads when the analytics screen opens.
    const importers = chunks.filter((chunk) => {
      const code = readFileSync(join(assets, chunk), 'utf8');
      return charting.some((charts) => new RegExp(`(?:from|import)\\s*"\\./${charts.replace('.', '\\.')}"`).test(code));
    });
    // The chart over time alone: the analytics screen fetches it when that chart is first drawn.
    expect(importers.map((chunk) => chunk.replace(/-[\w-]{8}\.js$/, ''))).toEqual(['SeriesChart']);
  });

  it('bundles the preload into one CommonJS file that requires nothing but electron', () => {
    const preload = readFileSync(join(out, 'main', 'electron', 'preload.cjs'), 'utf8');
    const required = [...preload.matchAll(/\brequire\(\s*(['"`])([^'"`]*)\1\s*\)/g)].map((match) => match[2]);
    expect(required).toContain('electron');
    expect(required.filter((name) => name !== 'electron')).toEqual([]);
    // Nothing left to load another way either: no ESM syntax, no dynamic require of a variable.
    expect(preload).not.toMatch(/^\s*(import|export)\s/m);
    expect(preload).not.toMatch(/\brequire\(\s*[^'"`\s]/);
    // Its own modules are inside: the channel names from channels.ts.
    expect(preload).toContain('contextBridge');
    expect(preload).toMatch(/gateway-console-calls/);
  });

  it(
    'runs the compiled server with plain node: seeds the demo data, serves the API and analytics from worker threads, stops on SIGTERM',
    async () => {
      const deadline = Date.now() + SERVER_TIMEOUT_MS;
      const child: ChildProcess = spawn(
        process.execPath,
        [join(out, 'server', 'cli.js'), 'serve', '--demo', '--port', '0', '--data-dir', dataDir],
        { cwd: dataDir, env: plainEnv({ SVC_PASSWORD_COST: '10' }), stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let output = '';
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.once('exit', (code, signal) => resolve({ code, signal })),
      );
      try {
        const base = await new Promise<string>((resolve, reject) => {
          const timer = setTimeout(
            () => reject(new Error(`no address within ${SERVER_TIMEOUT_MS} ms:\n${output}`)),
            deadline - Date.now(),
          );
          const onData = (chunk: Buffer) => {
            output += chunk.toString('utf8');
            const match = /Control plane listening at (http:\/\/127\.0\.0\.1:\d+\/api)/.exec(output);
            if (match?.[1]) {
              clearTimeout(timer);
              resolve(match[1]);
            }
          };
          child.stdout!.on('data', onData);
          child.stderr!.on('data', onData);
          void exited.then(({ code, signal }) => {
            clearTimeout(timer);
            reject(new Error(`the server exited (${code ?? signal}) before listening:\n${output}`));
          });
        });

        const openapi = await fetch(`${base}/openapi.json`);
        expect(openapi.status).toBe(200);
        expect(((await openapi.json()) as { openapi?: string }).openapi).toMatch(/^3\./);

        const admin = DEMO_ACCOUNTS.find((account) => account.role === 'admin')!;
        const login = await fetch(`${base}/auth/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: admin.email, password: admin.password }),
        });
        expect(login.status).toBe(200);
        const cookie = login.headers
          .getSetCookie()
          .map((line) => line.split(';')[0])
          .join('; ');
        expect(cookie).not.toBe('');
        const get = async (path: string) => {
          const response = await fetch(`${base}${path}`, { headers: { cookie } });
          return { status: response.status, body: (await response.json()) as any };
        };

        // Analytics run in worker threads started from dist/server/analytics/worker.js.
        const summary = await get('/analytics/summary?time_range=400d');
        expect(summary.status).toBe(200);
        expect(summary.body.total_requests).toBeGreaterThan(0);
        const requests = await get('/analytics/requests?time_range=400d&limit=5');
        expect(requests.status).toBe(200);
        expect(requests.body.total).toBeGreaterThan(0);
        expect(requests.body.requests).toHaveLength(5);

        const keys = await get('/keys');
        expect(keys.status).toBe(200);
        expect(keys.body.keys.length).toBeGreaterThan(0);

        child.kill('SIGTERM');
        expect(await exited).toEqual({ code: 0, signal: null });
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
    },
    SERVER_TIMEOUT_MS + 10_000,
  );

  it(
    "runs the compiled embedded server as the web shell does (`npm start`): the demo's history is written whole",
    async () => {
      const { EmbeddedServer } = (await import(
        pathToFileURL(join(out, 'main', 'core', 'embedded-server.js')).href
      )) as typeof EmbeddedModule;
      const folder = mkdtempSync(join(tmpdir(), 'gc-build-embedded-'));
      const embedded = new EmbeddedServer({
        dataDir: folder,
        env: { SVC_DEMO_TRAFFIC: '0', SVC_DEMO_ROWS: '2000', SVC_PASSWORD_COST: '10' },
      });
      try {
        const history = new Promise<{ rows: number; of: number; failed?: string }>((resolve) =>
          embedded.onChange(({ demoHistory }) => {
            if (demoHistory && (demoHistory.failed !== undefined || demoHistory.rows === demoHistory.of)) {
              resolve(demoHistory);
            }
          }),
        );
        await embedded.start();
        expect(await history).toEqual({ rows: 2000, of: 2000 });
      } finally {
        await embedded.stop();
        rmSync(folder, { recursive: true, force: true });
      }
    },
    SERVER_TIMEOUT_MS + 10_000,
  );
});
