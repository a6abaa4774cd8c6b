import type { CacheSums, DashboardPoint } from '../analytics/query-types.js';
import { isoInZone } from '../domain/reporting-zone.js';
import type { PriceEntry } from '../domain/routes-document.js';
import type { CacheByModel, DashboardBucket, DashboardFigures } from '../schemas/dashboard.js';
import { BOARD_MEASURES } from '../stores/telemetry/board-cells.js';

/** The dashboard's answer from the worker's sums (server/analytics/dashboard.ts). */

type Measure = (typeof BOARD_MEASURES)[number];
const AT = Object.fromEntries(BOARD_MEASURES.map((name, index) => [name, index])) as Record<Measure, number>;

const percentiles = (values: number[] | null) => values && { p50: values[0]!, p95: values[1]!, p99: values[2]! };

export function bucketJson(zone: string, start: number, point: DashboardPoint): DashboardBucket {
  return { start: isoInZone(zone, start), ...figuresJson(point) };
}

export function figuresJson(point: DashboardPoint): DashboardFigures {
  const m = (name: Measure) => point.measures[AT[name]]!;
  const requests = m('requests');
  // A sum over rows that all lack the field is unknown, not 0 (a bucket without rows knows it has none).
  const known = (sum: Measure, rows: Measure) => (requests > 0 && m(rows) === 0 ? null : m(sum));
  return {
    requests,
    ok: m('ok'),
    client_errors: m('client_errors'),
    server_errors: m('server_errors'),
    refused: m('refused'),
    cost_micro: m('cost_micro'),
    tokens: {
      prompt: known('prompt_tokens', 'prompt_rows'),
      generated: m('generated_tokens'),
      cache_read: known('cache_read', 'cache_rows'),
      cache_write: known('cache_write', 'cache_rows'),
    },
    tokens_per_second: m('speed_ms') > 0 ? (m('speed_tokens') * 1000) / m('speed_ms') : null,
    latency_ms: percentiles(point.latency),
    ttft_ms: percentiles(point.ttft),
  };
}

/** `price`: the model's route's, in the routes document's newest version (none: no saving is told). */
export function cacheJson(sums: CacheSums, price: PriceEntry | undefined): CacheByModel {
  const cached = sums.cache_rows > 0;
  // The share is that of the requests whose prompt count is known: another has no share to give.
  const known = sums.prompt_rows > 0;
  const prompt = sums.prompt_tokens + sums.known_read + sums.known_write;
  return {
    model: sums.model,
    prompt_tokens: known ? prompt : null,
    cache_read_tokens: cached ? sums.cache_read : null,
    cache_write_tokens: cached ? sums.cache_write : null,
    hit_share: cached && known && prompt > 0 ? sums.known_read / prompt : null,
    saved_micro: cached && price ? Math.round(sums.cache_read * (price.input - price.cache_read)) : null,
  };
}
