import type { JoinPolicy, JoinPolicyKind } from '../stores/control/join-policies.js';

/**
 * Who may join an existing organisation by naming it at sign-up (decisions.md, "Join policy").
 * Founding a new organisation is never subject to a policy: there is no one yet to protect.
 */

/** The refusal's exact sentence, as decisions.md gives it. */
export const JOIN_REFUSED = 'this organisation does not accept new members this way';

const KINDS: readonly JoinPolicyKind[] = ['open', 'closed', 'domains'];

/** A policy stays readable as one activity target and one line of output. */
export const JOIN_DOMAINS_MAX = 100;

/** The part of an email after its last @, in lower case: a quoted local part may hold an @ itself. */
export function emailDomain(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1).toLowerCase();
}

/**
 * Whether an account with this email may join. A `domains` policy matches exactly: an email at
 * sub.a.example does not join by a.example, since whoever runs a subdomain (a customer's
 * tenant, a mail host) is not necessarily whoever runs the domain; the operator lists each one.
 */
export function mayJoin(policy: JoinPolicy, email: string): boolean {
  if (policy.policy === 'open') return true;
  if (policy.policy === 'closed') return false;
  return policy.domains.includes(emailDomain(email));
}

/** One line for the operator and the activity log: `open`, `closed`, `domains: a.example, b.example`. */
export function describeJoinPolicy(policy: JoinPolicy): string {
  return policy.policy === 'domains' ? `domains: ${policy.domains.join(', ')}` : policy.policy;
}

/**
 * A DNS host name of two labels or more, in ASCII (an internationalised name in its xn-- form):
 * letters, digits and inner hyphens, 63 characters a label, 253 in all, and not all digits at the
 * end, which would be an IP address. No @, wildcard or trailing dot: matching is exact.
 */
function isHostName(name: string): boolean {
  if (name.length > 253) return false;
  const labels = name.split('.');
  if (labels.length < 2 || /^\d+$/.test(labels[labels.length - 1]!)) return false;
  return labels.every((label) => /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(label));
}

export type ParsedJoinPolicy = { ok: true; policy: JoinPolicy } | { ok: false; error: string };

/**
 * The operator's `--policy` and `--domains` as a policy: domains trimmed, in lower case, without
 * repeats and sorted; `--domains` is required with `domains` and refused with the others, so that
 * a typo in the policy never leaves a list the operator believes is in force.
 */
export function parseJoinPolicy(kind: string, domainList: string | undefined): ParsedJoinPolicy {
  const policy = KINDS.find((k) => k === kind.trim());
  if (!policy) return { ok: false, error: '--policy must be open, closed or domains' };
  if (policy !== 'domains') {
    if (domainList !== undefined)
      return { ok: false, error: `--domains goes only with --policy domains, not ${policy}` };
    return { ok: true, policy: { policy, domains: [] } };
  }
  if (domainList === undefined || domainList.trim() === '') {
    return { ok: false, error: '--domains is required with --policy domains, e.g. --domains a.example,b.example' };
  }
  const domains = new Set<string>();
  for (const entry of domainList.split(',')) {
    const domain = entry.trim().toLowerCase();
    if (!isHostName(domain)) {
      const shown = entry.trim() === '' ? 'an empty entry' : `"${entry.trim()}"`;
      return {
        ok: false,
        error: `--domains: ${shown} is not a domain name such as a.example (exact names only: no @, wildcard or address)`,
      };
    }
    domains.add(domain);
  }
  if (domains.size > JOIN_DOMAINS_MAX)
    return { ok: false, error: `--domains may list at most ${JOIN_DOMAINS_MAX} domains` };
  return { ok: true, policy: { policy, domains: [...domains].sort() } };
}
