import type { CaseKind } from './cases.js';
import { round, type Timing } from './stats.js';

export interface CaseResult {
  id: string;
  kind: CaseKind;
  path: string;
  server: Timing;
  duckdb: Timing;
  /** Server p50 over DuckDB p50: below 1 the server is faster. */
  ratio: number;
  target: string;
  pass: boolean;
  /** The window's row count as the server and DuckDB saw it (DuckDB for the clock just before and after). */
  check?: { server: number; duckdbMin: number; duckdbMax: number; ok: boolean };
}

export interface Figure {
  figure: string;
  value: number;
  unit: string;
  /** What it is compared with, when anything. */
  reference: string;
  target: string;
  pass: boolean | null;
}

export interface Report {
  meta: {
    rows: number;
    days: number;
    runs: number;
    warmup: number;
    caseSeconds: number;
    loadSeconds: number;
    startedAt: string;
    seconds: number;
    node: string;
    cpus: number;
    cpuModel: string;
    picks: Record<string, string | number>;
  };
  import: { rows: number; seconds: number; rowsPerSecond: number };
  duckdbLoad: { rows: number; seconds: number };
  disk: { telemetryBytes: number; bytesPerRow: number };
  cases: CaseResult[];
  /** Medians of `rounds`, each a run of bare Fastify then one of GET /keys. */
  keysThroughput: {
    keysRps: number;
    bareFastifyRps: number;
    ratio: number;
    seconds: number;
    connections: number;
    rounds: { bareFastifyRps: number; keysRps: number }[];
  };
  keysLatency: {
    idleP99: number;
    loadedP99: number;
    ratio: number;
    idleRequests: number;
    loadedRequests: number;
    parallelSummaries: number;
    summariesCompleted: number;
  };
  memory: { peakRssAnonBytes: number; peakRssAnonMiB: number; peakRssFileMiB: number; samples: number };
  figures: Figure[];
  passed: number;
  failed: number;
}

/** Judges a case against issue 6 section 2. `firstPage` is the unfiltered first page's timing. */
export function judgeCase(kind: CaseKind, server: Timing, duckdb: Timing, firstPage: Timing | undefined) {
  switch (kind) {
    case 'analytics':
      return { target: 'p50 ≤ DuckDB p50, p95 ≤ 100 ms', pass: server.p50 <= duckdb.p50 && server.p95 <= 100 };
    case 'log':
      return { target: 'p95 ≤ 50 ms', pass: server.p95 <= 50 };
    case 'log-offset':
      return {
        target: `p50 ≤ 2× first page p50 (${firstPage ? fmt(firstPage.p50 * 2) : '?'} ms)`,
        pass: firstPage !== undefined && server.p50 <= 2 * firstPage.p50,
      };
    case 'search':
      return { target: 'p95 ≤ 250 ms, p50 ≤ DuckDB ILIKE p50', pass: server.p95 <= 250 && server.p50 <= duckdb.p50 };
  }
}

/** The figures that are not per-query timings. */
export function otherFigures(r: Omit<Report, 'figures' | 'passed' | 'failed'>): Figure[] {
  return [
    {
      figure: 'GET /keys throughput',
      value: round(r.keysThroughput.keysRps, 0),
      unit: 'req/s',
      reference: `bare Fastify ${round(r.keysThroughput.bareFastifyRps, 0)} req/s (${fmt(r.keysThroughput.ratio * 100)}%); medians of ${r.keysThroughput.rounds.length} alternating runs`,
      target: '≥ 50% of bare Fastify',
      pass: r.keysThroughput.ratio >= 0.5,
    },
    {
      figure: 'GET /keys p99 under analytics load',
      value: r.keysLatency.loadedP99,
      unit: 'ms',
      reference: `idle p99 ${fmt(r.keysLatency.idleP99)} ms (${fmt(r.keysLatency.ratio)}×)`,
      target: '≤ 2× idle p99',
      pass: r.keysLatency.ratio <= 2,
    },
    {
      figure: 'import rate (seeding, indexes included)',
      value: round(r.import.rowsPerSecond, 0),
      unit: 'rows/s',
      reference: `${r.import.rows} rows in ${fmt(r.import.seconds)} s`,
      target: '≥ 50,000 rows/s',
      pass: r.import.rowsPerSecond >= 50_000,
    },
    {
      figure: 'server peak anonymous RSS',
      value: r.memory.peakRssAnonMiB,
      unit: 'MiB',
      reference: `${r.memory.samples} samples; file-backed peak ${fmt(r.memory.peakRssFileMiB)} MiB (not counted)`,
      target: '≤ 400 MiB',
      pass: r.memory.peakRssAnonMiB <= 400,
    },
    {
      figure: 'bytes per row on disk',
      value: round(r.disk.bytesPerRow, 1),
      unit: 'B/row',
      reference: `telemetry.db + -wal ${fmt(r.disk.telemetryBytes / 2 ** 20)} MiB`,
      target: '',
      pass: null,
    },
  ];
}

