// Local times are read in the user's zone: pin one so that an expiry's epoch seconds are known.
process.env.TZ = 'Asia/Karachi';

import { act, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import type { CallResult } from '#contract';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BulkKeysDialog } from '../../../renderer/src/screens/keys/BulkKeysDialog.js';
import { KeysScreen } from '../../../renderer/src/screens/keys/KeysScreen.js';
import { MoveCallersDialog } from '../../../renderer/src/screens/keys/RotateKeyDialog.js';
import { EMPTY_FORM, readBulkLimits } from '../../../renderer/src/screens/keys/bulk-limits.js';
import { useRoute } from '../../../renderer/src/state/route.js';
import { Refusal, bridge } from '../fake-bridge.js';
import { KEYS, PROJECTS, serveOrganisation, signedIn } from './fixtures.js';

type Impact = CallResult<'api.keyImpact'>;
type BulkResult = CallResult<'api.bulkKeys'>;
type Outcome = BulkResult['results'][number];

const impactOf = (key: (typeof KEYS)[number], figures: Partial<Impact> = {}): Impact => ({
  id: key.id,
  key_prefix: key.key_prefix,
  as_of: '2026-03-02T00:00:00.000Z',
  requests_last_5m: 0,
  requests_last_24h: 0,
  requests_last_7d: 0,
  last_used_at: null,
  callers: null,
  ...figures,
});

const outcome = (key: (typeof KEYS)[number], fields: Partial<Outcome>): Outcome => ({
  id: key.id,
  name: key.name,
  key_prefix: key.key_prefix,
  outcome: 'ok',
  message: null,
  before: { rate_limit_rpm: key.rate_limit_rpm, credit_limit_cents: key.credit_limit_cents, expires_at: null },
  after: null,
  ...fields,
});

const rowNamed = (name: string) => screen.getAllByTestId('key-row').find((row) => row.textContent?.includes(name))!;

async function openRevoke(name: string) {
  const state = { keys: [...KEYS] };
  serveOrganisation(state);
  render(<KeysScreen />);
  await waitFor(() => expect(rowNamed(name).textContent).toContain('PKR'));
  await userEvent.click(within(rowNamed(name)).getByTestId('revoke-key'));
  return state;
}

beforeEach(() => signedIn());

describe('the revoke dialog’s impact preview', () => {
  it('shows unknown figures as “–”, never 0, and still revokes', async () => {
    const key = KEYS[0]!;
    bridge.on('api.keyImpact', () => ({
      id: key.id,
      key_prefix: key.key_prefix,
      as_of: '2026-03-02T00:00:00.000Z',
      requests_last_5m: null,
      requests_last_24h: null,
      requests_last_7d: null,
      last_used_at: null,
      callers: null,
    }));
    const state = await openRevoke(key.name);
    const dialog = screen.getByTestId('confirm-dialog');
    await waitFor(() => expect(within(dialog).getByTestId('impact-24h').textContent).toBe('–'));
    expect(within(dialog).getByTestId('impact-7d').textContent).toBe('–');
    expect(within(dialog).getByTestId('impact-last-used').textContent).toBe('–');
    expect(within(dialog).getByTestId('revoke-consequence').textContent).toContain(
      'The gateway refuses this key from its very next request.',
    );
    bridge.on('api.revokeKey', ({ params }) => {
      state.keys = state.keys.filter((k) => k.id !== params.key_id);
      return { message: 'key revoked' };
    });
    await userEvent.click(within(dialog).getByTestId('confirm'));
    await waitFor(() => expect(screen.queryByTestId('confirm-dialog')).toBeNull());
    expect(bridge.callsOf('api.revokeKey')[0]?.params).toEqual({ key_id: key.id });
  });

  it('says a control plane without the endpoint cannot tell, and revokes all the same', async () => {
    bridge.on('api.keyImpact', () => {
      throw new Refusal(404, 'Route GET:/api/keys/x/impact not found');
    });
    bridge.on('api.revokeKey', () => ({ message: 'key revoked' }));
    await openRevoke(KEYS[1]!.name);
    const dialog = screen.getByTestId('confirm-dialog');
    await waitFor(() =>
      expect(within(dialog).getByTestId('impact-unavailable').textContent).toBe(
        'This control plane does not say what uses a key.',
      ),
    );
    await userEvent.click(within(dialog).getByTestId('confirm'));
    await waitFor(() => expect(bridge.callsOf('api.revokeKey')).toHaveLength(1));
  });
});

