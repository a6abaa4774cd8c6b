/**
 * When the console has nothing on its way: no bridge call unanswered for a little while, and
 * the browser idle. Work that can wait (screens' chunks fetched ahead, probes of what the
 * server offers) waits for it, so that it never competes with what the user is looking at: on
 * two cores at ten million rows, a probe run beside a sign-in's first queries took one of the
 * server's two analytics threads from them, and chunks compiled meanwhile took the page's.
 */

/** A pause between calls shorter than this is a sequence of calls, not quiet (sign-in, then me, then profiles…). */
const QUIET_MS = 150;
/** However busy the console stays, what waits runs after this long. */
const MAX_WAIT_MS = 5_000;

let inFlight = 0;
let quietSince = 0;
const waiting = new Set<() => void>();
let timer: number | null = null;

/** Wraps a bridge call: the console is not idle until it is answered. */
export async function counted<T>(run: () => Promise<T>): Promise<T> {
  inFlight++;
  try {
    return await run();
  } finally {
    inFlight--;
    if (inFlight === 0) {
      quietSince = performance.now();
      check();
    }
  }
}

/** Runs `run` in the browser's next idle period (within a second). */
export function idleCallback(run: () => void): void {
  if (typeof window.requestIdleCallback === 'function') window.requestIdleCallback(run, { timeout: 1000 });
  else window.setTimeout(run, 50);
}

function check(): void {
  if (timer !== null || waiting.size === 0 || inFlight > 0) return;
  const left = QUIET_MS - (performance.now() - quietSince);
  timer = window.setTimeout(
    () => {
      timer = null;
      if (inFlight > 0 || performance.now() - quietSince < QUIET_MS) return check();
      idleCallback(() => {
        // A call may have started while the browser was busy: the next quiet runs what waits.
        if (inFlight > 0) return;
        const runs = [...waiting];
        waiting.clear();
        for (const run of runs) run();
      });
    },
    Math.max(0, left),
  );
}

/** Runs `run` once the console is idle (or after a few seconds at most); the result cancels it. */
export function whenIdle(run: () => void): () => void {
  let done = false;
  const once = () => {
    if (done) return;
    done = true;
    waiting.delete(once);
    window.clearTimeout(deadline);
    run();
  };
  const deadline = window.setTimeout(once, MAX_WAIT_MS);
  waiting.add(once);
  check();
  return () => {
    done = true;
    waiting.delete(once);
    window.clearTimeout(deadline);
  };
}
