import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Electron security checklist, 16 "Use a current version of Electron", and 19 "Check which fuses
 * you can change", held against what is installed: package.json, the lockfile and node_modules,
 * so a downgrade, or a lockfile drifting back to an old Electron, fails here. Nothing here runs
 * Electron (its binary is not installed; `require('electron')` would try to download it): only
 * package metadata and electron-builder's own configuration loader are read.
 */

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(import.meta.url);

/**
 * Electron supports the latest three stable majors (https://www.electronjs.org/docs/latest/tutorial/electron-timelines).
 * On 2026-11-25 those are 45, 44 and 43, so 43 is the oldest still supported. A new stable major
 * ships about every eight weeks: raise this with it (and upgrade before the floor passes ours).
 */
const OLDEST_SUPPORTED_ELECTRON_MAJOR = 43;

/** The electron-builder major that packages Electron 45 (26.17 and later). */
const ELECTRON_BUILDER_MAJOR = 26;

interface PackageJson {
  version?: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, 'utf8')) as T;
const manifest = readJson<PackageJson>(join(ROOT, 'package.json'));
const lockfile = readJson<{ packages: Record<string, { version?: string }> }>(join(ROOT, 'package-lock.json'));

/** The version of a package as installed in node_modules (its package.json only; nothing of it runs). */
const installed = (name: string): string => readJson<PackageJson>(require.resolve(`${name}/package.json`)).version!;

/** The major of a version, or the lowest major a range such as ^45.5.0, ~45.5.0 or 45.5.0 admits. */
function major(versionOrRange: string): number {
  const match = /^[\^~=v]?(\d+)\.\d+\.\d+/.exec(versionOrRange.trim());
  if (!match) throw new Error(`not a version, nor a caret, tilde or exact range: ${versionOrRange}`);
  return Number(match[1]);
}

describe('the Electron version (security checklist 16)', () => {
  it('is a devDependency (electron-builder refuses it among dependencies) whose range admits no unsupported major', () => {
    expect(manifest.dependencies?.electron).toBeUndefined();
    const range = manifest.devDependencies?.electron;
    expect(range).toBeDefined();
    expect(major(range!)).toBeGreaterThanOrEqual(OLDEST_SUPPORTED_ELECTRON_MAJOR);
  });

  it('is locked and installed at a supported major', () => {
    const locked = lockfile.packages['node_modules/electron']?.version;
    expect(locked).toBeDefined();
    expect(major(locked!)).toBeGreaterThanOrEqual(OLDEST_SUPPORTED_ELECTRON_MAJOR);
    expect(installed('electron')).toBe(locked);
  });
});

describe('electron-builder', () => {
  it('is a devDependency pinned to the major that packages the installed Electron', () => {
    expect(manifest.dependencies?.['electron-builder']).toBeUndefined();
    const range = manifest.devDependencies?.['electron-builder'];
    expect(range).toMatch(/^[\^~]?\d+\.\d+\.\d+$/);
    expect(major(range!)).toBe(ELECTRON_BUILDER_MAJOR);
    const locked = lockfile.packages['node_modules/electron-builder']?.version;
    expect(locked).toBeDefined();
    expect(major(locked!)).toBe(ELECTRON_BUILDER_MAJOR);
    expect(installed('electron-builder')).toBe(locked);
  });
});

/** What `npx electron-builder` does with electron-builder.yml before packaging: load it, then validate it against its schema. */
interface BuilderConfigModule {
  getConfig(projectDir: string, configPath: null, configFromOptions: null): Promise<Record<string, unknown>>;
  validateConfiguration(config: Record<string, unknown>, debugLogger: { isEnabled: boolean }): Promise<void>;
}

describe('electron-builder.yml under the installed electron-builder (security checklist 19)', () => {
  // Resolved the way electron-builder resolves them: app-builder-lib from electron-builder,
  // @electron/fuses (which flips the fuses) from app-builder-lib.
  const builderRequire = createRequire(require.resolve('electron-builder'));
  const configModulePath = builderRequire.resolve('app-builder-lib/out/util/config/config.js');
  const builderConfig = builderRequire(configModulePath) as BuilderConfigModule;
  const { FuseV1Options } = createRequire(configModulePath)('@electron/fuses') as {
    FuseV1Options: Record<string, string | number>;
  };
  const quiet = { isEnabled: false, add: () => undefined };

  it('passes its schema validation (an unknown key, such as a fuse it does not know, fails packaging)', async () => {
    const config = await builderConfig.getConfig(ROOT, null, null);
    await expect(builderConfig.validateConfiguration(config, quiet)).resolves.toBeUndefined();
    // The validation is live: a fuse electron-builder has no key for is refused.
    const fuses = config.electronFuses as Record<string, boolean>;
    const unknownFuse = { ...config, electronFuses: { ...fuses, notAFuse: false } };
    await expect(builderConfig.validateConfiguration(unknownFuse, quiet)).rejects.toThrow(/configuration/);
  }, 60_000);

  it('decides every fuse @electron/fuses can flip, each as the checklist wants it', async () => {
    const { electronFuses } = (await builderConfig.getConfig(ROOT, null, null)) as {
      electronFuses: Record<string, boolean>;
    };
    // FuseV1Options is a numeric enum: its names are the keys that are not numbers. electron-builder's
    // key for each is the name in lower camel case (RunAsNode: runAsNode).
    const names = Object.keys(FuseV1Options).filter((key) => !/^\d+$/.test(key));
    expect(names.length).toBeGreaterThanOrEqual(8);
    const keys = names.map((name) => name[0]!.toLowerCase() + name.slice(1));
    // A fuse added by a later @electron/fuses needs a decision here, not Electron's default.
    expect(Object.keys(electronFuses).sort()).toEqual(keys.sort());
    expect(electronFuses).toStrictEqual({
      runAsNode: false,
      enableCookieEncryption: true,
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      enableEmbeddedAsarIntegrityValidation: true,
      onlyLoadAppFromAsar: true,
      loadBrowserProcessSpecificV8Snapshot: false,
      grantFileProtocolExtraPrivileges: false,
    });
  }, 60_000);
});
