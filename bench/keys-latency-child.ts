// GET /keys one request at a time, idle and then while four clients loop over 30-day summaries:
// the samples of both phases, as one line of JSON on stdout. Runs in a process of its own
// (`node --import tsx bench/keys-latency-child.ts <api base URL> <seconds>`, the session's cookie
// in BENCH_COOKIE), so that what it times is the server: in the bench's own process the
// reference rows and DuckDB's load share the event loop and the heap with the timing.
import { ApiClient } from './http.js';
import { sleep } from './stats.js';

export interface KeysLatencySamples {
  /** Milliseconds per GET /keys, in the order taken. */
  idle: number[];
  loaded: number[];
  parallelSummaries: number;
  summariesCompleted: number;
}

const PARALLEL_SUMMARIES = 4;
const MAX_REQUESTS = 5000;

async function measure(client: ApiClient, seconds: number): Promise<KeysLatencySamples> {
  const sequential = async () => {
    const samples: number[] = [];
    const until = performance.now() + seconds * 1000;
    while (performance.now() < until && samples.length < MAX_REQUESTS) {
      const t0 = performance.now();
      await client.get('/keys');
      samples.push(performance.now() - t0);
    }
    return samples;
  };
  for (let i = 0; i < 50; i++) await client.get('/keys');
  const idle = await sequential();

  let loading = true;
  let summariesCompleted = 0;
  const loadDeadline = performance.now() + (seconds + 120) * 1000;
  const loader = async () => {
    // Bounded by the flag, a deadline and a count.
    for (let i = 0; loading && i < 100_000 && performance.now() < loadDeadline; i++) {
      await client.get('/analytics/summary?time_range=30d');
      summariesCompleted++;
    }
  };
  const loaders = Array.from({ length: PARALLEL_SUMMARIES }, loader);
  try {
    await sleep(200); // Let the summaries get going first.
    const loaded = await sequential();
    return { idle, loaded, parallelSummaries: PARALLEL_SUMMARIES, summariesCompleted };
  } finally {
    loading = false;
    await Promise.all(loaders);
  }
}

const [baseUrl, secondsText] = process.argv.slice(2);
const cookie = process.env.BENCH_COOKIE;
const seconds = Number(secondsText);
if (!baseUrl || !cookie || !(seconds > 0)) {
  throw new Error('usage: BENCH_COOKIE=<cookie> keys-latency-child.ts <api base URL> <seconds>');
}
process.stdout.write(JSON.stringify(await measure(new ApiClient(baseUrl, cookie), seconds)) + '\n');
