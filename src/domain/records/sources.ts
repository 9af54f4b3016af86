/** Source checkpoints (src/store/ports/sources.ts). */

/** Where data comes from, and how its last refreshes went: checkpoints that survive restarts. */
export interface SourceState {
  /** e.g. 'sandbox', 'chain:1', 'morpho-api'. */
  id: string;
  kind: string;
  chainIds: number[];
  /** Epoch ms of the last successful refresh, or null before the first. */
  refreshedAt: number | null;
  /** The last block read, per chain id (as a decimal string key). */
  lastBlock: Record<string, number>;
  consecutiveFailures: number;
  lastError: string | null;
  /** Epoch ms of this state, set by the caller. */
  updatedAt: number;
  /** An opaque resume point of the source's own (e.g. "history complete up to T"); null: none. */
  cursor: string | null;
  /** The chain head seen by the last successful run, per chain id (chain sources): the lag is head − lastBlock. */
  head?: Record<string, number>;
}
