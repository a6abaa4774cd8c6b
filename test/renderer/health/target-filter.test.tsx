import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { HealthScreen } from '../../../renderer/src/screens/health/HealthScreen.js';
import { resetOrganisationStores } from '../../../renderer/src/state/organisation-scope.js';
import { useRoute } from '../../../renderer/src/state/route.js';
import { useSession } from '../../../renderer/src/state/session.js';
import { bridge } from '../fake-bridge.js';
import { serveRoutes, TARGETS } from '../routes-document.js';
import { ME } from '../signed-in.js';
import { healthAnswer } from './fixtures.js';

/** The health screen's Target filter: the routes document's targets; the figures and their request-log links narrowed to one. */

const TO = '2026-11-22T08:00:00.000Z';
const TARGET = 'openai/gpt-4o-mini-2024-07-18';

beforeEach(() => {
  useSession.setState({ phase: 'console', profileId: 'p1', me: ME });
  resetOrganisationStores();
  window.history.replaceState(null, '', '/#/health');
  useRoute.setState({ screen: 'health', params: {} });
  serveRoutes();
  // Narrowed, the target served fewer of the model's requests.
  bridge.on('api.health', (args) => healthAnswer(args.query?.target ? 7 : 42, TO));
});

const options = (select: HTMLElement) => [...select.querySelectorAll('option')].map((o) => o.textContent);
const healthQueries = () => bridge.callsOf('api.health').map((args) => args.query);
const modelRequests = () => screen.getByTestId('health-model').querySelectorAll('td')[1]!.textContent;

describe('the health Target filter', () => {
  it("lists the document's targets, and choosing one reads the health of its requests", async () => {
    render(<HealthScreen />);
    const select = screen.getByTestId('filter-target');
    await waitFor(() => expect(options(select)).toEqual(['All targets', ...TARGETS]));
    await waitFor(() => expect(modelRequests()).toBe('42'));
    expect(healthQueries()).toEqual([{ window: '1h' }]);

    await userEvent.selectOptions(select, TARGET);
    expect(useRoute.getState().params).toEqual({ target: TARGET });
    await waitFor(() => expect(modelRequests()).toBe('7'));
    expect(healthQueries().at(-1)).toEqual({ window: '1h', target: TARGET });
  });

  it("narrowed, a model's name opens the request log of that target's requests only", async () => {
    useRoute.setState({ screen: 'health', params: { target: TARGET, window: '24h' } });
    render(<HealthScreen />);
    const model = await screen.findByTestId('health-model');
    expect((screen.getByTestId('filter-target') as HTMLSelectElement).value).toBe(TARGET);
    await userEvent.click(within(model).getByRole('button', { name: 'openai/gpt-4o-mini' }));
    expect(useRoute.getState().screen).toBe('requests');
    expect(useRoute.getState().params).toMatchObject({ model: 'openai/gpt-4o-mini', target: TARGET });
  });
});
