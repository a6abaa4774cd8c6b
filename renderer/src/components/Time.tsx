import { formatTime, utcTitle } from '../lib/format.js';

/** A timestamp in the user's zone with the UTC instant on hover; `whenNull` says what absence means. */
export function Time({ iso, whenNull }: { iso: string | null | undefined; whenNull?: string }) {
  if (!iso) return <span className="muted">{formatTime(iso, whenNull)}</span>;
  return (
    <time dateTime={iso} title={utcTitle(iso)}>
      {formatTime(iso)}
    </time>
  );
}
