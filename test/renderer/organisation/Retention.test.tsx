import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { formatTime } from '../../../renderer/src/lib/format.js';
import { OrganisationScreen } from '../../../renderer/src/screens/organisation/OrganisationScreen.js';
import { useRetention, type Retention } from '../../../renderer/src/screens/organisation/retention-store.js';
import { resetOrganisationStores } from '../../../renderer/src/state/organisation-scope.js';
import { useSession, type Me } from '../../../renderer/src/state/session.js';
import { bridge, Refusal } from '../fake-bridge.js';
import { ME } from '../signed-in.js';

const text = (element: Element | null) => element?.textContent ?? '';
/** The retention panel's queries: the reporting zone's panel beside it has a Save button too. */
const panel = () => within(screen.getByTestId('retention'));

function signedInAs(role: Me['role'], name = ME.organization.name): void {
  useSession.setState({ phase: 'console', profileId: 'p1', me: { ...ME, role, organization: { name } } });
}

const HORIZON_30 = '2026-06-01T12:00:00.000Z';
const HORIZON_90 = '2026-04-02T12:00:00.000Z';
const THIRTY_OF_NINETY: Retention = { days: 30, platform_days: 90, effective_days: 30, horizon: HORIZON_30 };
const PLATFORM_NINETY: Retention = { days: null, platform_days: 90, effective_days: 90, horizon: HORIZON_90 };
const EVERY_ROW: Retention = { days: null, platform_days: null, effective_days: null, horizon: null };

beforeEach(() => {
  resetOrganisationStores();
  bridge.on('api.members', () => ({ members: [] }));
  bridge.on('api.projects', () => ({ projects: [] }));
  bridge.on('api.listKeys', () => ({ keys: [] }));
  bridge.on('api.models', () => ({ models: [] }));
  bridge.on('api.joinPolicy', () => ({ policy: 'closed', domains: [] }));
  bridge.on('api.reportingZone', () => ({ time_zone: 'UTC', utc_offset: '+00:00' }));
  bridge.on('api.retention', () => THIRTY_OF_NINETY);
});

