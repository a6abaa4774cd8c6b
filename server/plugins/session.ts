import cookie from '@fastify/cookie';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import fp from 'fastify-plugin';
import { forbidden, unauthorized } from '../http-errors.js';
import type { Role } from '../stores/control/accounts.js';
import type { AuthContext, IssuedTokens } from '../stores/control/sessions.js';
import { sessionTokenKey } from '../security/tokens.js';

export const ACCESS_COOKIE = 'svc_access_token';
export const REFRESH_COOKIE = 'svc_refresh_token';
const ACCESS_PATH = '/api';
const REFRESH_PATH = '/api/auth';

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext | null;
  }
}

const base = { httpOnly: true, secure: true, sameSite: 'lax' } as const;

export function setSessionCookies(reply: FastifyReply, tokens: IssuedTokens, now: number): void {
  const seconds = (until: number) => Math.max(0, Math.floor((until - now) / 1000));
  reply.setCookie(ACCESS_COOKIE, tokens.accessToken, {
    ...base,
    path: ACCESS_PATH,
    maxAge: seconds(tokens.accessExpiresAt),
  });
  reply.setCookie(REFRESH_COOKIE, tokens.refreshToken, {
    ...base,
    path: REFRESH_PATH,
    maxAge: seconds(tokens.refreshExpiresAt),
  });
}

export function clearSessionCookies(reply: FastifyReply): void {
  reply.clearCookie(ACCESS_COOKIE, { ...base, path: ACCESS_PATH });
  reply.clearCookie(REFRESH_COOKIE, { ...base, path: REFRESH_PATH });
}

/** The caller of a route behind `requireSession`. */
export function authOf(request: FastifyRequest): AuthContext {
  if (!request.auth) throw unauthorized();
  return request.auth;
}

/**
 * Per connection, the last access token it sent and that token's key. A client sends the
 * same cookie on each request of a kept-alive connection, and hashing it cost ~4k of the
 * ~118k instructions of a GET /keys under load (OpenSSL's set-up more than the hash). The
 * raw token is then held as long as its connection, which holds its requests anyway. One
 * map serves every app of the process because the key is a plain hash, with no secret.
 */
const lastTokenKey = new WeakMap<object, { token: string; key: string }>();

function tokenKey(connection: object, token: string): string {
  const last = lastTokenKey.get(connection);
  if (last?.token === token) return last.key;
  const key = sessionTokenKey(token);
  lastTokenKey.set(connection, { token, key });
  return key;
}

/**
 * onRequest hook: resolves the caller from the access cookie, or answers 401. In callback
 * style, as the other per-request hooks: an async hook would add a promise and a microtask
 * turn of its own to the lookup's on every request, and these run on every one.
 */
export function requireSession(
  this: FastifyInstance,
  request: FastifyRequest,
  _reply: FastifyReply,
  done: HookHandlerDoneFunction,
): void {
  const token = request.cookies[ACCESS_COOKIE];
  if (!token) return done(unauthorized());
  void this.control.sessions.authenticate(tokenKey(request.raw.socket, token), this.config.now()).then((auth) => {
    if (!auth) return done(unauthorized());
    request.auth = auth;
    done();
  }, done);
}

export function requireRole(...roles: Role[]) {
  return async (request: FastifyRequest): Promise<void> => {
    if (!roles.includes(authOf(request).role)) throw forbidden('owner or admin role required');
  };
}

export const sessionPlugin = fp(async (app: FastifyInstance) => {
  await app.register(cookie);
  app.decorateRequest('auth', null);
});
