/**
 * Morpho's AdaptiveCurveIrm in floating point and annual rates: the steps of
 * `AdaptiveCurveIrmLib.getBorrowRate` of @morpho-org/blue-sdk (a dependency), which computes them
 * as the contract does, in WAD-scaled per-second integers (test/ingest/adaptive-irm.test.ts checks
 * that the two agree). The library is not imported here: loading @morpho-org/blue-sdk takes
 * seconds at start, and its integer steps cost microseconds each where the sandbox takes one step
 * per Morpho market per simulated hour.
 *
 * - err = (u - target) / (1 - target) above the target, (u - target) / target below it.
 * - The rate at target moves exponentially with the error: r(t) = r(0) x e^(speed x t), speed =
 *   ADJUSTMENT_SPEED x err, held within [MIN_RATE_AT_TARGET, MAX_RATE_AT_TARGET]; e^x is the
 *   contract's wExp (x = q ln 2 + r, 2^q x (1 + r + r^2 / 2)).
 * - The borrow rate is the curve at the error: r x (1 + (1 - 1/C) err) below the target,
 *   r x (1 + (C - 1) err) above it (C the steepness): r / C at 0 utilization, C r at full.
 * - Over a period the average rate uses the trapezoidal rule with two steps, as the contract.
 */

/** The contract's constants, annual: target utilization, steepness, adjustment speed (per year), bounds. */
export const ADAPTIVE_IRM = Object.freeze({
  targetUtilization: 0.9,
  curveSteepness: 4,
  adjustmentSpeed: 50,
  minRateAtTarget: 0.001,
  maxRateAtTarget: 2,
});

const LN_2 = Math.LN2;
/** ln(1e-18): below it the contract's wExp is 0. */
const LN_WEI = Math.log(1e-18);

/** The contract's exp: x = q ln 2 + r (q rounded half toward zero), 2^q x (1 + r + r^2 / 2). */
export function wExp(x: number): number {
  if (x < LN_WEI) return 0;
  const q = Math.trunc((x + (x < 0 ? -LN_2 / 2 : LN_2 / 2)) / LN_2);
  const r = x - q * LN_2;
  return (1 + r + (r * r) / 2) * 2 ** q;
}

/** The error of a utilization from the target, normalised to [-1, 1]. */
export function adaptiveError(utilization: number): number {
  const t = ADAPTIVE_IRM.targetUtilization;
  return utilization > t ? (utilization - t) / (1 - t) : (utilization - t) / t;
}

/** The curve at an error: the borrow rate (annual) for a rate at target. */
export function adaptiveCurveRate(err: number, rateAtTarget: number): number {
  const c = ADAPTIVE_IRM.curveSteepness;
  const coeff = err < 0 ? 1 - 1 / c : c - 1;
  return (coeff * err + 1) * rateAtTarget;
}

const bounded = (r: number) =>
  Math.min(ADAPTIVE_IRM.maxRateAtTarget, Math.max(ADAPTIVE_IRM.minRateAtTarget, r));

export interface AdaptiveStep {
  /** The borrow rate averaged over the period (what interest accrues at). */
  avgBorrowRate: number;
  /** The borrow rate and the rate at target at the end of the period. */
  endBorrowRate: number;
  endRateAtTarget: number;
}

/**
 * One period of `years` at utilization `u` from the rate at target `rateAtTarget` (annual,
 * within the bounds): getBorrowRate of the contract. Written into `out` when given.
 */
export function adaptiveStep(
  u: number,
  rateAtTarget: number,
  years: number,
  out: AdaptiveStep = { avgBorrowRate: 0, endBorrowRate: 0, endRateAtTarget: 0 },
): AdaptiveStep {
  const err = adaptiveError(u);
  const linear = ADAPTIVE_IRM.adjustmentSpeed * err * years;
  let end = rateAtTarget;
  let avg = rateAtTarget;
  if (linear !== 0) {
    end = bounded(rateAtTarget * wExp(linear));
    avg = (rateAtTarget + end + 2 * bounded(rateAtTarget * wExp(linear / 2))) / 4;
  }
  out.avgBorrowRate = adaptiveCurveRate(err, avg);
  out.endBorrowRate = adaptiveCurveRate(err, end);
  out.endRateAtTarget = end;
  return out;
}
