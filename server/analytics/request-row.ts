import { servedProvider, storedAttempts } from '../domain/attempts.js';
import { microToPkr } from '../domain/money.js';
import type { RequestLogRow } from '../schemas/analytics.js';
import { isoTime } from '../schemas/common.js';
import type { RequestRecord } from '../stores/telemetry/request-record.js';

export interface Names {
  /** Active keys only: a revoked key's rows show `key.name` null. */
  keys: Map<string, string>;
  projects: Map<string, string>;
}

const ref = (id: string | null, names: Map<string, string>) =>
  id === null ? null : { id, name: names.get(id) ?? null };

/** A stored row in the request-log shape of the contract. */
export function toRequestLogRow(row: RequestRecord, names: Names): RequestLogRow {
  return {
    req_id: row.req_id,
    timestamp: isoTime(row.ts),
    model: row.model,
    status: row.status,
    stream: row.stream === 1,
    api: row.api,
    key: ref(row.key_id, names.keys),
    project: ref(row.project_id, names.projects),
    metrics: {
      total_ms: row.total_ms,
      ttft_ms: row.ttft_ms,
      tpot_ms: row.tpot_ms,
      pre_dispatch_ms: row.pre_dispatch_ms,
      prompt_tokens: row.prompt_tokens,
      tokens_generated: row.tokens_generated,
      cache_creation_input_tokens: row.cache_creation_input_tokens,
      cache_read_input_tokens: row.cache_read_input_tokens,
      total_tokens: row.total_tokens,
      tokens_estimated: row.tokens_estimated === 1,
    },
    financials: { cost_pkr: microToPkr(row.cost_micro), is_byok: row.is_byok },
    status_detail: {
      termination_reason: row.termination_reason as RequestLogRow['status_detail']['termination_reason'],
      upstream_error: row.upstream_error,
    },
    upstream:
      row.upstream_model === null
        ? null
        : {
            model: row.upstream_model,
            provider: row.served_by === null ? null : servedProvider(row.served_by),
            attempts: storedAttempts(row.attempts),
          },
    user_agent: row.user_agent,
    metadata: JSON.parse(row.metadata) as Record<string, string>,
  };
}
