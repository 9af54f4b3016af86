/**
 * A comet as the service's records (the sandbox's model, "Market identity" (docs/decisions.md)): one market per collateral asset,
 * `compound-<chainId>-<comet>_<asset>`, whose loan is the comet's base token and whose lltv is the
 * asset's liquidateCollateralFactor. An account holding several collaterals has one position per
 * collateral: its debt is shared among them in proportion to each collateral's value at its
 * liquidation factor, so every one of its positions carries the account's own health factor
 * (the comet's `isLiquidatable` test: below 1, the account can be absorbed).
 *
 * A comet lends one pool of base to all its collaterals' borrowers: a market's borrow is the sum
 * of its positions' shares of debt, and its supply the comet's supply in the same proportion (so
 * each market shows the comet's utilization, and the markets of a comet sum to the comet). Base
 * lenders are not positions (they lend to the comet, not to one collateral's market).
 */
import { MarketUtils } from '@morpho-org/blue-sdk';
import { must } from '../../domain/must.ts';
import type { LiquidationEvent } from '../../domain/records/history.ts';
import {
  loanBalances,
  type MarketRecord,
  type OracleRecord,
  type PositionRecord,
} from '../../domain/types.ts';
import { scaled } from './chainlink.ts';
import {
  accountHealth,
  type CometAbsorb,
  type CometAccount,
  type CometRead,
  FACTOR_SCALE,
} from './compound.ts';
import { usdValue } from './liquidation.ts';
import { accountPairs, type PairDebts, type PairTotals, type PoolPart } from './pooled-pairs.ts';
import type { TokenMeta } from './tokens.ts';

const SECONDS_PER_YEAR = 31_536_000;

/** A comet market's uniqueKey (docs/decisions.md "Market identity"). */
export function cometKey(chainId: number, comet: string, asset: string): string {
  return `compound-${chainId}-${comet.toLowerCase()}_${asset.toLowerCase()}`;
}

/**
 * The comet's markets and positions at USD prices: `baseUsd` for its base token, and for each
 * collateral its own USD price (`usdOf`, the file's feeds) or else the comet's price of it in
 * base (its `getPrice` of the asset over that of the base) × `baseUsd`. Balances are split among
 * the markets in base units, so a comet whose base token has no USD price (`baseUsd` null, "Real sources" (docs/decisions.md))
 * has the same markets, their USD figures null, and no position. Every account is taken, or
 * (`part`) those read this pass (pooled-pairs.ts); `owed`: the debts of each account taken;
 * `pairs`: the markets' totals now.
 */
