/**
 * Time ranges as the server reads them (`<int><unit>`, unit s, m, h or d, at most 400d),
 * the presets both the analytics screen and the request log offer, and the range a view's
 * parameter asks for, with the reason when it does not parse.
 */

export const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION = /^[1-9][0-9]*[smhd]$/;

/** The longest window the server accepts. */
export const MAX_RANGE_MS = 400 * UNIT_MS.d;

export const DEFAULT_RANGE = '24h';
const DEFAULT_RANGE_MS = UNIT_MS.d;

export const RANGE_PRESETS: readonly { value: string; label: string }[] = [
  { value: '1h', label: 'Last hour' },
  { value: '24h', label: 'Last 24 hours' },
  { value: '7d', label: 'Last 7 days' },
  { value: '30d', label: 'Last 30 days' },
  { value: '90d', label: 'Last 90 days' },
];

export function isPresetRange(range: string): boolean {
  return RANGE_PRESETS.some((preset) => preset.value === range);
}

/** Milliseconds of a `<int><unit>` duration (unit s, m, h or d), or null when it is not one. */
export function durationMs(text: string): number | null {
  const trimmed = text.trim();
  if (!DURATION.test(trimmed)) return null;
  const ms = Number(trimmed.slice(0, -1)) * UNIT_MS[trimmed.slice(-1) as keyof typeof UNIT_MS];
  return Number.isSafeInteger(ms) ? ms : null;
}

/** A width as a reader says it: "15m", "1h", "90s"; ms that is none of those reads "250ms". */
export function durationText(ms: number): string {
  for (const [unit, size] of [
    ['d', UNIT_MS.d],
    ['h', UNIT_MS.h],
    ['m', UNIT_MS.m],
  ] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

export type RangeCheck = { ok: true; text: string; ms: number } | { ok: false; error: string };

/** A time range as the server will accept it, or why not, in the words a user can act on. */
export function checkTimeRange(text: string): RangeCheck {
  const trimmed = text.trim();
  if (trimmed === '') return { ok: false, error: 'enter a time range, such as 36h or 14d' };
  const ms = durationMs(trimmed);
  if (ms === null) return { ok: false, error: 'a whole number followed by s, m, h or d, such as 36h or 14d' };
  if (ms > MAX_RANGE_MS) return { ok: false, error: 'at most 400 days (400d)' };
  return { ok: true, text: trimmed, ms };
}

/** The window a view asks for. */
export interface RangeView {
  /** A valid `<int><unit>` text: what is sent to the server. */
  range: string;
  rangeMs: number;
  /** The parameter when it did not parse (the default applies meanwhile), with the reason. */
  badRange: { text: string; error: string } | null;
}

/** The range a view's parameter asks for: the default when absent, and when it does not parse (saying why). */
export function rangeFromParam(param: string | undefined): RangeView {
  if (param === undefined) return { range: DEFAULT_RANGE, rangeMs: DEFAULT_RANGE_MS, badRange: null };
  const checked = checkTimeRange(param);
  if (checked.ok) return { range: checked.text, rangeMs: checked.ms, badRange: null };
  return { range: DEFAULT_RANGE, rangeMs: DEFAULT_RANGE_MS, badRange: { text: param, error: checked.error } };
}
