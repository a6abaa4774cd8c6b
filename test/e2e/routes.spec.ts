import OpenAI from 'openai';
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures.js';
import { openScreen, signInAsDemoAdmin, unique } from './pages/connect.js';
import { KeysPage } from './pages/keys.js';

/**
 * The Routes screen against the embedded server's demo (its catalogue as the routes document's
 * first version, a simulated upstream, no live traffic): each route with its targets, and their
 * state once requests went through the gateway.
 */

const MODEL = 'openai/gpt-4o-mini';

/** A key made in the console, and `count` requests through its gateway tagged with `tag`. */
async function sendRequests(page: Page, tag: string, count: number): Promise<void> {
  await openScreen(page, 'keys');
  const keys = new KeysPage(page);
  await keys.loaded();
  const secret = await keys.create({ project: 'Support Bot', name: unique('routes key') });
  const gatewayUrl = (await page.getByTestId('secret-dialog').getByTestId('gateway-url').textContent())!;
  await keys.closeSecret();
  const client = new OpenAI({
    apiKey: secret,
    baseURL: gatewayUrl,
    maxRetries: 0,
    defaultHeaders: { 'X-SVC-Meta-Caller': tag },
  });
  for (let i = 0; i < count; i++) {
    const answer = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: `Hello from the routes test, ${i}.` }],
    });
    expect(answer.choices[0]?.message.content?.length).toBeGreaterThan(0);
  }
}

test("the Routes screen lists the catalogue's routes with their targets, and their state once traffic went through", async ({
  consolePage: page,
}, testInfo) => {
  await signInAsDemoAdmin(page);
  const tag = unique('e2e-routes').replace(/\W+/g, '-');
  await sendRequests(page, tag, 2);

  await openScreen(page, 'routes');
  const screen = page.getByTestId('routes-screen');
  await expect(screen).toHaveAttribute('data-state', 'ready');
  await expect(page.getByTestId('routes-version-number')).toHaveText(/^\d+$/);
  await expect(page.getByTestId('routes-note')).toContainText('npm run admin -- routes apply');

  // The catalogue's routes, each with at least one target; the service's own route over several providers.
  const routeRows = page.getByTestId('route-row');
  expect(await routeRows.count()).toBeGreaterThan(3);
  const mini = page.locator(`[data-testid="route-row"][data-route="${MODEL}"]`);
  await expect(mini).toContainText('chat');
  await expect(mini).toContainText('fallback');
  await expect(mini.getByTestId('route-price')).toContainText(/\d/);
  const svcTargets = page.locator('[data-testid="route-target"][data-route^="svc/"]');
  expect(await svcTargets.count()).toBeGreaterThan(1);

  // The requests just sent: the route's target answered them, so it is healthy, with attempts.
  const target = page.locator(`[data-testid="route-target"][data-route="${MODEL}"]`).first();
  await expect(target.getByTestId('route-target-state')).toHaveText('Healthy', { timeout: 30_000 });
  await expect(target.getByTestId('route-target-attempts')).toHaveText(/^[1-9]\d*$/);
  await expect(target.getByTestId('route-target-success')).toHaveText(/^\d+(\.\d+)? %$/);
  await expect(target.getByTestId('route-target-p95')).toHaveText(/\d+ ms|\d s/);
  await page.screenshot({ path: testInfo.outputPath('routes.png') });
});
