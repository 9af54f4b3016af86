import type { PositionColumns } from '../../domain/position-columns.ts';
import type {
  AppliedPositionChanges,
  DatasetChanges,
  DatasetInfo,
  DatasetInput,
  PositionChange,
  StoredMarketChange,
  StoredPositionChange,
  StoredVaultChange,
} from '../../domain/records/dataset.ts';
import type { MarketRecord, VaultRecord } from '../../domain/types.ts';

/** Called as a dataset is written: records written so far, of `total`. */
export type ProgressFn = (done: number, total: number) => void;

/** Market data: the dataset and its markets and positions (the read models, seeding). */
export interface MarketDataStore {
  datasetInfo(): Promise<DatasetInfo | null>;
  /** Atomically replaces every market and position. Returns the dataset now in the store. */
  replaceDataset(input: DatasetInput, onProgress?: ProgressFn): Promise<DatasetInfo>;
  /**
   * The dataset's markets, in the order written (those added by applyChanges last), each as the
   * dataset states it (its changes are in the change feed); with `keys`, only those of them.
   */
  loadMarkets(keys?: readonly string[]): Promise<MarketRecord[]>;
  /** The dataset's vaults, in the order written. */
  loadVaults(): Promise<VaultRecord[]>;
  /**
   * Streams positions as blocks of columns, in risk order (health factor ascending, then debt
   * descending) across the whole set; market indexes refer to the order of loadMarkets().
   */
  loadPositions(onBlock: (block: PositionColumns) => void): Promise<void>;
  /**
   * Upserts positions one by one for `source`, in one transaction, each taking the next change
   * sequence number (and dataset.changeSeq the last). A change whose `basedOn` is not the
   * stored version of its position is skipped; one naming a market the dataset does not hold
   * refuses the whole batch. Replacing the dataset forgets every change; with `datasetVersion`,
   * changes computed from another dataset version are all skipped.
   */
  applyPositionChanges(
    source: string,
    changes: readonly PositionChange[],
    datasetVersion?: number,
  ): Promise<AppliedPositionChanges>;
  /** The stored changes with a sequence number above `after`, in order, at most `limit`. */
  positionChangesSince(after: number, limit: number): Promise<StoredPositionChange[]>;
  /**
   * Upserts markets one by one for `source` (each record replaces the dataset's market of the
   * same uniqueKey as served), in one transaction, each taking the next change sequence number
   * (shared with the positions). A record naming a market the dataset does not hold refuses
   * the whole batch (markets are added and removed by writing a dataset); with
   * `datasetVersion`, records computed from another dataset version are all skipped. Returns
   * the dataset's change sequence number after the write.
   */
  applyMarketChanges(
    source: string,
    records: readonly MarketRecord[],
    datasetVersion?: number,
  ): Promise<number>;
  /** The stored market changes with a sequence number above `after`, in order, at most `limit`. */
  marketChangesSince(after: number, limit: number): Promise<StoredMarketChange[]>;
  /**
   * A pass's changes for `source` in one transaction (readers see all of them or none): the
   * markets and vaults added (`added`: appended to the dataset's, its market count moved on, a
   * market or vault it holds refusing the batch), then its markets, positions and vaults
   * upserted as by applyMarketChanges and applyPositionChanges (unconditionally; those added
   * first), each taking the next change sequence number in that order, and the dataset's
   * refresh time set. A record naming a market or vault the dataset does not hold (nor adds), or
   * an invalid one, refuses the whole batch. The changes are computed from the dataset at
   * `basedOn` (its version and change sequence number): when the store is at another (another
   * process wrote since), nothing is written and null returned; else the change sequence number
   * after the write.
   */
  applyChanges(
    source: string,
    changes: DatasetChanges,
    basedOn: { version: number; changeSeq: number },
  ): Promise<number | null>;
  /** The stored vault changes with a sequence number above `after`, in order, at most `limit`. */
  vaultChangesSince(after: number, limit: number): Promise<StoredVaultChange[]>;
}
