import type { Admissions } from '../admission/admissions.js';
import type { AdmissionRequest, Decision, KeyModels } from '../schemas/gateway-internal.js';
import type { RequestRecord } from '../stores/telemetry/request-record.js';
import { fitAdmission } from './admission-request.js';
import { fitRow } from './request-facts.js';

/**
 * Where a gateway's decisions come from and where its rows go: the control plane's
 * {@link Admissions}, in the gateway's own process (`localAuthority`) or in another one over
 * the internal API (`RemoteAuthority`). The request path is the same for both.
 */
export interface Authority {
  admit(request: AdmissionRequest): Decision | Promise<Decision>;
  keyModels(secret: string): KeyModels | Promise<KeyModels>;
  /** One row per call answered or refused for a known key. */
  report(row: RequestRecord): void;
  /** Sends what is left to send; the gateway has stopped taking calls. */
  close(): Promise<void>;
}

/** The control plane in this process: its stores and counts, read directly. */
export function localAuthority(admissions: Admissions): Authority {
  return {
    admit: (request) => admissions.admit(fitAdmission(request)),
    keyModels: (secret) => admissions.keyModels(secret),
    report: (row) => admissions.record([fitRow(row)]),
    // The rows are the control plane's to write: it flushes them when it closes.
    close: async () => {},
  };
}
