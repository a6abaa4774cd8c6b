import { render, screen, within } from '@testing-library/react';
import { beforeEach, describe, expect, it } from 'vitest';
import { formatMs } from '../../../renderer/src/lib/format.js';
import { RequestDetail } from '../../../renderer/src/screens/requests/RequestDetail.js';
import {
  attemptDecisionWords,
  attemptErrorWords,
  type Attempt,
} from '../../../renderer/src/screens/requests/attempt-words.js';
import { resetOrganisationStores } from '../../../renderer/src/state/organisation-scope.js';
import { useSession } from '../../../renderer/src/state/session.js';
import { bridge, Refusal } from '../fake-bridge.js';
import { ME } from '../signed-in.js';
import { nullRow, requestRow } from './rows.js';

/** A failover: the first target silent, the second failing once and answering on its retry. */
const FAILOVER: Attempt[] = [
  { target: 'openai/gpt-4o-mini-2024-07-18', status: null, error: 'first_byte_timeout', ms: 2000, decision: 'next' },
  { target: 'azure/gpt-4o-mini', status: 503, error: 'server_error', ms: 41.5, decision: 'retried' },
  { target: 'azure/gpt-4o-mini', status: 200, error: null, ms: 812.25, decision: 'served' },
];

beforeEach(() => {
  useSession.setState({ phase: 'console', profileId: 'p1', me: ME });
  resetOrganisationStores();
  bridge.on('api.modelPrices', () => {
    throw new Refusal(404, 'not found');
  });
});

describe('the attempts of a request, in its detail', () => {
  it('shows one line per attempt in order: target, status, error in words, duration and what followed', () => {
    const row = requestRow(0, { upstream: { model: 'gpt-4o-mini', provider: 'azure', attempts: FAILOVER } });
    render(<RequestDetail row={row} onClose={() => {}} />);
    const section = screen.getByTestId('request-attempts');
    expect(within(section).getByRole('heading').textContent).toBe('Attempts');
    const lines = within(section).getAllByTestId('request-attempt');
    const read = (line: HTMLElement, part: string) =>
      within(line).queryByTestId(`attempt-${part}`)?.textContent ?? null;
    expect(
      lines.map((line) => ({
        target: read(line, 'target'),
        status: read(line, 'status'),
        error: read(line, 'error'),
        ms: read(line, 'ms'),
        decision: read(line, 'decision'),
      })),
    ).toEqual([
      {
        target: 'openai/gpt-4o-mini-2024-07-18',
        status: 'status –',
        error: 'no first byte in time',
        ms: formatMs(2000),
        decision: 'moved to the next target',
      },
      {
        target: 'azure/gpt-4o-mini',
        status: 'status 503',
        error: 'server error',
        ms: formatMs(41.5),
        decision: 'retried on the same target',
      },
      { target: 'azure/gpt-4o-mini', status: 'status 200', error: null, ms: formatMs(812.25), decision: 'served' },
    ]);
    // An ordered list, so a screen reader says which attempt each was.
    expect(section.querySelector('ol')?.children).toHaveLength(3);
    expect(lines.map((line) => line.getAttribute('data-decision'))).toEqual(['next', 'retried', 'served']);
    expect(screen.getByTestId('detail-served_by').textContent).toBe('azure/gpt-4o-mini');
  });

  it('shows nothing of the attempts when the row does not say, and who served as unknown', () => {
    const unknown = requestRow(0, { upstream: { model: 'gpt-4o-mini-2024-07-18', provider: null, attempts: null } });
    const { unmount } = render(<RequestDetail row={unknown} onClose={() => {}} />);
    expect(screen.queryByTestId('request-attempts')).toBeNull();
    expect(screen.queryAllByTestId('request-attempt')).toEqual([]);
    expect(screen.getByTestId('detail-served_by').textContent).toMatch(/^– \(not recorded\)$/);
    unmount();

    // A control plane that answers only the contract's {model}; and a row with no upstream at all.
    for (const row of [requestRow(0, { upstream: { model: 'gpt-4o-mini-2024-07-18' } }), nullRow()]) {
      const view = render(<RequestDetail row={row} onClose={() => {}} />);
      expect(screen.queryByTestId('request-attempts')).toBeNull();
      expect(screen.getByTestId('detail-served_by').textContent).toMatch(/^–/);
      view.unmount();
    }
  });

  it('says that no target served a request whose attempts all failed', () => {
    const failed: Attempt[] = [
      { ...FAILOVER[0]! },
      { target: 'azure/gpt-4o-mini', status: 503, error: 'server_error', ms: 41.5, decision: 'gave_up' },
    ];
    const row = requestRow(0, { status: 502, upstream: { model: 'gpt-4o-mini', provider: null, attempts: failed } });
    render(<RequestDetail row={row} onClose={() => {}} />);
    expect(screen.getAllByTestId('attempt-decision').map((d) => d.textContent)).toEqual([
      'moved to the next target',
      'gave up',
    ]);
    expect(screen.getByTestId('detail-served_by').textContent).toBe('– (no target served it)');
  });
});

describe('attempts in words', () => {
  it('names every error class the gateway records, and shows one it does not know as it is', () => {
    expect(attemptErrorWords('first_byte_timeout')).toBe('no first byte in time');
    expect(attemptErrorWords('rate_limited')).toBe('rate limited');
    expect(attemptErrorWords('stream_cut')).toBe('stream cut off');
    expect(attemptErrorWords('something_new')).toBe('something_new');
    expect(attemptErrorWords('constructor')).toBe('constructor');
  });

  it('says why a target was skipped', () => {
    expect(attemptDecisionWords('skipped', 'breaker_open')).toBe('skipped: breaker open');
    expect(attemptDecisionWords('skipped', null)).toBe('skipped: breaker open');
    expect(attemptDecisionWords('skipped', 'unsupported')).toBe('skipped: cannot serve this request');
    expect(attemptDecisionWords('gave_up', 'server_error')).toBe('gave up');
  });
});
