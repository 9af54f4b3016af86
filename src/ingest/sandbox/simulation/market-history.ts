/**
 * A year of each sandbox market's life, from the price paths: balances, utilization and rates,
 * interest accruing on debt, borrowers opening and closing positions, and the liquidations the
 * price moves cause. Pure and deterministic: everything is a function of the seed, the market
 * and the time, so any window of the history can be computed alone and a window computed twice
 * (a restart, another process) gives the same rows.
 *
 * Method (docs/sandbox.md says the same):
 * - Prices: the token's snapshot price times its symbol's path ratio (SandboxPriceBasis), the
 *   prices the running server serves.
 * - Utilization: the snapshot's, plus two slow noises (5-day and 12-hour knots, amplitudes
 *   UTIL_SWING) that vanish at the snapshot instant, within [0, 0.99] (or the snapshot's
 *   utilization when higher; after the snapshot at least LOW_FLOOR x it). Before the snapshot, supply in loan tokens is
 *   the snapshot's, times a flow noise (9-day knots) and a yearly growth drawn per market,
 *   over the interest suppliers earned since (the supply rate of the curve at each hour's
 *   utilization). Borrow = utilization x supply. APYs from the market's curve (domain
 *   rates.ts). After the snapshot instant the same utilization goes on forward; the borrow is
 *   the snapshot's grown by the borrow index (the snapshot's borrowers, the served positions,
 *   accruing interest) and supply is that borrow over the utilization (the lenders it stands
 *   for), times the share a market winding down keeps (wind-down.ts). The running server
 *   serves each market's state at the current instant (stateAt), equal to the hourly history
 *   at whole hours, with its positions' debt in place of the snapshot's (history.ts).
 * - Morpho's adaptive curve: before the snapshot its rate at target is the snapshot's; from the
 *   snapshot on it adapts hour by hour to the utilization (adaptive-irm.ts), and utilization
 *   answers the rate (RATE_ELASTICITY).
 * - Debt accrues hourly at the borrow rate: a borrower's debt at h is its debt at opening times
 *   the borrow index ratio I(h) / I(open).
 * - Borrowers (not the snapshot's positions, which are current; these are the year's closed
 *   ones, ending before the snapshot: from it on, the served positions are the market's
 *   borrowers and the live liquidator liquidates them at the hour they cross): each day a market with n current positions sees about
 *   OPENINGS_PER_POSITION x n / 365 openings, each on a whole hour, with a debt around the
 *   market's average position times riskWeight (smaller close to 1), a health factor at opening of 1.04 plus an exponential (mean HF_SPREAD),
 *   and a life of an exponential number of hours (mean MEAN_LIFE_H, at most MAX_LIFE_H).
 * - Liquidation: in the first hour after opening (or after its last liquidation) whose prices
 *   put the health factor below 1. HF(h) = HF(open) x q(h) / q(open) with
 *   q = collateral price / (loan price x borrow index), so the first such hour is found in a
 *   min-tree over q, never by walking the hours. The liquidator repays closeFactor of the debt
 *   (all of it below HF 0.95) and seizes repaid x (1 + bonus) of value in collateral at that
 *   hour's prices; when the collateral does not cover that, it takes all of it and the debt
 *   left is bad debt. A position partly liquidated goes on with what remains.
 * - A liquidation's time is a block within that hour; its block number is the chain's
 *   (synthetic: time since a genesis over the block time); tx hash, borrower and liquidator
 *   (one of a chain's LIQUIDATORS bots) are hashes.
 */
import { FULL_CLOSE_HF, liquidate } from '../../../domain/liquidation.ts';
import { fraction, significant, usd } from '../../../domain/precision.ts';
import { borrowRate, rateToApy, supplyRate } from '../../../domain/rates.ts';
import type {
  MarketSnapshot,
  PricedLiquidationEvent,
  SnapshotGranularity,
} from '../../../domain/records/history.ts';
import type { PricedMarketRecord } from '../../../domain/types.ts';
import type { MarketTerms } from '../economics.ts';
import type { SandboxPriceBasis } from '../live.ts';
import { type WindDown, windDownShare } from '../wind-down.ts';
import { type AdaptiveStep, adaptiveCurveRate, adaptiveError, adaptiveStep } from './adaptive-irm.ts';
import {
  DAY_MS,
  HOUR_MS,
  hashAt,
  normalAt,
  streamId,
  unitAt,
  valueNoise,
  valueNoiseSeries,
  YEAR_MS,
} from './noise.ts';

export const UTIL_SWING = { slow: 0.15, fast: 0.04 } as const;
export const FLOW_SWING = 0.25;
/** Yearly growth of a market's supply, drawn uniformly in +-MAX_GROWTH (log units). */
export const MAX_GROWTH = 0.5;
export const OPENINGS_PER_POSITION = 6;
/**
 * Debt weight of a borrower by its health factor, relative to one at 1.6 or more: on chain the
 * positions kept close to liquidation are mostly small ones. The snapshot's positions, the
 * history's borrowers and the live openings all size their debt by it.
 */
