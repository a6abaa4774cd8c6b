import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { checkOrganizationName } from '../domain/organization-name.js';
import { signIn, signUp, signedInBody } from '../domain/sign-up.js';
import { ApiError, badRequest } from '../http-errors.js';
import { sourceIp } from '../plugins/guards.js';
import { holdOff } from './throttling.js';
import { setSessionCookies } from '../plugins/session.js';
import { GoogleBody, SignedIn } from '../schemas/auth.js';
import { ErrorBody, errors } from '../schemas/common.js';
import { IdentityTokenError, IdentityTokenVerifier } from '../security/identity-tokens.js';

/** External identity sign-in: an OpenID Connect ID token in exchange for a session. */
export async function googleRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { control, config, throttle } = app;
  const verifier = config.oidc ? new IdentityTokenVerifier(config.oidc, config.now) : null;

  app.post(
    '/auth/google',
    {
      schema: {
        tags: ['auth'],
        security: [],
        body: GoogleBody,
        // A refused sign-in answers {"error"}, not the session guard's {"detail"}.
        response: { 200: SignedIn, 201: SignedIn, 401: ErrorBody, ...errors(400, 403, 409, 415, 422, 429, 501) },
      },
    },
    async (request, reply) => {
      if (!verifier) throw new ApiError(501, { error: 'external identity sign-in is not configured' });
      const ip = sourceIp(request);
      holdOff(request, config.now(), [[throttle.addresses, ip]], 'too many failed sign-ins from this address', {
        address: ip,
      });
      // Counted before the token is checked, so that tokens sent side by side are held too.
      throttle.addresses.add(ip, config.now());
      let email: string;
      try {
        email = await verifier.verifiedEmail(request.body.id_token);
      } catch (error) {
        if (error instanceof IdentityTokenError) {
          request.log.warn({ address: ip }, 'external sign-in refused');
          throw new ApiError(401, { error: error.message });
        }
        throw error;
      }
      throttle.addresses.takeBack(ip, config.now());
      const now = config.now();
      const existing = await control.accounts.findByEmail(email);
      if (existing) {
        if (existing.deactivated_at !== null) throw new ApiError(401, { error: 'this account is deactivated' });
        const session = await signIn(control, existing, ip, now);
        setSessionCookies(reply, session.tokens, now);
        return reply.code(200).send(signedInBody(session));
      }
      if (request.body.organization_name === undefined) {
        throw badRequest('organization_name is required to create an account', { field: 'organization_name' });
      }
      const session = await signUp(control, {
        email,
        passwordHash: null,
        organizationName: checkOrganizationName(request.body.organization_name, 'organization_name'),
        sourceIp: ip,
        now,
      });
      setSessionCookies(reply, session.tokens, now);
      return reply.code(201).send(signedInBody(session));
    },
  );
}
