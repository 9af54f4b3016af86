/**
 * Synthetic but plausible USD prices, one per token symbol for the whole dataset, plus the
 * per-family defaults (liquidation thresholds, rate curves) used where the reference data
 * has no value. Prices depend on the seed and the symbol only.
 */

import { type AssetFamily, assetFamily, type MajorSymbol } from '../../domain/asset-family.ts';
import type { RateCurve } from '../../domain/rates.ts';
import { createRng, hash32, type Rng, roundSignificant, unitHash } from './rng.ts';
import { ADAPTIVE_IRM } from './simulation/adaptive-irm.ts';

/** USD price ranges of well-known non-pegged tokens (chain natives, governance tokens). */
const MAJORS: Readonly<Record<MajorSymbol, readonly [number, number]>> = {
  BNB: [550, 750],
  WBNB: [550, 750],
  POL: [0.2, 0.6],
  WPOL: [0.2, 0.6],
  MATIC: [0.2, 0.6],
  WMATIC: [0.2, 0.6],
  AVAX: [20, 40],
  WAVAX: [20, 40],
  SAVAX: [24, 48],
  S: [0.3, 0.8],
  WS: [0.3, 0.8],
  MNT: [0.6, 1.2],
  WMNT: [0.6, 1.2],
  XPL: [0.3, 1.2],
  WXPL: [0.3, 1.2],
  CELO: [0.3, 0.8],
  METIS: [15, 40],
  ONE: [0.01, 0.03],
  RON: [0.3, 1],
  WRON: [0.3, 1],
  GNO: [120, 250],
  LINK: [12, 25],
  AAVE: [150, 350],
  UNI: [6, 14],
  COMP: [40, 80],
  MKR: [1200, 2200],
  SKY: [0.05, 0.09],
  ARB: [0.3, 0.9],
  OP: [0.6, 2],
  MORPHO: [1.2, 3],
  EUL: [5, 15],
  FLUID: [4, 12],
  CRV: [0.4, 1.1],
  LDO: [0.8, 2],
  SOL: [130, 250],
  PENDLE: [2, 6],
  ENA: [0.3, 0.9],
  ETHFI: [0.6, 2.5],
  AERO: [0.5, 1.5],
  SNX: [0.8, 2.5],
  BAL: [1, 3],
  RPL: [5, 15],
  SPK: [0.03, 0.12],
};

/**
 * ETH per token of the widely held liquid staking and restaking tokens: their on-chain
 * exchange rates as of late 2025, rounded to 0.01 (the reference folder lists these tokens and
 * their exchange-rate feeds, not the rates). Tokens not listed here, mostly young restaking
 * and vault tokens, get 1.00 to 1.05 by a hash of the symbol.
 */
export const LST_ETH_RATIOS: Readonly<Record<string, number>> = Object.freeze({
  stETH: 1,
  wstETH: 1.22,
  rETH: 1.14,
  cbETH: 1.12,
  weETH: 1.08,
  ezETH: 1.06,
  rsETH: 1.05,
  wrsETH: 1.05,
  osETH: 1.05,
  ETHx: 1.07,
  pufETH: 1.06,
  mETH: 1.07,
  LsETH: 1.07,
  sfrxETH: 1.15,
  OETH: 1,
  WOETH: 1.09,
});

/** The underlying symbol of a Pendle PT symbol: PT-sUSDE-27MAR2025 gives sUSDE (and PT_USDe_25SEP2025, USDe). */
export function ptUnderlying(symbol: string): string {
  const parts = symbol.split(/[-_]/).slice(1);
  const last = parts[parts.length - 1];
  if (parts.length > 1 && last !== undefined && /^\d/.test(last)) parts.pop();
  return parts.join('-') || symbol;
}

const MONTHS: Readonly<Record<string, number>> = {
  JAN: 0,
  FEB: 1,
  MAR: 2,
  APR: 3,
  MAY: 4,
  JUN: 5,
  JUL: 6,
  AUG: 7,
  SEP: 8,
  OCT: 9,
  NOV: 10,
  DEC: 11,
};

