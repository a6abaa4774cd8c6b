import type { ControlLocation } from '../stores/control/store.js';
import type { TelemetryLocation } from '../stores/telemetry/open.js';
import type { RequestRecord } from '../stores/telemetry/request-record.js';

/** What the thread that writes the gateways' rows is started with (telemetry-thread.ts). */
export interface TelemetryThreadData {
  /** Where the control store is: a file, or a PostgreSQL database. */
  controlLocation: ControlLocation;
  /** Where the request log is: a file, or a PostgreSQL database. */
  telemetry: TelemetryLocation;
  /** How long a write waits for another writer's lock before it fails and is tried again. */
  busyTimeoutMs: number;
}

/**
 * A deletion's two steps, each a message of its own so that a batch of rows can go between them;
 * or `cells`, an hour of fine rollup cells before `before` (fine-cells.ts), a step of its own.
 */
export type ExpiryStep = 'rows' | 'terms' | 'cells';

export type ToTelemetryThread =
  | { kind: 'rows'; id: number; rows: RequestRecord[] }
  /**
   * Retention: `rows`, delete at most `limit` of the organisation's rows older than `before`;
   * `terms`, then a stretch of the search terms of its rows deleted (SQLite's expire-terms.ts).
   */
  | { kind: 'expire'; id: number; step: ExpiryStep; orgId: string; before: number; limit: number }
  | { kind: 'close' };

export type FromTelemetryThread =
  | { kind: 'written'; id: number }
  /** `ms`: how long the step's transaction took, as long as a batch of rows could have waited for it. */
  | { kind: 'expired'; id: number; rows: number; terms: number; cells: number; ms: number; more: boolean }
  | { kind: 'failed'; id: number; message: string }
  /** The rows are committed; their spend waits in the outbox (spend-outbox.ts). */
  | { kind: 'unsettled'; message: string }
  /** A migration of the store is about to run on this thread's connection (store.ts, logUpgrading). */
  | { kind: 'upgrading'; migration: string };
