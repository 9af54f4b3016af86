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
  /** Each source's part of the pass as it stands (those with nothing under way left out). */
  sources: SourceProgress[];
}

/** A source's part of a pass under way: its log walks and the contract reads answered so far. */
export interface SourceProgress {
  source: string;
  /** Calls of multicalls answered in this pass so far (each a contract read: a market, an account, a price). */
  callsAnswered: number;
  /** Its `eth_getLogs` walks under way (a first sync walks each protocol's history). */
  logWalks: LogWalkProgress[];
}

export interface LogWalkProgress {
  /** The protocol whose logs it reads (`shared`: a pass's one read of every contract). */
  what: string;
  fromBlock: number;
  toBlock: number;
  /** The last block whose logs are read (fromBlock - 1 before the first answer). */
  reachedBlock: number;
  blocksDone: number;
  blocksTotal: number;
  logs: number;
  /** Seconds left at the pace so far; null before the first answer. */
  estimateSeconds: number | null;
}

/** Seconds left of `total` at the pace `done` took `elapsedMs`; null before anything is done. */
export function estimateSeconds(done: number, total: number, elapsedMs: number): number | null {
  return done > 0 ? Math.ceil(((total - done) * Math.max(0, elapsedMs)) / done / 1000) : null;
}
