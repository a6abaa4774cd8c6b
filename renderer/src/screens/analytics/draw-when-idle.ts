/**
 * Charts out of view wait here for the browser to idle, and are drawn one per idle period: a
 * screen's first paint then carries only the charts the user sees (each recharts chart costs tens
 * of milliseconds to mount), and the rest follow without one long task between them. The timeout
 * keeps a busy page from starving them.
 */
const waiting: (() => void)[] = [];
let scheduled = false;
/** Loads of what the window shows still on their way: the charts below wait for them. */
let holds = 0;

const IDLE_TIMEOUT_MS = 500;

function drawNext(): void {
  scheduled = false;
  if (holds > 0) return;
  waiting.shift()?.();
  schedule();
}

function schedule(): void {
  if (scheduled || holds > 0 || waiting.length === 0) return;
  scheduled = true;
  if (typeof window.requestIdleCallback === 'function')
    window.requestIdleCallback(drawNext, { timeout: IDLE_TIMEOUT_MS });
  else window.setTimeout(drawNext, 50);
}

/** Calls `draw` in an idle period of its own, after those queued before it; the result cancels it. */
export function drawWhenIdle(draw: () => void): () => void {
  waiting.push(draw);
  schedule();
  return () => {
    const at = waiting.indexOf(draw);
    if (at >= 0) waiting.splice(at, 1);
  };
}

/**
 * Holds the charts out of view until `settled` has: while a screen waits for the answers that
 * fill the window, the browser idles, and a chart below drawn then (a recharts chart takes
 * hundreds of ms on a slow machine) would hold back the answer's paint when it arrives.
 */
export function drawAfter(settled: Promise<unknown>): void {
  holds++;
  void settled.finally(() => {
    holds--;
    schedule();
  });
}
