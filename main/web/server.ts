import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, resolve, sep } from 'node:path';
import { isLoopbackName } from '#server/loopback.js';
import { CONTENT_SECURITY_POLICY } from '../core/content-security-policy.js';
import type { BridgeEnvelope } from '../core/contract.js';

/**
 * The web shell's HTTP side: the built renderer and the bridge, on 127.0.0.1 only.
 *
 * Static files are served to anyone who can reach the loopback port (they hold no
 * secret); the bridge answers only requests that carry this launch's token in the
 * `x-console-token` header, come from the shell's own origin (or from no browser at
 * all) and name this server by a loopback Host, which stops other local users' pages,
 * other web sites and DNS-rebinding pages from driving the console.
 *
 * Neither the token nor a call's arguments are ever logged: arguments carry passwords.
 */

export const TOKEN_HEADER = 'x-console-token';
const BRIDGE_PREFIX = '/bridge/';
const MAX_BODY_BYTES = 1024 * 1024;

/** What the shell needs of the host: ConsoleHost's boundary, arguments checked there. */
export interface BridgeDispatcher {
  dispatch(name: string, args: unknown): Promise<BridgeEnvelope<unknown>>;
}

export interface WebShellOptions {
  host: BridgeDispatcher;
  /** The built renderer (dist/renderer). */
  rendererDir: string;
  /** 0 (the default) for a free port. */
  port?: number;
  /** Tests may fix the token; a launch leaves it to a fresh random one. */
  token?: string;
  /** Told of failures of the shell itself; never given a token or a call's arguments. */
  log?: (line: string) => void;
}

export interface WebShell {
  /** http://127.0.0.1:PORT, the shell's own origin. */
  readonly origin: string;
  readonly port: number;
  readonly token: string;
  /** The address to open: the token travels in the fragment, which the browser never sends. */
  readonly url: string;
  close(): Promise<void>;
}

/** 256 bits from the system's random source, URL-safe. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Constant time whatever the lengths: both sides are hashed to 32 bytes first. */
export function tokensMatch(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), usb=(), serial=(), hid=(), payment=()',
};

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.wasm': 'application/wasm',
};

class Refusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export async function startWebShell(options: WebShellOptions): Promise<WebShell> {
  const token = options.token ?? newToken();
  const root = await realpath(resolve(options.rendererDir)).catch(() => resolve(options.rendererDir));
  const log = options.log ?? (() => {});
  let port = 0;

