import { assetFamily } from '../domain/asset-family.ts';
import { must } from '../domain/must.ts';
import { fraction, points, significant, usdOrNull } from '../domain/precision.ts';
import {
  type ComponentScore,
  concentrationScore,
  type DailyClose,
  DEFAULT_RATING_SIZE_FLOOR_USD,
  estimateVolatility,
  gradeOf,
  historyScore,
  type LiquidationRecord,
  liquidationScore,
  liquidityScore,
  lltvBufferScore,
  MARKET_WEIGHTS,
  type MarketComponent,
  NOT_RATED,
  type OracleFacts,
  oracleScore,
  overallScore,
  RATING_METHODOLOGY_VERSION,
  type RatedGrade,
  ratioLogReturns,
  sizeScore,
  usageScore,
  VAULT_WEIGHTS,
  type VaultComponent,
  vaultScores,
} from '../domain/rating.ts';
import { concentration } from '../domain/stress.ts';
import type { ReadModel } from './read-model.ts';
import { allocationValues, type VaultEntry } from './vaults.ts';

/**
 * The ratings of a read model (src/domain/rating.ts), as served: every market and every vault
 * of the model rated at one instant, figures rounded once here (src/domain/precision.ts).
 * Computed by the ratings job (ratings-job.ts) from the model and the store's history, never
 * per request.
 */

export interface RatingComponentView {
  /** 0 to 100, 2 decimals. */
  score: number;
  weight: number;
  explanation: string;
}

export interface MarketRatingView {
  marketId: string;
  protocol: string;
  chainId: number;
  collateral: string;
  loan: string;
  /** NR: not graded (`reason` says why). */
  grade: RatedGrade;
  /** Null when not graded. */
  score: number | null;
  /** Why the market is not graded; null when it is. */
  reason: string | null;
  methodologyVersion: string;
  /** ISO 8601 UTC instant the rating was computed at. */
  ratedAt: string;
  components: Record<MarketComponent, RatingComponentView>;
  metrics: {
    oracleStalenessRatio: number | null;
    lltv: number;
    /** Annualized volatility of the collateral/loan price ratio. */
    volatility: number;
    volatilitySource: 'history' | 'family';
    volatilityReturns: number;
    /** The kSigma one-day move the buffer is held against. */
    stressMove: number;
    /** (1 - lltv) / stressMove; null when the move is 0. */
    bufferCoverage: number | null;
    utilization: number;
    supplyUsd: number | null;
    availableUsd: number | null;
    borrowers: number;
    /** UTC days of the window with a stored price of both tokens; null without stored history. */
    historyDays: number | null;
    top10Share: number;
    herfindahl: number;
    /** Null when the dataset has no stored history. */
    liquidations: number | null;
    liquidatedUsd: number | null;
    badDebtUsd: number | null;
  };
}

export interface VaultRatingView {
  protocol: 'morpho' | 'euler';
  chainId: number;
  address: string;
  name: string;
  asset: string;
  grade: RatedGrade;
  score: number | null;
  reason: string | null;
  methodologyVersion: string;
  ratedAt: string;
  components: Record<VaultComponent, RatingComponentView>;
  metrics: {
    totalAssetsUsd: number | null;
    allocations: number;
    ratedAllocations: number;
    herfindahl: number;
    largestShare: number;
  };
  /** Largest first. */
  allocations: {
    marketId: string;
    share: number;
    grade: RatedGrade | null;
    score: number | null;
  }[];
}

/** Every rating of a model at one instant, ordered for the lists (score descending, then key). */
export interface RatingSet {
  methodologyVersion: string;
  /** Epoch ms the ratings were computed at. */
  ratedAt: number;
  /** Epoch ms of the data rated (the model's asOf then). */
  dataAsOf: number;
  /** Whether the store's history was read (the model is the store's dataset). */
  history: boolean;
  markets: readonly MarketRatingView[];
  vaults: readonly VaultRatingView[];
  /** Position in `markets` by uniqueKey; in `vaults` by `<chainId>:<address>`. */
  marketIndex: ReadonlyMap<string, number>;
  vaultIndex: ReadonlyMap<string, number>;
}

