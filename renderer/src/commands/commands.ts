import { useMemo } from 'react';
import { screens } from '../app/screens.js';
// In the first chunk already: the shell's alert feed reads it.
import { useAlerts } from '../screens/alerts/alerts-store.js';
import { useRoute, type RouteParams, type Screen } from '../state/route.js';
import { useSavedViews } from '../state/saved-views.js';
import { useSession } from '../state/session.js';
import { useIntents } from './intents.js';
import { useOverlay } from './overlays.js';
import {
  CHECK_ALERTS_SHORTCUT,
  CREATE_KEY_SHORTCUT,
  EXPORT_REQUESTS_SHORTCUT,
  PALETTE_SHORTCUT,
  SAVE_VIEW_SHORTCUT,
  screenShortcut,
  SIGN_OUT_SHORTCUT,
  STORE_PROVIDER_KEY_SHORTCUT,
  type Shortcut,
} from './shortcut.js';
import { THEMES, useTheme } from '../theme/theme-store.js';

/**
 * The console's commands: every global action, with the shortcut that runs it anywhere in the
 * console and the words the command palette finds it by. One list serves the palette, the
 * shortcuts and the labels beside them, so an action cannot have one without the others.
 */

export type CommandGroup = 'Screens' | 'Saved views' | 'Actions';

export interface Command {
  id: string;
  title: string;
  group: CommandGroup;
  /** What the palette shows beside the title (else the group). */
  detail?: string;
  /** More words it is found by, not shown. */
  keywords?: string;
  shortcut?: Shortcut;
  /** Not offered in the palette (the palette's own shortcut). */
  hidden?: boolean;
  run(): void;
}

/** The command palette's own command (its shortcut works while it is open: it closes it). */
export const PALETTE_COMMAND = 'palette';

/** The screens a view can be saved from: the ones whose filters are worth a name. */
export const SAVABLE_SCREENS: readonly Screen[] = ['requests', 'analytics'];

/** The screens' modules come with their chunks (app/screens.ts): a command fetches what it runs. */
async function exportRequests(params: RouteParams): Promise<void> {
  const [{ useExport }, { filterQuery }] = await Promise.all([
    import('../screens/requests/export-store.js'),
    import('../screens/requests/request-query.js'),
  ]);
  await useExport.getState().start('csv', filterQuery(params));
}

/** The commands for the console as it is: the screens in the navigation's order (Alt+1…), the saved views, the actions. */
export function useCommands(shown: readonly Screen[]): Command[] {
  const screen = useRoute((s) => s.screen);
  const views = useSavedViews((s) => s.views);
  return useMemo(() => {
    const go = useRoute.getState().go;
    const toScreens: Command[] = shown.map((name, index) => ({
      id: `screen:${name}`,
      title: `Go to ${screens[name].title}`,
      group: 'Screens',
      shortcut: screenShortcut(index),
      run: () => go(name),
    }));
    const toViews: Command[] = (views ?? []).map((view) => ({
      id: `view:${view.id}`,
      title: view.name,
      group: 'Saved views',
      detail: `Saved view · ${screens[view.screen].title}`,
      run: () => go(view.screen, view.filters),
    }));
    const actions: Command[] = [
      {
        id: PALETTE_COMMAND,
        title: 'Open the command palette',
        group: 'Actions',
        shortcut: PALETTE_SHORTCUT,
        hidden: true,
        run: () => useOverlay.getState().show('palette'),
      },
      {
        id: 'create-key',
        title: 'Create an API key…',
        group: 'Actions',
        keywords: 'new key',
        shortcut: CREATE_KEY_SHORTCUT,
        run: () => {
          go('keys');
          useIntents.getState().ask('createKey');
        },
      },
      {
        id: 'store-provider-key',
        title: 'Store a provider key…',
        group: 'Actions',
        keywords: 'vault BYOK add',
        shortcut: STORE_PROVIDER_KEY_SHORTCUT,
        run: () => {
          go('vault');
          useIntents.getState().ask('storeProviderKey');
        },
      },
      {
        id: 'export-requests',
        title: 'Export the request log as CSV',
        group: 'Actions',
        keywords: 'download file',
        shortcut: EXPORT_REQUESTS_SHORTCUT,
        run: () => {
          // The filters of the request log on screen, or its default view from elsewhere.
          const route = useRoute.getState();
          const params = route.screen === 'requests' ? route.params : {};
          if (route.screen !== 'requests') go('requests');
          void exportRequests(params);
        },
      },
      {
        id: 'check-alerts',
        title: 'Check alerts now',
        group: 'Actions',
        keywords: 'alert rules',
        shortcut: CHECK_ALERTS_SHORTCUT,
        run: () => {
          go('alerts');
          void useAlerts.getState().checkNow();
        },
      },
      ...THEMES.map((theme): Command => ({
        id: `theme:${theme.value}`,
        title: `Use the ${theme.value === 'system' ? 'system’s' : theme.label.toLowerCase()} theme`,
        group: 'Actions',
        keywords: 'theme appearance colours light dark system',
        run: () => void useTheme.getState().choose(theme.value),
      })),
      {
        id: 'sign-out',
        title: 'Sign out',
        group: 'Actions',
        keywords: 'log out session',
        shortcut: SIGN_OUT_SHORTCUT,
        run: () => void useSession.getState().signOut(),
      },
    ];
    if (SAVABLE_SCREENS.includes(screen)) {
      actions.splice(1, 0, {
        id: 'save-view',
        title: 'Save this view…',
        group: 'Actions',
        keywords: `filters ${screens[screen].title}`,
        shortcut: SAVE_VIEW_SHORTCUT,
        run: () => useOverlay.getState().show('saveView'),
      });
    }
    return [...toScreens, ...toViews, ...actions];
  }, [shown, views, screen]);
}
