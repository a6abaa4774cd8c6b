import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import type { CallArgs } from '#contract';
import type { ActivityEntry } from '../../../renderer/src/lib/activity.js';
import { parseCsv } from '../../../renderer/src/lib/csv.js';
import { ActivityScreen } from '../../../renderer/src/screens/activity/ActivityScreen.js';
import { ACTIVITY_CSV_COLUMNS, exportActivity } from '../../../renderer/src/screens/activity/activity-export.js';
import { resetOrganisationStores } from '../../../renderer/src/state/organisation-scope.js';
import { useRoute } from '../../../renderer/src/state/route.js';
import { useSession } from '../../../renderer/src/state/session.js';
import { bridge } from '../fake-bridge.js';
import { ME } from '../signed-in.js';

const START = Date.UTC(2026, 4, 1, 12, 0, 0);

/** jsdom's Blob has no text(); its FileReader reads one. */
function read(blob: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result as string);
    reader.onerror = () => reject(reader.error);
    reader.readAsText(blob);
  });
}

/** The trail's event at place `position` (1 is the oldest): a key's limits raised each time. */
function at(position: number): ActivityEntry {
  return {
    position,
    actor: 'admin@demo.example',
    action: 'api_key.updated',
    target: `sk_svc_${String(position).padStart(4, '0')}`,
    timestamp: new Date(START + position * 60_000).toISOString(),
    source_ip: '127.0.0.1',
    change: {
      before: { rate_limit_rpm: position, credit_limit_cents: null, expires_at: null },
      after: { rate_limit_rpm: position + 1, credit_limit_cents: null, expires_at: null },
    },
    hash: position.toString(16).padStart(64, '0'),
  };
}

/** Answers api.activityEntries from a trail of `count` events, newest first, paged by place. */
function serveEntries(count: number) {
  const trail = Array.from({ length: count }, (_, i) => at(count - i));
  bridge.on('api.activityEntries', ({ query }: CallArgs<'api.activityEntries'>) => {
    const limit = query?.limit ?? 50;
    const before = query?.before;
    const matching = trail.filter((e) => before === undefined || e.position < before);
    const entries = matching.slice(0, limit);
    const last = entries.at(-1);
    return {
      entries,
      limit,
      total: before === undefined ? trail.length : null,
      next_before: entries.length === limit && last && last.position > 1 ? last.position : null,
    };
  });
}

beforeEach(() => {
  resetOrganisationStores();
  useRoute.setState({ screen: 'activity', params: {} });
  useSession.setState({ phase: 'console', profileId: 'p1', me: ME });
});

