import { describe, expect, it } from 'vitest';
import { conditions, type Observed } from '../../main/core/alerts/conditions.js';
import type { AlertRule } from '../../main/core/alerts/rules.js';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const DAY = 86_400_000;
const PKR = 1_000_000;

function key(id: string, extra: Partial<Observed['keys'][number]> = {}): Observed['keys'][number] {
  return {
    id,
    name: `key ${id}`,
    key_prefix: 'sk_svc_abcdefgh',
    project_id: 'p1',
    created_at: new Date(NOW - 30 * DAY).toISOString(),
    last_used_at: null,
    rate_limit_rpm: 60,
    expires_at: null,
    credit_limit_cents: null,
    allowed_models: null,
    environment: 'production',
    ...extra,
  };
}

const seen = (extra: Partial<Observed> = {}): Observed => ({
  now: NOW,
  keys: [],
  spent: new Map(),
  spend: null,
  recent: null,
  ...extra,
});
const subjects = (rules: AlertRule[], observed: Observed) => conditions(rules, observed).map((c) => c.subject);

describe('alert conditions', () => {
  it('holds a share of the limit at and past the share, never for a key without a limit', () => {
    const rules: AlertRule[] = [{ id: 'r', kind: 'limit_share', percent: 80 }];
    const observed = seen({
      keys: [
        key('at', { credit_limit_cents: 10 * PKR }),
        key('below', { credit_limit_cents: 10 * PKR }),
        key('past', { credit_limit_cents: 10 * PKR }),
        key('open'),
        key('unknown', { credit_limit_cents: 10 * PKR }),
      ],
      spent: new Map([
        ['at', 8 * PKR],
        ['below', 8 * PKR - 1],
        ['past', 12 * PKR],
        ['open', 1000 * PKR],
      ]),
    });
    expect(subjects(rules, observed)).toEqual(['at', 'past']);
    const [at] = conditions(rules, observed);
    expect(at).toMatchObject({ ruleId: 'r', title: 'key at has spent 80% of its credit limit', screen: 'keys' });
    expect(at!.body).toContain('8.00 PKR of 10.00 PKR');
  });

  it('holds a run-out within the days for keys and the deposits, and for a limit used up', () => {
    const forecast = (days: number) => ({
      kind: 'runs_out' as const,
      remaining_micro: PKR,
      at: new Date(NOW + days * DAY).toISOString(),
      earliest: new Date(NOW + days * DAY).toISOString(),
      latest: null,
    });
    const spendKey = (id: string, f: unknown) => ({
      id,
      name: `key ${id}`,
      key_prefix: 'sk_svc_abcdefgh',
      project_id: 'p1',
      credit_limit_micro: 10 * PKR,
      spent_micro: 0,
      burn: null,
      forecast: f,
    });
    const observed = seen({
      spend: {
        organization: {
          deposited_micro: 0,
          allocated_micro: 0,
          headroom_micro: 0,
          spent_micro: 0,
          remaining_micro: 0,
          burn: null,
          forecast: forecast(6.9),
        },
        keys: [
          spendKey('soon', forecast(7)),
          spendKey('later', forecast(7.01)),
          spendKey('used', { kind: 'spent', remaining_micro: -1 }),
          spendKey('open', { kind: 'projected', days: 30, amount_micro: 1, low_micro: 0, high_micro: 2 }),
          spendKey('unknown', null),
        ] as never,
      },
    });
    expect(subjects([{ id: 'r', kind: 'runs_out', days: 7 }], observed)).toEqual(['organization', 'soon', 'used']);
    // Without the spend endpoint (an older control plane) the rule cannot hold.
    expect(subjects([{ id: 'r', kind: 'runs_out', days: 7 }], seen())).toEqual([]);
  });

  it('holds an error rate strictly above the share, and never over no requests', () => {
    const rule: AlertRule[] = [{ id: 'r', kind: 'error_rate', percent: 5 }];
    expect(subjects(rule, seen({ recent: { requests: 100, errors: 5 } }))).toEqual([]);
    expect(subjects(rule, seen({ recent: { requests: 100, errors: 6 } }))).toEqual(['organization']);
    expect(subjects(rule, seen({ recent: { requests: 0, errors: 0 } }))).toEqual([]);
    expect(subjects(rule, seen({ recent: null }))).toEqual([]);
    const [held] = conditions(rule, seen({ recent: { requests: 40, errors: 10 } }));
    expect(held).toMatchObject({ title: '25.0% of requests failed (5xx) in the last 15 minutes', screen: 'requests' });
    expect(held!.params).toEqual({ range: '1h', status: '5xx' });
  });

  it('holds an expiry within the days, not one already past or further off', () => {
    const iso = (ms: number) => new Date(ms).toISOString();
    const observed = seen({
      keys: [
        key('soon', { expires_at: iso(NOW + 3 * DAY) }),
        key('edge', { expires_at: iso(NOW + 14 * DAY) }),
        key('far', { expires_at: iso(NOW + 14 * DAY + 1000) }),
        key('past', { expires_at: iso(NOW - 1000) }),
        key('never'),
      ],
    });
    expect(subjects([{ id: 'r', kind: 'expires', days: 14 }], observed)).toEqual(['soon', 'edge']);
  });
});
