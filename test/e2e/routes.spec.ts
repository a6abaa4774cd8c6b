import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import OpenAI from 'openai';
import type { Page } from '@playwright/test';
import { parse } from 'yaml';
import { expect, test } from './fixtures.js';
import { openScreen, signInAsDemoAdmin, unique } from './pages/connect.js';
import { KeysPage } from './pages/keys.js';
import { RequestLog } from './pages/requests.js';

/**
 * The Routes screen against the embedded server's demo (its catalogue as the routes document's
 * first version, a simulated upstream, no live traffic): each route with its targets, and their
 * state once requests went through the gateway; then a route whose first target is down, applied
 * by the operator's command, and a request's attempts in the request detail.
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

/** The operator's command on the embedded server's data folder; its output. */
function operator(dataDir: string, ...args: string[]): string {
  return execFileSync(
    process.execPath,
    ['--import', 'tsx', 'server/cli.ts', 'admin', '--data-dir', join(dataDir, 'embedded'), ...args],
    { encoding: 'utf8' },
  );
}

/** A loopback port nothing listens on: connections to it are refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

test('a request that failed over shows each of its attempts in the request detail', async ({
  consolePage: page,
  shell,
}, testInfo) => {
  // The operator puts a provider that refuses connections before the route's own target.
  const document = parse(operator(shell.dataDir, 'routes', 'export')) as {
    providers: Record<string, unknown>;
    routes: Record<string, { targets: unknown[] }>;
  };
  document.providers.down = { api: 'openai', base_url: `http://127.0.0.1:${await closedPort()}/v1` };
  document.routes[MODEL]!.targets.unshift({ provider: 'down', model: 'gpt-4o-mini' });
  const file = testInfo.outputPath('routes.json');
  writeFileSync(file, JSON.stringify(document));
  expect(operator(shell.dataDir, 'routes', 'apply', '--file', file)).toMatch(/version \d+/);

  await signInAsDemoAdmin(page);
  const tag = unique('e2e-attempts').replace(/\W+/g, '-');
  await sendRequests(page, tag, 1);

  await openScreen(page, 'requests');
  const log = new RequestLog(page);
  // Enter on the same search asks again, until the row has landed.
  await expect
    .poll(async () => {
      await log.search(tag);
      return log.total();
    })
    .toBe(1);
  await log.rows.first().click();
  const attempts = log.detail.getByTestId('request-attempts');
  await expect(attempts).toBeVisible();
  const attempt = attempts.getByTestId('request-attempt');
  await expect(attempt).toHaveCount(2);
  await expect(attempt.nth(0)).toHaveAttribute('data-decision', 'next');
  await expect(attempt.nth(0)).toContainText('down/gpt-4o-mini');
  await expect(attempt.nth(1)).toHaveAttribute('data-decision', 'served');
  await expect(attempt.nth(1)).toContainText('openai/gpt-4o-mini');
  await page.screenshot({ path: testInfo.outputPath('attempts.png'), fullPage: true });
});
