import { act, fireEvent, render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useState } from 'react';
import { beforeEach, describe, expect, it } from 'vitest';
import { CommandLayer } from '../../../renderer/src/commands/CommandLayer.js';
import { useIntents } from '../../../renderer/src/commands/intents.js';
import { useOverlay } from '../../../renderer/src/commands/overlays.js';
import { searchEntries, type PaletteEntry } from '../../../renderer/src/commands/palette-search.js';
import { CommandPalette } from '../../../renderer/src/components/CommandPalette.js';
import { resetOrganisationStores } from '../../../renderer/src/state/organisation-scope.js';
import { SCREENS, useRoute } from '../../../renderer/src/state/route.js';
import { bridge, Refusal } from '../fake-bridge.js';
import { KEYS, serveOrganisation, signedIn } from '../keys/fixtures.js';

/** A page with a button that opens the palette over `entries`, and what ran. */
function PaletteHarness({ entries, ran }: { entries: PaletteEntry[]; ran: string[] }) {
  const [open, setOpen] = useState(false);
  const wired = entries.map((e) => ({ ...e, run: () => ran.push(e.id) }));
  return (
    <>
      <button type="button" onClick={() => setOpen(true)}>
        Open palette
      </button>
      {open && <CommandPalette entriesFor={(text) => searchEntries(wired, text)} onClose={() => setOpen(false)} />}
    </>
  );
}

const ENTRIES: PaletteEntry[] = ['Go to API keys', 'Go to Analytics', 'Go to Request log'].map((title, i) => ({
  id: `e${i}`,
  group: 'Screens',
  title,
  shortcut: `Alt+${i + 1}`,
  run: () => undefined,
}));

async function openHarness() {
  const ran: string[] = [];
  render(<PaletteHarness entries={ENTRIES} ran={ran} />);
  const user = userEvent.setup();
  const opener = screen.getByRole('button', { name: 'Open palette' });
  await user.click(opener);
  const box = screen.getByRole('combobox', { name: 'Go to or run' });
  return { ran, user, opener, box };
}

const activeOption = (box: HTMLElement) => document.getElementById(box.getAttribute('aria-activedescendant') ?? '');

describe('the command palette', () => {
  it('is a combobox over a listbox whose active option the arrow keys move, wrapping at the ends', async () => {
    const { user, box } = await openHarness();
    expect(document.activeElement).toBe(box);
    const list = screen.getByRole('listbox');
    expect(box.getAttribute('aria-controls')).toBe(list.id);
    expect(box.getAttribute('aria-expanded')).toBe('true');
    const options = screen.getAllByRole('option');
    expect(options.map((o) => o.textContent)).toEqual([
      'Go to API keysScreensAlt+1',
      'Go to AnalyticsScreensAlt+2',
      'Go to Request logScreensAlt+3',
    ]);
    expect(activeOption(box)).toBe(options[0]);
    expect(options[0]!.getAttribute('aria-selected')).toBe('true');

    await user.keyboard('{ArrowDown}{ArrowDown}');
    expect(activeOption(box)).toBe(options[2]);
    expect(options[0]!.getAttribute('aria-selected')).toBe('false');
    await user.keyboard('{ArrowDown}');
    expect(activeOption(box)).toBe(options[0]);
    await user.keyboard('{ArrowUp}');
    expect(activeOption(box)).toBe(options[2]);
    // The focus never left the box.
    expect(document.activeElement).toBe(box);
  });

  it('narrows the list as one types, and Enter runs the first match, closes, and gives the focus back', async () => {
    const { ran, user, box, opener } = await openHarness();
    await user.type(box, 'anal');
    expect(screen.getAllByRole('option').map((o) => o.firstChild?.textContent)).toEqual(['Go to Analytics']);
    expect(screen.getByTestId('palette-count').textContent).toBe('1 result');
    await user.keyboard('{Enter}');
    expect(ran).toEqual(['e1']);
    expect(screen.queryByRole('combobox')).toBeNull();
    expect(document.activeElement).toBe(opener);
  });

  it('says when nothing matches, and Enter then runs nothing', async () => {
    const { ran, user, box } = await openHarness();
    await user.type(box, 'zebra');
    expect(screen.queryAllByRole('option')).toEqual([]);
    expect(box.hasAttribute('aria-activedescendant')).toBe(false);
    expect(screen.getByTestId('palette-count').textContent).toBe('Nothing matches');
    await user.keyboard('{Enter}');
    expect(ran).toEqual([]);
    expect(screen.getByRole('combobox')).toBe(box);
  });

  it('closes on Escape without running anything, the focus back where it was', async () => {
    const { ran, user, opener } = await openHarness();
    await user.keyboard('{ArrowDown}{Escape}');
    expect(screen.queryByRole('combobox')).toBeNull();
    expect(ran).toEqual([]);
    expect(document.activeElement).toBe(opener);
  });

  it('runs the option clicked', async () => {
    const { ran, user } = await openHarness();
    await user.click(screen.getByText('Go to Request log'));
    expect(ran).toEqual(['e2']);
  });
});

