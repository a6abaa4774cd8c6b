import type { Static } from '@sinclair/typebox';
import type { KeyList } from '#server/schemas/keys.js';
import type { SpendReport } from '#server/schemas/spend.js';
import type { AlertRule, FiredAlert } from './rules.js';

/**
 * Which rules hold now, from what the control plane answered: a pure function, so each rule's
 * meaning is tested on fixtures. A condition is one rule about one subject (a key, or the
 * organisation); the watcher fires an alert when one starts to hold, not while it goes on.
 */

export type Condition = Omit<FiredAlert, 'seq' | 'firedAt'>;

type ListedKey = Static<typeof KeyList>['keys'][number];

export interface Observed {
  now: number;
  /** GET /keys: names, limits and expiry of the active keys. */
  keys: readonly ListedKey[];
  /** Settled spend by key id (GET /admin/usage-throttling's `spent_cents`, micro-PKR). */
  spent: ReadonlyMap<string, number>;
  /** GET /analytics/spend, every page; null when the control plane does not offer it or it failed. */
  spend: { organization: SpendReport['organization']; keys: SpendReport['keys'] } | null;
  /** The last 15 minutes: every request and those answered 5xx; null when analytics could not be read. */
  recent: { requests: number; errors: number } | null;
}

const DAY_MS = 86_400_000;
const figure = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 6 });
/** Every settled decimal (at least two): an alert about a tiny limit must not read "0.00 of 0.00". */
const pkr = (micro: number) => `${figure.format(micro / 1_000_000)} PKR`;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export function conditions(rules: readonly AlertRule[], seen: Observed): Condition[] {
  return rules.flatMap((rule) => {
    switch (rule.kind) {
      case 'limit_share':
        return limitShare(rule, seen);
      case 'runs_out':
        return runsOut(rule, seen);
      case 'error_rate':
        return errorRate(rule, seen);
      case 'expires':
        return expiring(rule, seen);
    }
  });
}

function limitShare(rule: Extract<AlertRule, { kind: 'limit_share' }>, seen: Observed): Condition[] {
  return seen.keys.flatMap((key) => {
    const limit = key.credit_limit_cents;
    const spent = seen.spent.get(key.id);
    if (limit === null || limit <= 0 || spent === undefined || spent * 100 < limit * rule.percent) return [];
    return [
      {
        ruleId: rule.id,
        subject: key.id,
        title: `${key.name} has spent ${Math.floor((spent * 100) / limit)}% of its credit limit`,
        body: `${pkr(spent)} of ${pkr(limit)}; the gateway refuses it once the limit is spent.`,
        // The keys table shows each key's spend beside its limit, on every control plane.
        screen: 'keys',
        params: {},
      },
    ];
  });
}

function runsOut(rule: Extract<AlertRule, { kind: 'runs_out' }>, seen: Observed): Condition[] {
  if (!seen.spend) return [];
  const horizon = seen.now + rule.days * DAY_MS;
  const subjects = [
    { subject: 'organization', name: 'The organisation’s deposits', forecast: seen.spend.organization.forecast },
    ...seen.spend.keys.map((key) => ({ subject: key.id, name: key.name, forecast: key.forecast })),
  ];
  return subjects.flatMap(({ subject, name, forecast }) => {
    if (forecast === null) return [];
    let body: string;
    if (forecast.kind === 'spent') body = 'Nothing remains.';
    else if (forecast.kind === 'runs_out' && Date.parse(forecast.at) <= horizon) {
      body = `At the rate of the last 7 days, ${pkr(forecast.remaining_micro)} lasts until ${day(Date.parse(forecast.at))}.`;
    } else return [];
    return [
      {
        ruleId: rule.id,
        subject,
        title: `${name} runs out within ${rule.days} days`,
        body,
        screen: 'spend' as const,
        params: {},
      },
    ];
  });
}

function errorRate(rule: Extract<AlertRule, { kind: 'error_rate' }>, seen: Observed): Condition[] {
  const recent = seen.recent;
  if (!recent || recent.requests === 0 || recent.errors * 100 <= recent.requests * rule.percent) return [];
  const share = (recent.errors * 100) / recent.requests;
  return [
    {
      ruleId: rule.id,
      subject: 'organization',
      title: `${share.toFixed(1)}% of requests failed (5xx) in the last 15 minutes`,
      body: `${recent.errors} of ${recent.requests} requests; the rule is above ${rule.percent}%.`,
      screen: 'requests',
      params: { range: '1h', status: '5xx' },
    },
  ];
}

function expiring(rule: Extract<AlertRule, { kind: 'expires' }>, seen: Observed): Condition[] {
  const horizon = seen.now + rule.days * DAY_MS;
  return seen.keys.flatMap((key) => {
    const at = key.expires_at === null ? null : Date.parse(key.expires_at);
    if (at === null || at <= seen.now || at > horizon) return [];
    return [
      {
        ruleId: rule.id,
        subject: key.id,
        title: `${key.name} expires within ${rule.days} days`,
        body: `On ${day(at)}; callers using it are refused from then on.`,
        screen: 'keys',
        params: {},
      },
    ];
  });
}
