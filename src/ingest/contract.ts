import type { SourceProgress } from '../domain/pass-state.ts';
import type { DatasetInput } from '../domain/records/dataset.ts';
import type { LiquidationEvent, OracleRound } from '../domain/records/history.ts';
import type { ChainSync, SourceState } from '../domain/records/sources.ts';
import type { MarketRecord, PositionRecord, VaultRecord } from '../domain/types.ts';

/**
 * The ingest contract. A source (the sandbox simulation now; chain adapters and the Morpho API
 * next) produces domain records and says how each item went; it never writes to the store and
 * never throws a whole run away for one bad item. Ingestion (runner.ts) owns the writes and
 * the source's checkpoint: last successful refresh, last block per chain, consecutive
 * failures, last error. A run that fails as a whole leaves the source's data as it was (it
 * ages, docs/decisions.md "Freshness per source"): nothing is emptied.
 */

/** How one item of a run went (a market, a feed, a block range). */
/**
 * One item of a run (a market, a feed, a vault…): read, read with a note (what is served of it
 * falls short, e.g. a market without a USD price, "Real sources" (docs/decisions.md)), or not read (why).
 */
export type ItemReport = { id: string; ok: true; note?: string } | { id: string; ok: false; error: string };

/** What a source hands to ingestion in one run. */
export interface SourceOutput {
  /**
   * A full snapshot of the source's markets and positions (the sandbox: generated whole from
   * its seed). Chain and API sources will hand record changes instead.
   */
  snapshot?: DatasetInput;
  /**
   * The source's own markets, positions and vaults now (chain sources): ingestion merges them
   * with the other sources' into one dataset; a source that fails keeps its last ones.
   */
  records?: {
    markets: MarketRecord[];
    positions: PositionRecord[];
    vaults?: VaultRecord[];
    /**
     * The markets (by key) whose positions `positions` holds only in part: those the run read
     * again (one read empty with its figures at zero); the others are as stored. Left out, or a
     * market not in it: `positions` holds every position of the market, and one stored that is
     * not handed is gone. (A market of a pooled protocol is always handed whole: its accounts are
     * compared as a whole.)
     */
    partial?: ReadonlySet<string>;
  };
  /** Liquidations seen in this run (appended to the history; the same one twice is kept once). */
  liquidations?: LiquidationEvent[];
  /** Oracle rounds read in this run (appended to the history). */
  rounds?: OracleRound[];
  /** Blocks reached, per chain id (chain sources). */
  blocks?: Record<string, number>;
  /** The chain head seen, per chain id (chain sources; their lag is head − block). */
  head?: Record<string, number>;
  /** Per chain id read, its sync under way, or null when its logs are read up to its block. */
  sync?: Record<string, ChainSync | null>;
  /**
   * The chain reorganized below the last block read: the history read from `fromBlock` on
   * (liquidations) is forgotten before this run's is written.
   */
  reorg?: { chainId: number; fromBlock: number; fromMs?: number };
  /** The source's resume point, kept in its checkpoint (chain sources: recent block hashes). */
  cursor?: string | null;
  /** Per-item outcomes; failed items do not fail the run. */
  items: ItemReport[];
  /**
   * The run read no state (nothing of the source's logged since its last run, whose records it
   * hands again): its items are none, and the last run's stand.
   */
  stateUnread?: true;
}

export interface Source {
  /** Stable id: 'sandbox', 'chain:<chainId>', 'morpho-api'. */
  readonly id: string;
  readonly kind: 'simulation' | 'chain' | 'api';
  readonly chainIds: readonly number[];
  /**
   * Whether a stored market (with its positions) or vault is this source's: what it serves, and
   * keeps when it fails. Two sources never own one record (a chain read on-chain and by the
   * Morpho API: the chain's Morpho markets are the chain source's, its Morpho vaults the API's).
   * Left out: every record of its chains.
   */
  owns?(record: { chainId: number; protocol: string }, kind: 'market' | 'vault'): boolean;
  /**
   * One pass over the source. Throws only when nothing could be read at all (the source is
   * unreachable): the run then counts as failed and the data stays as it was.
   */
  run(nowMs: number, previous?: PreviousRun): Promise<SourceOutput>;
  /** Its run under way as it stands (what /health shows), or null when none is; left out: not told. */
  progress?(nowMs: number): SourceProgress | null;
}

/** What the last good run of a source left: its checkpoint and its records as stored. */
export interface PreviousRun {
  state: SourceState | null;
  markets: readonly MarketRecord[];
  positions: readonly PositionRecord[];
  /** The vaults lending into those markets (absent: none). */
  vaults?: readonly VaultRecord[];
  /** One market's positions of `positions` (left out: filter `positions`), without listing them all. */
  positionsIn?(marketKey: string): Iterable<PositionRecord>;
}
