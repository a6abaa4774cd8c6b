import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import type { CallArgs } from '#contract';
import type { ActivityEvent } from '../../../renderer/src/lib/activity.js';
import { ActivityScreen } from '../../../renderer/src/screens/activity/ActivityScreen.js';
import { useActivity } from '../../../renderer/src/screens/activity/activity-store.js';
import { resetOrganisationStores } from '../../../renderer/src/state/organisation-scope.js';
import { useRoute } from '../../../renderer/src/state/route.js';
import { useSession } from '../../../renderer/src/state/session.js';
import { bridge, Refusal } from '../fake-bridge.js';

const START = Date.UTC(2026, 4, 1, 12, 0, 0);

/** The n-th newest event of a trail (0 is the newest). */
function nth(n: number): ActivityEvent {
  return {
    actor: 'admin@demo.example',
    action: 'api_key.created',
    target: `sk_svc_${String(n).padStart(4, '0')}`,
    timestamp: new Date(START - n * 60_000).toISOString(),
    source_ip: '127.0.0.1',
  };
}

/** Answers api.activity from a trail of `total` events, as the server pages it. */
function serveTrail(total: number, patch: (n: number, e: ActivityEvent) => ActivityEvent = (_, e) => e) {
  const trail = Array.from({ length: total }, (_, n) => patch(n, nth(n)));
  bridge.on('api.activity', ({ query }: CallArgs<'api.activity'>) => {
    const limit = query.limit ?? 50;
    const offset = query.offset ?? 0;
    return { events: trail.slice(offset, offset + limit), limit, offset };
  });
}

const targets = () => screen.getAllByTestId('activity-target').map((cell) => cell.textContent);

beforeEach(() => {
  resetOrganisationStores();
  // These tests read the contract's list, as from a control plane without the extension.
  bridge.on('api.activityEntries', () => {
    throw new Refusal(404, 'Not Found');
  });
  useRoute.setState({ screen: 'activity', params: {} });
  useSession.setState({
    phase: 'console',
    profileId: 'p1',
    me: {
      user_id: '00000000-0000-4000-8000-000000000001',
      email: 'admin@demo.example',
      role: 'admin',
      joined_at: '2026-01-01T00:00:00.000Z',
      organization: { name: 'Demo' },
    },
  });
});

