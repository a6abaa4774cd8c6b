import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { filterQuery, isFiltered } from '../../../renderer/src/screens/requests/request-query.js';
import { RequestLogScreen } from '../../../renderer/src/screens/requests/RequestLogScreen.js';
import { resetOrganisationStores } from '../../../renderer/src/state/organisation-scope.js';
import { useRoute } from '../../../renderer/src/state/route.js';
import { showsView, viewFilters } from '../../../renderer/src/state/saved-views.js';
import { useSession } from '../../../renderer/src/state/session.js';
import { bridge } from '../fake-bridge.js';
import { serveRoutes } from '../routes-document.js';
import { ME } from '../signed-in.js';
import { pagedRows, requestRow } from './rows.js';

/**
 * The request log's API: a column with each row's API in short words (a dash where unknown), the
 * detail's, and an API filter beside the Target filter, kept in the address and saved views.
 */

// jsdom lays nothing out: the virtualized table needs a scroll box with a height to show rows.
const clientHeight = Object.getOwnPropertyDescriptor(HTMLElement.prototype, 'clientHeight');
beforeAll(() => {
  Object.defineProperty(HTMLElement.prototype, 'clientHeight', { configurable: true, get: () => 4000 });
});
afterAll(() => {
  if (clientHeight) Object.defineProperty(HTMLElement.prototype, 'clientHeight', clientHeight);
});

beforeEach(() => {
  useSession.setState({ phase: 'console', profileId: 'p1', me: ME });
  resetOrganisationStores();
  window.history.replaceState(null, '', '/#/requests');
  useRoute.setState({ screen: 'requests', params: {} });
  bridge.on('api.projects', () => ({ projects: [] }));
  bridge.on('api.listKeys', () => ({ keys: [] }));
  bridge.on('api.models', () => ({ models: [] }));
  serveRoutes();
});

const lastQuery = () => bridge.callsOf('api.requests').at(-1)?.query;
const columnOf = (label: string) =>
  screen.getAllByRole('columnheader').findIndex((header) => header.textContent === label);
const options = (select: HTMLElement) => [...select.querySelectorAll('option')].map((o) => o.textContent);

/** A row as a control plane that answers only the contract's fields sends it: no `api` at all. */
function contractRow(index: number) {
  const { api: _api, ...row } = requestRow(index);
  return row;
}

describe('the API column', () => {
  it('names each row’s API in short words, and shows a dash where it is unknown or not sent', async () => {
    const rows = [
      requestRow(0, { api: 'messages' }),
      requestRow(1, { api: 'count_tokens' }),
      requestRow(2, { api: null }),
      contractRow(3),
      requestRow(4, { api: 'embeddings' }),
      requestRow(5, { api: 'responses' }),
      requestRow(6, { api: 'chat' }),
    ];
    bridge.on('api.requests', () => ({ total: rows.length, limit: 50, offset: 0, requests: rows }));
    render(<RequestLogScreen />);
    const shown = await screen.findAllByTestId('request-row');
    const column = columnOf('API');
    expect(column).toBe(2);
    const cell = (row: HTMLElement) => row.querySelectorAll('td')[column]!;
    expect(shown.map((row) => cell(row).textContent)).toEqual([
      'Messages',
      'Count tokens',
      '–',
      '–',
      'Embeddings',
      'Responses',
      'Chat',
    ]);
    expect(cell(shown[2]!).getAttribute('title')).toBe('API not recorded');
    expect(cell(shown[1]!).getAttribute('title')).toBe('Anthropic token counting (/v1/messages/count_tokens)');
  });

  it('the detail says the API, or that it was not recorded', async () => {
    const rows = [requestRow(0, { api: 'messages' }), requestRow(1, { api: null })];
    bridge.on('api.requests', () => ({ total: 2, limit: 50, offset: 0, requests: rows }));
    render(<RequestLogScreen />);
    const shown = await screen.findAllByTestId('request-row');
    const user = userEvent.setup();
    await user.click(shown[0]!);
    const api = () => within(screen.getByTestId('request-detail')).getByTestId('detail-api').textContent;
    expect(api()).toBe('MessagesAnthropic Messages (/v1/messages)');
    await user.click(shown[1]!);
    await waitFor(() => expect(api()).toBe('– (not recorded)'));
  });
});