describe('the activity screen with the extension', () => {
  it('sends the filters kept in the address to the server, and pages on by place', async () => {
    serveEntries(70);
    useRoute.setState({
      screen: 'activity',
      params: { action: 'api_key.updated', actor: 'admin@demo.example', target: 'sk_svc_00', size: '50' },
    });
    const user = userEvent.setup();
    render(<ActivityScreen />);
    await screen.findByText('50 of 70 matching events shown, newest first.');
    expect(bridge.callsOf('api.activityEntries')[0]!.query).toEqual({
      action: 'api_key.updated',
      actor: 'admin@demo.example',
      target: 'sk_svc_00',
      limit: 50,
    });
    expect(screen.getAllByTestId('activity-position')[0]!.textContent).toBe('70');

    await user.click(screen.getByTestId('activity-load-more'));
    await screen.findByText('All 70 matching events shown.');
    expect(bridge.callsOf('api.activityEntries')[1]!.query).toMatchObject({ before: 21, limit: 50 });
    expect(screen.getAllByTestId('activity-position').at(-1)!.textContent).toBe('1');
  });

  it('shows what changed as before → after, the changed field first and marked', async () => {
    serveEntries(1);
    render(<ActivityScreen />);
    const change = await screen.findByTestId('activity-change');
    const fields = within(change).getAllByTestId('activity-change-field');
    expect(fields.map((f) => [f.dataset.field, f.dataset.changed])).toEqual([
      ['rate_limit_rpm', 'true'],
      ['credit_limit_cents', 'false'],
      ['expires_at', 'false'],
    ]);
    expect(within(fields[0]!).getByTestId('activity-change-before').textContent).toBe('1 rpm');
    expect(within(fields[0]!).getByTestId('activity-change-after').textContent).toBe('2 rpm');
    expect(fields[0]!.textContent).toContain('→');
    // A null limit is no limit, not an unknown one.
    expect(fields[1]!.textContent).toBe('Credit limitunlimited');
  });

  it('a filter chosen on screen goes into the address and reads again', async () => {
    serveEntries(3);
    const user = userEvent.setup();
    render(<ActivityScreen />);
    await screen.findAllByTestId('activity-row');
    await user.selectOptions(screen.getByTestId('activity-filter-action'), 'org.renamed');
    expect(useRoute.getState().params.action).toBe('org.renamed');
    await waitFor(() =>
      expect(bridge.callsOf('api.activityEntries').at(-1)!.query).toMatchObject({ action: 'org.renamed' }),
    );
  });

  it('Verify reads the chain stretch by stretch and names the first event that does not match', async () => {
    serveEntries(3);
    const stretches = [
      { checked: 2, last_position: 2, total: 3, done: false, head_hash: 'a'.repeat(64), broken: null },
      {
        checked: 0,
        last_position: 2,
        total: 3,
        done: true,
        head_hash: 'a'.repeat(64),
        broken: {
          position: 3,
          fault: 'altered' as const,
          timestamp: at(3).timestamp,
          action: 'api_key.updated',
          message: 'event #3 does not match its hash',
        },
      },
    ];
    bridge.on('api.verifyActivity', () => stretches.shift()!);
    const user = userEvent.setup();
    render(<ActivityScreen />);
    await user.click(await screen.findByTestId('activity-verify-button'));
    const broken = await screen.findByTestId('activity-verify-broken');
    expect(broken.textContent).toContain('The chain breaks at event #3');
    expect(broken.textContent).toContain('API key limits changed');
    expect(bridge.callsOf('api.verifyActivity').map((c) => c.query)).toEqual([{ after: 0 }, { after: 2 }]);
  });

  it('Verify names newest events deleted from the file, where there is no event to show', async () => {
    serveEntries(3);
    bridge.on('api.verifyActivity', () => ({
      checked: 3,
      last_position: 3,
      total: 5,
      done: true,
      head_hash: 'a'.repeat(64),
      broken: {
        position: 4,
        fault: 'missing' as const,
        timestamp: null,
        action: null,
        message: 'event #4 is missing: the newest 2 were deleted from the file',
      },
    }));
    const user = userEvent.setup();
    render(<ActivityScreen />);
    await user.click(await screen.findByTestId('activity-verify-button'));
    const broken = await screen.findByTestId('activity-verify-broken');
    expect(broken.textContent).toBe(
      'The chain breaks at event #4: event #4 is missing: the newest 2 were deleted from the file.',
    );
  });
});

describe('exportActivity', () => {
  it('writes every matching event, page after page, as CSV and as NDJSON, with progress', async () => {
    serveEntries(450);
    const progress: [number, number | null][] = [];
    const csv = await exportActivity({ action: 'api_key.updated' }, 'csv', {
      signal: new AbortController().signal,
      onProgress: (fetched, total) => progress.push([fetched, total]),
    });
    expect(csv.rows).toBe(450);
    expect(progress).toEqual([
      [200, 450],
      [400, 450],
      [450, 450],
    ]);
    const rows = parseCsv(await read(csv.blob));
    expect(rows[0]).toEqual([...ACTIVITY_CSV_COLUMNS]);
    expect(rows).toHaveLength(451);
    expect(rows[1]!.slice(0, 5)).toEqual([
      '450',
      at(450).timestamp,
      'admin@demo.example',
      'api_key.updated',
      'sk_svc_0450',
    ]);
    expect(JSON.parse(rows[1]![7]!)).toEqual(at(450).change!.after);
    expect(rows.at(-1)![0]).toBe('1');

    const ndjson = await exportActivity({}, 'ndjson', { signal: new AbortController().signal, onProgress: () => {} });
    const lines = (await read(ndjson.blob)).trimEnd().split('\n');
    expect(lines).toHaveLength(450);
    expect(JSON.parse(lines[0]!)).toEqual(at(450));
    expect(bridge.callsOf('api.activityEntries').at(-1)!.query).toMatchObject({ before: 51, limit: 200 });
  });
});
