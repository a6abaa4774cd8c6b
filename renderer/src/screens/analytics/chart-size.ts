/**
 * The analytics chart's geometry, apart from the chart itself (SeriesChart.tsx, which brings
 * recharts): the panel sizes its area and downsamples the answer before the chart has loaded.
 */
export const CHART_HEIGHT = 300;
export const Y_AXIS_WIDTH = 64;
export const CHART_MARGIN = { top: 8, right: 16, bottom: 4, left: 0 };

/** How many pixels wide the plot is (so how many points it can show) in an element this wide. */
export function plotPixels(elementWidth: number): number {
  return Math.max(1, Math.floor(elementWidth - Y_AXIS_WIDTH - CHART_MARGIN.left - CHART_MARGIN.right));
}