describe('the request-log retention, on the organisation screen', () => {
  it('shows the days kept, what happens to older rows, the platform limit and the horizon', async () => {
    signedInAs('owner');
    render(<OrganisationScreen />);
    await waitFor(() =>
      expect(text(screen.getByTestId('retention-text'))).toBe(
        'Rows are kept 30 days: older ones are deleted; their hourly and daily totals stay.',
      ),
    );
    expect(text(screen.getByTestId('retention-platform'))).toBe(
      'The platform keeps rows at most 90 days; the organisation may keep its own for fewer.',
    );
    const horizon = screen.getByTestId('retention-horizon');
    expect(text(horizon)).toBe(`Rows are kept from ${formatTime(HORIZON_30)} on: deletion goes by whole hours.`);
    // In the computer's zone (the tests run in Karachi's), with the instant in UTC beside it.
    const time = horizon.querySelector('time')!;
    expect(time.getAttribute('dateTime')).toBe(HORIZON_30);
    expect(time.getAttribute('title')).toBe('2026-06-01 12:00:00 UTC');
    expect(text(time)).toContain('5:00:00');
    expect(bridge.callsOf('api.retention')).toEqual([{ profileId: 'p1' }]);
  });

  it('says every row is kept when neither the platform nor the organisation deletes any', async () => {
    signedInAs('owner');
    bridge.on('api.retention', () => EVERY_ROW);
    render(<OrganisationScreen />);
    await waitFor(() => expect(text(screen.getByTestId('retention-text'))).toBe('Every row is kept.'));
    expect(screen.queryByTestId('retention-platform')).toBeNull();
    expect(screen.queryByTestId('retention-horizon')).toBeNull();
    expect((screen.getByLabelText('Keep rows') as HTMLSelectElement).value).toBe('platform');
    expect(screen.queryByLabelText('Days')).toBeNull();
  });

  it('lets an owner set a number of days and save it', async () => {
    signedInAs('owner');
    bridge.on('api.retention', () => PLATFORM_NINETY);
    bridge.on('api.setRetention', ({ body }) => {
      expect(body.days).toBe(14);
      return { days: 14, platform_days: 90, effective_days: 14, horizon: '2026-06-17T12:00:00.000Z' };
    });
    const user = userEvent.setup();
    render(<OrganisationScreen />);

    const mode = (await screen.findByLabelText('Keep rows')) as HTMLSelectElement;
    expect(mode.value).toBe('platform');
    const save = panel().getByRole('button', { name: 'Save' });
    expect(save).toHaveProperty('disabled', true);
    await user.selectOptions(mode, 'days');
    await user.type(screen.getByLabelText('Days'), ' 14 ');
    await user.click(save);

    expect(text(await screen.findByTestId('retention-saved'))).toBe('Saved: the organisation keeps rows 14 days.');
    expect(bridge.callsOf('api.setRetention')).toEqual([{ profileId: 'p1', body: { days: 14 } }]);
    expect(text(screen.getByTestId('retention-text'))).toBe(
      'Rows are kept 14 days: older ones are deleted; their hourly and daily totals stay.',
    );
    expect((screen.getByLabelText('Days') as HTMLInputElement).value).toBe('14');
  });

  it('lets an admin go back to keeping rows as long as the platform does', async () => {
    signedInAs('admin');
    bridge.on('api.setRetention', () => PLATFORM_NINETY);
    const user = userEvent.setup();
    render(<OrganisationScreen />);
    await user.selectOptions(await screen.findByLabelText('Keep rows'), 'platform');
    expect(screen.queryByLabelText('Days')).toBeNull();
    await user.click(panel().getByRole('button', { name: 'Save' }));

    expect(text(await screen.findByTestId('retention-saved'))).toBe(
      'Saved: the organisation keeps rows as long as the platform does.',
    );
    expect(bridge.callsOf('api.setRetention')).toEqual([{ profileId: 'p1', body: { days: null } }]);
    expect(text(screen.getByTestId('retention-text'))).toContain('Rows are kept 90 days');
  });

  it("shows the server's refusal under the days, and clears it when they are edited", async () => {
    signedInAs('owner');
    bridge.on('api.setRetention', () => {
      throw new Refusal(
        400,
        "days must be at most the platform's 90 days, or null to keep rows as long as the platform does",
        'days',
      );
    });
    const user = userEvent.setup();
    render(<OrganisationScreen />);
    const input = await screen.findByLabelText('Days');
    await user.clear(input);
    await user.type(input, '120');
    await user.click(panel().getByRole('button', { name: 'Save' }));

    const field = screen.getByTestId('retention-field');
    expect(text(await within(field).findByTestId('field-error'))).toBe(
      "days must be at most the platform's 90 days, or null to keep rows as long as the platform does (400)",
    );
    expect(input.getAttribute('aria-invalid')).toBe('true');
    // Nothing changed.
    expect(text(screen.getByTestId('retention-text'))).toContain('Rows are kept 30 days');

    await user.type(input, '0');
    expect(within(field).queryByTestId('field-error')).toBeNull();
  });

  it('asks for a whole number of days before asking the server', async () => {
    signedInAs('owner');
    const user = userEvent.setup();
    render(<OrganisationScreen />);
    const input = await screen.findByLabelText('Days');
    await user.clear(input);
    await user.type(input, 'a month');
    await user.click(panel().getByRole('button', { name: 'Save' }));
    expect(text(within(screen.getByTestId('retention-field')).getByTestId('field-error'))).toBe(
      'Give a whole number of days, such as 30.',
    );
    expect(bridge.callsOf('api.setRetention')).toEqual([]);
  });

  it('shows a member the retention, read-only, and why', async () => {
    signedInAs('member');
    render(<OrganisationScreen />);
    expect(text(await screen.findByTestId('retention-refused'))).toBe(
      "Only the organisation's owner and admins can change it; you are a member.",
    );
    const shown = panel();
    expect(text(shown.getByTestId('retention-text'))).toContain('Rows are kept 30 days');
    expect(text(shown.getByTestId('retention-horizon'))).toContain(formatTime(HORIZON_30));
    expect(shown.queryByRole('combobox')).toBeNull();
    expect(shown.queryByRole('textbox')).toBeNull();
    expect(shown.queryByRole('button')).toBeNull();
  });

  it('hides the panel on a control plane without the endpoint', async () => {
    signedInAs('owner');
    bridge.on('api.retention', () => {
      throw new Refusal(404, 'not found');
    });
    render(<OrganisationScreen />);
    await waitFor(() => expect(useRetention.getState().notOffered).toBe(true));
    expect(screen.queryByTestId('retention')).toBeNull();
    expect(screen.queryByText('Request-log retention')).toBeNull();
    expect(screen.getByTestId('reporting-zone')).toBeTruthy();
  });

  it('shows unknown when the retention cannot be read, never a guess, and reads it again on request', async () => {
    signedInAs('owner');
    bridge.on('api.retention', () => {
      throw new Refusal(0, 'the console host did not answer: is it still running?');
    });
    const user = userEvent.setup();
    render(<OrganisationScreen />);
    const error = await screen.findByTestId('retention-error');
    expect(text(error)).toContain('The request-log retention could not be read: the console host did not answer');
    expect(text(screen.getByTestId('retention-text'))).toBe('Rows are kept: –');
    expect(screen.queryByLabelText('Keep rows')).toBeNull();

    bridge.on('api.retention', () => EVERY_ROW);
    await user.click(within(error).getByRole('button', { name: 'Try again' }));
    await waitFor(() => expect(text(screen.getByTestId('retention-text'))).toBe('Every row is kept.'));
    expect(screen.queryByTestId('retention-error')).toBeNull();
  });
});
