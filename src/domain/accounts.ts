/**
 * Accounts of the pooled protocols. Aave and Spark (per pool), Compound v3 (per comet) and
 * Euler v2 (per controller vault) lend against an account, not a pair: the account's collateral,
 * each leg counted at its own liquidation threshold, backs the account's whole debt. The service
 * shows such an account as one position per collateral and loan pair; every position of one
 * account carries the account's health factor, and its leverage, distance to liquidation and
 * liquidation price follow from the account's totals.
 *
 * Morpho Blue and Fluid positions are isolated (one collateral, one debt): each is its own
 * account. Pure functions: USD amounts in, numbers out.
 */
import type { Protocol } from './enums.ts';
import { distanceToLiq, leverage } from './metrics.ts';

/** Protocols whose positions are grouped into accounts. */
export const ACCOUNT_PROTOCOLS: ReadonlySet<Protocol> = new Set<Protocol>([
  'aave',
  'spark',
  'compound',
  'euler',
]);

/**
 * The pool an account of a market lives in, lower-case: the Aave or Spark pool, the Compound
 * comet, the Euler controller vault (the vault lent from), from the market's uniqueKey
 * (`<protocol>-<chainId>-<identifier>`, whose identifier starts with that address before its
 * first `_`); null for isolated markets (Morpho, Fluid) and keys of another shape.
 */
export function accountPoolOf(protocol: Protocol, uniqueKey: string): string | null {
  if (!ACCOUNT_PROTOCOLS.has(protocol)) return null;
  const id = uniqueKey.slice(uniqueKey.indexOf('-', uniqueKey.indexOf('-') + 1) + 1);
  const cut = id.indexOf('_');
  return cut > 0 ? id.slice(0, cut).toLowerCase() : null;
}

/**
 * The owner group of an address under Euler's EVC: its first 19 bytes (`0x` and 38 lower-case
 * hex digits). The EVC gives every owner 256 sub-accounts, the owner's address with its last byte
 * XOR 0 to 255, so the sub-accounts of an owner are exactly the addresses sharing this prefix.
 */
export function evcOwnerPrefix(address: string): string {
  return address.slice(0, 40).toLowerCase();
}

/** The EVC sub-account `id` (0 to 255) of an owner: its address with the last byte XOR id. */
export function evcSubAccount(owner: string, id: number): string {
  if (!(Number.isInteger(id) && id >= 0 && id <= 255))
    throw new RangeError(`sub-account id must be 0 to 255, got ${id}`);
  const last = (Number.parseInt(owner.slice(40, 42), 16) ^ id).toString(16).padStart(2, '0');
  return `${owner.slice(0, 40)}${last}`.toLowerCase();
}

/**
 * One position of an account as the account sees it: its collateral in USD, that collateral at
 * its liquidation threshold (collateral x threshold; Aave's liquidationThreshold, Compound's
 * liquidateCollateralFactor, Euler's liquidation LTV), and its debt in USD.
 */
export interface AccountLeg {
  collateralUsd: number;
  weightedCollateralUsd: number;
  debtUsd: number;
}

export interface AccountTotals {
  collateralUsd: number;
  weightedCollateralUsd: number;
  debtUsd: number;
}

export function accountTotals(legs: Iterable<AccountLeg>): AccountTotals {
  let collateralUsd = 0;
  let weightedCollateralUsd = 0;
  let debtUsd = 0;
  for (const l of legs) {
    collateralUsd += l.collateralUsd;
    weightedCollateralUsd += l.weightedCollateralUsd;
    debtUsd += l.debtUsd;
  }
  return { collateralUsd, weightedCollateralUsd, debtUsd };
}

/** What every position of an account shows. */
export interface AccountHealth {
  /** sum(collateral x threshold) / debt; Infinity without debt. */
  healthFactor: number;
  /** Account collateral / (account collateral - account debt); null without positive equity. */
  leverage: number | null;
  /** 1 - 1 / healthFactor; 1 without debt. */
  distanceToLiq: number;
}

/**
 * The account's health factor, leverage and distance to liquidation from its totals (the
 * isolated-position formulas applied to the account's sums).
 */
