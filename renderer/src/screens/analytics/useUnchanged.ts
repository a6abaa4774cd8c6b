import { useState } from 'react';

/**
 * `value`, or the one this component held before when it has the same contents: a refresh that
 * brings the same figures hands the memoised charts the object they drew, and they are not drawn
 * again (recharts takes tens of milliseconds a panel). Kept as state, React's way of remembering
 * something from the render before.
 */
export function useUnchanged<T>(value: T): T {
  const [kept, setKept] = useState(value);
  const same = kept === value || JSON.stringify(kept) === JSON.stringify(value);
  if (!same) setKept(value);
  return same ? kept : value;
}
