import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { forbidden } from '../http-errors.js';
import { isLoopbackName } from '../loopback.js';

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The host name of a Host header, without its port. */
function hostName(header: string): string {
  const bracketed = /^\[([^\]]+)\]/.exec(header);
  if (bracketed) return bracketed[1] ?? '';
  return header.replace(/:\d*$/, '');
}

function originHost(origin: string): string | null {
  try {
    return new URL(origin).host;
  } catch {
    return null;
  }
}

export interface GuardOptions {
  /** True when the server listens on a loopback address only. */
  loopback: boolean;
  allowedOrigins: string[];
}

/**
 * Cross-site defences for a cookie-authenticated API with no CSRF token: a
 * state-changing request from a foreign Origin is refused, and a server on loopback
 * refuses any Host that is not a loopback name, which defeats DNS rebinding.
 */
export const guardsPlugin = fp(async (app: FastifyInstance, options: GuardOptions) => {
  const allowed = new Set(options.allowedOrigins.map((origin) => originHost(origin)).filter(Boolean));

  // Clients send the same Host on every request: its verdict is kept for the next one.
  let lastHost: string | null = null;
  let lastHostIsLoopback = false;
  const loopbackHost = (host: string): boolean => {
    if (host !== lastHost) {
      lastHostIsLoopback = isLoopbackName(hostName(host));
      lastHost = host;
    }
    return lastHostIsLoopback;
  };

  // Callback style: it runs on every request (see requireSession).
  app.addHook('onRequest', (request: FastifyRequest, _reply, done) => {
    const host = request.headers.host ?? '';
    if (options.loopback && !loopbackHost(host)) {
      return done(forbidden('requests to this server must use a loopback host name'));
    }
    const origin = request.headers.origin;
    if (origin !== undefined && STATE_CHANGING.has(request.method)) {
      const from = originHost(origin);
      if (from === null || (from !== host.toLowerCase() && !allowed.has(from))) {
        return done(forbidden('cross-origin request refused'));
      }
    }
    done();
  });
});

/**
 * The caller's address: Fastify's `request.ip`, which believes `X-Forwarded-For` only from the
 * proxies in `trustProxy` (walking the chain from the socket's end, as proxy-addr does), else is
 * the socket's peer. A Unix socket has no peer address.
 */
export function sourceIp(request: FastifyRequest): string {
  return request.ip || LOCAL_SOCKET;
}

/** The address recorded for a caller on the console's own Unix socket. */
export const LOCAL_SOCKET = 'local';
