import type { PositionColumns } from '../domain/position-columns.ts';
import type { MarketRecord, PositionRecord, VaultRecord } from '../domain/types.ts';
import { BackendUnavailableError } from '../domain/unavailable.ts';
import type { EventStore } from './events.ts';
import type { WriteProblem, WriteProblemListener } from './write-health.ts';

/**
 * The store could not be reached, or did not answer in time: nothing was read, and whether a
 * write took effect is unknown. A BackendUnavailableError, so an HTTP request that needed the
 * store is answered 503 SERVICE_UNAVAILABLE with Retry-After, never 500.
 */
export class StoreUnavailableError extends BackendUnavailableError {
  override name = 'StoreUnavailableError';
}

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
   * sources is as fresh as the stalest of them (D16).
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

export type KeyMode = 'live' | 'test';

export interface AccountRecord {
  id: string;
  name: string;
  email: string | null;
  createdAt: string;
}

export interface KeyRecord {
  id: string;
  accountId: string;
  /** sha256 hex of the whole key; the key itself is never stored. */
  hash: string;
  /** The first 14 characters of the key, e.g. `lrds_live_AbCd`. */
  prefix: string;
  mode: KeyMode;
  tier: string;
  name: string | null;
  createdAt: string;
  revokedAt: string | null;
}

/** Limits checked, atomically with the insert, when an account creates a key for itself. */
export interface KeyLimits {
  /**
   * Active (unrevoked) keys of the new key's tier and mode the account may hold, this one
   * included; null = no limit. Live and test keys are capped apart, so test keys cannot use up
   * the live ones' room.
   */
  maxActive: number | null;
  /** Keys of the new key's mode the account may have created since `since` (ISO 8601), revoked ones included; null = no limit. */
  creations: { since: string; max: number } | null;
}

export type KeyCreation =
  | { ok: true }
  | { ok: false; reason: 'TOO_MANY_KEYS'; active: number }
  /** `freedBy`: the creation time whose leaving the window frees a place. */
  | { ok: false; reason: 'TOO_MANY_CREATIONS'; created: number; freedBy: string }
  /** The answer's idempotency claim is no longer this request's (it outlived its lease): nothing written. */
  | { ok: false; reason: 'CLAIM_LOST' };

/** What changed among the keys since a keys version (`Store.keyChangesSince`). */
export interface KeyChanges {
  /** The current keys version: the `since` of the next call. */
  version: number;
  /** Hashes of the keys created, revoked or re-tiered after `since` (each once). */
  hashes: string[];
}

/** One durable count of an admitted request (DECISIONS D7). */
export interface UsageEvent {
  keyId: string;
  /** UTC day, YYYY-MM-DD. */
  day: string;
  /** Route pattern, e.g. `GET /api/v1/markets/:marketId`. */
  endpoint: string;
  /** False when the request was refused by the daily quota (the monthly counter is not touched). */
  countedMonthly: boolean;
}

/** The keys that share one account quota bound: an account's keys of one tier, both modes. */
export interface AccountScope {
  accountId: string;
  tier: string;
}

/** Daily and monthly quotas of a key's tier, in requests; null = unlimited. */
export interface QuotaCaps {
  daily: number | null;
  monthly: number | null;
}

export interface UsageTotals {
  dayUsed: number;
  monthUsed: number;
}

/** A counted request to decide against its quotas in the store itself (see Store.reserveUsage). */
export interface UsageReservation extends Omit<UsageEvent, 'countedMonthly'> {
  /** Daily and monthly quotas of the key's tier; null = unlimited. */
  daily: number | null;
  monthly: number | null;
  /** The account bound the request is also decided against (see accountUsageTotals), if any. */
  account?: AccountBound;
}

/** An account bound: the keys of `scope` together, within `daily` and `monthly` (null = unlimited). */
export interface AccountBound extends AccountScope {
  daily: number | null;
  monthly: number | null;
}

/** The counts after a reservation: the request included (in the month only if countedMonthly). */
export interface ReservedUsage {
  dayUsed: number;
  monthUsed: number;
  /** False when the daily quota refused it (DECISIONS D7: the month is then not counted). */
  countedMonthly: boolean;
  /** Set when the account bound refused it: which, and the account's count with it. */
  byAccount?: { reason: 'DAILY_QUOTA' | 'MONTHLY_QUOTA'; limit: number; used: number };
}

export interface UsageRow {
  day: string;
  endpoint: string;
  requests: number;
}

export type ProgressFn = (done: number, total: number) => void;

