import { parseCsv } from '../../renderer/src/lib/csv.js';
import { expect, test } from './fixtures.js';
import { openScreen, signInAsDemoAdmin } from './pages/connect.js';
import { RequestLog } from './pages/requests.js';

/**
 * The request log against the embedded server's demo organisation (about 50,000 requests
 * over 30 days, many tagged with X-SVC-Meta-* metadata).
 *
 * No requests arrive in the demo, but they leave a window's old edge as time passes, so a
 * total over 24h or 7d can drop between two reads. Where totals are compared exactly, the
 * window is 400d: its old edge is long before the demo's first request.
 */
const WHOLE_DEMO = '400d';

test('search finds a request by its id and by a metadata value', async ({ consolePage: page }) => {
  await signInAsDemoAdmin(page);
  await openScreen(page, 'requests');
  const log = new RequestLog(page);
  const all = await log.total();
  expect(all).toBeGreaterThan(100);

  // A request id from the first page: exactly that request.
  const id = (await log.rows.nth(3).getAttribute('data-req-id'))!;
  await log.search(id);
  await expect(log.pageText).toHaveText('1–1 of 1');
  await expect(log.rows).toHaveCount(1);
  await expect(log.rows.first()).toHaveAttribute('data-req-id', id);
  // Kept in the address: a reload restores the search.
  await expect(page).toHaveURL(new RegExp(`q=${id}`));
  await page.reload();
  await log.settled();
  await expect(log.pageText).toHaveText('1–1 of 1');
  await expect(page.getByTestId('request-search')).toHaveValue(id);

  // A metadata value (an experiment tag on a few requests), over 30 days.
  await log.choose('Time range', 'Last 30 days');
  await log.search('short-context');
  const tagged = await log.total();
  expect(tagged).toBeGreaterThan(0);
  await log.search('');
  const month = await log.total();
  expect(tagged).toBeLessThan(month);
  await log.search('short-context');
  await log.rows.first().click();
  const metadata = log.detail.getByTestId('detail-metadata');
  await expect(metadata.getByRole('row').filter({ hasText: 'experiment' })).toContainText('short-context');

  // The request's trace id, a metadata value found on it alone.
  const traceId = (await metadata.getByRole('row').filter({ hasText: 'trace_id' }).getByRole('cell').textContent())!;
  expect(traceId).toMatch(/^[0-9a-f]{32}$/);
  const openedId = (await log.detailField('req_id').locator('code').textContent())!;
  await log.search(traceId.toUpperCase());
  await expect(log.pageText).toHaveText('1–1 of 1');
  await expect(log.rows.first()).toHaveAttribute('data-req-id', openedId);
});

test('filters change the total, and paging moves through it', async ({ consolePage: page }, testInfo) => {
  await signInAsDemoAdmin(page);
  await openScreen(page, 'requests');
  const log = new RequestLog(page);
  await log.customRange(WHOLE_DEMO);
  const all = await log.total();
  expect(all).toBeGreaterThan(1000);

  await log.choose('Status', '5xx');
  const failed = await log.total();
  expect(failed).toBeGreaterThan(0);
  expect(failed).toBeLessThan(all);
  for (const status of await log.rows.locator('td.status').allTextContents()) expect(status).toMatch(/^5\d\d$/);

  await log.choose('Ended as', 'Gateway timeout');
  const timeouts = await log.total();
  expect(timeouts).toBeGreaterThan(0);
  expect(timeouts).toBeLessThan(failed);
  await expect(log.rows.first().locator('td.status')).toHaveText('504');

  await log.clearFilters();
  await log.customRange(WHOLE_DEMO);
  expect(await log.total()).toBe(all);
  await log.enter('Minimum cost (PKR)', '5');
  const costly = await log.total();
  expect(costly).toBeGreaterThan(0);
  expect(costly).toBeLessThan(all);
  for (const cost of await log.rows.locator('td:nth-child(10)').allTextContents()) {
    expect(Number(cost.replace(/[^\d.]/g, ''))).toBeGreaterThanOrEqual(5);
  }

  await log.enter('Minimum cost (PKR)', '');
  expect(await log.total()).toBe(all);
  await log.choose('Model', 'openai/gpt-4o');
  const oneModel = await log.total();
  expect(oneModel).toBeGreaterThan(0);
  expect(oneModel).toBeLessThan(all);
  for (const model of await log.rows.locator('td:nth-child(2)').allTextContents()) expect(model).toBe('openai/gpt-4o');

  // Paging through the model's requests.
  const first = await log.firstRowId();
  await expect(log.pageText).toHaveText(`1–50 of ${oneModel.toLocaleString('en-US')}`);
  await page.getByTestId('page-next').click();
  await log.settled();
  await expect(log.pageText).toHaveText(`51–100 of ${oneModel.toLocaleString('en-US')}`);
  expect(await log.firstRowId()).not.toBe(first);
  await expect(page).toHaveURL(/page=2/);
  await page.getByTestId('page-previous').click();
  await log.settled();
  expect(await log.firstRowId()).toBe(first);

  await page.screenshot({ path: testInfo.outputPath('requests.png') });
});

