/** Where the request log is: a SQLite file, or a PostgreSQL database. */
export type TelemetryLocation = { path: string } | { url: string };

/** What the API reads of the request log itself (the analytics read it through their own pool). */
export interface TelemetryReads {
  /** Whether the store can be read now; a read may still fail, and answers null or 503 then. */
  reachable(): boolean;
  /**
   * Newest request time per key, for keys with at least one request; null when the store cannot
   * be read. The same keys and rows give the same Map, so that a caller may keep what it made of it.
   */
  lastUsedByKey(keys: readonly { id: string }[]): Promise<Map<string, number> | null>;
  close(): Promise<void>;
}
