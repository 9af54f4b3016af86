/**
 * An ingestion pass running in this process, as /health shows it. Declared here so that the
 * HTTP layer reads it without importing ingest/ (ingest/pass-watch.ts tracks the pass and
 * answers with this).
 */

/** A pass running, at the time asked. Times in ISO 8601 UTC and seconds. */
export interface PassState {
  startedAt: string;
  runningSeconds: number;
  /** How long a pass may take before it counts as overdue, s. */
  expectedSeconds: number;
  /** Running longer than expected: /health says degraded. */
  overdue: boolean;
}
