/**
 * What both stores share about history and source checkpoints: the checks rows pass before
 * they are written, the order PostgreSQL appends rows in, and the mapping of the rows both
 * schemas return (same column names; PostgreSQL returns bigints as strings, hence Number()).
 */

import { NOT_RATED } from '../domain/rating.ts';
import type {
  AssetPrice,
  DailyLiquidationTotal,
  DailyMarketTotal,
  HistoryCounts,
  HistoryCutoffs,
  LiquidationEvent,
  MarketSnapshot,
  OracleRound,
  RatingChange,
  ResearchReportRow,
} from '../domain/records/history.ts';
import { type ChainSync, chainSyncOf, type SourceState } from '../domain/records/sources.ts';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
const MAX_ROUND_ID = 2n ** 80n - 1n;

/**
 * How long each kind of history is kept, in ms; null keeps it forever. The default keeps
 * everything: history is the product, and deleting it is the operator's decision.
 */
export interface HistoryRetention {
  hourlySnapshots: number | null;
  dailySnapshots: number | null;
  assetPrices: number | null;
  oracleRounds: number | null;
  liquidations: number | null;
}

export const KEEP_ALL_HISTORY: HistoryRetention = {
  hourlySnapshots: null,
  dailySnapshots: null,
  assetPrices: null,
  oracleRounds: null,
  liquidations: null,
};

/** pruneHistory() cutoffs that delete every row of every kind (a dataset whose history is not the next one's). */
export const ALL_HISTORY: Readonly<HistoryCutoffs> = Object.freeze({
  hourlySnapshots: Number.MAX_SAFE_INTEGER,
  dailySnapshots: Number.MAX_SAFE_INTEGER,
  assetPrices: Number.MAX_SAFE_INTEGER,
  oracleRounds: Number.MAX_SAFE_INTEGER,
  liquidations: Number.MAX_SAFE_INTEGER,
});

/** The pruneHistory() cutoffs of `retention` at time `now` (epoch ms); kinds kept forever are left out. */
export function historyCutoffs(retention: HistoryRetention, now: number): HistoryCutoffs {
  const cutoffs: HistoryCutoffs = {};
  for (const kind of Object.keys(retention) as (keyof HistoryRetention)[]) {
    const keep = retention[kind];
    if (keep !== null) cutoffs[kind] = Math.floor(now - keep);
  }
  return cutoffs;
}

export function noHistory(): HistoryCounts {
  return { hourlySnapshots: 0, dailySnapshots: 0, assetPrices: 0, oracleRounds: 0, liquidations: 0 };
}

// ---- checks -------------------------------------------------------------------------------
// The same rows must be accepted or refused by both stores alike: SQLite cannot hold NaN (it
// becomes NULL), JSON cannot carry NaN or Infinity, and a fractional time would be rounded by
// one store and refused by the other. Addresses are compared as text, so a checksummed
// (mixed-case) address would never match a lower-case filter: refused rather than stored
// under a second spelling. (-0 is stored as 0 by both: SQLite keeps no sign on zero.)

function refuse(what: string, i: number, why: string): never {
  throw new RangeError(`${what} ${i}: ${why}`);
}

function isTime(x: unknown): x is number {
  return Number.isSafeInteger(x) && (x as number) >= 0;
}

function isFiniteNumber(x: unknown): x is number {
  return typeof x === 'number' && Number.isFinite(x);
}

function isText(x: unknown): x is string {
  return typeof x === 'string' && x.length > 0 && !x.includes('\0');
}

function isLowerText(x: unknown): x is string {
  return isText(x) && x === x.toLowerCase();
}

function checkNumbers(what: string, i: number, row: object, fields: readonly string[], nullable = false) {
  for (const f of fields) {
    const v = (row as Record<string, unknown>)[f];
    if (nullable && v === null) continue;
    if (!isFiniteNumber(v)) refuse(what, i, `${f} must be a finite number${nullable ? ' or null' : ''}`);
  }
}

