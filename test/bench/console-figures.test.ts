import { describe, expect, it } from 'vitest';
import { consoleFigures, type ConsoleReport } from '../../bench/report.js';
import type { Timing } from '../../bench/stats.js';

const timing = (p50: number, max: number): Timing => ({ runs: 5, p50, p95: max, min: p50, max, mean: p50 });

function measured(
  rowsInWindow: number,
  loads: Timing,
  firstLaunch = timing(700, 1_300),
): Omit<ConsoleReport, 'figures'> {
  return {
    setup: { rowsInWindow, chromium: '130', loads: 5, signIns: 3, switchRounds: 3 },
    startToSignIn: loads,
    firstLaunch: { pageToSignIn: firstLaunch, spawnToSignIn: timing(1_500, 2_000), launches: 3 },
    signIns: [600, 300, 280],
    signInToDashboard: timing(300, 600),
    screenSwitch: { ...timing(40, 120), byScreen: { 'Request log': [40, 120] } },
    javascript: {
      beforeFirstPaint: [{ file: 'index-abc.js', kB: 200 }],
      beforeFirstPaintKB: 200,
      chunks: 12,
      largestChunk: { file: 'charts-abc.js', kB: 390 },
      sizeWarning: false,
    },
    scroll: { pages: 20, rowsPerPage: 200, longTasks: 0, longestTaskMs: 30, frames: 400 },
  };
}

const figure = (figures: ReturnType<typeof consoleFigures>, start: string) =>
  figures.find((f) => f.figure.startsWith(start))!;

describe('the console figures as judged', () => {
  it('judges page load on the slowest load, not the median', () => {
    const figures = consoleFigures(measured(10_000_000, timing(400, 1_400)));
    expect(figure(figures, 'console: page load')).toMatchObject({ value: 1_400, pass: false });
  });

  it('judges the first launch on a new data folder by its median, page to the demo sign-in', () => {
    const fast = figure(consoleFigures(measured(200_000, timing(400, 500))), 'console: first launch');
    expect(fast).toMatchObject({ value: 700, pass: true, target: '≤ 1000 ms' });
    const slow = figure(consoleFigures(measured(200_000, timing(400, 500), timing(1_100, 1_200))), 'console: first');
    expect(slow.pass).toBe(false);
  });

  it('judges scrolling only on a window as large as its target, and names the window', () => {
    const small = figure(consoleFigures(measured(200_000, timing(400, 500))), 'console: request log scrolling');
    expect(small.figure).toBe('console: request log scrolling, longest task (200,000 rows in the window)');
    expect(small.pass).toBeNull();
    const full = figure(consoleFigures(measured(10_000_000, timing(400, 500))), 'console: request log scrolling');
    expect(full.pass).toBe(true);
    expect(full.target).toBe('no long task over 50 ms at 10,000,000 rows in the window');
  });
});
