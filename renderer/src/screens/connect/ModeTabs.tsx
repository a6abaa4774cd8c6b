import { useRef, type KeyboardEvent } from 'react';

/**
 * A row of tabs that chooses one panel, as the ARIA tabs pattern has it: one tab in the Tab
 * order (the selected one), Left/Right (and Home/End) move between tabs and select them.
 */
export function ModeTabs<M extends string>(props: {
  label: string;
  modes: readonly { mode: M; label: string }[];
  selected: M;
  onSelect: (mode: M) => void;
  /** The id of the panel the tabs show; each tab's own id is `${panelId}-tab-${mode}`. */
  panelId: string;
}) {
  const tabs = useRef(new Map<M, HTMLButtonElement>());
  const count = props.modes.length;
  const at = props.modes.findIndex((m) => m.mode === props.selected);

  const onKeyDown = (event: KeyboardEvent) => {
    const moves: Readonly<Record<string, number>> = {
      ArrowRight: (at + 1) % count,
      ArrowLeft: (at - 1 + count) % count,
      Home: 0,
      End: count - 1,
    };
    const next = moves[event.key];
    const mode = next === undefined ? undefined : props.modes[next]?.mode;
    if (mode === undefined) return;
    event.preventDefault();
    props.onSelect(mode);
    tabs.current.get(mode)?.focus();
  };

  return (
    <div role="tablist" aria-label={props.label} className="tabs" onKeyDown={onKeyDown}>
      {props.modes.map(({ mode, label }) => (
        <button
          key={mode}
          ref={(tab) => {
            if (tab) tabs.current.set(mode, tab);
            else tabs.current.delete(mode);
          }}
          id={tabId(props.panelId, mode)}
          type="button"
          role="tab"
          aria-selected={mode === props.selected}
          aria-controls={props.panelId}
          tabIndex={mode === props.selected ? 0 : -1}
          className={mode === props.selected ? 'tab selected' : 'tab'}
          onClick={() => props.onSelect(mode)}
          data-testid={`mode-${mode}`}
        >
          {label}
        </button>
      ))}
    </div>
  );
}

export function tabId(panelId: string, mode: string): string {
  return `${panelId}-tab-${mode}`;
}