/** What the job read from the store for a model: null where the dataset has no stored history. */
export interface RatingInputs {
  /** Assets (USD) below which a market or vault is not graded (default DEFAULT_RATING_SIZE_FLOOR_USD). */
  sizeFloorUsd?: number;
  /** Each token's daily closes over the window, by `<chainId>:<lower-case address>`. */
  closes: ReadonlyMap<string, readonly DailyClose[]> | null;
  /** Each market's liquidations over the window, by uniqueKey (markets without any absent). */
  liquidations: ReadonlyMap<string, LiquidationRecord> | null;
}

export const tokenKey = (chainId: number, address: string) => `${chainId}:${address.toLowerCase()}`;
export const vaultKey = (chainId: number, address: string) => `${chainId}:${address.toLowerCase()}`;

const NO_RECORD: LiquidationRecord = Object.freeze({ count: 0, repaidUsd: 0, badDebtUsd: 0 });

function view(c: ComponentScore, weight: number): RatingComponentView {
  return { score: points(c.score), weight, explanation: c.explanation };
}

/**
 * The grade, score and reason of components (as served) with their weights: NR with the
 * reasons when `floorReason` is set or a component could not be computed from data; else the
 * weighted score and its grade.
 */
function graded<K extends string>(
  parts: Readonly<Record<K, ComponentScore>>,
  components: Readonly<Record<K, RatingComponentView>>,
  weights: Readonly<Record<K, number>>,
  floorReason: string | null,
): { grade: RatedGrade; score: number | null; reason: string | null } {
  const reasons = [
    ...(floorReason ? [floorReason] : []),
    ...(Object.keys(weights) as K[]).flatMap((k) => (parts[k].unknown ? [`${k}: ${parts[k].unknown}`] : [])),
  ];
  if (reasons.length > 0)
    return { grade: NOT_RATED, score: null, reason: `Not graded: ${reasons.join('; ')}.` };
  const score = overallScore(
    Object.fromEntries((Object.keys(weights) as K[]).map((k) => [k, components[k].score])) as Record<
      K,
      number
    >,
    weights,
  );
  return { grade: gradeOf(score), score, reason: null };
}

/** Whole dollars with thousands separators. */
const dollars = (x: number) => `$${String(Math.round(x)).replace(/\B(?=(\d{3})+(?!\d))/g, ',')}`;

/** Why assets of `usd` (null: no USD value) are below the floor; null when they reach it. */
function belowFloor(usd: number | null, floor: number, what: string): string | null {
  if (usd === null) return `its ${what} has no USD value (the size floor is ${dollars(floor)})`;
  return usd < floor ? `${dollars(usd)} ${what}, below the size floor of ${dollars(floor)}` : null;
}

/** UTC days with a close of both tokens. */
function daysWithBoth(c: readonly DailyClose[], l: readonly DailyClose[]): number {
  const days = new Set(l.map((x) => x.day));
  let n = 0;
  for (const x of c) if (days.has(x.day)) n++;
  return n;
}

