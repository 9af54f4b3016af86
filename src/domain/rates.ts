/**
 * Interest-rate model of pooled lending markets. Pure functions.
 * Conventions (docs/decisions.md "Units"): rates and APYs are decimals (0.05 = 5 % a year); utilization
 * and reserve factor are fractions from 0 to 1.
 */

/**
 * A kinked (two-slope) interest-rate curve, in the per-unit-of-utilization form Compound v3
 * uses. All values are annual rates as decimals.
 * - `base`: borrow rate at zero utilization.
 * - `slopeLow`: rate added per unit of utilization up to the kink.
 * - `slopeHigh`: rate added per unit of utilization above the kink (usually much steeper).
 * - `kink`: utilization where the slope changes, in (0, 1].
 *
 * Aave's form (`slope1` reached at the optimal utilization) maps to this one with
 * `slopeLow = slope1 / kink` and `slopeHigh = slope2 / (1 - kink)`.
 */
export interface RateCurve {
  base: number;
  slopeLow: number;
  slopeHigh: number;
  kink: number;
}

function assertFraction(name: string, value: number): void {
  if (!(value >= 0 && value <= 1)) throw new RangeError(`${name} must be in [0, 1], got ${value}`);
}

function assertCurve(curve: RateCurve): void {
  const { base, slopeLow, slopeHigh, kink } = curve;
  if (!(base >= 0 && slopeLow >= 0 && slopeHigh >= 0) || !Number.isFinite(base + slopeLow + slopeHigh)) {
    throw new RangeError(`curve rates must be finite and >= 0, got ${JSON.stringify(curve)}`);
  }
  if (!(kink > 0 && kink <= 1)) throw new RangeError(`curve kink must be in (0, 1], got ${kink}`);
}

/**
 * Annual borrow rate (decimal) at a utilization:
 * base + slopeLow x min(u, kink) + slopeHigh x max(u - kink, 0).
 * Non-decreasing in utilization. Preconditions: 0 <= utilization <= 1; curve rates finite
 * and >= 0; 0 < kink <= 1. Throws RangeError otherwise.
 */
export function borrowRate(utilization: number, curve: RateCurve): number {
  assertFraction('utilization', utilization);
  assertCurve(curve);
  const low = Math.min(utilization, curve.kink);
  const high = Math.max(utilization - curve.kink, 0);
  return curve.base + curve.slopeLow * low + curve.slopeHigh * high;
}

/**
 * Annual supply rate (decimal): what borrowers pay, spread over all suppliers, minus the
 * protocol's cut: borrowRate x utilization x (1 - reserveFactor).
 * Never above `borrowRate` (utilization and 1 - reserveFactor are at most 1).
 * Preconditions: borrowRate >= 0; utilization and reserveFactor in [0, 1].
 */
export function supplyRate(borrowRate: number, utilization: number, reserveFactor: number): number {
  if (!(borrowRate >= 0) || !Number.isFinite(borrowRate)) {
    throw new RangeError(`borrowRate must be finite and >= 0, got ${borrowRate}`);
  }
  assertFraction('utilization', utilization);
  assertFraction('reserveFactor', reserveFactor);
  return borrowRate * utilization * (1 - reserveFactor);
}

/**
 * APY (decimal) of an annual rate compounded continuously: e^rate - 1.
 * Increasing in the rate; 0 for 0. Uses expm1 for precision at small rates.
 */
export function rateToApy(rate: number): number {
  return Math.expm1(rate);
}