export function fmt(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  return value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2);
}

const mark = (pass: boolean | null) => (pass === null ? '' : pass ? 'pass' : 'FAIL');

function table(header: string[], rows: string[][]): string[] {
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ];
}

export function markdown(report: Report): string {
  const m = report.meta;
  const caseRows = report.cases.map((c) => [
    c.id,
    fmt(c.server.p50),
    fmt(c.server.p95),
    fmt(c.duckdb.p50),
    fmt(c.duckdb.p95),
    `${fmt(c.ratio)}×`,
    c.target,
    mark(c.pass),
  ]);
  const otherRows = report.figures.map((f) => [
    f.figure,
    `${fmt(f.value)} ${f.unit}`,
    f.reference,
    f.target,
    mark(f.pass),
  ]);
  const mismatches = report.cases.filter((c) => c.check && !c.check.ok);
  return [
    `# Benchmark: ${m.rows.toLocaleString('en')} rows over ${m.days} days`,
    '',
    `Run ${m.startedAt} on ${m.cpus} × ${m.cpuModel}, Node ${m.node}; ${m.runs} timed runs per query after ${m.warmup} warm-up ` +
      `(at most ${m.caseSeconds} s per query), times in ms through the real HTTP endpoints; DuckDB in memory, threads=2, ` +
      `same rows, same SQL semantics. Took ${fmt(m.seconds)} s. **${report.passed} pass, ${report.failed} fail.**`,
    '',
    `Filters used: ${Object.entries(m.picks)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')}.`,
    '',
    '## Queries',
    '',
    ...table(
      ['query', 'server p50', 'server p95', 'DuckDB p50', 'DuckDB p95', 'p50 ratio', 'target', 'result'],
      caseRows,
    ),
    '',
    '## Other figures',
    '',
    ...table(['figure', 'value', 'reference', 'target', 'result'], otherRows),
    '',
    mismatches.length === 0
      ? 'Row counts of the server and DuckDB agree on every summary and request-log query.'
      : `Row counts disagree on: ${mismatches.map((c) => c.id).join(', ')}.`,
    '',
  ].join('\n');
}

/** The same tables, aligned for a terminal. */
export function consoleTables(report: Report): string {
  const queries = [
    ['query', 'p50', 'p95', 'DuckDB p50', 'ratio', 'target', 'result'],
    ...report.cases.map((c) => [
      c.id,
      fmt(c.server.p50),
      fmt(c.server.p95),
      fmt(c.duckdb.p50),
      `${fmt(c.ratio)}x`,
      c.target,
      mark(c.pass),
    ]),
  ];
  const others = [
    ['figure', 'value', 'reference', 'target', 'result'],
    ...report.figures.map((f) => [f.figure, `${fmt(f.value)} ${f.unit}`, f.reference, f.target, mark(f.pass)]),
  ];
  return [aligned(queries), '', aligned(others), '', `${report.passed} pass, ${report.failed} fail`].join('\n');
}

function aligned(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]?.length ?? 0)));
  return rows
    .map((r) =>
      r
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