describe('the API filter', () => {
  it('offers every API, sends the one chosen, keeps it in the address and goes back to page 1', async () => {
    useRoute.setState({ params: { page: '3', target: 'openai/gpt-4o-mini-2024-07-18' } });
    bridge.on('api.requests', ({ query }) => pagedRows(500)(query));
    render(<RequestLogScreen />);
    await screen.findAllByTestId('request-row');
    const select = screen.getByTestId('filter-api');
    expect(options(select)).toEqual(['All APIs', 'Chat', 'Messages', 'Count tokens', 'Responses', 'Embeddings']);
    // Beside the Target filter.
    const selects = [...screen.getByTestId('request-filters').querySelectorAll('select')];
    expect(selects.indexOf(select as HTMLSelectElement)).toBe(
      selects.indexOf(screen.getByTestId('filter-target') as HTMLSelectElement) + 1,
    );

    const user = userEvent.setup();
    await user.selectOptions(select, 'Count tokens');
    expect(useRoute.getState().params).toMatchObject({ api: 'count_tokens', target: 'openai/gpt-4o-mini-2024-07-18' });
    expect(useRoute.getState().params).not.toHaveProperty('page');
    await waitFor(() =>
      expect(lastQuery()).toEqual({
        time_range: '24h',
        target: 'openai/gpt-4o-mini-2024-07-18',
        api: 'count_tokens',
        limit: 50,
        offset: 0,
      }),
    );

    // "All APIs": the parameter goes.
    await user.selectOptions(select, '');
    expect(useRoute.getState().params).not.toHaveProperty('api');
    await waitFor(() => expect(lastQuery()).not.toHaveProperty('api'));
  });

  it('an API from the address (a saved view) is selected and asked for, one this console does not know as what it is', async () => {
    useRoute.setState({ params: { api: 'responses' } });
    bridge.on('api.requests', ({ query }) => pagedRows(10)(query));
    const { unmount } = render(<RequestLogScreen />);
    await screen.findAllByTestId('request-row');
    expect((screen.getByTestId('filter-api') as HTMLSelectElement).value).toBe('responses');
    expect(lastQuery()).toMatchObject({ api: 'responses' });
    expect(screen.getByTestId('clear-filters')).toBeTruthy();
    unmount();

    useRoute.setState({ params: { api: 'realtime' } });
    render(<RequestLogScreen />);
    await screen.findAllByTestId('request-row');
    const select = screen.getByTestId('filter-api') as HTMLSelectElement;
    expect(select.value).toBe('realtime');
    expect(select.selectedOptions[0]!.textContent).toBe('Unknown API (realtime)');
    await userEvent.setup().click(screen.getByTestId('clear-filters'));
    expect(useRoute.getState().params).not.toHaveProperty('api');
  });

  it('is a filter of the address and of a saved view, as the target is', () => {
    const params = { range: '7d', target: 'openai/gpt-4o', api: 'messages', page: '2' };
    expect(filterQuery(params)).toMatchObject({ time_range: '7d', target: 'openai/gpt-4o', api: 'messages' });
    expect(isFiltered({ api: 'messages' })).toBe(true);
    expect(viewFilters(params)).toEqual({ range: '7d', target: 'openai/gpt-4o', api: 'messages' });
    const view = { id: 'v1', name: 'Messages', screen: 'requests' as const, filters: viewFilters(params) };
    expect(showsView(view, 'requests', params)).toBe(true);
    expect(showsView(view, 'requests', { ...params, api: 'chat' })).toBe(false);
  });

  it('hides where the rows do not say their API (a control plane with only the contract’s fields)', async () => {
    bridge.on('api.requests', () => ({ total: 2, limit: 50, offset: 0, requests: [contractRow(0), contractRow(1)] }));
    render(<RequestLogScreen />);
    await screen.findAllByTestId('request-row');
    await waitFor(() => expect(screen.queryByTestId('filter-api')).toBeNull());
  });
});