/** One market of `model` (by ord) rated at `nowMs`. */
export function rateMarket(
  model: ReadModel,
  ord: number,
  inputs: RatingInputs,
  nowMs: number,
): MarketRatingView {
  const m = model.catalog.viewAt(ord, Math.floor(nowMs / 1000));
  const oracle: OracleFacts | null = m.oracle && {
    provider: m.oracle.provider,
    type: m.oracle.type,
    isComposite: m.oracle.isComposite,
    feeds: m.oracle.feeds.length,
    warnings: m.oracle.warnings?.length ?? 0,
    stalenessRatio: m.oracleHealth?.stalenessRatio ?? null,
  };
  const closes = (token: string) => inputs.closes?.get(tokenKey(m.chainId, token)) ?? [];
  const returns = ratioLogReturns(closes(m.collateralAddress), closes(m.loanAddress));
  const vol = estimateVolatility(returns, assetFamily(m.collateral), assetFamily(m.loan));
  const buffer = lltvBufferScore(m.lltv, vol);
  const debts = concentration(model.risk.debtsOf(ord));
  const record = inputs.liquidations === null ? null : (inputs.liquidations.get(m.uniqueKey) ?? NO_RECORD);
  const floor = inputs.sizeFloorUsd ?? DEFAULT_RATING_SIZE_FLOOR_USD;
  const historyDays =
    inputs.closes === null ? null : daysWithBoth(closes(m.collateralAddress), closes(m.loanAddress));
  const parts: Record<MarketComponent, ComponentScore> = {
    oracle: oracleScore(oracle),
    lltvBuffer: buffer,
    liquidity: liquidityScore(m.utilization, m.available),
    concentration: concentrationScore(debts, m.borrow ?? (m.borrowAssets === 0 ? 0 : null)),
    liquidations: liquidationScore(record, m.borrow),
    size: sizeScore(m.supply ?? 0, floor, 'supplied'),
    usage: usageScore(debts.borrowers),
    history: historyScore(historyDays),
  };
  const components = Object.fromEntries(
    (Object.keys(MARKET_WEIGHTS) as MarketComponent[]).map((k) => [k, view(parts[k], MARKET_WEIGHTS[k])]),
  ) as Record<MarketComponent, RatingComponentView>;
  const rated = graded(parts, components, MARKET_WEIGHTS, belowFloor(m.supply, floor, 'supplied'));
  return {
    marketId: m.uniqueKey,
    protocol: m.protocol,
    chainId: m.chainId,
    collateral: m.collateral,
    loan: m.loan,
    ...rated,
    methodologyVersion: RATING_METHODOLOGY_VERSION,
    ratedAt: new Date(nowMs).toISOString(),
    components,
    metrics: {
      oracleStalenessRatio: oracle?.stalenessRatio ?? null,
      lltv: fraction(m.lltv),
      volatility: fraction(vol.annualized),
      volatilitySource: vol.source,
      volatilityReturns: vol.returns,
      stressMove: fraction(buffer.move),
      bufferCoverage: Number.isFinite(buffer.coverage) ? significant(buffer.coverage) : null,
      utilization: fraction(m.utilization),
      supplyUsd: usdOrNull(m.supply),
      availableUsd: usdOrNull(m.available),
      borrowers: debts.borrowers,
      historyDays,
      top10Share: fraction(debts.top10Share),
      herfindahl: fraction(debts.herfindahl),
      liquidations: record?.count ?? null,
      liquidatedUsd: record ? usdOrNull(record.repaidUsd) : null,
      badDebtUsd: record ? usdOrNull(record.badDebtUsd) : null,
    },
  };
}

/** One vault rated from its allocations' markets (their ratings in `markets`, by uniqueKey). */
export function rateVault(
  model: ReadModel,
  e: VaultEntry,
  markets: ReadonlyMap<string, MarketRatingView>,
  nowMs: number,
  sizeFloorUsd = DEFAULT_RATING_SIZE_FLOOR_USD,
): VaultRatingView {
  const nowSec = Math.floor(nowMs / 1000);
  const r = e.record;
  // Weighed as GET /vaults weighs them: by USD, else by amounts of the asset (docs/decisions.md "Real sources").
  const values = allocationValues(model.catalog, e, nowSec);
  const parts = values.parts.map((p) => ({
    marketId: p.a.marketKey,
    weight: p.weight,
    rating: markets.get(p.a.marketKey),
  }));
  const scores = vaultScores(parts.map((p) => ({ usd: p.weight, score: p.rating?.score ?? null })));
  if (values.totalUsd === null || values.totalUsd < sizeFloorUsd) {
    const nothing = { score: 0, explanation: 'Not scored: the vault holds less than the size floor.' };
    scores.markets = nothing;
    scores.diversification = nothing;
  }
  const vaultParts: Record<VaultComponent, ComponentScore> = {
    markets: scores.markets,
    diversification: scores.diversification,
    size: sizeScore(values.totalUsd ?? 0, sizeFloorUsd, 'held'),
  };
  const components = {
    markets: view(vaultParts.markets, VAULT_WEIGHTS.markets),
    diversification: view(vaultParts.diversification, VAULT_WEIGHTS.diversification),
    size: view(vaultParts.size, VAULT_WEIGHTS.size),
  };
  // Below the floor, nothing else is said of an empty vault's allocations.
  const floorReason = belowFloor(values.totalUsd, sizeFloorUsd, 'held');
  const rated = graded(vaultParts, components, VAULT_WEIGHTS, floorReason);
  // Shares of the allocations, as the Herfindahl index takes them (idle assets, in no market, out).
  const total = parts.reduce((sum, p) => sum + p.weight, 0);
  return {
    protocol: r.protocol,
    chainId: r.chainId,
    address: r.address,
    name: r.name,
    asset: r.assetSymbol,
    ...rated,
    methodologyVersion: RATING_METHODOLOGY_VERSION,
    ratedAt: new Date(nowMs).toISOString(),
    components,
    metrics: {
      totalAssetsUsd: usdOrNull(values.totalUsd),
      allocations: parts.length,
      ratedAllocations: scores.rated,
      herfindahl: fraction(scores.herfindahl),
      largestShare: fraction(scores.largestShare),
    },
    allocations: parts
      .map((p) => ({
        marketId: p.marketId,
        share: total > 0 ? fraction(p.weight / total) : 0,
        grade: p.rating?.grade ?? null,
        score: p.rating?.score ?? null,
      }))
      .sort((x, y) => y.share - x.share || (x.marketId < y.marketId ? -1 : 1)),
  };
}

