import { renderHook } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { screens } from '../../../renderer/src/app/screens.js';
import { useSeriesChart } from '../../../renderer/src/screens/analytics/series-chart-module.js';

describe("a screen's preload", () => {
  it("brings the Analytics screen's chart with it, so its first draw waits for no chunk", async () => {
    // Not asked for: before the preload the chart is not there.
    expect(renderHook(() => useSeriesChart(false)).result.current.SeriesChart).toBeNull();
    await screens.analytics.preload();
    // Still not asked for by the chart itself, yet there at its very first render.
    expect(renderHook(() => useSeriesChart(false)).result.current.SeriesChart).not.toBeNull();
  });
});
