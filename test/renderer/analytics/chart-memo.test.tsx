import { act, render, screen, waitFor } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import * as prepare from '../../../renderer/src/lib/series-prepare.js';
import { AnalyticsScreen } from '../../../renderer/src/screens/analytics/AnalyticsScreen.js';
import { useDirectory } from '../../../renderer/src/state/directory.js';
import { bridge } from '../fake-bridge.js';
import { PROJECTS, fakeWidth, openAnalytics, serve } from './fixtures.js';

// The real functions, counted: the chart must not fill its answer again when only the directory moved.
vi.mock('../../../renderer/src/lib/series-prepare.js', async (original) => {
  const real = await original<typeof prepare>();
  return { ...real, fillAnswer: vi.fn(real.fillAnswer), nameSeries: vi.fn(real.nameSeries) };
});

const HOUR = 3_600_000;
const bucket = (ms: number) => new Date(ms).toISOString().slice(0, 19);
const CREATED = '2026-01-01T00:00:00.000Z';

beforeEach(() => {
  fakeWidth(864);
  vi.mocked(prepare.fillAnswer).mockClear();
  vi.mocked(prepare.nameSeries).mockClear();
});

describe('the chart redoes only what changed', () => {
  it('a directory reload that renames nothing refills and renames nothing; a rename renames only', async () => {
    const now = Date.now();
    serve({
      timeseries: () => ({
        metric: 'volume',
        interval: '1h',
        group_by: 'project',
        time_range: '24h',
        data: [{ bucket: bucket(now - HOUR), group: PROJECTS.support, value: 4 }],
      }),
    });
    openAnalytics({ group: 'project' });
    render(<AnalyticsScreen />);
    const legend = () => screen.getAllByTestId('series-name').map((li) => li.textContent);
    await waitFor(() => expect(legend()).toEqual(['Support Bot']));
    const fills = vi.mocked(prepare.fillAnswer).mock.calls.length;
    const namings = vi.mocked(prepare.nameSeries).mock.calls.length;
    expect(fills).toBe(1);

    // The same names, in new lists (as every reload gives): nothing is redone.
    await act(() => useDirectory.getState().load(true));
    expect(legend()).toEqual(['Support Bot']);
    expect(vi.mocked(prepare.fillAnswer).mock.calls.length).toBe(fills);
    expect(vi.mocked(prepare.nameSeries).mock.calls.length).toBe(namings);

    // A project of the answer renamed: named again, not filled again.
    bridge.on('api.projects', () => ({
      projects: [{ id: PROJECTS.support, name: 'Helpdesk', created_at: CREATED }],
    }));
    await act(() => useDirectory.getState().load(true));
    await waitFor(() => expect(legend()).toEqual(['Helpdesk']));
    expect(vi.mocked(prepare.fillAnswer).mock.calls.length).toBe(fills);
    expect(vi.mocked(prepare.nameSeries).mock.calls.length).toBe(namings + 1);
  });
});
