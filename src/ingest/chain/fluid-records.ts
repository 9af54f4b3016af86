/**
 * A Fluid T1 vault as the service's records: one market, `fluid-<chainId>-<vault>`, whose
 * collateral is the vault's supply token, whose loan is its borrow token, and whose lltv is its
 * liquidation threshold.
 *
 * Health: Fluid liquidates a position when its debt over its collateral (valued at the vault
 * oracle's liquidation price, debt per collateral) passes the liquidation threshold; the health
 * factor is collateral × price × threshold / debt, from the resolver's amounts (the position's
 * debt: Fluid files it at its tick, whose debt is rounded up by at most a tick, ~0.15 %). A
 * position is an ERC-721 token: an owner's positions in one vault are served as one (amounts
 * summed) whose health is the lowest of theirs (each is liquidated on its own).
 *
 * Balances: `borrow` is the vault's debt; `supply` its debt plus what it may still borrow from
 * Fluid's Liquidity layer (its borrow limit and Liquidity's balance: the loan available to this
 * vault). Rates are Fluid's yearly rates compounded continuously: `borrowApy` the vault's borrow
 * rate, `supplyApy` the Liquidity layer's supply rate of the loan token (its lenders' rate).
 */

import type { LiquidationEvent } from '../../domain/records/history.ts';
import {
  loanBalances,
  type MarketRecord,
  type OracleRecord,
  type PositionRecord,
} from '../../domain/types.ts';
import { scaled } from './chainlink.ts';
import type { FluidLiquidationRead, FluidPositionRead, FluidVaultRead } from './fluid.ts';
import { type LiquidationPrices, liquidationRecord } from './liquidation.ts';

/** A Fluid market's uniqueKey (docs/decisions.md "Market identity"). */
export function fluidKey(chainId: number, vault: string): string {
  return `fluid-${chainId}-${vault.toLowerCase()}`;
}

/** Fluid's oracle precision: debt per collateral in smallest units × 1e27. */
const PRICE_SCALE = 10n ** 27n;
const WAD = 10n ** 18n;

/** A yearly rate compounded continuously. */
const apy = (rate: number) => Math.expm1(rate);

/**
 * The vault's USD prices: its borrow token's from `usdOf` (the file's feeds) only; its supply
 * token's from `usdOf`, else from the vault's oracle (its liquidation price × the borrow token's
 * USD price). Null where neither prices.
 */
export function fluidPrices(
  read: FluidVaultRead,
  usdOf: (token: FluidVaultRead['supplyToken']) => number | null,
): { loanUsd: number | null; collateralUsd: number | null } {
  const loanUsd = usdOf(read.borrowToken);
  const own = usdOf(read.supplyToken);
  if (own !== null || loanUsd === null || read.priceLiquidate === 0n) return { loanUsd, collateralUsd: own };
  return { loanUsd, collateralUsd: oracleCollateralUsd(read, loanUsd) };
}

/** The collateral's USD price by the vault's oracle (its liquidation price) and the loan's USD price. */
export function oracleCollateralUsd(
  read: Pick<FluidVaultRead, 'priceLiquidate' | 'supplyToken' | 'borrowToken'>,
  loanUsd: number,
): number {
  // Debt units per whole collateral token, in whole debt tokens.
  const perCollateral =
    (Number(read.priceLiquidate) / 1e27) *
    10 ** ((read.supplyToken.decimals ?? 18) - (read.borrowToken.decimals ?? 18));
  return perCollateral * loanUsd;
}

/** A position's health: collateral × liquidation price × threshold over debt (Infinity without debt). */
export function fluidHealth(
  read: Pick<FluidVaultRead, 'priceLiquidate' | 'thresholdPercent'>,
  position: { supply: bigint; borrow: bigint },
): number {
  if (position.borrow === 0n) return Number.POSITIVE_INFINITY;
  const weighted =
    (position.supply * read.priceLiquidate * read.thresholdPercent * WAD) / (PRICE_SCALE * 10_000n);
  return Number(weighted / position.borrow) / 1e18;
}

