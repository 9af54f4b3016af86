/**
 * An Aave v3 pool (Aave's or Spark's) as the service's records (the sandbox's model, "Market identity" (docs/decisions.md)): one
 * market per pair of a collateral reserve (liquidation threshold above 0) and a borrowable reserve,
 * `<protocol>-<chainId>-<pool>_<collateral>_<loan>`, whose lltv is the collateral's liquidation
 * threshold; a pair some account holds is a market even when the pool no longer allows it.
 *
 * An account borrowing several reserves against several collaterals has one position per pair:
 * each debt is shared among its collaterals by their value at their liquidation thresholds, and
 * each collateral among its debts by their value, so every position carries the account's own
 * health factor (Aave's), and an account's positions sum to its collateral and its debt. A reserve
 * lends one pool to every collateral: a pair's borrow is the sum of its positions' debt, and its
 * supply the reserve's supply in the same proportion (the pairs of a loan reserve sum to it).
 */
import { calculateCompoundedRate } from '@aave/math-utils';
import { zeroAddress } from 'viem';
import { must } from '../../domain/must.ts';
import type { LiquidationEvent } from '../../domain/records/history.ts';
import {
  loanBalances,
  type MarketRecord,
  type OracleRecord,
  type PositionRecord,
} from '../../domain/types.ts';
import { accountValues } from './aave-accounts.ts';
import type { AaveAccount, AaveLiquidation, AavePoolRead, AaveReserve, AaveReward } from './aave-types.ts';
import { scaled } from './chainlink.ts';
import { type LiquidationPrices, liquidationRecord } from './liquidation.ts';
import { accountPairs, type PairDebts, type PairTotals, type PoolPart } from './pooled-pairs.ts';
import type { TokenMeta } from './tokens.ts';

export type AaveProtocol = 'aave' | 'spark';

/** A pair market's uniqueKey (docs/decisions.md "Market identity"). */
export function aaveKey(
  protocol: AaveProtocol,
  chainId: number,
  pool: string,
  collateral: string,
  loan: string,
): string {
  return `${protocol}-${chainId}-${pool.toLowerCase()}_${collateral.toLowerCase()}_${loan.toLowerCase()}`;
}

const SECONDS_PER_YEAR = 31_536_000;

/** The APYs of the rates met last (a reserve's rate moves only with its state: most passes meet the same). */
const apyOf = new Map<bigint, number>();
const APYS_KEPT = 4_096;

/**
 * An APR (1e27) compounded every second for a year, as Aave states APYs (math-utils: exact ray
 * arithmetic, about 0.4 ms a rate, so each rate is computed once).
 */
export function aaveApy(rate: bigint): number {
  const known = apyOf.get(rate);
  if (known !== undefined) return known;
  const apy =
    Number(calculateCompoundedRate({ rate: rate.toString(), duration: SECONDS_PER_YEAR }).toString()) / 1e27;
  if (apyOf.size >= APYS_KEPT) apyOf.clear();
  apyOf.set(rate, apy);
  return apy;
}

/**
 * Each reserve's USD price: the file's feeds (`usdOf`), else the pool's oracle when its base
 * currency is USD (`getAssetPrice` / `BASE_CURRENCY_UNIT`, when positive); null when neither
 * prices it.
 */
export function aavePrices(
  read: Pick<AavePoolRead, 'reserves' | 'baseCurrency' | 'baseUnit'>,
  usdOf: (token: TokenMeta) => number | null,
): Map<string, number | null> {
  const usdBase = read.baseCurrency === zeroAddress && read.baseUnit > 0n;
  return new Map(
    read.reserves.map((r) => [
      r.asset,
      usdOf(r.token) ?? (usdBase && r.price > 0n ? Number(r.price) / Number(read.baseUnit) : null),
    ]),
  );
}

/**
 * The pool's markets and positions at `usd`. Balances are split among the pairs in units of the
 * loan reserve (by the pool's own valuations), so a reserve without a USD price (null, "Real sources" (docs/decisions.md))
 * leaves its pairs' markets with that price and, for a loan reserve, the USD figures null, and
 * their positions unserved. Every account is taken, or (`part`) those read this pass
 * (pooled-pairs.ts). `owed`: the debts of each account taken; `pairs`: the pairs' totals now.
 */
