import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CookieJar } from 'tough-cookie';
import { isLoopbackName } from '#server/loopback.js';
import { ConsoleError } from './errors.js';

export type ProfileKind = 'remote' | 'embedded';

export interface Profile {
  id: string;
  name: string;
  kind: ProfileKind;
  /** A remote control plane's base address (ending in /api); null for the embedded server. */
  baseUrl: string | null;
}

/**
 * Seals cookie jars at rest: Electron's safeStorage in the Electron shell; in the web
 * shell the identity, the file itself being readable by its owner only.
 */
export interface SecretBox {
  seal(plain: Buffer): Buffer;
  open(sealed: Buffer): Buffer;
}

export const ownerOnlyFile: SecretBox = { seal: (plain) => plain, open: (sealed) => sealed };

const BASE_URL = { field: 'baseUrl' };

/** A remote base address: ends in /api, https unless the host is loopback. Throws 400 (field `baseUrl`) otherwise. */
export function checkBaseUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new ConsoleError(400, 'the address must be a full URL such as https://console.example.com/api', BASE_URL);
  }
  const path = url.pathname.replace(/\/+$/, '');
  if (!path.endsWith('/api')) throw new ConsoleError(400, 'the address must end in /api', BASE_URL);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackName(url.hostname))) {
    throw new ConsoleError(
      400,
      'a remote control plane must use https (plain http is allowed on this machine only)',
      BASE_URL,
    );
  }
  if (url.search || url.hash || url.username || url.password) {
    throw new ConsoleError(400, 'the address must not carry credentials, a query or a fragment', BASE_URL);
  }
  return `${url.protocol}//${url.host}${path}`;
}

/**
 * Profiles and their cookie jars, kept between launches in the console's data folder:
 * `profiles.json` (no secrets) and one sealed jar file per profile.
 */
export class ProfileStore {
  private profiles: Profile[];
  private readonly jars = new Map<string, CookieJar>();

  constructor(
    private readonly dir: string,
    private readonly box: SecretBox,
  ) {
    mkdirSync(join(dir, 'jars'), { recursive: true, mode: 0o700 });
    this.profiles = this.readProfiles();
  }

  list(): Profile[] {
    return [...this.profiles];
  }

  get(id: string): Profile {
    const profile = this.profiles.find((p) => p.id === id);
    if (!profile) throw new ConsoleError(404, 'no such connection profile');
    return profile;
  }

  add(input: { name: string; kind: ProfileKind; baseUrl?: string | null }): Profile {
    const name = input.name.trim();
    if (!name) throw new ConsoleError(400, 'a profile needs a name', { field: 'name' });
    if (input.kind === 'embedded' && this.profiles.some((p) => p.kind === 'embedded')) {
      throw new ConsoleError(409, 'there is already a profile for the embedded server', { field: 'kind' });
    }
    const baseUrl = input.kind === 'remote' ? checkBaseUrl(input.baseUrl ?? '') : null;
    const profile: Profile = { id: randomUUID(), name, kind: input.kind, baseUrl };
    this.profiles.push(profile);
    this.writeProfiles();
    return profile;
  }

  remove(id: string): void {
    this.get(id);
    this.profiles = this.profiles.filter((p) => p.id !== id);
    this.jars.delete(id);
    rmSync(this.jarPath(id), { force: true });
    this.writeProfiles();
  }

  /** The profile's jar, read from disk once; a jar that cannot be opened starts empty (signed out). */
  jar(id: string): CookieJar {
    let jar = this.jars.get(id);
    if (!jar) {
      jar = this.readJar(id);
      this.jars.set(id, jar);
    }
    return jar;
  }

  saveJar(id: string): void {
    const jar = this.jars.get(id);
    if (!jar || !this.profiles.some((p) => p.id === id)) return;
    const sealed = this.box.seal(Buffer.from(JSON.stringify(jar.serializeSync()), 'utf8'));
    writeAtomically(this.jarPath(id), sealed);
  }

  private readJar(id: string): CookieJar {
    try {
      const plain = this.box.open(readFileSync(this.jarPath(id))).toString('utf8');
      return CookieJar.deserializeSync(JSON.parse(plain) as string);
    } catch {
      return new CookieJar();
    }
  }

  private jarPath(id: string): string {
    return join(this.dir, 'jars', `${id}.jar`);
  }

  private readProfiles(): Profile[] {
    try {
      const parsed = JSON.parse(readFileSync(join(this.dir, 'profiles.json'), 'utf8')) as { profiles?: Profile[] };
      return (parsed.profiles ?? []).filter(
        (p) => typeof p.id === 'string' && typeof p.name === 'string' && (p.kind === 'remote' || p.kind === 'embedded'),
      );
    } catch {
      return [];
    }
  }

  private writeProfiles(): void {
    writeAtomically(join(this.dir, 'profiles.json'), Buffer.from(JSON.stringify({ profiles: this.profiles }, null, 2)));
  }
}

/** Write-then-rename, owner-only, so a crash never leaves half a file. */
export function writeAtomically(path: string, data: Buffer): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, data, { mode: 0o600 });
  renameSync(temporary, path);
}
