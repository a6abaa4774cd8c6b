import { formatMinute, formatTime, utcTitle } from '../lib/format.js';

/**
 * A timestamp in the user's zone with the UTC instant on hover; `whenNull` says what absence means.
 * To the minute where room is short: the seconds are then in the tooltip too.
 */
export function Time({
  iso,
  whenNull,
  minutes,
}: {
  iso: string | null | undefined;
  whenNull?: string;
  minutes?: boolean;
}) {
  if (!iso) return <span className="muted">{formatTime(iso, whenNull)}</span>;
  const utc = utcTitle(iso);
  return (
    <time dateTime={iso} title={minutes && utc ? `${formatTime(iso)} (${utc})` : utc}>
      {minutes ? formatMinute(iso) : formatTime(iso)}
    </time>
  );
}