export function checkMarketSnapshots(rows: readonly MarketSnapshot[]): void {
  rows.forEach((r, i) => {
    const what = 'market snapshot';
    if (!isText(r.marketKey)) refuse(what, i, 'marketKey must be a non-empty string');
    if (!isText(r.protocol)) refuse(what, i, 'protocol must be a non-empty string');
    if (!isTime(r.chainId)) refuse(what, i, 'chainId must be a non-negative integer');
    if (r.granularity !== 'hour' && r.granularity !== 'day')
      refuse(what, i, "granularity must be 'hour' or 'day'");
    if (!isTime(r.at)) refuse(what, i, 'at must be a non-negative integer (epoch ms)');
    if (r.at % (r.granularity === 'hour' ? HOUR_MS : DAY_MS) !== 0) {
      refuse(what, i, r.granularity === 'hour' ? 'at must be on the hour' : 'at must be 00:00 UTC');
    }
    checkNumbers(what, i, r, ['supplyUsd', 'borrowUsd', 'utilization', 'supplyApy', 'borrowApy']);
    checkNumbers(what, i, r, ['collateralPriceUsd', 'loanPriceUsd', 'oraclePrice'], true);
  });
}

export function checkAssetPrices(rows: readonly AssetPrice[]): void {
  rows.forEach((r, i) => {
    const what = 'asset price';
    if (!isTime(r.chainId)) refuse(what, i, 'chainId must be a non-negative integer');
    if (!isLowerText(r.token)) refuse(what, i, 'token must be a lower-case address');
    if (!isTime(r.at) || r.at % HOUR_MS !== 0) refuse(what, i, 'at must be epoch ms on the hour');
    checkNumbers(what, i, r, ['priceUsd']);
  });
}

export function checkOracleRounds(rows: readonly OracleRound[]): void {
  rows.forEach((r, i) => {
    const what = 'oracle round';
    if (!isTime(r.chainId)) refuse(what, i, 'chainId must be a non-negative integer');
    if (!isLowerText(r.feed)) refuse(what, i, 'feed must be a lower-case address');
    if (
      typeof r.roundId !== 'string' ||
      !/^(0|[1-9][0-9]{0,24})$/.test(r.roundId) ||
      BigInt(r.roundId) > MAX_ROUND_ID
    ) {
      refuse(what, i, 'roundId must be a uint80 in decimal, without leading zeros');
    }
    if (!isTime(r.updatedAt)) refuse(what, i, 'updatedAt must be a non-negative integer (epoch ms)');
    checkNumbers(what, i, r, ['answer']);
  });
}

export function checkLiquidations(rows: readonly LiquidationEvent[]): void {
  rows.forEach((r, i) => {
    const what = 'liquidation';
    if (!isText(r.protocol)) refuse(what, i, 'protocol must be a non-empty string');
    if (!isTime(r.chainId)) refuse(what, i, 'chainId must be a non-negative integer');
    if (!isLowerText(r.txHash)) refuse(what, i, 'txHash must be a lower-case hash');
    if (!isTime(r.logIndex) || r.logIndex > 2 ** 31 - 1)
      refuse(what, i, 'logIndex must be a non-negative int32');
    if (!isTime(r.block)) refuse(what, i, 'block must be a non-negative integer');
    if (!isTime(r.at)) refuse(what, i, 'at must be a non-negative integer (epoch ms)');
    if (!isText(r.marketKey)) refuse(what, i, 'marketKey must be a non-empty string');
    if (!isLowerText(r.borrower)) refuse(what, i, 'borrower must be a lower-case address');
    if (!isLowerText(r.liquidator)) refuse(what, i, 'liquidator must be a lower-case address');
    checkNumbers(what, i, r, ['collateralSeized', 'debtRepaid', 'badDebt']);
    checkNumbers(what, i, r, ['collateralSeizedUsd', 'debtRepaidUsd', 'badDebtUsd'], true);
  });
}

