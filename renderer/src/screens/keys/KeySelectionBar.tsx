import { useEffect, useRef } from 'react';
import { formatCount } from '../../lib/format.js';
import type { BulkAction } from './BulkKeysDialog.js';

/**
 * The keys selected for a bulk action, above the table: select every key shown (the rows
 * that pass the filters), how many are selected, and what to do with them.
 */
export function KeySelectionBar(props: {
  /** Ids of the keys shown. */
  shown: readonly string[];
  selected: ReadonlySet<string>;
  /** How many of the selected keys the filters hide: they are acted on too, so said. */
  hidden: number;
  onSelectShown: (select: boolean) => void;
  onClear: () => void;
  onAction: (action: BulkAction) => void;
  max: number;
}) {
  const { shown, selected } = props;
  const selectedShown = shown.filter((id) => selected.has(id)).length;
  const all = shown.length > 0 && selectedShown === shown.length;
  const some = selectedShown > 0 && !all;
  const box = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (box.current) box.current.indeterminate = some;
  }, [some]);
  const over = selected.size > props.max;
  return (
    <div className="key-selection" role="group" aria-label="Selected keys" data-testid="key-selection">
      <label>
        <input
          ref={box}
          type="checkbox"
          checked={all}
          disabled={shown.length === 0}
          onChange={(e) => props.onSelectShown(e.target.checked)}
          data-testid="select-all-keys"
        />{' '}
        Select all {formatCount(shown.length)} shown
      </label>
      <span aria-live="polite" data-testid="selected-count">
        {formatCount(selected.size)} selected
        {props.hidden > 0 && `, ${formatCount(props.hidden)} of them not shown by the filters`}
      </span>
      {over && <span className="error">At most {formatCount(props.max)} keys at a time.</span>}
      <button
        type="button"
        disabled={selected.size === 0 || over}
        onClick={() => props.onAction('update_limits')}
        data-testid="bulk-limits"
      >
        Change limits…
      </button>
      <button
        type="button"
        className="danger"
        disabled={selected.size === 0 || over}
        onClick={() => props.onAction('revoke')}
        data-testid="bulk-revoke"
      >
        Revoke…
      </button>
      {selected.size > 0 && (
        <button type="button" onClick={props.onClear} data-testid="clear-selection">
          Clear selection
        </button>
      )}
    </div>
  );
}