/**
 * The vault's market and the positions `read` (each owner's summed: pass all of an owner's) at
 * its tokens' USD prices; a price null (none known) leaves the market's USD figures of that token
 * null and serves no position (docs/decisions.md "Real sources").
 */
export function fluidRecords(
  chainId: number,
  read: FluidVaultRead,
  prices: { loanUsd: number | null; collateralUsd: number | null },
  oracle: OracleRecord,
  positionsRead: readonly FluidPositionRead[],
): { markets: MarketRecord[]; positions: PositionRecord[] } {
  const key = fluidKey(chainId, read.vault);
  const collateralDecimals = read.supplyToken.decimals ?? 18;
  const loanDecimals = read.borrowToken.decimals ?? 18;
  const byOwner = new Map<string, { supply: bigint; borrow: bigint; health: number }>();
  for (const p of positionsRead) {
    const health = fluidHealth(read, p);
    const sum = byOwner.get(p.owner);
    if (sum) {
      sum.supply += p.supply;
      sum.borrow += p.borrow;
      sum.health = Math.min(sum.health, health);
    } else byOwner.set(p.owner, { supply: p.supply, borrow: p.borrow, health });
  }
  const { loanUsd, collateralUsd } = prices;
  const positions =
    loanUsd === null || collateralUsd === null
      ? []
      : [...byOwner].map(
          ([user, p]): PositionRecord => ({
            marketKey: key,
            user,
            collateralUsd: scaled(p.supply, collateralDecimals) * collateralUsd,
            borrowUsd: scaled(p.borrow, loanDecimals) * loanUsd,
            supplyUsd: 0,
            healthFactor: p.health,
          }),
        );
  const market: MarketRecord = {
    uniqueKey: key,
    protocol: 'fluid',
    chainId,
    label: null,
    collateral: read.supplyToken.symbol,
    collateralName: read.supplyToken.name,
    collateralAddress: read.supplyToken.address,
    loan: read.borrowToken.symbol,
    loanName: read.borrowToken.name,
    loanAddress: read.borrowToken.address,
    collateralDecimals,
    loanDecimals,
    collateralPrice: collateralUsd,
    loanPrice: loanUsd,
    ...loanBalances(
      scaled(read.totalBorrow + read.borrowable, loanDecimals),
      scaled(read.totalBorrow, loanDecimals),
      loanUsd,
    ),
    // The vault's borrow exchange price (1e12): what a unit of its debt owes now; its supply
    // exchange price, what a unit of its collateral is worth (collateral earns interest).
    borrowIndex: Number(read.borrowExchangePrice) / 1e12,
    collateralIndex: Number(read.supplyExchangePrice) / 1e12,
    supplyApy: apy(read.lenderRate ?? 0),
    borrowApy: apy(read.borrowRate),
    supplyRewardsApy: 0,
    borrowRewardsApy: 0,
    rewardTokens: [],
    lltv: read.liquidationThreshold,
    vaultSymbol: null,
    vaultAddress: read.vault,
    governor: null,
    oracle,
  };
  return { markets: [market], positions };
}

/** Fluid liquidates ticks, not accounts: its event names no borrower (the zero address stands for none). */
const NO_BORROWER = '0x0000000000000000000000000000000000000000';

/** A `LogLiquidate` as the service's record: the collateral taken and the debt repaid, at `usd`. */
export function fluidLiquidation(
  chainId: number,
  l: FluidLiquidationRead,
  record: MarketRecord,
  usd: LiquidationPrices,
): LiquidationEvent {
  return liquidationRecord(
    { ...l, protocol: 'fluid', chainId, borrower: NO_BORROWER },
    record,
    { seized: l.collateral, repaid: l.debt, badDebt: 0n },
    usd,
  );
}
