import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { OrganisationScreen } from '../../../renderer/src/screens/organisation/OrganisationScreen.js';
import { useOrganisation } from '../../../renderer/src/screens/organisation/organisation-store.js';
import { resetOrganisationStores } from '../../../renderer/src/state/organisation-scope.js';
import { useSession, type Me } from '../../../renderer/src/state/session.js';
import { bridge, Refusal } from '../fake-bridge.js';

const OWNER_ID = '00000000-0000-4000-8000-000000000001';
const MEMBER_ID = '00000000-0000-4000-8000-000000000002';

function signedInAs(role: Me['role']): void {
  useSession.setState({
    phase: 'console',
    profileId: 'p1',
    me: {
      user_id: role === 'member' ? MEMBER_ID : OWNER_ID,
      email: role === 'member' ? 'mia@acme.example' : 'olu@acme.example',
      role,
      joined_at: '2026-01-01T00:00:00.000Z',
      organization: { name: 'Acme' },
    },
  });
}

const text = (element: Element | null) => element?.textContent ?? '';

beforeEach(() => {
  resetOrganisationStores();
  bridge.on('api.members', () => ({
    members: [
      { user_id: OWNER_ID, email: 'olu@acme.example', role: 'owner', joined_at: '2026-01-01T00:00:00.000Z' },
      { user_id: MEMBER_ID, email: 'mia@acme.example', role: 'member', joined_at: '2026-02-03T09:30:00.000Z' },
    ],
  }));
  bridge.on('api.projects', () => ({
    projects: [
      { id: '00000000-0000-4000-8000-00000000000a', name: 'Default', created_at: '2026-01-01T00:00:00.000Z' },
      { id: '00000000-0000-4000-8000-00000000000b', name: 'Checkout', created_at: '2026-01-05T00:00:00.000Z' },
    ],
  }));
  bridge.on('api.listKeys', () => ({ keys: [] }));
  bridge.on('api.models', () => ({ models: [] }));
});

