import type { CaseKind } from './cases.js';
import type { DiskBytes } from './disk-bytes.js';
import type { ImportFigures } from './import-files.js';
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
  /** Shown as it is, rounded where it is made (a ratio to two significant digits), rather than by `fmt`. */
  asIs?: boolean;
}

/** How many of each measurement the gateway section takes. */
export interface GatewayCounts {
  /** Rounds of each open-loop case (latency, first byte), the targets' order reversed every other one. */
  openLoopRounds: number;
  /** Alternating rounds of the throughput case, the proxy's run then the gateway's. */
  throughputRounds: number;
  /** Requests whose row is looked for. */
  visibilitySamples: number;
  /** Keys created, used, deleted and tried again. */
  revocationTrials: number;
}

/** How many of each measurement the other APIs' figures take (bench/gateway-apis.ts). */
export interface ApisCounts {
  /** Rounds of each open-loop case (Messages and Responses, non-streamed and streamed). */
  openLoopRounds: number;
  /** Alternating rounds of the embeddings throughput case, the proxy's run then the gateway's. */
  throughputRounds: number;
}

/** How many of each measurement the failover section takes. */
export interface FailoverCounts {
  /** Rounds of the open-loop case of the four targets. */
  rounds: number;
  /** Routes applied, each timed until both gateways serve the new route. */
  applySamples: number;
}

/** How many of each measurement the console section takes. */
export interface ConsoleCounts {
  /** Web shells started on a new data folder. */
  firstLaunches: number;
  /** Page loads to the sign-in screen, each in a new browser context. */
  loads: number;
  /** Sign-ins to the dashboard (the first is judged). */
  signIns: number;
  /** Rounds over every screen of the navigation. */
  switchRounds: number;
  /** Pages of the request log scrolled through. */
  scrollPages: number;
}

/**
 * How many of each measurement the run takes, every section's: its defaults, or with `--quick` the
 * fewest that still yield every figure (a smoke test's run, whose figures are not to be read).
 */
export interface Counts {
  /** NDJSON files imported one after the other, of the first `rows` seeded rows (null: every one). */
  import: { files: number; rows: number | null };
  /** Rounds of every query before the cases are timed: the default warms each analytics worker. */
  serverWarmRounds: number;
  /** Alternating rounds of GET /keys against bare Fastify. */
  keysThroughputRounds: number;
  gateway: GatewayCounts;
  apis: ApisCounts;
  failover: FailoverCounts;
  console: ConsoleCounts;
}

