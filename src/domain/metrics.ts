/**
 * Market and position metrics. Pure functions: USD amounts in, numbers out.
 * Conventions (docs/decisions.md "Positions at risk", "Units"): lltv is a fraction 0 to 1; health factor is dimensionless
 * and below 1 means liquidatable; APYs are decimals.
 */

/** supply - borrow, in USD. Not clamped: a negative value would expose bad source data. */
export function available(supplyUsd: number, borrowUsd: number): number {
  return supplyUsd - borrowUsd;
}

/** borrow / supply, clamped to [0, 1]; 0 for an empty market (nothing supplied). */
export function utilization(supplyUsd: number, borrowUsd: number): number {
  if (!(supplyUsd > 0) || !(borrowUsd > 0)) return 0;
  const u = borrowUsd / supplyUsd;
  return Math.min(u, 1);
}

/**
 * Largest leverage a loop can reach at this LLTV: 1 / (1 - lltv).
 * Precondition: 0 <= lltv < 1 (a market with lltv 1 has no finite bound).
 */
export function maxLeverage(lltv: number): number {
  if (!(lltv >= 0 && lltv < 1)) throw new RangeError(`lltv must be in [0, 1), got ${lltv}`);
  return 1 / (1 - lltv);
}

/** One collateral leg of an account: its USD value and the fraction of it that counts at liquidation. */
export interface CollateralLeg {
  valueUsd: number;
  liquidationThreshold: number;
}

/**
 * Account-level health factor of pooled protocols (Aave, Spark, Compound, Fluid, Euler):
 * sum(collateral_i x liquidationThreshold_i) / debt. Infinity without debt (never at risk).
 * Aave/Spark call the fraction liquidationThreshold, Compound liquidateCollateralFactor,
 * Euler the liquidation LTV, Fluid the liquidation threshold: the formula is the same.
 */
export function accountHealthFactor(collaterals: readonly CollateralLeg[], debtUsd: number): number {
  if (!(debtUsd > 0)) return Number.POSITIVE_INFINITY;
  let weighted = 0;
  for (const leg of collaterals) weighted += leg.valueUsd * leg.liquidationThreshold;
  return weighted / debtUsd;
}

/**
 * Isolated-market health factor (Morpho Blue): collateral x lltv / borrow, with both sides in
 * USD (equivalently, collateral valued in loan units by the market's oracle).
 * Infinity without debt.
 */
export function healthFactor(collateralUsd: number, lltv: number, borrowUsd: number): number {
  return accountHealthFactor([{ valueUsd: collateralUsd, liquidationThreshold: lltv }], borrowUsd);
}

/**
 * Position leverage: collateral / equity = collateral / (collateral - debt).
 * Null when collateral does not exceed debt (no positive equity, leverage undefined).
 */
export function leverage(collateralUsd: number, borrowUsd: number): number | null {
  const equity = collateralUsd - borrowUsd;
  if (!(equity > 0)) return null;
  return collateralUsd / equity;
}

/**
 * Fraction by which the collateral price (in loan units) can fall before liquidation:
 * 1 - 1 / healthFactor. Zero or below means liquidatable now; 1 for a position without debt.
 */
export function distanceToLiq(hf: number): number {
  if (hf === Number.POSITIVE_INFINITY) return 1;
  return 1 - 1 / hf;
}

/**
 * The relative price move of one asset that brings a position to health factor 1, the other
 * prices fixed: for its collateral 1 / hf - 1 (a fall, negative while hf > 1), for its debt
 * hf - 1 (a rise). Zero or past it (a collateral move >= 0, a debt move <= 0) means it is
 * liquidatable now. Null without debt.
 */
export function moveToLiquidation(hf: number, side: 'collateral' | 'debt'): number | null {
  if (!(hf > 0) || !Number.isFinite(hf)) return null;
  return side === 'collateral' ? 1 / hf - 1 : hf - 1;
}

/**
 * The USD price of one of a position's assets at which its health factor reaches 1, everything
 * else (amounts, the other asset's price, lltv) fixed: price x (1 + moveToLiquidation), that is
 * price / hf for its collateral (the health factor is proportional to the collateral price) and
 * price x hf for its debt (inversely proportional to the loan price). Null without debt or for a
 * non-positive price.
 */
export function liquidationPrice(
  price: number,
  hf: number,
  side: 'collateral' | 'debt' = 'collateral',
): number | null {
  if (!(hf > 0) || !Number.isFinite(hf) || !(price > 0)) return null;
  // Not price x (1 + move): for a large hf, 1 + (1 / hf - 1) cancels away the digits.
  return side === 'collateral' ? price / hf : price * hf;
}

/**
 * Debt to repay, in USD, that brings a position with `debtUsd` of debt at health factor `hf` to
 * `target`: the health factor is inversely proportional to the debt, so debt x (1 - hf /
 * target). 0 when it is there already (hf >= target) or has no debt.
 */
export function repayToHealthFactor(debtUsd: number, hf: number, target: number): number {
  if (!(debtUsd > 0) || !(hf < target)) return 0;
  return debtUsd * (1 - Math.max(0, hf) / target);
}

/**
 * Collateral to add, in USD at its price now, that brings a position with `collateralUsd` of
 * collateral at health factor `hf` to `target`: the health factor is proportional to the
 * collateral, so collateral x (target / hf - 1). 0 when it is there already; null when the
 * position holds no collateral (adding some changes the health factor from 0 by an amount its
 * lltv sets: repay instead).
 */
export function collateralToHealthFactor(collateralUsd: number, hf: number, target: number): number | null {
  if (!(hf < target)) return 0;
  if (!(collateralUsd > 0) || !(hf > 0)) return null;
  return collateralUsd * (target / hf - 1);
}