/**
 * Persistence for markets, positions, keys, usage, history and source checkpoints. Two
 * implementations (embedded SQLite, PostgreSQL) share one contract test suite. Consumers hold
 * the narrow port they need (below), never the whole store: the read models a MarketDataStore,
 * keys a KeyStore, admission a UsageStore, the ingest a HistoryStore and a SourceStore, the
 * HTTP layer only what it reads (HttpStore: no writes).
 */

/** What a probe of the store needs. */
export interface StoreHealth {
  readonly kind: 'sqlite' | 'postgres';
  /** Health probe: true when the backend answers (a short timeout, never throws). */
  ping?(): Promise<boolean>;
  /** Writes failing now (a full disk): since when and the backend's error; null while they work. */
  writeProblem?(): WriteProblem | null;
  /** Hears when writes start failing and when they work again. Returns the way to stop hearing. */
  watchWrites?(listener: WriteProblemListener): () => void;
}

/** Market data: the dataset and its markets and positions (the read models, seeding). */
export interface MarketDataStore {
  datasetInfo(): Promise<DatasetInfo | null>;
  /** Atomically replaces every market and position. Returns the dataset now in the store. */
  replaceDataset(input: DatasetInput, onProgress?: ProgressFn): Promise<DatasetInfo>;
  loadMarkets(): Promise<MarketRecord[]>;
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
}

/** Keys and accounts (KeyService, the CLI). */
export interface KeyStore {
  createAccount(account: AccountRecord): Promise<void>;
  findAccountByName(name: string): Promise<AccountRecord | null>;
  getAccount(id: string): Promise<AccountRecord | null>;
  createKey(key: KeyRecord): Promise<void>;
  /**
   * Creates the key only if the account stays within `limits`, checked and written in one
   * transaction serialized per account (two concurrent creations cannot both pass a cap).
   * With `answer`, the request's answer is stored under its idempotency claim in the same
   * transaction (a key is never created without it), provided the claim is still the
   * request's (else CLAIM_LOST, and no key).
   */
  createKeyWithin(key: KeyRecord, limits: KeyLimits, answer?: IdempotentAnswer): Promise<KeyCreation>;
  findKeyByHash(hash: string): Promise<KeyRecord | null>;
  getKey(id: string): Promise<KeyRecord | null>;
  listKeys(accountId?: string): Promise<KeyRecord[]>;
  /** Returns false when the key does not exist or was already revoked. */
  revokeKey(id: string, at: string): Promise<boolean>;
  setKeyTier(id: string, tier: string): Promise<boolean>;
  /**
   * Moves the key to account `accountId` (which must exist). Its usage goes with it: the
   * account totals (UsageStore.accountUsageTotals) are read from the keys an account holds.
   * Returns false when the key does not exist.
   */
  moveKey(id: string, accountId: string): Promise<boolean>;
  /** A number that grows whenever any key is created, revoked or changed. */
  keysVersion(): Promise<number>;
  /**
   * The keys changed after keys version `since`, and the current version, read together (so a
   * reader that asks again with `version` misses nothing). A `since` above the current version
   * means the store is not the one `since` came from: the caller must assume every key changed.
   */
  keyChangesSince(since: number): Promise<KeyChanges>;
}

/** Usage counts and quota decisions (admission backends, the client routes' usage). */
export interface UsageStore {
  /**
   * Durably records admitted requests, as batch `batchId` (see newUsageBatchId()): the counts
   * and the id are written in one transaction, and a batch whose id is already recorded is
   * skipped. So a writer that got an error (a deadline passed, the COMMIT may still have
   * happened) retries the same events under the same id, never merged with newer ones, and
   * each request is counted once. Ids are remembered for USAGE_BATCH_RETENTION_MS. Resolves
   * once the batch is durable (applied now or before).
   */
  recordUsage(events: readonly UsageEvent[], batchId: string): Promise<void>;
  usageTotals(keyId: string, day: string): Promise<UsageTotals>;
  /**
   * The counts of an account's quota bound (docs/keys-and-accounts.md) for the UTC day `day`
   * and its month: over the keys of `scope.tier` the account holds, revoked ones included, of
   * both modes, the sum per key of its day count capped at `keyQuotas.daily`, and of its month
   * count capped at `keyQuotas.monthly` (null = uncapped). A request refused by its key's own
   * quota never reached the account's count, and that is exactly what the caps leave out.
   */
  accountUsageTotals(scope: AccountScope, day: string, keyQuotas: QuotaCaps): Promise<UsageTotals>;
  /**
   * Counts each request in order and decides it against its quotas as DECISIONS D7 does
   * (daily first; refused daily, the month is not counted), atomically per key with respect
   * to other reservations from any process: the stored counts are the authority, as while
   * Redis is unreachable. Durable once resolved.
   *
   * `batchId` is recorded with the counts, in the same transaction, in the ids of
   * recordUsage(): a reservation that failed without knowing whether it was applied is made
   * good by writing its requests' counts with recordUsage() under the same id (applied only if
   * the reservation was not). A reservation batch already applied changes nothing and answers
   * as replayedReservations() says.
   */
  reserveUsage(requests: readonly UsageReservation[], batchId: string): Promise<ReservedUsage[]>;
  usageByDay(keyId: string, fromDay: string, toDay: string): Promise<UsageRow[]>;
}

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
   * has no USD price (a market served without one, D15). An amount of 0 is $0, priced or not.
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
 * from the subject's last recorded one by a grade, the methodology version, or at least the
 * change tolerance in score. Natural key: (kind, subject, at).
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
  grade: string;
  /** 0 to 100. */
  score: number;
  /** The subject's last recorded rating before this one; null (both) for its first. */
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
  /** Rating changes of every subject recorded in [fromMs, toMs), `at` ascending, at most `limit`. */
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

