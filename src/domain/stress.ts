/**
 * Stress and concentration math. Pure functions: USD amounts and fractions in, numbers out.
 *
 * An isolated position (one collateral token, one loan token) has health factor collateral x
 * lltv / debt, so a price move scales it by one number per market, k = (1 + collateral move) /
 * (1 + loan move), and the positions a move makes liquidatable are the ones whose health factor
 * is below 1 / k. A position of an account (src/domain/accounts.ts) is liquidatable when its
 * account is, every token of the account moved (the risk index's belowMoved); the totals below
 * then apply to those positions alike. Liquidation is full (the liquidator repays the
 * whole debt and seizes that value times 1 + the bonus in collateral, as src/domain/liquidation.ts
 * does below FULL_CLOSE_HF); where the collateral does not cover that, it is all seized and the
 * debt it does not cover is bad debt.
 */
import { type AssetFamily, assetFamily } from './asset-family.ts';
import type { Protocol } from './enums.ts';

/**
 * The liquidation bonus of a market (0.05 = the liquidator gets 5 % over the debt it repays):
 * Morpho Blue's liquidation incentive factor, min(1.15, 1 / (0.3 x lltv + 0.7)) - 1, from its
 * lltv; 5 % for the pooled protocols (Aave and Spark's common setting, Compound's
 * liquidationFactor and Euler's and Fluid's usual penalty, taken as one default).
 */
export function liquidationBonus(protocol: Protocol, lltv: number): number {
  if (protocol === 'morpho') return Math.min(1.15, 1 / (0.3 * lltv + 0.7)) - 1;
  return 0.05;
}

/** Positions, and their collateral and debt in USD, as sums. */
export interface PositionSums {
  positions: number;
  collateralUsd: number;
  debtUsd: number;
}

export const NO_POSITIONS: PositionSums = Object.freeze({ positions: 0, collateralUsd: 0, debtUsd: 0 });

export interface LiquidationTotals {
  /** Collateral taken by liquidators, USD. */
  collateralSeizedUsd: number;
  /** Debt repaid by liquidators, USD. */
  debtRepaidUsd: number;
  /** Debt no collateral is left to cover, USD. */
  badDebtUsd: number;
}

/**
 * Full liquidation of `liquidatable` positions (health factor below 1), of which `underwater`
 * (health factor below lltv x (1 + bonus): collateral worth less than debt x (1 + bonus)) are
 * a subset. Covered positions: debt repaid, debt x (1 + bonus) seized. Underwater ones: all the
 * collateral seized, collateral / (1 + bonus) repaid, the rest of their debt is bad debt.
 */
export function liquidationTotals(
  liquidatable: PositionSums,
  underwater: PositionSums,
  bonus: number,
): LiquidationTotals {
  const b = 1 + bonus;
  const coveredDebt = Math.max(0, liquidatable.debtUsd - underwater.debtUsd);
  return {
    collateralSeizedUsd: coveredDebt * b + underwater.collateralUsd,
    debtRepaidUsd: coveredDebt + underwater.collateralUsd / b,
    badDebtUsd: Math.max(0, underwater.debtUsd - underwater.collateralUsd / b),
  };
}

/**
 * The health factor below which a position's collateral no longer covers its debt plus the
 * liquidation bonus: lltv x (1 + bonus) (collateral / debt = hf / lltv).
 */
export function underwaterHealthFactor(lltv: number, bonus: number): number {
  return lltv * (1 + bonus);
}

export interface Concentration {
  /** Borrowers with debt. */
  borrowers: number;
  /** Share of the debt owed by the 10 largest borrowers, 0 to 1 (0 without debt). */
  top10Share: number;
  /**
   * Herfindahl-Hirschman index of the debt: the sum of each borrower's squared share, 1 / n for
   * n equal borrowers up to 1 for a single one (0 without debt).
   */
  herfindahl: number;
}

/** Concentration of a market's debt over its borrowers (one debt per borrower, USD; non-positive ones ignored). */
export function concentration(debts: Iterable<number>): Concentration {
  const positive: number[] = [];
  let total = 0;
  for (const d of debts) {
    if (d > 0 && Number.isFinite(d)) {
      positive.push(d);
      total += d;
    }
  }
  if (!(total > 0)) return { borrowers: 0, top10Share: 0, herfindahl: 0 };
  positive.sort((a, b) => b - a);
  let top = 0;
  let hhi = 0;
  let i = 0;
  for (const d of positive) {
    const s = d / total;
    if (i++ < 10) top += s;
    hhi += s * s;
  }
  return { borrowers: positive.length, top10Share: Math.min(1, top), herfindahl: Math.min(1, hhi) };
}

// ---- shocks ---------------------------------------------------------------------------------

/** A price move of one asset: `change` is relative (-0.2 = a 20 % fall), above -1. */
export interface Shock {
  asset: string;
  change: number;
}

/**
 * Correlated assets: a family follows its base. ETH staking and restaking tokens (the eth-lst
 * family: wstETH, weETH, rETH, cbETH, rsETH, ezETH...) move with ETH, BTC wrappers (WBTC, cbBTC,
 * tBTC, LBTC...) with BTC. A shock named on a base symbol (or on the family's name) moves the
 * family; a token shocked by its own symbol takes its own move.
 */
export const CORRELATED: Readonly<
  Record<string, { bases: readonly string[]; families: readonly AssetFamily[] }>
> = Object.freeze({
  ETH: { bases: ['ETH', 'WETH'], families: ['eth', 'eth-lst'] },
  BTC: { bases: ['BTC', 'WBTC'], families: ['btc'] },
});

/** The correlation group of a symbol: ETH, BTC, or null when it moves alone. */
export function correlationGroup(symbol: string): string | null {
  const family = assetFamily(symbol);
  for (const [group, g] of Object.entries(CORRELATED)) if (g.families.includes(family)) return group;
  return null;
}

export interface AssetMove {
  /** Relative price change (0 when unmoved). */
  change: number;
  /** The shock it comes from: the symbol itself, or its group's base; null when unmoved. */
  via: string | null;
}

/**
 * Resolves shocks (symbols matched case-insensitively) into each asset's move: its own shock,
 * else its correlation group's (the shock on the group's name or one of its base symbols, the
 * first given), else none.
 */
export function shockResolver(shocks: readonly Shock[]): (symbol: string) => AssetMove {
  const own = new Map<string, Shock>();
  for (const s of shocks) if (!own.has(s.asset.toUpperCase())) own.set(s.asset.toUpperCase(), s);
  const byGroup = new Map<string, Shock>();
  for (const [group, g] of Object.entries(CORRELATED)) {
    const s = shocks.find((x) => g.bases.includes(x.asset.toUpperCase()) || x.asset.toUpperCase() === group);
    if (s) byGroup.set(group, s);
  }
  const memo = new Map<string, AssetMove>();
  return (symbol) => {
    const upper = symbol.toUpperCase();
    let move = memo.get(upper);
    if (move) return move;
    const s = own.get(upper);
    if (s) move = { change: s.change, via: s.asset };
    else {
      const group = correlationGroup(symbol);
      const g = group === null ? undefined : byGroup.get(group);
      move = g ? { change: g.change, via: g.asset } : { change: 0, via: null };
    }
    memo.set(upper, move);
    return move;
  };
}

/**
 * The factor a market's health factors are multiplied by when its collateral moves by `c` and
 * its loan asset by `l` (relative changes above -1): (1 + c) / (1 + l).
 */
export function healthFactorScale(c: number, l: number): number {
  return (1 + c) / (1 + l);
}
