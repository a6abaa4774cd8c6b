import { useEffect, useRef, useState, type FormEvent } from 'react';
import { Field } from '../Field.js';
import { TimeBound } from './TimeBound.js';
import {
  checkTimeRange,
  DEFAULT_RANGE,
  isPresetRange,
  MAX_RANGE_MS,
  RANGE_PRESETS,
  type RangeView,
} from '../../lib/time-range.js';
import './filters.css';

const CUSTOM = 'custom';
const BETWEEN = 'between';

/** A window between two times, for a view that can read one (the request log). */
export interface BetweenControl {
  /** The `from` and `to` parameters: local wall-clock times, or instants another screen linked to. */
  from: string | undefined;
  to: string | undefined;
  /** Why the two cannot be used (the view then reads its range meanwhile). */
  error: string | null;
  /** Sets both ends; the view's range parameter is dropped by the caller. */
  onChange: (patch: { from: string | null; to: string | null }) => void;
}

/**
 * A whole minute as an exact instant: how "Between" starts from the range shown. Not as local
 * wall-clock text, which in the hour the clocks go back would read as the earlier of two.
 */
const minuteInstant = (ms: number) => new Date(ms - (ms % 60_000)).toISOString();

/**
 * A preset window, or a custom one the server will accept (checked here first, with the
 * reason). The range comes from the view's parameters, so back, forward or an address
 * that sets another one restarts the control from it.
 */
export function TimeRangeFilter({
  view,
  onChange,
  between,
}: {
  view: RangeView;
  onChange: (range: string | null) => void;
  between?: BetweenControl;
}) {
  const betweenShown = between !== undefined && Boolean(between.from || between.to);
  const asked = view.badRange?.text ?? view.range;
  const customFor = (v: RangeView) => v.badRange !== null || !isPresetRange(v.range);
  const [custom, setCustom] = useState(customFor(view));
  const [text, setText] = useState(asked);
  const [error, setError] = useState<string | null>(view.badRange?.error ?? null);
  // A range set from elsewhere restarts the field from it (state adjusted while rendering, not in an effect).
  const [shown, setShown] = useState(asked);
  if (shown !== asked) {
    setShown(asked);
    setCustom(customFor(view));
    setText(asked);
    setError(view.badRange?.error ?? null);
  }
  const input = useRef<HTMLInputElement>(null);
  const [focusCustom, setFocusCustom] = useState(false);

  useEffect(() => {
    if (focusCustom && custom) input.current?.focus();
    setFocusCustom(false);
  }, [focusCustom, custom]);

  // The default is no parameter at all: the address stays short.
  const apply = (range: string) => onChange(range === DEFAULT_RANGE ? null : range);

  const choose = (value: string) => {
    if (value === BETWEEN && between) {
      // Starts as the window shown, to the minute, so it can be narrowed from there.
      const to = Date.now() + 60_000;
      const from = Math.max(to - view.rangeMs, to - MAX_RANGE_MS);
      between.onChange({ from: minuteInstant(from), to: minuteInstant(to) });
      return;
    }
    if (value === CUSTOM) {
      // A custom range replaces the two times.
      if (betweenShown) between.onChange({ from: null, to: null });
      setCustom(true);
      setText(view.range);
      setError(null);
      setFocusCustom(true);
      return;
    }
    setCustom(false);
    setError(null);
    apply(value);
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const checked = checkTimeRange(text);
    if (!checked.ok) {
      setError(checked.error);
      return;
    }
    setError(null);
    apply(checked.text);
  };

  return (
    <>
      <Field label="Time range">
        <select
          value={betweenShown ? BETWEEN : custom ? CUSTOM : view.range}
          onChange={(e) => choose(e.target.value)}
          data-testid="filter-range"
        >
          {RANGE_PRESETS.map((preset) => (
            <option key={preset.value} value={preset.value}>
              {preset.label}
            </option>
          ))}
          <option value={CUSTOM}>Custom…</option>
          {between && <option value={BETWEEN}>Between two times…</option>}
        </select>
      </Field>
      {betweenShown && (
        <>
          <TimeBound
            label="From"
            value={between.from}
            onChange={(from) => between.onChange({ from, to: between.to ?? null })}
            testId="filter-from"
          />
          <TimeBound
            label="To (not included)"
            value={between.to}
            onChange={(to) => between.onChange({ from: between.from ?? null, to })}
            testId="filter-to"
            error={between.error && `${between.error}; the last ${view.range} apply meanwhile`}
          />
        </>
      )}
      {custom && !betweenShown && (
        <form className="custom-range" onSubmit={submit} aria-label="Custom time range" data-testid="custom-range-form">
          <Field label="Custom range" hint="A whole number and s, m, h or d, such as 36h; up to 400d." error={error}>
            <input
              ref={input}
              value={text}
              onChange={(e) => setText(e.target.value)}
              size={8}
              spellCheck={false}
              data-testid="custom-range"
            />
          </Field>
          <button type="submit">Apply</button>
        </form>
      )}
    </>
  );
}