export interface Report {
  meta: {
    /** `--quick`: the fewest samples of every figure, which are then not to be read. */
    quick: boolean;
    counts: Counts;
    rows: number;
    days: number;
    runs: number;
    /** Timed runs of a query whose runs take under `ms` in all. */
    fast: { runs: number; ms: number };
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
  /** The seeded rows as NDJSON files, through `admin import-requests` and DuckDB's read_json (issue 31). */
  importFiles: ImportFigures;
  duckdbLoad: { rows: number; seconds: number };
  disk: { telemetryBytes: number; bytesPerRow: number };
  /** Where the bytes go, against DuckDB's file of the same rows (issue 54). */
  bytes: DiskBytes;
  cases: CaseResult[];
  /** The same cases on a store filled by `admin import-requests`; null when it did not hold every row. */
  importedCases: CaseResult[] | null;
  /** Medians of `rounds`, each a run of bare Fastify then one of GET /keys. */
  keysThroughput: {
    keysRps: number;
    bareFastifyRps: number;
    ratio: number;
    /** Bare Fastify sending GET /keys' own answer (body and headers): what the bytes alone allow. */
    sameBytesRps: number;
    sameBytesRatio: number;
    seconds: number;
    connections: number;
    rounds: { bareFastifyRps: number; sameBytesRps: number; keysRps: number }[];
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
  /** The OpenAI-compatible gateway against a bare proxy and the upstream itself (issue 32 section 3). */
  gateway: GatewayReport;
  /** The console in Chromium through the web shell, on the same store (issue 25 section 4). */
  console: ConsoleReport;
  passed: number;
  failed: number;
}

/**
 * One target of an open-loop run (requests sent on a fixed schedule whatever the answers do), in
 * milliseconds from each request's scheduled send time, so that a slow answer delays no later
 * request's clock (no coordinated omission).
 */
export interface OpenLoopTiming {
  sent: number;
  /** Answered 2xx. */
  ok: number;
  /** Any other status, or no answer. */
  failed: number;
  p50: number;
  p99: number;
  mean: number;
  max: number;
  /** The latest a request left after its scheduled time: the load generator's own lag, included above. */
  maxSendLagMs: number;
  /**
   * Each round's own p99, in the order run (null: no request of the round answered): whether the
   * pooled p99 is every round's or the stalls of one.
   */
  roundP99s: (number | null)[];
}

export interface GatewayTargets<T> {
  /** The upstream called directly. */
  direct: T;
  /** Through the bare undici pass-through proxy (bench/bare-proxy.ts). */
  proxy: T;
  /** Through the gateway. */
  gateway: T;
}

export interface GatewayReport {
  setup: {
    /** The route the bench keys call. */
    model: string;
    upstream: string;
    rateRps: number;
    /** Timed seconds per target and case, split over `rounds` alternating rounds (each after a warm-up). */
    secondsPerTarget: number;
    rounds: number;
    /** How many times the seconds and rounds of a streamed first-byte case (FIRST_BYTE_SPAN). */
    firstByteSpan: number;
    /** Whether the gateway's answers carry `x-request-id` (the request-log row's req_id). */
    requestIdHeader: boolean;
    rateLimitRpm: number;
    /** The machine's 1-minute load average when the section began and ended: anything else running shows here. */
    loadAverage: { before: number; after: number };
    /** Share of all cores busy in the second before the section, while the benchmark idled (null: unknown). */
    busyBeforePercent: number | null;
  };
  /** Non-streamed, open loop at `rateRps`: time to the answer's last byte. */
  latency: GatewayTargets<OpenLoopTiming> & {
    proxyAdded: { p50: number; p99: number };
    gatewayAdded: { p50: number; p99: number };
  };
  /** Streamed, open loop at `rateRps`: time to the answer's first body byte; the proxy and the gateway in one schedule. */
  ttfb: GatewayTargets<OpenLoopTiming>;
  /** Closed loop (autocannon), non-streamed: medians of `rounds`, each a proxy run then a gateway run. */
  throughput: {
    connections: number;
    seconds: number;
    rounds: { proxyRps: number; gatewayRps: number }[];
    proxyRps: number;
    gatewayRps: number;
    ratio: number;
    errors: { proxy: number; gateway: number };
    /** Every 2xx answer of the gateway runs (warm-ups included) looked up in telemetry.db by its key. */
    rows: {
      answered: number;
      found: number;
      missing: number;
      /** Rows beyond the answered requests: requests cut when a run stopped. */
      extra: number;
      checkedBy: 'x-request-id' | 'row count';
    };
  };
  /** A request's answer read → its row in GET /analytics/requests (polled by req_id). */
  rowVisible: { samples: number; p50: number; p95: number; max: number; notSeen: number };
  revocation: RevocationResult;
  /** Messages (passed through and translated), Responses and embeddings (issue 53: bench/gateway-apis.ts). */
  apis: ApisReport;
  /** Routes over two targets, a dead first target, `routes apply` (issue 52 section 5: bench/failover.ts). */
  failover: FailoverReport;
  memory: { peakRssAnonMiB: number; samples: number };
  figures: Figure[];
}

/** A p50 and a p99, in ms. */
export interface Tail {
  p50: number;
  p99: number;
}

/**
 * The gateway's other APIs (issue 53, bench/gateway-apis.ts), each against the bare proxy forwarding
 * the same request to the same path of the upstream, in the same run as the chat figures.
 */
export interface ApisReport {
  setup: {
    /** Version 1's routes asked: Messages passed through, the `openai` one (Messages translated, Responses passed through), embeddings. */
    routes: { passthrough: string; openai: string; embeddings: string };
    anthropicVersion: string;
    /** The Messages requests' max_tokens (no answer is cut). */
    maxTokens: number;
    rateRps: number;
    /** Timed seconds per target and case, split over `rounds` alternating rounds (each after a warm-up). */
    secondsPerTarget: number;
    rounds: number;
    /** How many times the seconds and rounds of a streamed first-byte case (FIRST_BYTE_SPAN). */
    firstByteSpan: number;
    /** The machine's 1-minute load average when these figures began and ended. */
    loadAverage: { before: number; after: number };
  };
  /**
   * `POST /v1/messages`, open loop at `rateRps`: the upstream's /v1/messages itself, through the
   * proxy, through the gateway passed through, and translated (the gateway asking the upstream's
   * /v1/chat/completions); non-streamed to the last byte, streamed to the first.
   */
  messages: {
    latency: Record<'direct' | 'proxy' | 'gateway' | 'translated', OpenLoopTiming>;
    /** The proxy and the gateway in one schedule; the upstream, the translated route and the proxy (`proxyAlone`) each alone. */
    ttfb: Record<'direct' | 'proxy' | 'gateway' | 'proxyAlone' | 'translated', OpenLoopTiming>;
    /** The upstream, the proxy and the translated route in one schedule, request by request in turn, each at `rateRps`. */
    ttfbInTurn: Record<'direct' | 'proxy' | 'translated', OpenLoopTiming>;
    /** Through − direct, non-streamed. */
    added: Record<'proxy' | 'gateway' | 'translated', Tail>;
    /**
     * Through − direct, streamed first byte, of the proxy and the translated route: the p50s of
     * the runs alone (`ttfb`), the p99s of the schedule in turn (`ttfbInTurn`).
     */
    firstByteAdded: Record<'proxy' | 'translated', Tail>;
  };
  /** `POST /v1/responses`, passed through, the same cases. */
  responses: {
    latency: GatewayTargets<OpenLoopTiming>;
    ttfb: GatewayTargets<OpenLoopTiming>;
    added: Record<'proxy' | 'gateway', Tail>;
  };
  /** `POST /v1/embeddings`, closed loop (autocannon), as the chat throughput case. */
  embeddings: GatewayReport['throughput'];
}

/** The failover figures of issue 52 section 5 (bench/failover.ts), each against a reference of the same run. */
export interface FailoverReport {
  setup: {
    /** The model every target asks the simulated upstream for. */
    upstreamModel: string;
    /** The document's failover bounds the routes ran under (the defaults). */
    breakerFailures: number;
    breakerCooldownMs: number;
    retries: number;
    /** The open-loop case of the four targets: rate, timed seconds per target, warm-up before each run. */
    rateRps: number;
    secondsPerTarget: number;
    rounds: number;
    warmSeconds: number;
    /** The outage case: rate, seconds healthy before the kill, seconds of outage after it. */
    outageRps: number;
    healthySeconds: number;
    outageSeconds: number;
    /** The machine's 1-minute load average when the failover section began and ended. */
    loadAverage: { before: number; after: number };
  };
  /**
   * Non-streamed, open loop: the upstream itself; `bench/single` (one target); `bench/pair` (two
   * targets, both healthy); `bench/refused` (its first target's port closed; timed after a warm-up
   * of `warmSeconds`, which takes the outage's first second).
   */
  latency: Record<'direct' | 'single' | 'pair' | 'refused', OpenLoopTiming>;
  /** Through the gateway − direct. */
  added: Record<'single' | 'pair' | 'refused', Tail>;
  /** `bench/mortal` at `outageRps`: its first target's upstream process killed after `healthySeconds`. */
  outage: {
    sent: number;
    /** Answered other than 2xx, or not at all. */
    failed: number;
    /** Requests sent after the kill. */
    afterKill: number;
    /** Kill → send of the first request served by the second target in one attempt (the breaker open): null if none. */
    breakerOpenMs: number | null;
    /** Requests sent after the kill and before the breaker opened, and their attempts on the dead target. */
    beforeOpen: { requests: number; deadAttempts: number };
    /** Requests sent once the breaker had opened: attempts on the dead target (its probes), per request. */
    afterOpen: { requests: number; deadAttempts: number; perRequest: number; probes: number };
    /** The same from the rows' `upstream.attempts` (GET /analytics/requests), matched by req_id; null when unread. */
    rows: { matched: number; deadAttempts: number; perRequest: number } | null;
    /** Kill → the dead target's last attempt seen in the answers' headers; the probes' send times after the kill. */
    probeAtMs: number[];
  };
  /** `routes apply` of a document adding a route → that route answered 200 by each gateway. */
  apply: {
    samples: number;
    /** The apply process's exit → the first 200 from the gateway in the server's process. */
    localMs: { p50: number; p95: number; max: number };
    /** … from `npm run gateway` in a process of its own. */
    remoteMs: { p50: number; p95: number; max: number };
    /** … from both (the later of the two), per sample. */
    everyMs: { p50: number; p95: number; max: number };
    /** Samples not answered 200 by a gateway within the wait. */
    notServed: number;
    /** The apply process's own run (start → exit), median. */
    commandMs: number;
  };
}

export interface RevocationResult {
  /** The gateway measured (…/v1). */
  gatewayUrl: string;
  /** Which gateway that is, for the report: e.g. "in the server's process". */
  where: string;
  trials: number;
  /** Requests answered 2xx after DELETE /keys/{id} had answered, over all trials. */
  servedAfterDelete: number;
  /** Trials whose first request after the DELETE was refused. */
  refusedAtOnce: number;
  /** Trials still served when the wait ran out. */
  neverRefused: number;
  /** DELETE's answer → the first 401's answer. */
  firstRefusalMs: { p50: number; p95: number; max: number };
}

/** Judges a case against issue 6 section 2. `firstPage` is the unfiltered first page's timing. */
export function judgeCase(kind: CaseKind, server: Timing, duckdb: Timing, firstPage: Timing | undefined) {
  switch (kind) {
    case 'analytics':
      return { target: 'p50 ≤ DuckDB p50, p95 ≤ 100 ms', pass: server.p50 <= duckdb.p50 && server.p95 <= 100 };
    case 'dashboard':
      // Issue 26: the whole dashboard within 150 ms at p95, and no slower than DuckDB computing it exactly.
      return { target: 'p95 ≤ 150 ms, p50 ≤ DuckDB p50', pass: server.p95 <= 150 && server.p50 <= duckdb.p50 };
    case 'log':
      return { target: 'p95 ≤ 50 ms', pass: server.p95 <= 50 };
    case 'log-duckdb':
      return { target: 'p95 ≤ 50 ms, p95 ≤ DuckDB p95', pass: server.p95 <= 50 && server.p95 <= duckdb.p95 };
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
      reference: `bare Fastify ${round(r.keysThroughput.bareFastifyRps, 0)} req/s (${fmt(r.keysThroughput.ratio * 100)}%); bare Fastify sending GET /keys' own answer ${round(r.keysThroughput.sameBytesRps, 0)} req/s (${fmt(r.keysThroughput.sameBytesRatio * 100)}%); ${r.keysThroughput.connections} connections, medians of ${r.keysThroughput.rounds.length} alternating runs`,
      target: '≥ 60% of bare Fastify',
      pass: r.keysThroughput.ratio >= 0.6,
    },
    {
      figure: 'GET /keys p99 under analytics load',
      value: r.keysLatency.loadedP99,
      unit: 'ms',
      reference: `idle p99 ${fmt(r.keysLatency.idleP99)} ms (${fmt(r.keysLatency.ratio)}×); timed one request at a time by a client process of its own (bench/keys-latency-child.ts) while it loops ${r.keysLatency.parallelSummaries} 30-day summaries`,
      target: '≤ 1.5× idle p99',
      pass: r.keysLatency.ratio <= 1.5,
    },
    {
      figure: 'import of NDJSON files (admin import-requests)',
      value: round(r.importFiles.importRowsPerSecond, 0),
      unit: 'rows/s',
      reference: `${r.importFiles.rows} rows in ${r.importFiles.files} files (${fmt(r.importFiles.bytes / 2 ** 20)} MiB) in one run of the command, ${fmt(r.importFiles.importSeconds)} s; DuckDB read_json of the same files ${round(r.importFiles.duckdbRowsPerSecond, 0)} rows/s (${fmt(r.importFiles.ratio)}×)`,
      target: '≥ 0.15× DuckDB read_json',
      pass: r.importFiles.ratio >= 0.15,
    },
    {
      figure: 'seeding rate (demo generator, indexes included)',
      value: round(r.import.rowsPerSecond, 0),
      unit: 'rows/s',
      reference: `${r.import.rows} rows in ${fmt(r.import.seconds)} s`,
      target: '',
      pass: null,
    },
    {
      figure: 'server peak anonymous RSS',
      value: r.memory.peakRssAnonMiB,
      unit: 'MiB',
      reference: `${r.memory.samples} samples; file-backed peak ${fmt(r.memory.peakRssFileMiB)} MiB (not counted)`,
      target: '≤ 400 MiB',
      pass: r.memory.peakRssAnonMiB <= 400,
    },
    bytesFigure(r.bytes, `telemetry.db + -wal ${fmt(r.disk.telemetryBytes / 2 ** 20)} MiB as seeded; `),
  ];
}

/** Allowed added latency: `factor` × the bare proxy's, or `floorMs` where that is below it. */
function addedAllowance(proxyAdded: number, floorMs: number, factor = 1.5): number {
  return Math.max(factor * proxyAdded, floorMs);
}

/** The floors of the added latency's targets (as the chat figures'): p50 0.5 ms, p99 3 ms. */
const ADDED_FLOOR_MS: Tail = { p50: 0.5, p99: 3 };

const failures = (timings: OpenLoopTiming[]) => timings.reduce((sum, t) => sum + t.failed, 0);

/** The gateway's figures against issue 32 section 3. */
export function gatewayFigures(g: Omit<GatewayReport, 'figures'>): Figure[] {
  const { latency, ttfb, throughput, rowVisible, revocation } = g;
  const rate = `${g.setup.rateRps} req/s`;
  const latencyFailed = failures([latency.direct, latency.proxy, latency.gateway]);
  const ttfbFailed = failures([ttfb.direct, ttfb.proxy, ttfb.gateway]);
  const failedNote = (count: number) => (count > 0 ? `; ${count} requests FAILED` : '');
  const added = (p: 'p50' | 'p99', floorMs: number): Figure => {
    const allowed = addedAllowance(latency.proxyAdded[p], floorMs);
    return {
      figure: `gateway added latency ${p} (non-streamed, ${rate} open loop)`,
      value: latency.gatewayAdded[p],
      unit: 'ms',
      reference:
        `bare proxy adds ${fmt(latency.proxyAdded[p])} ms; ${p} direct ${fmt(latency.direct[p])}, ` +
        `proxy ${fmt(latency.proxy[p])}, gateway ${fmt(latency.gateway[p])} ms${failedNote(latencyFailed)}`,
      target: `≤ 1.5× proxy's or ≤ ${fmt(floorMs)} ms (${fmt(allowed)} ms)`,
      pass: latency.gatewayAdded[p] <= allowed && latencyFailed === 0,
    };
  };
  const firstByte = (p: 'p50' | 'p99'): Figure => ({
    figure: `gateway streamed time to first byte ${p} (${rate} open loop)`,
    value: ttfb.gateway[p],
    unit: 'ms',
    reference: `bare proxy ${fmt(ttfb.proxy[p])} ms, direct ${fmt(ttfb.direct[p])} ms${failedNote(ttfbFailed)}`,
    target: `≤ proxy's + 1 ms (${fmt(ttfb.proxy[p] + 1)} ms)`,
    pass: ttfb.gateway[p] <= ttfb.proxy[p] + 1 && ttfbFailed === 0,
  });
  const { rows } = throughput;
  const errors = throughput.errors.gateway + throughput.errors.proxy;
  return [
    added('p50', ADDED_FLOOR_MS.p50),
    added('p99', ADDED_FLOOR_MS.p99),
    firstByte('p50'),
    firstByte('p99'),
    {
      figure: `gateway throughput (${throughput.connections} connections, non-streamed)`,
      value: round(throughput.gatewayRps, 0),
      unit: 'req/s',
      reference:
        `bare proxy ${round(throughput.proxyRps, 0)} req/s (${fmt(throughput.ratio * 100)}%); medians of ` +
        `${throughput.rounds.length} alternating runs${errors > 0 ? `; errors: proxy ${throughput.errors.proxy}, gateway ${throughput.errors.gateway}` : ''}`,
      target: '≥ 50% of bare proxy',
      pass: throughput.ratio >= 0.5 && throughput.errors.gateway === 0,
    },
    {
      figure: 'gateway answers without a request-log row',
      value: rows.missing,
      unit: 'requests',
      reference:
        `${rows.found} of ${rows.answered} 2xx answers of the throughput runs found (by ${rows.checkedBy}); ` +
        `${rows.extra} rows more (requests cut when a run stopped)`,
      target: '0',
      pass: rows.missing === 0 && rows.answered > 0,
    },
    {
      figure: 'request end → row in GET /analytics/requests, p95',
      value: rowVisible.p95,
      unit: 'ms',
      reference:
        `${rowVisible.samples} samples: p50 ${fmt(rowVisible.p50)} ms, max ${fmt(rowVisible.max)} ms` +
        (rowVisible.notSeen > 0 ? `; ${rowVisible.notSeen} NOT SEEN within 10 s` : ''),
      target: '≤ 1000 ms',
      pass: rowVisible.p95 <= 1000 && rowVisible.notSeen === 0,
    },
    {
      figure: 'requests served after DELETE /keys/{id}',
      value: revocation.servedAfterDelete,
      unit: 'requests',
      reference:
        `${revocation.trials} trials, ${revocation.refusedAtOnce} refused at the first request after the DELETE` +
        (revocation.neverRefused > 0 ? `, ${revocation.neverRefused} NEVER refused` : '') +
        `; DELETE's answer → first 401: p50 ${fmt(revocation.firstRefusalMs.p50)} ms, ` +
        `max ${fmt(revocation.firstRefusalMs.max)} ms (gateway ${revocation.where})`,
      target: '0',
      pass: revocation.servedAfterDelete === 0 && revocation.neverRefused === 0,
    },
    ...apisFigures(g.apis),
    ...failoverFigures(g.failover),
    {
      figure: 'server peak anonymous RSS (gateway section)',
      value: g.memory.peakRssAnonMiB,
      unit: 'MiB',
      reference: `${g.memory.samples} samples while the gateway figures were taken`,
      target: '',
      pass: null,
    },
  ];
}

/** Figures of issue 53: the gateway's other APIs, each against the bare proxy on the same path in the same run. */
export function apisFigures(a: ApisReport): Figure[] {
  const rate = `${a.setup.rateRps} req/s open loop`;
  const failedNote = (timings: OpenLoopTiming[]) => {
    const count = failures(timings);
    return count > 0 ? `; ${count} requests FAILED` : '';
  };
  const { messages: m, responses: r, embeddings: e } = a;
  const latencyOf = {
    messages: [m.latency.direct, m.latency.proxy, m.latency.gateway],
    translated: [m.latency.direct, m.latency.proxy, m.latency.translated],
    responses: [r.latency.direct, r.latency.proxy, r.latency.gateway],
  };
  const ttfbOf = {
    messages: [m.ttfb.direct, m.ttfb.proxy, m.ttfb.gateway],
    translated: [m.ttfb.direct, m.ttfb.proxyAlone, m.ttfb.translated],
    translatedInTurn: [m.ttfbInTurn.direct, m.ttfbInTurn.proxy, m.ttfbInTurn.translated],
    responses: [r.ttfb.direct, r.ttfb.proxy, r.ttfb.gateway],
  };
  /** Added latency, passed through: ≤ 1.5× the proxy's on the same path (or its floor). */
  const added = (name: string, path: string, own: Tail, proxy: Tail, t: OpenLoopTiming[], p: 'p50' | 'p99'): Figure => {
    const allowed = addedAllowance(proxy[p], ADDED_FLOOR_MS[p]);
    const note = failedNote(t);
    return {
      figure: `${name}: added latency ${p} (non-streamed, ${rate})`,
      value: own[p],
      unit: 'ms',
      reference:
        `bare proxy on ${path} adds ${fmt(proxy[p])} ms; ${p} direct ${fmt(t[0]![p])}, proxy ${fmt(t[1]![p])}, ` +
        `gateway ${fmt(t[2]![p])} ms${note}`,
      target: `≤ 1.5× proxy's or ≤ ${fmt(ADDED_FLOOR_MS[p])} ms (${fmt(allowed)} ms)`,
      pass: own[p] <= allowed && note === '',
    };
  };
  /** Streamed first byte, passed through: ≤ the proxy's + 1 ms, as chat's. */
  const firstByte = (name: string, t: OpenLoopTiming[], p: 'p50' | 'p99'): Figure => {
    const [direct, proxy, gateway] = t as [OpenLoopTiming, OpenLoopTiming, OpenLoopTiming];
    const note = failedNote(t);
    return {
      figure: `${name}: streamed time to first byte ${p} (${rate})`,
      value: gateway[p],
      unit: 'ms',
      reference: `bare proxy ${fmt(proxy[p])} ms, direct ${fmt(direct[p])} ms${note}`,
      target: `≤ proxy's + 1 ms (${fmt(proxy[p] + 1)} ms)`,
      pass: gateway[p] <= proxy[p] + 1 && note === '',
    };
  };
  /** Translated: what it adds ≤ 2× what the proxy adds passing the same request through (or the floor). */
  const translated = (
    what: 'added latency' | 'streamed first byte added',
    own: Tail,
    proxy: Tail,
    t: OpenLoopTiming[],
    p: 'p50' | 'p99',
  ): Figure => {
    const allowed = addedAllowance(proxy[p], ADDED_FLOOR_MS[p], 2);
    const note = failedNote(t);
    const stage =
      what === 'added latency' ? `non-streamed, ${rate}` : p === 'p99' ? `${rate}, the three in turn` : rate;
    return {
      figure: `/v1/messages translated to chat completions: ${what} ${p} (${stage})`,
      value: own[p],
      unit: 'ms',
      reference:
        `bare proxy passing it through to /v1/messages adds ${fmt(proxy[p])} ms; ${p} direct ${fmt(t[0]![p])}, ` +
        `proxy ${fmt(t[1]![p])}, translated ${fmt(t[2]![p])} ms${note}`,
      target: `≤ 2× proxy's or ≤ ${fmt(ADDED_FLOOR_MS[p])} ms (${fmt(allowed)} ms)`,
      pass: own[p] <= allowed && note === '',
    };
  };
  const passedThrough = (
    name: string,
    path: string,
    own: Tail,
    proxy: Tail,
    latency: OpenLoopTiming[],
    ttfb: OpenLoopTiming[],
  ): Figure[] => [
    added(name, path, own, proxy, latency, 'p50'),
    added(name, path, own, proxy, latency, 'p99'),
    firstByte(name, ttfb, 'p50'),
    firstByte(name, ttfb, 'p99'),
  ];
  const errors = e.errors.gateway + e.errors.proxy;
  return [
    ...passedThrough(
      '/v1/messages passed through',
      '/v1/messages',
      m.added.gateway,
      m.added.proxy,
      latencyOf.messages,
      ttfbOf.messages,
    ),
    ...passedThrough(
      '/v1/responses passed through',
      '/v1/responses',
      r.added.gateway,
      r.added.proxy,
      latencyOf.responses,
      ttfbOf.responses,
    ),
    translated('added latency', m.added.translated, m.added.proxy, latencyOf.translated, 'p50'),
    translated('added latency', m.added.translated, m.added.proxy, latencyOf.translated, 'p99'),
    translated(
      'streamed first byte added',
      m.firstByteAdded.translated,
      m.firstByteAdded.proxy,
      ttfbOf.translated,
      'p50',
    ),
    translated(
      'streamed first byte added',
      m.firstByteAdded.translated,
      m.firstByteAdded.proxy,
      ttfbOf.translatedInTurn,
      'p99',
    ),
    {
      figure: `/v1/embeddings throughput (${e.connections} connections)`,
      value: round(e.gatewayRps, 0),
      unit: 'req/s',
      reference:
        `bare proxy ${round(e.proxyRps, 0)} req/s (${fmt(e.ratio * 100)}%); medians of ${e.rounds.length} alternating runs; ` +
        `${e.rows.found} of ${e.rows.answered} 2xx answers have a request-log row (by ${e.rows.checkedBy})` +
        (errors > 0 ? `; errors: proxy ${e.errors.proxy}, gateway ${e.errors.gateway}` : ''),
      target: '≥ 50% of bare proxy',
      pass: e.ratio >= 0.5 && e.errors.gateway === 0,
    },
  ];
}

/** Figures of issue 52 section 5, each a ratio to a reference timed in the same run where it has one. */
export function failoverFigures(f: FailoverReport): Figure[] {
  const { added, latency, outage, apply } = f;
  const rate = `${f.setup.rateRps} req/s open loop`;
  const ratio = (a: number, b: number) => round(a / b, 2);
  const pairFailed = latency.single.failed + latency.pair.failed + latency.direct.failed;
  const failedNote = (count: number) => (count > 0 ? `; ${count} requests FAILED` : '');
  const twoTargets = (p: 'p50' | 'p99'): Figure => ({
    figure: `two-target route (fallback, both healthy) added latency ${p} (${rate})`,
    value: added.pair[p],
    unit: 'ms',
    reference:
      `one-target route adds ${fmt(added.single[p])} ms (${fmt(ratio(added.pair[p], added.single[p]))}×); ` +
      `${p} direct ${fmt(latency.direct[p])}, one target ${fmt(latency.single[p])}, two ${fmt(latency.pair[p])} ms${failedNote(pairFailed)}`,
    target: `≤ 1.1× one-target's (${fmt(1.1 * added.single[p])} ms)`,
    pass: added.pair[p] <= 1.1 * added.single[p] && pairFailed === 0,
  });
  const opened = outage.breakerOpenMs;
  return [
    twoTargets('p50'),
    twoTargets('p99'),
    {
      figure: `p99 while the first target refuses connections, after the first second (${rate})`,
      value: latency.refused.p99,
      unit: 'ms',
      reference:
        `healthy two-target route p99 ${fmt(latency.pair.p99)} ms (${fmt(ratio(latency.refused.p99, latency.pair.p99))}×); ` +
        `p50 ${fmt(latency.refused.p50)} vs ${fmt(latency.pair.p50)} ms${failedNote(latency.refused.failed)}`,
      target: `≤ 1.2× healthy route's (${fmt(1.2 * latency.pair.p99)} ms)`,
      pass: latency.refused.p99 <= 1.2 * latency.pair.p99 && latency.refused.failed === 0,
    },
    {
      figure: `attempts on a dead first target per request, once its breaker opened (${f.setup.outageSeconds} s outage at ${f.setup.outageRps} req/s)`,
      value: outage.afterOpen.perRequest,
      unit: 'attempts',
      asIs: true,
      reference:
        `${outage.afterOpen.deadAttempts} attempts (${outage.afterOpen.probes} probes) over ${outage.afterOpen.requests} requests, from x-svc-attempts` +
        (outage.rows
          ? `; rows' upstream.attempts: ${outage.rows.deadAttempts} over ${outage.rows.matched} rows`
          : '; rows NOT read') +
        `; before it opened: ${outage.beforeOpen.deadAttempts} over ${outage.beforeOpen.requests} requests; ` +
        `${outage.failed} of ${outage.sent} requests failed; LiteLLM with its defaults: about 3`,
      target: '≤ 0.1',
      pass: opened !== null && outage.afterOpen.perRequest <= 0.1 && outage.failed === 0,
    },
    {
      figure: `target killed → its breaker open (${f.setup.outageRps} req/s)`,
      value: opened ?? NaN,
      unit: 'ms',
      reference:
        `upstream process SIGKILLed → send of the first request served by the second target in one attempt; ` +
        `breaker_failures ${f.setup.breakerFailures}, retries ${f.setup.retries}, one request every ${fmt(1000 / f.setup.outageRps)} ms`,
      target: '≤ 1000 ms',
      pass: opened !== null && opened <= 1000,
    },
    {
      figure: 'routes apply → every gateway on the new version, p95',
      value: apply.everyMs.p95,
      unit: 'ms',
      reference:
        `${apply.samples} samples, apply's exit → the new route answered 200 by both gateways: p50 ${fmt(apply.everyMs.p50)}, ` +
        `max ${fmt(apply.everyMs.max)} ms; in the server's process p95 ${fmt(apply.localMs.p95)} ms, ` +
        `npm run gateway in another process p95 ${fmt(apply.remoteMs.p95)} ms` +
        (apply.notServed > 0 ? `; ${apply.notServed} NOT SERVED` : ''),
      target: '≤ 1000 ms',
      pass: apply.everyMs.p95 <= 1000 && apply.notServed === 0,
    },
  ];
}

/** The target of issue 54: at most three times DuckDB's file of the same rows. */
export const BYTES_TARGET_RATIO = 3;

/** The markdown section: by use, then every table and index that holds at least 1 B a row. */
/** The bytes a row takes on SQLite, against DuckDB's file of the same rows; `before` leads the reference. */
export function bytesFigure(d: DiskBytes, before = ''): Figure {
  return {
    figure: 'bytes per row on disk',
    value: round(d.sqlitePerRow, 1),
    unit: 'B/row',
    reference:
      `${before}checkpointed ${fmt(d.sqliteBytes / 2 ** 20)} MiB, ${fmt(d.ratio)}× DuckDB's database file ` +
      `of the same rows (${fmt(d.duckdbPerRow)} B/row)`,
    target: `≤ ${BYTES_TARGET_RATIO}× DuckDB's file`,
    pass: d.ratio <= BYTES_TARGET_RATIO,
  };
}

export interface BytesOnlyReport extends Omit<GatewayOnlyReport, 'gateway'> {
  bytes: DiskBytes;
}

export function bytesMarkdown(report: BytesOnlyReport): string {
  const m = report.meta;
  return [
    `# Benchmark: where the bytes go (${m.rows.toLocaleString('en')} rows over 30 days)`,
    '',
    `Run ${m.startedAt} on ${m.cpus} × ${m.cpuModel}, Node ${m.node}. Took ${fmt(m.seconds)} s. ` +
      `**${report.passed} pass, ${report.failed} fail.**`,
    '',
    "The demo generator's rows as the server writes them (every index, rollup and search term), measured by " +
      "SQLite's dbstat; DuckDB's database file holds the same rows, written by `CREATE TABLE AS` and checkpointed.",
    '',
    ...diskBytesLines(report.bytes),
    '',
  ].join('\n');
}

export function diskBytesLines(d: DiskBytes): string[] {
  const mib = (bytes: number) => fmt(bytes / 2 ** 20);
  return [
    `SQLite ${mib(d.sqliteBytes)} MiB (${fmt(d.sqlitePerRow)} B/row) against DuckDB's database file of the same ` +
      `rows ${mib(d.duckdbBytes)} MiB (${fmt(d.duckdbPerRow)} B/row): ${fmt(d.ratio)}×, target ≤ ${BYTES_TARGET_RATIO}×.`,
    '',
    ...table(
      ['use', 'MiB', 'B/row', 'share'],
      d.groups.map((g) => [g.group, mib(g.bytes), fmt(g.perRow), `${fmt(g.share * 100)}%`]),
    ),
    '',
    ...table(
      ['table or index', 'use', 'MiB', 'B/row'],
      d.objects.filter((o) => o.perRow >= 1).map((o) => [o.name, o.group, mib(o.bytes), fmt(o.perRow)]),
    ),
  ];
}

export function fmt(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  return value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2);
}

