import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { KeysScreen } from '../../../renderer/src/screens/keys/KeysScreen.js';
import type { Key } from '../../../renderer/src/state/directory.js';
import { Refusal, bridge } from '../fake-bridge.js';
import { KEYS, serveOrganisation, signedIn } from './fixtures.js';

const RATE = 'Rate limit (requests per minute)';
const CREDIT = 'Credit limit (PKR)';
const EXPIRES = 'Expires';

const rowNamed = (name: string) => screen.getAllByTestId('key-row').find((row) => row.textContent?.includes(name))!;
const dialog = () => screen.getByTestId('edit-key-dialog');
const input = (label: string) => within(dialog()).getByLabelText(label) as HTMLInputElement;
function fieldError(label: string): string | null {
  const field = input(label).closest('.field') as HTMLElement;
  return within(field).queryByTestId('field-error')?.textContent ?? null;
}
async function replace(label: string, text: string) {
  await userEvent.clear(input(label));
  if (text) await userEvent.type(input(label), text);
}

async function openEdit(name: string, state = { keys: [...KEYS] }) {
  serveOrganisation(state);
  render(<KeysScreen />);
  await waitFor(() => expect(rowNamed(name).textContent).toContain('PKR'));
  await userEvent.click(within(rowNamed(name)).getByTestId('edit-key'));
  return state;
}

beforeEach(() => signedIn());

describe('editing a key’s limits', () => {
  it('starts from the key’s current limits', async () => {
    await openEdit('Checkout prod');
    expect(input(RATE).value).toBe('600');
    expect(input(CREDIT).value).toBe('1500.00');
    // 2030-06-01T12:00Z is 17:00 in Karachi.
    expect(input(EXPIRES).value).toBe('2030-06-01T17:00');
    expect(dialog().textContent).toContain('Spent so far: 12.34 PKR');
  });

  it('sends PKR as plain PKR, the expiry as epoch seconds, and shows the new values after saving', async () => {
    const state = await openEdit('Checkout prod');
    bridge.on('api.updateKey', ({ params, body }) => {
      const key = state.keys.find((k) => k.id === params.key_id)!;
      const updated: Key = {
        ...key,
        rate_limit_rpm: body.rate_limit_rpm,
        credit_limit_cents: body.credit_limit_pkr ? Math.round(body.credit_limit_pkr * 1e6) : null,
        expires_at: body.expires_at ? new Date(body.expires_at * 1000).toISOString() : null,
      };
      state.keys = state.keys.map((k) => (k.id === key.id ? updated : k));
      return updated;
    });
    await replace(RATE, '900');
    await replace(CREDIT, '2,000.25');
    fireEvent.change(input(EXPIRES), { target: { value: '2031-01-01T00:00' } });
    await userEvent.click(within(dialog()).getByTestId('submit-edit'));

    await waitFor(() => expect(screen.queryByTestId('edit-key-dialog')).toBeNull());
    expect(bridge.callsOf('api.updateKey')[0]).toMatchObject({
      params: { key_id: KEYS[0]!.id },
      body: {
        rate_limit_rpm: 900,
        credit_limit_pkr: 2000.25,
        // Midnight in Karachi is 19:00 UTC the day before.
        expires_at: Date.UTC(2030, 11, 31, 19, 0, 0) / 1000,
      },
    });
    await waitFor(() =>
      expect(within(rowNamed('Checkout prod')).getByTestId('cell-credit').textContent).toBe('2,000.25 PKR'),
    );
    expect(within(rowNamed('Checkout prod')).getByTestId('cell-rate').textContent).toBe('900 rpm');
  });

  it('sends null for an emptied credit limit and expiry: unlimited, never expires', async () => {
    await openEdit('Checkout prod');
    bridge.on('api.updateKey', ({ params }) => ({
      id: params.key_id,
      key_prefix: 'sk_svc_aaaa1111',
      rate_limit_rpm: 600,
      expires_at: null,
      credit_limit_cents: null,
    }));
    await replace(CREDIT, '');
    fireEvent.change(input(EXPIRES), { target: { value: '' } });
    await userEvent.click(within(dialog()).getByTestId('submit-edit'));
    await waitFor(() => expect(bridge.callsOf('api.updateKey')).toHaveLength(1));
    expect(bridge.callsOf('api.updateKey')[0]!.body).toEqual({
      rate_limit_rpm: 600,
      credit_limit_pkr: null,
      expires_at: null,
    });
  });

  it.each([
    [400, 'rate limit 20000 rpm is above the platform ceiling of 10000 rpm', 'rate_limit_rpm', RATE],
    [400, 'expires_at must be in the future', 'expires_at', EXPIRES],
    [400, "credit limit 0.05 PKR is below this key's spend so far of 12.34 PKR", 'credit_limit_pkr', CREDIT],
    [
      400,
      'credit limits would total 1500000.00 PKR, above the organisation budget of 1000.00 PKR',
      'credit_limit_pkr',
      CREDIT,
    ],
    [400, 'credit limit must be at least 0.000001 PKR', 'credit_limit_pkr', CREDIT],
    [422, 'invalid arguments for api.updateKey: /body/rate_limit_rpm Expected integer', 'rate_limit_rpm', RATE],
    [422, 'credit_limit_pkr: must be >= 0', 'credit_limit_pkr', CREDIT],
    // A message that names another field in its words still lands where its field says.
    [400, 'the rate limit and credit are fine, but no', 'expires_at', EXPIRES],
  ])('shows a %i “%s” (field %s) at its field', async (status, message, field, label) => {
    await openEdit('Checkout prod');
    bridge.on('api.updateKey', () => {
      throw new Refusal(status, message, field);
    });
    await userEvent.click(within(dialog()).getByTestId('submit-edit'));
    await waitFor(() => expect(fieldError(label)).toBe(message));
    for (const other of [RATE, CREDIT, EXPIRES].filter((l) => l !== label)) expect(fieldError(other)).toBeNull();
    expect(within(dialog()).queryByTestId('form-error')).toBeNull();
  });

  it('shows an error that names no field of the form at the form', async () => {
    await openEdit('Checkout prod');
    bridge.on('api.updateKey', () => {
      throw new Refusal(404, 'key not found', 'key_id');
    });
    await userEvent.click(within(dialog()).getByTestId('submit-edit'));
    expect((await within(dialog()).findByTestId('form-error')).textContent).toBe('key not found (404)');
  });

  it('catches what it can before sending: a credit below one micro-PKR, zero, a rate that is not a whole number', async () => {
    await openEdit('Search dev');
    await replace(CREDIT, '0.0000001');
    await replace(RATE, '12.5');
    await userEvent.click(within(dialog()).getByTestId('submit-edit'));
    expect(fieldError(CREDIT)).toMatch(/smallest credit limit is 0\.000001 PKR/);
    expect(fieldError(RATE)).toMatch(/whole number/);
    await replace(CREDIT, '0');
    await userEvent.click(within(dialog()).getByTestId('submit-edit'));
    expect(fieldError(CREDIT)).toMatch(/above 0 PKR; leave it empty for no limit/);
    expect(bridge.callsOf('api.updateKey')).toHaveLength(0);
  });
});