/** Maturity (00:00 UTC) written in a PT symbol's last part: PT-sUSDE-27MAR2025, PT_USDe_5FEB2026. */
export function maturityFromSymbol(symbol: string): number | null {
  const parts = symbol.split(/[-_]/);
  const m = /^(\d{1,2})([A-Za-z]{3})(\d{4})$/.exec(parts[parts.length - 1] ?? '');
  if (!m || parts.length < 3) return null;
  const month = MONTHS[(m[2] as string).toUpperCase()];
  const day = Number(m[1]);
  const year = Number(m[3]);
  if (month === undefined || day < 1) return null;
  const t = Date.UTC(year, month, day);
  return new Date(t).getUTCDate() === day ? t : null;
}

/** True for families pegged to the same unit (a stable against a stable, an LST against ETH...). */
function samePeg(a: AssetFamily, b: AssetFamily): boolean {
  const peg = (f: AssetFamily): string =>
    f === 'usd' || f === 'usd-yield' ? 'usd' : f === 'eth' || f === 'eth-lst' ? 'eth' : f;
  const pa = peg(a);
  return pa === peg(b) && (pa === 'usd' || pa === 'eth' || pa === 'btc' || pa === 'eur');
}

/**
 * One USD price per symbol, memoized. Families: stables about 1 (within 0.3 %), yield-bearing
 * stables 1.0 to 1.2, EUR stables at one EUR/USD rate, ETH and WETH at one ETH price
 * (3,000 to 3,500), LSTs/LRTs at ETH x their exchange rate (LST_ETH_RATIOS), the BTC family near one BTC price
 * (90,000 to 100,000), gold 2,600 to 4,000, PTs at their underlying's price discounted to
 * their maturity at an implied rate of 5 to 20 % a year (par once matured; a 0.5 to 12 %
 * discount when the symbol has no date), known majors within a range, others log-normal by a hash of the symbol.
 */
export class PriceBook {
  readonly #seed: number;
  readonly #cache = new Map<string, number>();
  readonly eth: number;
  readonly btc: number;
  readonly eur: number;
  readonly gold: number;

  readonly #asOfMs: number | null;

  /** `asOfMs`: the snapshot instant PTs are priced at (their discount runs to their maturity). */
  constructor(seed: number, asOfMs: number | null = null) {
    this.#seed = seed;
    this.#asOfMs = asOfMs;
    const rng = createRng(hash32(`${seed}|anchors`));
    this.eth = roundSignificant(rng.float(3000, 3500), 8);
    this.btc = roundSignificant(rng.float(90_000, 100_000), 8);
    this.eur = roundSignificant(rng.float(1.08, 1.17), 6);
    this.gold = roundSignificant(rng.float(2600, 4000), 8);
  }

  /** USD price of a symbol (> 0). */
  price(symbol: string): number {
    let p = this.#cache.get(symbol);
    if (p === undefined) {
      p = roundSignificant(this.#compute(symbol), 8);
      this.#cache.set(symbol, p);
    }
    return p;
  }

  #u(symbol: string, salt: string): number {
    return unitHash(this.#seed, `price|${salt}|${symbol}`);
  }

  #compute(symbol: string): number {
    const upper = symbol.toUpperCase();
    const u = this.#u(symbol, 'u');
    switch (assetFamily(symbol)) {
      case 'usd':
        return 1 + 0.006 * (u - 0.5);
      case 'usd-yield':
        return 1 + 0.2 * u;
      case 'eur':
        return this.eur * (1 + 0.006 * (u - 0.5));
      case 'eth':
        return this.eth;
      case 'eth-lst':
        return this.eth * (LST_ETH_RATIOS[symbol] ?? 1 + 0.05 * u);
      case 'btc':
        return this.btc * (0.985 + 0.02 * u);
      case 'gold':
        return this.gold * (0.995 + 0.01 * u);
      case 'pt': {
        const underlying = ptUnderlying(symbol);
        if (underlying === symbol || assetFamily(underlying) === 'pt') return this.#logNormal(symbol);
        const maturity = maturityFromSymbol(symbol);
        if (maturity !== null && this.#asOfMs !== null) {
          // Par from maturity on; before it, a discount at an implied rate of 5 to 20 % a year.
          const years = Math.max(0, maturity - this.#asOfMs) / (365.25 * 86_400_000);
          return this.price(underlying) * Math.exp(-(0.05 + 0.15 * u) * years);
        }
        return this.price(underlying) * (0.88 + 0.115 * u);
      }
      case 'major': {
        const [lo, hi] = MAJORS[upper as MajorSymbol] ?? [1, 2];
        return lo + (hi - lo) * u;
      }
      default:
        return this.#logNormal(symbol);
    }
  }

  /** Log-normal around 1.5 USD (sigma 1.8), clamped to [0.0005, 20,000]. */
  #logNormal(symbol: string): number {
    const rng: Rng = createRng(hash32(`${this.#seed}|price|normal|${symbol}`));
    const p = Math.exp(Math.log(1.5) + 1.8 * rng.normal());
    return Math.min(20_000, Math.max(0.0005, p));
  }
}

