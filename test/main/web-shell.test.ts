import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { EmbeddedStatus } from '../../main/core/contract.js';
import { ConsoleHost, type EmbeddedConnection, type EmbeddedServerControl } from '../../main/core/host.js';
import { ownerOnlyFile, ProfileStore } from '../../main/core/profiles.js';
import { appModeArguments, findChromium, hasDisplay, writeLauncherPage } from '../../main/web/browser.js';
import { startWebShell, tokensMatch, TOKEN_HEADER, type WebShell } from '../../main/web/server.js';

// The shell is under test, not the embedded server: a stub stands in for it.
class StubEmbedded implements EmbeddedServerControl {
  starts = 0;
  private readonly connection = { baseUrl: 'http://127.0.0.1:9/api', dispatcher: new Agent() };
  async start(): Promise<EmbeddedConnection> {
    this.starts += 1;
    return this.connection;
  }
  async restart(): Promise<EmbeddedConnection> {
    return this.start();
  }
  status(): EmbeddedStatus {
    return { state: 'running', baseUrl: 'http://127.0.0.1:9/api', lastLog: [], demoAccount: null };
  }
  demoCredentials(): null {
    return null;
  }
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

let dir: string;
let shell: WebShell;
let host: ConsoleHost;
let profiles: ProfileStore;

/** Real HTTP on loopback, with full control of Host, Origin and the raw path. */
function send(options: {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}): Promise<Answer> {
  return new Promise((done, fail) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: shell.port,
        method: options.method ?? 'GET',
        path: options.path,
        headers: { host: `127.0.0.1:${shell.port}`, ...options.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          done({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
      },
    );
    req.on('error', fail);
    req.end(options.body);
  });
}

function call(name: string, args: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return send({
    method: 'POST',
    path: `/bridge/${name}`,
    headers: {
      'content-type': 'application/json',
      origin: shell.origin,
      [TOKEN_HEADER]: shell.token,
      ...headers,
    },
    body: JSON.stringify(args),
  });
}

const goodProfile = { name: 'Staging', kind: 'remote', baseUrl: 'https://console.example.com/api' };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gc-web-shell-'));
  const rendererDir = join(dir, 'renderer');
  mkdirSync(join(rendererDir, 'assets'), { recursive: true });
  writeFileSync(join(rendererDir, 'index.html'), '<!doctype html><title>Gateway Console</title>');
  writeFileSync(join(rendererDir, 'assets', 'app.js'), 'console.log("hello");');
  writeFileSync(join(rendererDir, 'assets', 'app.css'), 'body{}');
  writeFileSync(join(dir, 'secret.txt'), 'outside the renderer');
  profiles = new ProfileStore(join(dir, 'data'), ownerOnlyFile);
  host = new ConsoleHost({ shell: 'web', version: '9.9.9', profiles, embedded: new StubEmbedded() });
  shell = await startWebShell({ host, rendererDir });
});

afterAll(async () => {
  await shell?.close();
  rmSync(dir, { recursive: true, force: true });
});

let addSpy: ReturnType<typeof vi.spyOn>;
beforeEach(() => {
  addSpy?.mockRestore();
  addSpy = vi.spyOn(host.handlers, 'profiles.add');
});

describe('web shell: listening', () => {
  it('binds to 127.0.0.1 on a free port and carries a token of at least 128 bits', () => {
    expect(shell.origin).toBe(`http://127.0.0.1:${shell.port}`);
    expect(shell.port).toBeGreaterThan(0);
    expect(Buffer.from(shell.token, 'base64url').length).toBeGreaterThanOrEqual(16);
    expect(shell.url).toBe(`${shell.origin}/#token=${shell.token}`);
  });

  it('makes a fresh token on every launch', async () => {
    const other = await startWebShell({ host, rendererDir: join(dir, 'renderer') });
    try {
      expect(other.token).not.toBe(shell.token);
      expect(other.port).not.toBe(shell.port);
    } finally {
      await other.close();
    }
  });

  it('compares tokens exactly, whatever their lengths', () => {
    expect(tokensMatch('abc', 'abc')).toBe(true);
    expect(tokensMatch('abc', 'abd')).toBe(false);
    expect(tokensMatch('ab', 'abc')).toBe(false);
    expect(tokensMatch('', 'abc')).toBe(false);
  });
});