describe('rotation', () => {
  it('shows the replacement’s secret even when its dialog was closed while the replacement was being made', async () => {
    const key = KEYS[0]!;
    let answer: (rotated: CallResult<'api.rotateKey'>) => void = () => {};
    bridge.on('api.rotateKey', () => new Promise((resolve) => (answer = resolve)));
    bridge.on('api.keyImpact', () => impactOf(key));
    serveOrganisation({ keys: [...KEYS] });
    render(<KeysScreen />);
    await waitFor(() => expect(rowNamed(key.name).textContent).toContain('PKR'));
    await userEvent.click(within(rowNamed(key.name)).getByTestId('rotate-key'));
    const dialog = screen.getByTestId('rotate-key-dialog');
    // The credit limit carried over is what the key has left, said with the figures.
    expect(within(dialog).getByTestId('rotate-credit').textContent).toContain(
      'what this key has left of its 1,500.00 PKR, 1,487.66 PKR (12.34 PKR spent)',
    );
    await userEvent.click(within(dialog).getByTestId('confirm-rotate'));
    await userEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByTestId('rotate-key-dialog')).toBeNull();

    const secret = 'sk_svc_' + 'R'.repeat(32);
    const { api_key: _old, ...rest } = { ...key, api_key: '' };
    answer({
      ...rest,
      id: '00000000-0000-4000-8000-0000000000d1',
      key_prefix: secret.slice(0, 15),
      credit_limit_cents: 1_487_660_000,
      enforcement_status: { expires_at: 'enforced', credit_limit_cents: 'enforced', allowed_models: 'enforced' },
      api_key: secret,
      replaces: { id: key.id, key_prefix: key.key_prefix },
    } as CallResult<'api.rotateKey'>);
    expect((await screen.findByTestId('secret')).textContent).toBe(secret);

    // Closed, the secret is gone from the console: the wait for callers names only the prefix.
    await userEvent.click(screen.getByTestId('close-secret'));
    const waiting = await screen.findByTestId('move-callers-dialog');
    expect(within(waiting).getByRole('heading').textContent).toBe(`Waiting for callers of “${key.name}” to move`);
    expect(document.body.textContent).not.toContain(secret);
    expect(waiting.textContent).toContain(`${secret.slice(0, 15)}…`);
  });
});

describe('waiting for callers to move', () => {
  const oldKey = KEYS[0]!;
  const replacement = { id: '00000000-0000-4000-8000-0000000000d1', name: oldKey.name, key_prefix: 'sk_svc_newnew12' };
  const flush = (ms = 0) => act(() => vi.advanceTimersByTimeAsync(ms));
  const traffic = () => screen.getByTestId('old-key-traffic').textContent;

  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function open(onChanged = () => {}, onClose = () => {}) {
    return render(
      <MoveCallersDialog oldKey={oldKey} replacement={replacement} onClose={onClose} onChanged={onChanged} />,
    );
  }

  it('says a failed read beside the figures read before, asks twice before revoking then, and stops on the key already revoked', async () => {
    const answers: (() => Impact)[] = [
      () => impactOf(oldKey, { requests_last_5m: 0 }),
      () => {
        throw new Refusal(500, 'telemetry store unavailable');
      },
      () => {
        throw new Refusal(404, 'key not found', 'key_id');
      },
    ];
    bridge.on('api.keyImpact', () => answers[Math.min(bridge.callsOf('api.keyImpact').length - 1, 2)]!());
    bridge.on('api.revokeKey', () => ({ message: 'key revoked' }));
    open();
    await flush();
    expect(traffic()).toBe('No requests on the old key in the last 5 minutes.');
    expect(screen.getByTestId('impact-as-of').textContent).toMatch(/^As of /);

    await flush(5_000);
    expect(bridge.callsOf('api.keyImpact')).toHaveLength(2);
    // The zero read before is not passed off as now.
    expect(traffic()).toMatch(/^Reading again failed \(telemetry store unavailable \(500\)\)\. At .+, 0 requests/);
    expect(screen.getByTestId('impact-stale').textContent).toContain('The figures below are from');
    fireEvent.click(screen.getByTestId('revoke-old'));
    expect(bridge.callsOf('api.revokeKey')).toHaveLength(0);
    expect(screen.getByTestId('revoke-old-again').textContent).toContain('recent traffic is not known');

    // Revoked elsewhere meanwhile: said, and no more reads.
    await flush(5_000);
    expect(screen.getByTestId('impact-gone').textContent).toContain('This key is already revoked');
    expect(screen.queryByTestId('revoke-old')).toBeNull();
    await flush(60_000);
    expect(bridge.callsOf('api.keyImpact')).toHaveLength(3);
  });

  it('revokes at once after a fresh read of no traffic, and asks again while traffic still arrives', async () => {
    let recent = 4;
    bridge.on('api.keyImpact', () => impactOf(oldKey, { requests_last_5m: recent }));
    bridge.on('api.revokeKey', () => ({ message: 'key revoked' }));
    const onChanged = vi.fn();
    open(onChanged);
    await flush();
    expect(traffic()).toBe('Traffic still arrives on the old key: 4 requests in the last 5 minutes.');
    fireEvent.click(screen.getByTestId('revoke-old'));
    expect(screen.getByTestId('revoke-old-again').textContent).toContain(
      '4 requests arrived on the old key in the last 5 minutes',
    );
    expect(bridge.callsOf('api.revokeKey')).toHaveLength(0);

    recent = 0;
    await flush(5_000);
    expect(traffic()).toBe('No requests on the old key in the last 5 minutes.');
    fireEvent.click(screen.getByTestId('revoke-old'));
    await flush();
    expect(bridge.callsOf('api.revokeKey').map((call) => call.params)).toEqual([{ key_id: oldKey.id }]);
    expect(onChanged).toHaveBeenCalledOnce();
  });

  it('reads nothing more once closed', async () => {
    bridge.on('api.keyImpact', () => impactOf(oldKey));
    const view = open();
    await flush(5_000);
    expect(bridge.callsOf('api.keyImpact')).toHaveLength(2);
    view.unmount();
    await flush(60_000);
    expect(bridge.callsOf('api.keyImpact')).toHaveLength(2);
  });
});