/** Best first: score descending, then key ascending (a stable order for keyset pages). */
function byScore<T>(key: (x: T) => string, score: (x: T) => number) {
  return (a: T, b: T) => score(b) - score(a) || (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);
}

/** The score a list orders by: not graded (null) after every graded one. */
export const orderScore = (x: { score: number | null }): number => x.score ?? -1;

export const marketOrder = byScore<MarketRatingView>((x) => x.marketId, orderScore);
export const vaultOrder = byScore<VaultRatingView>((x) => vaultKey(x.chainId, x.address), orderScore);

/**
 * Work done per turn of the event loop, in ms: a large catalog is rated in slices, so requests
 * arriving meanwhile wait at most about a slice.
 */
const SLICE_MS = 5;

/**
 * A budget of SLICE_MS of work per turn of the event loop: `pause()` yields a turn (setImmediate)
 * once the slice is spent. Awaiting the embedded store alone never yields (its calls complete
 * synchronously: their promises are already resolved), so long loops of store calls pause too.
 * Once `signal` is aborted, `pause()` throws its reason: the work stops at its next pause.
 */
export function slices(signal?: AbortSignal): { pause(): Promise<void> } {
  let start = performance.now();
  return {
    async pause() {
      signal?.throwIfAborted();
      if (performance.now() - start < SLICE_MS) return;
      await new Promise<void>((resolve) => setImmediate(resolve));
      signal?.throwIfAborted();
      start = performance.now();
    },
  };
}

/** `f` of each of `n` indexes, in order, yielding to the event loop every SLICE_MS of work. */
async function sliced<T>(n: number, f: (i: number) => T, signal?: AbortSignal): Promise<T[]> {
  const out: T[] = [];
  const slice = slices(signal);
  for (let i = 0; i < n; i++) {
    out.push(f(i));
    await slice.pause();
  }
  return out;
}

/**
 * Rates every market and vault of `model` at `nowMs` from `inputs`, in slices of SLICE_MS of
 * work per turn of the event loop (the model may move between turns; each market is rated as
 * it stands when its turn comes). An aborted `signal` stops it (its reason is thrown).
 */
export async function rateModel(
  model: ReadModel,
  inputs: RatingInputs,
  nowMs: number,
  signal?: AbortSignal,
): Promise<RatingSet> {
  const markets = await sliced(model.catalog.size, (ord) => rateMarket(model, ord, inputs, nowMs), signal);
  const byKey = new Map(markets.map((m) => [m.marketId, m]));
  const entries = model.vaults.entries;
  const vaults = await sliced(
    entries.length,
    (i) => rateVault(model, must(entries[i], `vault ${i}`), byKey, nowMs, inputs.sizeFloorUsd),
    signal,
  );
  markets.sort(marketOrder);
  vaults.sort(vaultOrder);
  return {
    methodologyVersion: RATING_METHODOLOGY_VERSION,
    ratedAt: nowMs,
    dataAsOf: model.asOf,
    history: inputs.closes !== null,
    markets,
    vaults,
    marketIndex: new Map(markets.map((m, i) => [m.marketId, i])),
    vaultIndex: new Map(vaults.map((v, i) => [vaultKey(v.chainId, v.address), i])),
  };
}