describe('the organisation screen', () => {
  it('tells a member why they cannot rename, and offers no control to try', async () => {
    signedInAs('member');
    render(<OrganisationScreen />);
    expect(text(screen.getByTestId('organisation-name-text'))).toBe('Acme');
    expect(text(screen.getByTestId('rename-refused'))).toBe(
      "Only the organisation's owner and admins can rename it; you are a member.",
    );
    expect(screen.queryByRole('textbox')).toBeNull();
    expect(screen.queryByRole('button', { name: 'Rename' })).toBeNull();
    await screen.findAllByTestId('member-row');
  });

  it('lists the members with roles and join dates, and the projects', async () => {
    signedInAs('owner');
    render(<OrganisationScreen />);
    const members = await screen.findAllByTestId('member-row');
    expect(members.map((row) => text(row.querySelector('td')))).toEqual(['olu@acme.example (you)', 'mia@acme.example']);
    expect(text(within(members[1]!).getAllByRole('cell')[1]!)).toBe('member');
    expect(members[1]!.querySelector('time')?.getAttribute('title')).toBe('2026-02-03 09:30:00 UTC');

    const projects = await screen.findAllByTestId('project-row');
    expect(projects.map((row) => text(row.querySelector('td')))).toEqual(['Default', 'Checkout']);
  });

  it('renames for an admin and updates the session, so the sidebar shows the new name', async () => {
    signedInAs('admin');
    bridge.on('api.renameOrganization', ({ body }) => ({ name: body.name.trim() }));
    const user = userEvent.setup();
    render(<OrganisationScreen />);

    const input = screen.getByLabelText('Organisation name');
    expect(screen.getByRole('button', { name: 'Rename' })).toHaveProperty('disabled', true);
    await user.clear(input);
    await user.type(input, '  Acme Labs ');
    await user.click(screen.getByRole('button', { name: 'Rename' }));

    expect(text(await screen.findByTestId('rename-done'))).toBe('Renamed to Acme Labs.');
    expect(bridge.callsOf('api.renameOrganization')).toEqual([{ profileId: 'p1', body: { name: '  Acme Labs ' } }]);
    expect(useSession.getState().me?.organization.name).toBe('Acme Labs');
    expect((input as HTMLInputElement).value).toBe('Acme Labs');
  });

  it('shows a taken name (409) at the field, and clears it when the name is edited', async () => {
    signedInAs('owner');
    bridge.on('api.renameOrganization', () => {
      throw new Refusal(409, 'another organization already uses this name');
    });
    const user = userEvent.setup();
    render(<OrganisationScreen />);

    const input = screen.getByLabelText('Organisation name');
    await user.clear(input);
    await user.type(input, 'Globex');
    await user.click(screen.getByRole('button', { name: 'Rename' }));

    const field = screen.getByTestId('rename-field');
    expect(text(await within(field).findByTestId('field-error'))).toBe(
      'another organization already uses this name (409)',
    );
    expect(input.getAttribute('aria-invalid')).toBe('true');
    expect(useSession.getState().me?.organization.name).toBe('Acme');

    await user.type(input, ' Inc');
    expect(within(field).queryByTestId('field-error')).toBeNull();
  });

  it("shows the server's 400 for an invalid name at the field", async () => {
    signedInAs('owner');
    bridge.on('api.renameOrganization', () => {
      throw new Refusal(400, 'organization name must not contain < or >');
    });
    const user = userEvent.setup();
    render(<OrganisationScreen />);
    const input = screen.getByLabelText('Organisation name');
    await user.type(input, '<b>');
    await user.click(screen.getByRole('button', { name: 'Rename' }));
    expect(text(await screen.findByTestId('field-error'))).toBe('organization name must not contain < or > (400)');
  });

  it('shows a 403 at the field when the server no longer counts the user as owner or admin', async () => {
    signedInAs('admin');
    bridge.on('api.renameOrganization', () => {
      throw new Refusal(403, 'owner or admin role required');
    });
    const user = userEvent.setup();
    render(<OrganisationScreen />);
    await user.type(screen.getByLabelText('Organisation name'), ' 2');
    await user.click(screen.getByRole('button', { name: 'Rename' }));
    const error = text(await screen.findByTestId('field-error'));
    expect(error).toContain('owner or admin role required (403)');
    expect(error).toContain('Your role may have changed since you signed in');
  });

  it('drops a member list read for the organisation shown before', async () => {
    signedInAs('owner');
    let answer: () => void = () => {};
    bridge.on('api.members', () => new Promise((resolve) => (answer = () => resolve({ members: [] }))));
    render(<OrganisationScreen />);
    await waitFor(() => expect(bridge.callsOf('api.members')).toHaveLength(1));
    // Another account signs in on this profile while the answer is on its way.
    signedInAs('member');
    answer();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(useOrganisation.getState().members).toBeNull();
    expect(screen.queryByText('No members.')).toBeNull();
  });

  it('never puts a rename answered for the organisation shown before on the one shown now', async () => {
    signedInAs('owner');
    let answer: () => void = () => {};
    bridge.on(
      'api.renameOrganization',
      ({ body }) => new Promise((resolve) => (answer = () => resolve({ name: body.name }))),
    );
    const user = userEvent.setup();
    render(<OrganisationScreen />);
    await user.type(screen.getByLabelText('Organisation name'), ' Labs');
    await user.click(screen.getByRole('button', { name: 'Rename' }));
    await waitFor(() => expect(bridge.callsOf('api.renameOrganization')).toHaveLength(1));
    signedInAs('member');
    answer();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(useSession.getState().me?.organization.name).toBe('Acme');
    expect(useOrganisation.getState().renamedTo).toBeNull();
  });

  it('shows a failed member list in place, with a way to try again', async () => {
    signedInAs('member');
    bridge.on('api.members', () => {
      throw new Refusal(0, 'the console host did not answer: is it still running?');
    });
    const user = userEvent.setup();
    render(<OrganisationScreen />);
    const error = await screen.findByTestId('members-error');
    expect(text(error)).toContain('the console host did not answer');

    bridge.on('api.members', () => ({ members: [] }));
    await user.click(within(error).getByRole('button', { name: 'Try again' }));
    expect(text(await within(screen.getByTestId('members')).findByText('No members.'))).toBe('No members.');
  });
});
