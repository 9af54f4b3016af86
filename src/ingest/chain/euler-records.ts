/**
 * An Euler v2 controller vault as the service's records (the sandbox's model, "Market identity" (docs/decisions.md)): one market per
 * collateral vault it accepts, `euler-<chainId>-<vault>_<collateral vault>`, whose loan is the
 * vault's asset, whose collateral is the collateral vault's asset, and whose lltv is the
 * collateral's liquidation LTV. Markets carry the vault's symbol, address and governor (docs/decisions.md "Enumerations").
 *
 * An account holding several collaterals has one position per collateral: its debt is shared
 * among them by each collateral's value at its liquidation LTV, and every position carries the
 * account's health as EVault judges it in liquidation mode (`accountLiquidity(account, true)`):
 * the collaterals' values at their LTVs over the debt's value, all at the vault's oracle's
 * mid-point quotes in its unit of account. A vault lends one pool to all its collaterals'
 * borrowers: a market's borrow is the sum of its positions' shares of debt, its supply the
 * vault's total assets in the same proportion (the markets of a vault sum to the vault).
 */

import { must } from '../../domain/must.ts';
import type { LiquidationEvent } from '../../domain/records/history.ts';
import {
  loanBalances,
  type MarketRecord,
  type OracleRecord,
  type PositionRecord,
  type VaultRecord,
} from '../../domain/types.ts';
import { scaled } from './chainlink.ts';
import {
  CONFIG_SCALE,
  type EulerAccount,
  type EulerLiquidationRead,
  type EulerVaultRead,
  eulerDebt,
} from './euler.ts';
import { type LiquidationPrices, liquidationRecord } from './liquidation.ts';
import { accountPairs, type PairDebts, type PairTotals, type PoolPart } from './pooled-pairs.ts';

/** An Euler market's uniqueKey (docs/decisions.md "Market identity"). */
export function eulerKey(chainId: number, vault: string, collateral: string): string {
  return `euler-${chainId}-${vault.toLowerCase()}_${collateral.toLowerCase()}`;
}

/** EVault's year (365.2425 days) for its per-second rates. */
const SECONDS_PER_YEAR = 31_556_952;
const RAY = 1e27;

/** A per-second rate (1e27) compounded over a year. */
const apy = (perSecond: number) => Math.expm1((perSecond * SECONDS_PER_YEAR) / RAY);

/**
 * The vault's USD prices: its asset's from `usdOf` (the file's feeds) only, as a Morpho market's
 * loan token (a vault's oracle is its creator's choice); each collateral's asset from `usdOf`, else
 * from the vault's oracle: its quote of the collateral over its quote of the asset (both in the
 * unit of account) × the asset's USD price. Null for a token neither prices.
 */
export function eulerPrices(
  read: EulerVaultRead,
  usdOf: (token: EulerVaultRead['asset']) => number | null,
): { loanUsd: number | null; collateralUsd: (number | null)[] } {
  const loanUsd = usdOf(read.asset);
  // The unit of account's value of one whole asset, and of one whole collateral asset.
  const perAsset = Number(read.assetQuote);
  return {
    loanUsd,
    collateralUsd: read.collaterals.map((c) => {
      const own = usdOf(c.asset);
      if (own !== null || loanUsd === null || perAsset <= 0) return own;
      const assets = scaled(c.assetsPerShare, c.asset.decimals ?? 18);
      return assets > 0 ? (Number(c.quote) / assets / perAsset) * loanUsd : null;
    }),
  };
}

/** An account's health in liquidation mode, and each collateral's LTV-weighted value (unit of account). */
export function eulerHealth(
  read: Pick<EulerVaultRead, 'collaterals' | 'assetQuote' | 'asset'>,
  account: { debt: bigint; balances: ReadonlyMap<string, bigint> },
): { healthFactor: number; weighted: bigint[] } {
  const weighted = read.collaterals.map((c) => {
    const balance = account.balances.get(c.vault) ?? 0n;
    if (balance === 0n) return 0n;
    const value = (balance * c.quote) / 10n ** BigInt(c.share.decimals ?? 18);
    return (value * c.liquidationLTV) / CONFIG_SCALE;
  });
  const liability = (account.debt * read.assetQuote) / 10n ** BigInt(read.asset.decimals ?? 18);
  const total = weighted.reduce((s, w) => s + w, 0n);
  // No debt, or a debt worth nothing in the unit of account: EVault sees no liability.
  const healthFactor =
    liability === 0n ? Number.POSITIVE_INFINITY : Number((total * 10n ** 18n) / liability) / 1e18;
  return { healthFactor, weighted };
}

/**
 * The vault's markets and positions at `loanUsd` and each collateral's USD price, and the vault
 * itself (`GET /vaults`): its governor, its interest fee, and all of each of its markets' supply.
 * Balances are split among the markets in units of the asset, so a vault whose asset has no USD
 * price (`loanUsd` null, "Real sources" (docs/decisions.md)) has the same markets, their USD figures null, and no position.
 */