export interface SourceStore {
  /** Upsert by id: the state replaces the stored one whole (the last write wins). */
  saveSource(state: SourceState): Promise<void>;
  /** Every source, by id. */
  listSources(): Promise<SourceState[]>;
  /**
   * The ingestion lease (several servers on one store elect one ingester, D15): taken by
   * `holder` until `nowMs + leaseMs` when it is free, expired or already `holder`'s (renewed).
   * True when `holder` holds it now. Times are the caller's clock, epoch ms.
   */
  claimIngestion(holder: string, nowMs: number, leaseMs: number): Promise<boolean>;
  /** Lets the lease go if `holder` holds it (a server shutting down): another takes it at once. */
  releaseIngestion(holder: string): Promise<void>;
}

/**
 * A request made under an `Idempotency-Key`, claimed before it does its work. Times are epoch
 * ms of the caller's clock; the store keeps none of its own.
 */
export interface IdempotencyClaim {
  /** A digest of the key and its scope (account, mode): the key itself is not stored. */
  id: string;
  /** A digest of the request: the key reused for another request is refused (MISMATCH). */
  fingerprint: string;
  /** This claim's own random token: only its holder stores the answer or releases the claim. */
  token: string;
  now: number;
  /** Unanswered past this time, the claim is abandoned (its request died): the next one takes it over. */
  lockedUntil: number;
  /** When the record is forgotten: from then on the key is new again, and the record is pruned. */
  expiresAt: number;
}

export type IdempotencyClaimResult =
  /** Claimed (new, expired or abandoned before): do the work, then answer or release. */
  | { ok: true }
  /** Another request holds the key and has not answered yet. */
  | { ok: false; reason: 'IN_FLIGHT'; lockedUntil: number }
  /** The key was used for another request (another fingerprint). */
  | { ok: false; reason: 'MISMATCH' }
  /** The key's request was answered: `response` as stored (opaque to the store). */
  | { ok: false; reason: 'ANSWERED'; status: number; response: string };

/** The answer of a claimed request, stored with the work it reports (KeyStore.createKeyWithin). */
export interface IdempotentAnswer {
  id: string;
  token: string;
  status: number;
  /** Opaque to the store. */
  response: string;
}

/**
 * Idempotency keys of self-service writes (Stripe's `Idempotency-Key`): claimed atomically
 * across processes, answered in the transaction of the work, forgotten after `expiresAt`.
 */
export interface IdempotencyStore {
  /**
   * Claims `claim.id` unless another request holds it or answered it, atomically with respect
   * to every process. Each claim also deletes a few expired records (IDEMPOTENCY_PRUNE_PER_CLAIM).
   */
  claimIdempotencyKey(claim: IdempotencyClaim): Promise<IdempotencyClaimResult>;
  /** Drops claim `id` if `token` still holds it unanswered (its request failed: a retry runs afresh). */
  releaseIdempotencyKey(id: string, token: string): Promise<void>;
}

/** What the HTTP layer reads from the store: its health, keys and accounts, usage history. No writes. */
export type HttpStore = StoreHealth &
  Pick<KeyStore, 'getAccount' | 'getKey' | 'listKeys' | 'keysVersion'> &
  Pick<UsageStore, 'usageByDay'> &
  Pick<SourceStore, 'listSources'>;

/** The whole store: every port, plus its life cycle. */
export interface Store
  extends StoreHealth,
    MarketDataStore,
    KeyStore,
    UsageStore,
    HistoryStore,
    SourceStore,
    IdempotencyStore {
  /** The risk events' outbox: subscriptions, events and webhook deliveries (src/store/events.ts). */
  readonly events: EventStore;
  /** Creates or upgrades the schema; safe to call on every start. */
  migrate(): Promise<void>;
  close(): Promise<void>;
}
