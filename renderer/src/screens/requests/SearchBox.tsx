import { useEffect, useRef, useState, type FormEvent } from 'react';
import { Field } from '../../components/Field.js';

/** Long enough to let a word be typed, short enough to feel like the results follow. */
export const SEARCH_DEBOUNCE_MS = 400;

/**
 * Search by request id or metadata: applied a moment after typing stops, or at once on
 * Enter. The applied text lives in the route; the field holds what is being typed. Enter on the
 * text already applied searches again (`onRepeat`): rows may have arrived since.
 */
export function SearchBox({
  value,
  onCommit,
  onRepeat,
}: {
  value: string;
  onCommit: (text: string) => void;
  onRepeat: () => void;
}) {
  const [draft, setDraft] = useState(value);
  const timer = useRef<number | null>(null);
  const latestCommit = useRef(onCommit);
  latestCommit.current = onCommit;

  const stop = () => {
    if (timer.current !== null) window.clearTimeout(timer.current);
    timer.current = null;
  };

  // Cleared or restored from elsewhere: show what is applied, and drop a search still
  // waiting for its pause (it would put back the text just cleared).
  useEffect(() => {
    stop();
    setDraft(value);
  }, [value]);

  useEffect(() => stop, []);

  const commit = (text: string) => {
    stop();
    // Committed as typed (a trailing space is not trimmed from under the cursor); the query trims it.
    if (text !== value) latestCommit.current(text);
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (draft === value) {
      stop();
      onRepeat();
    } else commit(draft);
  };

  return (
    <form role="search" className="requests-search" onSubmit={submit} aria-label="Search requests">
      <Field label="Search" hint="A request id, or any metadata key or value (customer, feature, trace id…)">
        <input
          type="search"
          value={draft}
          maxLength={1000}
          placeholder="req_… or acme-retail"
          onChange={(event) => {
            const text = event.target.value;
            setDraft(text);
            stop();
            timer.current = window.setTimeout(() => commit(text), SEARCH_DEBOUNCE_MS);
          }}
          data-testid="request-search"
        />
      </Field>
      <button type="submit">Search</button>
    </form>
  );
}
