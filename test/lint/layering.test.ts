import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The layering rules of .dependency-cruiser.cjs, run as `npm run lint` runs them, on a small tree
 * laid out like the project: each rule must refuse the import planted against it, and allow
 * the imports the architecture allows.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = join(ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
const run = promisify(execFile);

/** Files of the planted tree: path → the modules it imports (`type:` marks a type-only import). */
const TREE: Record<string, string[]> = {
  // Allowed: the shapes the project has.
  'main/electron/window.ts': ['electron', '../core/contract.js'],
  'main/core/contract.ts': ['#server/schemas/auth.js'],
  'main/core/profiles.ts': ['#server/loopback.js'],
  'main/web/server.ts': ['../core/contract.js'],
  'renderer/src/bridge.ts': ['type:#contract'],
  'server/schemas/auth.ts': [],
  'server/loopback.ts': [],
  'server/stores/telemetry/store.ts': [],
  'server/domain/keys.ts': ['../stores/telemetry/store.js'],
  'server/ingest/pipeline.ts': ['../stores/telemetry/store.js', '../domain/keys.js'],
  'server/demo/traffic.ts': ['../ingest/pipeline.js'],
  'server/admin/import.ts': ['../ingest/pipeline.js'],
  'server/routes/keys.ts': ['../domain/keys.js'],
  'server/analytics/windows.ts': ['../stores/telemetry/store.js'],
  'server/gateway/forward.ts': ['../domain/keys.js', 'type:../stores/telemetry/store.js'],
  'server/admission/admit.ts': ['../ingest/pipeline.js', '../stores/telemetry/store.js', '../domain/keys.js'],
  // One planted violation (or more) per rule.
  'main/core/title.ts': ['electron'],
  'renderer/src/window.ts': ['electron'],
  'renderer/src/peek.ts': ['../../server/stores/telemetry/store.js'],
  'renderer/src/host.ts': ['type:../../main/web/server.js'],
  'renderer/src/schemas.ts': ['#contract'],
  'main/core/shell.ts': ['../web/server.js'],
  'main/core/demo.ts': ['../../server/demo/traffic.js'],
  'server/routes/console.ts': ['../../main/core/contract.js'],
  'server/stores/telemetry/reader.ts': [
    '../../analytics/windows.js',
    '../../routes/keys.js',
    '../../ingest/pipeline.js',
  ],
  'server/domain/callers.ts': ['../admin/import.js', '../demo/traffic.js', '../ingest/pipeline.js'],
  'server/ingest/sources.ts': ['../demo/traffic.js', '../admin/import.js', '../routes/keys.js'],
  'server/gateway/chat.ts': [
    '../routes/keys.js',
    '../demo/traffic.js',
    '../admin/import.js',
    '../stores/telemetry/store.js',
    '../ingest/pipeline.js',
  ],
  'server/admission/decide.ts': ['../gateway/forward.js', '../routes/keys.js'],
  'server/analytics/queries.ts': ['./rollup-sql.js'],
  'server/analytics/rollup-sql.ts': ['type:./queries.js'],
};

const EXPECTED = [
  'electron-only-in-its-shell main/core/title.ts → node_modules/electron/index.js',
  'electron-only-in-its-shell renderer/src/window.ts → node_modules/electron/index.js',
  'renderer-sees-only-the-contract renderer/src/peek.ts → server/stores/telemetry/store.ts',
  'renderer-sees-only-the-contract renderer/src/host.ts → main/web/server.ts',
  'renderer-takes-the-contract-as-types renderer/src/schemas.ts → main/core/contract.ts',
  'core-below-its-shells main/core/shell.ts → main/web/server.ts',
  'host-reads-the-server-through-its-schemas main/core/demo.ts → server/demo/traffic.ts',
  'server-stands-alone server/routes/console.ts → main/core/contract.ts',
  'stores-below-their-readers server/stores/telemetry/reader.ts → server/analytics/windows.ts',
  'stores-below-their-readers server/stores/telemetry/reader.ts → server/routes/keys.ts',
  'stores-below-their-readers server/stores/telemetry/reader.ts → server/ingest/pipeline.ts',
  'domain-below-its-callers server/domain/callers.ts → server/admin/import.ts',
  'domain-below-its-callers server/domain/callers.ts → server/demo/traffic.ts',
  'domain-below-its-callers server/domain/callers.ts → server/ingest/pipeline.ts',
  'ingest-below-its-sources server/ingest/sources.ts → server/demo/traffic.ts',
  'ingest-below-its-sources server/ingest/sources.ts → server/admin/import.ts',
  'ingest-below-its-sources server/ingest/sources.ts → server/routes/keys.ts',
  'gateway-beside-the-api server/gateway/chat.ts → server/admin/import.ts',
  'gateway-beside-the-api server/gateway/chat.ts → server/demo/traffic.ts',
  'gateway-beside-the-api server/gateway/chat.ts → server/routes/keys.ts',
  'gateway-asks-the-control-plane server/gateway/chat.ts → server/stores/telemetry/store.ts',
  'gateway-asks-the-control-plane server/gateway/chat.ts → server/ingest/pipeline.ts',
  'admission-below-the-gateway server/admission/decide.ts → server/gateway/forward.ts',
  'admission-below-the-gateway server/admission/decide.ts → server/routes/keys.ts',
  // A circle is reported once, at the edge where the cruise first closes it.
  'no-circular server/analytics/queries.ts → server/analytics/rollup-sql.ts',
].sort();

function source(imports: string[]): string {
  const lines = imports.map((spec, i) =>
    spec.startsWith('type:')
      ? `import type * as m${i} from '${spec.slice(5)}';\nexport type T${i} = typeof m${i};`
      : `import * as m${i} from '${spec}';\nexport const v${i} = m${i};`,
  );
  return `${lines.join('\n')}\nexport const here = 1;\n`;
}

function write(root: string, path: string, content: string): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), content);
}

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
}

