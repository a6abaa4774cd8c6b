import type { AlertRule } from './alerts-store.js';

/** What each kind of rule says, its one figure and the figure's bounds (the host checks them again). */
export const RULE_KINDS = {
  limit_share: {
    label: 'A key has spent a share of its credit limit',
    unit: '% of the limit',
    min: 1,
    max: 100,
    start: 80,
  },
  runs_out: {
    label: 'A key or the deposits run out soon at the recent rate',
    unit: 'days',
    min: 1,
    max: 365,
    start: 7,
  },
  error_rate: { label: 'Requests fail (5xx) over 15 minutes', unit: '% of requests', min: 0, max: 100, start: 5 },
  expires: { label: 'A key expires soon', unit: 'days', min: 1, max: 365, start: 14 },
} as const;

export type RuleKind = keyof typeof RULE_KINDS;

/** A rule of `kind` with `figure`, keeping `id`. */
export function ruleOf(id: string, kind: RuleKind, figure: number): AlertRule {
  return kind === 'limit_share' || kind === 'error_rate' ? { id, kind, percent: figure } : { id, kind, days: figure };
}

export function newRuleId(): string {
  return `rule-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

/** Why a figure typed for `kind` cannot be saved, or null. */
export function figureError(kind: RuleKind, text: string): string | null {
  const { min, max } = RULE_KINDS[kind];
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value)) return 'enter a number';
  if (kind !== 'error_rate' && !Number.isInteger(value)) return 'enter a whole number';
  if (value < min || value > max) return `between ${min} and ${max}`;
  return null;
}

/** The rule in a sentence, for the list of rules. */
export function describeRule(rule: AlertRule): string {
  switch (rule.kind) {
    case 'limit_share':
      return `A key has spent ${rule.percent}% of its credit limit`;
    case 'runs_out':
      return `A key or the deposits run out within ${rule.days} days`;
    case 'error_rate':
      return `More than ${rule.percent}% of requests fail (5xx) over 15 minutes`;
    case 'expires':
      return `A key expires within ${rule.days} days`;
  }
}

/** The titles of the screens an alert opens, as the navigation names them. */
export const SCREEN_TITLES = { keys: 'API keys', spend: 'Spend', requests: 'Request log' } as const;
