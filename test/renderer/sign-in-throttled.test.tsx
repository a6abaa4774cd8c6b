import { act, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { App } from '../../renderer/src/app/App.js';
import { bridge, Refusal } from './fake-bridge.js';
import { signedOutOnRemoteProfile } from './signed-out.js';

const THROTTLED = 'too many failed sign-ins: try again in 3 seconds';

beforeEach(signedOutOnRemoteProfile);
afterEach(() => {
  vi.useRealTimers();
});

describe('a throttled sign-in', () => {
  it("says how long to wait, counts it down, and keeps the button off until the server's wait is over", async () => {
    bridge.on('session.signIn', () => {
      throw new Refusal(429, THROTTLED, undefined, 3);
    });
    render(<App />);
    const form = await screen.findByTestId('sign-in-form');
    // Faked from here, after the form is up: the countdown's clock and timers are the test's.
    vi.useFakeTimers();
    fireEvent.change(within(form).getByLabelText('Email'), { target: { value: 'ada@example.com' } });
    fireEvent.change(within(form).getByLabelText('Password'), { target: { value: 'not the password' } });
    await act(async () => {
      fireEvent.submit(form);
      await vi.advanceTimersByTimeAsync(0);
    });

    const button = within(form).getByTestId('submit');
    expect(within(form).getByRole('alert').textContent).toContain(THROTTLED);
    expect(button.textContent).toBe('Try again in 3 s');
    expect(button).toHaveProperty('disabled', true);
    for (const label of ['Try again in 2 s', 'Try again in 1 s', 'Sign in']) {
      await act(() => vi.advanceTimersByTimeAsync(1000));
      expect(button.textContent).toBe(label);
    }
    expect(button).toHaveProperty('disabled', false);
    expect(bridge.callsOf('session.signIn')).toHaveLength(1);
  });
});
