import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LoadBoundary } from '../../../renderer/src/app/LoadBoundary.js';
import { retryableLazy } from '../../../renderer/src/app/retryable-lazy.js';

function Keys() {
  return <p>The keys screen</p>;
}

/** A chunk that fails to load the first time (a network blip, a rebuilt dist) and loads after. */
function flakyChunk() {
  let calls = 0;
  const load = vi.fn(() => {
    calls += 1;
    return calls === 1
      ? Promise.reject(new Error('Failed to fetch dynamically imported module'))
      : Promise.resolve({ Keys });
  });
  return { load, entry: retryableLazy(load, 'Keys') };
}

describe('a screen whose chunk fails to load', () => {
  // React reports the caught error on the console; it is the case under test, not noise to show.
  const quiet = vi.spyOn(console, 'error').mockImplementation(() => {});
  afterEach(() => quiet.mockClear());

  it('says what could not be loaded, and Try again renders the screen', async () => {
    const { load, entry } = flakyChunk();
    render(
      <div>
        <nav>Navigation</nav>
        <LoadBoundary title="API keys" retry={entry.retry}>
          {() => <entry.component />}
        </LoadBoundary>
      </div>,
    );
    expect((await screen.findByTestId('load-error')).textContent).toContain('Could not load API keys.');
    screen.getByText('Navigation');
    screen.getByRole('button', { name: 'Reload the console' });

    await userEvent.click(screen.getByRole('button', { name: 'Try again' }));
    await screen.findByText('The keys screen');
    expect(screen.queryByTestId('load-failed')).toBeNull();
    expect(load).toHaveBeenCalledTimes(2);
  });

  it('loads again after a failed preload, and only once when it succeeds', async () => {
    const { load, entry } = flakyChunk();
    await expect(entry.preload()).rejects.toThrow('dynamically imported');
    render(
      <LoadBoundary title="API keys" retry={entry.retry}>
        {() => <entry.component />}
      </LoadBoundary>,
    );
    await screen.findByText('The keys screen');
    await entry.preload();
    expect(load).toHaveBeenCalledTimes(2);
  });
});

describe('a screen whose chunk has already loaded', () => {
  it('renders at once, with no "Opening…" fallback in between', async () => {
    const entry = retryableLazy(() => Promise.resolve({ Keys }), 'Keys');
    await entry.preload();
    render(
      <LoadBoundary title="API keys" retry={entry.retry}>
        {() => <entry.component />}
      </LoadBoundary>,
    );
    // No await: the first commit already holds the screen (a lazy() wrapper would have suspended).
    screen.getByText('The keys screen');
    expect(screen.queryByText('Opening API keys…')).toBeNull();
  });

  it('keeps one component for a mounted screen, so a later render does not remount it', async () => {
    const entry = retryableLazy(() => Promise.resolve({ Keys }), 'Keys');
    const before = entry.component;
    await entry.preload();
    expect(entry.component).toBe(before);
  });
});
