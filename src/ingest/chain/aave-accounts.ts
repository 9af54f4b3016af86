/**
 * An Aave v3 account's reads and value: its configuration word's flags (per reserve, borrowing
 * and collateral), the scaled balances its flags name, and its values and health factor as the
 * pool's code computes them (GenericLogic's `calculateUserAccountData`, rounded as each
 * generation of the code rounds).
 */
import { zeroAddress } from 'viem';
import { must } from '../../domain/must.ts';
import {
  type AaveAccount,
  type AaveCache,
  type AavePoolRead,
  type AaveRead,
  type At,
  extraAbi,
  type Hex,
  RAY,
  type ReserveTokens,
} from './aave-types.ts';
import { accountAnswered, groupOf } from './account-reads.ts';
import { type ChainRpc, throwIfUnread } from './rpc.ts';

const WAD = 10n ** 18n;
const PERCENT = 10_000n;

/** Aave's `rayMul`: half up. */
const rayMul = (a: bigint, b: bigint) => (a * b + RAY / 2n) / RAY;
const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;
/** Aave's `percentMul`: half up. */
const percentMul = (value: bigint, percent: bigint) => (value * percent + PERCENT / 2n) / PERCENT;
/** Aave's `wadDiv`: half up. */
const wadDiv = (a: bigint, b: bigint) => (a * WAD + b / 2n) / b;

/**
 * An account's balance reads, in order: per reserve it uses, the aToken's scaled balance when a
 * collateral, then the variable debt's scaled balance and the stable debt when borrowing.
 */
function balanceCalls(user: Hex, config: bigint, reserves: readonly ReserveTokens[]) {
  return reserves.flatMap((r) => [
    ...(isCollateral(config, r.id)
      ? [{ address: r.aToken as Hex, abi: extraAbi, functionName: 'scaledBalanceOf', args: [user] } as const]
      : []),
    ...(isBorrowing(config, r.id)
      ? [
          {
            address: r.variableDebt as Hex,
            abi: extraAbi,
            functionName: 'scaledBalanceOf',
            args: [user],
          } as const,
          ...(r.stableDebt !== zeroAddress
            ? [
                {
                  address: r.stableDebt as Hex,
                  abi: extraAbi,
                  functionName: 'balanceOf',
                  args: [user],
                } as const,
              ]
            : []),
        ]
      : []),
  ]);
}

const isBorrowing = (config: bigint, id: number) => ((config >> BigInt(id * 2)) & 1n) === 1n;
const isCollateral = (config: bigint, id: number) => ((config >> BigInt(id * 2 + 1)) & 1n) === 1n;
const uses = (config: bigint, id: number) => isBorrowing(config, id) || isCollateral(config, id);

/**
 * The balances each account read names by its flags (its debt, and its collateral while it has
 * one), read at the block in one multicall: the account as read is kept (null without a debt). An
 * account of a pool whose state could not be read this pass is read again the next.
 */
export async function readBalances(
  rpc: ChainRpc,
  at: At,
  heads: ReadonlyMap<string, { config: bigint; eMode: number }>,
  good: ReadonlyMap<string, Pick<AavePoolRead, 'reserves'>>,
  cache: AaveCache,
  failures: AaveRead['failures'],
): Promise<void> {
  const wanted = [...heads].flatMap(([key, head]) => {
    const pool = groupOf(key);
    const read = good.get(pool);
    if (!read) {
      cache.retry.add(key);
      return [];
    }
    const borrowing = read.reserves.some((r) => isBorrowing(head.config, r.id));
    return [{ key, head, uses: borrowing ? read.reserves.filter((r) => uses(head.config, r.id)) : [] }];
  });
  const calls = wanted.map(({ key, head, uses }) =>
    balanceCalls(must(key.split(':')[1], `user of ${key}`) as Hex, head.config, uses),
  );
  const flat = calls.flat();
  const balances = flat.length === 0 ? [] : await rpc.multicall({ ...at, contracts: flat });
  throwIfUnread(balances);
  let k = 0;
  for (const [i, { key, head, uses }] of wanted.entries()) {
    const n = must(calls[i], `calls of account ${key}`).length;
    const r = balances.slice(k, k + n);
    k += n;
    if (!accountAnswered(key, r, cache.retry, failures)) continue;
    const account: AaveAccount = { config: head.config, eMode: head.eMode, balances: new Map() };
    let j = 0;
    const next = () => must(r[j++], `balance of account ${key}`).result as bigint;
    for (const reserve of uses) {
      const collateral = isCollateral(head.config, reserve.id) ? next() : 0n;
      let variable = 0n;
      let stable = 0n;
      if (isBorrowing(head.config, reserve.id)) {
        variable = next();
        if (reserve.stableDebt !== zeroAddress) stable = next();
      }
      account.balances.set(reserve.asset, { collateral, variable, stable });
    }
    const [pool, user] = key.split(':') as [string, string];
    const hasDebt = [...account.balances.values()].some((b) => b.variable > 0n || b.stable > 0n);
    cache.accounts.set(pool, user, hasDebt ? account : null, Number(at.blockNumber));
  }
}