const mark = (pass: boolean | null) => (pass === null ? '' : pass ? 'pass' : 'FAIL');

export function table(header: string[], rows: string[][]): string[] {
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ];
}

/** Under the title of a quick run's report (`--quick`): its figures are not to be read. */
export function quickNote(meta: { quick: boolean }): string[] {
  return meta.quick
    ? [
        '> **Quick run (`--quick`)**: the fewest samples of every figure, only to show that the benchmark runs ' +
          'and reports each. These figures are not to be read, compared or committed.',
        '',
      ]
    : [];
}

/** The verdicts as the terminal shows them; a quick run's are not to be read. */
export function tally(report: { passed: number; failed: number; meta: { quick: boolean } }): string {
  const counted = `${report.passed} pass, ${report.failed} fail`;
  return report.meta.quick ? `${counted} (a quick run: its figures are not to be read)` : counted;
}

function casesTable(cases: readonly CaseResult[]): string[] {
  return table(
    ['query', 'server p50', 'server p95', 'DuckDB p50', 'DuckDB p95', 'p50 ratio', 'target', 'result'],
    cases.map((c) => [
      c.id,
      fmt(c.server.p50),
      fmt(c.server.p95),
      fmt(c.duckdb.p50),
      fmt(c.duckdb.p95),
      `${fmt(c.ratio)}×`,
      c.target,
      mark(c.pass),
    ]),
  );
}