export function eulerRecords(
  chainId: number,
  read: EulerVaultRead,
  prices: { loanUsd: number | null; collateralUsd: (number | null)[] },
  oracle: OracleRecord,
  part?: PoolPart<EulerAccount>,
): {
  markets: MarketRecord[];
  positions: PositionRecord[];
  vault: VaultRecord;
  owed: Map<string, PairDebts>;
  pairs: PairTotals;
} {
  const loanDecimals = read.asset.decimals ?? 18;
  // Each market: its collateral and key.
  const byCollateral = read.collaterals.map((c) => ({ c, key: eulerKey(chainId, read.vault, c.vault) }));
  const index = Number(read.interestAccumulator) / 1e27;
  const { positions, owed, totals } = accountPairs(read.accounts, part, (user, kept) => {
    const mine: PositionRecord[] = [];
    const debts = new Map<string, number>();
    if (!kept) return { positions: mine, debts };
    const account = { debt: eulerDebt(kept, read.interestAccumulator), balances: kept.balances };
    const { healthFactor, weighted } = eulerHealth(read, account);
    const due = scaled(account.debt, loanDecimals);
    const held = byCollateral.flatMap(({ c, key }, i) => {
      const shares = account.balances.get(c.vault) ?? 0n;
      return shares > 0n
        ? [{ c, key, i, shares, weight: must(weighted[i], `weight of collateral ${c.vault}`) }]
        : [];
    });
    const total = held.reduce((s, x) => s + x.weight, 0n);
    for (const { c, key, i, shares, weight } of held) {
      const share = total > 0n ? Number((weight * 10n ** 18n) / total) / 1e18 : 1 / held.length;
      debts.set(key, (due * share) / index);
      const collateralUsd = prices.collateralUsd[i] ?? null;
      if (prices.loanUsd === null || collateralUsd === null) continue;
      const assets = (shares * c.assetsPerShare) / 10n ** BigInt(c.share.decimals ?? 18);
      mine.push({
        marketKey: key,
        user,
        collateralUsd: scaled(assets, c.asset.decimals ?? 18) * collateralUsd,
        borrowUsd: due * share * prices.loanUsd,
        supplyUsd: 0,
        healthFactor,
      });
    }
    return { positions: mine, debts };
  });
  // Each market's borrow, in units of the asset: its borrowers' shares of debt.
  const borrowByMarket = new Map<string, number>();
  for (const [k, t] of totals) borrowByMarket.set(k, Math.max(0, t.scaled) * index);
  const borrowed = [...borrowByMarket.values()].reduce((s, b) => s + b, 0);
  const supplied = scaled(read.totalAssets, loanDecimals);
  const rate = Number(read.interestRate);
  const utilization = read.totalAssets > 0n ? Number(read.totalBorrows) / Number(read.totalAssets) : 0;
  const fee = Number(read.interestFee) / Number(CONFIG_SCALE);
  const markets = byCollateral.map(({ c, key }, i): MarketRecord => {
    const borrow = borrowByMarket.get(key) ?? 0;
    return {
      uniqueKey: key,
      protocol: 'euler',
      chainId,
      label: null,
      collateral: c.asset.symbol,
      collateralName: c.asset.name,
      collateralAddress: c.asset.address,
      loan: read.asset.symbol,
      loanName: read.asset.name,
      loanAddress: read.asset.address,
      collateralDecimals: c.asset.decimals,
      loanDecimals,
      collateralPrice: prices.collateralUsd[i] ?? null,
      loanPrice: prices.loanUsd,
      ...loanBalances(
        borrowed > 0 ? (supplied * borrow) / borrowed : supplied / read.collaterals.length,
        borrow,
        prices.loanUsd,
      ),
      // As Euler's lens (UtilsLens.computeAPYs) states them: the lenders' share of the borrow APY.
      borrowIndex: index,
      // The collateral vault's assets per whole share: what its shares' collateral is worth now.
      collateralIndex: scaled(c.assetsPerShare, c.asset.decimals ?? 18),
      supplyApy: apy(rate) * utilization * (1 - fee),
      borrowApy: apy(rate),
      supplyRewardsApy: 0,
      borrowRewardsApy: 0,
      rewardTokens: [],
      lltv: Number(c.liquidationLTV) / Number(CONFIG_SCALE),
      vaultSymbol: read.share.symbol,
      vaultAddress: read.vault,
      governor: read.governorAdmin,
      oracle,
    };
  });
  const vault: VaultRecord = {
    protocol: 'euler',
    chainId,
    address: read.vault,
    name: read.share.name,
    symbol: read.share.symbol,
    assetAddress: read.asset.address,
    assetSymbol: read.asset.symbol,
    curator: null,
    governor: read.governorAdmin,
    fee: Number(read.interestFee) / Number(CONFIG_SCALE),
    allocations: byCollateral.map(({ key: marketKey }) => ({ marketKey, supplyShare: 1, supplyCap: null })),
  };
  return { markets, positions, vault, owed, pairs: totals };
}

/**
 * A liquidation as the service's record, in its market (the vault and the collateral seized):
 * the debt the liquidator took over, the collateral shares it received as assets (at the share
 * price given), and the debt socialized in the same transaction as bad debt; USD at `usd`.
 */
export function eulerLiquidation(
  chainId: number,
  l: EulerLiquidationRead,
  record: MarketRecord,
  assetsPerShare: { perShare: bigint; shareDecimals: number } | null,
  usd: LiquidationPrices,
): LiquidationEvent {
  const seized = assetsPerShare
    ? (l.yieldBalance * assetsPerShare.perShare) / 10n ** BigInt(assetsPerShare.shareDecimals)
    : l.yieldBalance;
  return liquidationRecord(
    { ...l, protocol: 'euler', chainId, borrower: l.violator },
    record,
    { seized, repaid: l.repayAssets, badDebt: l.socialized },
    usd,
  );
}
