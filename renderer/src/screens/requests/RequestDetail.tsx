import type { ReactNode } from 'react';
import { Breakable } from '../../components/Breakable.js';
import { CopyButton } from '../../components/CopyButton.js';
import { Time } from '../../components/Time.js';
import { formatCount, formatDecimal, utcTitle } from '../../lib/format.js';
import { formatPkr } from '../../lib/money.js';
import { apiLabel, apiTitle } from '../../lib/request-api.js';
import { RequestAttempts } from './RequestAttempts.js';
import { RequestCost, RequestTokens } from './RequestBreakdown.js';
import { reasonLabel, type RequestRow } from './request-row.js';
import { RequestTimeline } from './RequestTimeline.js';
import { Unknown } from './Unknown.js';
import './request-picture.css';

/**
 * One request-log row: its timeline, tokens and cost as pictures first, then every field of
 * the row as recorded. A null is unknown, shown as a dash with what its absence means on this
 * field (ttft on a non-streamed request, a cache leg on a route with no cache), never as 0.
 */
export function RequestDetail({ row, onClose }: { row: RequestRow; onClose: () => void }) {
  const m = row.metrics;
  const upstreamModel = row.upstream?.model ?? null;
  // Absent from a control plane that answers only the contract's fields: unknown, as null.
  const provider = row.upstream?.provider ?? null;
  const attemptsKnown = (row.upstream?.attempts ?? null) !== null;
  return (
    <aside
      className="panel requests-detail"
      aria-labelledby="request-detail-title"
      data-testid="request-detail"
      onKeyDown={(event) => {
        if (event.key === 'Escape') onClose();
      }}
    >
      <header className="requests-detail-head">
        <h2 id="request-detail-title">Request</h2>
        <button type="button" onClick={onClose} data-testid="close-detail" aria-label="Close the request detail">
          Close
        </button>
      </header>

      <RequestTimeline row={row} />
      <RequestAttempts row={row} />
      <RequestTokens row={row} />
      <RequestCost row={row} />

      <Section title="Request">
        <Item label="Request id" field="req_id">
          <code data-testid="detail-req-id">
            <Breakable text={row.req_id} />
          </code>{' '}
          <CopyButton text={row.req_id} label="Copy id" testId="copy-request-id" />
        </Item>
        <Item label="Time" field="timestamp">
          <Time iso={row.timestamp} />
          <br />
          <span className="muted">{utcTitle(row.timestamp)}</span>
        </Item>
        <Item label="Model (as sent)" field="model">
          <Breakable text={row.model} />
        </Item>
        <Item label="Status" field="status">
          {row.status}
        </Item>
        <Item label="API" field="api">
          {/* Absent from a control plane that does not say it: unknown, as null. */}
          {(row.api ?? null) === null ? (
            <Unknown why="not recorded" />
          ) : (
            <>
              {apiLabel(row.api)}
              <br />
              <span className="muted">{apiTitle(row.api)}</span>
            </>
          )}
        </Item>
        <Item label="Streamed" field="stream">
          {row.stream ? 'Yes' : 'No'}
        </Item>
        <Item label="Key" field="key">
          <Ref value={row.key} kind="key" />
        </Item>
        <Item label="Project" field="project">
          <Ref value={row.project} kind="project" />
        </Item>
      </Section>

      <Section title="Metrics">
        <Item label="Total latency" field="metrics.total_ms">
          {formatDecimal(m.total_ms, ' ms')}
        </Item>
        <Item label="Time to first token" field="metrics.ttft_ms">
          {m.ttft_ms === null ? (
            <Unknown why="not streamed, or no first token flushed" />
          ) : (
            formatDecimal(m.ttft_ms, ' ms')
          )}
        </Item>
        <Item label="Time per output token" field="metrics.tpot_ms">
          {m.tpot_ms === null ? (
            <Unknown why="not streamed, or no first token flushed" />
          ) : (
            formatDecimal(m.tpot_ms, ' ms')
          )}
        </Item>
        <Item label="Before dispatch" field="metrics.pre_dispatch_ms">
          {formatDecimal(m.pre_dispatch_ms, ' ms')}
        </Item>
        <Item label="Prompt tokens" field="metrics.prompt_tokens">
          {m.prompt_tokens === null ? <Unknown why="not recorded on older rows" /> : formatCount(m.prompt_tokens)}
        </Item>
        <Item label="Tokens generated" field="metrics.tokens_generated">
          {formatCount(m.tokens_generated)}
        </Item>
        <Item label="Cache write tokens" field="metrics.cache_creation_input_tokens">
          {m.cache_creation_input_tokens === null ? (
            <Unknown why="this route has no prompt cache" />
          ) : (
            formatCount(m.cache_creation_input_tokens)
          )}
        </Item>
        <Item label="Cache read tokens" field="metrics.cache_read_input_tokens">
          {m.cache_read_input_tokens === null ? (
            <Unknown why="this route has no prompt cache" />
          ) : (
            formatCount(m.cache_read_input_tokens)
          )}
        </Item>
        <Item label="Total tokens" field="metrics.total_tokens">
          {formatCount(m.total_tokens)}
        </Item>
        <Item label="Token counts" field="metrics.tokens_estimated">
          {m.tokens_estimated ? 'Estimated by the gateway' : 'Reported by the upstream'}
        </Item>
      </Section>

      <Section title="Financials">
        <Item label="Cost" field="financials.cost_pkr">
          {formatPkr(row.financials.cost_pkr)}
        </Item>
        <Item label="Served on" field="financials.is_byok">
          {row.financials.is_byok === 1
            ? "The customer's own provider key (BYOK): only the service's share is billed"
            : "The service's own capacity"}
        </Item>
      </Section>

      <Section title="Outcome">
        <Item label="Ended as" field="status_detail.termination_reason">
          {reasonLabel(row.status_detail.termination_reason)}{' '}
          <code className="muted">
            <Breakable text={row.status_detail.termination_reason} />
          </code>
        </Item>
        <Item label="Upstream error" field="status_detail.upstream_error">
          {row.status_detail.upstream_error ?? <Unknown why="none recorded" />}
        </Item>
        <Item label="Upstream model" field="upstream.model">
          {upstreamModel === null ? <Unknown why="not recorded on older rows" /> : <Breakable text={upstreamModel} />}
        </Item>
        <Item label="Served by" field="served_by">
          {upstreamModel !== null && provider !== null ? (
            <code>
              <Breakable text={`${provider}/${upstreamModel}`} />
            </code>
          ) : (
            <Unknown why={attemptsKnown ? 'no target served it' : 'not recorded'} />
          )}
        </Item>
        <Item label="User agent" field="user_agent">
          {row.user_agent ? (
            <code className="requests-wrap">
              <Breakable text={row.user_agent} />
            </code>
          ) : (
            <Unknown why="none sent" />
          )}
        </Item>
      </Section>

      <section aria-labelledby="request-metadata-title">
        <h3 id="request-metadata-title">Metadata</h3>
        <MetadataTable metadata={row.metadata} />
      </section>
    </aside>
  );
}