export function markdown(report: Report): string {
  const m = report.meta;
  const otherRows = figureRows(report.figures);
  const mismatches = [...report.cases, ...(report.importedCases ?? [])].filter((c) => c.check && !c.check.ok);
  return [
    `# Benchmark: ${m.rows.toLocaleString('en')} rows over ${m.days} days`,
    '',
    ...quickNote(m),
    `Run ${m.startedAt} on ${m.cpus} × ${m.cpuModel}, Node ${m.node}; ${m.runs} timed runs per query, up to ${m.fast.runs} while they take under ${m.fast.ms / 1000} s, after ${m.warmup} warm-up ` +
      `(at most ${m.caseSeconds} s per query), times in ms through the real HTTP endpoints; DuckDB in memory, threads=2, ` +
      `same rows, same SQL semantics. Took ${fmt(m.seconds)} s. **${report.passed} pass, ${report.failed} fail.**`,
    '',
    `Filters used: ${Object.entries(m.picks)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')}.`,
    '',
    '## Queries',
    '',
    ...casesTable(report.cases),
    '',
    '## Queries on an imported store',
    '',
    ...(report.importedCases === null
      ? ['Not measured: the import did not hold every seeded row.']
      : [
          'The same rows written by `admin import-requests` into an empty store (not by the demo seeder), ' +
            "served by a server of their own; DuckDB's timings are the seeded run's.",
          '',
          ...casesTable(report.importedCases),
        ]),
    '',
    '## Other figures',
    '',
    ...table(['figure', 'value', 'reference', 'target', 'result'], otherRows),
    '',
    mismatches.length === 0
      ? 'Row counts of the server and DuckDB agree on every summary and request-log query, on both stores.'
      : `Row counts disagree on: ${mismatches.map((c) => c.id).join(', ')}.`,
    '',
    '## Where the bytes go',
    '',
    ...diskBytesLines(report.bytes),
    '',
    ...gatewayLines(report.gateway),
    ...consoleLines(report.console),
  ].join('\n');
}