describe('the console’s commands', () => {
  beforeEach(() => {
    signedIn();
    useOverlay.setState({ shown: null });
    useIntents.setState({ pending: null });
    serveOrganisation({ keys: KEYS });
    bridge.on('views.list', () => ({
      views: [{ id: 'v1', name: 'Errors this week', screen: 'requests', filters: { status: '5xx', range: '7d' } }],
      set_aside: 0,
    }));
  });

  const renderLayer = () => {
    render(
      <>
        <input aria-label="Some field" />
        <CommandLayer shown={SCREENS} />
      </>,
    );
    return userEvent.setup();
  };

  it('opens the palette on Ctrl+K, even from a field, and jumps to a key found by its prefix', async () => {
    const user = renderLayer();
    await user.click(screen.getByLabelText('Some field'));
    await user.keyboard('{Control>}k{/Control}');
    const box = await screen.findByRole('combobox');
    await user.type(box, 'sk_svc_bbbb');
    await waitFor(() => expect(screen.getAllByRole('option')[0]?.textContent).toContain('Search dev'));
    await user.keyboard('{Enter}');
    expect(useRoute.getState()).toMatchObject({ screen: 'keys', params: { key: KEYS[1]!.id } });
  });

  it('offers a whole request id typed as the first entry, and opens the request log on it; not the start of one', async () => {
    const user = renderLayer();
    act(() => useOverlay.getState().show('palette'));
    const box = await screen.findByRole('combobox');
    // The start of a demo id (a hex timestamp) is the start of thousands of ids.
    await user.type(box, 'req_0190abcdef');
    expect(screen.queryByText(/Open request/)).toBeNull();
    await user.type(box, '0123456789abcd');
    expect(screen.getAllByRole('option')[0]?.textContent).toContain('Open request req_0190abcdef0123456789abcd');
    await user.keyboard('{Enter}');
    expect(useRoute.getState()).toMatchObject({
      screen: 'requests',
      params: { request: 'req_0190abcdef0123456789abcd' },
    });
  });

  it('opens a saved view from the palette with its filters', async () => {
    const user = renderLayer();
    act(() => useOverlay.getState().show('palette'));
    await user.type(await screen.findByRole('combobox'), 'errors week');
    await waitFor(() => expect(screen.getAllByRole('option')[0]?.textContent).toContain('Errors this week'));
    await user.keyboard('{Enter}');
    expect(useRoute.getState()).toMatchObject({ screen: 'requests', params: { status: '5xx', range: '7d' } });
  });

  it('runs an action by its shortcut outside the palette, but not while typing in a field', async () => {
    const user = renderLayer();
    useRoute.setState({ screen: 'analytics', params: {} });
    await user.click(screen.getByLabelText('Some field'));
    await user.keyboard('{Alt>}{Shift>}K{/Shift}{/Alt}');
    expect(useRoute.getState().screen).toBe('analytics');
    expect(useIntents.getState().pending).toBeNull();

    (document.activeElement as HTMLElement).blur();
    useRoute.setState({ screen: 'analytics', params: {} });
    await user.keyboard('{Alt>}{Shift>}K{/Shift}{/Alt}');
    expect(useRoute.getState().screen).toBe('keys');
    expect(useIntents.getState().pending).toBe('createKey');

    // Alt+N opens the screens in the navigation's order, from a field too.
    await user.click(screen.getByLabelText('Some field'));
    await user.keyboard('{Alt>}5{/Alt}');
    expect(useRoute.getState().screen).toBe(SCREENS[4]);
  });

  it('offers "Save this view" only where the filters can be saved', async () => {
    const user = renderLayer();
    act(() => useOverlay.getState().show('palette'));
    await user.type(await screen.findByRole('combobox'), 'save');
    expect(screen.queryByText('Save this view…')).toBeNull();
    await user.keyboard('{Escape}');

    act(() => useRoute.getState().go('requests', { range: '7d' }));
    await user.keyboard('{Alt>}{Shift>}S{/Shift}{/Alt}');
    expect(await screen.findByTestId('save-view-dialog')).toBeTruthy();
  });

  const press = (init: KeyboardEventInit) => fireEvent.keyDown(window, init);
  const CHECK_ALERTS = { code: 'KeyA', key: 'A', altKey: true, shiftKey: true };

  it('runs no shortcut while a dialog is open, but keeps Ctrl+K from the browser and closes the palette with it', async () => {
    renderLayer();
    useRoute.setState({ screen: 'analytics', params: {} });
    act(() => useOverlay.getState().show('palette'));
    await screen.findByRole('combobox');
    press(CHECK_ALERTS);
    expect(useRoute.getState().screen).toBe('analytics');
    // fireEvent answers false when the default was prevented: the browser's search bar stays shut.
    expect(fireEvent.keyDown(window, { code: 'KeyK', key: 'k', ctrlKey: true })).toBe(false);
    await waitFor(() => expect(screen.queryByRole('combobox')).toBeNull());
  });

  it('matches Ctrl+K by the letter typed (Dvorak puts K elsewhere), Alt shortcuts by the key’s place', async () => {
    renderLayer();
    press({ code: 'KeyV', key: 'k', ctrlKey: true });
    expect(await screen.findByRole('combobox')).toBeTruthy();
  });

  it('runs an action once for a key held down', async () => {
    renderLayer();
    let checks = 0;
    const { useAlerts } = await import('../../../renderer/src/screens/alerts/alerts-store.js');
    useAlerts.setState({ checkNow: async () => void checks++ });
    press(CHECK_ALERTS);
    press({ ...CHECK_ALERTS, repeat: true });
    press({ ...CHECK_ALERTS, repeat: true });
    expect(checks).toBe(1);
  });

  it('stops listening when the console is gone (signed out)', async () => {
    const { unmount } = render(<CommandLayer shown={SCREENS} />);
    unmount();
    useRoute.setState({ screen: 'analytics', params: {} });
    press({ code: 'Digit1', key: '1', altKey: true });
    expect(useRoute.getState().screen).toBe('analytics');
  });

  it('leaves Enter to an input method composing characters', async () => {
    const user = renderLayer();
    useRoute.setState({ screen: 'analytics', params: {} });
    act(() => useOverlay.getState().show('palette'));
    const box = await screen.findByRole('combobox');
    await user.type(box, 'keys');
    fireEvent.keyDown(box, { key: 'Enter', isComposing: true });
    expect(useRoute.getState().screen).toBe('analytics');
    expect(screen.getByRole('combobox')).toBeTruthy();
  });

  it('closes with the organisation: no palette or pending command survives a sign-out', async () => {
    renderLayer();
    act(() => useOverlay.getState().show('palette'));
    act(() => useIntents.getState().ask('createKey'));
    await screen.findByRole('combobox');
    act(() => resetOrganisationStores());
    await waitFor(() => expect(screen.queryByRole('combobox')).toBeNull());
    expect(useIntents.getState().pending).toBeNull();
  });
});

