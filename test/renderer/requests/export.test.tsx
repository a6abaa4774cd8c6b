import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { parseCsv } from '../../../renderer/src/lib/csv.js';
import { CSV_COLUMNS } from '../../../renderer/src/screens/requests/export-file.js';
import {
  EXPORT_CONFIRM_ROWS,
  ExportCancelled,
  exportRequests,
} from '../../../renderer/src/screens/requests/export-flow.js';
import { ExportBar } from '../../../renderer/src/screens/requests/ExportBar.js';
import type { RequestRow } from '../../../renderer/src/screens/requests/request-row.js';
import { resetOrganisationStores } from '../../../renderer/src/state/organisation-scope.js';
import { useRoute } from '../../../renderer/src/state/route.js';
import { useSession } from '../../../renderer/src/state/session.js';
import { bridge, Refusal } from '../fake-bridge.js';
import { nullRow, pagedRows, requestRow } from './rows.js';
import { ME } from '../signed-in.js';

/** jsdom's Blob has no text(); its FileReader reads one. */
function read(blob: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result as string);
    reader.onerror = () => reject(reader.error);
    reader.readAsText(blob);
  });
}

const FILTER = { time_range: '7d', status_category: '5xx' };
const quiet = { signal: new AbortController().signal, onProgress: () => {} };

/** What the browser was handed to download: the anchor's file name and the Blob behind its URL. */
let saved: { name: string; blob: Blob }[];
const blobs = new Map<string, Blob>();

const { createObjectURL, revokeObjectURL } = URL;

beforeEach(() => {
  useSession.setState({ phase: 'console', profileId: 'p1', me: ME });
  resetOrganisationStores();
  useRoute.setState({ screen: 'requests', params: { range: '7d', status: '5xx' } });
  saved = [];
  blobs.clear();
  let n = 0;
  URL.createObjectURL = vi.fn((blob: Blob) => {
    const url = `blob:test/${++n}`;
    blobs.set(url, blob);
    return url;
  });
  URL.revokeObjectURL = vi.fn();
  vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
    saved.push({ name: this.download, blob: blobs.get(this.href)! });
  });
});

afterEach(() => {
  vi.restoreAllMocks();
  URL.createObjectURL = createObjectURL;
  URL.revokeObjectURL = revokeObjectURL;
});

