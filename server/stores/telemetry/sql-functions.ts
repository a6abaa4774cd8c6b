import type { Database } from 'better-sqlite3';
import { registerSketchFunctions } from './latency-sketch.js';
import { registerMetadataFunctions } from './request-metadata.js';
import { registerSearchFunctions } from './search-terms.js';

/** The functions the telemetry store's SQL calls: on every connection that writes, reads or migrates it. */
export function registerTelemetryFunctions(db: Database): void {
  registerSearchFunctions(db);
  registerSketchFunctions(db);
  registerMetadataFunctions(db);
}