test('the detail panel shows every field and copies the request id', async ({ consolePage: page }, testInfo) => {
  await signInAsDemoAdmin(page);
  await openScreen(page, 'requests');
  const log = new RequestLog(page);
  await log.settled();

  // From the keyboard: the first row, one down, Enter.
  await log.rows.first().focus();
  await page.keyboard.press('ArrowDown');
  const id = (await log.rows.nth(1).getAttribute('data-req-id'))!;
  await expect(log.rows.nth(1)).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(log.detail).toBeVisible();
  await expect(log.detailField('req_id')).toContainText(id);
  for (const field of [
    'timestamp',
    'model',
    'status',
    'stream',
    'key',
    'project',
    'metrics.total_ms',
    'metrics.ttft_ms',
    'metrics.tpot_ms',
    'metrics.pre_dispatch_ms',
    'metrics.prompt_tokens',
    'metrics.tokens_generated',
    'metrics.cache_creation_input_tokens',
    'metrics.cache_read_input_tokens',
    'metrics.total_tokens',
    'metrics.tokens_estimated',
    'financials.cost_pkr',
    'financials.is_byok',
    'status_detail.termination_reason',
    'status_detail.upstream_error',
    'upstream.model',
    'user_agent',
  ]) {
    await expect(log.detailField(field), field).not.toBeEmpty();
  }
  await expect(log.detailField('financials.cost_pkr')).toContainText('PKR');

  await log.detail.getByTestId('copy-request-id').click();
  await expect(log.detail.getByTestId('copy-request-id')).toHaveText('Copied');
  // Evaluated as text: the e2e code is typed without the DOM library.
  expect(await page.evaluate('navigator.clipboard.readText()')).toBe(id);
  await page.screenshot({ path: testInfo.outputPath('requests-detail.png') });

  // A non-streamed request's time to first token is unknown, not zero.
  await log.search('');
  const rows = await log.rows.count();
  let checked = false;
  for (let i = 0; i < rows && !checked; i++) {
    const ttft = (await log.rows.nth(i).locator('td').nth(7).textContent())!;
    if (ttft !== '–') continue;
    await log.rows.nth(i).click();
    await expect(log.detailField('stream')).toBeVisible();
    if ((await log.detailField('stream').textContent()) !== 'No') continue;
    await expect(log.detailField('metrics.ttft_ms')).toContainText('–');
    await expect(log.detailField('metrics.ttft_ms')).not.toContainText('0 ms');
    checked = true;
  }
  expect(checked).toBe(true);

  await page.keyboard.press('Escape');
  await expect(log.detail).toBeHidden();
});

test('exports every row of the filter to CSV and to JSON', async ({ consolePage: page }) => {
  await signInAsDemoAdmin(page);
  await openScreen(page, 'requests');
  const log = new RequestLog(page);
  // A few hundred rows: more than three export pages of 200, over a window no request leaves meanwhile.
  await log.customRange(WHOLE_DEMO);
  await log.choose('Status', '5xx');
  const total = await log.total();
  expect(total).toBeGreaterThan(400);
  expect(total).toBeLessThan(2000);

  const csv = await log.export('csv');
  expect(csv.download.suggestedFilename()).toMatch(/^requests-.*\.csv$/);
  const [header, ...lines] = parseCsv(csv.text);
  expect(header).toContain('req_id');
  expect(header).toContain('metrics.total_ms');
  expect(header).toContain('metadata');
  expect(lines).toHaveLength(total);
  for (const line of lines) expect(line).toHaveLength(header!.length);
  const status = header!.indexOf('status');
  for (const line of lines) expect(line[status]).toMatch(/^5\d\d$/);
  const ids = lines.map((line) => line[0]);
  expect(new Set(ids).size).toBe(total);
  await expect(page.getByTestId('export-done')).toHaveText(new RegExp(`^Wrote ${total.toLocaleString('en-US')} rows`));
  // Newest first, as on screen.
  expect(ids[0]).toBe(await log.firstRowId());
  const metadata = header!.indexOf('metadata');
  for (const line of lines) expect(typeof JSON.parse(line[metadata]!)).toBe('object');
  // Beside each UTC timestamp, the same instant in the organisation's reporting zone (the demo's is UTC).
  const [utc, local] = [header!.indexOf('timestamp'), header!.indexOf('timestamp_local')];
  for (const line of lines.slice(0, 20)) {
    expect(line[local]).toMatch(/\+00:00$/);
    expect(Date.parse(line[local]!)).toBe(Math.floor(Date.parse(line[utc]!) / 1000) * 1000);
  }

  const json = await log.export('json');
  expect(json.download.suggestedFilename()).toMatch(/^requests-.*\.json$/);
  const rows = JSON.parse(json.text) as { req_id: string; status: number; metrics: { total_ms: number } }[];
  expect(rows).toHaveLength(total);
  expect(rows.map((row) => row.req_id)).toEqual(ids);
  expect(rows.every((row) => row.status >= 500 && typeof row.metrics.total_ms === 'number')).toBe(true);
});