describe('fetching every page of the filter', () => {
  it('asks for pages of 200 by offset with the filter, until a short page, reporting progress', async () => {
    bridge.on('api.requests', ({ query }) => pagedRows(450)(query));
    const progress: [number, number][] = [];
    const outcome = await exportRequests(FILTER, 'json', {
      ...quiet,
      onProgress: ({ fetched, total }) => progress.push([fetched, total]),
    });
    expect(bridge.callsOf('api.requests').map((a) => a.query)).toEqual([
      // Each page starts at the last row written, to see whether the list moved under the export.
      { ...FILTER, limit: 200, offset: 0 },
      { ...FILTER, limit: 200, offset: 199 },
      { ...FILTER, limit: 200, offset: 398 },
    ]);
    expect(progress).toEqual([
      [200, 450],
      [399, 450],
      [450, 450],
    ]);
    expect(outcome).toMatchObject({ rows: 450, skipped: 0 });
    const rows = JSON.parse(await read(outcome.blob)) as RequestRow[];
    expect(rows).toHaveLength(450);
    expect(rows[0]).toEqual(requestRow(0));
    expect(rows[449]).toEqual(requestRow(449));
  });

  it('skips rows a page repeats when new requests arrive during the export, and says the total moved', async () => {
    // Three requests arrive after the first page: everything shifts down three places.
    let arrived = 0;
    bridge.on('api.requests', ({ query }) => {
      const page = pagedRows(450 + arrived, (i) => (i < arrived ? requestRow(-1 - i) : requestRow(i - arrived)))(query);
      arrived = 3;
      return page;
    });
    const outcome = await exportRequests(FILTER, 'csv', quiet);
    const [header, ...lines] = parseCsv(await read(outcome.blob));
    expect(header).toEqual([...CSV_COLUMNS]);
    const ids = lines.map((line) => line[0]);
    expect(new Set(ids).size).toBe(ids.length);
    // Every row that matched when it began, once; the newcomers were above the part already read.
    expect(ids).toEqual(Array.from({ length: 450 }, (_, i) => requestRow(i).req_id));
    expect(outcome).toMatchObject({ rows: 450, totalAtStart: 450, totalAtEnd: 453, skipped: 0 });
  });

  it('rows leaving the window at its old edge shorten the export without skipping any', async () => {
    // After the first page, the 30 oldest rows fall out of the window: the end of the list, not a row moves.
    let left = 0;
    bridge.on('api.requests', ({ query }) => {
      const page = pagedRows(450 - left)(query);
      left = 30;
      return page;
    });
    const outcome = await exportRequests(FILTER, 'json', quiet);
    const ids = (JSON.parse(await read(outcome.blob)) as RequestRow[]).map((row) => row.req_id);
    expect(ids).toEqual(Array.from({ length: 420 }, (_, i) => requestRow(i).req_id));
    expect(outcome).toMatchObject({ rows: 420, totalAtStart: 450, totalAtEnd: 420, skipped: 0 });
  });

  it('rows removed above the point reached move older rows up past it: it says how many may be missing', async () => {
    // After the first page, five rows already written are removed: the rest move up five places.
    let removed = false;
    bridge.on('api.requests', ({ query }) => {
      const kept = (i: number) => requestRow(removed && i >= 10 ? i + 5 : i);
      const page = pagedRows(removed ? 445 : 450, kept)(query);
      removed = true;
      return page;
    });
    const outcome = await exportRequests(FILTER, 'csv', quiet);
    const ids = parseCsv(await read(outcome.blob))
      .slice(1)
      .map((line) => line[0]!);
    // Rows 200 to 203 moved up past the page boundary unseen; the export says so.
    const missing = [200, 201, 202, 203].map((i) => requestRow(i).req_id);
    expect(ids.filter((id) => missing.includes(id))).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
    expect(outcome).toMatchObject({ rows: 446, totalAtStart: 450, totalAtEnd: 445, skipped: 4 });
  });

  it('asks before a very large export, and cancels when told no', async () => {
    const huge = (query: { offset?: number }) => ({
      ...pagedRows(EXPORT_CONFIRM_ROWS + 1)(query),
      // Two pages stand for the rest: the second is short, so the export ends there.
      requests: query.offset ? [requestRow(199), requestRow(200)] : pagedRows(200)(query).requests,
    });
    bridge.on('api.requests', ({ query }) => huge(query));
    const asked: number[] = [];
    const no = async (total: number) => (asked.push(total), false);
    await expect(exportRequests(FILTER, 'csv', { ...quiet, confirmLarge: no })).rejects.toBeInstanceOf(ExportCancelled);
    expect(asked).toEqual([EXPORT_CONFIRM_ROWS + 1]);
    expect(bridge.callsOf('api.requests')).toHaveLength(1);

    const yes = await exportRequests(FILTER, 'csv', { ...quiet, confirmLarge: async () => true });
    expect(yes.rows).toBe(201);

    // Below the limit nothing is asked.
    bridge.on('api.requests', ({ query }) => pagedRows(10)(query));
    const never = vi.fn(async () => false);
    await exportRequests(FILTER, 'csv', { ...quiet, confirmLarge: never });
    expect(never).not.toHaveBeenCalled();
  });

  it('writes an empty but valid file when nothing matches', async () => {
    bridge.on('api.requests', () => ({ total: 0, limit: 200, offset: 0, requests: [] }));
    const csv = await exportRequests(FILTER, 'csv', quiet);
    expect(parseCsv(await read(csv.blob))).toEqual([[...CSV_COLUMNS]]);
    const json = await exportRequests(FILTER, 'json', quiet);
    expect(JSON.parse(await read(json.blob))).toEqual([]);
  });

  it('stops at the next page once cancelled', async () => {
    const controller = new AbortController();
    bridge.on('api.requests', ({ query }) => {
      if (query.offset === 199) controller.abort();
      return pagedRows(5000)(query);
    });
    await expect(exportRequests(FILTER, 'csv', { ...quiet, signal: controller.signal })).rejects.toBeInstanceOf(
      ExportCancelled,
    );
    expect(bridge.callsOf('api.requests')).toHaveLength(2);
  });
});