export function riskWeight(hf: number): number {
  return Math.min(1, Math.max(0.1, (hf - 1) / 0.6));
}
export const HF_SPREAD = 0.25;
export const MEAN_LIFE_H = 24 * 30;
export const MAX_LIFE_H = 24 * 180;
/**
 * How far above its kink (optimal utilization) a market's utilization can go, as a share of
 * the span from the kink to full utilization: on chain, the steep part of the curve makes
 * suppliers come and borrowers repay, so utilization runs above the kink rarely and briefly.
 */
export const ABOVE_KINK = 0.45;

/**
 * The utilization a level `x` of the noise stands for: itself up to the kink, then rising ever
 * more slowly towards kink + ABOVE_KINK x (1 - kink) (an exponential approach; slope 1 at the kink).
 */
export function aboveKink(x: number, kink: number): number {
  if (x <= kink) return x;
  const a = ABOVE_KINK * (1 - kink);
  return a > 0 ? kink + a * -Math.expm1(-(x - kink) / a) : kink;
}

/** The inverse of aboveKink (for u below its bound; u at or above it maps far above the kink). */
export function aboveKinkInverse(u: number, kink: number): number {
  if (u <= kink) return u;
  const a = ABOVE_KINK * (1 - kink);
  const z = (u - kink) / a;
  return a > 0 && z < 1 ? kink - a * Math.log1p(-z) : kink + 10 * Math.max(a, 1e-9);
}

/** The slow level of utilization stays below this share of the kink. */
export const SLOW_CAP = 0.97;
/** A market above its kink at the snapshot comes back below it within this time either side. */
export const SETTLE_MS = 3 * 24 * 3_600_000;
/**
 * After the snapshot a market with borrowers keeps at least this share of its snapshot
 * utilization: below twice it, the noises approach it smoothly (lowFloor) instead of emptying
 * the market (its supply, the borrow over utilization, stays finite).
 */
export const LOW_FLOOR = 0.25;

/** x above 2f; below, f + f e^((x - 2f) / f), which approaches f (continuous, slope 1 at 2f). */
export function lowFloor(x: number, f: number): number {
  return f > 0 && x < 2 * f ? f + f * Math.exp((x - 2 * f) / f) : x;
}

/**
 * Feedback of an adaptive curve (Morpho) on its market after the snapshot: utilization moves by
 * RATE_ELASTICITY x ln(r0 / r) (at most MAX_RATE_SHIFT either way) as the rate at target r
 * moves away from the snapshot's r0: borrowers come as borrowing gets cheaper, lenders as
 * lending pays more. With it a market below its target sees its rate at target fall until
 * utilization sits about the target, as the adaptive curve brings it on chain.
 */
export const RATE_ELASTICITY = 0.3;
export const MAX_RATE_SHIFT = 0.3;

/** Liquidation bots per chain. */
export const LIQUIDATORS = 24;
const HOUR_YEARS = HOUR_MS / YEAR_MS;

/** Block times (ms) and a synthetic genesis per chain; others: 2 s from 2020-01-01. */
const BLOCKS: Readonly<Record<number, { ms: number; genesisMs: number }>> = {
  1: { ms: 12_000, genesisMs: Date.UTC(2015, 6, 30) },
  10: { ms: 2_000, genesisMs: Date.UTC(2021, 10, 11) },
  56: { ms: 3_000, genesisMs: Date.UTC(2020, 7, 29) },
  100: { ms: 5_000, genesisMs: Date.UTC(2018, 9, 8) },
  137: { ms: 2_000, genesisMs: Date.UTC(2020, 4, 30) },
  8453: { ms: 2_000, genesisMs: Date.UTC(2023, 5, 15) },
  42161: { ms: 250, genesisMs: Date.UTC(2021, 4, 28) },
  43114: { ms: 2_000, genesisMs: Date.UTC(2020, 8, 23) },
};
const DEFAULT_BLOCKS = { ms: 2_000, genesisMs: Date.UTC(2020, 0, 1) };

export function blockAt(chainId: number, atMs: number): number {
  const b = BLOCKS[chainId] ?? DEFAULT_BLOCKS;
  return Math.max(0, Math.floor((atMs - b.genesisMs) / b.ms));
}

