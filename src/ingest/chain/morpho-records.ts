/**
 * Morpho Blue's records on a chain: a market at the USD prices of its tokens (its collateral's by
 * the market's oracle when no feed prices it) and a borrower's position with Morpho's own health
 * factor.
 */
import { type Market, MarketUtils, MathLib } from '@morpho-org/blue-sdk';
import {
  loanBalances,
  type MarketRecord,
  type OracleRecord,
  type PositionRecord,
  type PricedMarketRecord,
} from '../../domain/types.ts';
import { morphoKey } from '../records.ts';
import { scaled } from './chainlink.ts';
import { healthFactor, type MorphoMarketRead } from './morpho-blue.ts';

/** A market's collateral in USD by its oracle's price, at the loan token's USD price (null: none). */
export function oracleUsd(m: MorphoMarketRead, loanUsd: number): number | null {
  return collateralUsdFromOracle(m.market.price, m.loan.decimals ?? 18, m.collateral.decimals ?? 18, loanUsd);
}

/**
 * The collateral's USD price from a Morpho oracle's `price()` (1 collateral wei in loan wei,
 * scaled by 1e36: per whole token, × 10^(collateral decimals − loan decimals)) and the loan's.
 */
export function collateralUsdFromOracle(
  price: bigint | undefined,
  loanDecimals: number,
  collateralDecimals: number,
  loanUsd: number,
): number | null {
  if (price === undefined || price <= 0n) return null;
  return scaled(price, 36 + loanDecimals - collateralDecimals) * loanUsd;
}

/** A Morpho market's record; a price that is null (none known) leaves its USD amounts null (docs/decisions.md "Real sources"). */
export function marketRecord(
  chainId: number,
  m: MorphoMarketRead,
  loanUsd: number | null,
  collateralUsd: number | null,
  oracle: OracleRecord,
): MarketRecord {
  const market = m.market;
  const loanDecimals = m.loan.decimals ?? 18;
  const supplyRate = MathLib.wMulUp(
    MathLib.wMulDown(m.borrowRate, market.utilization),
    MathLib.WAD - market.fee,
  );
  return {
    uniqueKey: morphoKey(chainId, m.id),
    protocol: 'morpho',
    chainId,
    label: null,
    collateral: m.collateral.symbol,
    collateralName: m.collateral.name,
    collateralAddress: m.collateral.address,
    loan: m.loan.symbol,
    loanName: m.loan.name,
    loanAddress: m.loan.address,
    collateralDecimals: m.collateral.decimals,
    loanDecimals,
    collateralPrice: collateralUsd,
    loanPrice: loanUsd,
    ...loanBalances(
      scaled(market.totalSupplyAssets, loanDecimals),
      scaled(market.totalBorrowAssets, loanDecimals),
      loanUsd,
    ),
    // Assets per borrow share, with Morpho Blue's virtual shares and assets (1e6 and 1).
    borrowIndex: Number(market.totalBorrowAssets + 1n) / Number(market.totalBorrowShares + 1_000_000n),
    supplyApy: MarketUtils.rateToApy(supplyRate),
    borrowApy: MarketUtils.rateToApy(m.borrowRate),
    supplyRewardsApy: 0,
    borrowRewardsApy: 0,
    rewardTokens: [],
    lltv: scaled(m.params.lltv, 18),
    vaultSymbol: null,
    vaultAddress: null,
    governor: null,
    oracle,
  };
}

/** A borrower's position in a priced market. */
export function positionRecord(
  record: PricedMarketRecord,
  market: Market,
  p: { user: string; supplyShares: bigint; borrowShares: bigint; collateral: bigint },
): PositionRecord {
  const collateralUsd = scaled(p.collateral, record.collateralDecimals ?? 18) * record.collateralPrice;
  const borrowUsd =
    scaled(market.toBorrowAssets(p.borrowShares), record.loanDecimals ?? 18) * record.loanPrice;
  const supplyUsd =
    scaled(market.toSupplyAssets(p.supplyShares), record.loanDecimals ?? 18) * record.loanPrice;
  // Morpho's own health factor where the oracle answers; else from the USD amounts.
  const hf =
    healthFactor(market, p) ??
    (borrowUsd > 0 ? (collateralUsd * record.lltv) / borrowUsd : Number.POSITIVE_INFINITY);
  return { marketKey: record.uniqueKey, user: p.user, collateralUsd, borrowUsd, supplyUsd, healthFactor: hf };
}