describe('web shell: the bridge refuses', () => {
  it('a call without the token, and no handler runs', async () => {
    const answer = await send({
      method: 'POST',
      path: '/bridge/profiles.add',
      headers: { 'content-type': 'application/json', origin: shell.origin },
      body: JSON.stringify(goodProfile),
    });
    expect(answer.status).toBe(401);
    expect(answer.json).toMatchObject({ ok: false, error: { status: 401 } });
    expect(addSpy).not.toHaveBeenCalled();
    expect(profiles.list()).toHaveLength(0);
  });

  it('a call with a wrong token', async () => {
    const answer = await call('profiles.add', goodProfile, { [TOKEN_HEADER]: `${shell.token.slice(0, -1)}x` });
    expect(answer.status).toBe(401);
    expect((await call('profiles.list', {}, { [TOKEN_HEADER]: '' })).status).toBe(401);
    expect(addSpy).not.toHaveBeenCalled();
    expect(profiles.list()).toHaveLength(0);
  });

  it('the token anywhere but its header (query string)', async () => {
    const answer = await send({
      method: 'POST',
      path: `/bridge/profiles.list?token=${shell.token}`,
      headers: { 'content-type': 'application/json', origin: shell.origin },
      body: '{}',
    });
    expect(answer.status).toBe(401);
  });

  it('a call from a foreign Origin, even with the token', async () => {
    for (const origin of [
      'https://evil.example',
      'http://127.0.0.1:1',
      `http://localhost.evil.example:${shell.port}`,
      'null',
    ]) {
      const answer = await call('profiles.add', goodProfile, { origin });
      expect(answer.status, origin).toBe(403);
      expect(answer.json).toMatchObject({ ok: false, error: { status: 403 } });
    }
    const crossSite = await call('profiles.add', goodProfile, { 'sec-fetch-site': 'cross-site' });
    expect(crossSite.status).toBe(403);
    expect(addSpy).not.toHaveBeenCalled();
    expect(profiles.list()).toHaveLength(0);
  });

  it('a call whose Host is not a loopback name for this server (DNS rebinding)', async () => {
    for (const hostHeader of [
      `evil.example:${shell.port}`,
      `evil.example`,
      `127.0.0.1:${shell.port + 1 === 65536 ? 1 : shell.port + 1}`,
      `127.0.0.1.evil.example:${shell.port}`,
    ]) {
      const answer = await call('profiles.add', goodProfile, { host: hostHeader, origin: `http://${hostHeader}` });
      expect(answer.status, hostHeader).toBe(403);
    }
    // The page's own origin does not help when the Host names another machine.
    expect((await call('profiles.add', goodProfile, { host: `evil.example:${shell.port}` })).status).toBe(403);
    expect(addSpy).not.toHaveBeenCalled();
    expect(profiles.list()).toHaveLength(0);
  });

  it('a body that is not JSON', async () => {
    const textPlain = await send({
      method: 'POST',
      path: '/bridge/profiles.add',
      headers: { 'content-type': 'text/plain', origin: shell.origin, [TOKEN_HEADER]: shell.token },
      body: JSON.stringify(goodProfile),
    });
    expect(textPlain.status).toBe(415);
    const form = await call('profiles.add', goodProfile, { 'content-type': 'application/x-www-form-urlencoded' });
    expect(form.status).toBe(415);
    const broken = await send({
      method: 'POST',
      path: '/bridge/profiles.add',
      headers: { 'content-type': 'application/json', origin: shell.origin, [TOKEN_HEADER]: shell.token },
      body: '{"name": ',
    });
    expect(broken.status).toBe(400);
    expect(addSpy).not.toHaveBeenCalled();
  });

  it('anything but POST', async () => {
    const answer = await send({
      method: 'GET',
      path: '/bridge/profiles.list',
      headers: { [TOKEN_HEADER]: shell.token },
    });
    expect(answer.status).toBe(405);
  });

  it('bad arguments with the validation envelope, before any handler runs', async () => {
    const badKind = await call('profiles.add', { name: 'X', kind: 'nope' });
    expect(badKind.status).toBe(200);
    expect(badKind.json).toMatchObject({ ok: false, error: { status: 422 } });
    expect(badKind.json.error.message).toMatch(/profiles\.add/);
    // The failing argument crosses the HTTP bridge as data, for the page to place the error by.
    expect(badKind.json.error.field).toBe('kind');
    const missing = await call('profiles.add', { kind: 'remote', baseUrl: 'https://console.example.com/api' });
    expect(missing.json).toMatchObject({ ok: false, error: { status: 422, field: 'name' } });
    const notObject = await call('profiles.add', ['Staging']);
    expect(notObject.json).toMatchObject({ ok: false, error: { status: 422 } });
    expect(addSpy).not.toHaveBeenCalled();
    expect(profiles.list()).toHaveLength(0);
  });

  it('an unknown call with a 404 envelope', async () => {
    const answer = await call('profiles.steal', {});
    expect(answer.json).toMatchObject({ ok: false, error: { status: 404 } });
  });
});