describe('the CSV of request rows', () => {
  it('has a column for every field of a row, nested fields flattened and metadata as JSON text', async () => {
    const awkward = requestRow(0, {
      user_agent: 'curl/8.5.0, "quoted"',
      metadata: { customer: '=cmd|calc', note: 'line one\nline two', city: 'کراچی' },
    });
    bridge.on('api.requests', () => ({ total: 2, limit: 200, offset: 0, requests: [awkward, nullRow()] }));
    bridge.on('api.reportingZone', () => ({ time_zone: 'Asia/Kathmandu', utc_offset: '+05:45' }));
    const outcome = await exportRequests(FILTER, 'csv', quiet);
    const text = await read(outcome.blob);
    const [header, first, second] = parseCsv(text);
    const cell = (line: string[] | undefined, column: string) => line![header!.indexOf(column)];

    // Every path of a full row is a column, and nothing else is.
    const paths = (value: object, prefix = ''): string[] =>
      Object.entries(value).flatMap(([k, v]) =>
        prefix + k === 'metadata' || v === null || typeof v !== 'object' || Array.isArray(v)
          ? [prefix + k]
          : paths(v, `${prefix}${k}.`),
      );
    expect([...header!].sort()).toEqual([...paths(awkward), 'timestamp_local'].sort());
    // Beside the contract's UTC time, the same instant in the organisation's reporting zone.
    const utc = Date.parse(cell(first, 'timestamp')!);
    expect(cell(first, 'timestamp_local')).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+05:45$/);
    expect(Date.parse(cell(first, 'timestamp_local')!)).toBe(utc - (utc % 1000));

    expect(first).toHaveLength(header!.length);
    expect(cell(first, 'metrics.total_ms')).toBe('812.4');
    expect(cell(first, 'key.name')).toBe('checkout-prod');
    expect(cell(first, 'stream')).toBe('true');
    expect(cell(first, 'user_agent')).toBe('curl/8.5.0, "quoted"');
    // The metadata column is JSON text; its formula-like start is JSON's brace, so no guard is needed.
    expect(JSON.parse(cell(first, 'metadata')!)).toEqual(awkward.metadata);
    // Beyond the contract: the provider that served, and the attempts as a JSON array (their number varies).
    expect(cell(first, 'upstream.provider')).toBe('openai');
    expect(JSON.parse(cell(first, 'upstream.attempts')!)).toEqual(awkward.upstream!.attempts);
    // And the API the request came in on.
    expect(cell(first, 'api')).toBe('chat');
    // Unknowns are empty cells, not zeros.
    expect(second).toHaveLength(header!.length);
    expect(cell(second, 'metrics.ttft_ms')).toBe('');
    expect(cell(second, 'metrics.prompt_tokens')).toBe('');
    expect(cell(second, 'key.id')).toBe('');
    expect(cell(second, 'upstream.model')).toBe('');
    expect(cell(second, 'upstream.provider')).toBe('');
    expect(cell(second, 'upstream.attempts')).toBe('');
    expect(cell(second, 'api')).toBe('');
    expect(cell(second, 'project.name')).toBe('');
    expect(cell(second, 'metrics.tokens_generated')).toBe('0');
  });
});

