import { render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { AnalyticsScreen } from '../../../renderer/src/screens/analytics/AnalyticsScreen.js';
import { useRoute } from '../../../renderer/src/state/route.js';
import { bridge } from '../fake-bridge.js';
import { TARGETS } from '../routes-document.js';
import { openAnalytics, serve } from './fixtures.js';

/** The analytics screen's Target filter: the routes document's targets, and every panel narrowed to the one chosen. */

const options = (select: HTMLElement) => [...select.querySelectorAll('option')].map((o) => o.textContent);
const value = (element: HTMLElement) => (element as HTMLSelectElement).value;

/** The query of the latest call of each panel's endpoint. */
function lastQueries() {
  const last = <T,>(calls: T[]) => calls.at(-1);
  return {
    summary: last(bridge.callsOf('api.summary'))?.query,
    compare: last(bridge.callsOf('api.compare'))?.query,
    timeseries: last(bridge.callsOf('api.timeseries'))?.query,
    dashboard: last(bridge.callsOf('api.dashboard'))?.query,
    top: last(bridge.callsOf('api.top'))?.query,
  };
}

describe('the analytics Target filter', () => {
  it("lists the document's targets once each, and choosing one narrows every panel", async () => {
    serve({});
    openAnalytics({ range: '7d' });
    render(<AnalyticsScreen />);
    const select = screen.getByTestId('filter-target');
    await waitFor(() => expect(options(select)).toEqual(['All targets', ...TARGETS]));
    expect(value(select)).toBe('');
    // Unnarrowed, no panel names a target.
    await waitFor(() => expect(lastQueries().top).toBeDefined());
    for (const query of Object.values(lastQueries())) expect(query).not.toHaveProperty('target');

    await userEvent.selectOptions(select, 'openrouter/openai/gpt-4o-mini');
    expect(useRoute.getState().params).toMatchObject({ range: '7d', target: 'openrouter/openai/gpt-4o-mini' });
    await waitFor(() => {
      const queries = lastQueries();
      for (const [panel, query] of Object.entries(queries)) {
        expect(query, panel).toMatchObject({ time_range: '7d', target: 'openrouter/openai/gpt-4o-mini' });
      }
    });

    // "All targets": the parameter goes, and the panels ask for every target again.
    await userEvent.selectOptions(select, '');
    expect(useRoute.getState().params).not.toHaveProperty('target');
    await waitFor(() => expect(lastQueries().summary).toEqual({ time_range: '7d' }));
  });

  it('a target from the address (a saved view) is selected and asked for, even one no longer in the document', async () => {
    serve({});
    openAnalytics({ target: 'mistral/mistral-small' });
    render(<AnalyticsScreen />);
    const select = screen.getByTestId('filter-target');
    await waitFor(() => expect(options(select)).toContain('Unknown target (mistral/mistral-small)'));
    expect(value(select)).toBe('mistral/mistral-small');
    await waitFor(() => expect(lastQueries().summary).toEqual({ time_range: '24h', target: 'mistral/mistral-small' }));
  });
});
