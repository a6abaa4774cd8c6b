import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { formatMinute, formatTime } from '../../../renderer/src/lib/format.js';
import { KeysScreen } from '../../../renderer/src/screens/keys/KeysScreen.js';
import { useKeysStore } from '../../../renderer/src/screens/keys/keys-store.js';
import { useRoute } from '../../../renderer/src/state/route.js';
import { useSession } from '../../../renderer/src/state/session.js';
import { Refusal, bridge } from '../fake-bridge.js';
import { KEYS, PROJECTS, serveOrganisation, signedIn } from './fixtures.js';

const rowNamed = (name: string) => screen.getAllByTestId('key-row').find((row) => row.textContent?.includes(name))!;
const cell = (row: HTMLElement, name: string) => within(row).getByTestId(`cell-${name}`).textContent;
const names = () => screen.getAllByTestId('key-row').map((row) => within(row).getByTestId('cell-name').textContent);

beforeEach(() => signedIn());

describe('the keys table', () => {
  it('shows each key with project name, limits and spend; nulls read as what they mean', async () => {
    serveOrganisation({ keys: KEYS });
    render(<KeysScreen />);
    await waitFor(() => expect(cell(rowNamed('Checkout prod'), 'spend')).toBe('12.34 PKR'));

    const prod = rowNamed('Checkout prod');
    expect(cell(prod, 'project')).toBe('Checkout');
    expect(cell(prod, 'prefix')).toBe('sk_svc_aaaa1111…');
    expect(cell(prod, 'rate')).toBe('600 rpm');
    expect(cell(prod, 'credit')).toBe('1,500.00 PKR');
    expect(cell(prod, 'models')).toBe('openai/gpt-4o-mini, svc/fast');
    expect(within(prod).getByTestId('cell-expiry').querySelector('time')?.getAttribute('dateTime')).toBe(
      '2030-06-01T12:00:00.000Z',
    );
    // To the minute in the table, where room is short; the seconds and the UTC instant on hover.
    const expiry = within(prod).getByTestId('cell-expiry').querySelector('time')!;
    expect(expiry.textContent).toBe(formatMinute('2030-06-01T12:00:00.000Z'));
    expect(expiry.textContent).not.toBe(formatTime('2030-06-01T12:00:00.000Z'));
    expect(expiry.title).toBe(`${formatTime('2030-06-01T12:00:00.000Z')} (2030-06-01 12:00:00 UTC)`);

    // Null credit limit is unlimited, null expiry never comes, null models are any, null last use is never.
    const dev = rowNamed('Search dev');
    expect(cell(dev, 'project')).toBe('Search');
    expect(cell(dev, 'credit')).toBe('unlimited');
    expect(cell(dev, 'spend')).toBe('0.00 PKR');
    expect(cell(dev, 'expiry')).toBe('no expiry');
    expect(cell(dev, 'models')).toBe('any');
    expect(cell(dev, 'last-used')).toBe('never');
  });

  it('shows spend as unknown, not as an error or zero, when the server refuses to tell it', async () => {
    serveOrganisation({ keys: KEYS, spendRefused: true });
    render(<KeysScreen />);
    await screen.findAllByTestId('key-row');
    // A refusal for this role is an answer: said once above the table, quietly, not as an alert.
    expect((await screen.findByTestId('spend-note')).textContent).toBe(
      'Spend is not shown to your role: owner or admin role required (403).',
    );
    for (const key of KEYS) expect(cell(rowNamed(key.name), 'spend')).toBe('–');
    expect(screen.queryByRole('alert')).toBeNull();
  });

  it('says above the table why spend could not be read, and reads it again on request', async () => {
    serveOrganisation({ keys: KEYS });
    let fail = true;
    bridge.on('api.usageThrottling', () => {
      if (fail) throw new Refusal(500, 'usage store unavailable');
      return { time_range: '24h', keys: [] };
    });
    render(<KeysScreen />);
    const note = await screen.findByTestId('spend-error');
    expect(note.textContent).toContain('Spend could not be read: usage store unavailable (500)');
    expect(note.getAttribute('role')).toBe('alert');
    // Above the table, where it is seen before the dashes it explains.
    expect(
      note.compareDocumentPosition(screen.getByTestId('keys-table')) & Node.DOCUMENT_POSITION_FOLLOWING,
    ).toBeTruthy();
    expect(cell(rowNamed('Checkout prod'), 'spend')).toBe('–');

    fail = false;
    await userEvent.click(within(note).getByRole('button', { name: 'Try again' }));
    await waitFor(() => expect(screen.queryByTestId('spend-error')).toBeNull());
    expect(bridge.callsOf('api.usageThrottling')).toHaveLength(2);
  });

  it('drops a spend answer for the organisation shown before', async () => {
    serveOrganisation({ keys: KEYS });
    let answer: () => void = () => {};
    bridge.on('api.usageThrottling', () => {
      const spend = { time_range: '24h', keys: [] };
      return new Promise((resolve) => (answer = () => resolve(spend)));
    });
    render(<KeysScreen />);
    await waitFor(() => expect(bridge.callsOf('api.usageThrottling')).toHaveLength(1));
    useSession.setState({ profileId: 'p2' });
    answer();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(useKeysStore.getState().spent).toBeNull();
  });

  it('sorts by a clicked header, says so with aria-sort, and keeps the sort in the route', async () => {
    serveOrganisation({ keys: KEYS });
    render(<KeysScreen />);
    await screen.findAllByTestId('key-row');
    // Newest first by default, as the server lists them.
    expect(names()).toEqual(['Search dev', 'Checkout tests', 'Checkout prod']);
    // A column may offer several sorts ("Last used · Created"): its header is the one holding the button.
    const header = (label: string) => screen.getByRole('button', { name: new RegExp(`^${label}`) }).closest('th')!;
    expect(header('Created').getAttribute('aria-sort')).toBe('descending');
    expect(header('Name').getAttribute('aria-sort')).toBe('none');

    await userEvent.click(screen.getByRole('button', { name: /^Name/ }));
    expect(names()).toEqual(['Checkout prod', 'Checkout tests', 'Search dev']);
    expect(header('Name').getAttribute('aria-sort')).toBe('ascending');
    expect(header('Created').getAttribute('aria-sort')).toBe('none');
    expect(useRoute.getState().params).toMatchObject({ sort: 'name', order: 'asc' });

    await userEvent.click(screen.getByRole('button', { name: /^Name/ }));
    expect(names()).toEqual(['Search dev', 'Checkout tests', 'Checkout prod']);
    expect(header('Name').getAttribute('aria-sort')).toBe('descending');

    // No credit limit is unlimited: the largest.
    await userEvent.click(screen.getByRole('button', { name: /^Credit/ }));
    expect(names()).toEqual(['Checkout tests', 'Checkout prod', 'Search dev']);
    expect(window.location.hash).toBe('#/keys?order=asc&sort=credit');
  });

  it('filters by project and environment, in the route so a reload keeps them', async () => {
    serveOrganisation({ keys: KEYS });
    render(<KeysScreen />);
    await screen.findAllByTestId('key-row');

    await userEvent.selectOptions(screen.getByLabelText('Project'), 'Checkout');
    expect(names()).toEqual(['Checkout tests', 'Checkout prod']);
    expect(useRoute.getState().params.project).toBe(PROJECTS[0]!.id);
    expect(screen.getByTestId('keys-count').textContent).toBe('2 of 3 keys');

    await userEvent.selectOptions(screen.getByLabelText('Environment'), 'production');
    expect(names()).toEqual(['Checkout prod']);
    expect(window.location.hash).toBe(`#/keys?env=production&project=${PROJECTS[0]!.id}`);

    await userEvent.selectOptions(screen.getByLabelText('Project'), 'Search');
    expect(screen.queryAllByTestId('key-row')).toHaveLength(0);
    screen.getByText('No key matches these filters.');

    await userEvent.click(screen.getByRole('button', { name: 'Clear filters' }));
    expect(names()).toHaveLength(3);
    expect(useRoute.getState().params).toEqual({});
  });

  it('shows an environment from the address that is none of the three, rather than "All environments"', async () => {
    useRoute.setState({ screen: 'keys', params: { env: 'staging' } });
    serveOrganisation({ keys: KEYS });
    render(<KeysScreen />);
    await screen.findByText('No key matches these filters.');
    const select = screen.getByLabelText('Environment') as HTMLSelectElement;
    expect(select.value).toBe('staging');
    expect(select.selectedOptions[0]?.textContent).toBe('Unknown environment (staging)');
    expect(screen.getByTestId('keys-count').textContent).toBe('0 of 3 keys');

    await userEvent.selectOptions(select, '');
    expect(names()).toHaveLength(3);
    expect(screen.queryByRole('option', { name: 'Unknown environment (staging)' })).toBeNull();
  });

  it('starts from the filters and sort of a restored address', async () => {
    useRoute.setState({ screen: 'keys', params: { env: 'testing', sort: 'name', order: 'desc' } });
    serveOrganisation({ keys: KEYS });
    render(<KeysScreen />);
    await screen.findAllByTestId('key-row');
    expect(names()).toEqual(['Checkout tests']);
    expect((screen.getByLabelText('Environment') as HTMLSelectElement).value).toBe('testing');
  });

  it('shows why the keys could not be read, and reads them again on request', async () => {
    serveOrganisation({ keys: KEYS });
    let fail = true;
    bridge.on('api.listKeys', () => {
      if (fail) throw new Refusal(0, 'the control plane did not answer');
      return { keys: KEYS };
    });
    render(<KeysScreen />);
    expect((await screen.findByTestId('keys-error')).textContent).toContain('the control plane did not answer');
    fail = false;
    await userEvent.click(screen.getByRole('button', { name: 'Try again' }));
    expect(await screen.findAllByTestId('key-row')).toHaveLength(3);
  });
});
