/**
 * Append-only history: market snapshots, asset prices, oracle rounds, liquidations, rating
 * changes and research reports, with their cursors and daily sums (src/store/ports/history.ts).
 */

/** The two granularities of market history: a point per hour (on the hour) or per UTC day (at 00:00). */
export type SnapshotGranularity = 'hour' | 'day';

/** A market's state at one point of its history. Natural key: (marketKey, granularity, at). */
export interface MarketSnapshot {
  marketKey: string;
  chainId: number;
  protocol: string;
  /** Epoch ms: on the hour (granularity 'hour') or 00:00 UTC (granularity 'day'). */
  at: number;
  granularity: SnapshotGranularity;
  supplyUsd: number;
  borrowUsd: number;
  utilization: number;
  supplyApy: number;
  borrowApy: number;
  collateralPriceUsd: number | null;
  loanPriceUsd: number | null;
  oraclePrice: number | null;
}

/** A token's USD price on the hour. Natural key: (chainId, token, at). */
export interface AssetPrice {
  chainId: number;
  /** Lower-case 0x address. */
  token: string;
  /** Epoch ms, on the hour. */
  at: number;
  priceUsd: number;
}

/** One round of a price feed. Natural key: (chainId, feed, roundId). */
export interface OracleRound {
  chainId: number;
  /** Lower-case 0x address. */
  feed: string;
  /** uint80 as a decimal string (no leading zeros). */
  roundId: string;
  answer: number;
  /** Epoch ms. */
  updatedAt: number;
}

/** One liquidation (one log). Natural key: (chainId, txHash, logIndex). */
export interface LiquidationEvent {
  protocol: string;
  chainId: number;
  /** Lower-case 0x hash. */
  txHash: string;
  logIndex: number;
  block: number;
  /** Epoch ms of the block. */
  at: number;
  marketKey: string;
  /** Lower-case 0x address. */
  borrower: string;
  /** Lower-case 0x address. */
  liquidator: string;
  /** Token units (not wei), as are debtRepaid and badDebt. */
  collateralSeized: number;
  /**
   * USD at the liquidation's block's prices (else its market's when read); null when its token
   * has no USD price (a market served without one, "Real sources" (docs/decisions.md)). An amount of 0 is $0, priced or not.
   */
  collateralSeizedUsd: number | null;
  debtRepaid: number;
  /** As collateralSeizedUsd, at the loan token's price; so is badDebtUsd. */
  debtRepaidUsd: number | null;
  badDebt: number;
  badDebtUsd: number | null;
}

/** A liquidation whose amounts all have a USD value (the sandbox's, whose markets are all priced). */
export type PricedLiquidationEvent = LiquidationEvent & {
  collateralSeizedUsd: number;
  debtRepaidUsd: number;
  badDebtUsd: number;
};

/** What a rating is of: a market (by uniqueKey) or a vault (by `<chainId>:<address>`). */
export type RatingSubjectKind = 'market' | 'vault';

/**
 * One recorded rating of a market or a vault (src/domain/rating.ts): written when it differs
 * from the subject's last recorded one (ratingChanged: a grade, the methodology version, at least
 * the change tolerance in score, or the step into or out of NR). Natural key: (kind, subject, at).
 */
export interface RatingChange {
  kind: RatingSubjectKind;
  /** A market's uniqueKey, or a vault's `<chainId>:<lower-case address>`. */
  subject: string;
  chainId: number;
  /** Epoch ms the rating was computed at. */
  at: number;
  /** Methodology version, e.g. '1.0.0'. */
  methodology: string;
  /** A grade, or 'NR' (not graded). */
  grade: string;
  /** 0 to 100; null when not graded (grade 'NR'). */
  score: number | null;
  /** Why it is not graded, with the figures (as served then); null when graded. */
  reason: string | null;
  /**
   * The subject's last recorded rating before this one: null (both) for its first; a grade
   * 'NR' has a previousScore null.
   */
  previousGrade: string | null;
  previousScore: number | null;
  /** Each component's score (0 to 100), by component name, in the methodology's order. */
  components: Record<string, number>;
}

/**
 * Keyset cursors: the sort key of the last row of a page. The next page is read with it as
 * `after` and holds the rows strictly after it in the read's order, so rows appended meanwhile
 * never shift a page (no row is skipped or repeated, as with an offset). The last row itself
 * is a valid cursor: `after: page.at(-1)`.
 */
export type SnapshotCursor = Pick<MarketSnapshot, 'at'>;
export type AssetPriceCursor = Pick<AssetPrice, 'at'>;
/** Rounds are read by updatedAt; rounds updated at the same ms are ordered by roundId as text. */
export type OracleRoundCursor = Pick<OracleRound, 'updatedAt' | 'roundId'>;
/** Liquidations are read newest first: at descending, then chainId, txHash, logIndex ascending. */
export type LiquidationCursor = Pick<LiquidationEvent, 'at' | 'chainId' | 'txHash' | 'logIndex'>;
/** A subject's rating changes are read oldest first; `at` is unique per subject. */
export type RatingChangeCursor = Pick<RatingChange, 'at'>;

/** Which liquidations to read; every filter given must match. Times: fromMs <= at < toMs. */
export interface LiquidationFilter {
  chainId?: number;
  marketKey?: string;
  borrower?: string;
  liquidator?: string;
  protocol?: string;
  fromMs?: number;
  toMs?: number;
}

/**
 * Cutoffs of pruneHistory(), per kind of history: rows older than the cutoff (time < cutoff,
 * epoch ms) are deleted; a kind left out is kept whole. See historyCutoffs() for the cutoffs
 * of a retention setting.
 */
export interface HistoryCutoffs {
  hourlySnapshots?: number;
  dailySnapshots?: number;
  assetPrices?: number;
  oracleRounds?: number;
  /** By the liquidation's `at`. */
  liquidations?: number;
}

/** Rows per kind of history (historyCounts), or deleted per kind (pruneHistory). */
export interface HistoryCounts {
  hourlySnapshots: number;
  dailySnapshots: number;
  assetPrices: number;
  oracleRounds: number;
  liquidations: number;
}

/**
 * A research report as stored: its id (`<YYYY-MM-DD>-<protocol>`), day (epoch ms at 00:00 UTC),
 * protocol, when it was written, and its body (the report as JSON text, src/domain/research.ts).
 */
export interface ResearchReportRow {
  id: string;
  day: number;
  protocol: string;
  generatedAt: number;
  body: string;
}

/** The last report of a page of researchReports(). */
export interface ResearchReportCursor {
  day: number;
  id: string;
}

/** Daily market snapshots of one protocol on one chain, summed (USD). */
export interface DailyMarketTotal {
  /** The day, epoch ms at 00:00 UTC. */
  at: number;
  protocol: string;
  chainId: number;
  /** Markets with a snapshot that day. */
  markets: number;
  supplyUsd: number;
  borrowUsd: number;
}

/** Liquidations of one UTC day, protocol and chain, summed (USD). */
export interface DailyLiquidationTotal {
  at: number;
  protocol: string;
  chainId: number;
  liquidations: number;
  /** Liquidations with an amount of no known USD value: counted, their unknown amounts not summed. */
  unpricedLiquidations: number;
  /** Sums of the USD values that are known. */
  debtRepaidUsd: number;
  collateralSeizedUsd: number;
  badDebtUsd: number;
}