export function checkRatingChanges(rows: readonly RatingChange[]): void {
  rows.forEach((r, i) => {
    const what = 'rating change';
    if (r.kind !== 'market' && r.kind !== 'vault') refuse(what, i, "kind must be 'market' or 'vault'");
    if (!isText(r.subject)) refuse(what, i, 'subject must be a non-empty string');
    if (!isTime(r.chainId)) refuse(what, i, 'chainId must be a non-negative integer');
    if (!isTime(r.at)) refuse(what, i, 'at must be a non-negative integer (epoch ms)');
    if (!isText(r.methodology)) refuse(what, i, 'methodology must be a non-empty string');
    if (!isText(r.grade)) refuse(what, i, 'grade must be a non-empty string');
    // Not graded: grade NR, no score, a reason; graded: a score and no reason.
    if (r.grade === NOT_RATED) {
      if (r.score !== null) refuse(what, i, 'score must be null when grade is NR');
      if (!isText(r.reason)) refuse(what, i, 'reason must be a non-empty string when grade is NR');
    } else {
      checkNumbers(what, i, r, ['score']);
      if (r.reason !== null) refuse(what, i, 'reason must be null when graded');
    }
    if (r.previousGrade !== null && !isText(r.previousGrade))
      refuse(what, i, 'previousGrade must be a non-empty string or null');
    if ((r.previousGrade === null || r.previousGrade === NOT_RATED) !== (r.previousScore === null))
      refuse(what, i, 'previousScore must be null when previousGrade is null or NR, and set otherwise');
    checkNumbers(what, i, r, ['previousScore'], true);
    if (
      typeof r.components !== 'object' ||
      r.components === null ||
      Array.isArray(r.components) ||
      !Object.entries(r.components).every(([k, v]) => isText(k) && isFiniteNumber(v))
    ) {
      refuse(what, i, 'components must map names to finite numbers');
    }
  });
}

export function checkSource(s: SourceState): void {
  const what = 'source';
  if (!isText(s.id)) refuse(what, 0, 'id must be a non-empty string');
  if (!isText(s.kind)) refuse(what, 0, 'kind must be a non-empty string');
  if (!Array.isArray(s.chainIds) || !s.chainIds.every(isTime)) {
    refuse(what, 0, 'chainIds must be non-negative integers');
  }
  if (s.refreshedAt !== null && !isTime(s.refreshedAt))
    refuse(what, 0, 'refreshedAt must be epoch ms or null');
  if (typeof s.lastBlock !== 'object' || s.lastBlock === null || !Object.values(s.lastBlock).every(isTime)) {
    refuse(what, 0, 'lastBlock must map chain ids to non-negative integers');
  }
  if (!isTime(s.consecutiveFailures)) refuse(what, 0, 'consecutiveFailures must be a non-negative integer');
  if (s.lastError !== null && typeof s.lastError !== 'string')
    refuse(what, 0, 'lastError must be a string or null');
  if (!isTime(s.updatedAt)) refuse(what, 0, 'updatedAt must be epoch ms');
  if (s.cursor !== null && typeof s.cursor !== 'string') refuse(what, 0, 'cursor must be a string or null');
  if (
    s.head !== undefined &&
    (typeof s.head !== 'object' || s.head === null || !Object.values(s.head).every(isTime))
  )
    refuse(what, 0, 'head must map chain ids to non-negative integers');
  if (
    s.sync !== undefined &&
    (typeof s.sync !== 'object' ||
      s.sync === null ||
      !Object.values(s.sync).every((c) => chainSyncOf(c) !== null))
  )
    refuse(what, 0, 'sync must map chain ids to syncs (blocks in order, non-negative integers)');
}

/** The bounds of a read: a non-negative integer limit and integer times (epoch ms). */
export function checkRead(limit: number, fromMs?: number, toMs?: number): void {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError('limit must be a non-negative integer');
  for (const t of [fromMs, toMs]) {
    if (t !== undefined && !Number.isSafeInteger(t))
      throw new RangeError('times must be integers (epoch ms)');
  }
}

// ---- append order -------------------------------------------------------------------------
// PostgreSQL appends insert rows in this order: two concurrent appends of overlapping rows then
// wait on their common keys in one order, and cannot deadlock.

/** Byte-order comparison, the order of COLLATE "C" keys. */
export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function bySnapshotKey(a: MarketSnapshot, b: MarketSnapshot): number {
  return compare(a.marketKey, b.marketKey) || compare(a.granularity, b.granularity) || a.at - b.at;
}

export function byPriceKey(a: AssetPrice, b: AssetPrice): number {
  return a.chainId - b.chainId || compare(a.token, b.token) || a.at - b.at;
}

export function byRoundKey(a: OracleRound, b: OracleRound): number {
  return a.chainId - b.chainId || compare(a.feed, b.feed) || compare(a.roundId, b.roundId);
}

