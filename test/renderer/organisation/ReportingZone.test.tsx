import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { OrganisationScreen } from '../../../renderer/src/screens/organisation/OrganisationScreen.js';
import { useReportingZone } from '../../../renderer/src/screens/organisation/reporting-zone-store.js';
import { resetOrganisationStores } from '../../../renderer/src/state/organisation-scope.js';
import { useSession, type Me } from '../../../renderer/src/state/session.js';
import { bridge, Refusal } from '../fake-bridge.js';
import { ME } from '../signed-in.js';

const text = (element: Element | null) => element?.textContent ?? '';

function signedInAs(role: Me['role'], name = ME.organization.name): void {
  useSession.setState({ phase: 'console', profileId: 'p1', me: { ...ME, role, organization: { name } } });
}

const KARACHI = { time_zone: 'Asia/Karachi', utc_offset: '+05:00' };

beforeEach(() => {
  resetOrganisationStores();
  bridge.on('api.members', () => ({ members: [] }));
  bridge.on('api.projects', () => ({ projects: [] }));
  bridge.on('api.listKeys', () => ({ keys: [] }));
  bridge.on('api.models', () => ({ models: [] }));
  bridge.on('api.joinPolicy', () => ({ policy: 'closed', domains: [] }));
  bridge.on('api.reportingZone', () => KARACHI);
});

