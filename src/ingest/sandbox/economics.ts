/**
 * The synthetic numbers of a market: prices (one per symbol), supply and borrow in USD,
 * APYs from the rate curve (src/domain/rates.ts) at the market's utilization, and rewards.
 * All drawn from a stream keyed by the market's uniqueKey.
 */

import { assetFamily } from '../../domain/asset-family.ts';
import type { Protocol } from '../../domain/enums.ts';
import { borrowRate, type RateCurve, rateToApy, supplyRate } from '../../domain/rates.ts';
import { liquidationBonus } from '../../domain/stress.ts';
import type { PricedMarketRecord } from '../../domain/types.ts';
import { type MarketDraft, uniqueKeyOf } from './markets/draft.ts';
import { familyCurve, familyReserveFactor, maturityFromSymbol, type PriceBook } from './prices.ts';
import { floorTo, rngFor, roundTo, unitHash } from './rng.ts';
import { ABOVE_KINK, aboveKink } from './simulation/market-history.ts';
import { PT_WIND_DOWN_DAYS } from './wind-down.ts';

/** Median supply (USD) of a protocol's market and the log-normal sigma around it. */
const SIZE: Readonly<Record<Protocol, { median: number; sigma: number }>> = {
  morpho: { median: 1_500_000, sigma: 2 },
  aave: { median: 6_000_000, sigma: 2 },
  spark: { median: 15_000_000, sigma: 1.5 },
  compound: { median: 8_000_000, sigma: 1.5 },
  euler: { median: 800_000, sigma: 1.8 },
  fluid: { median: 4_000_000, sigma: 1.6 },
};

const MIN_SUPPLY = 5_000;
const MAX_SUPPLY = 5_000_000_000;

/** Share of markets paying supply rewards; a share of those also pay borrow rewards. */
const SUPPLY_REWARDS_SHARE = 0.18;
const BORROW_REWARDS_SHARE = 0.45;

/** Share of markets whose label is null (the source gives none). */
const NULL_LABEL_SHARE = 0.01;

const PROTOCOL_REWARD: Readonly<Record<Protocol, string>> = {
  morpho: 'MORPHO',
  aave: 'wstETH',
  spark: 'wstETH',
  compound: 'COMP',
  euler: 'EUL',
  fluid: 'FLUID',
};

const CHAIN_REWARD: Readonly<Record<number, string>> = { 10: 'OP', 42161: 'ARB' };

/**
 * Utilization, relative to the curve's kink k (its optimal utilization; Morpho's target 0.9):
 * Morpho markets, whose adaptive curve moves its rate until utilization sits at the target,
 * 85 % in [0.8k, k], 10 % below; the others 85 % in [0.5k, k], 10 % below 0.5k; 5 % of each
 * above the kink, by at most a third of the way aboveKink allows (on chain, the steep slope
 * above the kink brings suppliers and repayments within days).
 */
function drawUtilization(protocol: Protocol, kink: number, r: number, u: number): number {
  const low = protocol === 'morpho' ? 0.8 : 0.5;
  if (r < 0.85) return kink * (low + (1 - low) * u);
  if (r < 0.95) return kink * low * u;
  return aboveKink(kink + (ABOVE_KINK * (1 - kink) * u) / 3, kink);
}

function rewardTokens(protocol: Protocol, chainId: number, loan: string, u: number): string[] {
  const tokens = [PROTOCOL_REWARD[protocol]];
  const chainToken = CHAIN_REWARD[chainId];
  if (chainToken && u < 0.5) tokens.push(chainToken);
  const f = assetFamily(loan);
  if (protocol !== 'aave' && protocol !== 'spark' && (f === 'eth' || f === 'eth-lst') && u > 0.8) {
    tokens.push('wstETH');
  }
  return tokens;
}

/**
 * The terms of a market that its record does not carry and the simulation needs: the borrow
 * curve and reserve factor its APYs come from, and what a liquidation does.
 */
export interface MarketTerms {
  curve: RateCurve;
  /**
   * Morpho's adaptive curve: its rate at target at the snapshot (the simulation adapts it from
   * then on; `curve` is the curve at it). Null for a fixed curve.
   */
  rateAtTarget: number | null;
  reserveFactor: number;
  /** Paid to the liquidator over the debt repaid, as a fraction of it (0.05 = 5 %). */
  liquidationBonus: number;
  /** Share of the debt one liquidation may repay while the health factor is at least 0.95. */
  closeFactor: number;
}

/**
 * Liquidation terms by protocol where the reference data gives none: Morpho's liquidation
 * incentive factor min(1.15, 1 / (0.3 x lltv + 0.7)) (its formula); 5 % on Aave and Spark
 * (their most common collateral bonus); 5 % for Compound's absorb penalty, Euler and Fluid.
 * Close factors: Aave and Spark repay half the debt at a time (all of it below health factor
 * 0.95); Morpho, Euler and Fluid liquidations are taken as whole, Compound absorbs the account.
 */
