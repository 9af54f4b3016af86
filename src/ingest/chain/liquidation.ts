/** A liquidation read from a chain as the store keeps it (Morpho's, Euler's, Aave's and Spark's). */

import type { LiquidationEvent } from '../../domain/records/history.ts';
import type { MarketRecord } from '../../domain/types.ts';
import { scaled } from './chainlink.ts';

/** A market's tokens' USD prices a liquidation is valued at; null where unknown (docs/decisions.md "Real sources"). */
export type LiquidationPrices = { loanUsd: number | null; collateralUsd: number | null };

/**
 * The liquidation `l` in `market`: the collateral seized, the debt repaid and the bad debt it
 * left (`units`, in the smallest units of the market's tokens) as token amounts, and in USD at
 * `usd` (the liquidation block's prices, or the market's): null where its token has no USD price
 * (a market served without one, "Real sources" (docs/decisions.md)), 0 where the amount is 0.
 */
export function liquidationRecord(
  l: Pick<
    LiquidationEvent,
    'protocol' | 'chainId' | 'txHash' | 'logIndex' | 'block' | 'borrower' | 'liquidator'
  > & {
    /** Unix seconds of the block. */
    timestamp: number;
  },
  market: Pick<MarketRecord, 'uniqueKey' | 'collateralDecimals' | 'loanDecimals'>,
  units: { seized: bigint; repaid: bigint; badDebt: bigint },
  usd: LiquidationPrices,
): LiquidationEvent {
  const seized = scaled(units.seized, market.collateralDecimals ?? 18);
  const repaid = scaled(units.repaid, market.loanDecimals ?? 18);
  const badDebt = scaled(units.badDebt, market.loanDecimals ?? 18);
  return {
    protocol: l.protocol,
    chainId: l.chainId,
    txHash: l.txHash,
    logIndex: l.logIndex,
    block: l.block,
    at: l.timestamp * 1000,
    marketKey: market.uniqueKey,
    borrower: l.borrower,
    liquidator: l.liquidator,
    collateralSeized: seized,
    collateralSeizedUsd: usdValue(seized, usd.collateralUsd),
    debtRepaid: repaid,
    debtRepaidUsd: usdValue(repaid, usd.loanUsd),
    badDebt,
    badDebtUsd: usdValue(badDebt, usd.loanUsd),
  };
}

/** `tokens` at `price` USD: 0 for none, priced or not; null for some without a price. */
export function usdValue(tokens: number, price: number | null): number | null {
  if (tokens === 0) return 0;
  return price === null ? null : tokens * price;
}
