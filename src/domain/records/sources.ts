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
  /** Per chain id, its sync under way (chain sources whose logs are behind the block read). */
  sync?: Record<string, ChainSync>;
}

/**
 * A chain's sync under way (a first sync, or a catch-up after a long stop), read pass by pass:
 * the accounts its logs named from `fromBlock` through `throughBlock` are served, read at
 * `toBlock`; those the later logs name are not yet.
 */
export interface ChainSync {
  /** The first block of its logs. */
  fromBlock: number;
  /** The last block of its logs read. */
  throughBlock: number;
  /** The block its last pass read the state at (the source's last block). */
  toBlock: number;
  /** When it began, epoch ms. */
  startedAt: number;
  /** Accounts known so far. */
  accounts: number;
}

/**
 * A sync as stored (in a source's state or its checkpoint), or null when it is not one: every
 * field a non-negative integer, its blocks in order (fromBlock at most throughBlock + 1, that at
 * most toBlock).
 */
export function chainSyncOf(x: unknown): ChainSync | null {
  if (typeof x !== 'object' || x === null) return null;
  const c = x as ChainSync;
  const counts = [c.fromBlock, c.throughBlock, c.toBlock, c.startedAt, c.accounts];
  if (!counts.every((v) => Number.isSafeInteger(v) && v >= 0)) return null;
  if (c.fromBlock > c.throughBlock + 1 || c.throughBlock > c.toBlock) return null;
  const { fromBlock, throughBlock, toBlock, startedAt, accounts } = c;
  return { fromBlock, throughBlock, toBlock, startedAt, accounts };
}