describe('revoking a key', () => {
  it('asks with the key’s name and prefix, then the key leaves the table', async () => {
    const state = { keys: [...KEYS] };
    serveOrganisation(state);
    bridge.on('api.revokeKey', ({ params }) => {
      state.keys = state.keys.filter((k) => k.id !== params.key_id);
      return { message: 'key revoked' };
    });
    render(<KeysScreen />);
    await screen.findAllByTestId('key-row');
    await userEvent.click(
      within(rowNamed('Checkout tests')).getByRole('button', {
        name: 'Revoke the key Checkout tests (sk_svc_cccc3333…)',
      }),
    );
    const confirm = screen.getByTestId('confirm-dialog');
    expect(within(confirm).getByTestId('revoke-name').textContent).toBe('Checkout tests');
    expect(within(confirm).getByTestId('revoke-prefix').textContent).toBe('sk_svc_cccc3333…');
    await userEvent.click(within(confirm).getByTestId('confirm'));

    await waitFor(() => expect(screen.getAllByTestId('key-row')).toHaveLength(2));
    expect(screen.queryByText('Checkout tests')).toBeNull();
    expect(screen.queryByTestId('confirm-dialog')).toBeNull();
    expect(bridge.callsOf('api.revokeKey')[0]!.params).toEqual({ key_id: KEYS[2]!.id });
  });

  it('keeps the dialog open with the server’s refusal', async () => {
    serveOrganisation({ keys: KEYS });
    bridge.on('api.revokeKey', () => {
      throw new Refusal(404, 'key not found');
    });
    render(<KeysScreen />);
    await screen.findAllByTestId('key-row');
    await userEvent.click(within(rowNamed('Search dev')).getByTestId('revoke-key'));
    await userEvent.click(screen.getByTestId('confirm'));
    expect((await within(screen.getByTestId('confirm-dialog')).findByRole('alert')).textContent).toBe(
      'key not found (404)',
    );
  });
});