export function aaveRecords(
  protocol: AaveProtocol,
  chainId: number,
  read: AavePoolRead,
  usd: ReadonlyMap<string, number | null>,
  oracle: (collateral: AaveReserve, loan: AaveReserve) => OracleRecord,
  rewards: { now: number; usdOf: (token: TokenMeta) => number | null } = { now: 0, usdOf: () => null },
  part?: PoolPart<AaveAccount>,
): {
  markets: MarketRecord[];
  positions: PositionRecord[];
  owed: Map<string, PairDebts>;
  pairs: PairTotals;
} {
  const reserves = new Map(read.reserves.map((r) => [r.asset, r]));
  const key = (c: string, d: string) => aaveKey(protocol, chainId, read.pool, c, d);
  const pairs = new Map<string, { c: AaveReserve; d: AaveReserve }>();
  const usable = (r: AaveReserve) => r.config.active && !r.config.paused;
  for (const c of read.reserves)
    if (usable(c) && c.config.liquidationThreshold > 0n)
      for (const d of read.reserves)
        if (d !== c && usable(d) && d.config.borrowing) pairs.set(key(c.asset, d.asset), { c, d });
  const tokens = (r: AaveReserve, amount: bigint) => scaled(amount, r.config.decimals);
  const priceOf = (r: AaveReserve) => usd.get(r.asset) ?? null;
  // A pair's key to its reserves (the pool's pairs, and those an account holds).
  const pairOf = (k: string) => {
    const [, ca = '', da = ''] = k.slice(k.lastIndexOf('-') + 1).split('_');
    return { c: must(reserves.get(ca), `reserve ${ca}`), d: must(reserves.get(da), `reserve ${da}`) };
  };

  const { positions, owed, totals } = accountPairs(read.accounts, part, (user, account) => {
    const mine: PositionRecord[] = [];
    const debts = new Map<string, number>();
    const v = account ? accountValues(read, account) : null;
    if (v?.healthFactor == null) return { positions: mine, debts };
    const healthFactor = Number(v.healthFactor) / 1e18;
    const collaterals = [...v.collateral].filter(([, x]) => x.amount > 0n);
    const dues = [...v.debt].filter(([, x]) => x.amount > 0n);
    const weighted = collaterals.reduce((s, [, x]) => s + x.weighted, 0n);
    const debtValue = dues.reduce((s, [, x]) => s + x.value, 0n);
    for (const [ca, cx] of collaterals) {
      // This collateral's share of each debt: its value at its threshold over the account's.
      const debtShare = weighted > 0n ? ratio(cx.weighted, weighted) : 1 / collaterals.length;
      for (const [da, dx] of dues) {
        const collateralShare = debtValue > 0n ? ratio(dx.value, debtValue) : 1 / dues.length;
        const c = must(reserves.get(ca), `reserve ${ca}`);
        const d = must(reserves.get(da), `reserve ${da}`);
        const k = key(ca, da);
        const due = tokens(d, dx.amount) * debtShare;
        debts.set(k, (debts.get(k) ?? 0) + due / indexOf(d));
        const cUsd = priceOf(c);
        const dUsd = priceOf(d);
        if (cUsd === null || dUsd === null) continue;
        mine.push({
          marketKey: k,
          user,
          collateralUsd: tokens(c, cx.amount) * cUsd * collateralShare,
          borrowUsd: due * dUsd,
          supplyUsd: 0,
          healthFactor,
        });
      }
    }
    return { positions: mine, debts };
  });
  // A pair some account holds is a market even when the pool no longer allows it.
  for (const k of totals.keys()) if (!pairs.has(k)) pairs.set(k, pairOf(k));
  // Each pair's borrow, in units of its loan reserve.
  const borrowOf = new Map<string, number>();
  for (const [k, t] of totals) borrowOf.set(k, Math.max(0, t.scaled) * indexOf(must(pairs.get(k), k).d));
  // Each loan reserve's supply, shared among its pairs by their borrow (evenly with none).
  const byLoan = new Map<string, { borrowed: number; pairs: number }>();
  for (const [k, { d }] of pairs) {
    const x = byLoan.get(d.asset) ?? { borrowed: 0, pairs: 0 };
    x.borrowed += borrowOf.get(k) ?? 0;
    x.pairs += 1;
    byLoan.set(d.asset, x);
  }
  const incentives = new Map(
    read.reserves.map((r) => [r.asset, rewardAprs(r, priceOf(r), rewards.now, rewards.usdOf)]),
  );
  // Each loan reserve's APYs, once (a reserve is the loan of every pair it can be borrowed in).
  const apys = new Map(
    [...new Set([...pairs.values()].map(({ d }) => d))].map((d) => [
      d.asset,
      { supply: aaveApy(d.liquidityRate), borrow: aaveApy(d.variableBorrowRate) },
    ]),
  );
  const markets = [...pairs].map(([k, { c, d }]): MarketRecord => {
    const borrow = borrowOf.get(k) ?? 0;
    const paid = must(incentives.get(d.asset), `incentives of ${d.asset}`);
    const loan = must(byLoan.get(d.asset), `pairs of loan ${d.asset}`);
    const supplied = tokens(d, d.totalSupply);
    return {
      uniqueKey: k,
      protocol,
      chainId,
      label: null,
      collateral: c.token.symbol,
      collateralName: c.token.name,
      collateralAddress: c.asset,
      loan: d.token.symbol,
      loanName: d.token.name,
      loanAddress: d.asset,
      collateralDecimals: c.config.decimals,
      loanDecimals: d.config.decimals,
      collateralPrice: priceOf(c),
      loanPrice: priceOf(d),
      ...loanBalances(
        loan.borrowed > 0 ? (supplied * borrow) / loan.borrowed : supplied / loan.pairs,
        borrow,
        priceOf(d),
      ),
      // The loan reserve's variable borrow index, and the collateral reserve's normalized income
      // (what a scaled aToken balance is worth), at the block read.
      borrowIndex: indexOf(d),
      collateralIndex: Number(c.income) / 1e27,
      supplyApy: must(apys.get(d.asset), `APYs of ${d.asset}`).supply,
      borrowApy: must(apys.get(d.asset), `APYs of ${d.asset}`).borrow,
      supplyRewardsApy: paid.supply,
      borrowRewardsApy: paid.borrow,
      rewardTokens: paid.tokens,
      lltv: Number(c.config.liquidationThreshold) / 10_000,
      vaultSymbol: null,
      vaultAddress: null,
      governor: null,
      oracle: oracle(c, d),
    };
  });
  return { markets, positions, owed, pairs: totals };
}