/** The time of a block (the inverse of blockAt, to the block's first ms). */
export function blockTime(chainId: number, block: number): number {
  const b = BLOCKS[chainId] ?? DEFAULT_BLOCKS;
  return b.genesisMs + block * b.ms;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
function hex32(x: number): string {
  return (
    (HEX[x >>> 24] as string) +
    (HEX[(x >>> 16) & 255] as string) +
    (HEX[(x >>> 8) & 255] as string) +
    (HEX[x & 255] as string)
  );
}
/** A hex string of `words` 32-bit words drawn from (stream, a, b): synthetic hashes and addresses. */
export function hexOf(stream: number, a: number, b: number, words: number): string {
  let out = '0x';
  for (let k = 0; k < words; k++) out += hex32(hashAt(stream, a, b * 16 + k));
  return out;
}

/** One of a chain's LIQUIDATORS bots (`bots`: the stream of `liquidators|<chainId>`), picked by `draw`. */
export function liquidatorAddress(bots: number, draw: number): string {
  return hexOf(bots, draw % LIQUIDATORS, 0, 5);
}

/** "First index at or after lo whose value is below x" over a fixed array, in O(log n). */
class MinTree {
  readonly #n: number;
  readonly #t: Float64Array;
  constructor(values: Float64Array) {
    let n = 1;
    while (n < values.length) n *= 2;
    this.#n = n;
    const t = new Float64Array(2 * n).fill(Number.POSITIVE_INFINITY);
    t.set(values, n);
    for (let i = n - 1; i >= 1; i--) t[i] = Math.min(t[2 * i] as number, t[2 * i + 1] as number);
    this.#t = t;
  }
  /** The first index i >= lo with values[i] < x, or -1. */
  firstBelow(lo: number, x: number): number {
    const n = this.#n;
    const t = this.#t;
    if (lo >= n) return -1;
    let i = lo + n;
    for (;;) {
      if ((t[i] as number) < x) {
        while (i < n) i = (t[2 * i] as number) < x ? 2 * i : 2 * i + 1;
        return i - n;
      }
      while (i & 1) i >>= 1;
      if (i === 0) return -1;
      i++;
    }
  }
}

/** A market's balances and rates at an instant after the snapshot. */
export interface MarketState {
  /** Supply in loan tokens. */
  supplyTokens: number;
  utilization: number;
  /** Annual borrow and supply rates (continuously compounded) of the curve at that utilization. */
  borrowRate: number;
  supplyRate: number;
  /** log of the borrow index over the snapshot's: debt stated at the snapshot times e^logIndex. */
  logIndex: number;
  /** Morpho's adaptive curve: its rate at target now (annual); null for a fixed curve. */
  rateAtTarget: number | null;
}

/** The constants of one market's balance path. */
interface Dynamics {
  terms: MarketTerms;
  u0: number;
  /** The utilization noise's level at the snapshot: aboveKink.inverse(u0). */
  r0: number;
  s0: number;
  /** Borrow in loan tokens at the snapshot: s0 x u0. */
  b0: number;
  /** The rate at target of an adaptive curve at the snapshot; null for a fixed curve. */
  rat0: number | null;
  /** The market's wind-down (a PT it holds matures), null when none. */
  windDown: WindDown | null;
  su1: number;
  su2: number;
  sf: number;
  growth: number;
  at1: number;
  at2: number;
  atF: number;
}

/** A market's utilization and rates at an instant, and what debt accrues at over the period after it. */
interface Rates {
  u: number;
  /** Annual borrow and supply rates (continuously compounded) at the instant. */
  rb: number;
  rs: number;
  /** The average borrow rate over the period (an adaptive curve's moves within it). */
  accrue: number;
  /** The rate at target of an adaptive curve at the end of the period (0 for a fixed curve). */
  rat: number;
}
const newRates = (): Rates => ({ u: 0, rb: 0, rs: 0, accrue: 0, rat: 0 });

/** One market's hourly path over [fromMs, toMs] (whole hours): index i is fromMs + i hours. */
interface MarketPath {
  fromMs: number;
  hours: number;
  collateralPx: Float64Array;
  loanPx: Float64Array;
  utilization: Float64Array;
  supplyTokens: Float64Array;
  /** Annual borrow and supply rates (continuously compounded). */
  borrowRate: Float64Array;
  supplyRate: Float64Array;
  /** log of the borrow index, 0 at fromMs. */
  logIndex: Float64Array;
}

/** A borrower opening a position during the history (not one of the snapshot's positions). */
export interface Borrower {
  /** Unique within the market: day * 4096 + the opening's rank that day. */
  id: number;
  address: string;
  /** On a whole hour. */
  openMs: number;
  /** The position is closed by its owner this many hours after opening, if not liquidated first. */
  lifeHours: number;
  /** At opening, at that hour's prices. */
  healthFactor: number;
  debtUsd: number;
}

export interface MarketHistoryInput {
  seed: number;
  asOfMs: number;
  basis: SandboxPriceBasis;
  markets: readonly PricedMarketRecord[];
  terms: readonly MarketTerms[];
  /** Current positions per market, aligned with `markets`. */
  positionCounts: ArrayLike<number>;
  /** Each market's wind-down, aligned with `markets` (wind-down.ts); none when left out. */
  windDowns?: readonly (WindDown | null)[];
}

export interface MarketHistory {
  /** First instant of the history (the price model's start). */
  readonly startMs: number;
  /** Snapshots of market `index` at the given whole hours (ascending, >= startMs). */
  snapshots(index: number, times: readonly number[], granularity: SnapshotGranularity): MarketSnapshot[];
  /** Liquidations of market `index` with fromMs <= at < toMs, in time order. */
  liquidations(index: number, fromMs: number, toMs: number): PricedLiquidationEvent[];
  /**
   * Borrowers of market `index` opening in [fromMs, toMs), in opening order: the ones that
   * closed (or were liquidated) before the snapshot. Those open at the snapshot are its served
   * positions, and the ones opening after it the live simulation's openings.
   */
  borrowers(index: number, fromMs: number, toMs: number): Borrower[];
  /**
   * Market `index` at tMs (not before the snapshot instant): what the running server serves.
   * Cheapest when asked at increasing times (the hours passed are summed once).
   */
  stateAt(index: number, tMs: number): MarketState;
  /** Both of the above for one market from one computation of its path. */
  market(
    index: number,
    times: readonly number[],
    granularity: SnapshotGranularity,
    fromMs: number,
    toMs: number,
  ): { snapshots: MarketSnapshot[]; liquidations: PricedLiquidationEvent[] };
}

const floorHour = (t: number) => Math.floor(t / HOUR_MS) * HOUR_MS;

export function createMarketHistory(input: MarketHistoryInput): MarketHistory {
  const { seed, asOfMs, basis, markets, terms, positionCounts } = input;
  const startMs = basis.model.startMs;
  const ratioCache = new Map<string, { fromMs: number; ratios: Float64Array }>();

  /** A symbol's hourly ratios covering [fromMs, toMs], cached for the widest range asked. */
  const ratios = (symbol: string, fromMs: number, toMs: number): { fromMs: number; ratios: Float64Array } => {
    const c = ratioCache.get(symbol);
    if (c && c.fromMs <= fromMs && c.fromMs + (c.ratios.length - 1) * HOUR_MS >= toMs) return c;
    const from = Math.min(fromMs, c?.fromMs ?? fromMs);
    const to = Math.max(toMs, c ? c.fromMs + (c.ratios.length - 1) * HOUR_MS : toMs);
    const next = { fromMs: from, ratios: basis.hourlyRatios(symbol, from, to) };
    ratioCache.set(symbol, next);
    return next;
  };

  /** The constants of a market's balance path: its noise streams and their values at the snapshot. */
  const dynamicsOf = (index: number): Dynamics => {
    const m = markets[index] as PricedMarketRecord;
    const t = terms[index] as MarketTerms;
    const key = m.uniqueKey;
    const su1 = streamId(seed, `util-slow|${key}`);
    const su2 = streamId(seed, `util-fast|${key}`);
    const sf = streamId(seed, `flow|${key}`);
    const u0 = m.supply > 0 ? Math.min(1, m.borrow / m.supply) : 0;
    const s0 = m.loanPrice > 0 ? m.supply / m.loanPrice : 0;
    return {
      terms: t,
      u0,
      r0: m.supply > 0 ? aboveKinkInverse(u0, t.curve.kink) : 0,
      s0,
      b0: s0 * u0,
      rat0: t.rateAtTarget,
      windDown: input.windDowns?.[index] ?? null,
      su1,
      su2,
      sf,
      growth: MAX_GROWTH * (2 * unitAt(streamId(seed, `growth|${key}`), 0) - 1),
      at1: valueNoise(su1, asOfMs, 5 * DAY_MS),
      at2: valueNoise(su2, asOfMs, 12 * HOUR_MS),
      atF: valueNoise(sf, asOfMs, 9 * DAY_MS),
    };
  };
  /**
   * Utilization from the two noises' values at an instant (and the shift of an adaptive curve's
   * feedback), within [0, 0.99] (to the snapshot's when that is higher, so the snapshot instant
   * gives the snapshot's); after the snapshot at least LOW_FLOOR x u0: a market with borrowers
   * never runs empty.
   */
  const utilizationOf = (d: Dynamics, n1: number, n2: number, tMs: number, shift: number): number => {
    if (!(d.u0 > 0)) return 0;
    const kink = d.terms.curve.kink;
    // The slow level stays below the kink (a market above it at the snapshot comes back
    // within SETTLE_MS either side); only the fast noise takes it above, for hours. An adaptive
    // curve's market may sit up to its target after the snapshot: its rate brings it back.
    const below = d.rat0 !== null && tMs > asOfMs ? kink : SLOW_CAP * kink;
    const cap =
      d.r0 <= below ? below : d.r0 - (d.r0 - below) * Math.min(1, Math.abs(tMs - asOfMs) / SETTLE_MS);
    const level = Math.min(cap, d.r0 + shift + UTIL_SWING.slow * (n1 - d.at1));
    const u = aboveKink(level + UTIL_SWING.fast * (n2 - d.at2), kink);
    // After the snapshot supply is the borrow over utilization: a floor keeps it finite.
    const floor = tMs > asOfMs ? LOW_FLOOR * d.u0 : 0;
    return Math.min(Math.max(0.99, d.u0), Math.max(0, lowFloor(u, floor)));
  };
  /** log of the supply's flows and growth from the snapshot to tMs (0 at the snapshot). */
  const flowOf = (d: Dynamics, flowNoise: number, tMs: number): number =>
    FLOW_SWING * (flowNoise - d.atF) + (d.growth * (tMs - asOfMs)) / YEAR_MS;

  /**
   * A market's utilization and rates at an instant, for the rate at target `rat` of an adaptive
   * curve then (its feedback shifts the utilization after the snapshot; before it the rate at
   * target is the snapshot's): the borrow rate is the curve's at that utilization. Written into
   * `out` (the hourly loops run millions of times: no allocation).
   */
  const ratesAt = (d: Dynamics, tMs: number, n1: number, n2: number, rat: number, out: Rates): Rates => {
    const { rat0 } = d;
    const adaptive = rat0 !== null && tMs >= asOfMs;
    const shift = adaptive
      ? Math.max(-MAX_RATE_SHIFT, Math.min(MAX_RATE_SHIFT, RATE_ELASTICITY * Math.log(rat0 / rat)))
      : 0;
    const u = utilizationOf(d, n1, n2, tMs, shift);
    const rb = adaptive ? adaptiveCurveRate(adaptiveError(u), rat) : borrowRate(u, d.terms.curve);
    out.u = u;
    out.rb = rb;
    out.rs = supplyRate(rb, u, d.terms.reserveFactor);
    // What debt accrues at, and the rate at target after the period (see accrue).
    out.accrue = rb;
    out.rat = rat;
    return out;
  };
  /**
   * Over `years` from the instant `out` was computed at: the average borrow rate debt accrues at
   * and the rate at target at the end, an adaptive curve's moving from the snapshot on
   * (adaptive-irm.ts); a fixed curve's rate stays.
   */
  const accrue = (d: Dynamics, tMs: number, years: number, out: Rates): Rates => {
    if (d.rat0 === null || tMs < asOfMs) return out;
    const step = adaptiveStep(out.u, out.rat, years, adaptiveScratch);
    out.accrue = step.avgBorrowRate;
    out.rat = step.endRateAtTarget;
    return out;
  };
  const adaptiveScratch: AdaptiveStep = { avgBorrowRate: 0, endBorrowRate: 0, endRateAtTarget: 0 };
  /**
   * Supply in loan tokens after the snapshot: the snapshot's borrow grown by the borrow index
   * over the utilization (the lenders that utilization stands for), times the share a winding
   * down market keeps; a market without borrowers keeps its supply's flows and interest.
   */
  const supplyAfter = (d: Dynamics, tMs: number, u: number, logIndex: number, flow: () => number) => {
    const share = windDownShare(d.windDown, tMs);
    if (d.u0 > 0 && u > 0) return (d.b0 * Math.exp(logIndex) * share) / u;
    return d.s0 * Math.exp(flow()) * share;
  };

  const pathOf = (index: number, fromMs: number, toMs: number): MarketPath => {
    const m = markets[index] as PricedMarketRecord;
    const d = dynamicsOf(index);
    // Balances depend on the interest earned between t and the snapshot: the path covers asOf.
    fromMs = Math.min(fromMs, asOfMs);
    const end = Math.max(toMs, asOfMs);
    const hours = Math.round((end - fromMs) / HOUR_MS) + 1;
    const c = ratios(m.collateral, fromMs, end);
    const l = ratios(m.loan, fromMs, end);
    const co = Math.round((fromMs - c.fromMs) / HOUR_MS);
    const lo = Math.round((fromMs - l.fromMs) / HOUR_MS);
    const path: MarketPath = {
      fromMs,
      hours,
      collateralPx: new Float64Array(hours),
      loanPx: new Float64Array(hours),
      utilization: new Float64Array(hours),
      supplyTokens: new Float64Array(hours),
      borrowRate: new Float64Array(hours),
      supplyRate: new Float64Array(hours),
      logIndex: new Float64Array(hours),
    };
    const supplyRates = path.supplyRate;
    const n1 = d.u0 > 0 ? valueNoiseSeries(d.su1, fromMs, HOUR_MS, hours, 5 * DAY_MS) : null;
    const n2 = d.u0 > 0 ? valueNoiseSeries(d.su2, fromMs, HOUR_MS, hours, 12 * HOUR_MS) : null;
    let logIndex = 0;
    let rat = d.rat0 ?? 0;
    const r = newRates();
    for (let i = 0; i < hours; i++) {
      const t = fromMs + i * HOUR_MS;
      path.collateralPx[i] = m.collateralPrice * (c.ratios[co + i] as number);
      path.loanPx[i] = m.loanPrice * (l.ratios[lo + i] as number);
      ratesAt(d, t, n1?.[i] ?? 0, n2?.[i] ?? 0, rat, r);
      path.utilization[i] = r.u;
      path.borrowRate[i] = r.rb;
      supplyRates[i] = r.rs;
      path.logIndex[i] = logIndex;
      accrue(d, t, HOUR_YEARS, r);
      logIndex += r.accrue * HOUR_YEARS;
      rat = r.rat;
    }
    // Supply: from the snapshot, removing the interest earned between t and asOf before it;
    // after it, supplyAfter.
    const asOfIdx = Math.round((asOfMs - fromMs) / HOUR_MS);
    const flows = valueNoiseSeries(d.sf, fromMs, HOUR_MS, hours, 9 * DAY_MS);
    let earned = 0;
    for (let i = asOfIdx - 1; i >= 0; i--) {
      earned += (supplyRates[i] as number) * HOUR_YEARS;
      const flow = flowOf(d, flows[i] as number, fromMs + i * HOUR_MS);
      path.supplyTokens[i] = d.s0 * Math.exp(flow - earned);
    }
    earned = 0;
    const logIndex0 = path.logIndex[asOfIdx] as number;
    for (let i = asOfIdx; i < hours; i++) {
      const t = fromMs + i * HOUR_MS;
      const e = earned;
      path.supplyTokens[i] = supplyAfter(
        d,
        t,
        path.utilization[i] as number,
        (path.logIndex[i] as number) - logIndex0,
        () => flowOf(d, flows[i] as number, t) + e,
      );
      earned += (supplyRates[i] as number) * HOUR_YEARS;
    }
    return path;
  };

  /**
   * Each market's state at an instant after the snapshot: the hourly rates (and an adaptive
   * curve's rate at target) stepped up to the hour before (kept per market and extended as time
   * goes on), plus the current hour's part. At whole hours it equals the path's (the hourly history).
   */
  const live: (
    | { dynamics: Dynamics; hourMs: number; earned: number; logIndex: number; rat: number }
    | undefined
  )[] = [];
  const ratesNow = (d: Dynamics, tMs: number, rat: number, out: Rates) =>
    d.u0 > 0
      ? ratesAt(d, tMs, valueNoise(d.su1, tMs, 5 * DAY_MS), valueNoise(d.su2, tMs, 12 * HOUR_MS), rat, out)
      : ratesAt(d, tMs, 0, 0, rat, out);
  /** Hours a state is stepped over from which its noises are computed as series. */
  const SERIES_FROM_HOURS = 8;
  const hourRates = newRates();
  const nowRates = newRates();
  const stateAt = (index: number, tMs: number): MarketState => {
    if (!(tMs >= asOfMs)) throw new RangeError('a market state is defined from the snapshot instant on');
    let s = live[index];
    if (!s || s.hourMs > floorHour(tMs)) {
      const dynamics = dynamicsOf(index);
      s = { dynamics, hourMs: asOfMs, earned: 0, logIndex: 0, rat: dynamics.rat0 ?? 0 };
      live[index] = s;
    }
    const d = s.dynamics;
    const r = hourRates;
    const last = floorHour(tMs);
    // Many hours at once (a start, a jump in time): the noises as series, each knot hashed once
    // (valueNoiseSeries gives ratesNow's numbers exactly).
    const hours = Math.round((last - s.hourMs) / HOUR_MS);
    const series = hours > SERIES_FROM_HOURS && d.u0 > 0;
    const n1 = series ? valueNoiseSeries(d.su1, s.hourMs, HOUR_MS, hours, 5 * DAY_MS) : null;
    const n2 = series ? valueNoiseSeries(d.su2, s.hourMs, HOUR_MS, hours, 12 * HOUR_MS) : null;
    for (let i = 0; s.hourMs < last; s.hourMs += HOUR_MS, i++) {
      if (n1 && n2 && i < hours) ratesAt(d, s.hourMs, n1[i] ?? 0, n2[i] ?? 0, s.rat, r);
      else ratesNow(d, s.hourMs, s.rat, r);
      accrue(d, s.hourMs, HOUR_YEARS, r);
      s.earned += r.rs * HOUR_YEARS;
      s.logIndex += r.accrue * HOUR_YEARS;
      s.rat = r.rat;
    }
    const part = (tMs - s.hourMs) / YEAR_MS;
    const hour = accrue(d, s.hourMs, part, ratesNow(d, s.hourMs, s.rat, r));
    const logIndex = s.logIndex + hour.accrue * part;
    const earned = s.earned + hour.rs * part;
    const rat = hour.rat;
    const now = tMs === s.hourMs ? hour : ratesNow(d, tMs, rat, nowRates);
    return {
      supplyTokens: supplyAfter(
        d,
        tMs,
        now.u,
        logIndex,
        () => flowOf(d, valueNoise(d.sf, tMs, 9 * DAY_MS), tMs) + earned,
      ),
      utilization: now.u,
      borrowRate: now.rb,
      supplyRate: now.rs,
      logIndex,
      rateAtTarget: d.rat0 === null ? null : rat,
    };
  };

  const snapshotsOn = (
    index: number,
    path: MarketPath,
    times: readonly number[],
    granularity: SnapshotGranularity,
  ): MarketSnapshot[] => {
    const m = markets[index] as PricedMarketRecord;
    return times.map((at) => {
      const i = Math.round((at - path.fromMs) / HOUR_MS);
      const s = path.supplyTokens[i] as number;
      const u = path.utilization[i] as number;
      const lp = path.loanPx[i] as number;
      const cp = path.collateralPx[i] as number;
      return {
        marketKey: m.uniqueKey,
        chainId: m.chainId,
        protocol: m.protocol,
        at,
        granularity,
        supplyUsd: usd(s * lp),
        borrowUsd: usd(s * u * lp),
        utilization: fraction(u),
        supplyApy: fraction(rateToApy(path.supplyRate[i] as number)),
        borrowApy: fraction(rateToApy(path.borrowRate[i] as number)),
        collateralPriceUsd: cp > 0 ? significant(cp) : null,
        loanPriceUsd: lp > 0 ? significant(lp) : null,
        oraclePrice: cp > 0 && lp > 0 ? significant(cp / lp) : null,
      };
    });
  };

  /** Borrowers of market `index` opening in [fromMs, lastHour] (on whole hours), in opening order. */
  const borrowersOf = (index: number, fromMs: number, lastHour: number): Borrower[] => {
    const m = markets[index] as PricedMarketRecord;
    const count = positionCounts[index] ?? 0;
    const out: Borrower[] = [];
    if (count === 0 || !(m.borrow > 0)) return out;
    const open = streamId(seed, `openings|${m.uniqueKey}`);
    const perDay = (OPENINGS_PER_POSITION * count) / 365;
    const avgDebtUsd = m.borrow / count;
    for (let day = Math.floor(fromMs / DAY_MS); day <= Math.floor(lastHour / DAY_MS); day++) {
      const whole = Math.floor(perDay);
      const n = Math.min(4095, whole + (unitAt(open, day, 0) < perDay - whole ? 1 : 0));
      for (let j = 0; j < n; j++) {
        const id = day * 4096 + j;
        const openMs = day * DAY_MS + Math.floor(unitAt(open, id, 1) * 24) * HOUR_MS;
        if (openMs < fromMs || openMs > lastHour || openMs < startMs || openMs >= asOfMs) continue;
        const healthFactor = 1.04 - Math.log(unitAt(open, id, 3)) * HF_SPREAD;
        out.push({
          id,
          address: hexOf(open, id, 1000, 5),
          openMs,
          // Its last hour is before the snapshot's: from the snapshot on, the market's borrowers
          // are the served positions (liquidated by the live liquidator, at the hour they cross).
          lifeHours: Math.min(
            MAX_LIFE_H,
            Math.ceil(-Math.log(unitAt(open, id, 2)) * MEAN_LIFE_H),
            Math.round((asOfMs - openMs) / HOUR_MS) - 1,
          ),
          healthFactor,
          // the market's average position (e^(1.2 z - 0.72) has mean 1) by the risk weight
          debtUsd: avgDebtUsd * riskWeight(healthFactor) * Math.exp(1.2 * normalAt(open, id, 4) - 0.72),
        });
      }
    }
    return out;
  };

  /** The first hour a path for liquidations in [fromMs, toMs) must cover. */
  const liquidationPathFrom = (fromMs: number) => Math.max(startMs, floorHour(fromMs) - MAX_LIFE_H * HOUR_MS);

  const liquidationsOn = (
    index: number,
    path: MarketPath,
    fromMs: number,
    toMs: number,
  ): PricedLiquidationEvent[] => {
    const m = markets[index] as PricedMarketRecord;
    const t = terms[index] as MarketTerms;
    const count = positionCounts[index] ?? 0;
    const events: PricedLiquidationEvent[] = [];
    if (count === 0 || !(m.lltv > 0) || !(m.borrow > 0) || !(m.collateralPrice > 0) || !(m.loanPrice > 0))
      return events;
    const lastHour = floorHour(toMs - 1);
    if (lastHour < startMs) return events;
    // Positions opened up to MAX_LIFE_H before the window can be liquidated in it.
    const pathFrom = liquidationPathFrom(fromMs);
    const base = Math.round((pathFrom - path.fromMs) / HOUR_MS);
    const last = Math.round((lastHour - pathFrom) / HOUR_MS);
    const q = new Float64Array(last + 1);
    for (let i = 0; i <= last; i++) {
      q[i] =
        (path.collateralPx[base + i] as number) /
        ((path.loanPx[base + i] as number) * Math.exp(path.logIndex[base + i] as number));
    }
    const tree = new MinTree(q);
    const key = m.uniqueKey;
    const txs = streamId(seed, `liq-tx|${key}`);
    const bots = streamId(seed, `liquidators|${m.chainId}`);
    for (const who of borrowersOf(index, pathFrom, lastHour)) {
      const a = who.id;
      const endIdx = Math.min(last, Math.round((who.openMs - pathFrom) / HOUR_MS) + who.lifeHours);
      let o = Math.round((who.openMs - pathFrom) / HOUR_MS);
      let hf = who.healthFactor;
      const debtUsd = who.debtUsd;
      let debt = debtUsd / (path.loanPx[base + o] as number);
      let collateral = (hf * debtUsd) / ((path.collateralPx[base + o] as number) * m.lltv);
      let k = 0;
      while (o < endIdx) {
        const h = tree.firstBelow(o + 1, (q[o] as number) / hf);
        if (h < 0 || h > endIdx) break;
        const hourMs = pathFrom + h * HOUR_MS;
        const lp = path.loanPx[base + h] as number;
        const cp = path.collateralPx[base + h] as number;
        debt *= Math.exp((path.logIndex[base + h] as number) - (path.logIndex[base + o] as number));
        const hfNow = (hf * (q[h] as number)) / (q[o] as number);
        const cf = hfNow < FULL_CLOSE_HF ? 1 : t.closeFactor;
        const { repaid, seized, badDebt: bad } = liquidate(collateral, debt, hfNow, cp, lp, t);
        const b = blockAt(m.chainId, hourMs + Math.floor(unitAt(txs, a, 100_000 + k) * HOUR_MS));
        const atMs = blockTime(m.chainId, b);
        if (atMs >= fromMs && atMs < toMs) {
          events.push({
            protocol: m.protocol,
            chainId: m.chainId,
            txHash: hexOf(txs, a, k, 8),
            logIndex: hashAt(txs, a, 200_000 + k) % 400,
            block: b,
            at: atMs,
            marketKey: key,
            borrower: who.address,
            liquidator: liquidatorAddress(bots, hashAt(txs, a, 300_000 + k)),
            collateralSeized: significant(seized),
            collateralSeizedUsd: usd(seized * cp),
            debtRepaid: significant(repaid),
            debtRepaidUsd: usd(repaid * lp),
            badDebt: significant(bad),
            badDebtUsd: usd(bad * lp),
          });
        }
        collateral -= seized;
        debt -= repaid;
        k++;
        if (bad > 0 || cf >= 1 || !(debt > 0) || !(collateral > 0)) break;
        o = h;
        hf = (collateral * cp * m.lltv) / (debt * lp);
      }
    }
    events.sort((x, y) => x.at - y.at || x.logIndex - y.logIndex);
    return events;
  };

  return {
    startMs,
    snapshots(index, times, granularity) {
      const first = times[0];
      const last = times.at(-1);
      if (first === undefined || last === undefined) return [];
      return snapshotsOn(index, pathOf(index, first, last), times, granularity);
    },
    liquidations(index, fromMs, toMs) {
      if (toMs <= startMs) return [];
      return liquidationsOn(
        index,
        pathOf(index, liquidationPathFrom(fromMs), floorHour(toMs - 1)),
        fromMs,
        toMs,
      );
    },
    borrowers: (index, fromMs, toMs) => borrowersOf(index, fromMs, floorHour(toMs - 1)),
    stateAt,
    market(index, times, granularity, fromMs, toMs) {
      const from = Math.min(times[0] ?? Number.POSITIVE_INFINITY, liquidationPathFrom(fromMs));
      const to = Math.max(times.at(-1) ?? Number.NEGATIVE_INFINITY, floorHour(toMs - 1));
      const path = pathOf(index, from, Math.max(from, to));
      return {
        snapshots: snapshotsOn(index, path, times, granularity),
        liquidations: toMs <= startMs ? [] : liquidationsOn(index, path, fromMs, toMs),
      };
    },
  };
}
