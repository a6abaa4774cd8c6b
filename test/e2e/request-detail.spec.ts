import { expect, test } from './fixtures.js';
import { openScreen, signInAsDemoAdmin } from './pages/connect.js';
import { RequestLog } from './pages/requests.js';

/**
 * A request's detail as a picture, against the embedded server's demo requests: its timeline
 * to scale, its tokens and its cost split at the model's prices, which must add up to what the
 * demo settled (the demo prices its requests as the gateway does).
 */

const msIn = (text: string) => Number(/([\d,.]+) ms/.exec(text)?.[1]?.replaceAll(',', '') ?? NaN);

test('the timeline, tokens and cost of a streamed and of a non-streamed request', async ({ consolePage: page }) => {
  await signInAsDemoAdmin(page);
  await openScreen(page, 'requests');
  const log = new RequestLog(page);
  await log.choose('Status', '2xx');
  await page.getByLabel('Rows per page').selectOption('200');
  await log.settled();

  const seen = { streamed: false, whole: false };
  const rows = await log.rows.count();
  for (let i = 0; i < rows && !(seen.streamed && seen.whole); i++) {
    await log.rows.nth(i).click();
    const detail = log.detail;
    const streamed = (await log.detailField('stream').textContent()) === 'Yes';
    if (seen[streamed ? 'streamed' : 'whole']) continue;
    seen[streamed ? 'streamed' : 'whole'] = true;

    // Drawn to scale: the parts drawn are the phases listed, and they add up to the total latency.
    const bar = detail.getByTestId('timeline-bar');
    const drawn = await bar
      .locator('[data-part]')
      .evaluateAll((parts) => parts.map((p) => p.getAttribute('data-part')));
    expect(drawn).toEqual(streamed ? ['pre_dispatch', 'first_token', 'generation'] : ['pre_dispatch', 'upstream']);
    const total = msIn((await log.detailField('metrics.total_ms').textContent()) ?? '');
    let sum = 0;
    for (const part of drawn)
      sum += msIn((await detail.getByTestId(`timeline-${part}`).locator('dd').textContent()) ?? '');
    expect(Math.abs(sum - total)).toBeLessThan(0.25);
    await expect(bar).toHaveAttribute('aria-label', /^Timeline, [\d,.]+ ms in all: before dispatch/);
    if (streamed) await expect(detail.getByTestId('timeline-ttft')).toContainText(/\d ms$/);
    else await expect(detail.getByTestId('timeline-ttft')).toContainText('– (not streamed');

    // The cost split at the model's prices comes to what was settled.
    await expect(detail.getByTestId('cost-check')).toHaveText(/^The parts add up to the settled cost/);
    await expect(detail.getByTestId('cost-parts').getByRole('row')).toHaveCount(
      1 + 4 + 1 + ((await detail.getByTestId('cost-byok-share').count()) > 0 ? 1 : 0),
    );
    await expect(detail.getByTestId('tokens-generated')).toContainText(/\d/);

    if (streamed) {
      await detail.scrollIntoViewIfNeeded();
      await page.screenshot({ path: 'test-results/e2e/request-detail.png' });
    }
  }
  expect(seen).toEqual({ streamed: true, whole: true });
});
