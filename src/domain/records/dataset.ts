/**
 * The dataset as stored: what it is, what replaces it, and the change feed of its positions and
 * markets (src/store/ports/market-data.ts).
 */
import type { MarketRecord, PositionRecord, VaultRecord } from '../types.ts';

/** Where a dataset came from. `sandbox` data is generated and always served as `snapshot`. */
export type DatasetKind = 'sandbox' | 'live';

export interface DatasetInfo {
  kind: DatasetKind;
  profile: string;
  seed: number | null;
  /** Epoch ms when the data was last refreshed from its source (for sandbox data: when it was seeded). */
  refreshedAt: number;
  marketCount: number;
  positionCount: number;
  /** Bumped each time the dataset is replaced, so read models know when to reload. */
  version: number;
  /**
   * The sequence number of the last position change written since (applyPositionChanges), 0
   * when none: a read model at a lower number reads positionChangesSince() and applies them.
   */
  changeSeq: number;
}

/**
 * One position as its source now sees it, upserted by (marketKey, user). Amounts are in the USD
 * of the market record's own prices, like the dataset's positions.
 */
export interface PositionChange extends PositionRecord {
  /**
   * Optimistic check: the sequence number of the stored version the change was computed from
   * (0: the dataset's own position, never changed since). When the stored version is another
   * one, the change is skipped (another writer got there first). Undefined: unconditional.
   */
  basedOn?: number;
}

/** A stored position change, in the order of the change feed. */
export interface StoredPositionChange extends PositionRecord {
  seq: number;
  source: string;
}

/** A stored market change, in the order of the change feed. */
export interface StoredMarketChange {
  record: MarketRecord;
  seq: number;
  source: string;
}

/** A stored vault change, in the order of the change feed. */
export interface StoredVaultChange {
  record: VaultRecord;
  seq: number;
  source: string;
}

/**
 * What one pass of the real sources changed in the dataset, written in one transaction
 * (applyChanges): the markets, positions and vaults that changed, each replacing the dataset's
 * record of the same key as served, and the dataset's new refresh time. Positions are stated
 * like the dataset's: at their market's dataset prices and borrow index.
 */
export interface DatasetChanges {
  markets: readonly MarketRecord[];
  positions: readonly PositionRecord[];
  vaults: readonly VaultRecord[];
  /**
   * Markets and vaults new to the dataset: each is added to it, after those it holds, and is in
   * the change feed as a change of itself (written before `markets` and `vaults`). A market's
   * record as added is what its positions are stated at. Absent: none.
   */
  added?: { markets: readonly MarketRecord[]; vaults: readonly VaultRecord[] };
  /** Epoch ms the data now reflects (DatasetInfo.refreshedAt). */
  refreshedAt: number;
}

/** What applyPositionChanges did. */
export interface AppliedPositionChanges {
  /** The changes written; the others were skipped by their basedOn check. */
  applied: PositionChange[];
  /** The dataset's change sequence number after the write. */
  changeSeq: number;
}

export interface DatasetInput {
  kind: DatasetKind;
  profile: string;
  seed: number | null;
  /**
   * Epoch ms the data reflects, when not the time of the write: a dataset merged from several
   * sources is as fresh as the stalest of them (docs/decisions.md "Freshness per source").
   */
  refreshedAt?: number;
  markets: readonly MarketRecord[];
  /** The vaults lending into the markets (absent: none). */
  vaults?: readonly VaultRecord[];
  positions: Iterable<PositionRecord>;
  positionCount: number;
  /**
   * Write only if the store holds no dataset yet, checked under the write lock: several
   * instances starting at once on an empty database seed it once.
   */
  onlyIfEmpty?: boolean;
}