export function accountHealth(t: AccountTotals): AccountHealth {
  const healthFactor = t.debtUsd > 0 ? t.weightedCollateralUsd / t.debtUsd : Number.POSITIVE_INFINITY;
  return {
    healthFactor,
    leverage: leverage(t.collateralUsd, t.debtUsd),
    distanceToLiq: distanceToLiq(healthFactor),
  };
}

/**
 * What an account holds of one token: its collateral in that token at its liquidation
 * threshold, and its debt in that token, both in USD at the token's price now.
 */
export interface TokenExposure {
  weightedCollateralUsd: number;
  debtUsd: number;
}

/**
 * The price ratio r (new price / price now) of one token at which the account's health factor
 * reaches 1, every other price fixed: the account's weighted collateral and debt outside the
 * token stay, those in it scale by r, so (W_o + W_x r) / (D_o + D_x r) = 1 gives
 * r = (D_o - W_o) / (W_x - D_x). With a net collateral exposure the account is liquidatable at or
 * below that price, with a net debt exposure at or above it (so r above 1, resp. below 1, means
 * liquidatable now). Null when no positive price of the token brings the account to 1: no debt,
 * no net exposure to the token, or the rest of the account alone on the other side of 1. For an
 * isolated position (everything in the token) this is 1 / hf, as liquidationPrice.
 */
export function liquidationRatio(t: AccountTotals, x: TokenExposure): number | null {
  if (!(t.debtUsd > 0)) return null;
  const net = x.weightedCollateralUsd - x.debtUsd;
  if (net === 0 || !Number.isFinite(net)) return null;
  const otherWeighted = t.weightedCollateralUsd - x.weightedCollateralUsd;
  const otherDebt = t.debtUsd - x.debtUsd;
  const r = (otherDebt - otherWeighted) / net;
  return r > 0 && Number.isFinite(r) ? r : null;
}

/**
 * The USD price of a token at which the account's health factor reaches 1, every other price
 * fixed: liquidationRatio x the price now; null when no price of it does (see liquidationRatio) or
 * the price is not positive.
 */
export function accountLiquidationPrice(price: number, t: AccountTotals, x: TokenExposure): number | null {
  if (!(price > 0)) return null;
  const r = liquidationRatio(t, x);
  return r === null ? null : price * r;
}

/** Aave v3.3's threshold below which a reserve's debt or collateral is liquidated whole: $2,000. */
export const AAVE_FULL_LIQUIDATION_BELOW_USD = 2_000;

/** Below this health factor Aave and Spark let one liquidation repay the whole debt. */
export const AAVE_FULL_CLOSE_HF = 0.95;

/**
 * The share of a debt one liquidation may repay, by the protocol's rules, for an account at
 * health factor `hf` (below 1) whose leg being liquidated has `debtUsd` of debt against
 * `collateralUsd` of collateral:
 * - Aave v3 and Spark: half (the close factor), all of it below health factor 0.95; Aave (v3.3)
 *   also all of it when the leg's debt or collateral is below $2,000, so no dust is left behind.
 * - Compound v3: all of it (absorb takes the whole account).
 * - Euler v2, Morpho, Fluid: all of it (a liquidator may take the whole debt of the controller).
 */
export function closeFactorOf(
  protocol: Protocol,
  hf: number,
  debtUsd: number,
  collateralUsd: number,
): number {
  if (protocol !== 'aave' && protocol !== 'spark') return 1;
  if (hf < AAVE_FULL_CLOSE_HF) return 1;
  if (
    protocol === 'aave' &&
    (debtUsd < AAVE_FULL_LIQUIDATION_BELOW_USD || collateralUsd < AAVE_FULL_LIQUIDATION_BELOW_USD)
  )
    return 1;
  return 0.5;
}

/**
 * Euler v2's liquidation discount for an account at health factor `hf` (below 1): 1 - hf, at
 * most `maxDiscount` (the vault's maxLiquidationDiscount); the liquidator receives collateral
 * worth repaid / (1 - discount), so the bonus over the debt repaid is 1 / (1 - discount) - 1.
 */
export function eulerLiquidationBonus(hf: number, maxDiscount: number): number {
  const discount = Math.min(Math.max(0, 1 - hf), maxDiscount);
  return 1 / (1 - discount) - 1;
}
