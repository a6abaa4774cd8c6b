import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { OrganisationScreen } from '../../../renderer/src/screens/organisation/OrganisationScreen.js';
import { useJoinPolicy } from '../../../renderer/src/screens/organisation/join-policy-store.js';
import { resetOrganisationStores } from '../../../renderer/src/state/organisation-scope.js';
import { useSession } from '../../../renderer/src/state/session.js';
import { bridge, Refusal } from '../fake-bridge.js';
import { ME } from '../signed-in.js';

const text = (element: Element | null) => element?.textContent ?? '';

function signedIn(name = ME.organization.name): void {
  useSession.setState({ phase: 'console', profileId: 'p1', me: { ...ME, organization: { name } } });
}

beforeEach(() => {
  resetOrganisationStores();
  bridge.on('api.members', () => ({ members: [] }));
  bridge.on('api.projects', () => ({ projects: [] }));
  bridge.on('api.listKeys', () => ({ keys: [] }));
  bridge.on('api.models', () => ({ models: [] }));
  signedIn();
});

describe('who may join, on the organisation screen', () => {
  it('warns while anyone who names the organisation may join, and says how to change it', async () => {
    bridge.on('api.joinPolicy', () => ({ policy: 'open', domains: [] }));
    render(<OrganisationScreen />);
    const warning = await screen.findByTestId('join-policy-warning');
    expect(text(screen.getByTestId('join-policy-text'))).toBe('Who may join: anyone who names this organisation');
    expect(warning.className).toBe('warning');
    expect(text(warning)).toContain('becomes a member who can create API keys and read the request log');
    expect(text(warning)).toContain('npm run admin -- set-join-policy --org NAME --policy closed');
    expect(bridge.callsOf('api.joinPolicy')).toEqual([{ profileId: 'p1' }]);
    // Read-only: nothing here changes the policy.
    expect(within(screen.getByTestId('join-policy')).queryByRole('button')).toBeNull();
  });

  it('lists the domains of a domains policy, without the warning', async () => {
    bridge.on('api.joinPolicy', () => ({ policy: 'domains', domains: ['a.example', 'b.example'] }));
    render(<OrganisationScreen />);
    await waitFor(() =>
      expect(text(screen.getByTestId('join-policy-text'))).toBe(
        'Who may join: people with an email at a.example, b.example',
      ),
    );
    expect(screen.queryByTestId('join-policy-warning')).toBeNull();
  });

  it('says closed when nobody may join', async () => {
    bridge.on('api.joinPolicy', () => ({ policy: 'closed', domains: [] }));
    render(<OrganisationScreen />);
    await waitFor(() => expect(text(screen.getByTestId('join-policy-text'))).toBe('Who may join: closed'));
    expect(screen.queryByTestId('join-policy-warning')).toBeNull();
  });

  it('shows unknown when the policy cannot be read, never a guess, and reads it again on request', async () => {
    bridge.on('api.joinPolicy', () => {
      throw new Refusal(0, 'the console host did not answer: is it still running?');
    });
    const user = userEvent.setup();
    render(<OrganisationScreen />);
    const error = await screen.findByTestId('join-policy-error');
    expect(text(error)).toContain('the console host did not answer');
    expect(text(screen.getByTestId('join-policy-text'))).toBe('Who may join: –');
    expect(screen.queryByTestId('join-policy-warning')).toBeNull();

    bridge.on('api.joinPolicy', () => ({ policy: 'closed', domains: [] }));
    await user.click(within(error).getByRole('button', { name: 'Try again' }));
    await waitFor(() => expect(text(screen.getByTestId('join-policy-text'))).toBe('Who may join: closed'));
    expect(screen.queryByTestId('join-policy-error')).toBeNull();
  });

  it('shows unknown, and says why, on a control plane without the endpoint', async () => {
    bridge.on('api.joinPolicy', () => {
      throw new Refusal(404, 'not found');
    });
    render(<OrganisationScreen />);
    expect(text(await screen.findByTestId('join-policy-unknown'))).toBe(
      'This control plane does not say who may join.',
    );
    expect(text(screen.getByTestId('join-policy-text'))).toBe('Who may join: –');
    expect(screen.queryByTestId('join-policy-error')).toBeNull();
  });

  it('drops a policy read for the organisation shown before', async () => {
    let answer: () => void = () => {};
    bridge.on(
      'api.joinPolicy',
      () => new Promise((resolve) => (answer = () => resolve({ policy: 'open', domains: [] }))),
    );
    render(<OrganisationScreen />);
    await waitFor(() => expect(bridge.callsOf('api.joinPolicy')).toHaveLength(1));
    // Another organisation is shown while the answer is on its way.
    resetOrganisationStores();
    signedIn('Globex');
    answer();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(useJoinPolicy.getState().policy).toBeNull();
  });
});
