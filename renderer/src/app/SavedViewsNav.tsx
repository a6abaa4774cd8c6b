import { useRef, useState } from 'react';
import { ConfirmDialog } from '../components/Dialog.js';
import { ViewNameDialog } from '../components/SaveViewDialog.js';
import { useAction } from '../components/useAction.js';
import { useOverlay } from '../commands/overlays.js';
import { ariaShortcut, PALETTE_SHORTCUT, shortcutLabel } from '../commands/shortcut.js';
import { formatHash, useRoute } from '../state/route.js';
import { showsView, useSavedViews, type SavedView } from '../state/saved-views.js';
import { screens } from './screens.js';
import './saved-views.css';

/** The sidebar's button for the command palette, with its shortcut. */
export function PaletteButton() {
  return (
    <button
      type="button"
      className="palette-button"
      onClick={() => useOverlay.getState().show('palette')}
      aria-keyshortcuts={ariaShortcut(PALETTE_SHORTCUT)}
      data-testid="open-palette"
    >
      <span>Find or run…</span>
      <span className="shortcut-hint" aria-hidden="true">
        {shortcutLabel(PALETTE_SHORTCUT)}
      </span>
    </button>
  );
}

/** The profile's saved views in the sidebar: open one, rename it, remove it. */
export function SavedViewsNav() {
  const views = useSavedViews((s) => s.views);
  const setAside = useSavedViews((s) => s.setAside);
  const error = useSavedViews((s) => s.error);
  const list = useRef<HTMLUListElement>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  const screen = useRoute((s) => s.screen);
  const params = useRoute((s) => s.params);
  const go = useRoute((s) => s.go);
  const [renaming, setRenaming] = useState<SavedView | null>(null);
  const [removing, setRemoving] = useState<SavedView | null>(null);

  return (
    <section className="saved-views" aria-labelledby="saved-views-title" data-testid="saved-views">
      <h2 id="saved-views-title" tabIndex={-1} ref={heading}>
        Saved views
      </h2>
      {error && (
        <p className="error saved-views-note" role="alert">
          Saved views could not be read: {error}
        </p>
      )}
      {setAside > 0 && (
        <p className="muted saved-views-note" data-testid="views-set-aside">
          {setAside === 1 ? 'A saved view' : `${setAside} saved views`} could not be read and{' '}
          {setAside === 1 ? 'was' : 'were'} set aside (the file is kept in the console’s data folder).
        </p>
      )}
      {views?.length === 0 && (
        <p className="muted saved-views-note">
          None yet: “Save view” on the request log or analytics keeps its filters.
        </p>
      )}
      <ul ref={list}>
        {views?.map((view) => (
          <li key={view.id} className="saved-view" data-testid="saved-view">
            <a
              href={formatHash({ screen: view.screen, params: view.filters })}
              title={`${view.name} (${screens[view.screen].title})`}
              // "true", not "page": the screen's own link in the navigation is the page.
              aria-current={showsView(view, screen, params) ? 'true' : undefined}
              onClick={(event) => {
                event.preventDefault();
                go(view.screen, view.filters);
              }}
              data-testid="saved-view-link"
            >
              {view.name}
            </a>
            <ViewButton action="Rename" view={view} icon="✎" onClick={() => setRenaming(view)} />
            <ViewButton action="Remove" view={view} icon="×" onClick={() => setRemoving(view)} />
          </li>
        ))}
      </ul>
      {renaming && (
        <ViewNameDialog
          title={`Rename “${renaming.name}”`}
          submitLabel="Rename"
          initialName={renaming.name}
          onSubmit={(name) => useSavedViews.getState().rename(renaming.id, name)}
          onClose={() => setRenaming(null)}
          testId="rename-view-dialog"
        />
      )}
      {removing && (
        <RemoveViewDialog
          view={removing}
          onClose={() => setRemoving(null)}
          onRemoved={(index) => {
            // The focus was on the removed view's button: to the view now in its place, else the heading.
            const links = list.current?.querySelectorAll<HTMLElement>('[data-testid="saved-view-link"]') ?? [];
            (links[Math.min(index, links.length - 1)] ?? heading.current)?.focus();
          }}
        />
      )}
    </section>
  );
}

/** A saved view's small button in the sidebar, named in full for assistive technology. */
function ViewButton(props: { action: 'Rename' | 'Remove'; view: SavedView; icon: string; onClick: () => void }) {
  return (
    <button
      type="button"
      className="icon"
      aria-label={`${props.action} ${props.view.name}`}
      title={props.action}
      onClick={props.onClick}
      data-testid={`${props.action.toLowerCase()}-view`}
    >
      {props.icon}
    </button>
  );
}

function RemoveViewDialog({
  view,
  onClose,
  onRemoved,
}: {
  view: SavedView;
  onClose: () => void;
  /** After the dialog has closed, with where the view was in the list. */
  onRemoved: (index: number) => void;
}) {
  const action = useAction();
  return (
    <ConfirmDialog
      title="Remove saved view"
      message={`Remove the saved view “${view.name}”? The filters it opens stay as they are on screen.`}
      confirmLabel="Remove"
      busy={action.busy}
      error={action.error}
      onConfirm={async () => {
        const index = useSavedViews.getState().views?.findIndex((v) => v.id === view.id) ?? 0;
        if (await action.run(() => useSavedViews.getState().remove(view.id))) {
          onClose();
          // After the dialog has handed the focus back (to the removed view's button, now gone).
          window.setTimeout(() => onRemoved(Math.max(index, 0)), 0);
        }
      }}
      onClose={onClose}
    />
  );
}
