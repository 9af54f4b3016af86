import type {
  AssetPrice,
  AssetPriceCursor,
  DailyLiquidationTotal,
  DailyMarketTotal,
  HistoryCounts,
  HistoryCutoffs,
  LiquidationCursor,
  LiquidationEvent,
  LiquidationFilter,
  MarketSnapshot,
  OracleRound,
  OracleRoundCursor,
  RatingChange,
  RatingChangeCursor,
  RatingSubjectKind,
  ResearchReportCursor,
  ResearchReportRow,
  SnapshotCursor,
  SnapshotGranularity,
} from '../../domain/records/history.ts';

/**
 * Append-only, time-indexed history (the ingest writes it, history routes read it). Every
 * append takes a batch of any size and is idempotent: a row whose natural key is stored
 * already is skipped, whatever its other values (history is never rewritten; the first write
 * wins), so a batch retried after an error, or fetched twice, is harmless. Each append is
 * atomic and resolves to the number of rows it added. Rows are checked before anything is
 * written (RangeError): integer times on their grid, finite numbers, lower-case addresses.
 *
 * Reads are bounded by `limit` and paged with keyset cursors (see SnapshotCursor); time
 * ranges are half-open, fromMs <= t < toMs. Address filters are compared lower-cased.
 */
export interface HistoryStore {
  appendMarketSnapshots(rows: readonly MarketSnapshot[]): Promise<number>;
  appendAssetPrices(rows: readonly AssetPrice[]): Promise<number>;
  appendOracleRounds(rows: readonly OracleRound[]): Promise<number>;
  appendLiquidations(rows: readonly LiquidationEvent[]): Promise<number>;
  /** A market's snapshots of one granularity, `at` ascending. */
  marketSnapshots(
    marketKey: string,
    granularity: SnapshotGranularity,
    fromMs: number,
    toMs: number,
    limit: number,
    after?: SnapshotCursor,
  ): Promise<MarketSnapshot[]>;
  /** The market's newest snapshot of that granularity, or null. */
  latestMarketSnapshot(marketKey: string, granularity: SnapshotGranularity): Promise<MarketSnapshot | null>;
  /** A token's hourly prices, `at` ascending. */
  assetPrices(
    chainId: number,
    token: string,
    fromMs: number,
    toMs: number,
    limit: number,
    after?: AssetPriceCursor,
  ): Promise<AssetPrice[]>;
  /** A feed's rounds updated in the range, by updatedAt ascending (then roundId as text). */
  oracleRounds(
    chainId: number,
    feed: string,
    fromMs: number,
    toMs: number,
    limit: number,
    after?: OracleRoundCursor,
  ): Promise<OracleRound[]>;
  /** Liquidations matching `filter`, newest first (see LiquidationCursor). */
  liquidations(
    filter: LiquidationFilter,
    limit: number,
    after?: LiquidationCursor,
  ): Promise<LiquidationEvent[]>;
  /**
   * Daily market snapshots summed per day, protocol and chain, in [fromMs, toMs): `at` is the
   * day (00:00 UTC), ascending, then protocol and chain. For totals over time (analytics).
   */
  dailyMarketTotals(fromMs: number, toMs: number): Promise<DailyMarketTotal[]>;
  /** Liquidations summed per UTC day (of `at`), protocol and chain, in [fromMs, toMs); same order. */
  dailyLiquidationTotals(fromMs: number, toMs: number): Promise<DailyLiquidationTotal[]>;
  /**
   * Deletes the rows older than their kind's cutoff; returns how many per kind. Retention is
   * the caller's setting (default: keep everything, i.e. no cutoffs); the store keeps no
   * clock of its own for it.
   */
  pruneHistory(before: HistoryCutoffs): Promise<HistoryCounts>;
  /**
   * Forgets a chain's liquidations from `block` on (a reorganization of the chain orphaned the
   * blocks they were read from). Returns how many were deleted.
   */
  dropLiquidationsFrom(chainId: number, block: number): Promise<number>;
  /** Forgets the oracle rounds of a chain's feeds updated at or after `fromMs` (a reorganization orphaned them). */
  dropOracleRoundsFrom(chainId: number, fromMs: number): Promise<number>;
  /** Rows held per kind: a full count (tests, operators), not for request paths. */
  historyCounts(): Promise<HistoryCounts>;
  /**
   * Appends rating changes, idempotently by (kind, subject, at) like every history append.
   * Rating changes are few (only changes are recorded) and are not pruned by pruneHistory.
   */
  appendRatingChanges(rows: readonly RatingChange[]): Promise<number>;
  /** One subject's rating changes in [fromMs, toMs), `at` ascending. */
  ratingChanges(
    kind: RatingSubjectKind,
    subject: string,
    fromMs: number,
    toMs: number,
    limit: number,
    after?: RatingChangeCursor,
  ): Promise<RatingChange[]>;
  /**
   * The last recorded rating change of each subject of `kind`, by subject ascending (byte
   * order), at most `limit`, from the subject after `afterSubject` (keyset paging).
   */
  latestRatingChanges(kind: RatingSubjectKind, limit: number, afterSubject?: string): Promise<RatingChange[]>;
  /**
   * The graded rating changes (a score, not NR) of every subject recorded in [fromMs, toMs),
   * `at` ascending, at most `limit`.
   */
  ratingChangesBetween(fromMs: number, toMs: number, limit: number): Promise<RatingChange[]>;
  /** Every market's daily snapshot of one day (`dayMs`, 00:00 UTC), any order. */
  daySnapshots(dayMs: number): Promise<MarketSnapshot[]>;
  /** Appends research reports, idempotently by id (a report once written is kept as written). */
  appendResearchReports(rows: readonly ResearchReportRow[]): Promise<number>;
  /**
   * Reports of the days in [fromMs, toMs), of one protocol when given: newest day first, then
   * id descending; `after` is the last report of the previous page.
   */
  researchReports(
    filter: { protocol?: string | undefined; fromMs: number; toMs: number },
    limit: number,
    after?: ResearchReportCursor,
  ): Promise<ResearchReportRow[]>;
  /** One report by id, or null. */
  researchReport(id: string): Promise<ResearchReportRow | null>;
  /** The newest day with a report (epoch ms at 00:00 UTC), or null when there is none. */
  lastResearchDay(): Promise<number | null>;
}