/** One open-loop timing as a table's cells, after its names (TIMING_COLUMNS). */
function timingCells(x: OpenLoopTiming): string[] {
  const byRound = x.roundP99s.map((p99) => (p99 === null ? '–' : fmt(p99))).join(' / ');
  return [
    fmt(x.p50),
    fmt(x.p99),
    fmt(x.mean),
    fmt(x.max),
    String(x.sent),
    String(x.failed),
    fmt(x.maxSendLagMs),
    byRound,
  ];
}

const TIMING_COLUMNS = ['p50', 'p99', 'mean', 'max', 'sent', 'failed', 'max send lag', 'p99 by round'];

/** The targets every open-loop case of the gateway times. */
const THREE = ['direct', 'proxy', 'gateway'] as const;

/** A case's rows, one per target of `targets`, in that order. */
function caseRows<K extends string>(
  name: string,
  timings: NoInfer<Record<K, OpenLoopTiming>>,
  targets: readonly K[],
): string[][] {
  return targets.map((target) => [name, target, ...timingCells(timings[target])]);
}

/** How much longer the first-byte cases ran, said after the latency cases' length. */
const firstByteLength = (s: { secondsPerTarget: number; rounds: number; firstByteSpan: number }) =>
  `first-byte cases ${s.secondsPerTarget * s.firstByteSpan} s over ${s.rounds * s.firstByteSpan} rounds, ` +
  `the proxy and the gateway in one schedule, request by request in turn, each at the rate (the rest alone)`;