/**
 * A plausible liquidation threshold (0 to 1) for a collateral/loan pair when the source has
 * none, by asset family; `u` in [0, 1) picks within the family's range. Rounded to 3 decimals.
 */
export function defaultLltv(collateral: string, loan: string, u: number): number {
  const cf = assetFamily(collateral);
  const lf = assetFamily(loan);
  let range: readonly [number, number];
  if (samePeg(cf, lf)) range = [0.9, 0.95];
  else if (cf === 'eth' || cf === 'eth-lst') range = [0.78, 0.86];
  else if (cf === 'btc') range = [0.7, 0.8];
  else if (cf === 'usd' || cf === 'usd-yield' || cf === 'eur') range = [0.75, 0.88];
  else if (cf === 'pt') range = [0.8, 0.9];
  else if (cf === 'gold') range = [0.65, 0.75];
  else if (cf === 'major') range = [0.55, 0.75];
  else range = [0.4, 0.65];
  return Math.round((range[0] + (range[1] - range[0]) * u) * 1000) / 1000;
}

/**
 * A pooled-protocol borrow curve for a loan asset's family, in Aave's terms (optimal
 * utilization, slope1 reached there, slope2 added up to full utilization), as Aave v3's rate
 * strategies set them: stables 92 %, 6.5 %, 60 %; ETH and its LSTs 90 %, 2.7 %, 80 %; BTC 80 %,
 * 4 %, 300 %; others (volatile and long-tail tokens) 45 %, 7 %, 300 %.
 * Each slope is scaled by `jitter` (about 0.8 to 1.2).
 */
export function familyCurve(loan: string, jitter: number): RateCurve {
  const f = assetFamily(loan);
  let optimal: number;
  let slope1: number;
  let slope2: number;
  if (f === 'usd' || f === 'usd-yield' || f === 'eur') [optimal, slope1, slope2] = [0.92, 0.065, 0.6];
  else if (f === 'eth' || f === 'eth-lst') [optimal, slope1, slope2] = [0.9, 0.027, 0.8];
  else if (f === 'btc') [optimal, slope1, slope2] = [0.8, 0.04, 3];
  else [optimal, slope1, slope2] = [0.45, 0.07, 3];
  return {
    base: 0,
    slopeLow: (slope1 / optimal) * jitter,
    slopeHigh: (slope2 / (1 - optimal)) * jitter,
    kink: optimal,
  };
}

/** Morpho's AdaptiveCurveIrm constants: target utilization, curve steepness, bounds of the rate at target (yearly). */
export const MORPHO_IRM = ADAPTIVE_IRM;

/**
 * Morpho's AdaptiveCurveIrm at a rate at target `r` (held within its bounds): r / 4 at 0
 * utilization, r at the 90 % target, 4r at full utilization, linear in between (the curve's
 * error is (u - 0.9) / 0.9 below the target and (u - 0.9) / 0.1 above it).
 */
export function adaptiveCurve(rateAtTarget: number): RateCurve {
  const { targetUtilization: t, curveSteepness: c, minRateAtTarget, maxRateAtTarget } = MORPHO_IRM;
  const r = Math.min(maxRateAtTarget, Math.max(minRateAtTarget, rateAtTarget));
  return {
    base: r / c,
    slopeLow: (r * (1 - 1 / c)) / t,
    slopeHigh: (r * (c - 1)) / (1 - t),
    kink: t,
  };
}

/** A protocol's default reserve factor by loan family (Aave-like: stables 10 %, ETH 15 %, others 20 %). */
export function familyReserveFactor(loan: string): number {
  const f = assetFamily(loan);
  if (f === 'usd' || f === 'usd-yield' || f === 'eur') return 0.1;
  if (f === 'eth' || f === 'eth-lst' || f === 'btc') return 0.15;
  return 0.2;
}
