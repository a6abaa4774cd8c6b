import { fireEvent, render, screen } from '@testing-library/react';
import { beforeEach, describe, expect, it } from 'vitest';
import { bucketAxis } from '../../../renderer/src/screens/analytics/dashboard/bucket-time.js';
import {
  bands,
  bucketAt,
  knownRuns,
  niceTicks,
  tickEvery,
} from '../../../renderer/src/screens/analytics/dashboard/chart-geometry.js';
import { DashboardChart, type ChartSeries } from '../../../renderer/src/screens/analytics/dashboard/DashboardChart.js';
import type { DashboardRow } from '../../../renderer/src/screens/analytics/dashboard/dashboard-data.js';
import { fakeWidth } from './fixtures.js';

/** A dashboard panel's chart, drawn as plain SVG: its geometry, its gaps and its tooltip. */

function row(i: number, figures: Partial<DashboardRow> = {}): DashboardRow {
  return {
    i,
    ok: 10,
    clientErrors: 2,
    serverErrors: 0,
    refused: 0,
    costMicro: 1_000_000,
    latencyP50: 400,
    latencyP95: 900,
    latencyP99: 1500,
    ttftP50: null,
    ttftP95: null,
    prompt: 100,
    generated: 50,
    cacheRead: null,
    cacheWrite: null,
    tokensPerSecond: 40,
    ...figures,
  };
}

const STARTS = ['2026-03-29T00:00:00Z', '2026-03-29T01:00:00Z', '2026-03-29T02:00:00Z', '2026-03-29T03:00:00Z'];
const AXIS = bucketAxis(STARTS, '1h');
const OUTCOMES: ChartSeries[] = [
  { key: 'ok', name: '2xx', color: 'green' },
  { key: 'clientErrors', name: '4xx', color: 'orange' },
];
const LATENCY: ChartSeries[] = [{ key: 'latencyP50', name: 'p50', color: 'blue' }];

function draw(kind: 'bars' | 'areas' | 'lines', rows: DashboardRow[], series: ChartSeries[]) {
  render(
    <DashboardChart
      kind={kind}
      rows={rows}
      series={series}
      axis={AXIS}
      formatValue={(v) => (v === null ? '–' : `${v} units`)}
      formatTick={String}
      label="A test chart"
      testId="chart"
    />,
  );
  return screen.getByTestId('chart');
}

/** The numbers in a path's `d`, in order. */
const numbers = (d: string | null) => (d ?? '').match(/-?\d+(\.\d+)?/g)!.map(Number);

describe('the chart geometry', () => {
  it('puts the value axis on round steps reaching the highest value', () => {
    expect(niceTicks(93)).toEqual([0, 20, 40, 60, 80, 100]);
    expect(niceTicks(0.3)).toEqual([0, 0.1, 0.2, 0.3]);
    expect(niceTicks(5)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(niceTicks(0)).toEqual([0, 1]);
  });

  it('stacks each series on the known values below it, an unknown leaving its own gap', () => {
    expect(
      bands(
        [
          [3, 4],
          [null, 2],
          [1, 1],
        ],
        true,
      ),
    ).toEqual([
      [
        { low: 0, high: 3 },
        { low: 0, high: 4 },
      ],
      [null, { low: 4, high: 6 }],
      [
        { low: 3, high: 4 },
        { low: 6, high: 7 },
      ],
    ]);
    expect(bands([[3], [2]], false)).toEqual([[{ low: 0, high: 3 }], [{ low: 0, high: 2 }]]);
  });

  it('breaks a line at every unknown, and finds the bucket under the pointer', () => {
    const band = { low: 0, high: 1 };
    expect(knownRuns([band, band, null, band, null, null, band, band])).toEqual([
      [0, 1],
      [3, 3],
      [6, 7],
    ]);
    expect(tickEvery(10, 40, 24)).toBe(7);
    expect(bucketAt(25, 10, 4)).toBe(2);
    expect(bucketAt(45, 10, 4)).toBeNull();
    expect(bucketAt(-1, 10, 4)).toBeNull();
  });
});

describe('a dashboard chart', () => {
  beforeEach(() => fakeWidth(480));

  it('draws stacked bars to scale, one path per series', () => {
    const chart = draw('bars', [row(0, { ok: 10, clientErrors: 10 }), row(1, { ok: 5, clientErrors: 0 })], OUTCOMES);
    const ok = numbers(chart.querySelector('[data-series="ok"]')!.getAttribute('d'));
    const errors = numbers(chart.querySelector('[data-series="clientErrors"]')!.getAttribute('d'));
    // Bar 1 of 2xx: M x,top h w V bottom; its height is half that of the full stack in bucket 0.
    const [, okTop, , okBottom] = ok;
    const [, errorsTop, , errorsBottom] = errors;
    expect(errorsBottom).toBeCloseTo(okTop!);
    expect(okBottom! - okTop!).toBeCloseTo(errorsBottom! - errorsTop!);
    // Bucket 1's 4xx bar is zero high: not drawn at all.
    expect((chart.querySelector('[data-series="clientErrors"]')!.getAttribute('d')!.match(/M/g) ?? []).length).toBe(1);
  });

  it('leaves an unknown as a gap in a line, never a drop to 0, and marks a value alone by a dot', () => {
    const rows = [
      row(0, { latencyP50: 400 }),
      row(1, { latencyP50: 500 }),
      row(2, { latencyP50: null }),
      row(3, { latencyP50: 450 }),
    ];
    const chart = draw('lines', rows, LATENCY);
    const d = chart.querySelector('[data-series="latencyP50"] path')!.getAttribute('d')!;
    expect(d.match(/M/g)).toHaveLength(1);
    expect(d.match(/L/g)).toHaveLength(1);
    expect(chart.querySelectorAll('[data-series="latencyP50"] circle')).toHaveLength(1);
  });

  it('reads a bucket with the arrow keys: its time and every series value, unknown as "–"', () => {
    const rows = [row(0), row(1, { ok: 7, clientErrors: 3 }), row(2)];
    draw('bars', rows, OUTCOMES);
    const svg = screen.getByRole('img', { name: /A test chart/ });
    svg.focus();
    fireEvent.keyDown(svg, { key: 'ArrowRight' });
    expect(screen.getByTestId('dashboard-tooltip').textContent).toContain('2xx: 10 units');
    fireEvent.keyDown(svg, { key: 'ArrowRight' });
    const tooltip = screen.getByTestId('dashboard-tooltip').textContent;
    expect(tooltip).toContain(AXIS.title(1));
    expect(tooltip).toContain('2xx: 7 units');
    expect(tooltip).toContain('4xx: 3 units');
    fireEvent.keyDown(svg, { key: 'Escape' });
    expect(screen.queryByTestId('dashboard-tooltip')).toBeNull();
  });

  it('shows "–" for an unknown value in the tooltip', () => {
    draw('lines', [row(0, { latencyP50: null }), row(1)], LATENCY);
    const svg = screen.getByRole('img', { name: /A test chart/ });
    fireEvent.keyDown(svg, { key: 'Home' });
    expect(screen.getByTestId('dashboard-tooltip').textContent).toContain('p50: –');
  });
});