/** A reserve's variable borrow index (ray) as a number. */
const indexOf = (r: AaveReserve) => Number(r.debtIndex) / 1e27;

/**
 * A reserve's reward APRs, as Aave's interface states them (not compounded): per reward still
 * emitting at `now` (unix seconds), emission per second × a year × the reward's USD price (the
 * file's feeds, else the controller's reward oracle) over the USD value of the token it rewards
 * (the aToken's supply for suppliers, the variable debt for borrowers); the reward tokens' symbols.
 * None for a reserve without a USD price.
 */
function rewardAprs(
  r: AaveReserve,
  assetUsd: number | null,
  now: number,
  usdOf: (token: TokenMeta) => number | null,
): { supply: number; borrow: number; tokens: string[] } {
  if (assetUsd === null) return { supply: 0, borrow: 0, tokens: [] };
  const tokens = new Set<string>();
  const apr = (list: readonly AaveReward[], total: bigint) => {
    const base = scaled(total, r.config.decimals) * assetUsd;
    let sum = 0;
    for (const w of list) {
      const price = usdOf(w.token) ?? w.oracleUsd;
      if (w.emissionPerSecond === 0n || w.distributionEnd <= BigInt(now) || price === null || base <= 0)
        continue;
      sum += (scaled(w.emissionPerSecond, w.token.decimals ?? 18) * SECONDS_PER_YEAR * price) / base;
      tokens.add(w.token.symbol);
    }
    return sum;
  };
  const supply = apr(r.rewards.supply, r.totalSupply);
  const borrow = apr(r.rewards.borrow, r.variableDebtTotal);
  return { supply, borrow, tokens: [...tokens].sort() };
}

/** What a liquidation needs of its pair: its identity, decimals and prices. */
export type AavePair = Pick<
  MarketRecord,
  'uniqueKey' | 'protocol' | 'collateralDecimals' | 'loanDecimals' | 'collateralPrice' | 'loanPrice'
>;

/**
 * A pair that is not a market (its loan reserve no longer lends, and no account holds it: the
 * liquidation closed the last position) as a liquidation needs it, from the pool's reserves.
 */
export function aavePair(
  protocol: AaveProtocol,
  chainId: number,
  read: AavePoolRead,
  usd: ReadonlyMap<string, number | null>,
  collateral: string,
  loan: string,
): AavePair | null {
  const c = read.reserves.find((r) => r.asset === collateral);
  const d = read.reserves.find((r) => r.asset === loan);
  if (!c || !d) return null;
  return {
    uniqueKey: aaveKey(protocol, chainId, read.pool, collateral, loan),
    protocol,
    collateralDecimals: c.config.decimals,
    loanDecimals: d.config.decimals,
    collateralPrice: usd.get(collateral) ?? null,
    loanPrice: usd.get(loan) ?? null,
  };
}

/**
 * A `LiquidationCall` in its pair's market: the collateral the liquidator received, the debt
 * repaid, and the deficit it left (v3.3 on: `DeficitCreated`, Aave's bad debt), in token units and
 * at `usd`.
 */
export function aaveLiquidation(
  chainId: number,
  l: AaveLiquidation,
  record: AavePair,
  usd: LiquidationPrices,
): LiquidationEvent {
  return liquidationRecord(
    { ...l, protocol: record.protocol, chainId, borrower: l.user },
    record,
    { seized: l.seized, repaid: l.repaid, badDebt: l.deficit },
    usd,
  );
}

/** a / b as a number, exact to a double's precision whatever their size. */
function ratio(a: bigint, b: bigint): number {
  return Number((a * 10n ** 18n) / b) / 1e18;
}
