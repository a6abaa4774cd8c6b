import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { VaultScreen } from '../../../renderer/src/screens/vault/VaultScreen.js';
import { useVaultStore, type VaultKey } from '../../../renderer/src/screens/vault/vault-store.js';
import { useDirectory } from '../../../renderer/src/state/directory.js';
import { resetOrganisationStores } from '../../../renderer/src/state/organisation-scope.js';
import { useSession } from '../../../renderer/src/state/session.js';
import { Refusal, bridge } from '../fake-bridge.js';

const STORED: VaultKey[] = [
  {
    provider: 'openai',
    key_hint: '…9e19',
    created_at: '2026-01-05T10:00:00.000Z',
    updated_at: '2026-02-01T08:00:00.000Z',
  },
  {
    provider: 'anthropic',
    key_hint: '…6c1a',
    created_at: '2026-01-06T10:00:00.000Z',
    updated_at: '2026-01-06T10:00:00.000Z',
  },
];

/** Answers the vault calls as the server would, from a list the test can read. */
function serveVault(keys: VaultKey[] = [...STORED]) {
  const state = { keys };
  bridge.on('api.listVaultKeys', () => ({ keys: state.keys }));
  bridge.on('api.storeVaultKey', ({ body }) => {
    const now = new Date().toISOString();
    const old = state.keys.find((k) => k.provider === body.provider);
    const row = {
      provider: body.provider,
      key_hint: `…${body.api_key.slice(-4)}`,
      created_at: old?.created_at ?? now,
      updated_at: now,
    };
    state.keys = [...state.keys.filter((k) => k.provider !== body.provider), row];
    return row;
  });
  bridge.on('api.removeVaultKey', ({ params }) => {
    if (!state.keys.some((k) => k.provider === params.provider))
      throw new Refusal(404, 'no key is stored for this provider');
    state.keys = state.keys.filter((k) => k.provider !== params.provider);
    return { message: 'provider key removed' };
  });
  return state;
}

const rowOf = (provider: string) =>
  screen.queryAllByTestId('vault-row').find((row) => row.getAttribute('data-provider') === provider) ?? null;
const hintOf = (provider: string) => within(rowOf(provider)!).getByTestId('cell-hint').textContent;
const dialog = () => screen.getByTestId('vault-key-dialog');
function fieldError(label: string): string | null {
  const field = within(dialog()).getByLabelText(label).closest('.field') as HTMLElement;
  return within(field).queryByTestId('field-error')?.textContent ?? null;
}

beforeEach(() => {
  useSession.setState({ phase: 'console', profileId: 'p1' });
  resetOrganisationStores();
});