describe('web shell: the bridge answers', () => {
  it('a good call with its result, and its errors as envelopes', async () => {
    const info = await call('app.info', {});
    expect(info.status).toBe(200);
    expect(info.headers['cache-control']).toBe('no-store');
    expect(info.json).toEqual({ ok: true, result: { shell: 'web', version: '9.9.9' } });

    const added = await call('profiles.add', goodProfile);
    expect(added.json).toMatchObject({ ok: true, result: { name: 'Staging', kind: 'remote', signedIn: false } });
    expect(addSpy).toHaveBeenCalledTimes(1);

    const listed = await call('profiles.list', {});
    expect(listed.json.result.profiles).toEqual([added.json.result]);

    // The host's own refusal (plain http to another machine) crosses as an envelope.
    const refused = await call('profiles.add', { name: 'Plain', kind: 'remote', baseUrl: 'http://example.com/api' });
    expect(refused.json).toMatchObject({ ok: false, error: { status: 400, field: 'baseUrl' } });

    await call('profiles.remove', { profileId: added.json.result.id });
    expect(profiles.list()).toHaveLength(0);
  });

  it('with the token and no Origin (a client outside any browser)', async () => {
    const answer = await send({
      method: 'POST',
      path: '/bridge/app.info',
      headers: { 'content-type': 'application/json; charset=utf-8', [TOKEN_HEADER]: shell.token },
      body: '{}',
    });
    expect(answer.json).toMatchObject({ ok: true });
  });

  it('with localhost as the Host and Origin', async () => {
    const own = `localhost:${shell.port}`;
    const answer = await call('app.info', {}, { host: own, origin: `http://${own}` });
    expect(answer.json).toMatchObject({ ok: true });
  });

  it('keeps jar files readable by their owner only', async () => {
    const added = await call('profiles.add', { ...goodProfile, name: 'Jar' });
    const id = added.json.result.id as string;
    await profiles.jar(id).setCookie('a=b; Path=/', 'https://console.example.com/api');
    profiles.saveJar(id);
    if (process.platform !== 'win32') {
      expect(statSync(join(dir, 'data', 'jars', `${id}.jar`)).mode & 0o777).toBe(0o600);
    }
    await call('profiles.remove', { profileId: id });
  });
});

describe('web shell: static files', () => {
  it('serves index.html for / with strict security headers', async () => {
    const answer = await send({ path: '/' });
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(answer.text).toContain('<title>Gateway Console</title>');
    const csp = answer.headers['content-security-policy'] as string;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain('unsafe');
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
    expect(answer.headers['referrer-policy']).toBe('no-referrer');
    expect(answer.headers['x-frame-options']).toBe('DENY');
  });

  it('serves assets without the token, with their content types', async () => {
    const js = await send({ path: '/assets/app.js' });
    expect(js.status).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    const css = await send({ path: '/assets/app.css?v=1' });
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect((await send({ path: '/assets/missing.js' })).status).toBe(404);
  });

  it('refuses path traversal', async () => {
    for (const path of [
      '/../package.json',
      '/../secret.txt',
      '/assets/../../secret.txt',
      '/%2e%2e/secret.txt',
      '/..%2fsecret.txt',
      '/assets/..%5c..%5csecret.txt',
      '/%00index.html',
    ]) {
      const answer = await send({ path });
      expect(answer.status, path).toBeGreaterThanOrEqual(400);
      expect(answer.text, path).not.toContain('outside the renderer');
      expect(answer.text, path).not.toContain('gateway-console');
    }
  });

  it('refuses a foreign Host for pages too', async () => {
    expect((await send({ path: '/', headers: { host: 'evil.example' } })).status).toBe(403);
  });

  it('refuses to write', async () => {
    expect((await send({ method: 'PUT', path: '/index.html', body: 'x' })).status).toBe(405);
  });
});

describe('web shell: opening the window', () => {
  it('uses a Chromium only where one is installed, and a window only where there is a display', () => {
    const linux = { platform: 'linux' as const, env: {} };
    expect(findChromium({ ...linux, exists: () => false })).toBeNull();
    expect(findChromium({ ...linux, exists: (p) => p === '/usr/bin/google-chrome' })).toBe('/usr/bin/google-chrome');
    expect(findChromium({ ...linux, env: { GC_BROWSER: '/opt/x/chrome' }, exists: () => true })).toBe('/opt/x/chrome');
    expect(hasDisplay(linux)).toBe(false);
    expect(hasDisplay({ platform: 'linux', env: { DISPLAY: ':0' } })).toBe(true);
    expect(hasDisplay({ platform: 'linux', env: { WAYLAND_DISPLAY: 'wayland-0' } })).toBe(true);
    expect(hasDisplay({ platform: 'darwin', env: {} })).toBe(true);
    expect(hasDisplay({ platform: 'win32', env: {} })).toBe(true);
  });

  it('opens app mode in a profile of its own, the token kept off the command line', () => {
    const url = `${shell.origin}/#token=${shell.token}`;
    const launcher = writeLauncherPage(join(dir, 'run'), url);
    const args = appModeArguments(`file://${launcher}`, join(dir, 'browser-profile'));
    expect(args).toEqual(
      expect.arrayContaining([
        `--app=file://${launcher}`,
        `--user-data-dir=${join(dir, 'browser-profile')}`,
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ]),
    );
    expect(args.join(' ')).not.toContain(shell.token);
    expect(readFileSync(launcher, 'utf8')).toContain(`<meta http-equiv="refresh" content="0;url=${url}">`);
    expect(readFileSync(launcher, 'utf8')).not.toContain('<script');
    if (process.platform !== 'win32') expect(statSync(launcher).mode & 0o777).toBe(0o600);
  });
});