export function cometRecords(
  chainId: number,
  read: CometRead,
  baseUsd: number | null,
  usdOf: (token: TokenMeta) => number | null,
  oracle: (feeds: [string, ...string[]]) => OracleRecord,
  part?: PoolPart<CometAccount>,
): { markets: MarketRecord[]; positions: PositionRecord[]; owed: Map<string, PairDebts>; pairs: PairTotals } {
  const baseDecimals = read.base.decimals ?? 18;
  const baseScale = 10n ** BigInt(baseDecimals);
  const assets = cometAssets(chainId, read, baseUsd, usdOf);
  const index = Number(read.borrowIndex) / 1e15;
  const { positions, owed, totals } = accountPairs(read.accounts, part, (user, account) => {
    const mine: PositionRecord[] = [];
    const debts = new Map<string, number>();
    if (!account) return { positions: mine, debts };
    const { healthFactor, weighted, debt } = accountHealth({ ...read, baseScale }, account);
    const due = scaled(debt, baseDecimals);
    const held = assets.flatMap((a, i) => {
      const amount = account.collateral[i] ?? 0n;
      return amount > 0n ? [{ a, amount, weight: must(weighted[i], `weight of asset ${i}`) }] : [];
    });
    const total = held.reduce((s, x) => s + x.weight, 0n);
    for (const { a, amount, weight } of held) {
      // The debt's share of this collateral: its value at the liquidation factor over the account's.
      const share = total > 0n ? Number((weight * FACTOR_SCALE) / total) / 1e18 : 1 / held.length;
      debts.set(a.key, (due * share) / index);
      if (baseUsd === null || a.usd === null) continue;
      mine.push({
        marketKey: a.key,
        user,
        collateralUsd: scaled(amount, a.token.decimals ?? 18) * a.usd,
        borrowUsd: due * share * baseUsd,
        supplyUsd: 0,
        healthFactor,
      });
    }
    return { positions: mine, debts };
  });
  // Each market's borrow, in base: its borrowers' shares of debt.
  const borrowByMarket = new Map<string, number>();
  for (const [k, t] of totals) borrowByMarket.set(k, Math.max(0, t.scaled) * index);
  const borrowed = assets.reduce((s, a) => s + (borrowByMarket.get(a.key) ?? 0), 0);
  const supplied = scaled(read.totalSupply, baseDecimals);
  // Rewards (CometRewards): whole tokens a second × a year × their USD price over the side's USD
  // total, as Compound states them (an APR); 0 when the reward token or the base has no USD price.
  const rewards = read.rewards && 'token' in read.rewards ? read.rewards : null;
  const rewardUsd = rewards ? usdOf(rewards.token) : null;
  const apr = (perSecond: number, total: bigint) =>
    rewardUsd !== null && baseUsd !== null && total > 0n
      ? (perSecond * SECONDS_PER_YEAR * rewardUsd) / (scaled(total, baseDecimals) * baseUsd)
      : 0;
  const supplyRewardsApy = apr(rewards?.supplyPerSecond ?? 0, read.totalSupply);
  const borrowRewardsApy = apr(rewards?.borrowPerSecond ?? 0, read.totalBorrow);
  const rewardTokens =
    rewards && (supplyRewardsApy > 0 || borrowRewardsApy > 0) ? [rewards.token.symbol] : [];
  const markets = assets.map((a): MarketRecord => {
    const borrow = borrowByMarket.get(a.key) ?? 0;
    return {
      uniqueKey: a.key,
      protocol: 'compound',
      chainId,
      label: null,
      collateral: a.token.symbol,
      collateralName: a.token.name,
      collateralAddress: a.token.address,
      loan: read.base.symbol,
      loanName: read.base.name,
      loanAddress: read.base.address,
      collateralDecimals: a.token.decimals,
      loanDecimals: baseDecimals,
      collateralPrice: a.usd,
      loanPrice: baseUsd,
      ...loanBalances(
        borrowed > 0 ? (supplied * borrow) / borrowed : supplied / assets.length,
        borrow,
        baseUsd,
      ),
      borrowIndex: Number(read.borrowIndex) / 1e15,
      supplyApy: MarketUtils.rateToApy(read.supplyRate),
      borrowApy: MarketUtils.rateToApy(read.borrowRate),
      supplyRewardsApy,
      borrowRewardsApy,
      rewardTokens,
      lltv: scaled(a.info.liquidateCollateralFactor, 18),
      vaultSymbol: null,
      vaultAddress: null,
      governor: null,
      oracle: oracle([a.info.priceFeed, read.config.baseTokenPriceFeed]),
    };
  });
  return { markets, positions, owed, pairs: totals };
}

/**
 * A comet's collaterals with their market keys and USD prices: each its own (`usdOf`, the file's
 * feeds), else the comet's price of it in base × `baseUsd`.
 */
export function cometAssets(
  chainId: number,
  read: Pick<CometRead, 'comet' | 'config' | 'tokens' | 'prices' | 'basePrice'>,
  baseUsd: number | null,
  usdOf: (token: TokenMeta) => number | null,
) {
  return read.config.assets.map((a, i) => {
    const token = must(read.tokens[i], `token of asset ${a.asset}`);
    const price = must(read.prices[i], `price of asset ${a.asset}`);
    const inBase = Number(price) / Number(read.basePrice);
    const usd = usdOf(token) ?? (baseUsd === null ? null : inBase * baseUsd);
    return { info: a, token, usd, price, key: cometKey(chainId, read.comet, a.asset) };
  });
}

