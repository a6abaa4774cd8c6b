import type { ControlRecords } from '../stores/control/store.js';
import type { AccountRow, Role } from '../stores/control/accounts.js';
import type { OrganizationRow } from '../stores/control/organizations.js';
import type { IssuedTokens } from '../stores/control/sessions.js';
import { conflict, forbidden } from '../http-errors.js';
import { isoTime } from '../schemas/common.js';
import type { SignedIn } from '../schemas/auth.js';
import { JOIN_REFUSED, mayJoin } from './join-policy.js';

export const DEFAULT_PROJECT_NAME = 'Default';

export interface SignedInSession {
  account: AccountRow;
  organization: OrganizationRow;
  tokens: IssuedTokens;
}

export interface NewAccount {
  email: string;
  passwordHash: string | null;
  organizationName: string;
  sourceIp: string;
  now: number;
}

/**
 * Creates an account: it joins the organisation of that name (case and surrounding
 * spaces ignored) as a member, or founds it, with a `Default` project, as its owner,
 * and records `member.joined`. Joining is subject to the organisation's join policy, founding
 * never is; a refusal (403) is thrown before anything is written. Call inside a transaction,
 * with its `tx`.
 */
export async function createAccount(
  control: ControlRecords,
  input: NewAccount,
): Promise<Omit<SignedInSession, 'tokens'>> {
  if (await control.accounts.findByEmail(input.email)) {
    throw conflict('an account with this email already exists', { field: 'email' });
  }
  let organization = await control.organizations.findByName(input.organizationName);
  let role: Role = 'member';
  if (!organization) {
    organization = await control.organizations.create(input.organizationName, input.now);
    await control.organizations.addProject(organization.id, DEFAULT_PROJECT_NAME, input.now);
    role = 'owner';
  } else if (!mayJoin(await control.joinPolicies.of(organization.id), input.email)) {
    throw forbidden(JOIN_REFUSED);
  }
  const account = await control.accounts.create(organization.id, input.email, input.passwordHash, role, input.now);
  await control.activity.record({
    orgId: organization.id,
    actorId: account.id,
    action: 'member.joined',
    target: account.email,
    sourceIp: input.sourceIp,
    at: input.now,
  });
  return { account, organization };
}

/** Registration: the new account and its first session, in one transaction. */
export function signUp(control: ControlRecords, input: NewAccount): Promise<SignedInSession> {
  return control.write(async (tx) => {
    const created = await createAccount(tx, input);
    return { ...created, tokens: await tx.sessions.start(created.account.id, input.now) };
  });
}

/** Starts a session for an existing account and records `user.login`, in one transaction. */
export function signIn(
  control: ControlRecords,
  account: AccountRow,
  sourceIp: string,
  now: number,
): Promise<SignedInSession> {
  return control.write(async (tx) => {
    const organization = await tx.organizations.get(account.org_id);
    if (!organization) throw new Error(`account ${account.id} has no organisation`);
    await tx.activity.record({
      orgId: organization.id,
      actorId: account.id,
      action: 'user.login',
      target: '',
      sourceIp,
      at: now,
    });
    return { account, organization, tokens: await tx.sessions.start(account.id, now) };
  });
}

export function signedInBody({ account, organization }: SignedInSession): SignedIn {
  return {
    user: { user_id: account.id, email: account.email, role: account.role, joined_at: isoTime(account.created_at) },
    organization: { name: organization.name },
  };
}