/** The gateway section of the markdown: its figures, then each target's timings. */
function gatewayLines(g: GatewayReport): string[] {
  const s = g.setup;
  return [
    '## Gateway',
    '',
    `Route ${s.model} on a key of ${s.rateLimitRpm.toLocaleString('en')} requests/minute and no credit limit; upstream: ${s.upstream}. ` +
      `Open-loop cases send ${s.rateRps} req/s on a fixed schedule from a client process of their own (bench/open-loop-child.ts) and time each request from its scheduled send ` +
      `(${s.secondsPerTarget} s per target over ${s.rounds} alternating rounds, each after a warm-up; ` +
      `${firstByteLength(s)}); direct = the upstream itself, proxy = bench/bare-proxy.ts (node:http + undici), added = through − direct; ` +
      `p99 = over all rounds pooled, p99 by round = each round's own, in the order run. ` +
      `x-request-id on the gateway's answers: ${s.requestIdHeader ? 'yes' : 'NO'}. ` +
      `Machine ${s.busyBeforePercent === null ? '?' : s.busyBeforePercent}% busy in the second before the section (the benchmark idle); ` +
      `1-minute load average ${fmt(s.loadAverage.before)} when it began, ${fmt(s.loadAverage.after)} when it ended.`,
    '',
    ...table(['figure', 'value', 'reference', 'target', 'result'], figureRows(g.figures)),
    '',
    ...table(
      ['case', 'target', ...TIMING_COLUMNS],
      [...caseRows('non-streamed, last byte', g.latency, THREE), ...caseRows('streamed, first byte', g.ttfb, THREE)],
    ),
    '',
    `Throughput rounds (req/s, proxy / gateway): ${g.throughput.rounds
      .map((r) => `${round(r.proxyRps, 0)} / ${round(r.gatewayRps, 0)}`)
      .join(', ')}.`,
    '',
    ...apisLines(g.apis),
    ...failoverLines(g.failover),
  ];
}

/** The other APIs' part of the gateway section (issue 53): how its figures were taken, and the timings behind them. */
function apisLines(a: ApisReport): string[] {
  const s = a.setup;
  return [
    '### Messages, Responses and embeddings (issue 53)',
    '',
    `Version 1's routes: \`${s.routes.passthrough}\` (its provider speaks \`anthropic\`: \`/v1/messages\` passed through as is), ` +
      `\`${s.routes.openai}\` (its provider speaks only \`openai\`: \`/v1/messages\` translated to the upstream's \`/v1/chat/completions\` ` +
      `and back, \`/v1/responses\` passed through) and \`${s.routes.embeddings}\`; each answer checked before the timing to have come the way meant ` +
      `(a translated message's id is the chat completion's). Messages requests carry \`anthropic-version: ${s.anthropicVersion}\` ` +
      `and max_tokens ${s.maxTokens}, the key as \`Authorization: Bearer\`. Each API is timed as chat is, in open-loop cases of its own at ` +
      `${s.rateRps} req/s (${s.secondsPerTarget} s per target over ${s.rounds} alternating rounds, each after a warm-up; ${firstByteLength(s)}) ` +
      `from a client process of its own: direct = the upstream's own path, proxy = bench/bare-proxy.ts forwarding the same request to it, added = through − direct. ` +
      `The translated route's reference is the proxy on the passthrough path (the same Messages request to the upstream's \`/v1/messages\`), ` +
      `for its first byte as for its last (for its first byte, the proxy timed alone as the translated route is: proxyAlone; ` +
      `for its first byte's p99, the upstream, the proxy and the translated route in one schedule, request by request in turn, each at ${s.rateRps} req/s: the rows of the three in turn). Embeddings' throughput is closed loop, ${a.embeddings.connections} connections, as chat's. ` +
      `1-minute load average ${fmt(s.loadAverage.before)} when these figures began, ${fmt(s.loadAverage.after)} when they ended.`,
    '',
    ...table(
      ['case', 'target', ...TIMING_COLUMNS],
      [
        ...caseRows('/v1/messages non-streamed, last byte', a.messages.latency, [...THREE, 'translated']),
        ...caseRows('/v1/messages streamed, first byte', a.messages.ttfb, [...THREE, 'proxyAlone', 'translated']),
        ...caseRows('/v1/messages streamed, first byte, the three in turn', a.messages.ttfbInTurn, [
          'direct',
          'proxy',
          'translated',
        ]),
        ...caseRows('/v1/responses non-streamed, last byte', a.responses.latency, THREE),
        ...caseRows('/v1/responses streamed, first byte', a.responses.ttfb, THREE),
      ],
    ),
    '',
    `Embeddings throughput rounds (req/s, proxy / gateway): ${a.embeddings.rounds
      .map((r) => `${round(r.proxyRps, 0)} / ${round(r.gatewayRps, 0)}`)
      .join(', ')}; ${a.embeddings.rows.missing} of the gateway's ${a.embeddings.rows.answered} answers without a row.`,
    '',
  ];
}

/** The failover part of the gateway section: how its figures were taken, and the timings behind them. */
export function failoverLines(f: FailoverReport): string[] {
  const s = f.setup;
  const o = f.outage;
  return [
    '### Failover (issue 52 section 5)',
    '',
    `Routes applied to the bench's server with \`routes apply\`, every target asking the simulated upstream for \`${s.upstreamModel}\` ` +
      `under the document's default bounds (breaker_failures ${s.breakerFailures}, breaker_cooldown_ms ${s.breakerCooldownMs}, retries ${s.retries}): ` +
      `\`bench/single\` (one target), \`bench/pair\` (fallback over two providers, both the same upstream), ` +
      `\`bench/refused\` (its first provider's base_url a closed port), \`bench/mortal\` (its first provider a second ` +
      `simulated upstream process, SIGKILLed mid-run). The upstream itself and the first three routes are timed in one open-loop case at ` +
      `${s.rateRps} req/s (${s.secondsPerTarget} s per target over ${s.rounds} alternating rounds, each after a ${s.warmSeconds} s warm-up: ` +
      `the refused route's first warm-up is its outage's first second); the three routes interleaved, request by request, in one ` +
      `schedule at ${s.rateRps} req/s in all, so that a stall of the machine falls on each alike (each route's ` +
      `${s.secondsPerTarget} s at ${s.rateRps} req/s take three times as long at a third of the rate). The outage case sends ${s.outageRps} req/s, ` +
      `${s.healthySeconds} s healthy then ${s.outageSeconds} s after the kill, reading \`x-svc-attempts\` and \`x-svc-served-by\` ` +
      `(attempts on the dead target = attempts − 1 when the second target served), then the rows' \`upstream.attempts\`. ` +
      `The open-loop client runs in a process of its own (bench/open-loop-child.ts). ` +
      `1-minute load average ${fmt(s.loadAverage.before)} when the failover section began, ${fmt(s.loadAverage.after)} when it ended.`,
    '',
    ...table(
      ['route', ...TIMING_COLUMNS],
      (['direct', 'single', 'pair', 'refused'] as const).map((name) => [name, ...timingCells(f.latency[name])]),
    ),
    '',
    `Outage: ${o.sent} requests, ${o.afterKill} after the kill, ${o.failed} failed; breaker open ${o.breakerOpenMs === null ? 'NEVER' : `${fmt(o.breakerOpenMs)} ms`} after the kill; ` +
      `attempts on the dead target before it opened ${o.beforeOpen.deadAttempts} over ${o.beforeOpen.requests} requests, after ${o.afterOpen.deadAttempts} over ${o.afterOpen.requests} ` +
      `(probes sent ${o.probeAtMs.map((ms) => `${fmt(ms / 1000)} s`).join(', ') || 'never'} after the kill).`,
    '',
    `routes apply: ${f.apply.samples} samples, the command itself ${fmt(f.apply.commandMs)} ms (median, start → exit); ` +
      `its exit → 200: in the server's process p50 ${fmt(f.apply.localMs.p50)} / p95 ${fmt(f.apply.localMs.p95)} ms, ` +
      `npm run gateway p50 ${fmt(f.apply.remoteMs.p50)} / p95 ${fmt(f.apply.remoteMs.p95)} ms.`,
    '',
  ];
}

export function figureRows(figures: Figure[]): string[][] {
  // Counts as whole numbers: "0 requests", not "0.00 requests".
  const value = (f: Figure) => (f.unit === 'requests' || f.asIs ? String(f.value) : fmt(f.value));
  return figures.map((f) => [f.figure, `${value(f)} ${f.unit}`, f.reference, f.target, mark(f.pass)]);
}

/** `npm run bench -- --only gateway`: the gateway section alone, on a small store. */
export interface GatewayOnlyReport {
  meta: {
    /** `--quick`: the fewest samples of every figure, which are then not to be read. */
    quick: boolean;
    rows: number;
    startedAt: string;
    seconds: number;
    node: string;
    cpus: number;
    cpuModel: string;
  };
  gateway: GatewayReport;
  passed: number;
  failed: number;
}

export function gatewayMarkdown(report: GatewayOnlyReport): string {
  const m = report.meta;
  return [
    `# Benchmark: the gateway alone (${m.rows.toLocaleString('en')} rows seeded)`,
    '',
    ...quickNote(m),
    `Run ${m.startedAt} on ${m.cpus} × ${m.cpuModel}, Node ${m.node}. Took ${fmt(m.seconds)} s. ` +
      `**${report.passed} pass, ${report.failed} fail.**`,
    '',
    ...gatewayLines(report.gateway),
  ].join('\n');
}