export function byRatingKey(a: RatingChange, b: RatingChange): number {
  return compare(a.kind, b.kind) || compare(a.subject, b.subject) || a.at - b.at;
}

export function byLiquidationKey(a: LiquidationEvent, b: LiquidationEvent): number {
  return a.chainId - b.chainId || compare(a.txHash, b.txHash) || a.logIndex - b.logIndex;
}

// ---- rows ---------------------------------------------------------------------------------

type Row = Record<string, unknown>;

function num(x: unknown): number {
  return Number(x);
}

function numOrNull(x: unknown): number | null {
  return x === null || x === undefined ? null : Number(x);
}

export function toSnapshot(r: Row): MarketSnapshot {
  return {
    marketKey: r.market_key as string,
    chainId: num(r.chain_id),
    protocol: r.protocol as string,
    at: num(r.at),
    granularity: r.granularity as MarketSnapshot['granularity'],
    supplyUsd: num(r.supply_usd),
    borrowUsd: num(r.borrow_usd),
    utilization: num(r.utilization),
    supplyApy: num(r.supply_apy),
    borrowApy: num(r.borrow_apy),
    collateralPriceUsd: numOrNull(r.collateral_price_usd),
    loanPriceUsd: numOrNull(r.loan_price_usd),
    oraclePrice: numOrNull(r.oracle_price),
  };
}

export function toAssetPrice(r: Row): AssetPrice {
  return { chainId: num(r.chain_id), token: r.token as string, at: num(r.at), priceUsd: num(r.price_usd) };
}

export function toOracleRound(r: Row): OracleRound {
  return {
    chainId: num(r.chain_id),
    feed: r.feed as string,
    roundId: r.round_id as string,
    answer: num(r.answer),
    updatedAt: num(r.updated_at),
  };
}

export function toLiquidation(r: Row): LiquidationEvent {
  return {
    protocol: r.protocol as string,
    chainId: num(r.chain_id),
    txHash: r.tx_hash as string,
    logIndex: num(r.log_index),
    block: num(r.block),
    at: num(r.at),
    marketKey: r.market_key as string,
    borrower: r.borrower as string,
    liquidator: r.liquidator as string,
    collateralSeized: num(r.collateral_seized),
    collateralSeizedUsd: numOrNull(r.collateral_seized_usd),
    debtRepaid: num(r.debt_repaid),
    debtRepaidUsd: numOrNull(r.debt_repaid_usd),
    badDebt: num(r.bad_debt),
    badDebtUsd: numOrNull(r.bad_debt_usd),
  };
}

/**
 * A liquidation from a row read as an array, columns in LIQUIDATION_COLUMNS order. (node:sqlite
 * builds each object row in a way that leaves ~20 bytes in V8's old space per row until a full
 * collection: over a 500,000-row answer, tens of MB; array rows leave nothing behind.)
 */
export function toLiquidationFromArray(r: readonly unknown[]): LiquidationEvent {
  return {
    protocol: r[0] as string,
    chainId: num(r[1]),
    txHash: r[2] as string,
    logIndex: num(r[3]),
    block: num(r[4]),
    at: num(r[5]),
    marketKey: r[6] as string,
    borrower: r[7] as string,
    liquidator: r[8] as string,
    collateralSeized: num(r[9]),
    collateralSeizedUsd: numOrNull(r[10]),
    debtRepaid: num(r[11]),
    debtRepaidUsd: numOrNull(r[12]),
    badDebt: num(r[13]),
    badDebtUsd: numOrNull(r[14]),
  };
}

/** A rating change from a row of rating_changes (components: JSON text, key order kept). */
export function toRatingChange(r: Row): RatingChange {
  return {
    kind: r.kind as RatingChange['kind'],
    subject: r.subject as string,
    chainId: num(r.chain_id),
    at: num(r.at),
    methodology: r.methodology as string,
    grade: r.grade as string,
    score: numOrNull(r.score),
    reason: (r.reason as string | null) ?? null,
    previousGrade: (r.previous_grade as string | null) ?? null,
    previousScore: numOrNull(r.previous_score),
    components: JSON.parse(r.components as string) as Record<string, number>,
  };
}

