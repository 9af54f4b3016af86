import type { SourceState } from '../../domain/records/sources.ts';

/** Source checkpoints and the ingestion lease (the ingest; the health route lists the sources). */
export interface SourceStore {
  /** Upsert by id: the state replaces the stored one whole (the last write wins). */
  saveSource(state: SourceState): Promise<void>;
  /** Every source, by id. */
  listSources(): Promise<SourceState[]>;
  /**
   * The ingestion lease (several servers on one store elect one ingester, "Real sources" (docs/decisions.md)): taken by
   * `holder` until `nowMs + leaseMs` when it is free, expired or already `holder`'s (renewed).
   * True when `holder` holds it now. Times are the caller's clock, epoch ms.
   */
  claimIngestion(holder: string, nowMs: number, leaseMs: number): Promise<boolean>;
  /** Lets the lease go if `holder` holds it (a server shutting down): another takes it at once. */
  releaseIngestion(holder: string): Promise<void>;
  /** Who holds the lease at `nowMs` (not expired); null: nobody. */
  ingestionHolder(nowMs: number): Promise<string | null>;
}
