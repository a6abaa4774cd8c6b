import { expect, type Page } from '@playwright/test';
import type { Screen } from '../../../renderer/src/state/screen-names.js';

/** The connection screen and the shell's navigation, as a user works them. */

export async function signInAsDemoAdmin(page: Page): Promise<void> {
  await expect(page.getByTestId('embedded-state')).toContainText('running', { timeout: 60_000 });
  await page.getByTestId('demo-sign-in').click();
  await expect(page.getByTestId('session-email')).toHaveText('admin@demo.example');
}

export async function addRemoteProfile(page: Page, name: string, baseUrl: string): Promise<void> {
  await page.getByTestId('add-profile').click();
  const form = page.getByTestId('add-profile-form');
  await form.getByLabel('Name').fill(name);
  await form.getByLabel('Control plane address').fill(baseUrl);
  await form.getByRole('button', { name: 'Add connection' }).click();
  await expect(page.getByRole('heading', { name })).toBeVisible();
}

export interface Account {
  email: string;
  password: string;
  organization: string;
}

/** Registers on the chosen connection and waits for the console. */
export async function register(page: Page, account: Account): Promise<void> {
  await page.getByTestId('mode-register').click();
  const form = page.getByTestId('register-form');
  await form.getByLabel('Email').fill(account.email);
  await form.getByLabel('Password').fill(account.password);
  await form.getByLabel('Organisation').fill(account.organization);
  await form.getByTestId('submit').click();
  await expect(page.getByTestId('session-email')).toHaveText(account.email);
}

export async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.getByTestId('mode-signIn').click();
  const form = page.getByTestId('sign-in-form');
  await form.getByLabel('Email').fill(email);
  await form.getByLabel('Password').fill(password);
  await form.getByTestId('submit').click();
}

export async function signOut(page: Page): Promise<void> {
  await page.getByTestId('sign-out').click();
  await expect(page.getByTestId('connect-screen')).toBeVisible();
}

export async function openScreen(page: Page, screen: Screen): Promise<void> {
  await page.getByTestId(`nav-${screen}`).click();
  await expect(page.getByTestId(`nav-${screen}`)).toHaveAttribute('aria-current', 'page');
}

let counter = 0;
/** A name no other test (or earlier run) has used. */
export function unique(prefix: string): string {
  counter += 1;
  return `${prefix}-${Date.now().toString(36)}-${process.pid}-${counter}`;
}
