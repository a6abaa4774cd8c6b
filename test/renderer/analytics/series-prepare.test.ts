import { describe, expect, it } from 'vitest';
import { shortId, unknownLabel } from '../../../renderer/src/lib/id-label.js';
import {
  PALETTE,
  fillAnswer,
  nameSeries,
  seriesName,
  seriesNames,
  type AnswerInWindow,
  type FilledAnswer,
} from '../../../renderer/src/lib/series-prepare.js';

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 10, 22, 7);
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 19);

const answer = (response: Partial<AnswerInWindow['response']>): AnswerInWindow => ({
  response: { metric: 'volume', interval: '1h', group_by: 'project', data: [], ...response },
  fromMs: T0,
  toMs: T0 + 2 * HOUR,
});

const filled = (a: AnswerInWindow): FilledAnswer => {
  const result = fillAnswer(a);
  if ('error' in result) throw new Error(result.error);
  return result;
};

describe('reading the answer', () => {
  it('fills every bucket of the window for each group, with what the server said it used', () => {
    const result = filled(
      answer({
        data: [
          { bucket: iso(T0), group: 'p2', value: 4 },
          { bucket: iso(T0 + HOUR), group: 'p1', value: 1 },
        ],
      }),
    );
    expect(result).toMatchObject({ metric: 'volume', groupBy: 'project', interval: '1h', intervalMs: HOUR });
    expect(result.table.times).toEqual([T0, T0 + HOUR, T0 + 2 * HOUR]);
    expect(result.table.series.map((s) => [s.group, s.values])).toEqual([
      ['p1', [0, 1, 0]],
      ['p2', [4, 0, 0]],
    ]);
  });

  it('says why an answer cannot be drawn instead of drawing it wrong', () => {
    expect(fillAnswer(answer({ metric: 'p99' }))).toEqual({ error: 'the server answered an unknown metric, p99' });
    expect(fillAnswer(answer({ interval: '1w' }))).toEqual({
      error: 'the server answered an interval that does not read, 1w',
    });
    const tooMany = answer({ interval: '1s', data: [{ bucket: iso(T0), group: 'p1', value: 1 }] });
    tooMany.fromMs = T0 - 30 * 86_400_000;
    expect(fillAnswer(tooMany)).toEqual({ error: expect.stringContaining('more values than the chart can hold') });
  });
});

describe('naming the series', () => {
  it('by the directory, by route id for models, "Unknown …" with a short id when not known', () => {
    const names: Record<string, string> = { 'p-1111-2222': 'Support Bot' };
    const nameOf = (id: string) => names[id] ?? null;
    expect(seriesName(null, null, nameOf, 'Requests')).toBe('Requests');
    expect(seriesName('project', 'p-1111-2222', nameOf, 'Requests')).toBe('Support Bot');
    expect(seriesName('project', null, nameOf, 'Requests')).toBe('(no project)');
    expect(seriesName('key', null, nameOf, 'Requests')).toBe('(no key)');
    expect(seriesName('key', '0b5f9c3e-aaaa-bbbb-cccc-ddddeeeeffff', nameOf, 'Requests')).toBe(
      'Unknown key (0b5f9c3e…)',
    );
    expect(seriesName('model', 'openai/gpt-4o', nameOf, 'Requests')).toBe('openai/gpt-4o');
    expect(shortId('abc')).toBe('abc');
    expect(unknownLabel('model', 'openai/gpt-4o', false)).toBe('Unknown model (openai/gpt-4o)');
  });

  it('orders series by name, the rows without a group last, each with its own colour', () => {
    const result = filled(
      answer({
        data: [
          { bucket: iso(T0), group: null, value: 1 },
          { bucket: iso(T0), group: 'zz', value: 2 },
          { bucket: iso(T0), group: 'aa', value: 3 },
        ],
      }),
    );
    const names = seriesNames(result, (_groupBy, id) => ({ aa: 'Zebra', zz: 'Apple' })[id] ?? null);
    expect(names).toEqual(['Zebra', 'Apple', '(no project)']);
    const prepared = nameSeries(result, names);
    expect(prepared.names).toEqual([
      { name: 'Apple', color: PALETTE[0] },
      { name: 'Zebra', color: PALETTE[1] },
      { name: '(no project)', color: PALETTE[2] },
    ]);
    expect(prepared.table.series.map((s) => s.group)).toEqual(['zz', 'aa', null]);
    // The filled values are shared, not copied: naming again costs no refill.
    expect(prepared.table.series[0]).toBe(result.table.series[1]);
  });

  it('ungrouped, the one series is named for the metric', () => {
    const result = filled(answer({ metric: 'ttft', group_by: null }));
    expect(seriesNames(result, () => 'never asked')).toEqual(['Mean time to first token']);
  });
});
