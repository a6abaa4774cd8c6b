import { randomUUID } from 'node:crypto';
import type { Database, Statement } from 'better-sqlite3';
import { hashSessionToken, newSessionToken } from '../../security/tokens.js';
import type { Role } from './accounts.js';
import { ReadCache } from '../read-cache.js';

/** Who is calling: resolved from the access cookie on every request. */
export interface AuthContext {
  sessionId: string;
  accountId: string;
  email: string;
  role: Role;
  orgId: string;
}

export interface IssuedTokens {
  accessToken: string;
  accessExpiresAt: number;
  refreshToken: string;
  /** The session's absolute end, which the refresh token never outlives. */
  refreshExpiresAt: number;
}

export type RefreshOutcome =
  | { kind: 'rotated'; tokens: IssuedTokens; auth: AuthContext }
  | { kind: 'rejected' }
  /** A refresh token that had already been rotated: its whole session is revoked. */
  | { kind: 'reused' };

/** A token with its session and account, as authentication and rotation read it. */
export interface TokenLookup {
  session_id: string;
  kind: 'access' | 'refresh';
  expires_at: number;
  used_at: number | null;
  session_expires_at: number;
  revoked_at: number | null;
  account_id: string;
  email: string;
  role: Role;
  org_id: string;
  deactivated_at: number | null;
}

export interface SessionLifetimes {
  accessSeconds: number;
  refreshSeconds: number;
}

export class SessionRepository {
  private readonly lookup: Statement<[Buffer], TokenLookup>;
  private readonly insertSession: Statement<[string, string, number, number]>;
  private readonly insertToken: Statement<[Buffer, string, 'access' | 'refresh', number]>;
  private readonly markUsed: Statement<[number, Buffer]>;
  private readonly revokeSession: Statement<[number, string]>;
  private readonly revokeAccount: Statement<[number, string]>;
  private readonly purgeSessions: Statement<[number]>;
  private readonly purgeAccessTokens: Statement<[number]>;
  private readonly sessionCache: ReadCache<TokenLookup | null>;

  constructor(
    private readonly db: Database,
    private readonly lifetimes: SessionLifetimes,
  ) {
    this.lookup = db.prepare(`
      SELECT t.session_id, t.kind, t.expires_at, t.used_at,
             s.expires_at AS session_expires_at, s.revoked_at,
             a.id AS account_id, a.email, a.role, a.org_id, a.deactivated_at
      FROM session_tokens t
      JOIN sessions s ON s.id = t.session_id
      JOIN accounts a ON a.id = s.account_id
      WHERE t.hash = ?`);
    this.insertSession = db.prepare(
      'INSERT INTO sessions (id, account_id, created_at, expires_at) VALUES (?, ?, ?, ?)',
    );
    this.insertToken = db.prepare(
      'INSERT INTO session_tokens (hash, session_id, kind, expires_at) VALUES (?, ?, ?, ?)',
    );
    this.markUsed = db.prepare('UPDATE session_tokens SET used_at = ? WHERE hash = ?');
    this.revokeSession = db.prepare('UPDATE sessions SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL');
    this.revokeAccount = db.prepare('UPDATE sessions SET revoked_at = ? WHERE account_id = ? AND revoked_at IS NULL');
    this.purgeSessions = db.prepare('DELETE FROM sessions WHERE expires_at < ?');
    this.purgeAccessTokens = db.prepare("DELETE FROM session_tokens WHERE kind = 'access' AND expires_at < ?");
    this.sessionCache = new ReadCache(db);
  }

  /** Starts a session; the caller runs this inside the transaction that records the sign-in. */
  async start(accountId: string, now: number): Promise<IssuedTokens> {
    const sessionId = randomUUID();
    const end = now + this.lifetimes.refreshSeconds * 1000;
    this.insertSession.run(sessionId, accountId, now, end);
    return this.issue(sessionId, now, end);
  }

  /**
   * The caller behind an access token, given as its key (`sessionTokenKey`), or null when it is
   * unknown, expired, revoked or deactivated.
   */
  async authenticate(key: string, now: number): Promise<AuthContext | null> {
    // Expiry is checked on every call, on the cached row: only the row is cached.
    const row = this.sessionCache.get(key, () => this.lookup.get(Buffer.from(key, 'base64')) ?? null);
    if (!row || row.kind !== 'access' || !isLive(row, now)) return null;
    return toAuth(row);
  }

  /**
   * Rotates a refresh token, inside the caller's transaction: its write lock, held from the
   * lookup on, is what keeps two racing uses from both winning.
   */
  async refresh(refreshToken: string, now: number): Promise<RefreshOutcome> {
    if (!this.db.inTransaction) throw new Error('a refresh token is rotated inside a control transaction');
    return this.rotate(hashSessionToken(refreshToken), now);
  }

  async revoke(sessionId: string, now: number): Promise<void> {
    this.revokeSession.run(now, sessionId);
  }

  async revokeAllOf(accountId: string, now: number): Promise<number> {
    return this.revokeAccount.run(now, accountId).changes;
  }

  /**
   * Drops sessions past their absolute end (their tokens go with them) and expired
   * access tokens. Used refresh tokens stay until their session ends: they are what
   * detects a reuse.
   */
  async purge(now: number): Promise<void> {
    this.purgeSessions.run(now);
    this.purgeAccessTokens.run(now);
  }

  private rotate(hash: Buffer, now: number): RefreshOutcome {
    const row = this.lookup.get(hash);
    if (!row || row.kind !== 'refresh') return { kind: 'rejected' };
    if (row.used_at !== null) {
      this.revokeSession.run(now, row.session_id);
      return { kind: 'reused' };
    }
    if (!isLive(row, now)) return { kind: 'rejected' };
    this.markUsed.run(now, hash);
    return { kind: 'rotated', tokens: this.issue(row.session_id, now, row.session_expires_at), auth: toAuth(row) };
  }

  private issue(sessionId: string, now: number, sessionEnd: number): IssuedTokens {
    const accessToken = newSessionToken();
    const refreshToken = newSessionToken();
    const accessExpiresAt = Math.min(now + this.lifetimes.accessSeconds * 1000, sessionEnd);
    this.insertToken.run(hashSessionToken(accessToken), sessionId, 'access', accessExpiresAt);
    this.insertToken.run(hashSessionToken(refreshToken), sessionId, 'refresh', sessionEnd);
    return { accessToken, accessExpiresAt, refreshToken, refreshExpiresAt: sessionEnd };
  }
}

export function isLive(row: TokenLookup, now: number): boolean {
  return row.expires_at > now && row.session_expires_at > now && row.revoked_at === null && row.deactivated_at === null;
}

export function toAuth(row: TokenLookup): AuthContext {
  return { sessionId: row.session_id, accountId: row.account_id, email: row.email, role: row.role, orgId: row.org_id };
}