describe('the export bar', () => {
  it('shows progress against the total, then how many rows it wrote to which file', async () => {
    const pages: (() => void)[] = [];
    bridge.on(
      'api.requests',
      ({ query }) => new Promise((resolve) => pages.push(() => resolve(pagedRows(250)(query)))),
    );
    render(<ExportBar />);
    const user = userEvent.setup();
    await user.click(screen.getByTestId('export-csv'));
    expect(screen.getByTestId('export-csv')).toHaveProperty('disabled', true);
    await waitFor(() => expect(pages).toHaveLength(1));
    pages[0]!();
    await waitFor(() => expect(screen.getByTestId('export-progress').textContent).toContain('200 of 250 rows'));
    const bar = screen.getByRole('progressbar', { name: 'Rows fetched' }) as HTMLProgressElement;
    expect([bar.value, bar.max]).toEqual([200, 250]);
    await waitFor(() => expect(pages).toHaveLength(2));
    pages[1]!();

    const done = await screen.findByTestId('export-done');
    expect(done.textContent).toMatch(/^Wrote 250 rows to requests-\d{4}-\d\d-\d\d-\d{6}\.csv$/);
    expect(saved).toHaveLength(1);
    expect(saved[0]!.name).toMatch(/\.csv$/);
    expect(parseCsv(await read(saved[0]!.blob))).toHaveLength(251);
    expect(bridge.callsOf('api.requests')[0]!.query).toEqual({
      time_range: '7d',
      status_category: '5xx',
      limit: 200,
      offset: 0,
    });
  });

  it('cancels: nothing is saved and it says so', async () => {
    const pages: (() => void)[] = [];
    bridge.on(
      'api.requests',
      ({ query }) => new Promise((resolve) => pages.push(() => resolve(pagedRows(5000)(query)))),
    );
    render(<ExportBar />);
    const user = userEvent.setup();
    await user.click(screen.getByTestId('export-json'));
    await waitFor(() => expect(pages).toHaveLength(1));
    await user.click(screen.getByTestId('export-cancel'));
    expect(screen.getByTestId('export-cancel').textContent).toBe('Cancelling…');
    pages[0]!();
    expect((await screen.findByTestId('export-cancelled')).textContent).toContain('nothing was saved');
    expect(saved).toEqual([]);
    expect(pages).toHaveLength(1);
  });

  it('a very large export waits for confirmation; declining saves nothing', async () => {
    bridge.on('api.requests', ({ query }) => ({ ...pagedRows(200)(query), total: 250_000 }));
    render(<ExportBar />);
    const user = userEvent.setup();
    await user.click(screen.getByTestId('export-csv'));
    const dialog = await screen.findByTestId('confirm-dialog');
    expect(dialog.textContent).toContain('This filter matches 250,000 requests');
    await user.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect((await screen.findByTestId('export-cancelled')).textContent).toContain('nothing was saved');
    expect(saved).toEqual([]);
    expect(bridge.callsOf('api.requests')).toHaveLength(1);

    await user.click(screen.getByTestId('export-json'));
    await user.click(within(await screen.findByTestId('confirm-dialog')).getByTestId('confirm'));
    expect((await screen.findByTestId('export-done')).textContent).toMatch(/^Wrote 200 rows/);
    expect(saved).toHaveLength(1);
  });

  it('says when rows may have been skipped', async () => {
    let removed = false;
    bridge.on('api.requests', ({ query }) => {
      const page = pagedRows(removed ? 445 : 450, (i) => requestRow(removed && i >= 10 ? i + 5 : i))(query);
      removed = true;
      return page;
    });
    render(<ExportBar />);
    await userEvent.setup().click(screen.getByTestId('export-csv'));
    expect((await screen.findByTestId('export-skipped')).textContent).toContain('4 rows may have been skipped');
  });

  it('shows a failure with the server’s words', async () => {
    bridge.on('api.requests', () => {
      throw new Refusal(503, 'analytics backend unavailable');
    });
    render(<ExportBar />);
    await userEvent.setup().click(screen.getByTestId('export-csv'));
    expect((await screen.findByTestId('export-error')).textContent).toBe(
      'Export failed: analytics backend unavailable (503)',
    );
    expect(saved).toEqual([]);
  });
});
