import { describe, expect, it } from 'vitest';
import { formatHash, parseHash, useRoute } from '../../renderer/src/state/route.js';

describe('the view kept in the address', () => {
  it('reads a screen and its filters back from the hash it wrote', () => {
    const route = { screen: 'analytics' as const, params: { range: '7d', key: 'k 1&2', model: 'openai/gpt-4o' } };
    expect(parseHash(formatHash(route))).toEqual(route);
  });

  it('falls back to the keys screen for an unknown one, and never keeps the console token', () => {
    expect(parseHash('#/nowhere?x=1')).toEqual({ screen: 'keys', params: { x: '1' } });
    expect(parseHash('#token=abc')).toEqual({ screen: 'keys', params: {} });
    expect(parseHash('#/requests?token=abc&search=x')).toEqual({ screen: 'requests', params: { search: 'x' } });
  });

  it('changes filters in place and drops emptied ones', () => {
    useRoute.getState().go('requests', { status: '5xx' });
    const entries = window.history.length;
    useRoute.getState().setParams({ search: 'trace-1', status: '' });
    expect(useRoute.getState()).toMatchObject({ screen: 'requests', params: { search: 'trace-1' } });
    expect(window.location.hash).toBe('#/requests?search=trace-1');
    // Filter changes replace the entry: Back leaves the screen, not the last keystroke.
    expect(window.history.length).toBe(entries);
  });
});
