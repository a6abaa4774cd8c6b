import { describe, expect, it } from 'vitest';
import { MAX_LINES, mergeReport } from '../../../renderer/src/screens/reconcile/merge-reports.js';
import type { KindReport, Line, Report } from '../../../renderer/src/screens/reconcile/reconcile-lines.js';

const STARTED = '2026-11-22T07:00:00.000Z';

function line(day: string | null, n: number): Line {
  return {
    check: day === null ? 'settled_spend' : 'rollup_cells',
    status: 'disagrees',
    day,
    project_id: 'p1',
    project_name: 'Default',
    key_id: `k${n}`,
    key_name: null,
    model: null,
    table: day === null ? null : 'rollup_hour',
    cell_from: null,
    differences: [{ measure: 'requests', expected: n, found: n + 1 }],
    note: `line ${n}`,
  };
}

function kind(name: KindReport['kind'], counts: Partial<KindReport> = {}): KindReport {
  const lines = counts.lines ?? [];
  const disagreeing = counts.disagreeing ?? lines.length;
  const pending = counts.pending ?? 0;
  const checked = counts.checked ?? disagreeing + pending + 10;
  return {
    kind: name,
    checked,
    agreeing: checked - disagreeing - pending,
    disagreeing,
    pending,
    lines,
    lines_omitted: counts.lines_omitted ?? 0,
  };
}

/** A day's report as `kinds=totals,rollups` answers it. */
function day(text: string, totals: Partial<KindReport> = {}, rollups: Partial<KindReport> = {}): Report {
  const kinds = [kind('totals', totals), kind('rollups', rollups)];
  const disagreements = kinds.reduce((sum, k) => sum + k.disagreeing, 0);
  return {
    from: `${text}T00:00:00.000Z`,
    to: `${text}T23:59:59.999Z`,
    project_id: null,
    checked_at: `${text}T12:00:00.000Z`,
    agrees: disagreements === 0,
    disagreements,
    kinds,
  };
}

/** The lifetime spend's report (`kinds=spend`): the server's default window, no day of the check's. */
function spend(counts: Partial<KindReport> = {}): Report {
  const only = kind('spend', counts);
  return {
    from: '2026-11-16T00:00:00.000Z',
    to: '2026-11-22T23:59:59.999Z',
    project_id: null,
    checked_at: '2026-11-22T07:00:01.000Z',
    agrees: only.disagreeing === 0,
    disagreements: only.disagreeing,
    kinds: [only],
  };
}

const merge = (parts: Report[]) => parts.reduce<Report | null>((into, part) => mergeReport(into, part, STARTED), null)!;

const byKind = (report: Report) => Object.fromEntries(report.kinds.map((k) => [k.kind, k]));

describe('merging the reports of a check, part by part', () => {
  it('sums each kind, lists the kinds in the usual order, and spans the days checked', () => {
    const report = merge([
      spend({ checked: 3, pending: 1 }),
      day('2026-01-01', { checked: 6 }, { checked: 100 }),
      day('2026-01-02', { checked: 4 }, { checked: 50 }),
      day('2026-01-03', { checked: 0 }, { checked: 0 }),
    ]);
    expect(report.kinds.map((k) => k.kind)).toEqual(['totals', 'spend', 'rollups']);
    expect(byKind(report).totals).toMatchObject({ checked: 10, agreeing: 10, disagreeing: 0, pending: 0 });
    expect(byKind(report).spend).toMatchObject({ checked: 3, agreeing: 2, pending: 1 });
    expect(byKind(report).rollups).toMatchObject({ checked: 150, agreeing: 150 });
    // The first day's start to the last checked day's end, not the spend call's own window.
    expect(report.from).toBe('2026-01-01T00:00:00.000Z');
    expect(report.to).toBe('2026-01-03T23:59:59.999Z');
    expect(report.checked_at).toBe(STARTED);
    expect(report).toMatchObject({ agrees: true, disagreements: 0, project_id: null });
  });

  it('disagrees when any kind does, counting disagreements over every kind and day; pending is no disagreement', () => {
    const report = merge([
      spend({ lines: [line(null, 1)] }),
      day('2026-01-01', {}, { lines: [line('2026-01-01', 2), line('2026-01-01', 3)] }),
      day('2026-01-02', { lines: [line('2026-01-02', 4)] }),
    ]);
    expect(report).toMatchObject({ agrees: false, disagreements: 4 });
    expect(byKind(report).rollups!.lines.map((l) => l.note)).toEqual(['line 2', 'line 3']);
    expect(byKind(report).totals!.disagreeing).toBe(1);

    const pendingOnly = merge([spend({ pending: 2, checked: 5 }), day('2026-01-01')]);
    expect(pendingOnly).toMatchObject({ agrees: true, disagreements: 0 });
  });

  it(`lists at most ${MAX_LINES} lines per kind, in the order checked, and counts the rest as omitted`, () => {
    const lines = (text: string, from: number, count: number) =>
      Array.from({ length: count }, (_, i) => line(text, from + i));
    const report = merge([
      spend(),
      // 150 listed, and 5 the server itself left unlisted.
      day('2026-01-01', {}, { lines: lines('2026-01-01', 0, 150), lines_omitted: 5, disagreeing: 155 }),
      // 50 more fit, 70 do not.
      day('2026-01-02', {}, { lines: lines('2026-01-02', 150, 120) }),
      day('2026-01-03', {}, { lines: lines('2026-01-03', 270, 10), lines_omitted: 1, disagreeing: 11 }),
    ]);
    const rollups = byKind(report).rollups!;
    expect(rollups.lines).toHaveLength(MAX_LINES);
    expect(rollups.lines[0]!.note).toBe('line 0');
    expect(rollups.lines.at(-1)!.note).toBe('line 199');
    expect(rollups.lines_omitted).toBe(5 + 70 + 10 + 1);
    // Everything counted, listed or not.
    expect(rollups.disagreeing).toBe(155 + 120 + 11);
    expect(rollups.lines.length + rollups.lines_omitted).toBe(rollups.disagreeing);
    expect(report.disagreements).toBe(286);
  });

  it('keeps the parts it was given as they were', () => {
    const first = day('2026-01-01', {}, { lines: [line('2026-01-01', 1)] });
    const second = day('2026-01-02', {}, { lines: [line('2026-01-02', 2)] });
    const copy = structuredClone(first);
    mergeReport(mergeReport(null, first, STARTED), second, STARTED);
    expect(first).toEqual(copy);
  });

  it('before any day, names the spend call’s window; a stopped check spans only the days it checked', () => {
    const lifetime = merge([spend()]);
    expect(lifetime.kinds.map((k) => k.kind)).toEqual(['spend']);
    expect(lifetime.checked_at).toBe(STARTED);
    const stopped = merge([spend(), day('2026-01-01'), day('2026-01-02')]);
    expect([stopped.from, stopped.to]).toEqual(['2026-01-01T00:00:00.000Z', '2026-01-02T23:59:59.999Z']);
  });
});