describe('the activity screen', () => {
  it('appends older pages on "Load more" and stops at a short page', async () => {
    serveTrail(120);
    const user = userEvent.setup();
    render(<ActivityScreen />);

    await screen.findByText('50 newest events shown.');
    expect(targets()).toHaveLength(50);
    expect(targets()[0]).toBe('sk_svc_0000');

    await user.click(screen.getByTestId('activity-load-more'));
    await screen.findByText('100 newest events shown.');
    // The second page follows the first: nothing replaced, nothing repeated.
    expect(targets().slice(49, 51)).toEqual(['sk_svc_0049', 'sk_svc_0050']);

    await user.click(screen.getByTestId('activity-load-more'));
    await screen.findByText('All 120 events shown: this is the start of the trail.');
    expect(targets()).toHaveLength(120);
    expect(targets().at(-1)).toBe('sk_svc_0119');
    expect(screen.queryByTestId('activity-load-more')).toBeNull();

    expect(bridge.callsOf('api.activity').map((c) => c.query)).toEqual([
      { limit: 50, offset: 0 },
      { limit: 50, offset: 50 },
      { limit: 50, offset: 100 },
    ]);
  });

  it('offers no "Load more" when the first page is already the last', async () => {
    serveTrail(3);
    render(<ActivityScreen />);
    await screen.findByText('All 3 events shown: this is the start of the trail.');
    expect(screen.queryByTestId('activity-load-more')).toBeNull();
  });

  it('reads pages of the size kept in the address', async () => {
    useRoute.setState({ screen: 'activity', params: { size: '10' } });
    serveTrail(25);
    render(<ActivityScreen />);
    await screen.findByText('10 newest events shown.');
    expect(bridge.callsOf('api.activity')[0]?.query).toEqual({ limit: 10, offset: 0 });
  });

  it('shows a failed "Load more" in place, keeps the rows, and tries again', async () => {
    serveTrail(60);
    const user = userEvent.setup();
    render(<ActivityScreen />);
    await screen.findByText('50 newest events shown.');

    bridge.on('api.activity', () => {
      throw new Refusal(0, 'the console host did not answer: is it still running?');
    });
    await user.click(screen.getByTestId('activity-load-more'));
    expect((await screen.findByTestId('activity-more-error')).textContent).toContain('the console host did not answer');
    expect(targets()).toHaveLength(50);

    serveTrail(60);
    await user.click(within(screen.getByTestId('activity-more-error')).getByRole('button', { name: 'Try again' }));
    await screen.findByText('All 60 events shown: this is the start of the trail.');
    expect(screen.queryByTestId('activity-more-error')).toBeNull();
  });

  it('says an older page is on its way, and refuses a second click meanwhile', async () => {
    serveTrail(60);
    const user = userEvent.setup();
    render(<ActivityScreen />);
    await screen.findByText('50 newest events shown.');

    let answer: () => void = () => {};
    bridge.on('api.activity', ({ query }) => {
      const page = { events: [nth(50)], limit: query.limit ?? 50, offset: query.offset ?? 0 };
      return new Promise((resolve) => (answer = () => resolve(page)));
    });
    await user.click(screen.getByTestId('activity-load-more'));
    const button = screen.getByTestId('activity-load-more');
    expect(button.textContent).toBe('Loading older events…');
    expect(button).toHaveProperty('disabled', true);
    answer();
    await screen.findByText('All 51 events shown: this is the start of the trail.');
    expect(bridge.callsOf('api.activity')).toHaveLength(2);
  });

  it('shows the raw action code beside its label, and who acted, with null actors explained', async () => {
    serveTrail(3, (n, e) =>
      n === 0
        ? { ...e, action: 'org.renamed', target: 'Acme' }
        : n === 1
          ? { ...e, actor: null, action: 'budget.deposited', target: '', source_ip: 'local' }
          : { ...e, actor: null, action: 'vault_key.set', target: 'openai' },
    );
    render(<ActivityScreen />);
    const rows = await screen.findAllByTestId('activity-row');

    expect(within(rows[0]!).getByTestId('activity-action').textContent).toContain('Organisation renamed org.renamed');
    expect(within(rows[0]!).getByTestId('activity-actor').textContent).toContain('admin@demo.example');

    // The operator's deposit: no account acted.
    expect(within(rows[1]!).getByTestId('activity-actor').textContent).toContain('system');
    expect(within(rows[1]!).getByTestId('activity-target').textContent).toContain('none');
    // An account since deleted: who acted is unknown, never a blank or a made-up name.
    expect(within(rows[2]!).getByTestId('activity-actor').textContent).toContain('–');
    expect(within(rows[2]!).getByTitle('Unknown: the account that acted no longer exists')).toBeTruthy();
  });

  it('shows the time in the local zone with UTC on hover', async () => {
    serveTrail(1);
    render(<ActivityScreen />);
    const row = await screen.findByTestId('activity-row');
    const time = row.querySelector('time');
    expect(time?.getAttribute('datetime')).toBe(nth(0).timestamp);
    // The tests run in Karachi (UTC+5): noon UTC reads as five in the afternoon, in any locale's words.
    expect(time?.textContent).toMatch(/\b(5:00:00\sPM|17:00:00)\b/);
    expect(time?.textContent).not.toContain('12:00');
    expect(time?.getAttribute('title')).toBe('2026-05-01 12:00:00 UTC');
  });

  it('refresh reads the newest page again, replacing the list', async () => {
    serveTrail(60);
    const user = userEvent.setup();
    render(<ActivityScreen />);
    await screen.findByText('50 newest events shown.');
    await user.click(screen.getByTestId('activity-load-more'));
    await screen.findByText('All 60 events shown: this is the start of the trail.');

    serveTrail(60, (n, e) => (n === 0 ? { ...e, target: 'sk_svc_new' } : e));
    await user.click(screen.getByTestId('activity-refresh'));
    await screen.findByText('50 newest events shown.');
    expect(targets()[0]).toBe('sk_svc_new');
    expect(bridge.callsOf('api.activity').at(-1)?.query).toEqual({ limit: 50, offset: 0 });
  });

  it('skips events a newer write pushed into the next page, and offers to show the newer ones', async () => {
    serveTrail(60);
    const user = userEvent.setup();
    render(<ActivityScreen />);
    await screen.findByText('50 newest events shown.');

    // Two events are written at the top: the server's offset 50 now starts two events earlier.
    const grown = [
      { ...nth(0), timestamp: new Date(START + 120_000).toISOString(), target: 'newer-2' },
      { ...nth(0), timestamp: new Date(START + 60_000).toISOString(), target: 'newer-1' },
      ...Array.from({ length: 60 }, (_, n) => nth(n)),
    ];
    bridge.on('api.activity', ({ query }) => {
      const limit = query.limit ?? 50;
      const offset = query.offset ?? 0;
      return { events: grown.slice(offset, offset + limit), limit, offset };
    });
    await user.click(screen.getByTestId('activity-load-more'));
    await screen.findByText('All 60 events shown: this is the start of the trail.');
    expect(new Set(targets()).size).toBe(60);
    expect(screen.getByTestId('activity-newer').textContent).toContain('Newer events have been recorded');
  });

  it('reads on past more newer events than a page holds, never showing them below older ones', async () => {
    useRoute.setState({ screen: 'activity', params: { size: '10' } });
    serveTrail(30);
    const user = userEvent.setup();
    render(<ActivityScreen />);
    await screen.findByText('10 newest events shown.');

    // Fifteen events are written at the top: offset 10 now holds only events newer than those shown.
    const newer = Array.from({ length: 15 }, (_, i) => ({
      ...nth(0),
      timestamp: new Date(START + (15 - i) * 1000).toISOString(),
      target: `newer-${15 - i}`,
    }));
    const grown = [...newer, ...Array.from({ length: 30 }, (_, n) => nth(n))];
    bridge.on('api.activity', ({ query }) => {
      const limit = query.limit ?? 50;
      const offset = query.offset ?? 0;
      return { events: grown.slice(offset, offset + limit), limit, offset };
    });
    await user.click(screen.getByTestId('activity-load-more'));
    await screen.findByText('15 newest events shown.');
    expect(targets()).toEqual(Array.from({ length: 15 }, (_, n) => nth(n).target));
    expect(screen.getByTestId('activity-newer').textContent).toContain('Newer events have been recorded');
    expect(bridge.callsOf('api.activity').map((c) => c.query.offset)).toEqual([0, 10, 20]);

    // The next page follows on from the shift found.
    await user.click(screen.getByTestId('activity-load-more'));
    await screen.findByText('25 newest events shown.');
    expect(targets()).toEqual(Array.from({ length: 25 }, (_, n) => nth(n).target));
    expect(bridge.callsOf('api.activity').at(-1)?.query.offset).toBe(30);
  });

  it('gives up reading past newer events after a few pages, and says to refresh', async () => {
    useRoute.setState({ screen: 'activity', params: { size: '10' } });
    serveTrail(30);
    const user = userEvent.setup();
    render(<ActivityScreen />);
    await screen.findByText('10 newest events shown.');

    // Every page answered from now on is newer than anything shown.
    let newest = START;
    bridge.on('api.activity', ({ query }) => {
      const limit = query.limit ?? 50;
      const events = Array.from({ length: limit }, () => ({
        ...nth(0),
        timestamp: new Date((newest += 1000)).toISOString(),
      }));
      return { events, limit, offset: query.offset ?? 0 };
    });
    await user.click(screen.getByTestId('activity-load-more'));
    expect((await screen.findByTestId('activity-more-error')).textContent).toContain(
      'refresh to start from the newest',
    );
    expect(targets()).toHaveLength(10);
    expect(bridge.callsOf('api.activity')).toHaveLength(6);
  });

  it('drops an answer for the organisation shown before', async () => {
    let answer: () => void = () => {};
    bridge.on('api.activity', ({ query }) => {
      const page = { events: [nth(0)], limit: query.limit ?? 50, offset: 0 };
      return new Promise((resolve) => (answer = () => resolve(page)));
    });
    render(<ActivityScreen />);
    await waitFor(() => expect(bridge.callsOf('api.activity')).toHaveLength(1));
    useSession.setState({ profileId: 'p2' });
    answer();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(useActivity.getState().events).toBeNull();
    expect(screen.queryByTestId('activity-row')).toBeNull();
  });

  it('shows a failed first read where the list would be', async () => {
    bridge.on('api.activity', () => {
      throw new Refusal(422, 'querystring/limit: must be >= 1');
    });
    render(<ActivityScreen />);
    expect((await screen.findByTestId('activity-error')).textContent).toContain('must be >= 1 (422)');
    expect(screen.queryByTestId('activity-table')).toBeNull();
  });
});
