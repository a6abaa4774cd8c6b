import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { signIn, signUp, signedInBody } from '../domain/sign-up.js';
import { checkOrganizationName } from '../domain/organization-name.js';
import { ApiError, unauthorized } from '../http-errors.js';
import { sourceIp } from '../plugins/guards.js';
import { holdOff } from './throttling.js';
import { REFRESH_COOKIE, authOf, clearSessionCookies, requireSession, setSessionCookies } from '../plugins/session.js';
import { LoginBody, Me, RegisterBody, SignedIn } from '../schemas/auth.js';
import { ErrorBody, MessageBody, errors, isoTime } from '../schemas/common.js';
import { hashPassword, verifyPassword } from '../security/passwords.js';
import { checkNewPassword } from '../security/password-policy.js';

const tags = ['auth'];

export async function authRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { control, config, throttle } = app;

  // Unknown emails are checked against this hash so that they take as long as wrong passwords.
  let decoy: Promise<string> | null = null;
  const decoyHash = () => (decoy ??= hashPassword('decoy password that matches nothing', config.passwordCost));

  app.post(
    '/auth/register',
    {
      schema: {
        tags,
        security: [],
        body: RegisterBody,
        response: { 201: SignedIn, ...errors(400, 403, 409, 415, 422, 429) },
      },
    },
    async (request, reply) => {
      // Every registration counts, made or refused: a flood of accounts is what this slows.
      const ip = sourceIp(request);
      holdOff(request, config.now(), [[throttle.registrations, ip]], 'too many registrations from this address', {
        address: ip,
      });
      throttle.registrations.add(ip, config.now());
      const organizationName = checkOrganizationName(request.body.organization_name, 'organization_name');
      await checkNewPassword(request.body.password, config.passwordMinLength);
      const passwordHash = await hashPassword(request.body.password, config.passwordCost);
      const now = config.now();
      const session = await signUp(control, {
        email: request.body.email.toLowerCase(),
        passwordHash,
        organizationName,
        sourceIp: ip,
        now,
      });
      setSessionCookies(reply, session.tokens, now);
      return reply.code(201).send(signedInBody(session));
    },
  );

  app.post(
    '/auth/login',
    // A refused sign-in answers {"error"}, not the session guard's {"detail"}.
    {
      schema: {
        tags,
        security: [],
        body: LoginBody,
        response: { 200: SignedIn, 401: ErrorBody, ...errors(415, 422, 429) },
      },
    },
    async (request, reply) => {
      // Unknown emails are counted as known ones are: a 429 must not tell which exist.
      const who = { account: request.body.email.trim().toLowerCase(), address: sourceIp(request) };
      const counters = [
        [throttle.accounts, who.account],
        [throttle.addresses, who.address],
      ] as const;
      holdOff(request, config.now(), counters, 'too many failed sign-ins', who);
      // Counted as a failure before the password is checked: attempts sent side by side must not
      // all pass the check above while the first is still hashing. A success takes it back.
      for (const [counter, key] of counters) counter.add(key, config.now());
      const account = await control.accounts.findByEmail(request.body.email.trim());
      const matches = await verifyPassword(request.body.password, account?.password_hash ?? (await decoyHash()));
      if (!account || !account.password_hash || !matches || account.deactivated_at !== null) {
        request.log.warn(who, 'sign-in failed');
        throw new ApiError(401, { error: 'invalid email or password' });
      }
      throttle.accounts.forget(who.account);
      throttle.addresses.takeBack(who.address, config.now());
      const now = config.now();
      const session = await signIn(control, account, who.address, now);
      setSessionCookies(reply, session.tokens, now);
      return signedInBody(session);
    },
  );

  app.post(
    '/auth/refresh',
    { schema: { tags, security: [], response: { 200: MessageBody, ...errors(401, 429) } } },
    async (request, reply) => {
      const token = request.cookies[REFRESH_COOKIE];
      if (!token) throw unauthorized();
      const who = { address: sourceIp(request) };
      holdOff(request, config.now(), [[throttle.addresses, who.address]], 'too many failed session refreshes', who);
      const now = config.now();
      const outcome = await control.write((tx) => tx.sessions.refresh(token, now));
      if (outcome.kind !== 'rotated') {
        throttle.addresses.add(who.address, now);
        request.log.warn(who, outcome.kind === 'reused' ? 'refresh token reused: session revoked' : 'refresh refused');
        clearSessionCookies(reply);
        throw unauthorized();
      }
      setSessionCookies(reply, outcome.tokens, now);
      return { message: 'session refreshed' };
    },
  );

  app.post(
    '/auth/logout',
    { onRequest: requireSession, schema: { tags, response: { 200: MessageBody, ...errors(401) } } },
    async (request, reply) => {
      const auth = authOf(request);
      const now = config.now();
      await control.write(async (tx) => {
        await tx.sessions.revoke(auth.sessionId, now);
        await tx.activity.record({
          orgId: auth.orgId,
          actorId: auth.accountId,
          action: 'user.logout',
          target: '',
          sourceIp: sourceIp(request),
          at: now,
        });
      });
      clearSessionCookies(reply);
      return { message: 'signed out' };
    },
  );

  app.get(
    '/auth/me',
    { onRequest: requireSession, schema: { tags, response: { 200: Me, ...errors(401) } } },
    async (request) => {
      const auth = authOf(request);
      const account = await control.accounts.get(auth.accountId);
      const organization = await control.organizations.get(auth.orgId);
      if (!account || !organization) throw unauthorized();
      return {
        user_id: account.id,
        email: account.email,
        role: account.role,
        joined_at: isoTime(account.created_at),
        organization: { name: organization.name },
      };
    },
  );
}