const CLOSE_FACTOR: Readonly<Record<Protocol, number>> = {
  morpho: 1,
  aave: 0.5,
  spark: 0.5,
  compound: 1,
  euler: 1,
  fluid: 1,
};

export function marketTerms(draft: MarketDraft): MarketTerms {
  const bonus = draft.liquidationBonus ?? liquidationBonus(draft.protocol, draft.lltv);
  return {
    curve: draft.curve ?? familyCurve(draft.loan.symbol, 1),
    rateAtTarget: draft.rateAtTarget ?? null,
    reserveFactor: draft.reserveFactor ?? familyReserveFactor(draft.loan.symbol),
    liquidationBonus: bonus,
    closeFactor: CLOSE_FACTOR[draft.protocol],
  };
}

export { PT_WIND_DOWN_DAYS };

/**
 * The share of its size a market keeps at `asOfMs`: 0 for a market lending a token against
 * itself, or against a token of the same symbol (listed as it exists on chain, with no money
 * in it: nobody borrows a token against itself), 0 for a PT market more than PT_WIND_DOWN_DAYS past its maturity (lenders and
 * borrowers leave a matured PT: it is redeemed at par), a linear share in between, else 1.
 */
export function listingShare(draft: MarketDraft, asOfMs: number): number {
  const { collateral, loan } = draft;
  if (
    collateral.address.toLowerCase() === loan.address.toLowerCase() ||
    collateral.symbol.toLowerCase() === loan.symbol.toLowerCase()
  )
    return 0;
  let share = 1;
  for (const symbol of [draft.collateral.symbol, draft.loan.symbol]) {
    if (assetFamily(symbol) !== 'pt') continue;
    const maturity = maturityFromSymbol(symbol);
    if (maturity === null || maturity > asOfMs) continue;
    share = Math.min(share, Math.max(0, 1 - (asOfMs - maturity) / (PT_WIND_DOWN_DAYS * 86_400_000)));
  }
  return share;
}

export function finalizeMarket(
  draft: MarketDraft,
  seed: number,
  prices: PriceBook,
  asOfMs: number,
): PricedMarketRecord {
  const key = uniqueKeyOf(draft);
  const rng = rngFor(seed, `market|${key}`);
  const size = SIZE[draft.protocol];

  let supply = 0;
  let borrow = 0;
  let utilization = 0;
  const share = listingShare(draft, asOfMs);
  const empty = rng.chance(draft.emptyChance) || share === 0;
  const rawSupply = size.median * draft.sizeScale * share * Math.exp(size.sigma * rng.normal());
  const r = rng.next();
  const ru = rng.next();
  const { curve, reserveFactor } = marketTerms(draft);
  if (!empty) {
    supply = roundTo(Math.min(MAX_SUPPLY, Math.max(MIN_SUPPLY, rawSupply)), 2);
    borrow = floorTo(supply * drawUtilization(draft.protocol, curve.kink, r, ru), 2);
    utilization = supply > 0 ? Math.min(1, borrow / supply) : 0;
  }

  const borrowRateValue = borrowRate(utilization, curve);
  const borrowApy = roundTo(rateToApy(borrowRateValue), 6);
  const supplyApy = roundTo(rateToApy(supplyRate(borrowRateValue, utilization, reserveFactor)), 6);

  let supplyRewardsApy = 0;
  let borrowRewardsApy = 0;
  let tokens: string[] = [];
  if (!empty && rng.chance(SUPPLY_REWARDS_SHARE)) {
    supplyRewardsApy = roundTo(rng.float(0.002, 0.05), 6);
    if (rng.chance(BORROW_REWARDS_SHARE)) borrowRewardsApy = roundTo(rng.float(0.001, 0.03), 6);
    tokens = rewardTokens(draft.protocol, draft.chainId, draft.loan.symbol, rng.next());
  }

  const label = unitHash(seed, `label|${key}`) < NULL_LABEL_SHARE ? null : draft.label;

  return {
    uniqueKey: key,
    protocol: draft.protocol,
    chainId: draft.chainId,
    label,
    collateral: draft.collateral.symbol,
    collateralName: draft.collateral.name,
    collateralAddress: draft.collateral.address,
    loan: draft.loan.symbol,
    loanName: draft.loan.name,
    loanAddress: draft.loan.address,
    collateralDecimals: draft.collateral.decimals,
    loanDecimals: draft.loan.decimals,
    collateralPrice: prices.price(draft.collateral.symbol),
    loanPrice: prices.price(draft.loan.symbol),
    supply,
    borrow,
    supplyApy,
    borrowApy,
    supplyRewardsApy,
    borrowRewardsApy,
    rewardTokens: tokens,
    lltv: draft.lltv,
    vaultSymbol: draft.vault?.symbol ?? null,
    vaultAddress: draft.vault?.address ?? null,
    governor: draft.vault?.governor ?? null,
    oracle: draft.oracle(),
  };
}
