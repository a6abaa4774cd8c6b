import { render, screen, waitFor } from '@testing-library/react';
import { beforeEach, describe, expect, it } from 'vitest';
import { formatTime } from '../../../renderer/src/lib/format.js';
import { RetentionNote } from '../../../renderer/src/screens/organisation/RetentionNote.js';
import type { Retention } from '../../../renderer/src/screens/organisation/retention-store.js';
import { resetOrganisationStores } from '../../../renderer/src/state/organisation-scope.js';
import { useSession } from '../../../renderer/src/state/session.js';
import { bridge, Refusal } from '../fake-bridge.js';
import { ME } from '../signed-in.js';

const HORIZON = '2026-06-01T12:00:00.000Z';
const HORIZON_MS = Date.parse(HORIZON);
const THIRTY: Retention = { days: 30, platform_days: null, effective_days: 30, horizon: HORIZON };
const EVERY_ROW: Retention = { days: null, platform_days: null, effective_days: null, horizon: null };
const text = () => screen.getByTestId('retention-note').textContent;

beforeEach(() => {
  resetOrganisationStores();
  useSession.setState({ phase: 'console', profileId: 'p1', me: { ...ME, role: 'member' } });
});

describe('where the request log begins, beside the request log and the analytics', () => {
  it('tells the request log where its rows start, and that older ones were deleted when its window reaches past it', async () => {
    bridge.on('api.retention', () => THIRTY);
    const { rerender } = render(<RetentionNote fromMs={HORIZON_MS + 3_600_000} rows />);
    await waitFor(() => expect(text()).toBe(`Requests are kept 30 days: the log starts at ${formatTime(HORIZON)}.`));
    rerender(<RetentionNote fromMs={HORIZON_MS - 86_400_000} rows />);
    expect(text()).toBe(
      `Requests are kept 30 days: this list starts at ${formatTime(HORIZON)}; older ones were deleted.`,
    );
    expect(screen.getByTestId('retention-note').querySelector('time')!.getAttribute('dateTime')).toBe(HORIZON);
  });

  it('tells the analytics that a window reaching past the horizon is counted there from totals, and says nothing otherwise', async () => {
    bridge.on('api.retention', () => THIRTY);
    const { rerender } = render(<RetentionNote fromMs={HORIZON_MS - 1} rows={false} />);
    await waitFor(() =>
      expect(text()).toBe(
        `Older than 30 days (before ${formatTime(HORIZON)}): hourly and daily totals. ` +
          'Filters by target or API count only the rows kept.',
      ),
    );
    rerender(<RetentionNote fromMs={HORIZON_MS} rows={false} />);
    expect(screen.queryByTestId('retention-note')).toBeNull();
  });

  it('says nothing while every row is kept, or on a control plane without retention', async () => {
    bridge.on('api.retention', () => EVERY_ROW);
    render(<RetentionNote fromMs={0} rows />);
    await waitFor(() => expect(bridge.callsOf('api.retention')).toHaveLength(1));
    expect(screen.queryByTestId('retention-note')).toBeNull();

    resetOrganisationStores();
    bridge.on('api.retention', () => {
      throw new Refusal(404, 'not found');
    });
    render(<RetentionNote fromMs={0} rows />);
    await waitFor(() => expect(bridge.callsOf('api.retention')).toHaveLength(2));
    expect(screen.queryByTestId('retention-note')).toBeNull();
  });
});