describe('the reporting time zone, on the organisation screen', () => {
  it('shows the zone and its offset, and says what follows it and what stays in UTC', async () => {
    signedInAs('owner');
    render(<OrganisationScreen />);
    await waitFor(() =>
      expect(text(screen.getByTestId('reporting-zone-text'))).toBe(
        'Days and weeks are counted in: Asia/Karachi (UTC+05:00 now)',
      ),
    );
    const note = text(screen.getByTestId('reporting-zone-note'));
    expect(note).toContain("The dashboard's days and weeks start at midnight in this zone");
    expect(note).toContain("The contract's charts (summary, timeseries, request log) stay in UTC.");
    expect(bridge.callsOf('api.reportingZone')).toEqual([{ profileId: 'p1' }]);
  });

  it('lets an owner pick another zone from a searchable list and save it as the server spells it', async () => {
    signedInAs('owner');
    bridge.on('api.setReportingZone', ({ body }) => {
      expect(body.time_zone).toBe('asia/kolkata');
      return { time_zone: 'Asia/Kolkata', utc_offset: '+05:30' };
    });
    const user = userEvent.setup();
    render(<OrganisationScreen />);

    const input = (await screen.findByLabelText('Time zone')) as HTMLInputElement;
    expect(input.value).toBe('Asia/Karachi');
    const save = screen.getByRole('button', { name: 'Save' });
    expect(save).toHaveProperty('disabled', true);
    // The suggestions are the runtime's zones, UTC first.
    const list = document.getElementById(input.getAttribute('list') ?? '') as HTMLDataListElement;
    const options = [...list.options].map((option) => option.value);
    expect(options[0]).toBe('UTC');
    expect(options).toContain('Asia/Karachi');
    expect(options).toContain('America/New_York');

    await user.clear(input);
    await user.type(input, '  asia/kolkata ');
    await user.click(save);

    expect(text(await screen.findByTestId('reporting-zone-saved'))).toBe(
      'The dashboard now counts days in Asia/Kolkata.',
    );
    expect(bridge.callsOf('api.setReportingZone')).toEqual([{ profileId: 'p1', body: { time_zone: 'asia/kolkata' } }]);
    expect(text(screen.getByTestId('reporting-zone-text'))).toBe(
      'Days and weeks are counted in: Asia/Kolkata (UTC+05:30 now)',
    );
    expect((screen.getByLabelText('Time zone') as HTMLInputElement).value).toBe('Asia/Kolkata');
  });

  it("shows the server's refusal of an unknown zone under the field, and clears it when the zone is edited", async () => {
    signedInAs('admin');
    bridge.on('api.setReportingZone', () => {
      throw new Refusal(400, 'unknown time zone: give an IANA name such as Asia/Karachi or UTC', 'time_zone');
    });
    const user = userEvent.setup();
    render(<OrganisationScreen />);
    const input = await screen.findByLabelText('Time zone');
    await user.clear(input);
    await user.type(input, 'Mars/Olympus');
    await user.click(screen.getByRole('button', { name: 'Save' }));

    const field = screen.getByTestId('reporting-zone-field');
    expect(text(await within(field).findByTestId('field-error'))).toBe(
      'unknown time zone: give an IANA name such as Asia/Karachi or UTC (400)',
    );
    expect(input.getAttribute('aria-invalid')).toBe('true');
    // Nothing changed.
    expect(text(screen.getByTestId('reporting-zone-text'))).toContain('Asia/Karachi');

    await user.type(input, 'x');
    expect(within(field).queryByTestId('field-error')).toBeNull();
  });

  it('says at the field when the server no longer counts the user as owner or admin', async () => {
    signedInAs('admin');
    bridge.on('api.setReportingZone', () => {
      throw new Refusal(403, 'owner or admin role required');
    });
    const user = userEvent.setup();
    render(<OrganisationScreen />);
    const input = await screen.findByLabelText('Time zone');
    await user.clear(input);
    await user.type(input, 'UTC');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    const error = text(await within(screen.getByTestId('reporting-zone-field')).findByTestId('field-error'));
    expect(error).toContain('owner or admin role required (403)');
    expect(error).toContain('Your role may have changed since you signed in');
  });

  it('shows a member the zone, read-only, and why', async () => {
    signedInAs('member');
    render(<OrganisationScreen />);
    expect(text(await screen.findByTestId('reporting-zone-refused'))).toBe(
      "Only the organisation's owner and admins can change it; you are a member.",
    );
    const panel = screen.getByTestId('reporting-zone');
    expect(text(within(panel).getByTestId('reporting-zone-text'))).toContain('Asia/Karachi (UTC+05:00 now)');
    expect(within(panel).queryByRole('combobox')).toBeNull();
    expect(within(panel).queryByRole('textbox')).toBeNull();
    expect(within(panel).queryByRole('button')).toBeNull();
  });

  it('hides the panel on a control plane without the endpoint', async () => {
    signedInAs('owner');
    bridge.on('api.reportingZone', () => {
      throw new Refusal(404, 'not found');
    });
    render(<OrganisationScreen />);
    await waitFor(() => expect(useReportingZone.getState().notOffered).toBe(true));
    expect(screen.queryByTestId('reporting-zone')).toBeNull();
    expect(screen.queryByText('Reporting time zone')).toBeNull();
    // The rest of the screen stays.
    expect(screen.getByTestId('join-policy')).toBeTruthy();
  });

  it('shows unknown when the zone cannot be read, never a guess, and reads it again on request', async () => {
    signedInAs('owner');
    bridge.on('api.reportingZone', () => {
      throw new Refusal(0, 'the console host did not answer: is it still running?');
    });
    const user = userEvent.setup();
    render(<OrganisationScreen />);
    const error = await screen.findByTestId('reporting-zone-error');
    expect(text(error)).toContain('The reporting time zone could not be read: the console host did not answer');
    expect(text(screen.getByTestId('reporting-zone-text'))).toBe('Days and weeks are counted in: –');
    expect(screen.queryByLabelText('Time zone')).toBeNull();

    bridge.on('api.reportingZone', () => ({ time_zone: 'UTC', utc_offset: '+00:00' }));
    await user.click(within(error).getByRole('button', { name: 'Try again' }));
    await waitFor(() =>
      expect(text(screen.getByTestId('reporting-zone-text'))).toBe(
        'Days and weeks are counted in: UTC (UTC+00:00 now)',
      ),
    );
    expect(screen.queryByTestId('reporting-zone-error')).toBeNull();
  });

  it('drops a zone read for the organisation shown before', async () => {
    signedInAs('owner');
    let answer: () => void = () => {};
    bridge.on('api.reportingZone', () => new Promise((resolve) => (answer = () => resolve(KARACHI))));
    render(<OrganisationScreen />);
    await waitFor(() => expect(bridge.callsOf('api.reportingZone')).toHaveLength(1));
    // Another organisation is shown while the answer is on its way.
    resetOrganisationStores();
    signedInAs('owner', 'Globex');
    answer();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(useReportingZone.getState().zone).toBeNull();
  });
});
