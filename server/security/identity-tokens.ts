import { readFile } from 'node:fs/promises';
import { createLocalJWKSet, createRemoteJWKSet, jwtVerify, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import type { OidcConfig } from '../config.js';

export class IdentityTokenError extends Error {}

/**
 * Verifies OpenID Connect ID tokens: signature against the issuer's JWKS, `iss`, `aud`,
 * `exp`, and a verified email. The JWKS is an address or, for an offline server that
 * trusts a local identity provider, a file read at each verification so rotation needs
 * no restart.
 */
export class IdentityTokenVerifier {
  private readonly remote: JWTVerifyGetKey | null;

  constructor(
    private readonly config: OidcConfig,
    private readonly now: () => number,
  ) {
    this.remote = /^https?:\/\//.test(config.jwks) ? createRemoteJWKSet(new URL(config.jwks)) : null;
  }

  /** The token's verified email, lowercased; throws IdentityTokenError when the token is not acceptable. */
  async verifiedEmail(idToken: string): Promise<string> {
    const keys = this.remote ?? createLocalJWKSet((await readJwks(this.config.jwks)) as JSONWebKeySet);
    let payload;
    try {
      ({ payload } = await jwtVerify(idToken, keys, {
        issuer: this.config.issuer,
        audience: this.config.clientId,
        algorithms: ['RS256', 'PS256', 'ES256', 'EdDSA'],
        requiredClaims: ['exp', 'iat'],
        currentDate: new Date(this.now()),
      }));
    } catch {
      throw new IdentityTokenError('invalid identity token');
    }
    const email = payload.email;
    if (typeof email !== 'string' || email.length === 0) throw new IdentityTokenError('identity token has no email');
    // Some issuers send the claim as the string "true".
    if (payload.email_verified !== true && payload.email_verified !== 'true') {
      throw new IdentityTokenError('the identity provider has not verified this email');
    }
    return email.toLowerCase();
  }
}

async function readJwks(path: string): Promise<unknown> {
  return JSON.parse(await readFile(path, 'utf8'));
}
