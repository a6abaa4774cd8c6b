import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import type { CallArgs, CallResult } from '#contract';
import { KeysScreen } from '../../../renderer/src/screens/keys/KeysScreen.js';
import { useKeysStore } from '../../../renderer/src/screens/keys/keys-store.js';
import { useDirectory, type Key } from '../../../renderer/src/state/directory.js';
import { resetOrganisationStores } from '../../../renderer/src/state/organisation-scope.js';
import { useRoute } from '../../../renderer/src/state/route.js';
import { useSession } from '../../../renderer/src/state/session.js';
import { Refusal, bridge } from '../fake-bridge.js';
import { KEYS, PROJECTS, serveOrganisation, signedIn } from './fixtures.js';

const SECRET = 'sk_svc_Zq9X1vB7nM3kL5pR8tY2wE4uI6oA0sD1';

function created(body: CallArgs<'api.createKey'>['body']): CallResult<'api.createKey'> {
  return {
    id: '00000000-0000-4000-8000-0000000000d1',
    name: body.name,
    project_id: body.project_id,
    key_prefix: SECRET.slice(0, 15),
    rate_limit_rpm: body.use_platform_max_rate_limit ? 10_000 : 60,
    expires_at: body.expires_at ? new Date(body.expires_at).toISOString() : null,
    credit_limit_cents: body.credit_limit_cents ?? null,
    allowed_models: body.allowed_models ?? null,
    environment: body.environment ?? 'production',
    enforcement_status: { expires_at: 'enforced', credit_limit_cents: 'enforced', allowed_models: 'enforced' },
    api_key: SECRET,
  };
}

/** The error shown inside the open dialog's field labelled `label`, or null. */
function fieldError(label: string): string | null {
  const dialog = document.querySelector('dialog[open]') as HTMLElement;
  const field = within(dialog).getByLabelText(label).closest('.field') as HTMLElement;
  return within(field).queryByTestId('field-error')?.textContent ?? null;
}

async function openCreate(state: Parameters<typeof serveOrganisation>[0] = { keys: KEYS }) {
  serveOrganisation(state);
  render(<KeysScreen />);
  await screen.findAllByTestId('key-row');
  await userEvent.click(screen.getByTestId('create-key'));
  return screen.getByTestId('create-key-dialog');
}

beforeEach(() => signedIn());