/** The columns of rating_changes, as toRatingChange() reads them (both stores). */
export const RATING_CHANGE_COLUMNS =
  'kind, subject, chain_id, at, methodology, grade, score, reason, previous_grade, previous_score, components';

export function toSource(r: Row): SourceState {
  return {
    id: r.id as string,
    kind: r.kind as string,
    chainIds: JSON.parse(r.chain_ids as string) as number[],
    refreshedAt: numOrNull(r.refreshed_at),
    lastBlock: JSON.parse(r.last_block as string) as Record<string, number>,
    consecutiveFailures: num(r.consecutive_failures),
    lastError: (r.last_error as string | null) ?? null,
    updatedAt: num(r.updated_at),
    cursor: (r.cursor as string | null) ?? null,
    ...(r.head ? { head: JSON.parse(r.head as string) as Record<string, number> } : {}),
    ...(r.sync ? { sync: JSON.parse(r.sync as string) as Record<string, ChainSync> } : {}),
  };
}

export function toCounts(r: Row): HistoryCounts {
  return {
    hourlySnapshots: num(r.hourly_snapshots),
    dailySnapshots: num(r.daily_snapshots),
    assetPrices: num(r.asset_prices),
    oracleRounds: num(r.oracle_rounds),
    liquidations: num(r.liquidations),
  };
}

/** A snapshot's columns (SQL of both stores), named as toSnapshot() reads them (`m`: history_markets, `s`: market_snapshots). */
export const SNAPSHOT_COLUMNS = `m.market_key, coalesce(s.chain_id, m.chain_id) AS chain_id,
  coalesce(s.protocol, m.protocol) AS protocol, s.at, s.granularity, s.supply_usd, s.borrow_usd, s.utilization,
  s.supply_apy, s.borrow_apy, s.collateral_price_usd, s.loan_price_usd, s.oracle_price`;

/** A liquidation's columns (SQL of both stores), named as toLiquidation() reads them (`m`: history_markets, `l`: liquidations). */
export const LIQUIDATION_COLUMNS = `l.protocol, l.chain_id, l.tx_hash, l.log_index, l.block, l.at, m.market_key,
  l.borrower, l.liquidator, l.collateral_seized, l.collateral_seized_usd, l.debt_repaid, l.debt_repaid_usd,
  l.bad_debt, l.bad_debt_usd`;

/** A row of dailyMarketTotals (both stores: PostgreSQL returns bigints and sums as strings). */
export function toDailyMarketTotal(r: Record<string, unknown>): DailyMarketTotal {
  return {
    at: Number(r.at),
    protocol: String(r.protocol),
    chainId: Number(r.chain_id),
    markets: Number(r.markets),
    supplyUsd: Number(r.supply_usd),
    borrowUsd: Number(r.borrow_usd),
  };
}

/** A row of dailyLiquidationTotals. */
export function toDailyLiquidationTotal(r: Record<string, unknown>): DailyLiquidationTotal {
  return {
    at: Number(r.at),
    protocol: String(r.protocol),
    chainId: Number(r.chain_id),
    liquidations: Number(r.liquidations),
    unpricedLiquidations: Number(r.unpriced_liquidations),
    debtRepaidUsd: Number(r.debt_repaid_usd),
    collateralSeizedUsd: Number(r.collateral_seized_usd),
    badDebtUsd: Number(r.bad_debt_usd),
  };
}

export function checkResearchReports(rows: readonly ResearchReportRow[]): void {
  rows.forEach((r, i) => {
    const what = 'research report';
    if (!isText(r.id)) refuse(what, i, 'id must be a non-empty string');
    if (!isTime(r.day) || r.day % DAY_MS !== 0) refuse(what, i, 'day must be epoch ms at 00:00 UTC');
    if (!isText(r.protocol)) refuse(what, i, 'protocol must be a non-empty string');
    if (!isTime(r.generatedAt)) refuse(what, i, 'generatedAt must be a non-negative integer (epoch ms)');
    if (!isText(r.body)) refuse(what, i, 'body must be a non-empty string');
  });
}

/** A row of research_reports (both stores). */
export function toResearchReport(r: Record<string, unknown>): ResearchReportRow {
  return {
    id: String(r.id),
    day: Number(r.day),
    protocol: String(r.protocol),
    generatedAt: Number(r.generated_at),
    body: String(r.body),
  };
}
