import { act, fireEvent, render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import type { CallArgs, CallResult } from '#contract';
import { ReconcileScreen } from '../../../renderer/src/screens/reconcile/ReconcileScreen.js';
import { resetOrganisationStores } from '../../../renderer/src/state/organisation-scope.js';
import { useRoute } from '../../../renderer/src/state/route.js';
import { useSession } from '../../../renderer/src/state/session.js';
import { bridge, Refusal } from '../fake-bridge.js';
import { ME } from '../signed-in.js';

type Report = CallResult<'api.reconcile'>;
type Query = NonNullable<CallArgs<'api.reconcile'>['query']>;

const DAY = 86_400_000;
const PROJECT = '00000000-0000-4000-8000-00000000000b';
const dayText = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const daysAgo = (n: number) => dayText(Date.now() - n * DAY);
const text = (testId: string) => screen.getByTestId(testId).textContent ?? '';
const screenState = () => screen.getByTestId('reconcile-screen').dataset.state;

/** What the server answers for a query: each kind asked, every figure agreeing but the day `bad`. */
function answer(query: Query, bad?: string): Report {
  const kinds = (query.kinds ?? 'totals,spend,rollups').split(',') as Report['kinds'][number]['kind'][];
  const wrong = query.from !== undefined && query.from === bad;
  const report = kinds.map((kind) => ({
    kind,
    checked: 5,
    agreeing: wrong && kind === 'rollups' ? 4 : 5,
    disagreeing: wrong && kind === 'rollups' ? 1 : 0,
    pending: 0,
    lines:
      wrong && kind === 'rollups'
        ? [
            {
              check: 'rollup_cells' as const,
              status: 'disagrees' as const,
              day: query.from!,
              project_id: null,
              project_name: null,
              key_id: null,
              key_name: null,
              model: null,
              table: 'rollup_hour',
              cell_from: null,
              differences: [{ measure: 'requests' as const, expected: 3, found: 4 }],
              note: 'the cell does not hold what its rows add up to',
            },
          ]
        : [],
    lines_omitted: 0,
  }));
  const disagreements = wrong ? 1 : 0;
  return {
    from: `${query.from ?? daysAgo(6)}T00:00:00.000Z`,
    to: `${query.to ?? daysAgo(0)}T23:59:59.999Z`,
    project_id: query.project_id ?? null,
    checked_at: new Date().toISOString(),
    agrees: disagreements === 0,
    disagreements,
    kinds: report,
  };
}

/** Calls held until the test lets them answer, one by one. */
function heldCalls() {
  const waiting: (() => void)[] = [];
  return {
    handler: async ({ query }: CallArgs<'api.reconcile'>) => {
      await new Promise<void>((go) => waiting.push(go));
      return answer(query ?? {});
    },
    async release(count = 1) {
      for (let i = 0; i < count; i++) {
        await waitFor(() => expect(waiting.length).toBeGreaterThan(0));
        await act(async () => waiting.shift()!());
      }
    },
  };
}

const queries = () => bridge.callsOf('api.reconcile').map((args) => args.query);

beforeEach(() => {
  resetOrganisationStores();
  useRoute.setState({ screen: 'reconcile', params: {} });
  useSession.setState({ phase: 'console', profileId: 'p1', me: ME });
  bridge.on('api.projects', () => ({
    projects: [{ id: PROJECT, name: 'Checkout', created_at: '2026-01-05T00:00:00.000Z' }],
  }));
  bridge.on('api.listKeys', () => ({ keys: [] }));
  bridge.on('api.models', () => ({ models: [] }));
});

/** A date input takes its whole value at once, as the browser's picker gives it. */
function setWindow(from: string, to: string) {
  fireEvent.change(screen.getByTestId('reconcile-from'), { target: { value: from } });
  fireEvent.change(screen.getByTestId('reconcile-to'), { target: { value: to } });
  return userEvent.setup();
}

describe('the Reconcile screen', () => {
  it('opens ready, with the window and scope from the address, and asks the server nothing', async () => {
    bridge.on('api.reconcile', (args) => answer(args.query ?? {}));
    useRoute.setState({ screen: 'reconcile', params: { from: '2026-01-01', to: '2026-03-31', project: PROJECT } });
    render(<ReconcileScreen />);
    expect(screenState()).toBe('ready');
    expect((screen.getByTestId('reconcile-from') as HTMLInputElement).value).toBe('2026-01-01');
    expect((screen.getByTestId('reconcile-to') as HTMLInputElement).value).toBe('2026-03-31');
    await waitFor(() => expect((screen.getByTestId('reconcile-project') as HTMLSelectElement).value).toBe(PROJECT));
    expect(screen.getByTestId('reconcile-idle')).toBeTruthy();
    expect(screen.queryByTestId('reconcile-summary')).toBeNull();
    expect(queries()).toEqual([]);
  });

  it('defaults to the last two days, today included', () => {
    render(<ReconcileScreen />);
    expect((screen.getByTestId('reconcile-from') as HTMLInputElement).value).toBe(daysAgo(1));
    expect((screen.getByTestId('reconcile-to') as HTMLInputElement).value).toBe(daysAgo(0));
  });

  it('says at the field why a window cannot be checked, and sends nothing', async () => {
    bridge.on('api.reconcile', (args) => answer(args.query ?? {}));
    render(<ReconcileScreen />);
    const user = setWindow(daysAgo(1), daysAgo(3));
    await user.click(screen.getByTestId('reconcile-run'));
    expect(screen.getByTestId('reconcile-from-field').textContent).toContain('must not be after the last');
    expect(screen.getByTestId('reconcile-from').getAttribute('aria-invalid')).toBe('true');

    setWindow(daysAgo(3), daysAgo(-1));
    await user.click(screen.getByTestId('reconcile-run'));
    expect(screen.getByTestId('reconcile-to-field').textContent).toContain('cannot be after today');
    expect(screen.queryByTestId('reconcile-from-field')!.querySelector('[data-testid="field-error"]')).toBeNull();
    expect(queries()).toEqual([]);
    expect(screenState()).toBe('ready');
  });

  it('checks the lifetime spend once, then each day in its own call, merging the report as the days answer', async () => {
    const held = heldCalls();
    bridge.on('api.reconcile', held.handler);
    render(<ReconcileScreen />);
    const from = daysAgo(39);
    const to = daysAgo(0);
    const user = setWindow(from, to);
    await user.click(screen.getByTestId('reconcile-run'));
    expect(useRoute.getState().params).toMatchObject({ from, to });
    expect(screenState()).toBe('loading');

    await held.release(1 + 12);
    await waitFor(() => expect(text('reconcile-progress-text')).toBe('12 of 40 days checked'));
    const bar = screen.getByRole('progressbar', { name: 'Days checked' }) as HTMLProgressElement;
    expect([bar.value, bar.max]).toEqual([12, 40]);
    // The partial report, as it grows.
    expect(text('reconcile-summary')).toContain('Everything checked agrees');
    expect(text('reconcile-coverage')).toContain(`The report covers ${from} to ${daysAgo(28)} only (12 of 40 days)`);
    expect(screenState()).toBe('loading');

    await held.release(28);
    await waitFor(() => expect(screenState()).toBe('ready'));
    expect(screen.queryByTestId('reconcile-progress')).toBeNull();
    expect(text('reconcile-summary')).toContain('Everything agrees');
    expect(text('reconcile-coverage')).toContain(`The report covers every day from ${from} to ${to} (40 days)`);
    // Five checked a day by kind, five for the lifetime spend.
    expect(text('reconcile-kind-totals')).toContain('200 checked');
    expect(text('reconcile-kind-spend')).toContain('5 checked');

    const asked = queries();
    expect(asked).toHaveLength(41);
    expect(asked[0]).toEqual({ kinds: 'spend' });
    expect(asked[1]).toEqual({ from, to: from, kinds: 'totals,rollups' });
    expect(asked.at(-1)).toEqual({ from: to, to, kinds: 'totals,rollups' });
  });

  it('stops on request, keeping the days checked and naming the ones not checked; the rest can be checked after', async () => {
    const held = heldCalls();
    bridge.on('api.reconcile', held.handler);
    useRoute.setState({ screen: 'reconcile', params: { project: PROJECT } });
    render(<ReconcileScreen />);
    const user = setWindow(daysAgo(9), daysAgo(0));
    await user.click(screen.getByTestId('reconcile-run'));
    await held.release(1 + 3);
    await waitFor(() => expect(text('reconcile-progress-text')).toBe('3 of 10 days checked'));
    await user.click(screen.getByTestId('reconcile-stop'));

    expect(screenState()).toBe('ready');
    const stopped = text('reconcile-stopped');
    expect(stopped).toContain(`The report covers ${daysAgo(9)} to ${daysAgo(7)} only (3 of 10 days)`);
    expect(stopped).toContain(`${daysAgo(6)} to ${daysAgo(0)} were not checked`);
    expect(text('reconcile-summary')).toContain('project Checkout');
    expect(text('reconcile-kind-totals')).toContain('15 checked');
    // The call on its way when stopped answers into nothing.
    await held.release(1);
    expect(text('reconcile-kind-totals')).toContain('15 checked');
    expect(queries().every((query) => query?.project_id === PROJECT)).toBe(true);

    await user.click(screen.getByTestId('reconcile-resume'));
    await held.release(7);
    await waitFor(() => expect(screen.getByTestId('reconcile-screen').dataset.run).toBe('done'));
    expect(text('reconcile-kind-totals')).toContain('50 checked');
    // The spend is not asked again, and the day that answered into nothing is asked again.
    expect(queries().filter((query) => query?.kinds === 'spend')).toHaveLength(1);
    expect(queries().filter((query) => query?.from === daysAgo(6))).toHaveLength(2);
  });

  it('stops at a failed day, keeps the days before it and lists what disagrees, and tries again from that day', async () => {
    let failing = true;
    const bad = daysAgo(3);
    bridge.on('api.reconcile', ({ query }) => {
      if (query?.from === daysAgo(2) && failing) throw new Refusal(500, 'the check could not finish');
      return answer(query ?? {}, bad);
    });
    render(<ReconcileScreen />);
    const user = setWindow(daysAgo(4), daysAgo(0));
    await user.click(screen.getByTestId('reconcile-run'));
    await waitFor(() => expect(screen.getByTestId('reconcile-error')).toBeTruthy());
    expect(text('reconcile-error')).toContain('the check could not finish');
    expect(text('reconcile-error')).toContain(`The report covers ${daysAgo(4)} to ${bad} only (2 of 5 days)`);
    // Something to show: ready, not error.
    expect(screenState()).toBe('ready');
    expect(text('reconcile-summary')).toContain('1 disagreement');
    expect(screen.getAllByTestId('reconcile-line')).toHaveLength(1);

    failing = false;
    await user.click(screen.getByRole('button', { name: 'Try again' }));
    await waitFor(() => expect(screen.getByTestId('reconcile-screen').dataset.run).toBe('done'));
    expect(text('reconcile-coverage')).toContain('every day');
    expect(queries().filter((query) => query?.from === daysAgo(2))).toHaveLength(2);
    expect(queries().filter((query) => query?.from === daysAgo(3))).toHaveLength(1);
  });

  it('says the check is unavailable (503), or not offered (404), with nothing checked as an error', async () => {
    bridge.on('api.reconcile', () => {
      throw new Refusal(503, 'analytics backend unavailable');
    });
    const { unmount } = render(<ReconcileScreen />);
    const user = userEvent.setup();
    await user.click(screen.getByTestId('reconcile-run'));
    await waitFor(() => expect(screen.getByTestId('reconcile-unavailable')).toBeTruthy());
    expect(screenState()).toBe('error');
    unmount();

    resetOrganisationStores();
    bridge.on('api.reconcile', () => {
      throw new Refusal(404, 'Not Found');
    });
    render(<ReconcileScreen />);
    await user.click(screen.getByTestId('reconcile-run'));
    await waitFor(() => expect(screen.getByTestId('reconcile-not-offered')).toBeTruthy());
    expect(screenState()).toBe('error');
  });
});