describe('"Create an API key" from the palette on the keys screen', () => {
  beforeEach(() => {
    signedIn();
    useIntents.setState({ pending: null });
    serveOrganisation({ keys: KEYS });
    bridge.on('api.keyImpact', () => {
      throw new Refusal(404, 'key not found', 'key_id');
    });
  });

  it('opens no dialog without a project to put the key in, and says why', async () => {
    bridge.on('api.projects', () => ({ projects: [] }));
    const { KeysScreen } = await import('../../../renderer/src/screens/keys/KeysScreen.js');
    act(() => useIntents.getState().ask('createKey'));
    render(<KeysScreen />);
    expect((await screen.findByTestId('create-key-no-project')).textContent).toContain('none yet');
    expect(screen.queryByTestId('create-key-dialog')).toBeNull();
  });

  it('names nothing as the one key shown while the keys load', async () => {
    let answer: (keys: { keys: typeof KEYS }) => void = () => {};
    bridge.on('api.listKeys', () => new Promise((resolve) => (answer = resolve)));
    useRoute.setState({ screen: 'keys', params: { key: KEYS[0]!.id } });
    const { KeysScreen } = await import('../../../renderer/src/screens/keys/KeysScreen.js');
    render(<KeysScreen />);
    await waitFor(() => expect(bridge.callsOf('api.listKeys').length).toBeGreaterThan(0));
    expect(screen.queryByTestId('filter-key')).toBeNull();
    act(() => answer({ keys: KEYS }));
    expect((await screen.findByTestId('filter-key')).textContent).toContain(KEYS[0]!.name);
  });
});
