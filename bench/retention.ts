// The retention section (issue 54): a day of rows deleted while the gateway runs at its
// closed-loop rate. The gateway's p99 over the deletion is compared with its p99 over as long a
// window just before it, in the same run; the sweeper's longest batch is the longest a batch of
// the gateway's rows waited behind a deletion on the writing thread.
import BetterSqlite3 from 'better-sqlite3';
import { retentionHorizon } from '../server/domain/retention.js';
import { chatBody, createKey } from './gateway.js';
import type { ApiClient } from './http.js';
import { agent, call, ok, type Target } from './open-loop.js';
import type { Child } from './processes.js';
import { aligned, figureRows, fmt, quickNote, table, tally, type Figure, type GatewayOnlyReport } from './report.js';
import { percentile, round, sleep } from './stats.js';

/** Requests in flight at once: the gateway's closed-loop rate on this machine, as its throughput case. */
const CONNECTIONS = 32;
/** The longest the deletion is waited for. */
const DELETION_TIMEOUT_MS = 10 * 60_000;

export interface RetentionReport {
  setup: string;
  rowsBefore: number;
  /** `batches`: deletions, each a transaction of rows and one of their search terms (expire-terms.ts). */
  deleted: { rows: number; terms: number; batches: number; ms: number; longestBatchMs: number };
  /** Rows older than the horizon still in the store after the sweep (the newest rowid is kept on purpose). */
  leftOlder: number;
  baseline: Latency;
  during: Latency;
  figures: Figure[];
}

interface Latency {
  requests: number;
  failed: number;
  p50: number;
  p99: number;
}

interface Done {
  endAt: number;
  ms: number;
  ok: boolean;
}

const SWEPT = /"msg":"retention: old request rows deleted"/;

/** The sweeper's line for this sweep, once it is in the server's log. */
function sweptLine(server: Child, from: number): RetentionReport['deleted'] {
  const line = server
    .log()
    .slice(from)
    .split('\n')
    .find((text) => SWEPT.test(text));
  if (!line) throw new Error('no sweep line');
  const { rows, terms, batches, ms, longestBatchMs } = JSON.parse(line) as RetentionReport['deleted'];
  return { rows, terms, batches, ms, longestBatchMs };
}

function latencyOf(calls: Done[], from: number, to: number): Latency {
  const inside = calls.filter((c) => c.endAt >= from && c.endAt < to);
  const times = inside.map((c) => c.ms).sort((a, b) => a - b);
  return {
    requests: inside.length,
    failed: inside.filter((c) => !c.ok).length,
    p50: round(percentile(times, 50), 3),
    p99: round(percentile(times, 99), 3),
  };
}

function rowsOlderThan(telemetryPath: string, before: number): number {
  const db = new BetterSqlite3(telemetryPath, { readonly: true });
  try {
    return (db.prepare('SELECT COUNT(*) AS n FROM requests WHERE ts < ?').get(before) as { n: number }).n;
  } finally {
    db.close();
  }
}

/**
 * Drives the gateway closed loop, starts the deletion of every row older than a day (the demo
 * organisation's retention set to one day through the API, which sweeps at once), and times the
 * requests that ended while it ran against those of as long a window before.
 */
