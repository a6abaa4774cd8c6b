/**
 * A screen opened again shows the answer its store still holds and re-reads it in the
 * background (stale while revalidate), rather than dimming figures the user saw moments ago
 * while the server takes its 100–200 ms. Past this age the answer is too old to pass for the
 * present, and the screen says it is loading as on a first visit. Five minutes, as TanStack
 * Query keeps an unused answer.
 */
export const REVISIT_MS = 5 * 60_000;

/**
 * Whether the answer to `answered` (JSON text, as the stores compare queries), read at `at`
 * (Date.now()), may stay on screen, not marked as loading, while `asked` is read again. Only
 * an answer to the very same query: another query's figures would pass for this one's.
 */
export function mayStand(answered: string | null, at: number | null, asked: string, now = Date.now()): boolean {
  return answered === asked && at !== null && now - at < REVISIT_MS;
}