/**
 * The failover figures alone (issue 52 section 5), from a `--only gateway` run: beside them the
 * gateway's added p99 and streamed first byte p99 against the bare proxy, from the same run.
 */
export function failoverOnly(report: GatewayOnlyReport): {
  meta: GatewayOnlyReport['meta'];
  passed: number;
  failed: number;
  figures: Figure[];
  failover: FailoverReport;
} {
  const alongside = report.gateway.figures.filter(
    (f) =>
      f.figure.startsWith('gateway added latency p99') ||
      f.figure.startsWith('gateway streamed time to first byte p99'),
  );
  const figures = [...failoverFigures(report.gateway.failover), ...alongside];
  const verdicts = figures.map((f) => f.pass).filter((p) => p !== null);
  return {
    meta: report.meta,
    passed: verdicts.filter(Boolean).length,
    failed: verdicts.filter((p) => !p).length,
    figures,
    failover: report.gateway.failover,
  };
}

export function failoverMarkdown(report: ReturnType<typeof failoverOnly>): string {
  const m = report.meta;
  return [
    `# Benchmark: failover (issue 52 section 5)`,
    '',
    ...quickNote(m),
    `Run ${m.startedAt} on ${m.cpus} × ${m.cpuModel}, Node ${m.node}, by \`npm run bench -- --only gateway\` ` +
      `(${m.rows.toLocaleString('en')} rows seeded; the run took ${fmt(m.seconds)} s, its whole report in gateway.md). ` +
      `Each figure against a reference timed in the same run. **${report.passed} pass, ${report.failed} fail.**`,
    '',
    ...table(['figure', 'value', 'reference', 'target', 'result'], figureRows(report.figures)),
    '',
    ...failoverLines(report.failover).slice(2),
  ].join('\n');
}

export function gatewayConsole(report: GatewayOnlyReport): string {
  return [gatewayTable(report.gateway), '', tally(report)].join('\n');
}

function gatewayTable(g: GatewayReport): string {
  return aligned([['gateway figure', 'value', 'reference', 'target', 'result'], ...figureRows(g.figures)]);
}

/** The same tables, aligned for a terminal. */
export function consoleTables(report: Report): string {
  const queries = [
    ['query', 'p50', 'p95', 'DuckDB p50', 'ratio', 'target', 'result'],
    ...[...report.cases, ...(report.importedCases ?? []).map((c) => ({ ...c, id: `imported: ${c.id}` }))].map((c) => [
      c.id,
      fmt(c.server.p50),
      fmt(c.server.p95),
      fmt(c.duckdb.p50),
      `${fmt(c.ratio)}x`,
      c.target,
      mark(c.pass),
    ]),
  ];
  const others = [['figure', 'value', 'reference', 'target', 'result'], ...figureRows(report.figures)];
  return [
    aligned(queries),
    '',
    aligned(others),
    '',
    gatewayTable(report.gateway),
    '',
    consoleTable(report.console),
    '',
    tally(report),
  ].join('\n');
}

