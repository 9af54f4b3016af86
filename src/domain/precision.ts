import { utilization } from './metrics.ts';

/**
 * The precision of the figures the API serves. Figures are computed from the data at full
 * double precision and rounded once, when the answer is built, so no answer shows binary
 * noise such as 32792526.580000162 (supply - borrow) or 0.30000000000000004. The README's
 * "Numbers" section states the same rules:
 * - USD amounts (market supply, borrow, available; a position's collateral, debt, supply): to
 *   the cent.
 * - USD prices of tokens: 8 significant digits (a token may be worth 0.000012 USD).
 * - Shares and rates between about -1 and 1 (utilization, APYs, lltv, distanceToLiq): 8 decimal
 *   places (0.000001 %).
 * - Multiples (healthFactor, leverage, maxLeverage, stalenessRatio): 8 significant digits.
 * - Rating scores (0 to 100): 2 decimal places.
 * Figures the API serves side by side that are defined from each other are derived from the
 * served (rounded) ones, so the identity holds in what a client reads: a market's `available`
 * is its served supply minus its served borrow, its `utilization` their ratio (servedBalances).
 * Flags derived from a figure (isStale, a position being below a threshold) are decided on the
 * unrounded value. Infinity and NaN pass through unchanged.
 */

/** To the cent. */
export function usd(x: number): number {
  if (!Number.isFinite(x)) return x;
  return Math.round(x * 100) / 100 || 0;
}

/** To the cent; null stays null (an amount whose USD value may be unknown). */
export function usdOrNull(x: number | null): number | null {
  return x === null ? null : usd(x);
}

/** To `digits` significant digits (default 8). */
export function significant(x: number, digits = 8): number {
  if (!Number.isFinite(x) || x === 0) return x;
  return Number(x.toPrecision(digits));
}

/** To `digits` significant digits; null stays null (a figure that may be unknown). */
export function significantOrNull(x: number | null, digits = 8): number | null {
  return x === null ? null : significant(x, digits);
}

/** Scores on a 0-100 scale (ratings): to 2 decimal places. */
export function points(x: number): number {
  if (!Number.isFinite(x)) return x;
  return Math.round(x * 100) / 100 || 0;
}

/** To 8 decimal places. */
export function fraction(x: number): number {
  if (!Number.isFinite(x)) return x;
  return Math.round(x * 1e8) / 1e8 || 0;
}

/**
 * A market's balances as served: supply and borrow to the cent, then `available` = supply -
 * borrow (exact to the cent: both are whole cents) and `utilization` = borrow / supply (to 8
 * decimal places, clamped to [0, 1] as `utilization` is) computed from those served amounts,
 * not each rounded on its own.
 */
export function servedBalances(
  supplyUsd: number,
  borrowUsd: number,
): { supply: number; borrow: number; available: number; utilization: number } {
  const supply = usd(supplyUsd);
  const borrow = usd(borrowUsd);
  return {
    supply,
    borrow,
    available: usd(supply - borrow),
    utilization: fraction(utilization(supply, borrow)),
  };
}
