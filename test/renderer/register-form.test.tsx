import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { App } from '../../renderer/src/app/App.js';
import { bridge, Refusal } from './fake-bridge.js';
import { signedOutOnRemoteProfile } from './signed-out.js';

// As the host words a 422 whose first issue is at ["body", "password"].
const TOO_COMMON = 'password: must not be a commonly used password (one found on lists of leaked passwords)';

beforeEach(signedOutOnRemoteProfile);

/** What assistive technology reads with a control: the texts its aria-describedby names. */
function descriptionOf(control: HTMLElement): string {
  const ids = (control.getAttribute('aria-describedby') ?? '').split(' ').filter(Boolean);
  return ids.map((id) => document.getElementById(id)?.textContent ?? '').join(' ');
}

async function openRegisterForm() {
  render(<App />);
  const user = userEvent.setup();
  await user.click(await screen.findByTestId('mode-register'));
  const form = screen.getByTestId('register-form');
  return { user, form, password: within(form).getByLabelText('Password') };
}

describe('the register form', () => {
  it('states the password rule beside the field before anything is sent', async () => {
    const { password } = await openRegisterForm();
    expect(descriptionOf(password)).toContain('At least 8 characters');
    expect(descriptionOf(password)).toContain('not a commonly used password');
    expect(bridge.callsOf('session.register')).toEqual([]);
  });

  it("shows the server's refusal of the password at the password field", async () => {
    bridge.on('session.register', () => {
      throw new Refusal(422, TOO_COMMON, 'password');
    });
    const { user, form, password } = await openRegisterForm();
    await user.type(within(form).getByLabelText('Email'), 'ada@example.com');
    await user.type(password, 'password123');
    await user.type(within(form).getByLabelText('Organisation'), 'Analytical Engines');
    await user.click(within(form).getByTestId('submit'));

    expect((await within(form).findByRole('alert')).textContent).toBe(TOO_COMMON);
    expect(password.getAttribute('aria-invalid')).toBe('true');
    expect(descriptionOf(password)).toContain(TOO_COMMON);
    expect(within(form).getByLabelText('Organisation').getAttribute('aria-invalid')).toBeNull();
    expect(within(form).getAllByRole('alert')).toHaveLength(1);
  });
});