/**
 * An absorption as liquidations, one per collateral seized (in its market). Comet takes every
 * collateral of the account and clears its whole debt; the figures:
 * - the debt absorbed: basePaidOut less the surplus Comet credited to the account as supply (its
 *   `Transfer` right after `AbsorbDebt`), that is the account's debt at the absorb;
 * - `debtRepaid`: the part of it the collateral covers, valued as Comet credits it (each
 *   collateral's `usdValue` in the logs at its liquidation factor as configured when read, over
 *   the base's price at the absorb), at most the debt absorbed;
 * - `badDebt`: the rest of the debt absorbed, which the collateral at its liquidation factor does
 *   not cover (0 when Comet credited a surplus). It is measured at the liquidation factor, not at
 *   what the protocol's reserves later lose or gain selling the collateral.
 * So debtRepaid + badDebt = the debt absorbed. Both are shared among the collaterals by their
 * value at the liquidation factor. USD: the collateral at the comet's own valuation in the logs
 * (its `usdValue` over the base's) × the base's USD price (`baseUsd`); the debt at `baseUsd`.
 */
export function absorbLiquidations(
  chainId: number,
  absorb: CometAbsorb,
  read: Pick<CometRead, 'config'> & { baseDecimals: number },
  records: ReadonlyMap<string, MarketRecord>,
  baseUsd: number | null,
  /** A collateral's USD price by the file's feeds at the absorb's block, when read there. */
  collateralUsdAt: (asset: string) => number | null = () => null,
): LiquidationEvent[] {
  const { config, baseDecimals } = read;
  const factorOf = (asset: string) =>
    config.assets.find((a) => a.asset === asset)?.liquidationFactor ?? FACTOR_SCALE;
  const credited = absorb.collateral.map((c) => ({ c, value: (c.value * factorOf(c.asset)) / FACTOR_SCALE }));
  const creditedValue = credited.reduce((s, x) => s + x.value, 0n);
  const paid = scaled(absorb.basePaidOut, baseDecimals);
  // The comet's base price at the absorb (8 decimals), from the debt event's own valuation.
  const basePrice = paid > 0 && absorb.baseValue > 0n ? Number(absorb.baseValue) / paid : null;
  const cleared = absorb.basePaidOut > absorb.surplus ? absorb.basePaidOut - absorb.surplus : 0n;
  const absorbed = scaled(cleared, baseDecimals);
  // The debt the collateral covered, in base: its credited value over the base's price.
  const covered = basePrice ? Number(creditedValue) / basePrice : absorbed;
  const badDebt = absorb.surplus > 0n ? 0 : Math.max(0, absorbed - covered);
  const repaid = absorbed - badDebt;
  return credited.flatMap(({ c, value }) => {
    const record = records.get(cometKey(chainId, absorb.comet, c.asset));
    if (!record) return [];
    const share = creditedValue > 0n ? Number(value) / Number(creditedValue) : 1 / absorb.collateral.length;
    const seized = scaled(c.amount, record.collateralDecimals ?? 18);
    const unitPrice = seized > 0 && basePrice ? Number(c.value) / seized / basePrice : null;
    // The comet's own valuation × the base's USD price; without either, the collateral's feed at
    // the block, else the market's price.
    const collateralUsd =
      unitPrice !== null && baseUsd !== null
        ? unitPrice * baseUsd
        : (collateralUsdAt(c.asset) ?? record.collateralPrice);
    return [
      {
        protocol: 'compound',
        chainId,
        txHash: absorb.txHash,
        logIndex: c.logIndex,
        block: absorb.block,
        at: absorb.timestamp * 1000,
        marketKey: record.uniqueKey,
        borrower: absorb.borrower,
        liquidator: absorb.absorber,
        collateralSeized: seized,
        collateralSeizedUsd: usdValue(seized, collateralUsd),
        debtRepaid: repaid * share,
        debtRepaidUsd: usdValue(repaid * share, baseUsd),
        badDebt: badDebt * share,
        badDebtUsd: usdValue(badDebt * share, baseUsd),
      },
    ];
  });
}
