import { useCallback, useEffect, useMemo } from 'react';
import { CommandPalette } from '../components/CommandPalette.js';
import { ViewNameDialog } from '../components/SaveViewDialog.js';
import { screens } from '../app/screens.js';
import { keyName, useDirectory, type Key, type Project } from '../state/directory.js';
import { useRoute, type Screen } from '../state/route.js';
import { useSavedViews } from '../state/saved-views.js';
import { useCommands, type Command } from './commands.js';
import { useOverlay } from './overlays.js';
import {
  commandEntry,
  isGatewayRequestId,
  looksLikeRequestId,
  MAX_RESULTS,
  searchEntries,
  type PaletteEntry,
} from './palette-search.js';
import { useCommandShortcuts } from './useCommandShortcuts.js';

/**
 * The console's commands at work: their shortcuts, the command palette and the "Save view"
 * dialog, whichever is open. Rendered once, by the shell.
 */
export function CommandLayer({ shown }: { shown: readonly Screen[] }) {
  const commands = useCommands(shown);
  const overlay = useOverlay((s) => s.shown);
  const close = useOverlay((s) => s.close);
  const loadViews = useSavedViews((s) => s.load);
  useCommandShortcuts(commands);

  useEffect(() => {
    void loadViews();
  }, [loadViews]);

  if (overlay === 'palette') return <ConsolePalette commands={commands} onClose={close} />;
  if (overlay === 'saveView') return <SaveCurrentView onClose={close} />;
  return null;
}

/** The palette's entries for the organisation's keys (GET /keys lists the active ones), each with its project's name. */
function keyEntries(keys: readonly Key[] | null, projects: readonly Project[] | null): PaletteEntry[] {
  const go = useRoute.getState().go;
  const projectNames = new Map((projects ?? []).map((p) => [p.id, p.name]));
  return (keys ?? []).map((key) => {
    const project = projectNames.get(key.project_id);
    return {
      id: `key:${key.id}`,
      group: 'Keys',
      title: key.name,
      detail: `API key · ${key.key_prefix}${project ? ` · ${project}` : ''}`,
      run: () => go('keys', { key: key.id }),
    };
  });
}

function requestEntry(id: string): PaletteEntry {
  return {
    id: `request:${id}`,
    group: 'Requests',
    title: `Open request ${id}`,
    detail: 'Request log',
    run: () => useRoute.getState().go('requests', { request: id }),
  };
}

/** The palette over the console's commands, its keys (from the directory the console loads) and a request id typed. */
function ConsolePalette({ commands, onClose }: { commands: readonly Command[]; onClose: () => void }) {
  const keys = useDirectory((s) => s.keys);
  const projects = useDirectory((s) => s.projects);
  const loadDirectory = useDirectory((s) => s.load);

  useEffect(() => {
    void loadDirectory();
  }, [loadDirectory]);

  // Built once per change of the lists, not on every keystroke: an organisation may have thousands of keys.
  const base = useMemo(() => commands.filter((c) => !c.hidden).map(commandEntry), [commands]);
  const withKeys = useMemo(() => [...base, ...keyEntries(keys, projects)], [base, keys, projects]);

  const entriesFor = useCallback(
    (text: string) => {
      // Keys only once something is typed: an organisation may have hundreds.
      const found = searchEntries(text.trim() ? withKeys : base, text);
      if (!looksLikeRequestId(text)) return found;
      // A gateway's id is nothing else; an imported one may be a word the other entries have too.
      const request = requestEntry(text.trim());
      return isGatewayRequestId(text)
        ? [request, ...found].slice(0, MAX_RESULTS)
        : [...found.slice(0, MAX_RESULTS - 1), request];
    },
    [base, withKeys],
  );

  return <CommandPalette entriesFor={entriesFor} onClose={onClose} />;
}

/** Names the filters on screen as a new saved view. */
function SaveCurrentView({ onClose }: { onClose: () => void }) {
  const screen = useRoute((s) => s.screen);
  const params = useRoute((s) => s.params);
  const save = useSavedViews((s) => s.save);
  const keys = useDirectory((s) => s.keys);
  // A name to start from: the screen, and the key it is narrowed to when there is one.
  const suggested = [screens[screen].title, keyName(keys, params.key), params.range].filter(Boolean).join(' · ');
  return (
    <ViewNameDialog
      title="Save this view"
      submitLabel="Save view"
      initialName={suggested}
      hint={`${screens[screen].title} with the filters on screen; listed in the sidebar`}
      onSubmit={(name) => save(name, screen, params)}
      onClose={onClose}
      testId="save-view-dialog"
    />
  );
}
