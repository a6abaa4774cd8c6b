import { readFile } from 'node:fs/promises';
import { extname, isAbsolute, relative, resolve } from 'node:path';
import { protocol } from 'electron';
import { CONTENT_SECURITY_POLICY } from '../core/content-security-policy.js';

/**
 * The renderer is served from its own origin, app://console, instead of file://.
 *
 * Electron security checklist, 18 "Avoid usage of the file:// protocol and prefer usage of
 * custom protocols": a file:// page may read any other file:// address the process can, and
 * every file:// page shares one opaque origin, so "same origin" means nothing there. A custom
 * standard scheme gives the console a real origin (checked by navigation and IPC guards) and
 * serves only the files of the built renderer.
 */
export const APP_SCHEME = 'app';
export const APP_HOST = 'console';
export const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`;
export const APP_ENTRY_URL = `${APP_ORIGIN}/index.html`;

/** True for an address on the console's own origin (app://console, no port, no credentials). */
export function isAppUrl(address: string): boolean {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    return false;
  }
  return (
    url.protocol === `${APP_SCHEME}:` &&
    url.hostname === APP_HOST &&
    url.port === '' &&
    url.username === '' &&
    url.password === ''
  );
}

/** Must run before the app's ready event: app:// behaves as a standard, secure scheme (a real origin, a secure context). */
export function registerAppScheme(): void {
  protocol.registerSchemesAsPrivileged([
    { scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true, corsEnabled: true } },
  ]);
}

/**
 * The file of the built renderer an app:// address names, or null when it names anything
 * else: another host, or a path that escapes the renderer's folder.
 */
export function rendererFile(rendererDir: string, address: string): string | null {
  if (!isAppUrl(address)) return null;
  const url = new URL(address);
  let path: string;
  try {
    path = decodeURIComponent(url.pathname);
  } catch {
    return null;
  }
  if (path.includes('\0')) return null;
  const root = resolve(rendererDir);
  const file = resolve(root, `.${path === '/' ? '/index.html' : path}`);
  const inside = relative(root, file);
  if (inside === '' || inside.startsWith('..') || isAbsolute(inside)) return null;
  return file;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
};

/** Answers an app:// request from the built renderer's folder, with the console's CSP on every response. */
export async function serveRendererRequest(rendererDir: string, request: Request): Promise<Response> {
  const headers = { 'content-security-policy': CONTENT_SECURITY_POLICY, 'x-content-type-options': 'nosniff' };
  const file = rendererFile(rendererDir, request.url);
  if (!file || request.method !== 'GET') return new Response('not found', { status: 404, headers });
  try {
    const body = await readFile(file);
    const type = CONTENT_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream';
    return new Response(body, { status: 200, headers: { ...headers, 'content-type': type } });
  } catch {
    return new Response('not found', { status: 404, headers });
  }
}

/** Serves the built renderer on app://console (default session); call once the app is ready. */
export function handleAppScheme(rendererDir: string): void {
  protocol.handle(APP_SCHEME, (request) => serveRendererRequest(rendererDir, request));
}