describe('the bulk dialog', () => {
  const [a, b] = [KEYS[0]!, KEYS[1]!];

  function openLimits(preview: BulkResult) {
    bridge.on('api.bulkKeys', ({ body }) =>
      body.dry_run ? preview : { dry_run: false, results: body.key_ids.map((id) => outcome(id === a.id ? a : b, {})) },
    );
    const onApplied = vi.fn();
    render(<BulkKeysDialog keys={[a, b]} action="update_limits" onClose={() => {}} onApplied={onApplied} />);
    return onApplied;
  }

  async function fillRate() {
    const dialog = screen.getByTestId('bulk-keys-dialog');
    await userEvent.selectOptions(within(within(dialog).getByTestId('bulk-mode-rate')).getByRole('combobox'), 'set');
    await userEvent.type(within(dialog).getByLabelText('Rate limit (requests per minute)'), '120');
  }

  it('cannot apply on the second click of a double click on Preview, nor on a second Enter', async () => {
    openLimits({ dry_run: true, results: [outcome(a, {}), outcome(b, {})] });
    await fillRate();
    const preview = screen.getByTestId('bulk-preview');
    await userEvent.click(preview);
    const summary = await screen.findByTestId('bulk-preview-summary');
    // The preview takes the focus, so a second Enter meant for "Preview" presses nothing.
    expect(document.activeElement).toBe(summary);
    await userEvent.keyboard('{Enter}');
    // The second click of the double click lands where the first did: on the old button, gone from
    // the page, or (the browser hit-testing by position) on the Apply button in its place, as click 2.
    fireEvent.click(preview);
    fireEvent.click(screen.getByTestId('bulk-apply'), { detail: 2 });
    expect(bridge.callsOf('api.bulkKeys').map((call) => call.body.dry_run)).toEqual([true]);
    expect(screen.getByTestId('bulk-apply').textContent).toBe('Apply to 2 keys');
    // A click of its own applies.
    fireEvent.click(screen.getByTestId('bulk-apply'), { detail: 1 });
    await screen.findByTestId('bulk-report-summary');
    expect(bridge.callsOf('api.bulkKeys').map((call) => call.body.dry_run)).toEqual([true, false]);
  });

  it('applies to the keys the preview said would change, and only those', async () => {
    const onApplied = openLimits({
      dry_run: true,
      results: [outcome(a, {}), outcome(b, { outcome: 'refused', message: 'credit limits would total…' })],
    });
    await fillRate();
    await userEvent.click(screen.getByTestId('bulk-preview'));
    await userEvent.click(await screen.findByTestId('bulk-apply'));
    await screen.findByTestId('bulk-report-summary');
    const [dry, applied] = bridge.callsOf('api.bulkKeys');
    expect(dry!.body.key_ids).toEqual([a.id, b.id]);
    expect(applied!.body).toEqual({
      action: 'update_limits',
      key_ids: [a.id],
      dry_run: false,
      limits: { rate_limit_rpm: 120 },
    });
    expect(onApplied).toHaveBeenCalledOnce();
  });

  it('cannot be closed while applying: the per-key report is not lost', async () => {
    let finish: (result: BulkResult) => void = () => {};
    bridge.on('api.bulkKeys', ({ body }) =>
      body.dry_run
        ? { dry_run: true, results: [outcome(a, {})] }
        : new Promise<BulkResult>((resolve) => (finish = resolve)),
    );
    const onClose = vi.fn();
    render(<BulkKeysDialog keys={[a]} action="revoke" onClose={onClose} onApplied={() => {}} />);
    await userEvent.click(await screen.findByTestId('bulk-apply'));
    expect(screen.getByRole('button', { name: 'Cancel' })).toHaveProperty('disabled', true);
    fireEvent(screen.getByTestId('bulk-keys-dialog'), new Event('cancel', { cancelable: true }));
    expect(onClose).not.toHaveBeenCalled();
    finish({ dry_run: false, results: [outcome(a, {})] });
    expect((await screen.findByTestId('bulk-report-summary')).textContent).toBe('1 revoked, 0 refused or not found.');
  });
});

