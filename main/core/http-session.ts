import type { CookieJar } from 'tough-cookie';
import { request, type Dispatcher } from 'undici';
import { ERROR_FIELD_HEADER } from '#server/schemas/common.js';
import { ConsoleError, errorFromResponse, type RefusalHints } from './errors.js';

const ACCESS_COOKIE = 'svc_access_token';
const REFRESH_COOKIE = 'svc_refresh_token';

export interface HttpAnswer {
  status: number;
  body: unknown;
  /** What a refusal's headers add to its body: the field it concerns, how long to wait. */
  hints: RefusalHints;
}

export interface SendOptions {
  query?: Record<string, unknown>;
  body?: unknown;
  /** Sign-in and refresh calls: no refresh before them, none on their 401. */
  anonymous?: boolean;
}

export interface HttpSessionOptions {
  /** Refresh when the access cookie lapses within this many ms. */
  refreshAheadMs?: number;
  dispatcher?: Dispatcher;
  /** The refresh failed: the profile is signed out and its jar emptied. */
  onSignedOut?: () => void;
  /** Cookies changed: the caller persists the jar. */
  onJarChanged?: () => void;
}

/**
 * One connection profile's HTTP session: its cookie jar, and the refresh rules. The
 * access cookie is refreshed shortly before it lapses and on the first 401, then the
 * request is retried once. Concurrent calls share one refresh; a failed refresh signs
 * the profile out, with no loop.
 */
export class HttpSession {
  private refreshing: Promise<boolean> | null = null;
  /** Counts completed refreshes, so a 401 to a request sent with an older token retries instead of refreshing again. */
  private generation = 0;

  constructor(
    readonly baseUrl: string,
    readonly jar: CookieJar,
    private readonly options: HttpSessionOptions = {},
  ) {}

  async send(method: string, path: string, options: SendOptions = {}): Promise<HttpAnswer> {
    if (options.anonymous) return this.raw(method, path, options);
    let sentWith = this.generation;
    if ((await this.accessLapsesSoon()) && (await this.hasRefreshCookie())) {
      if (this.generation === sentWith) await this.refresh();
      sentWith = this.generation;
    }
    const answer = await this.raw(method, path, options);
    // Without a refresh cookie the profile is signed out already: nothing to refresh.
    if (answer.status !== 401 || !(await this.hasRefreshCookie())) return answer;
    if (this.generation === sentWith && !(await this.refresh())) return answer;
    return this.raw(method, path, options);
  }

  /** True while the jar holds a refresh token: the profile is signed in as far as this side knows. */
  async hasRefreshCookie(): Promise<boolean> {
    return (await this.cookie(REFRESH_COOKIE, '/auth/refresh')) !== undefined;
  }

  /** Empties the jar (sign-out). */
  async clear(): Promise<void> {
    await this.jar.removeAllCookies();
    this.options.onJarChanged?.();
  }

  /** Exchanges the refresh cookie for fresh tokens; every concurrent caller waits on the same exchange. */
  refresh(): Promise<boolean> {
    this.refreshing ??= this.exchange().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  private async exchange(): Promise<boolean> {
    const answer = await this.raw('POST', '/auth/refresh', { anonymous: true });
    if (answer.status === 200) {
      this.generation++;
      return true;
    }
    // Only the server's 401 ends the session; a 502 from a proxy or a restarting server must not.
    if (answer.status !== 401) throw errorFromResponse(answer.status, answer.body, answer.hints);
    await this.clear();
    this.options.onSignedOut?.();
    return false;
  }

  private async accessLapsesSoon(): Promise<boolean> {
    const access = (await this.jar.getCookies(this.baseUrl + '/')).find((c) => c.key === ACCESS_COOKIE);
    if (!access) return true;
    const expiry = access.expiryTime();
    return expiry !== undefined && expiry - Date.now() <= (this.options.refreshAheadMs ?? 60_000);
  }

  private async cookie(name: string, path: string) {
    return (await this.jar.getCookies(this.baseUrl + path)).find((c) => c.key === name);
  }

  private async raw(method: string, path: string, options: SendOptions): Promise<HttpAnswer> {
    const url = new URL(this.baseUrl + path);
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined && value !== null) url.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = { accept: 'application/json' };
    const cookie = await this.jar.getCookieString(url.href);
    if (cookie) headers.cookie = cookie;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    let response: Dispatcher.ResponseData;
    try {
      response = await request(url, {
        method: method as Dispatcher.HttpMethod,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        dispatcher: this.options.dispatcher,
      });
    } catch (error) {
      throw new ConsoleError(0, `cannot reach the control plane at ${this.baseUrl}: ${(error as Error).message}`);
    }
    const text = await response.body.text();
    const setCookie = response.headers['set-cookie'];
    const lines = Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : [];
    // A cookie for another domain or path is dropped, as a browser would, not an error.
    for (const line of lines) await this.jar.setCookie(line, url.href, { ignoreError: true });
    if (lines.length > 0) this.options.onJarChanged?.();
    let body: unknown = undefined;
    if (text) {
      try {
        body = JSON.parse(text);
      } catch {
        throw new ConsoleError(
          502,
          `the control plane at ${this.baseUrl} answered ${response.statusCode} with a body that is not JSON`,
        );
      }
    }
    const hints: RefusalHints = {};
    const field = response.headers[ERROR_FIELD_HEADER];
    if (typeof field === 'string' && field !== '') hints.field = field;
    // Sent as whole seconds by the control plane; an HTTP date from a proxy is not read.
    const retryAfter = response.headers['retry-after'];
    if (typeof retryAfter === 'string' && /^\d{1,9}$/.test(retryAfter)) hints.retryAfterSeconds = Number(retryAfter);
    return { status: response.statusCode, body, hints };
  }
}
