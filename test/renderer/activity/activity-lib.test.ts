import { describe, expect, it } from 'vitest';
import { actionLabel, actorText, appendPage, type ActivityEvent } from '../../../renderer/src/lib/activity.js';
import { pageSizeFrom } from '../../../renderer/src/lib/page-size.js';
import { activityFilterQuery } from '../../../renderer/src/screens/activity/activity-query.js';

const event = (n: number, patch: Partial<ActivityEvent> = {}): ActivityEvent => ({
  actor: 'admin@example.com',
  action: 'api_key.created',
  target: `sk_svc_${n}`,
  timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, 0) - n * 1000).toISOString(),
  source_ip: '10.0.0.1',
  ...patch,
});

describe('who acted', () => {
  it('names the account by email', () => {
    expect(actorText(event(1))).toEqual({ text: 'admin@example.com', muted: false });
  });

  it("says system for the operator's command and a dash for an account since deleted", () => {
    expect(actorText({ actor: null, source_ip: 'local' })).toMatchObject({ text: 'system', muted: true });
    expect(actorText({ actor: null, source_ip: '203.0.113.9' })).toMatchObject({ text: '–', muted: true });
  });
});

describe('what was done', () => {
  it('reads every action the server writes, and owns up to one it does not know', () => {
    for (const action of [
      'user.login',
      'user.logout',
      'api_key.created',
      'api_key.updated',
      'api_key.revoked',
      'vault_key.set',
      'vault_key.revoked',
      'org.renamed',
      'member.joined',
      'budget.deposited',
    ]) {
      expect(actionLabel(action)).not.toBe('Unrecognised action');
    }
    expect(actionLabel('member.promoted')).toBe('Unrecognised action');
  });
});

describe('joining an older page', () => {
  it('appends when nothing new was written meanwhile', () => {
    const shown = [event(0), event(1)];
    expect(appendPage(shown, [event(2), event(3)])).toEqual({ events: [...shown, event(2), event(3)], skipped: 0 });
  });

  it('drops the events a newer write pushed back into the next page, and counts them', () => {
    const shown = [event(0), event(1), event(2)];
    // Two events were written after the first read: offset 3 now starts at event(1).
    expect(appendPage(shown, [event(1), event(2), event(3)])).toEqual({
      events: [...shown, event(3)],
      skipped: 2,
    });
  });

  it('drops events newer than the last one shown, though none of them is shown', () => {
    const shown = [event(0), event(1), event(2)];
    // Four newer events (n = -1 … -4) and event(0) … event(2) pushed offset 3 to event(-1).
    const page = [event(-1), event(0), event(1), event(2), event(3)];
    expect(appendPage(shown, page)).toEqual({ events: [...shown, event(3)], skipped: 4 });
  });

  it('skips a whole page newer than what is shown, appending nothing', () => {
    const shown = [event(0), event(1)];
    expect(appendPage(shown, [event(-3), event(-2), event(-1)])).toEqual({ events: shown, skipped: 3 });
  });

  it('keeps a page that only looks alike in part', () => {
    const shown = [event(0), event(1)];
    const page = [event(2, { target: 'sk_svc_1' }), event(3)];
    expect(appendPage(shown, page).skipped).toBe(0);
  });

  it('keeps an older event at the same millisecond as the last one shown', () => {
    const shown = [event(0), event(1)];
    const twin = event(1, { action: 'api_key.updated' });
    expect(appendPage(shown, [twin, event(2)])).toEqual({ events: [...shown, twin, event(2)], skipped: 0 });
  });
});

describe('page size in the address', () => {
  it('takes an offered size and falls back to 50 otherwise', () => {
    expect(pageSizeFrom('10')).toBe(10);
    expect(pageSizeFrom(undefined)).toBe(50);
    expect(pageSizeFrom('7')).toBe(50);
    expect(pageSizeFrom('abc')).toBe(50);
  });
});

describe('the time filters sent', () => {
  it('keep the milliseconds of an instant another screen linked to', () => {
    const query = activityFilterQuery({ from: '2030-01-31T13:05:00.250Z', to: '2030-01-31T13:05:01.999Z' });
    expect(Date.parse(query.from!)).toBe(Date.parse('2030-01-31T13:05:00.250Z'));
    expect(Date.parse(query.to!)).toBe(Date.parse('2030-01-31T13:05:01.999Z'));
  });

  it('send a typed local time to the second, with its offset', () => {
    const query = activityFilterQuery({ to: '2030-01-31T18:00' });
    expect(query.to).toMatch(/^2030-01-31T18:00:00[+-]\d{2}:\d{2}$/);
  });
});