export function aligned(rows: string[][]): string {
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

/** The console in Chromium through the web shell (issue 25 section 4). */
export interface ConsoleReport {
  setup: { rowsInWindow: number; chromium: string; loads: number; signIns: number; switchRounds: number };
  /** Navigation to the sign-in screen ready to use, each load in a new browser context (nothing cached). */
  startToSignIn: Timing;
  /**
   * A first launch on a new data folder, each a new web shell whose page is opened as soon as it
   * prints its address: the page's navigation to the demo sign-in ready (`pageToSignIn`), and the
   * shell's spawn to the same instant (`spawnToSignIn`, which adds the host's own start).
   */
  firstLaunch: { pageToSignIn: Timing; spawnToSignIn: Timing; launches: number };
  /** The demo sign-in click to the Analytics screen's cards and chart painted with data: each time, then the spread. */
  signIns: number[];
  signInToDashboard: Timing;
  /** A click in the navigation to the screen's content painted (no loading note, nothing busy). */
  screenSwitch: Timing & { byScreen: Record<string, number[]> };
  javascript: {
    /** Scripts the page had fetched by its first contentful paint, decoded bytes. */
    beforeFirstPaint: { file: string; kB: number }[];
    beforeFirstPaintKB: number;
    chunks: number;
    largestChunk: { file: string; kB: number };
    /** A chunk over vite's chunkSizeWarningLimit (500 kB), of which the build warns. */
    sizeWarning: boolean;
  };
  scroll: { pages: number; rowsPerPage: number; longTasks: number; longestTaskMs: number; frames: number };
  figures: Figure[];
}

export const CONSOLE_TARGETS = {
  firstLaunchMs: 1000,
  startMs: 1000,
  signInMs: 1000,
  switchP95Ms: 150,
  chunkKB: 500,
  longTaskMs: 50,
  /** The scrolling target is set at 10M rows in the request log's window: a smaller window is measured, not judged. */
  scrollRows: 10_000_000,
};

export function consoleFigures(r: Omit<ConsoleReport, 'figures'>): Figure[] {
  const t = CONSOLE_TARGETS;
  const ms = (values: Timing) => `p50 ${round(values.p50, 0)} ms, max ${round(values.max, 0)} ms`;
  const js = r.javascript;
  // Split, none too big, and the charts' chunk not among those the sign-in page waits for.
  const splitOk =
    js.chunks > 1 &&
    js.largestChunk.kB <= t.chunkKB &&
    !js.sizeWarning &&
    js.beforeFirstPaint.every((chunk) => !chunk.file.startsWith('charts-'));
  return [
    {
      // As the issue measured it: a new user opens the page and waits for the demo's sign-in.
      figure: 'console: first launch on a new data folder, page to a usable demo sign-in (median)',
      value: round(r.firstLaunch.pageToSignIn.p50, 1),
      unit: 'ms',
      reference: `${r.firstLaunch.launches} launches; ${ms(r.firstLaunch.pageToSignIn)}; from the web shell's spawn ${ms(r.firstLaunch.spawnToSignIn)}`,
      target: `≤ ${t.firstLaunchMs} ms`,
      pass: r.firstLaunch.pageToSignIn.p50 <= t.firstLaunchMs,
    },
    {
      // Every load is one a person may wait through: the slowest of them is judged, not the median.
      figure: 'console: page load to the sign-in screen (slowest)',
      value: round(r.startToSignIn.max, 1),
      unit: 'ms',
      reference: `${r.setup.loads} loads, each in a new browser context; ${ms(r.startToSignIn)}; warm data folder`,
      target: `≤ ${t.startMs} ms`,
      pass: r.startToSignIn.max <= t.startMs,
    },
    {
      // The first sign-in is the one a person waits for after starting the console: it is judged.
      figure: 'console: first sign-in click to the Analytics screen painted with data',
      value: round(r.signIns[0] ?? NaN, 1),
      unit: 'ms',
      reference:
        r.signIns.length > 1
          ? `then ${r.signIns
              .slice(1)
              .map((ms) => `${round(ms, 0)} ms`)
              .join(', ')} signing in again (screens and chunks loaded)`
          : 'one sign-in',
      target: `≤ ${t.signInMs} ms`,
      pass: (r.signIns[0] ?? Infinity) <= t.signInMs,
    },
    {
      figure: 'console: screen switch to content painted, p95',
      value: round(r.screenSwitch.p95, 1),
      unit: 'ms',
      reference: `${Object.keys(r.screenSwitch.byScreen).length} screens × ${r.setup.switchRounds} rounds; p50 ${round(r.screenSwitch.p50, 0)} ms, max ${round(r.screenSwitch.max, 0)} ms`,
      target: `≤ ${t.switchP95Ms} ms`,
      pass: r.screenSwitch.p95 <= t.switchP95Ms,
    },
    {
      figure: 'console: JavaScript fetched before the first paint',
      value: js.beforeFirstPaintKB,
      unit: 'kB',
      reference: `${js.beforeFirstPaint.map((c) => `${c.file} ${c.kB} kB`).join(', ')}; ${js.chunks} chunks, the largest ${js.largestChunk.file} ${js.largestChunk.kB} kB`,
      target: `code-split; no chunk over ${t.chunkKB} kB`,
      pass: splitOk,
    },
    {
      figure: `console: request log scrolling, longest task (${r.setup.rowsInWindow.toLocaleString('en')} rows in the window)`,
      value: r.scroll.longestTaskMs,
      unit: 'ms',
      reference: `${r.scroll.pages} pages of ${r.scroll.rowsPerPage} rows of ${r.setup.rowsInWindow.toLocaleString('en')} in the window, ${r.scroll.frames} frames scrolled; ${r.scroll.longTasks} long tasks`,
      target: `no long task over ${t.longTaskMs} ms at ${t.scrollRows.toLocaleString('en')} rows in the window`,
      // Judged only on a window as large as the target's: a smaller one proves nothing about it.
      pass: r.setup.rowsInWindow >= t.scrollRows ? r.scroll.longestTaskMs <= t.longTaskMs : null,
    },
  ];
}

/** The console section of the markdown: its figures, then each screen's switch times. */
function consoleLines(c: ConsoleReport): string[] {
  return [
    '## Console',
    '',
    `The built renderer in Chromium ${c.setup.chromium} (headless, 1440×900) through the web shell, whose embedded ` +
      `server runs on this store, ${c.setup.rowsInWindow.toLocaleString('en')} requests in the request log's window. ` +
      'Times are taken in the page, from the click (or the navigation) to the first of two animation frames in a row ' +
      'that show the result; a screen is painted when its title shows, its data is on screen and nothing in it is loading ' +
      'or busy. Analytics is painted when every chart within the window is drawn: the charts below it are drawn as ' +
      'they scroll into view or when the browser idles.',
    '',
    ...table(['figure', 'value', 'reference', 'target', 'result'], figureRows(c.figures)),
    '',
    ...table(
      ['screen', 'switch times (ms)'],
      Object.entries(c.screenSwitch.byScreen).map(([screen, times]) => [screen, times.map(fmt).join(', ')]),
    ),
    '',
  ];
}

function consoleTable(c: ConsoleReport): string {
  return aligned([['console figure', 'value', 'reference', 'target', 'result'], ...figureRows(c.figures)]);
}

/** `npm run bench -- --only console`: the console section alone, on a store of its own. */
export interface ConsoleOnlyReport {
  meta: GatewayOnlyReport['meta'];
  console: ConsoleReport;
  passed: number;
  failed: number;
}

export function consoleOnlyMarkdown(report: ConsoleOnlyReport): string {
  const m = report.meta;
  return [
    `# Benchmark: the console alone (${m.rows.toLocaleString('en')} rows seeded)`,
    '',
    ...quickNote(m),
    `Run ${m.startedAt} on ${m.cpus} × ${m.cpuModel}, Node ${m.node}. Took ${fmt(m.seconds)} s. ` +
      `**${report.passed} pass, ${report.failed} fail.**`,
    '',
    ...consoleLines(report.console),
  ].join('\n');
}

export function consoleOnlyConsole(report: ConsoleOnlyReport): string {
  return [consoleTable(report.console), '', tally(report)].join('\n');
}

export interface ControlStoreRun {
  rps: number;
  /** CPU microseconds per request: the server process, and PostgreSQL's postmaster with its backends. */
  serverCpuUs: number | null;
  databaseCpuUs: number | null;
}

export interface PostgresControlReport {
  connections: number;
  seconds: number;
  rounds: Record<'keys' | 'gateway', Record<'sqlite' | 'postgres', ControlStoreRun>[]>;
  medians: Record<'keys' | 'gateway', Record<'sqlite' | 'postgres', ControlStoreRun>>;
  figures: Figure[];
}

/** One query case on both request logs (postgres-request-log.ts); the verdict is PostgreSQL's. */
export interface RequestLogCase {
  id: string;
  kind: CaseKind;
  postgres: Timing;
  sqlite: Timing;
  duckdb: Timing;
  target: string;
  pass: boolean;
  check?: CaseResult['check'];
}

export interface PostgresRequestLogReport {
  importSeconds: number;
  /** PostgreSQL alone loading the same rows (COPY from a file, indexes built after), same cluster, same run. */
  floorSeconds: number;
  rowsPerSecond: number;
  cases: RequestLogCase[];
  figures: Figure[];
}

/** `npm run bench -- --store postgres`: both stores on PostgreSQL beside SQLite. */
export interface PostgresOnlyReport {
  meta: GatewayOnlyReport['meta'];
  control: PostgresControlReport;
  requestLog: PostgresRequestLogReport;
  passed: number;
  failed: number;
}

export function postgresMarkdown(report: PostgresOnlyReport): string {
  const m = report.meta;
  const c = report.control;
  const r = report.requestLog;
  const runs = (load: 'keys' | 'gateway') =>
    c.rounds[load].map((run) => `${round(run.sqlite.rps, 0)} / ${round(run.postgres.rps, 0)}`).join(', ');
  return [
    `# Benchmark: both stores on PostgreSQL beside SQLite (${m.rows.toLocaleString('en')} rows seeded)`,
    '',
    `Run ${m.startedAt} on ${m.cpus} × ${m.cpuModel}, Node ${m.node}. Took ${fmt(m.seconds)} s. ` +
      `**${report.passed} pass, ${report.failed} fail.**`,
    '',
    '## The control store',
    '',
    'The same data folder served twice on one machine: by a server on SQLite, and by a server whose ' +
      'control store was copied into PostgreSQL (`admin migrate-store`, a throwaway cluster with fsync on). ' +
      'Both keep the request log in SQLite here. Database CPU is the postmaster and its backends, ' +
      'read from /proc around each timed run; the server on SQLite is its idle reference. The gateway ' +
      "load cycles through 20 keys at the platform's highest rate (one key's admissions take its lock in " +
      'the database one after another); the database, both servers, the upstream and the load generator ' +
      'share the two cores.',
    '',
    ...table(['figure', 'value', 'reference', 'target', 'result'], figureRows(c.figures)),
    '',
    `${c.connections} connections, ${c.seconds} s a run after a 1 s warm-up, medians of ${c.rounds.keys.length} alternating rounds.`,
    `GET /keys rounds (req/s, SQLite / PostgreSQL): ${runs('keys')}.`,
    `Gateway rounds (req/s, SQLite / PostgreSQL): ${runs('gateway')}.`,
    '',
    '## The request log',
    '',
    "The data folder's `telemetry.db` copied into the same database (`admin migrate-store --telemetry-url`: " +
      'one transaction: the rows, their search columns made again, the rollup cells copied as the file holds them and checked), then every query case through ' +
      "both servers' HTTP, the server on PostgreSQL holding both stores there. Each row count is checked " +
      "against DuckDB's on the same rows. The verdict is PostgreSQL's, against issue 28's targets. " +
      "Beside the copy's rate, PostgreSQL alone: the same rows written to a file by the server's `COPY` " +
      'and loaded from it into an empty database on the same cluster, the table with its primary key ' +
      "alone and its other indexes built after, as the import does, then `VACUUM (ANALYZE)`: PostgreSQL's " +
      'own bulk load of these rows, which bounds any importer (the copy writes the rollups and the search tables besides). It is timed in the same run because the ' +
      "machine's speed varies several-fold between days: the copy is read as a ratio to it.",
    '',
    ...table(['figure', 'value', 'reference', 'target', 'result'], figureRows(r.figures)),
    '',
    ...table(
      ['query', 'PostgreSQL p50', 'PostgreSQL p95', 'SQLite p50', 'SQLite p95', 'DuckDB p50', 'target', 'result'],
      r.cases.map((q) => [
        q.id,
        fmt(q.postgres.p50),
        fmt(q.postgres.p95),
        fmt(q.sqlite.p50),
        fmt(q.sqlite.p95),
        fmt(q.duckdb.p50),
        q.target + (q.check?.ok === false ? ' (row count differs)' : ''),
        q.pass ? 'pass' : 'FAIL',
      ]),
    ),
    '',
  ].join('\n');
}

export function postgresConsole(report: PostgresOnlyReport): string {
  const figures = [...report.control.figures, ...report.requestLog.figures];
  const failed = report.requestLog.cases.filter((q) => !q.pass).map((q) => q.id);
  return [
    aligned([['PostgreSQL figure', 'value', 'reference', 'target', 'result'], ...figureRows(figures)]),
    '',
    `request-log cases failing on PostgreSQL: ${failed.length === 0 ? 'none' : failed.join(', ')}`,
    '',
    `${report.passed} pass, ${report.failed} fail`,
  ].join('\n');
}