  const server = createServer((request, response) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) response.setHeader(name, value);
    handle(request, response).catch((error: unknown) => {
      const refusal = error instanceof Refusal ? error : undefined;
      if (!refusal) log(`web shell: request failed: ${error instanceof Error ? error.message : String(error)}`);
      if (response.headersSent) {
        response.destroy();
        return;
      }
      const status = refusal?.status ?? 500;
      const message = refusal?.message ?? 'the web shell failed; see its log';
      if (request.url?.startsWith(BRIDGE_PREFIX)) {
        sendJson(response, status, { ok: false, error: { status, message } } satisfies BridgeEnvelope<never>);
      } else {
        response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
        response.end(request.method === 'HEAD' ? undefined : `${message}\n`);
      }
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    checkHost(request.headers.host, port);
    const rawPath = (request.url ?? '/').split('?')[0] ?? '/';
    if (rawPath.startsWith(BRIDGE_PREFIX)) return bridge(request, response, rawPath.slice(BRIDGE_PREFIX.length));
    return serveStatic(request, response, rawPath);
  }

  async function bridge(request: IncomingMessage, response: ServerResponse, rawName: string): Promise<void> {
    response.setHeader('cache-control', 'no-store');
    checkOrigin(request, port);
    const given = request.headers[TOKEN_HEADER];
    if (typeof given !== 'string' || !tokensMatch(given, token)) {
      throw new Refusal(
        401,
        'the console token is missing or wrong: open the console from the address its host printed',
      );
    }
    if (request.method !== 'POST') {
      response.setHeader('allow', 'POST');
      throw new Refusal(405, 'bridge calls are POST requests');
    }
    const type = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
    if (type !== 'application/json') throw new Refusal(415, 'bridge calls carry a JSON body (application/json)');
    let name: string;
    try {
      name = decodeURIComponent(rawName);
    } catch {
      throw new Refusal(400, 'malformed bridge call name');
    }
    const text = await readBody(request);
    let args: unknown;
    try {
      args = text.trim() === '' ? {} : JSON.parse(text);
    } catch {
      throw new Refusal(400, 'the body is not valid JSON');
    }
    // The host checks the name and the arguments against the contract before any handler runs.
    sendJson(response, 200, await options.host.dispatch(name, args));
  }

  async function serveStatic(request: IncomingMessage, response: ServerResponse, rawPath: string): Promise<void> {
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.setHeader('allow', 'GET, HEAD');
      throw new Refusal(405, 'method not allowed');
    }
    let path: string;
    try {
      path = decodeURIComponent(rawPath);
    } catch {
      throw new Refusal(400, 'malformed path');
    }
    // Refuse rather than normalise: no legitimate page asks for a parent folder.
    if (path.includes('\0') || path.includes('\\') || path.split('/').some((part) => part === '..')) {
      throw new Refusal(403, 'forbidden');
    }
    let file = resolve(root, `.${path.endsWith('/') ? `${path}index.html` : path}`);
    let info = await stat(file).catch(() => undefined);
    if (!info && extname(path) === '') {
      // A client-side route: the page itself.
      file = resolve(root, 'index.html');
      info = await stat(file).catch(() => undefined);
    }
    if (info?.isDirectory()) {
      file = resolve(file, 'index.html');
      info = await stat(file).catch(() => undefined);
    }
    if (!info?.isFile()) throw new Refusal(404, 'not found');
    // Symbolic links must not lead out of the renderer's folder either.
    const real = await realpath(file);
    if (!real.startsWith(root + sep)) throw new Refusal(403, 'forbidden');

    response.writeHead(200, {
      'content-type': CONTENT_TYPES[extname(real).toLowerCase()] ?? 'application/octet-stream',
      'content-length': String(info.size),
      'cache-control': 'no-cache',
    });
    if (request.method === 'HEAD') {
      response.end();
      return;
    }
    await new Promise<void>((done, fail) => {
      const stream = createReadStream(real);
      stream.on('error', fail);
      response.on('close', () => done());
      stream.pipe(response);
    });
  }

  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen({ host: '127.0.0.1', port: options.port ?? 0 }, () => {
      server.off('error', fail);
      done();
    });
  });
  port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;

  return {
    origin,
    port,
    token,
    url: `${origin}/#token=${token}`,
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}

/** The Host must name this server by a loopback name and its port: a DNS-rebinding page names its own host. */
function checkHost(host: string | undefined, port: number): void {
  if (!host) throw new Refusal(403, 'a Host header naming this machine is required');
  let url: URL;
  try {
    url = new URL(`http://${host}`);
  } catch {
    throw new Refusal(403, 'the Host header does not name this machine');
  }
  if (!isLoopbackName(url.hostname) || (url.port || '80') !== String(port) || url.host !== host.toLowerCase()) {
    throw new Refusal(403, 'the Host header does not name this machine');
  }
}

/**
 * Browsers send Origin with every POST: it must be this very server (the origin the page was
 * loaded from, Host already checked). Requests with no Origin come from outside a browser and
 * still need the token.
 */
function checkOrigin(request: IncomingMessage, port: number): void {
  const origin = request.headers.origin;
  if (origin !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(origin);
    } catch {
      url = undefined;
    }
    const own =
      url !== undefined &&
      url.protocol === 'http:' &&
      (url.port || '80') === String(port) &&
      url.origin === origin &&
      url.host === request.headers.host?.toLowerCase();
    if (!own) throw new Refusal(403, 'bridge calls are accepted from the console page only');
  }
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') {
    throw new Refusal(403, 'bridge calls are accepted from the console page only');
  }
}

async function readBody(request: IncomingMessage): Promise<string> {
  const declared = Number(request.headers['content-length'] ?? 0);
  if (declared > MAX_BODY_BYTES) throw new Refusal(413, 'the body is too large');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new Refusal(413, 'the body is too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
    'cache-control': 'no-store',
  });
  response.end(text);
}