let tree: string;

beforeAll(() => {
  tree = mkdtempSync(join(tmpdir(), 'gc-layering-'));
  for (const [path, imports] of Object.entries(TREE)) write(tree, path, source(imports));
  write(tree, 'node_modules/electron/package.json', JSON.stringify({ name: 'electron', main: 'index.js' }));
  write(tree, 'node_modules/electron/index.js', 'module.exports = {};\n');
  const project = { type: 'module', imports: { '#contract': './main/core/contract.ts', '#server/*': './server/*' } };
  write(tree, 'package.json', JSON.stringify(project));
  const compilerOptions = { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true };
  write(tree, 'tsconfig.json', JSON.stringify({ compilerOptions, include: ['**/*.ts'] }));
});

afterAll(() => rmSync(tree, { recursive: true, force: true }));

describe('the layering rules', () => {
  it('refuse each planted import, name its rule, and allow the imports the architecture allows', async () => {
    const config = join(ROOT, '.dependency-cruiser.cjs');
    const cruise = (output: string) =>
      run(process.execPath, [CLI, '--config', config, '--output-type', output, 'main', 'renderer', 'server'], {
        cwd: tree,
        maxBuffer: 16 << 20,
      }).then(
        ({ stdout }) => ({ stdout, code: 0 }),
        (error: { stdout?: string; code?: number }) => ({ stdout: error.stdout ?? '', code: error.code ?? -1 }),
      );
    // The lint's own output (`err`) fails the command, so CI refuses the change.
    expect((await cruise('err')).code).not.toBe(0);
    const report = JSON.parse((await cruise('json')).stdout) as { summary: { violations: Violation[] } };
    const found = report.summary.violations.map((v) => `${v.rule.name} ${v.from} → ${v.to}`).sort();
    expect(found).toEqual(EXPECTED);
    // Two runs of the cruiser over a planted tree: ~8 s alone, far more on a busy 2-core machine.
  }, 90_000);
});