describe('creating a key', () => {
  it('sends the credit limit typed in PKR as micro-PKR, and the expiry with the user’s offset', async () => {
    const state = { keys: [...KEYS] };
    bridge.on('api.createKey', ({ body }) => {
      const key = created(body);
      state.keys = [{ ...key, created_at: '2026-04-01T00:00:00.000Z', last_used_at: null } as Key, ...state.keys];
      return key;
    });
    const dialog = await openCreate(state);
    serveOrganisation(state);
    await userEvent.selectOptions(within(dialog).getByLabelText('Project'), 'Search');
    await userEvent.type(within(dialog).getByLabelText('Name'), '  Nightly batch ');
    await userEvent.selectOptions(within(dialog).getByLabelText('Environment'), 'testing');
    fireEvent.change(within(dialog).getByLabelText('Expires'), { target: { value: '2030-01-31T18:00' } });
    await userEvent.type(within(dialog).getByLabelText('Credit limit (PKR)'), '1,250.5');
    await userEvent.click(within(dialog).getByLabelText(/platform maximum rate limit/));
    await userEvent.click(within(dialog).getByTestId('submit-create'));

    await screen.findByTestId('secret-dialog');
    expect(bridge.callsOf('api.createKey')[0]!.body).toEqual({
      project_id: PROJECTS[1]!.id,
      name: 'Nightly batch',
      environment: 'testing',
      expires_at: '2030-01-31T18:00:00+05:00',
      credit_limit_cents: 1_250_500_000,
      use_platform_max_rate_limit: true,
    });
    // The new key joins the table.
    await waitFor(() => expect(screen.getAllByTestId('key-row')).toHaveLength(4));
  });

  it('shows the secret once, with a copy button and a warning, and forgets it on closing', async () => {
    bridge.on('api.createKey', ({ body }) => created(body));
    const dialog = await openCreate();
    await userEvent.type(within(dialog).getByLabelText('Name'), 'Once');
    await userEvent.click(within(dialog).getByTestId('submit-create'));

    const secretDialog = await screen.findByTestId('secret-dialog');
    expect(screen.queryByTestId('create-key-dialog')).toBeNull();
    expect(within(secretDialog).getByTestId('secret').textContent).toBe(SECRET);
    expect(within(secretDialog).getByTestId('secret-warning').textContent).toMatch(/only time it is shown/);
    // user-event's setup stands a clipboard in for the browser's.
    const user = userEvent.setup();
    await user.click(within(secretDialog).getByTestId('copy-secret'));
    expect(await navigator.clipboard.readText()).toBe(SECRET);
    expect(within(secretDialog).getByTestId('copy-secret').textContent).toBe('Copied');

    // A stray Escape (the browser's cancel) does not close it: only its own button does.
    expect(fireEvent.keyDown(secretDialog, { key: 'Escape' })).toBe(false);
    fireEvent(secretDialog, new Event('cancel', { cancelable: true }));
    expect(screen.getByTestId('secret-dialog')).toBe(secretDialog);
    expect((secretDialog as HTMLDialogElement).open).toBe(true);

    await userEvent.click(within(secretDialog).getByTestId('close-secret'));
    expect(screen.queryByTestId('secret-dialog')).toBeNull();
    expect(document.body.innerHTML).not.toContain(SECRET);
    // Nor is it kept in any store the console has.
    for (const state of [useDirectory.getState(), useKeysStore.getState(), useRoute.getState()]) {
      expect(JSON.stringify(state)).not.toContain(SECRET);
    }
  });

  it("says where the key can be called at once when the console is on its embedded server's gateway", async () => {
    bridge.on('api.createKey', ({ body }) => created(body));
    const gatewayUrl = 'http://127.0.0.1:41789/v1';
    const embedded = { state: 'running' as const, baseUrl: 'http://localhost/api', lastLog: [], demoAccount: null };
    useSession.setState({
      profiles: [{ id: 'p1', name: 'Embedded demo', kind: 'embedded', baseUrl: null, signedIn: true }],
      embedded: { ...embedded, gatewayUrl },
    });
    const dialog = await openCreate();
    await userEvent.type(within(dialog).getByLabelText('Name'), 'Called at once');
    await userEvent.click(within(dialog).getByTestId('submit-create'));
    const secretDialog = await screen.findByTestId('secret-dialog');
    expect(within(secretDialog).getByTestId('gateway-url').textContent).toBe(gatewayUrl);
    await userEvent.click(within(secretDialog).getByTestId('close-secret'));

    // A remote control plane's gateway is elsewhere: the console does not guess it.
    cleanup();
    useSession.setState({
      profiles: [
        { id: 'p1', name: 'Production', kind: 'remote', baseUrl: 'https://cp.example.com/api', signedIn: true },
      ],
    });
    const remote = await openCreate();
    await userEvent.type(within(remote).getByLabelText('Name'), 'Remote');
    await userEvent.click(within(remote).getByTestId('submit-create'));
    expect(within(await screen.findByTestId('secret-dialog')).queryByTestId('gateway-hint')).toBeNull();
  });

  it('offers the active models of the catalogue, and sends the chosen ones', async () => {
    bridge.on('api.createKey', ({ body }) => created(body));
    const dialog = await openCreate();
    const chooser = within(dialog).getByTestId('model-chooser');
    expect(within(chooser).getByTestId('models-summary').textContent).toMatch(/^Any model/);
    expect(within(chooser).queryByText('openai/gpt-3.5-turbo')).toBeNull();
    await userEvent.click(within(chooser).getByLabelText('openai/gpt-4o-mini'));
    await userEvent.click(within(chooser).getByLabelText('anthropic/claude-sonnet-4'));
    expect(within(chooser).getByTestId('models-summary').textContent).toContain('these 2 models');
    await userEvent.type(within(dialog).getByLabelText('Name'), 'Scoped');
    await userEvent.click(within(dialog).getByTestId('submit-create'));
    await screen.findByTestId('secret-dialog');
    expect(bridge.callsOf('api.createKey')[0]!.body.allowed_models).toEqual([
      'openai/gpt-4o-mini',
      'anthropic/claude-sonnet-4',
    ]);
  });

  it('hides the model chooser when the server has no catalogue, or an empty one', async () => {
    let dialog = await openCreate({ keys: KEYS, models: new Refusal(404, 'not found') });
    expect(within(dialog).queryByTestId('model-chooser')).toBeNull();
    within(dialog).getByLabelText('Name');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }));

    cleanup();
    resetOrganisationStores();
    dialog = await openCreate({ keys: KEYS, models: [] });
    expect(within(dialog).queryByTestId('model-chooser')).toBeNull();
    await userEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }));

    cleanup();
    resetOrganisationStores();
    dialog = await openCreate({ keys: KEYS, models: new Refusal(501, 'the control plane has no model catalogue') });
    expect(within(dialog).queryByTestId('model-chooser')).toBeNull();
    expect(within(dialog).queryByTestId('catalogue-error')).toBeNull();
  });

  it('says so when the catalogue failed, rather than looking as if there is none, and reads it again', async () => {
    const state: Parameters<typeof serveOrganisation>[0] = {
      keys: KEYS,
      models: new Refusal(500, 'database is locked'),
    };
    const dialog = await openCreate(state);
    const note = within(dialog).getByTestId('catalogue-error');
    expect(note.textContent).toContain('The model catalogue could not be read');
    expect(note.textContent).toContain('database is locked (500)');
    expect(within(dialog).queryByTestId('model-chooser')).toBeNull();

    state.models = undefined;
    await userEvent.click(within(note).getByRole('button', { name: 'Try again' }));
    await within(dialog).findByTestId('model-chooser');
    expect(within(dialog).queryByTestId('catalogue-error')).toBeNull();
  });

  it('closes on Escape, as a form with nothing to lose may', async () => {
    const dialog = await openCreate();
    fireEvent(dialog, new Event('cancel', { cancelable: true }));
    expect(screen.queryByTestId('create-key-dialog')).toBeNull();
  });

  it('sends one key for a double click on "Create key"', async () => {
    let answer: () => void = () => {};
    bridge.on('api.createKey', ({ body }) => new Promise((resolve) => (answer = () => resolve(created(body)))));
    const dialog = await openCreate();
    await userEvent.type(within(dialog).getByLabelText('Name'), 'Twice');
    const submit = within(dialog).getByTestId('submit-create');
    fireEvent.click(submit);
    fireEvent.click(submit);
    await waitFor(() => expect(submit.textContent).toBe('Creating…'));
    answer();
    await screen.findByTestId('secret-dialog');
    expect(bridge.callsOf('api.createKey')).toHaveLength(1);
  });

  it('shows a credit limit it cannot read at the field, and sends nothing', async () => {
    const dialog = await openCreate();
    await userEvent.type(within(dialog).getByLabelText('Name'), 'Bad credit');
    await userEvent.type(within(dialog).getByLabelText('Credit limit (PKR)'), '12.5.3');
    await userEvent.click(within(dialog).getByTestId('submit-create'));
    expect(fieldError('Credit limit (PKR)')).toMatch(/positive amount in PKR/);
    await userEvent.clear(within(dialog).getByLabelText('Credit limit (PKR)'));
    await userEvent.type(within(dialog).getByLabelText('Credit limit (PKR)'), '0');
    await userEvent.click(within(dialog).getByTestId('submit-create'));
    expect(fieldError('Credit limit (PKR)')).toMatch(/above 0 PKR/);
    expect(fieldError('Name')).toBeNull();
    expect(bridge.callsOf('api.createKey')).toHaveLength(0);
  });

  it.each([
    [422, 'name: name must be 1 to 200 characters', 'name', 'Name'],
    [400, 'expires_at must be in the future', 'expires_at', 'Expires'],
    [422, 'expires_at: expires_at must be an ISO 8601 date-time', 'expires_at', 'Expires'],
    [404, 'project not found', 'project_id', 'Project'],
    [
      422,
      'invalid arguments for api.createKey: /body/credit_limit_cents Expected integer',
      'credit_limit_cents',
      'Credit limit (PKR)',
    ],
    // Worded so that no word points anywhere: the field alone places it.
    [400, 'that will not do', 'credit_limit_cents', 'Credit limit (PKR)'],
  ])('shows a %i “%s” (field %s) at the field it names', async (status, message, field, label) => {
    bridge.on('api.createKey', () => {
      throw new Refusal(status, message, field);
    });
    const dialog = await openCreate();
    await userEvent.type(within(dialog).getByLabelText('Name'), 'Refused');
    await userEvent.click(within(dialog).getByTestId('submit-create'));
    await waitFor(() => expect(fieldError(label)).toBe(message));
    expect(within(dialog).queryByTestId('form-error')).toBeNull();
    expect(screen.queryByTestId('secret-dialog')).toBeNull();
  });

  it('shows a model refusal at the model chooser, and other failures at the form', async () => {
    let answer = new Refusal(400, 'unknown or inactive model in allowed_models: openai/gpt-4o-mini', 'allowed_models');
    bridge.on('api.createKey', () => {
      throw answer;
    });
    const dialog = await openCreate();
    await userEvent.type(within(dialog).getByLabelText('Name'), 'Refused');
    await userEvent.click(within(dialog).getByTestId('submit-create'));
    expect((await within(dialog).findByTestId('field-error')).closest('fieldset')).not.toBeNull();

    answer = new Refusal(500, 'the console host failed; see its log');
    await userEvent.click(within(dialog).getByTestId('submit-create'));
    expect((await within(dialog).findByTestId('form-error')).textContent).toBe(
      'the console host failed; see its log (500)',
    );
  });
});