describe('keys selected and the extensions offered', () => {
  it('says how many selected keys the filters hide', async () => {
    serveOrganisation({ keys: [...KEYS] });
    render(<KeysScreen />);
    await waitFor(() => expect(screen.getAllByTestId('key-row')).toHaveLength(3));
    await userEvent.click(screen.getByTestId('select-all-keys'));
    expect(screen.getByTestId('selected-count').textContent).toBe('3 selected');
    act(() => useRoute.getState().setParams({ project: PROJECTS[0]!.id }));
    await waitFor(() => expect(screen.getAllByTestId('key-row')).toHaveLength(2));
    expect(screen.getByTestId('selected-count').textContent).toBe('3 selected, 1 of them not shown by the filters');
  });

  it('hides rotate and the bulk actions on a control plane without them, and shows them on one that has them', async () => {
    bridge.on('api.keyImpact', () => {
      throw new Refusal(404, 'Route GET:/api/keys/00000000-0000-0000-0000-000000000000/impact not found');
    });
    serveOrganisation({ keys: [...KEYS] });
    render(<KeysScreen />);
    await waitFor(() => expect(screen.getAllByTestId('key-row')).toHaveLength(3));
    await waitFor(() => expect(screen.queryByTestId('key-selection')).toBeNull());
    expect(screen.queryAllByTestId('rotate-key')).toHaveLength(0);
    expect(screen.queryAllByTestId('select-key')).toHaveLength(0);
    expect(screen.getAllByTestId('revoke-key')).toHaveLength(3);
  });

  it('offers them when the probe is refused as a key not found', async () => {
    bridge.on('api.keyImpact', () => {
      throw new Refusal(404, 'key not found', 'key_id');
    });
    serveOrganisation({ keys: [...KEYS] });
    render(<KeysScreen />);
    await waitFor(() => expect(bridge.callsOf('api.keyImpact')).toHaveLength(1));
    await waitFor(() => expect(screen.getAllByTestId('rotate-key')).toHaveLength(3));
    expect(screen.getByTestId('key-selection')).toBeTruthy();
    expect(within(rowNamed('Checkout prod')).getByTestId('rotate-key').getAttribute('aria-label')).toBe(
      'Rotate the key Checkout prod (sk_svc_aaaa1111…)',
    );
  });
});

describe('reading the bulk limits form', () => {
  it('sends only the limits changed: set, or removed as null', () => {
    expect(
      readBulkLimits({
        rate: { mode: 'set', text: ' 120 ' },
        credit: { mode: 'remove', text: 'ignored' },
        expiry: { mode: 'set', text: '2031-01-01T05:00' },
      }),
    ).toEqual({ limits: { rate_limit_rpm: 120, credit_limit_pkr: null, expires_at: Date.UTC(2031, 0, 1) / 1000 } });
    expect(readBulkLimits({ ...EMPTY_FORM, credit: { mode: 'set', text: '2,000.25' } })).toEqual({
      limits: { credit_limit_pkr: 2000.25 },
    });
  });

  it('refuses a form that changes nothing, and says what is wrong at each field', () => {
    expect(readBulkLimits(EMPTY_FORM)).toEqual({ errors: { form: 'choose at least one limit to change' } });
    const read = readBulkLimits({
      rate: { mode: 'set', text: '0' },
      credit: { mode: 'set', text: '' },
      expiry: { mode: 'set', text: 'soon' },
    });
    expect(read).toEqual({
      errors: {
        rate: 'enter a whole number of requests per minute, at least 1',
        credit: 'enter a credit limit, or choose “remove the limit”',
        expiry: 'enter a date and time, such as 2030-01-31 18:00',
      },
    });
  });
});
