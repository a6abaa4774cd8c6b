import OpenAI from 'openai';
import { expect, test } from './fixtures.js';
import { openScreen, signInAsDemoAdmin, unique } from './pages/connect.js';
import { KeysPage } from './pages/keys.js';
import { RequestLog } from './pages/requests.js';

test('a key made in the console answers through its gateway, shows in the request log, and is refused once revoked', async ({
  consolePage: page,
}, testInfo) => {
  await signInAsDemoAdmin(page);
  await openScreen(page, 'keys');
  const keys = new KeysPage(page);
  await keys.loaded();

  const name = unique('gateway key');
  const secret = await keys.create({ project: 'Support Bot', name });
  const gatewayUrl = (await page.getByTestId('secret-dialog').getByTestId('gateway-url').textContent())!;
  expect(gatewayUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
  await keys.closeSecret();

  // The request log follows live, narrowed to this caller's rows: none yet.
  const tag = unique('e2e-caller').replace(/\W+/g, '-');
  await openScreen(page, 'requests');
  const log = new RequestLog(page);
  await log.search(tag);
  expect(await log.total()).toBe(0);
  await page.getByTestId('follow-toggle').click();
  await expect(page.getByTestId('follow-toggle')).toHaveAttribute('aria-pressed', 'true');
  await page.mouse.move(0, 0); // following pauses while the pointer is over the table

  // A developer's program, with the official SDK, tagged so that the request log finds its rows.
  const client = new OpenAI({
    apiKey: secret,
    baseURL: gatewayUrl,
    maxRetries: 0,
    defaultHeaders: { 'X-SVC-Meta-Caller': tag },
  });
  const answer = await client.chat.completions.create({
    model: 'openai/gpt-4o-mini',
    messages: [{ role: 'user', content: 'Hello from the end-to-end test.' }],
  });
  expect(answer.choices[0]?.message.content?.length).toBeGreaterThan(0);

  // It appears without a reload or a new search: the log follows.
  await expect(log.rows).toHaveCount(1, { timeout: 10_000 });
  await expect(log.rows.first()).toContainText(name);
  await expect(page.getByTestId('follow-status')).toContainText('Live');
  await page.screenshot({ path: testInfo.outputPath('gateway-row.png') });
  const found = async () => {
    await log.search(tag);
    return log.total();
  };

  await openScreen(page, 'keys');
  await keys.loaded();
  await keys.revoke(name, secret.slice(0, 15));
  await expect(
    client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Again?' }] }),
  ).rejects.toBeInstanceOf(OpenAI.AuthenticationError);

  await openScreen(page, 'requests');
  await expect.poll(found, { timeout: 10_000 }).toBe(2);
  await expect(log.rows.first()).toContainText('401');
});
