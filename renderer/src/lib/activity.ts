import type { CallResult } from '#contract';
import { UNKNOWN } from './format.js';

/**
 * How the audit trail reads on screen: each action's raw code with words beside it, who
 * acted (a null actor is not always "unknown"), and how a further page joins the ones shown.
 */

export type ActivityEvent = CallResult<'api.activity'>['events'][number];

/** The server's address for changes made by the operator's command on its own machine. */
export const OPERATOR_SOURCE = 'local';

const ACTION_LABELS: Readonly<Record<string, string>> = {
  'user.login': 'Signed in',
  'user.logout': 'Signed out',
  'api_key.created': 'API key created',
  'api_key.updated': 'API key limits changed',
  'api_key.revoked': 'API key revoked',
  'vault_key.set': 'Provider key stored or rotated',
  'vault_key.revoked': 'Provider key removed',
  'org.renamed': 'Organisation renamed',
  'member.joined': 'Member joined',
  'budget.deposited': 'Credit deposited',
  // Beyond the contract: written by the operator's set-join-policy.
  'org.join_policy_changed': 'Join policy changed',
  // Beyond the contract: written by PUT /organization/reporting-zone.
  'org.reporting_zone_changed': 'Reporting time zone changed',
  // Beyond the contract: written by POST /keys/{id}/rotate, on the old key.
  'api_key.rotated': 'API key rotated',
  // Beyond the contract: written by PUT /organization/retention.
  'org.retention_changed': 'Request-log retention changed',
  // In the contract's schema though the server does not write them yet.
  'member.removed': 'Member removed',
  'member.role_changed': "Member's role changed",
};

/** The actions the filter offers, with their words, in the order of the labels above. */
export const ACTION_CHOICES: readonly { value: string; label: string }[] = Object.entries(ACTION_LABELS)
  // In the schema but never written: a filter by them would always be empty.
  .filter(([value]) => value !== 'member.removed' && value !== 'member.role_changed')
  .map(([value, label]) => ({ value, label }));

/** Words for an action; an action this console does not know yet is said to be so, not hidden. */
export function actionLabel(action: string): string {
  return ACTION_LABELS[action] ?? 'Unrecognised action';
}

/** An event as the extension serves it (GET /activity/entries): its place, what changed, its hash. */
export type ActivityEntry = CallResult<'api.activityEntries'>['entries'][number];
export type ActivityChange = NonNullable<ActivityEntry['change']>;

/**
 * What the screen lists: an entry, or an event of the contract's list from a control plane
 * without the extension, which has no place, change or hash (null: unknown, not none).
 */
export type ActivityItem = ActivityEvent & {
  position: number | null;
  change: ActivityChange | null;
  hash: string | null;
};

export const itemOfEvent = (event: ActivityEvent): ActivityItem => ({
  ...event,
  position: null,
  change: null,
  hash: null,
});

const TARGET_KINDS: Readonly<Record<string, string>> = {
  'api_key.created': 'key prefix',
  'api_key.updated': 'key prefix',
  'api_key.revoked': 'key prefix',
  'api_key.rotated': 'old key prefix',
  'vault_key.set': 'provider',
  'vault_key.revoked': 'provider',
  'org.renamed': 'new name',
  'member.joined': "member's email",
  'org.join_policy_changed': 'new policy',
  'org.reporting_zone_changed': 'new time zone',
  'org.retention_changed': 'new retention',
};

/** What the target of an action is (a key prefix, a provider...), for its tooltip; null when it has none. */
export function targetKind(action: string): string | null {
  return TARGET_KINDS[action] ?? null;
}

export interface ActorText {
  text: string;
  /** Why it reads so, when it is not an email. */
  title?: string;
  /** No account acted, or the account is gone: shown quieter than an email. */
  muted: boolean;
}

/**
 * The actor is an account's email. Null has two meanings (decisions.md, activity store):
 * the operator's command acted, which writes from the server's own machine ("local"), or
 * the account was hard-deleted since, in which case who acted is unknown.
 */
export function actorText(event: Pick<ActivityEvent, 'actor' | 'source_ip'>): ActorText {
  if (event.actor !== null) return { text: event.actor, muted: false };
  if (event.source_ip === OPERATOR_SOURCE) {
    return { text: 'system', title: "No account: the operator's command on the server", muted: true };
  }
  return { text: UNKNOWN, title: 'Unknown: the account that acted no longer exists', muted: true };
}

function sameEvent(a: ActivityEvent, b: ActivityEvent): boolean {
  return (
    a.timestamp === b.timestamp &&
    a.action === b.action &&
    a.actor === b.actor &&
    a.target === b.target &&
    a.source_ip === b.source_ip
  );
}

/**
 * Joins an older page (read at offset = events shown + shift) to the events shown. Events
 * written since the first read push every offset back, so the page can start with events
 * already shown, or newer still when more than a page was written meanwhile. Both are
 * skipped: first every event newer than the last one shown, then the longest run repeating
 * the end of what is shown (events carry no id, so they are compared whole; two identical
 * events at one millisecond are not told apart). `skipped` is how far later offsets move;
 * when it is the whole page, the shift is at least that much more and the page tells
 * nothing else.
 */
export function appendPage<T extends ActivityEvent>(
  shown: readonly T[],
  page: readonly T[],
): { events: T[]; skipped: number } {
  const last = shown.at(-1);
  let newer = 0;
  if (last) {
    const lastTime = Date.parse(last.timestamp);
    // Newest first: the events newer than the last one shown lead the page.
    while (newer < page.length && Date.parse(page[newer]!.timestamp) > lastTime) newer += 1;
  }
  const rest = page.slice(newer);
  let overlap = 0;
  for (let k = Math.min(shown.length, rest.length); k > 0; k -= 1) {
    const tail = shown.slice(shown.length - k);
    if (tail.every((event, i) => sameEvent(event, rest[i]!))) {
      overlap = k;
      break;
    }
  }
  return { events: [...shown, ...rest.slice(overlap)], skipped: newer + overlap };
}
