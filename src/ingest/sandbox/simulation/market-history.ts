/**
 * A year of each sandbox market's life, from the price paths: balances, utilization and rates,
 * interest accruing on debt, borrowers opening and closing positions, and the liquidations the
 * price moves cause. Pure and deterministic: everything is a function of the seed, the market
 * and the time, so any window of the history can be computed alone and a window computed twice
 * (a restart, another process) gives the same rows.
 *
 * Method (the README's "Sandbox history" section says the same):
 * - Prices: the token's snapshot price times its symbol's path ratio (SandboxPriceBasis), the
 *   prices the running server serves.
 * - Utilization: the snapshot's, plus two slow noises (5-day and 12-hour knots, amplitudes
 *   UTIL_SWING) that vanish at the snapshot instant, clamped to [0, 0.99] (or to the
 *   snapshot's utilization when higher). Supply in loan
 *   tokens: the snapshot's, times a flow noise (9-day knots) and a yearly growth drawn per
 *   market, times the interest suppliers earned since (the supply rate of the curve at each
 *   hour's utilization). Borrow = utilization x supply. APYs from the market's curve (domain
 *   rates.ts). After the snapshot instant the same rules go on forward (the noises keep moving,
 *   suppliers keep earning): the running server serves each market's state at the current
 *   instant (stateAt), equal to the hourly history at whole hours.
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
}

/** The constants of one market's balance path. */
interface Dynamics {
  terms: MarketTerms;
  u0: number;
  /** The utilization noise's level at the snapshot: aboveKink.inverse(u0). */
  r0: number;
  s0: number;
  su1: number;
  su2: number;
  sf: number;
  growth: number;
  at1: number;
  at2: number;
  atF: number;
}

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
    const key = m.uniqueKey;
    const su1 = streamId(seed, `util-slow|${key}`);
    const su2 = streamId(seed, `util-fast|${key}`);
    const sf = streamId(seed, `flow|${key}`);
    return {
      terms: terms[index] as MarketTerms,
      u0: m.supply > 0 ? Math.min(1, m.borrow / m.supply) : 0,
      r0:
        m.supply > 0
          ? aboveKinkInverse(Math.min(1, m.borrow / m.supply), (terms[index] as MarketTerms).curve.kink)
          : 0,
      s0: m.loanPrice > 0 ? m.supply / m.loanPrice : 0,
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
   * Utilization from the two noises' values at an instant, clamped to [0, 0.99] (to the
   * snapshot's when that is higher, so the snapshot instant gives the snapshot's).
   */
  const utilizationOf = (d: Dynamics, n1: number, n2: number, tMs: number): number => {
    if (!(d.u0 > 0)) return 0;
    const kink = d.terms.curve.kink;
    // The slow level stays below the kink (a market above it at the snapshot comes back
    // within SETTLE_MS either side); only the fast noise takes it above, for hours.
    const below = SLOW_CAP * kink;
    const cap =
      d.r0 <= below ? below : d.r0 - (d.r0 - below) * Math.min(1, Math.abs(tMs - asOfMs) / SETTLE_MS);
    const level = Math.min(cap, d.r0 + UTIL_SWING.slow * (n1 - d.at1));
    return Math.min(
      Math.max(0.99, d.u0),
      Math.max(0, aboveKink(level + UTIL_SWING.fast * (n2 - d.at2), kink)),
    );
  };
  /** log of the supply's flows and growth from the snapshot to tMs (0 at the snapshot). */
  const flowOf = (d: Dynamics, flowNoise: number, tMs: number): number =>
    FLOW_SWING * (flowNoise - d.atF) + (d.growth * (tMs - asOfMs)) / YEAR_MS;

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
    for (let i = 0; i < hours; i++) {
      path.collateralPx[i] = m.collateralPrice * (c.ratios[co + i] as number);
      path.loanPx[i] = m.loanPrice * (l.ratios[lo + i] as number);
      const u = n1 && n2 ? utilizationOf(d, n1[i] as number, n2[i] as number, fromMs + i * HOUR_MS) : 0;
      const rb = borrowRate(u, d.terms.curve);
      const rs = supplyRate(rb, u, d.terms.reserveFactor);
      path.utilization[i] = u;
      path.borrowRate[i] = rb;
      supplyRates[i] = rs;
      path.logIndex[i] = logIndex;
      logIndex += rb * HOUR_YEARS;
    }
    // Supply: from the snapshot, removing the interest earned between t and asOf before it and
    // adding the interest earned since after it.
    const asOfIdx = Math.round((asOfMs - fromMs) / HOUR_MS);
    const flows = valueNoiseSeries(d.sf, fromMs, HOUR_MS, hours, 9 * DAY_MS);
    let earned = 0;
    for (let i = asOfIdx - 1; i >= 0; i--) {
      earned += (supplyRates[i] as number) * HOUR_YEARS;
      const flow = flowOf(d, flows[i] as number, fromMs + i * HOUR_MS);
      path.supplyTokens[i] = d.s0 * Math.exp(flow - earned);
    }
    earned = 0;
    for (let i = asOfIdx; i < hours; i++) {
      const flow = flowOf(d, flows[i] as number, fromMs + i * HOUR_MS);
      path.supplyTokens[i] = d.s0 * Math.exp(flow + earned);
      earned += (supplyRates[i] as number) * HOUR_YEARS;
    }
    return path;
  };

  /**
   * Each market's state at an instant after the snapshot: the hourly rates summed up to the
   * hour before (kept per market and extended as time goes on), plus the current hour's part.
   * At whole hours it equals the path's (the hourly history).
   */
  const live: ({ dynamics: Dynamics; hourMs: number; earned: number; logIndex: number } | undefined)[] = [];
  const rateAt = (d: Dynamics, tMs: number) => {
    const u =
      d.u0 > 0
        ? utilizationOf(d, valueNoise(d.su1, tMs, 5 * DAY_MS), valueNoise(d.su2, tMs, 12 * HOUR_MS), tMs)
        : 0;
    const rb = borrowRate(u, d.terms.curve);
    return { u, rb, rs: supplyRate(rb, u, d.terms.reserveFactor) };
  };
  const stateAt = (index: number, tMs: number): MarketState => {
    if (!(tMs >= asOfMs)) throw new RangeError('a market state is defined from the snapshot instant on');
    let s = live[index];
    if (!s || s.hourMs > floorHour(tMs)) {
      s = { dynamics: dynamicsOf(index), hourMs: asOfMs, earned: 0, logIndex: 0 };
      live[index] = s;
    }
    const d = s.dynamics;
    for (const last = floorHour(tMs); s.hourMs < last; s.hourMs += HOUR_MS) {
      const r = rateAt(d, s.hourMs);
      s.earned += r.rs * HOUR_YEARS;
      s.logIndex += r.rb * HOUR_YEARS;
    }
    const hour = rateAt(d, s.hourMs);
    const part = (tMs - s.hourMs) / YEAR_MS;
    const now = tMs === s.hourMs ? hour : rateAt(d, tMs);
    return {
      supplyTokens:
        d.s0 * Math.exp(flowOf(d, valueNoise(d.sf, tMs, 9 * DAY_MS), tMs) + s.earned + hour.rs * part),
      utilization: now.u,
      borrowRate: now.rb,
      supplyRate: now.rs,
      logIndex: s.logIndex + hour.rb * part,
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