/** An account's values in the pool's base currency, per reserve it uses, and its health factor. */
export interface AccountValues {
  /** Per collateral reserve (asset): its value, and its value × liquidation threshold (bp). */
  collateral: Map<string, { value: bigint; weighted: bigint; amount: bigint }>;
  debt: Map<string, { value: bigint; amount: bigint }>;
  /** Aave's health factor (1e18); null without debt (Aave: type(uint256).max). */
  healthFactor: bigint | null;
}

/**
 * An account as GenericLogic's `calculateUserAccountData` values it at the pass's indices and
 * prices, each rounded as the pool's code rounds:
 * - v3.0 to v3.4: a collateral (flag set, liquidation threshold not 0) at `scaled.rayMul(income) ×
 *   price / unit`, a debt at `(scaled.rayMul(debtIndex) + stable) × price / unit`, the average
 *   threshold Σ value × threshold / Σ value (rounded down), and the health factor
 *   `percentMul(Σ value, average).wadDiv(Σ debt)`;
 * - v3.5 on: a collateral at `scaled.rayMulFloor(income) × price / unit`, a debt at
 *   `scaled.rayMulCeil(debtIndex) × price / unit` rounded up, and the health factor
 *   `(Σ value × threshold).wadDiv(Σ debt) / 10000`.
 */
export function accountValues(
  read: Pick<AavePoolRead, 'reserves' | 'eModes' | 'code'>,
  account: AaveAccount,
): AccountValues {
  const modern = read.code.rounding === 'v3.5';
  const category = account.eMode === 0 ? undefined : read.eModes.get(account.eMode);
  const collateral: AccountValues['collateral'] = new Map();
  const debt: AccountValues['debt'] = new Map();
  let total = 0n;
  let weightedTotal = 0n;
  let debtTotal = 0n;
  for (const r of read.reserves) {
    const b = account.balances.get(r.asset);
    if (!b || !uses(account.config, r.id)) continue;
    const unit = 10n ** BigInt(r.config.decimals);
    const inCategory =
      category !== undefined &&
      (category.collateralBitmap !== null
        ? ((category.collateralBitmap >> BigInt(r.id)) & 1n) === 1n
        : r.config.eModeCategory === account.eMode);
    // v3.0–3.1: a category with a price source prices its assets by it.
    const price =
      category &&
      category.price !== 0n &&
      category.collateralBitmap === null &&
      r.config.eModeCategory === account.eMode
        ? category.price
        : r.price;
    const threshold = inCategory ? category.liquidationThreshold : r.config.liquidationThreshold;
    // Before v3.6 a reserve whose own threshold is 0 counts for nothing, in e-mode too; from v3.6
    // at its category's threshold (a threshold of 0 adds 0: left out).
    const counts = read.code.flagged ? threshold !== 0n : r.config.liquidationThreshold !== 0n;
    if (counts && isCollateral(account.config, r.id)) {
      const amount = modern ? (b.collateral * r.income) / RAY : rayMul(b.collateral, r.income);
      const value = (amount * price) / unit;
      total += value;
      weightedTotal += value * threshold;
      collateral.set(r.asset, { value, weighted: value * threshold, amount });
    }
    if (isBorrowing(account.config, r.id)) {
      const amount = modern
        ? ceilDiv(b.variable * r.debtIndex, RAY)
        : (b.variable === 0n ? 0n : rayMul(b.variable, r.debtIndex)) + b.stable;
      const value = modern ? ceilDiv(amount * price, unit) : (amount * price) / unit;
      debtTotal += value;
      debt.set(r.asset, { value, amount });
    }
  }
  let healthFactor: bigint | null = null;
  if (debtTotal > 0n)
    healthFactor = modern
      ? wadDiv(weightedTotal, debtTotal) / PERCENT
      : wadDiv(percentMul(total, total === 0n ? 0n : weightedTotal / total), debtTotal);
  return { collateral, debt, healthFactor };
}
