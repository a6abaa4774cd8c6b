/**
 * A screen's `data-state`: "ready" once its first data is on screen (kept while it refreshes),
 * "error" when the first read failed, "loading" before. Tests and the bench's console figures
 * wait for "ready", so that "painted" means painted with data, not an empty frame.
 */
export type DataState = 'loading' | 'ready' | 'error';

export function dataState(data: unknown, error: string | null | undefined): DataState {
  if (data !== null && data !== undefined) return 'ready';
  return error ? 'error' : 'loading';
}