test('an address whose filters are not among the choices shows them as they are, and they can be cleared', async ({
  consolePage: page,
}) => {
  await signInAsDemoAdmin(page);
  await openScreen(page, 'requests');
  const log = new RequestLog(page);
  await log.settled();
  const unknownKey = '0b5f9c3e-0000-4000-8000-000000000000';
  // A shared address, or one edited by hand (evaluated as text: the e2e code is typed without the DOM library).
  await page.evaluate(`window.location.hash = '#/requests?key=${unknownKey}&status=9xx'`);
  await log.settled();
  const chosen = (label: string) => log.filters.getByLabel(label, { exact: true }).locator('option:checked');
  await expect(chosen('Key')).toHaveText('Unknown key (0b5f9c3e…)');
  await expect(chosen('Status')).toHaveText('Unknown status (9xx)');
  // The server's refusal of the status, where the table would be.
  await expect(page.getByTestId('requests-error')).toContainText('status_category must be one of');

  await log.clearFilters();
  await expect(chosen('Key')).toHaveText('All keys');
  await expect(chosen('Status')).toHaveText('Any status');
  await expect(page.getByTestId('requests-error')).toBeHidden();
  expect(await log.total()).toBeGreaterThan(0);
});

test('between two times: starts from the range shown, says a reversed window, and reads exactly its rows', async ({
  consolePage: page,
}, testInfo) => {
  await signInAsDemoAdmin(page);
  await openScreen(page, 'requests');
  const log = new RequestLog(page);
  await log.choose('Time range', 'Last 7 days');
  const week = await log.total();
  await page.getByTestId('filter-range').selectOption('between');
  // It starts as the week shown, to the minute: the same rows, give or take the minute's edges.
  await expect(page.getByTestId('filter-from')).not.toHaveValue('');
  await expect(page).toHaveURL(/from=.*to=/);
  expect(Math.abs((await log.total()) - week)).toBeLessThan(week / 100);

  // One day in the past, typed: its rows only, and the two rows either side of it outside.
  const end = new Date(Date.now() - 3 * 86_400_000);
  end.setHours(12, 0, 0, 0);
  const start = new Date(end.getTime() - 86_400_000);
  const local = (d: Date) =>
    `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}T${String(d.getHours()).padStart(2, '0')}:00`;
  await page.getByTestId('filter-to').fill(local(start));
  await page.getByTestId('filter-from').fill(local(end));
  await expect(log.filters.getByTestId('field-error')).toContainText('later than');
  await page.getByTestId('filter-from').fill(local(start));
  await page.getByTestId('filter-to').fill(local(end));
  await expect(page).toHaveURL(new RegExp(`to=${encodeURIComponent(local(end))}`));
  await expect(log.filters.getByTestId('field-error')).toHaveCount(0);
  const day = await log.total();
  expect(day).toBeGreaterThan(0);
  const times = await log.rows.locator('time').evaluateAll((nodes) => nodes.map((n) => n.getAttribute('datetime')!));
  for (const time of times) {
    expect(Date.parse(time)).toBeGreaterThanOrEqual(start.getTime());
    expect(Date.parse(time)).toBeLessThan(end.getTime());
  }
  await page.screenshot({ path: testInfo.outputPath('requests-between.png'), fullPage: true });

  // A preset lets the two times go.
  await log.choose('Time range', 'Last 24 hours');
  await expect(page.getByTestId('filter-from')).toHaveCount(0);
  await expect(page).not.toHaveURL(/from=/);
});
