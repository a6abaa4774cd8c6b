import { randomUUID } from 'node:crypto';
import { hashSessionToken, newSessionToken } from '../../../security/tokens.js';
import type { SessionRecords } from '../records.js';
import {
  isLive,
  toAuth,
  type AuthContext,
  type IssuedTokens,
  type RefreshOutcome,
  type SessionLifetimes,
  type TokenLookup,
} from '../sessions.js';
import type { PgReadCache } from './read-cache.js';
import { cached, cacheOf, changes, first, type Sql } from './sql.js';

const LOOKUP = `
  SELECT t.session_id, t.kind, t.expires_at, t.used_at,
         s.expires_at AS session_expires_at, s.revoked_at,
         a.id AS account_id, a.email, a.role, a.org_id, a.deactivated_at
  FROM session_tokens t
  JOIN sessions s ON s.id = t.session_id
  JOIN accounts a ON a.id = s.account_id
  WHERE t.hash = $1`;

const REVOKE_SESSION = 'UPDATE sessions SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL';

export class PgSessionRepository implements SessionRecords {
  private readonly sessionCache: PgReadCache<TokenLookup | null> | null;

  constructor(
    private readonly sql: Sql,
    private readonly lifetimes: SessionLifetimes,
  ) {
    this.sessionCache = cacheOf(sql);
  }

  async start(accountId: string, now: number): Promise<IssuedTokens> {
    const sessionId = randomUUID();
    const end = now + this.lifetimes.refreshSeconds * 1000;
    await changes(this.sql, 'INSERT INTO sessions (id, account_id, created_at, expires_at) VALUES ($1, $2, $3, $4)', [
      sessionId,
      accountId,
      now,
      end,
    ]);
    return this.issue(sessionId, now, end);
  }

  async authenticate(key: string, now: number): Promise<AuthContext | null> {
    // Expiry is checked on every call, on the cached row: only the row is cached.
    const row = await cached(
      this.sessionCache,
      key,
      async () => (await first<TokenLookup>(this.sql, LOOKUP, [Buffer.from(key, 'base64')])) ?? null,
    );
    if (!row || row.kind !== 'access' || !isLive(row, now)) return null;
    return toAuth(row);
  }

  async refresh(refreshToken: string, now: number): Promise<RefreshOutcome> {
    if (!this.sql.inTransaction) throw new Error('a refresh token is rotated inside a control transaction');
    const hash = hashSessionToken(refreshToken);
    // Locked: a second replica rotating the same token waits, then sees it used.
    const row = await first<TokenLookup>(this.sql, `${LOOKUP} FOR UPDATE OF t`, [hash]);
    if (!row || row.kind !== 'refresh') return { kind: 'rejected' };
    if (row.used_at !== null) {
      await changes(this.sql, REVOKE_SESSION, [now, row.session_id]);
      return { kind: 'reused' };
    }
    if (!isLive(row, now)) return { kind: 'rejected' };
    await changes(this.sql, 'UPDATE session_tokens SET used_at = $1 WHERE hash = $2', [now, hash]);
    return {
      kind: 'rotated',
      tokens: await this.issue(row.session_id, now, row.session_expires_at),
      auth: toAuth(row),
    };
  }

  async revoke(sessionId: string, now: number): Promise<void> {
    await changes(this.sql, REVOKE_SESSION, [now, sessionId]);
  }

  revokeAllOf(accountId: string, now: number): Promise<number> {
    return changes(this.sql, 'UPDATE sessions SET revoked_at = $1 WHERE account_id = $2 AND revoked_at IS NULL', [
      now,
      accountId,
    ]);
  }

  async purge(now: number): Promise<void> {
    await changes(this.sql, 'DELETE FROM sessions WHERE expires_at < $1', [now]);
    await changes(this.sql, "DELETE FROM session_tokens WHERE kind = 'access' AND expires_at < $1", [now]);
  }

  private async issue(sessionId: string, now: number, sessionEnd: number): Promise<IssuedTokens> {
    const accessToken = newSessionToken();
    const refreshToken = newSessionToken();
    const accessExpiresAt = Math.min(now + this.lifetimes.accessSeconds * 1000, sessionEnd);
    await changes(
      this.sql,
      `INSERT INTO session_tokens (hash, session_id, kind, expires_at) VALUES ($1, $3, 'access', $4), ($2, $3, 'refresh', $5)`,
      [hashSessionToken(accessToken), hashSessionToken(refreshToken), sessionId, accessExpiresAt, sessionEnd],
    );
    return { accessToken, accessExpiresAt, refreshToken, refreshExpiresAt: sessionEnd };
  }
}
