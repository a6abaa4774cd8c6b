import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import * as electron from './fakes/electron.js';
import {
  handleAppScheme,
  isAppUrl,
  registerAppScheme,
  rendererFile,
  serveRendererRequest,
} from '../../main/electron/app-protocol.js';
import { CONTENT_SECURITY_POLICY } from '../../main/core/content-security-policy.js';

vi.mock('electron', () => import('./fakes/electron.js'));

let root: string;
let renderer: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'console-app-protocol-'));
  renderer = join(root, 'renderer');
  mkdirSync(join(renderer, 'assets'), { recursive: true });
  writeFileSync(join(renderer, 'index.html'), '<!doctype html><title>Gateway Console</title>');
  writeFileSync(join(renderer, 'assets', 'index.js'), 'console.log(1)');
  writeFileSync(join(root, 'secret.txt'), 'not for the renderer');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));
beforeEach(() => electron.reset());

describe('the app origin', () => {
  it('is app://console and nothing else', () => {
    expect(isAppUrl('app://console/index.html')).toBe(true);
    expect(isAppUrl('app://console')).toBe(true);
    for (const url of [
      'app://other/',
      'app://console:1/',
      'app://u@console/',
      'file:///index.html',
      'https://console/',
      '',
    ]) {
      expect(isAppUrl(url), url).toBe(false);
    }
  });

  it('is registered as a standard, secure scheme without CSP bypass', () => {
    registerAppScheme();
    expect(electron.protocol.privileged).toEqual([
      { scheme: 'app', privileges: { standard: true, secure: true, supportFetchAPI: true, corsEnabled: true } },
    ]);
  });
});

describe('the renderer files', () => {
  it('maps app:// paths into the renderer folder', () => {
    expect(rendererFile(renderer, 'app://console/')).toBe(join(renderer, 'index.html'));
    expect(rendererFile(renderer, 'app://console/assets/index.js?x=1#y')).toBe(join(renderer, 'assets', 'index.js'));
  });

  it.each([
    'app://console/../secret.txt',
    'app://console/%2e%2e/secret.txt',
    'app://console/assets/%2e%2e%2f%2e%2e%2fsecret.txt',
    'app://console/..%5c..%5csecret.txt',
  ])('never leaves the renderer folder for %s', (url) => {
    const file = rendererFile(renderer, url);
    // URL parsing folds plain and %2e dot segments; an encoded slash is caught after decoding.
    if (file !== null) expect(relative(renderer, file).startsWith('..')).toBe(false);
  });

  it('refuses an encoded slash escaping the folder, a NUL, bad escapes and other origins', () => {
    expect(rendererFile(renderer, 'app://console/assets/%2e%2e%2f%2e%2e%2fsecret.txt')).toBeNull();
    for (const url of ['app://console/%00', 'app://console/%zz', 'app://other/index.html', 'file:///etc/passwd']) {
      expect(rendererFile(renderer, url), url).toBeNull();
    }
  });

  it('serves a file with the CSP header and its content type', async () => {
    const response = await serveRendererRequest(renderer, new Request('app://console/index.html'));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await response.text()).toContain('Gateway Console');
  });

  it('answers 404, with the CSP header, for a file outside the folder or missing', async () => {
    for (const url of ['app://console/%2e%2e/secret.txt', 'app://console/missing.js', 'app://other/index.html']) {
      const response = await serveRendererRequest(renderer, new Request(url));
      expect(response.status, url).toBe(404);
      expect(response.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
      expect(await response.text()).not.toContain('not for the renderer');
    }
  });

  it('is the handler of the app scheme', async () => {
    handleAppScheme(renderer);
    const handler = electron.protocol.handlers.get('app')!;
    const response = await handler(new Request('app://console/assets/index.js'));
    expect(response.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
  });
});