function Section({ title, children }: { title: string; children: ReactNode }) {
  return (
    <section>
      <h3>{title}</h3>
      <dl className="requests-fields">{children}</dl>
    </section>
  );
}

function Item({ label, field, children }: { label: string; field: string; children: ReactNode }) {
  return (
    <>
      <dt>{label}</dt>
      <dd data-testid={`detail-${field}`}>{children}</dd>
    </>
  );
}

function Ref({ value, kind }: { value: RequestRow['key']; kind: string }) {
  if (!value) return <Unknown why={`no ${kind} attribution`} />;
  return (
    <>
      {value.name ?? <Unknown why={`${kind} since removed`} />}
      <br />
      <code className="muted">
        <Breakable text={value.id} />
      </code>
    </>
  );
}

function MetadataTable({ metadata }: { metadata: Readonly<Record<string, string>> }) {
  const entries = Object.entries(metadata).sort(([a], [b]) => a.localeCompare(b));
  if (entries.length === 0)
    return (
      <p className="muted" data-testid="detail-metadata-empty">
        None: the request carried no X-SVC-Meta-* headers.
      </p>
    );
  return (
    <table className="requests-metadata" data-testid="detail-metadata">
      <thead>
        <tr>
          <th scope="col">Key</th>
          <th scope="col">Value</th>
        </tr>
      </thead>
      <tbody>
        {entries.map(([key, value]) => (
          <tr key={key}>
            <th scope="row">
              <Breakable text={key} />
            </th>
            <td className="requests-wrap">
              <Breakable text={value} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
