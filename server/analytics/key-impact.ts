import type { CallerCount, KeyImpactQuery, KeyImpactResult } from './query-types.js';
import { rollupSource } from './rollup-sql.js';
import type { AnalyticsSql, Dialect } from './sql.js';

/**
 * What depends on one key, read before it is revoked or while its callers move to a
 * replacement: exact request counts over three windows from the rollups by key (cells in
 * the middle, rows at the edges, so the work does not grow with the key's traffic), its last
 * request from the (key_id, ts) index, and who called it: user agents and `X-SVC-Meta-*`
 * pairs counted over at most `sampleRows` of its newest requests in the callers' window, so
 * a key with millions of requests costs the same bounded read as a quiet one.
 */

// Newest first through requests_by_key (key_id, ts): the read stops after `@sample` rows.
const ofKey = (d: Dialect) => `${d.rowIs('key_id', 'keyId')} AND ${d.rowIs('org_id', 'orgId', { unindexed: true })}`;
const sample = (d: Dialect) => `SELECT user_agent, metadata FROM requests
  WHERE ${ofKey(d)} AND ts >= @from AND ts <= @to
  ORDER BY ts DESC LIMIT @sample`;

export async function keyImpact(sql: AnalyticsSql, query: KeyImpactQuery): Promise<KeyImpactResult> {
  const last = (await sql.get<{ ts: number | null }>(`SELECT MAX(ts) AS ts FROM requests WHERE ${ofKey(sql.dialect)}`, {
    keyId: query.keyId,
    orgId: query.orgId,
  }))!;
  // "The last N" has no upper edge: a row stamped ahead of now (a remote gateway's clock
  // running fast) counts, as it does in the last use, which would otherwise say "now"
  // beside no requests at all. The key's newest row bounds the read.
  const to = Math.max(query.now, last.ts ?? query.now);
  const requests: number[] = [];
  for (const ms of query.windowsMs) {
    const window = { orgId: query.orgId, keyId: query.keyId, from: query.now - ms, to };
    const source = rollupSource(
      sql.dialect,
      query.fineFrom === undefined ? window : { ...window, fineFrom: query.fineFrom },
    );
    const row = await sql.get<{ n: number }>(
      `SELECT COALESCE(SUM(requests), 0) AS n FROM (${source.sql}) AS source`,
      source.params,
    );
    requests.push(row!.n);
  }
  // One row past the sample tells whether the sample is the whole window.
  const read = await sql.all<{ user_agent: string; metadata: string }>(sample(sql.dialect), {
    orgId: query.orgId,
    keyId: query.keyId,
    from: query.now - query.callersWindowMs,
    to,
    sample: query.sampleRows + 1,
  });
  const complete = read.length <= query.sampleRows;
  const rows = complete ? read : read.slice(0, query.sampleRows);

  // Counted here rather than in SQL: one pass over the sample instead of one per figure.
  const agents = new Map<string, number>();
  const pairs = new Map<string, Map<string, number>>();
  for (const row of rows) {
    agents.set(row.user_agent, (agents.get(row.user_agent) ?? 0) + 1);
    for (const [key, value] of metadataPairs(row.metadata)) {
      let values = pairs.get(key);
      if (!values) pairs.set(key, (values = new Map()));
      values.set(value, (values.get(value) ?? 0) + 1);
    }
  }
  const metadata = [...pairs].map(([key, values]) => {
    const counted = top(values, query.topValues);
    let requests = 0;
    for (const n of values.values()) requests += n;
    return { key, requests, distinctValues: values.size, values: counted };
  });
  metadata.sort((a, b) => b.requests - a.requests || compare(a.key, b.key));
  return {
    requests,
    lastUsed: last.ts,
    sampled: rows.length,
    complete,
    distinctUserAgents: agents.size,
    userAgents: top(agents, query.topCallers),
    distinctMetadataKeys: metadata.length,
    metadata: metadata.slice(0, query.topCallers),
  };
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The `limit` most frequent, most first, ties by name so that answers are stable. */
function top(counts: Map<string, number>, limit: number): CallerCount[] {
  return [...counts]
    .map(([name, requests]) => ({ name, requests }))
    .sort((a, b) => b.requests - a.requests || compare(a.name, b.name))
    .slice(0, limit);
}

/** A row's metadata as key and value pairs; a row written by another program with bad JSON has none. */
function metadataPairs(json: string): [string, string][] {
  if (json === '{}') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return [];
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return [];
  return Object.entries(parsed as Record<string, unknown>).flatMap(([key, value]) =>
    typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? [[key, String(value)]] : [],
  );
}