describe('the vault', () => {
  it('lists providers by name with their hints and dates', async () => {
    serveVault();
    render(<VaultScreen />);
    await screen.findAllByTestId('vault-row');
    expect(screen.getAllByTestId('vault-row').map((r) => r.getAttribute('data-provider'))).toEqual([
      'anthropic',
      'openai',
    ]);
    expect(hintOf('openai')).toBe('…9e19');
    expect(within(rowOf('openai')!).getByTestId('cell-updated').querySelector('time')?.getAttribute('dateTime')).toBe(
      '2026-02-01T08:00:00.000Z',
    );
  });

  it('adds a key from a password field, and never shows the value back', async () => {
    const secret = 'mk-live-0123456789abcdef-4821';
    serveVault();
    render(<VaultScreen />);
    await screen.findAllByTestId('vault-row');
    await userEvent.click(screen.getByTestId('add-vault-key'));
    expect(within(dialog()).queryByTestId('replace-warning')).toBeNull();
    const keyInput = within(dialog()).getByLabelText('API key') as HTMLInputElement;
    expect(keyInput.type).toBe('password');
    await userEvent.type(within(dialog()).getByLabelText('Provider'), 'mistral');
    await userEvent.type(keyInput, secret);
    await userEvent.click(within(dialog()).getByTestId('submit-vault-key'));

    await waitFor(() => expect(rowOf('mistral')).not.toBeNull());
    expect(bridge.callsOf('api.storeVaultKey')[0]!.body).toEqual({ provider: 'mistral', api_key: secret });
    expect(hintOf('mistral')).toBe('…4821');
    expect(screen.queryByTestId('vault-key-dialog')).toBeNull();
    expect(screen.getByTestId('vault-notice').textContent).toBe('Stored the mistral key; it now ends …4821.');
    // Opened again, the field is empty; the value is nowhere on the page or in the store.
    await userEvent.click(screen.getByTestId('add-vault-key'));
    expect((within(dialog()).getByLabelText('API key') as HTMLInputElement).value).toBe('');
    expect(document.body.innerHTML).not.toContain(secret);
    expect(JSON.stringify(useVaultStore.getState())).not.toContain(secret);
  });

  it('rotates a provider’s key, saying it replaces the current one', async () => {
    serveVault();
    render(<VaultScreen />);
    await screen.findAllByTestId('vault-row');
    await userEvent.click(within(rowOf('openai')!).getByRole('button', { name: 'Rotate the openai key' }));
    expect(within(dialog()).getByTestId('replace-warning').textContent).toContain(
      'replaces the current openai key (…9e19)',
    );
    await userEvent.type(within(dialog()).getByLabelText('API key'), 'sk-new-key-0007');
    await userEvent.click(within(dialog()).getByRole('button', { name: 'Replace key' }));
    await waitFor(() => expect(hintOf('openai')).toBe('…0007'));
    expect(bridge.callsOf('api.storeVaultKey')[0]!.body).toEqual({ provider: 'openai', api_key: 'sk-new-key-0007' });
    expect(screen.getByTestId('vault-notice').textContent).toContain('Replaced the openai key');
  });

  it('warns when a provider typed in “add” already has a key', async () => {
    serveVault();
    render(<VaultScreen />);
    await screen.findAllByTestId('vault-row');
    await userEvent.click(screen.getByTestId('add-vault-key'));
    await userEvent.type(within(dialog()).getByLabelText('Provider'), 'anthropic');
    expect(within(dialog()).getByTestId('replace-warning').textContent).toContain('(…6c1a)');
  });

  it.each([
    ['OpenAI', 'use lower-case letters only'],
    ['-openai', 'a provider name starts with a lower-case letter or a digit'],
    ['open ai', 'use only lower-case letters, digits, “-” and “_”'],
    ['', 'enter the provider’s name, such as openai'],
  ])('refuses the provider name “%s” at the field, sending nothing', async (name, message) => {
    serveVault();
    render(<VaultScreen />);
    await screen.findAllByTestId('vault-row');
    await userEvent.click(screen.getByTestId('add-vault-key'));
    if (name) await userEvent.type(within(dialog()).getByLabelText('Provider'), name);
    await userEvent.type(within(dialog()).getByLabelText('API key'), 'k-123456');
    await userEvent.click(within(dialog()).getByTestId('submit-vault-key'));
    expect(fieldError('Provider')).toBe(message);
    expect(bridge.callsOf('api.storeVaultKey')).toHaveLength(0);
  });

  it('shows the server’s refusal at the field it names, else at the form, keeping what was typed', async () => {
    serveVault();
    let answer = new Refusal(422, 'provider: must match pattern "^[a-z0-9][a-z0-9_-]{0,63}$"', 'provider');
    bridge.on('api.storeVaultKey', () => {
      throw answer;
    });
    render(<VaultScreen />);
    await screen.findAllByTestId('vault-row');
    await userEvent.click(screen.getByTestId('add-vault-key'));
    await userEvent.type(within(dialog()).getByLabelText('Provider'), 'groq');
    await userEvent.type(within(dialog()).getByLabelText('API key'), 'gsk-1');
    await userEvent.click(within(dialog()).getByTestId('submit-vault-key'));
    await waitFor(() => expect(fieldError('Provider')).toBe(answer.message));

    answer = new Refusal(0, 'the console host did not answer: is it still running?');
    await userEvent.click(within(dialog()).getByTestId('submit-vault-key'));
    expect((await within(dialog()).findByTestId('form-error')).textContent).toBe(answer.message);
    expect((within(dialog()).getByLabelText('API key') as HTMLInputElement).value).toBe('gsk-1');
  });

  it('removes a key after a confirmation that names the provider', async () => {
    const state = serveVault();
    render(<VaultScreen />);
    await screen.findAllByTestId('vault-row');
    await userEvent.click(within(rowOf('anthropic')!).getByRole('button', { name: 'Remove the anthropic key' }));
    const confirm = screen.getByTestId('confirm-dialog');
    expect(within(confirm).getByTestId('remove-provider').textContent).toBe('anthropic');
    expect(confirm.textContent).toContain('…6c1a');
    await userEvent.click(within(confirm).getByTestId('confirm'));
    await waitFor(() => expect(rowOf('anthropic')).toBeNull());
    expect(bridge.callsOf('api.removeVaultKey')[0]!.params).toEqual({ provider: 'anthropic' });
    expect(state.keys.map((k) => k.provider)).toEqual(['openai']);
  });

  it('shows a refused removal in the confirmation, and the list read afresh', async () => {
    const state = serveVault();
    render(<VaultScreen />);
    await screen.findAllByTestId('vault-row');
    await userEvent.click(within(rowOf('anthropic')!).getByTestId('remove-vault-key'));
    state.keys = state.keys.filter((k) => k.provider !== 'anthropic'); // removed elsewhere meanwhile
    await userEvent.click(screen.getByTestId('confirm'));
    expect((await within(screen.getByTestId('confirm-dialog')).findByRole('alert')).textContent).toBe(
      'no key is stored for this provider (404)',
    );
    await waitFor(() => expect(rowOf('anthropic')).toBeNull());
  });

  it('suggests the catalogue’s providers that have no key yet, never the service’s own routes', async () => {
    serveVault();
    useDirectory.setState({
      models: [
        { id: 'openai/gpt-4o-mini', provider: 'openai', active: true },
        { id: 'groq/llama-3.3-70b', provider: 'groq', active: true },
        { id: 'svc/fast', provider: 'svc', active: true },
      ],
    });
    render(<VaultScreen />);
    await screen.findAllByTestId('vault-row');
    await userEvent.click(screen.getByTestId('add-vault-key'));
    const options = [...document.querySelectorAll('#vault-provider-suggestions option')];
    expect(options.map((o) => o.getAttribute('value'))).toEqual(['groq']);
  });

  it('drops a list read for the organisation shown before', async () => {
    let answer: () => void = () => {};
    bridge.on('api.listVaultKeys', () => new Promise((resolve) => (answer = () => resolve({ keys: STORED }))));
    render(<VaultScreen />);
    await waitFor(() => expect(bridge.callsOf('api.listVaultKeys')).toHaveLength(1));
    // Another profile is chosen while the answer is on its way.
    useSession.setState({ profileId: 'p2' });
    answer();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(useVaultStore.getState().keys).toBeNull();
    expect(screen.queryByTestId('vault-row')).toBeNull();
  });

  it('keeps a stored key out of the list of the organisation shown since', async () => {
    serveVault();
    render(<VaultScreen />);
    await screen.findAllByTestId('vault-row');
    let answer: () => void = () => {};
    bridge.on('api.storeVaultKey', ({ body }) => {
      const row = {
        provider: body.provider,
        key_hint: '…0001',
        created_at: STORED[0]!.created_at,
        updated_at: STORED[0]!.updated_at,
      };
      return new Promise((resolve) => (answer = () => resolve(row)));
    });
    await userEvent.click(screen.getByTestId('add-vault-key'));
    await userEvent.type(within(dialog()).getByLabelText('Provider'), 'mistral');
    await userEvent.type(within(dialog()).getByLabelText('API key'), 'mk-0001');
    await userEvent.click(within(dialog()).getByTestId('submit-vault-key'));
    await waitFor(() => expect(bridge.callsOf('api.storeVaultKey')).toHaveLength(1));
    useSession.setState({ profileId: 'p2' });
    useVaultStore.setState({ keys: [] });
    answer();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(useVaultStore.getState().keys).toEqual([]);
  });

  it('says so when the list cannot be read', async () => {
    bridge.on('api.listVaultKeys', () => {
      throw new Refusal(0, 'the console host did not answer: is it still running?');
    });
    render(<VaultScreen />);
    expect((await screen.findByTestId('vault-error')).textContent).toContain('could not be read');
  });
});
