import { createServer } from 'node:net';
import { join } from 'node:path';
import { expect, startServer, test } from './fixtures.js';
import { addRemoteProfile, openScreen, register, signIn, signInAsDemoAdmin, signOut, unique } from './pages/connect.js';

const PASSWORD = 'correct horse battery';

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
  const { port } = probe.address() as { port: number };
  await new Promise((done) => probe.close(done));
  return port;
}

test('the demo admin signs in with one click and signs out again', async ({ consolePage: page }, testInfo) => {
  await expect(page.getByTestId('embedded-state')).toContainText('running', { timeout: 60_000 });
  await page.screenshot({ path: testInfo.outputPath('connect.png') });
  await signInAsDemoAdmin(page);
  await page.reload();
  // The host keeps the session: a reload lands in the console, not on the sign-in form.
  await expect(page.getByTestId('session-email')).toHaveText('admin@demo.example');
  await signOut(page);
  await expect(page.getByTestId('demo-sign-in')).toBeVisible();
});

test('wrong credentials are refused with the server’s words, at the form', async ({ consolePage: page }) => {
  await expect(page.getByTestId('embedded-state')).toContainText('running', { timeout: 60_000 });
  await signIn(page, 'admin@demo.example', 'not the password');
  const form = page.getByTestId('sign-in-form');
  await expect(form.getByRole('alert')).toHaveText('invalid email or password (401)');
  await expect(page.getByTestId('connect-screen')).toBeVisible();
});

test('register on a remote control plane, sign out, and sign in again', async ({ consolePage: page, shell }) => {
  const server = await startServer(join(shell.dataDir, 'remote'));
  try {
    await addRemoteProfile(page, 'Staging', server.baseUrl);
    const account = { email: `${unique('owner')}@example.com`, password: PASSWORD, organization: unique('Org') };
    await register(page, account);
    await expect(page.getByTestId('session-indicator')).toContainText(`owner · ${account.organization}`);
    await signOut(page);
    await page.getByTestId('profile-Staging').click();
    await signIn(page, account.email, PASSWORD);
    await expect(page.getByTestId('session-email')).toHaveText(account.email);
  } finally {
    await server.stop();
  }
});

test('an unreachable server and a bad address are explained', async ({ consolePage: page }) => {
  await page.getByTestId('add-profile').click();
  const form = page.getByTestId('add-profile-form');
  await form.getByLabel('Name').fill('Typo');
  await form.getByLabel('Control plane address').fill('http://gateway.example.com/api');
  await form.getByRole('button', { name: 'Add connection' }).click();
  await expect(form.getByRole('alert')).toContainText('https');
  await form.getByRole('button', { name: 'Cancel' }).click();

  await addRemoteProfile(page, 'Gone', `http://127.0.0.1:${await closedPort()}/api`);
  await signIn(page, 'someone@example.com', PASSWORD);
  await expect(page.getByTestId('sign-in-form').getByRole('alert')).toContainText('cannot reach the control plane');
});

test('a server without external identity says so', async ({ consolePage: page, shell }) => {
  const server = await startServer(join(shell.dataDir, 'remote'));
  try {
    await addRemoteProfile(page, 'No identity', server.baseUrl);
    await page.getByTestId('mode-identity').click();
    await page.getByLabel('OpenID Connect ID token').fill('eyJhbGciOiJSUzI1NiJ9.e30.c2ln');
    await page.getByTestId('identity-form').getByTestId('submit').click();
    await expect(page.getByTestId('identity-unavailable')).toContainText('does not offer external identity sign-in');
  } finally {
    await server.stop();
  }
});

test('an expired session returns to sign-in and says why', async ({ consolePage: page, shell }) => {
  // Sessions that end four seconds after sign-in, whatever the refreshes.
  const server = await startServer(join(shell.dataDir, 'remote'), {
    env: { SVC_ACCESS_TTL_SECONDS: '2', SVC_REFRESH_TTL_SECONDS: '4' },
  });
  try {
    await addRemoteProfile(page, 'Short sessions', server.baseUrl);
    await register(page, { email: `${unique('brief')}@example.com`, password: PASSWORD, organization: unique('Org') });
    // Every reload of the key list asks the server; once the session has lapsed the answer is 401.
    await openScreen(page, 'keys');
    await expect(async () => {
      if (!(await page.getByTestId('connect-screen').isVisible())) {
        await page.getByRole('button', { name: 'Reload' }).click();
      }
      await expect(page.getByTestId('connect-screen')).toBeVisible({ timeout: 1000 });
    }).toPass({ timeout: 30_000 });
    await expect(page.getByTestId('session-notice')).toContainText('Your session has expired');
    await expect(page.getByTestId('profile-Short sessions')).not.toContainText('signed in');
  } finally {
    await server.stop();
  }
});

for (const [scheme, background] of [
  ['light', 'rgb(247, 247, 248)'],
  ['dark', 'rgb(22, 23, 26)'],
] as const) {
  test.describe(`with the system in ${scheme} mode`, () => {
    test.use({ colorScheme: scheme });
    test(`the console follows it`, async ({ consolePage: page }, testInfo) => {
      await expect(page.locator('html')).toHaveCSS('background-color', background);
      await page.screenshot({ path: testInfo.outputPath(`connect-${scheme}.png`) });
    });
  });
}