export async function measureRetention(o: {
  api: ApiClient;
  server: Child;
  gatewayUrl: string;
  telemetryPath: string;
  baselineSeconds: number;
  now: () => number;
  log: (line: string) => void;
}): Promise<RetentionReport> {
  const projects = JSON.parse(await o.api.get('/projects')) as { projects: { id: string }[] };
  const key = await createKey(o.api, projects.projects[0]!.id, 'bench retention', true);
  const catalogue = JSON.parse(await o.api.get('/models')) as { models: { id: string; active: boolean }[] };
  const model = catalogue.models.find((m) => m.active)!.id;
  const target: Target = { name: 'gateway', url: o.gatewayUrl, authorization: `Bearer ${key.api_key}` };
  const body = chatBody(model, 'Benchmark prompt: what does retention cost a gateway?', false);
  const horizon = retentionHorizon(1, o.now())!;
  const rowsBefore = rowsOlderThan(o.telemetryPath, horizon);

  const dispatcher = agent();
  const calls: Done[] = [];
  let stop = false;
  const worker = async () => {
    while (!stop) {
      const sent = performance.now();
      try {
        const answer = await call(dispatcher, target, body);
        calls.push({ endAt: answer.endAt, ms: answer.endAt - sent, ok: ok(answer.status) });
      } catch {
        calls.push({ endAt: performance.now(), ms: performance.now() - sent, ok: false });
      }
    }
  };
  const workers = Array.from({ length: CONNECTIONS }, worker);
  try {
    // A second of warm-up, then the baseline window, then the deletion.
    await sleep(1000);
    const baselineFrom = performance.now();
    await sleep(o.baselineSeconds * 1000);
    const logFrom = o.server.log().length;
    o.log(`retention: deleting ${rowsBefore} rows older than a day while the gateway runs`);
    const deletionFrom = performance.now();
    const put = await o.api.send('PUT', '/organization/retention', { days: 1 });
    if (put.status !== 200) throw new Error(`PUT /organization/retention: ${put.status} ${put.text.slice(0, 300)}`);
    const deadline = deletionFrom + DELETION_TIMEOUT_MS;
    while (!SWEPT.test(o.server.log().slice(logFrom))) {
      if (performance.now() > deadline) throw new Error('the deletion did not end in time');
      await sleep(50);
    }
    const deletionTo = performance.now();
    stop = true;
    await Promise.all(workers);
    const deleted = sweptLine(o.server, logFrom);
    const length = deletionTo - deletionFrom;
    // The window before the deletion, as long as it (or the whole baseline, when shorter).
    const baseline = latencyOf(calls, Math.max(baselineFrom, deletionFrom - length), deletionFrom);
    const during = latencyOf(calls, deletionFrom, deletionTo);
    const leftOlder = rowsOlderThan(o.telemetryPath, horizon);
    const ratio = round(during.p99 / baseline.p99, 2);
    return {
      setup:
        `${rowsBefore.toLocaleString('en')} rows older than a day deleted (the demo organisation's retention ` +
        `set to 1 day with PUT /organization/retention) while ${CONNECTIONS} connections call the gateway ` +
        `closed loop (non-streamed chat completions, simulated upstream answering at once); the gateway's ` +
        `requests that ended during the deletion against those of as long a window just before it.`,
      rowsBefore,
      deleted,
      leftOlder,
      baseline,
      during,
      figures: [
        {
          figure: 'gateway p99 while retention deletes a day of rows (closed loop)',
          value: during.p99,
          unit: 'ms',
          reference:
            `p99 ${baseline.p99} ms just before (${ratio}×); p50 ${during.p50} vs ${baseline.p50} ms; ` +
            `${during.requests} and ${baseline.requests} requests, ${during.failed + baseline.failed} failed`,
          target: `≤ 1.2× the p99 before (${round(baseline.p99 * 1.2, 3)} ms)`,
          pass: during.p99 <= baseline.p99 * 1.2 && during.failed === 0,
        },
        {
          figure: 'longest a batch of rows waited behind a deletion',
          value: deleted.longestBatchMs,
          unit: 'ms',
          reference:
            `${deleted.rows.toLocaleString('en')} rows and ${deleted.terms.toLocaleString('en')} search terms in ` +
            `${deleted.batches} deletions of two transactions each over ${round(deleted.ms / 1000, 1)} s; ${leftOlder} older row(s) left`,
          target: '≤ 100 ms',
          pass: deleted.longestBatchMs <= 100 && deleted.rows >= rowsBefore - 1,
        },
      ],
    };
  } finally {
    stop = true;
    await Promise.all(workers);
    await dispatcher.close();
  }
}

/** `npm run bench -- --only retention`: the section alone, on a store of two days of rows. */
export interface RetentionOnlyReport extends Omit<GatewayOnlyReport, 'gateway'> {
  retention: RetentionReport;
}

export function retentionMarkdown(report: RetentionOnlyReport): string {
  const m = report.meta;
  const r = report.retention;
  return [
    `# Benchmark: retention (${m.rows.toLocaleString('en')} rows seeded over two days)`,
    '',
    ...quickNote(m),
    `Run ${m.startedAt} on ${m.cpus} × ${m.cpuModel}, Node ${m.node}. Took ${fmt(m.seconds)} s. ` +
      `**${report.passed} pass, ${report.failed} fail.**`,
    '',
    r.setup,
    '',
    ...table(['figure', 'value', 'reference', 'target', 'result'], figureRows(r.figures)),
    '',
  ].join('\n');
}

export function retentionConsole(report: RetentionOnlyReport): string {
  const rows = [
    ['retention figure', 'value', 'reference', 'target', 'result'],
    ...figureRows(report.retention.figures),
  ];
  return [aligned(rows), '', tally(report)].join('\n');
}
