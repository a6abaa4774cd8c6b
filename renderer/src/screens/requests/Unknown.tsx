import { UNKNOWN } from '../../lib/format.js';

/** An unknown figure of a request: a dash, with what its absence means on this field. */
export function Unknown({ why }: { why: string }) {
  return (
    <span className="muted">
      {UNKNOWN} <small>({why})</small>
    </span>
  );
}
