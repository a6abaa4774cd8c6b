import { act, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { RequestLogScreen } from '../../../renderer/src/screens/requests/RequestLogScreen.js';
import { SEARCH_DEBOUNCE_MS, SearchBox } from '../../../renderer/src/screens/requests/SearchBox.js';
import { resetOrganisationStores } from '../../../renderer/src/state/organisation-scope.js';
import { useRoute } from '../../../renderer/src/state/route.js';
import { useSession } from '../../../renderer/src/state/session.js';
import { bridge, Refusal } from '../fake-bridge.js';
import { KEY, nullRow, OTHER_KEY, OTHER_PROJECT, pagedRows, PROJECT, requestRow } from './rows.js';
import { ME } from '../signed-in.js';

// jsdom lays nothing out: the virtualized table needs a scroll box with a height to show rows.
const clientHeight = Object.getOwnPropertyDescriptor(HTMLElement.prototype, 'clientHeight');
beforeAll(() => {
  Object.defineProperty(HTMLElement.prototype, 'clientHeight', { configurable: true, get: () => 4000 });
});
afterAll(() => {
  if (clientHeight) Object.defineProperty(HTMLElement.prototype, 'clientHeight', clientHeight);
});

const listedKey = (key: { id: string; name: string }, projectId: string) => ({
  ...key,
  project_id: projectId,
  key_prefix: 'svc_live_abcd',
  rate_limit_rpm: 60,
  expires_at: null,
  credit_limit_cents: null,
  allowed_models: null,
  environment: 'production' as const,
  created_at: '2026-10-01T00:00:00Z',
  last_used_at: null,
});

beforeEach(() => {
  useSession.setState({ phase: 'console', profileId: 'p1', me: ME });
  resetOrganisationStores();
  window.history.replaceState(null, '', '/#/requests');
  useRoute.setState({ screen: 'requests', params: {} });
  bridge.on('api.projects', () => ({
    projects: [
      { ...PROJECT, created_at: '2026-10-01T00:00:00Z' },
      { id: OTHER_PROJECT.id, name: OTHER_PROJECT.name, created_at: '2026-10-01T00:00:00Z' },
    ],
  }));
  bridge.on('api.listKeys', () => ({ keys: [listedKey(KEY, PROJECT.id), listedKey(OTHER_KEY, OTHER_PROJECT.id)] }));
  bridge.on('api.models', () => ({
    models: [
      { id: 'openai/gpt-4o-mini', provider: 'openai', active: true },
      { id: 'anthropic/claude-sonnet', provider: 'anthropic', active: true },
    ],
  }));
});

const queries = () => bridge.callsOf('api.requests').map((args) => args.query);
const lastQuery = () => queries().at(-1);

describe('paging', () => {
  it('shows which rows of the total are on screen and moves between pages', async () => {
    bridge.on('api.requests', ({ query }) => pagedRows(12_345)(query));
    render(<RequestLogScreen />);
    expect(await screen.findByTestId('page-text')).toHaveProperty('textContent', '1–50 of 12,345');
    expect(screen.getAllByTestId('request-row')[0]!.dataset.reqId).toBe('req_100000');
    expect(lastQuery()).toEqual({ time_range: '24h', limit: 50, offset: 0 });
    expect(screen.getByTestId('page-previous')).toHaveProperty('disabled', true);

    const user = userEvent.setup();
    await user.click(screen.getByTestId('page-next'));
    await waitFor(() => expect(screen.getByTestId('page-text').textContent).toBe('51–100 of 12,345'));
    expect(lastQuery()).toEqual({ time_range: '24h', limit: 50, offset: 50 });
    expect(screen.getAllByTestId('request-row')[0]!.dataset.reqId).toBe('req_099950');
    expect(useRoute.getState().params.page).toBe('2');

    // A bigger page keeps the first row on screen within it.
    await user.selectOptions(screen.getByLabelText('Rows per page'), '200');
    await waitFor(() => expect(screen.getByTestId('page-text').textContent).toBe('1–200 of 12,345'));
    expect(lastQuery()).toEqual({ time_range: '24h', limit: 200, offset: 0 });
  });

  it('ends at the last row: "Next" is off on the last page', async () => {
    useRoute.setState({ params: { page: '3' } });
    bridge.on('api.requests', ({ query }) => pagedRows(120)(query));
    render(<RequestLogScreen />);
    await waitFor(() => expect(screen.getByTestId('page-text').textContent).toBe('101–120 of 120'));
    expect(screen.getByTestId('page-next')).toHaveProperty('disabled', true);
    expect(screen.getByTestId('page-previous')).toHaveProperty('disabled', false);
  });

  it('says when nothing matches, and shows the server’s refusal where the table would be', async () => {
    bridge.on('api.requests', () => ({ total: 0, limit: 50, offset: 0, requests: [] }));
    const { unmount } = render(<RequestLogScreen />);
    expect(await screen.findByTestId('requests-empty')).toBeTruthy();
    expect(screen.getByTestId('page-text').textContent).toBe('No requests match');
    unmount();

    bridge.on('api.requests', () => {
      throw new Refusal(400, 'time_range must be at most 400d');
    });
    resetOrganisationStores();
    render(<RequestLogScreen />);
    expect((await screen.findByTestId('requests-error')).textContent).toContain(
      'time_range must be at most 400d (400)',
    );
  });
});

describe('the table', () => {
  it('mounts only the rows in view of a 200-row page, and says how many there are', async () => {
    Object.defineProperty(HTMLElement.prototype, 'clientHeight', { configurable: true, get: () => 340 });
    try {
      bridge.on('api.requests', ({ query }) => pagedRows(5000)(query));
      useRoute.setState({ params: { size: '200' } });
      render(<RequestLogScreen />);
      await waitFor(() => expect(screen.getByTestId('page-text').textContent).toBe('1–200 of 5,000'));
      const mounted = screen.getAllByTestId('request-row');
      expect(mounted.length).toBeGreaterThan(5);
      expect(mounted.length).toBeLessThan(40);
      expect(screen.getByRole('table').getAttribute('aria-rowcount')).toBe('201');
    } finally {
      Object.defineProperty(HTMLElement.prototype, 'clientHeight', { configurable: true, get: () => 4000 });
    }
  });
});

describe('while the first page loads', () => {
  it('the table is not reset on every render', async () => {
    bridge.on('api.requests', () => new Promise(() => {}));
    const scrollTo = vi.fn();
    HTMLElement.prototype.scrollTo = scrollTo as unknown as HTMLElement['scrollTo'];
    try {
      render(<RequestLogScreen />);
      await waitFor(() => expect(queries()).toHaveLength(1));
      const resets = scrollTo.mock.calls.length;
      // Renders that change nothing the table shows (a parameter no query reads).
      act(() => useRoute.getState().setParams({ unrelated: '1' }));
      act(() => useRoute.getState().setParams({ unrelated: '2' }));
      expect(scrollTo.mock.calls.length).toBe(resets);
    } finally {
      delete (HTMLElement.prototype as Partial<HTMLElement>).scrollTo;
    }
  });
});

describe('the detail panel', () => {
  it('shows every field of the row, nulls as unknown (never 0), and copies the request id', async () => {
    bridge.on('api.requests', () => ({ total: 2, limit: 50, offset: 0, requests: [requestRow(0), nullRow()] }));
    render(<RequestLogScreen />);
    const rows = await screen.findAllByTestId('request-row');
    const user = userEvent.setup();
    await user.click(rows[1]!);
    const detail = await screen.findByTestId('request-detail');
    const field = (name: string) => within(detail).getByTestId(`detail-${name}`).textContent ?? '';

    expect(field('req_id')).toContain('req_nulls');
    for (const name of [
      'metrics.ttft_ms',
      'metrics.tpot_ms',
      'metrics.prompt_tokens',
      'metrics.cache_creation_input_tokens',
      'metrics.cache_read_input_tokens',
      'upstream.model',
      'status_detail.upstream_error',
      'key',
      'api',
    ]) {
      expect(field(name), name).toMatch(/^–/);
      expect(field(name), name).not.toMatch(/\b0\b/);
    }
    // A project since deleted: its name is unknown, its id still shown.
    expect(field('project')).toContain('–');
    expect(field('project')).toContain(OTHER_PROJECT.id);
    // Zero is a known zero.
    expect(field('metrics.tokens_generated')).toBe('0');
    expect(field('financials.cost_pkr')).toBe('0.00 PKR');
    expect(field('stream')).toBe('No');
    expect(field('status')).toBe('502');
    expect(within(detail).getByTestId('detail-metadata-empty')).toBeTruthy();

    // The filled row: its metadata as a two-column table.
    await user.click(rows[0]!);
    const table = await within(screen.getByTestId('request-detail')).findByTestId('detail-metadata');
    const cells = within(table)
      .getAllByRole('row')
      .slice(1)
      .map((r) => [...r.children].map((c) => c.textContent));
    expect(cells).toEqual([
      ['customer', 'acme-retail'],
      ['feature', 'checkout-assist'],
    ]);
    expect(within(screen.getByTestId('request-detail')).getByTestId('detail-metrics.ttft_ms').textContent).toBe(
      '301.2 ms',
    );

    await user.click(screen.getByTestId('copy-request-id'));
    expect(screen.getByTestId('copy-request-id').textContent).toBe('Copied');
    expect(await navigator.clipboard.readText()).toBe('req_100000');

    await user.click(screen.getByTestId('close-detail'));
    expect(screen.queryByTestId('request-detail')).toBeNull();
    // Focus goes back to the row the detail came from.
    expect((document.activeElement as HTMLElement).dataset.reqId).toBe('req_100000');
  });

  it('shows a timestamp that does not read as it came, and costs as figures with the same decimals under "Cost (PKR)"', async () => {
    bridge.on('api.requests', () => ({
      total: 2,
      limit: 50,
      offset: 0,
      requests: [
        requestRow(0, { timestamp: 'not-a-time', financials: { cost_pkr: 1250.5, is_byok: 0 } }),
        requestRow(1, { financials: { cost_pkr: 0.000123, is_byok: 0 } }),
      ],
    }));
    render(<RequestLogScreen />);
    const rows = await screen.findAllByTestId('request-row');
    const cells = (row: HTMLElement) => [...row.querySelectorAll('td')].map((td) => td.textContent);
    expect(cells(rows[0]!)[0]).toBe('not-a-time');
    // Four decimals down the column, whatever each cost's own; the exact cost on hover.
    expect(cells(rows[0]!)[9]).toBe('1,250.5000');
    expect(cells(rows[1]!)[9]).toBe('0.0001');
    expect(rows[1]!.querySelectorAll('td')[9]!.querySelector('.money')!.getAttribute('title')).toBe(
      '0.000123 PKR (123 micro-PKR)',
    );
    expect(screen.getByRole('columnheader', { name: 'Cost (PKR)' })).toBeTruthy();
  });

  it('is reached from the keyboard: arrows move between rows, Enter opens, Escape closes', async () => {
    bridge.on('api.requests', ({ query }) => pagedRows(60)(query));
    render(<RequestLogScreen />);
    const rows = await screen.findAllByTestId('request-row');
    expect(rows.filter((r) => r.tabIndex === 0)).toHaveLength(1);
    const user = userEvent.setup();
    rows[0]!.focus();
    await user.keyboard('{ArrowDown}{ArrowDown}{ArrowUp}');
    expect((document.activeElement as HTMLElement).dataset.reqId).toBe('req_099999');
    await user.keyboard('{End}');
    expect((document.activeElement as HTMLElement).dataset.reqId).toBe('req_099951');
    await user.keyboard('{Home}{ArrowDown}{Enter}');
    expect(within(await screen.findByTestId('request-detail')).getByTestId('detail-req_id').textContent).toContain(
      'req_099999',
    );
    await user.keyboard('{Escape}');
    expect(screen.queryByTestId('request-detail')).toBeNull();
    expect((document.activeElement as HTMLElement).dataset.reqId).toBe('req_099999');
  });
});

describe('filters', () => {
  it('sends each filter to the server, keeps it in the route and goes back to page 1', async () => {
    useRoute.setState({ params: { page: '4' } });
    bridge.on('api.requests', ({ query }) => pagedRows(500)(query));
    render(<RequestLogScreen />);
    await screen.findAllByTestId('request-row');
    const user = userEvent.setup();

    await user.selectOptions(screen.getByLabelText('Status'), '5xx');
    await waitFor(() =>
      expect(lastQuery()).toEqual({ time_range: '24h', status_category: '5xx', limit: 50, offset: 0 }),
    );

    await user.selectOptions(screen.getByLabelText('Ended as'), 'Gateway timeout');
    await user.selectOptions(screen.getByLabelText('Model'), 'anthropic/claude-sonnet');
    await user.selectOptions(screen.getByLabelText('Time range'), 'Last 7 days');
    await user.selectOptions(screen.getByLabelText('Project'), 'Support bot');
    // Only the chosen project's keys are offered.
    const keyOptions = within(screen.getByLabelText('Key'))
      .getAllByRole('option')
      .map((o) => o.textContent);
    expect(keyOptions).toEqual(['All keys of the project', 'support-dev (svc_live_abcd)']);
    await user.selectOptions(screen.getByLabelText('Key'), OTHER_KEY.id);
    await user.type(screen.getByLabelText('Minimum cost (PKR)'), '1,250.5{Enter}');

    await waitFor(() =>
      expect(lastQuery()).toEqual({
        time_range: '7d',
        project_id: OTHER_PROJECT.id,
        key_id: OTHER_KEY.id,
        model: 'anthropic/claude-sonnet',
        status_category: '5xx',
        termination_reason: 'proxy_guillotine',
        min_cost_pkr: 1250.5,
        limit: 50,
        offset: 0,
      }),
    );
    expect(useRoute.getState().params).toEqual({
      range: '7d',
      project: OTHER_PROJECT.id,
      key: OTHER_KEY.id,
      model: 'anthropic/claude-sonnet',
      status: '5xx',
      reason: 'proxy_guillotine',
      min_cost: '1,250.5',
    });

    await user.click(screen.getByTestId('clear-filters'));
    await waitFor(() => expect(lastQuery()).toEqual({ time_range: '24h', limit: 50, offset: 0 }));
    expect(useRoute.getState().params).toEqual({});
  });

  it('checks a custom range and a minimum cost at their fields before asking the server', async () => {
    bridge.on('api.requests', ({ query }) => pagedRows(10)(query));
    render(<RequestLogScreen />);
    await screen.findAllByTestId('request-row');
    const user = userEvent.setup();
    const calls = () => queries().length;

    await user.selectOptions(screen.getByLabelText('Time range'), 'Custom…');
    const custom = screen.getByLabelText('Custom range');
    await user.type(custom, '36x{Enter}');
    expect(within(screen.getByTestId('custom-range-form')).getByTestId('field-error').textContent).toContain(
      'a whole number followed by s, m, h or d',
    );
    const before = calls();
    await user.clear(custom);
    await user.type(custom, '401d{Enter}');
    expect(within(screen.getByTestId('custom-range-form')).getByTestId('field-error').textContent).toContain(
      'at most 400 days (400d)',
    );
    expect(calls()).toBe(before);
    await user.clear(custom);
    await user.type(custom, '36h{Enter}');
    await waitFor(() => expect(lastQuery()).toEqual({ time_range: '36h', limit: 50, offset: 0 }));

    await user.type(screen.getByLabelText('Minimum cost (PKR)'), '-3{Enter}');
    expect(within(screen.getByTestId('filter-min-cost')).getByTestId('field-error').textContent).toContain(
      'positive amount',
    );
    expect(lastQuery()).toEqual({ time_range: '36h', limit: 50, offset: 0 });
  });

  it('between two times: starts from the range shown, says a reversed window, and gives way to a range', async () => {
    bridge.on('api.requests', ({ query }) => pagedRows(10)(query));
    render(<RequestLogScreen />);
    await screen.findAllByTestId('request-row');
    const user = userEvent.setup();

    await user.selectOptions(screen.getByLabelText('Time range'), 'Last 7 days');
    await user.selectOptions(screen.getByLabelText('Time range'), 'between');
    const { from, to } = useRoute.getState().params;
    // The week shown, up to the next whole minute.
    expect(Date.parse(to!) - Date.parse(from!)).toBe(7 * 86_400_000);
    await waitFor(() => expect(lastQuery()).toMatchObject({ from: new Date(from!).toISOString() }));
    expect(lastQuery()).not.toHaveProperty('time_range');

    fireEvent.change(screen.getByLabelText('From'), { target: { value: '2026-11-04T15:00' } });
    fireEvent.change(screen.getByLabelText('To (not included)'), { target: { value: '2026-11-04T14:55' } });
    expect(within(screen.getByTestId('request-filters')).getByTestId('field-error').textContent).toContain(
      'later than',
    );
    // Not sent: the default window is read meanwhile.
    await waitFor(() => expect(lastQuery()).toEqual({ time_range: '24h', limit: 50, offset: 0 }));
    fireEvent.change(screen.getByLabelText('To (not included)'), { target: { value: '2026-11-04T16:00' } });
    await waitFor(() =>
      expect(lastQuery()).toEqual({
        from: '2026-11-04T10:00:00.000Z',
        to: '2026-11-04T11:00:00.000Z',
        limit: 50,
        offset: 0,
      }),
    );

    // A window that has ended takes no new rows: following it waits.
    await user.click(screen.getByTestId('follow-toggle'));
    expect(screen.getByTestId('follow-status').getAttribute('data-state')).toBe('past');
    await user.click(screen.getByTestId('follow-toggle'));

    await user.selectOptions(screen.getByLabelText('Provider'), 'anthropic');
    await waitFor(() => expect(lastQuery()).toMatchObject({ provider: 'anthropic', from: '2026-11-04T10:00:00.000Z' }));

    // "Custom…" replaces the two times.
    await user.selectOptions(screen.getByLabelText('Time range'), 'Custom…');
    expect(useRoute.getState().params).toEqual({ provider: 'anthropic' });
    expect(screen.queryByLabelText('From')).toBeNull();
    await user.type(screen.getByLabelText('Custom range'), '{Control>}a{/Control}400d{Enter}');
    await waitFor(() =>
      expect(lastQuery()).toEqual({ time_range: '400d', provider: 'anthropic', limit: 50, offset: 0 }),
    );
    // From the longest range, the two times stay within the 400 days the server takes.
    await user.selectOptions(screen.getByLabelText('Time range'), 'between');
    const longest = useRoute.getState().params;
    expect(Date.parse(longest.to!) - Date.parse(longest.from!)).toBe(400 * 86_400_000);
    expect(within(screen.getByTestId('request-filters')).queryByTestId('field-error')).toBeNull();
  });

  it('keeps a key that fits a newly chosen project, and lets go of one that does not', async () => {
    useRoute.setState({ params: { key: OTHER_KEY.id } });
    bridge.on('api.requests', ({ query }) => pagedRows(10)(query));
    render(<RequestLogScreen />);
    const user = userEvent.setup();
    await waitFor(() => expect(screen.getByLabelText('Key')).toHaveProperty('value', OTHER_KEY.id));
    await user.selectOptions(screen.getByLabelText('Project'), 'Support bot');
    expect(useRoute.getState().params).toEqual({ project: OTHER_PROJECT.id, key: OTHER_KEY.id });
    await user.selectOptions(screen.getByLabelText('Project'), 'Checkout');
    expect(useRoute.getState().params).toEqual({ project: PROJECT.id });
  });

  it('shows values from the address that are not among the choices as what they are, never as "all"', async () => {
    const unknownKey = '55555555-5555-4555-8555-555555555555';
    useRoute.setState({
      params: { project: PROJECT.id, key: OTHER_KEY.id, status: '9xx', reason: 'eaten_by_grue' },
    });
    bridge.on('api.requests', ({ query }) => pagedRows(10)(query));
    const { unmount } = render(<RequestLogScreen />);
    const chosen = (label: string) => {
      const select = screen.getByLabelText(label) as HTMLSelectElement;
      return select.selectedOptions[0]?.textContent;
    };
    // A key of another project than the one chosen.
    await waitFor(() => expect(chosen('Key')).toBe('support-dev (another project)'));
    expect(chosen('Status')).toBe('Unknown status (9xx)');
    expect(chosen('Ended as')).toBe('Unknown ending (eaten_by_grue)');
    expect(lastQuery()).toMatchObject({ key_id: OTHER_KEY.id, status_category: '9xx' });
    unmount();

    useRoute.setState({ params: { key: unknownKey } });
    render(<RequestLogScreen />);
    await waitFor(() => expect(chosen('Key')).toBe('Unknown key (55555555…)'));
  });

  it('the custom range follows a range set from elsewhere (back, forward), and a bad one says why', async () => {
    bridge.on('api.requests', ({ query }) => pagedRows(10)(query));
    render(<RequestLogScreen />);
    await screen.findAllByTestId('request-row');
    act(() => useRoute.setState({ params: { range: '45d' } }));
    expect(screen.getByLabelText('Time range')).toHaveProperty('value', 'custom');
    expect(screen.getByLabelText('Custom range')).toHaveProperty('value', '45d');
    act(() => useRoute.setState({ params: { range: '7d' } }));
    expect(screen.getByLabelText('Time range')).toHaveProperty('value', '7d');
    expect(screen.queryByLabelText('Custom range')).toBeNull();

    act(() => useRoute.setState({ params: { range: '2w' } }));
    expect(screen.getByLabelText('Custom range')).toHaveProperty('value', '2w');
    expect(within(screen.getByTestId('custom-range-form')).getByTestId('field-error').textContent).toContain(
      's, m, h or d',
    );
    // The default window is asked for meanwhile, not a range the server would refuse.
    await waitFor(() => expect(lastQuery()).toEqual({ time_range: '24h', limit: 50, offset: 0 }));
  });

  it('restores the view from the route parameters', async () => {
    useRoute.setState({ params: { range: '14d', status: '4xx', q: 'acme', size: '100', page: '2' } });
    bridge.on('api.requests', ({ query }) => pagedRows(1000)(query));
    render(<RequestLogScreen />);
    await waitFor(() => expect(screen.getByTestId('page-text').textContent).toBe('101–200 of 1,000'));
    expect(queries()).toEqual([{ time_range: '14d', status_category: '4xx', search: 'acme', limit: 100, offset: 100 }]);
    expect((screen.getByLabelText('Custom range') as HTMLInputElement).value).toBe('14d');
    expect((screen.getByLabelText('Search') as HTMLInputElement).value).toBe('acme');
  });
});

describe('search', () => {
  it('clearing the filters while a search waits for its pause drops that search', async () => {
    vi.useFakeTimers();
    try {
      const applied: string[] = [];
      let value = 'acme';
      const { rerender } = render(
        <SearchBox value={value} onCommit={(text) => applied.push(text)} onRepeat={() => {}} />,
      );
      fireEvent.change(screen.getByLabelText('Search'), { target: { value: 'acme-retail' } });
      // Cleared from elsewhere before the pause ends.
      value = '';
      rerender(<SearchBox value={value} onCommit={(text) => applied.push(text)} onRepeat={() => {}} />);
      expect(screen.getByLabelText('Search')).toHaveProperty('value', '');
      act(() => {
        vi.advanceTimersByTime(SEARCH_DEBOUNCE_MS * 2);
      });
      expect(applied).toEqual([]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('searches a moment after typing stops, once, and at once on Enter', async () => {
    bridge.on('api.requests', ({ query }) => pagedRows(query.search ? 3 : 500)(query));
    render(<RequestLogScreen />);
    await screen.findAllByTestId('request-row');
    const user = userEvent.setup();
    const before = queries().length;

    await user.type(screen.getByLabelText('Search'), 'acme-retail');
    // Typing sends nothing per keystroke…
    expect(queries().length).toBe(before);
    // …the pause after it sends the whole word once.
    await waitFor(() =>
      expect(lastQuery()).toEqual({ time_range: '24h', search: 'acme-retail', limit: 50, offset: 0 }),
    );
    await waitFor(() => expect(screen.getByTestId('page-text').textContent).toBe('1–3 of 3'));
    expect(queries().filter((q) => q.search !== undefined)).toHaveLength(1);
    expect(useRoute.getState().params.q).toBe('acme-retail');

    await user.clear(screen.getByLabelText('Search'));
    await user.type(screen.getByLabelText('Search'), ' req_0999 {Enter}');
    // Enter does not wait for the pause; the search is trimmed.
    expect(lastQuery()).toEqual({ time_range: '24h', search: 'req_0999', limit: 50, offset: 0 });

    // Enter again on the same text asks again: rows may have arrived since.
    await waitFor(() => expect(screen.getByTestId('requests-screen').getAttribute('aria-busy')).toBe('false'));
    const asked = queries().length;
    await user.type(screen.getByLabelText('Search'), '{Enter}');
    await waitFor(() => expect(queries()).toHaveLength(asked + 1));
    expect(lastQuery()).toEqual({ time_range: '24h', search: 'req_0999', limit: 50, offset: 0 });
  });
});
