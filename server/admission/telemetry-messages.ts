import type { RequestRecord } from '../stores/telemetry/request-record.js';

/** What the thread that writes the gateways' rows is started with (telemetry-thread.ts). */
export interface TelemetryThreadData {
  controlPath: string;
  telemetryPath: string;
  /** How long a write waits for another writer's lock before it fails and is tried again. */
  busyTimeoutMs: number;
}

export type ToTelemetryThread = { kind: 'rows'; id: number; rows: RequestRecord[] } | { kind: 'close' };

export type FromTelemetryThread =
  | { kind: 'written'; id: number }
  | { kind: 'failed'; id: number; message: string }
  /** The rows are committed; their spend waits in the outbox (spend-outbox.ts). */
  | { kind: 'unsettled'; message: string };
