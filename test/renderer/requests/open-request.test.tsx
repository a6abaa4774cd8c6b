import { render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RequestLogScreen } from '../../../renderer/src/screens/requests/RequestLogScreen.js';
import { resetOrganisationStores } from '../../../renderer/src/state/organisation-scope.js';
import { useRoute } from '../../../renderer/src/state/route.js';
import { useSession } from '../../../renderer/src/state/session.js';
import { bridge, Refusal } from '../fake-bridge.js';
import { ME } from '../signed-in.js';
import { requestRow } from './rows.js';

/** The request log opened on one request by the route's `request` (the command palette's "Open request"). */

// jsdom lays nothing out: the virtualized table needs a scroll box with a height to show rows.
const clientHeight = Object.getOwnPropertyDescriptor(HTMLElement.prototype, 'clientHeight');
beforeAll(() => {
  Object.defineProperty(HTMLElement.prototype, 'clientHeight', { configurable: true, get: () => 4000 });
});
afterAll(() => {
  if (clientHeight) Object.defineProperty(HTMLElement.prototype, 'clientHeight', clientHeight);
});

const PAGE = [requestRow(0), requestRow(1), requestRow(2)];
/** An old request: not on the first page of the default window, found only by its id. */
const OLD = requestRow(90_000, { timestamp: '2026-01-05T10:00:00.000Z' });

beforeEach(() => {
  useSession.setState({ phase: 'console', profileId: 'p1', me: ME });
  resetOrganisationStores();
  bridge.on('api.projects', () => ({ projects: [] }));
  bridge.on('api.listKeys', () => ({ keys: [] }));
  bridge.on('api.models', () => ({ models: [] }));
  bridge.on('api.requests', ({ query }) => {
    const rows = query.search ? [...PAGE, OLD].filter((r) => r.req_id.includes(query.search!.toLowerCase())) : PAGE;
    return { requests: rows, total: rows.length, limit: query.limit ?? 50, offset: query.offset ?? 0 };
  });
});

function openOn(params: Record<string, string>) {
  window.history.replaceState(null, '', '/#/requests');
  useRoute.setState({ screen: 'requests', params });
  render(<RequestLogScreen />);
}

describe('a request opened by its id', () => {
  it('is looked up by its exact id, however old, and shown in the detail', async () => {
    bridge.on('api.request', ({ params }) => {
      if (params.req_id === OLD.req_id) return OLD;
      throw new Refusal(404, 'request not found', 'req_id');
    });
    openOn({ request: OLD.req_id });
    expect((await screen.findByTestId('detail-req-id')).textContent).toBe(OLD.req_id);
    expect(bridge.callsOf('api.request').map((args) => args.params.req_id)).toEqual([OLD.req_id]);
    // No search: ten newer rows mentioning the id in their metadata could hide it from one.
    expect(bridge.callsOf('api.requests').some((args) => args.query.search)).toBe(false);
  });

  it('says so when no request has the id, opens nothing, and forgets the id so a reload does not ask again', async () => {
    bridge.on('api.request', () => {
      throw new Refusal(404, 'request not found', 'req_id');
    });
    openOn({ request: 'req_nowhere' });
    expect((await screen.findByTestId('request-open-error')).textContent).toBe('There is no request req_nowhere.');
    expect(useRoute.getState().params.request).toBeUndefined();
    expect(screen.queryByTestId('request-detail')).toBeNull();
    expect(bridge.callsOf('api.request')).toHaveLength(1);
  });

  it('on a server without the lookup, searches and keeps only the row with exactly that id', async () => {
    // The contract's server: no such route, a 404 naming no field.
    bridge.on('api.request', () => {
      throw new Refusal(404, 'not found');
    });
    const mentions = Array.from({ length: 12 }, (_, i) => requestRow(500 + i));
    bridge.on('api.requests', ({ query }) => {
      const rows = query.search ? [...mentions, OLD] : PAGE;
      return { requests: rows, total: rows.length, limit: query.limit ?? 50, offset: query.offset ?? 0 };
    });
    openOn({ request: OLD.req_id });
    expect((await screen.findByTestId('detail-req-id')).textContent).toBe(OLD.req_id);
    const search = bridge.callsOf('api.requests').find((args) => args.query.search);
    expect(search?.query).toMatchObject({ search: OLD.req_id, time_range: '400d', limit: 200 });
  });

  it('follows the detail panel: a row opened is named in the route, and closing it drops the name', async () => {
    openOn({});
    const user = userEvent.setup();
    await user.click((await screen.findAllByTestId('request-row'))[1]!);
    await waitFor(() => expect(useRoute.getState().params.request).toBe(PAGE[1]!.req_id));
    await user.click(screen.getByTestId('close-detail'));
    expect(useRoute.getState().params.request).toBeUndefined();
    expect(screen.queryByTestId('request-detail')).toBeNull();
  });
});
