import { act, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import type { CallResult } from '#contract';
import { SavedViewsNav } from '../../../renderer/src/app/SavedViewsNav.js';
import { CommandLayer } from '../../../renderer/src/commands/CommandLayer.js';
import { useOverlay } from '../../../renderer/src/commands/overlays.js';
import { SCREENS, useRoute } from '../../../renderer/src/state/route.js';
import { bridge, Refusal } from '../fake-bridge.js';
import { KEYS, serveOrganisation, signedIn } from '../keys/fixtures.js';

type View = CallResult<'views.save'>;

/** The host's saved views, as the fake bridge keeps them for a test. */
function serveViews(start: View[]) {
  // Copies: a rename must not change the constants other tests start from.
  const views = start.map((view) => ({ ...view }));
  bridge.on('views.list', () => ({ views: [...views].sort((a, b) => a.name.localeCompare(b.name)), set_aside: 0 }));
  bridge.on('views.save', ({ name, screen, filters }) => {
    if (views.some((v) => v.name.toLowerCase() === name.toLowerCase())) {
      throw new Refusal(409, `there is already a saved view named "${name}"`, 'name');
    }
    const view = { id: `v${views.length + 1}`, name, screen, filters };
    views.push(view);
    return view;
  });
  bridge.on('views.rename', ({ viewId, name }) => {
    const view = views.find((v) => v.id === viewId)!;
    view.name = name;
    return view;
  });
  bridge.on('views.remove', ({ viewId }) => {
    views.splice(
      views.findIndex((v) => v.id === viewId),
      1,
    );
    return {};
  });
  return views;
}

const ERRORS: View = {
  id: 'v0',
  name: 'Errors this week',
  screen: 'requests',
  filters: { status: '5xx', range: '7d' },
};

beforeEach(() => {
  signedIn();
  useOverlay.setState({ shown: null });
  serveOrganisation({ keys: KEYS });
});

function renderConsole() {
  render(
    <>
      <SavedViewsNav />
      <CommandLayer shown={SCREENS} />
    </>,
  );
  return userEvent.setup();
}

describe('saved views', () => {
  it('saves the filters on screen, without the page or the open request, and lists the view in the sidebar', async () => {
    const views = serveViews([]);
    const user = renderConsole();
    expect(await screen.findByText(/None yet/)).toBeTruthy();
    act(() => useRoute.getState().go('requests', { status: '5xx', range: '7d', page: '3', request: 'req_0001' }));
    act(() => useOverlay.getState().show('saveView'));
    const name = within(await screen.findByTestId('save-view-dialog')).getByLabelText('Name');
    await user.clear(name);
    await user.type(name, '  Failing calls ');
    await user.click(screen.getByTestId('view-name-submit'));

    await waitFor(() => expect(screen.queryByTestId('save-view-dialog')).toBeNull());
    expect(bridge.callsOf('views.save')).toEqual([
      { profileId: 'p1', name: 'Failing calls', screen: 'requests', filters: { status: '5xx', range: '7d' } },
    ]);
    expect(views).toHaveLength(1);
    const link = await screen.findByRole('link', { name: 'Failing calls' });
    // The view on screen is the one marked in the sidebar ("true": the screen's link is the page).
    expect(link.getAttribute('aria-current')).toBe('true');
    expect(link.getAttribute('href')).toBe('#/requests?range=7d&status=5xx');
  });

  it('shows a name another view has at the name field, and keeps the dialog open', async () => {
    serveViews([ERRORS]);
    const user = renderConsole();
    await screen.findByRole('link', { name: 'Errors this week' });
    act(() => useRoute.getState().go('analytics', { range: '7d' }));
    act(() => useOverlay.getState().show('saveView'));
    const dialog = await screen.findByTestId('save-view-dialog');
    const name = within(dialog).getByLabelText('Name');
    await user.clear(name);
    await user.type(name, 'ERRORS this week');
    await user.click(within(dialog).getByTestId('view-name-submit'));
    const error = await within(dialog).findByTestId('field-error');
    expect(error.textContent).toBe('there is already a saved view named "ERRORS this week"');
    expect(name.getAttribute('aria-invalid')).toBe('true');
    expect(screen.getByTestId('save-view-dialog')).toBe(dialog);
  });

  it('opens, renames and removes a view from the sidebar', async () => {
    serveViews([ERRORS]);
    const user = renderConsole();
    await user.click(await screen.findByRole('link', { name: 'Errors this week' }));
    expect(useRoute.getState()).toMatchObject({ screen: 'requests', params: { status: '5xx', range: '7d' } });

    await user.click(screen.getByRole('button', { name: 'Rename Errors this week' }));
    const name = within(await screen.findByTestId('rename-view-dialog')).getByLabelText('Name');
    await user.clear(name);
    await user.type(name, 'Server errors');
    await user.keyboard('{Enter}');
    expect(await screen.findByRole('link', { name: 'Server errors' })).toBeTruthy();
    expect(bridge.callsOf('views.rename')).toEqual([{ profileId: 'p1', viewId: 'v0', name: 'Server errors' }]);

    await user.click(screen.getByRole('button', { name: 'Remove Server errors' }));
    await user.click(await screen.findByTestId('confirm'));
    await waitFor(() => expect(screen.queryByRole('link', { name: 'Server errors' })).toBeNull());
    expect(bridge.callsOf('views.remove')).toEqual([{ profileId: 'p1', viewId: 'v0' }]);
    // The focus does not fall to the page: with no view left, to the list's heading.
    await waitFor(() => expect(document.activeElement?.textContent).toBe('Saved views'));
  });

  it('moves the focus to the next view when one is removed', async () => {
    serveViews([ERRORS, { ...ERRORS, id: 'v9', name: 'Slow calls' }]);
    const user = renderConsole();
    await screen.findByRole('link', { name: 'Slow calls' });
    await user.click(screen.getByRole('button', { name: 'Remove Errors this week' }));
    await user.click(await screen.findByTestId('confirm'));
    await waitFor(() => expect(document.activeElement).toBe(screen.getByRole('link', { name: 'Slow calls' })));
  });

  it('says when views of the file could not be read', async () => {
    serveViews([ERRORS]);
    bridge.on('views.list', () => ({ views: [ERRORS], set_aside: 2 }));
    renderConsole();
    expect((await screen.findByTestId('views-set-aside')).textContent).toContain('2 saved views could not be read');
  });
});
