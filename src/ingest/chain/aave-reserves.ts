/**
 * An Aave v3 pool's reserves: the list and addresses read once per process (its addresses
 * provider, oracle and each reserve's tokens), then at every pass each reserve's configuration,
 * indices, rates, price and totals, the pool's e-mode categories, and the rewards its incentives
 * controllers pay to each reserve's suppliers and borrowers.
 */
import { IAaveOracle_ABI } from '@aave-dao/aave-address-book/abis/IAaveOracle';
import { IPool_ABI } from '@aave-dao/aave-address-book/abis/IPool';
import { IPoolAddressesProvider_ABI } from '@aave-dao/aave-address-book/abis/IPoolAddressesProvider';
import { IRewardsController_ABI } from '@aave-dao/aave-address-book/abis/IRewardsController';
import { zeroAddress } from 'viem';
import { must, mustSlice } from '../../domain/must.ts';
import {
  type AaveCache,
  type AavePoolRead,
  type AaveRead,
  type AaveReserve,
  type At,
  type EModeCategory,
  extraAbi,
  type Hex,
  type PoolCode,
  type ReserveTokens,
  type Results,
  reserveConfig,
} from './aave-types.ts';
import { type ChainRpc, firstLine, type MulticallOptions, throwIfUnread } from './rpc.ts';
import { keepTokens, tokenCalls } from './tokens.ts';

/** The pool revisions of Aave v3.5 (balances rounded each its own way) and v3.6 (e-mode-only collateral). */
const V3_5_REVISION = 9n;
const V3_6_REVISION = 10n;

/** A pool's `POOL_REVISION` (0 when it does not answer). */
const revisionOf = (r: { status: 'success' | 'failure'; result?: unknown }) =>
  r.status === 'success' ? (r.result as bigint) : 0n;

/** The addresses provider, oracle and reserves of pools not read yet (two multicalls). */
export async function listReserves(
  rpc: ChainRpc,
  at: At,
  pools: readonly string[],
  cache: AaveCache,
  failures: AaveRead['failures'],
): Promise<void> {
  if (pools.length === 0) return;
  const heads = await rpc.multicall({
    ...at,
    contracts: pools.flatMap((p) => [
      { address: p as Hex, abi: IPool_ABI, functionName: 'ADDRESSES_PROVIDER' } as const,
      { address: p as Hex, abi: IPool_ABI, functionName: 'getReservesList' } as const,
      { address: p as Hex, abi: extraAbi, functionName: 'POOL_REVISION' } as const,
      // Answered from v3.2 on (category 0: no reserve); refused before, where it does not exist.
      {
        address: p as Hex,
        abi: IPool_ABI,
        functionName: 'getEModeCategoryCollateralBitmap',
        args: [0],
      } as const,
    ]),
  });
  throwIfUnread(heads);
  const wanted: { pool: string; provider: string; assets: string[] }[] = [];
  pools.forEach((pool, i) => {
    const [provider, list, revision, bitmap] = mustSlice(heads, i * 4, 4, 'pool head answers');
    if (provider.status !== 'success' || list.status !== 'success') {
      const bad = provider.status !== 'success' ? provider : list;
      failures.push({ id: pool, error: `pool ${pool}: not an Aave v3 pool (${firstLine(bad.error)})` });
      return;
    }
    const assets = (list.result as string[]).map((a) => a.toLowerCase());
    cache.code.set(pool, {
      bitmaps: bitmap.status === 'success',
      rounding: revisionOf(revision) >= V3_5_REVISION ? 'v3.5' : 'v3.0',
      flagged: revisionOf(revision) >= V3_6_REVISION,
    });
    wanted.push({ pool, provider: String(provider.result).toLowerCase(), assets });
  });
  const reads = await rpc.multicall({
    ...at,
    contracts: wanted.flatMap((w) => [
      {
        address: w.provider as Hex,
        abi: IPoolAddressesProvider_ABI,
        functionName: 'getPriceOracle',
      } as const,
      ...w.assets.map(
        (asset) =>
          ({
            address: w.pool as Hex,
            abi: IPool_ABI,
            functionName: 'getReserveData',
            args: [asset],
          }) as const,
      ),
    ]),
  });
  throwIfUnread(reads);
  let k = 0;
  for (const w of wanted) {
    const oracle = must(reads[k++], 'getPriceOracle answer');
    const data = reads.slice(k, k + w.assets.length);
    k += w.assets.length;
    const bad = [oracle, ...data].find((r) => r.status !== 'success');
    if (bad) {
      failures.push({ id: w.pool, error: `pool ${w.pool}: ${firstLine(bad.error)}` });
      continue;
    }
    cache.providers.set(w.pool, w.provider);
    cache.oracles.set(w.pool, String(oracle.result).toLowerCase());
    const code = must(cache.code.get(w.pool), `code of pool ${w.pool}`);
    cache.reserves.set(
      w.pool,
      data.map((d, i) => tokensOf(must(w.assets[i], 'reserve asset'), d.result as ReserveData, code)),
    );
  }
}

interface ReserveData {
  configuration: { data: bigint };
  currentLiquidityRate: bigint;
  currentVariableBorrowRate: bigint;
  id: number;
  aTokenAddress: string;
  stableDebtTokenAddress: string;
  variableDebtTokenAddress: string;
}

/** A reserve's tokens (from v3.2 on, the stable debt token it names is a placeholder: no stable debt). */
const tokensOf = (asset: string, d: ReserveData, code: PoolCode): ReserveTokens => ({
  asset,
  id: Number(d.id),
  aToken: d.aTokenAddress.toLowerCase(),
  variableDebt: d.variableDebtTokenAddress.toLowerCase(),
  stableDebt: code.bitmaps ? zeroAddress : d.stableDebtTokenAddress.toLowerCase(),
});

const sameTokens = (a: readonly ReserveTokens[], b: readonly ReserveTokens[]) =>
  a.length === b.length && a.every((x, i) => JSON.stringify(x) === JSON.stringify(b[i]));

/** Calls per reserve in a pass's read. */
const RESERVE_CALLS = 9;
/** Calls per e-mode category. */
const EMODE_CALLS = 2;

/**
 * A pool's reads of a pass, in the order `parsePool` takes them: its list, oracle and base
 * currency, RESERVE_CALLS per reserve, its stable debt tokens' totals, and EMODE_CALLS per e-mode
 * category of `eModeIds`.
 */
export function poolCalls(p: string, eModeIds: readonly number[], cache: AaveCache) {
  const pool = p as Hex;
  const oracle = must(cache.oracles.get(p), `oracle of pool ${p}`) as Hex;
  const reserves = must(cache.reserves.get(p), `reserves of pool ${p}`);
  const bitmaps = must(cache.code.get(p), `code of pool ${p}`).bitmaps;
  const sources = cache.eModeSources.get(p);
  return [
    { address: pool, abi: IPool_ABI, functionName: 'getReservesList' } as const,
    {
      address: must(cache.providers.get(p), `addresses provider of pool ${p}`) as Hex,
      abi: IPoolAddressesProvider_ABI,
      functionName: 'getPriceOracle',
    } as const,
    { address: oracle, abi: IAaveOracle_ABI, functionName: 'BASE_CURRENCY' } as const,
    { address: oracle, abi: IAaveOracle_ABI, functionName: 'BASE_CURRENCY_UNIT' } as const,
    ...reserves.flatMap((r) => {
      const asset = r.asset as Hex;
      return [
        { address: pool, abi: IPool_ABI, functionName: 'getReserveData', args: [asset] } as const,
        {
          address: pool,
          abi: IPool_ABI,
          functionName: 'getReserveNormalizedIncome',
          args: [asset],
        } as const,
        {
          address: pool,
          abi: IPool_ABI,
          functionName: 'getReserveNormalizedVariableDebt',
          args: [asset],
        } as const,
        {
          address: oracle,
          abi: IAaveOracle_ABI,
          functionName: 'getAssetPrice',
          args: [asset],
        } as const,
        {
          address: oracle,
          abi: IAaveOracle_ABI,
          functionName: 'getSourceOfAsset',
          args: [asset],
        } as const,
        { address: r.aToken as Hex, abi: extraAbi, functionName: 'totalSupply' } as const,
        { address: r.variableDebt as Hex, abi: extraAbi, functionName: 'totalSupply' } as const,
        { address: r.aToken as Hex, abi: extraAbi, functionName: 'getIncentivesController' } as const,
        {
          address: r.variableDebt as Hex,
          abi: extraAbi,
          functionName: 'getIncentivesController',
        } as const,
      ];
    }),
    // Stable debt (v3.0–3.1; none on later pools, and disabled on every reserve since 2023).
    ...reserves
      .filter((r) => r.stableDebt !== zeroAddress)
      .map((r) => ({ address: r.stableDebt as Hex, abi: extraAbi, functionName: 'totalSupply' }) as const),
    // Each category's threshold, and its collateral bitmap (v3.2 on) or its price source's price.
    ...eModeIds.flatMap((id) => [
      { address: pool, abi: IPool_ABI, functionName: 'getEModeCategoryData', args: [id] } as const,
      bitmaps
        ? ({
            address: pool,
            abi: IPool_ABI,
            functionName: 'getEModeCategoryCollateralBitmap',
            args: [id],
          } as const)
        : ({
            address: oracle,
            abi: IAaveOracle_ABI,
            functionName: 'getAssetPrice',
            args: [(sources?.get(id) ?? zeroAddress) as Hex],
          } as const),
    ]),
  ];
}

/** A pool's part of a pass's read; `changed` when its list, oracle or an e-mode's price source moved. */
export function parsePool(
  pool: string,
  r: Results,
  reserves: readonly ReserveTokens[],
  eModeIds: readonly number[],
  cache: AaveCache,
): Omit<AavePoolRead, 'accounts'> | { problem: string } | { changed: 'reserves' | 'prices' } {
  const head = mustSlice(r, 0, 4, 'pool answers');
  const [list, oracle, baseCurrency, baseUnit] = head;
  const refused = head.find((x) => x.status !== 'success');
  if (refused) return { problem: firstLine(refused.error) };
  const assets = (list.result as string[]).map((a) => a.toLowerCase());
  const code = must(cache.code.get(pool), `code of pool ${pool}`);
  let changed: 'reserves' | 'prices' | null = null;
  if (String(oracle.result).toLowerCase() !== cache.oracles.get(pool)) {
    cache.oracles.set(pool, String(oracle.result).toLowerCase());
    changed = 'prices';
  }
  const out: AaveReserve[] = [];
  const fresh: ReserveTokens[] = [];
  let k = 4;
  for (const reserve of reserves) {
    const [data, income, debtIndex, price, source, aSupply, vSupply, aIncentives, vIncentives] = mustSlice(
      r,
      k,
      RESERVE_CALLS,
      `answers of reserve ${reserve.asset}`,
    );
    k += RESERVE_CALLS;
    if (data.status !== 'success')
      return { problem: `getReserveData(${reserve.asset}): ${firstLine(data.error)}` };
    const d = data.result as ReserveData;
    fresh.push(tokensOf(reserve.asset, d, code));
    const bad = [income, debtIndex, price, aSupply, vSupply].find((x) => x.status !== 'success');
    if (bad) return { problem: `reserve ${reserve.asset}: ${firstLine(bad.error)}` };
    if ((price.result as bigint) <= 0n) return { problem: `the oracle prices reserve ${reserve.asset} at 0` };
    const token = cache.tokens.get(reserve.asset);
    out.push({
      ...reserve,
      token: token ?? { address: reserve.asset, symbol: '', name: '', decimals: null },
      config: reserveConfig(d.configuration.data),
      liquidityRate: d.currentLiquidityRate,
      variableBorrowRate: d.currentVariableBorrowRate,
      income: income.result as bigint,
      debtIndex: debtIndex.result as bigint,
      price: price.result as bigint,
      source:
        source.status === 'success' && String(source.result) !== zeroAddress
          ? String(source.result).toLowerCase()
          : null,
      totalSupply: aSupply.result as bigint,
      totalDebt: vSupply.result as bigint,
      variableDebtTotal: vSupply.result as bigint,
      incentives: { supply: controllerOf(aIncentives), borrow: controllerOf(vIncentives) },
      rewards: { supply: [], borrow: [] },
    });
  }
  for (const reserve of out.filter((x) => x.stableDebt !== zeroAddress)) {
    const s = must(r[k++], `stable debt answer of ${reserve.asset}`);
    if (s.status !== 'success') return { problem: `stable debt of ${reserve.asset}: ${firstLine(s.error)}` };
    reserve.totalDebt += s.result as bigint;
  }
  // Another list (a reserve listed or dropped) or another token of a reserve: listed again.
  if (assets.join() !== reserves.map((x) => x.asset).join() || !sameTokens(fresh, reserves)) {
    cache.reserves.delete(pool);
    return { changed: 'reserves' };
  }
  const eModes = new Map<number, EModeCategory>();
  const sources = new Map<number, string | null>();
  for (const id of eModeIds) {
    const [data, second] = mustSlice(r, k, EMODE_CALLS, `answers of e-mode ${id}`);
    k += EMODE_CALLS;
    if (data.status !== 'success') return { problem: `e-mode ${id}: ${firstLine(data.error)}` };
    const c = data.result as { liquidationThreshold: number; priceSource: string };
    if (code.bitmaps) {
      if (second.status !== 'success') return { problem: `e-mode ${id}: ${firstLine(second.error)}` };
      sources.set(id, zeroAddress);
      eModes.set(id, {
        liquidationThreshold: BigInt(c.liquidationThreshold),
        priceSource: zeroAddress,
        collateralBitmap: second.result as bigint,
        price: 0n,
      });
      continue;
    }
    // v3.0–3.1: each reserve's configuration names its category; a category's price source, when
    // set, prices its assets (its price is read in the round after the source is first seen).
    const priceSource = c.priceSource.toLowerCase();
    const before = cache.eModeSources.get(pool)?.get(id);
    sources.set(id, priceSource);
    if (priceSource !== (before ?? zeroAddress)) changed = 'prices';
    if (priceSource !== zeroAddress && before === priceSource && second.status !== 'success')
      return { problem: `e-mode ${id}: its price source ${priceSource}: ${firstLine(second.error)}` };
    eModes.set(id, {
      liquidationThreshold: BigInt(c.liquidationThreshold),
      priceSource,
      collateralBitmap: null,
      price: priceSource !== zeroAddress && second.status === 'success' ? (second.result as bigint) : 0n,
    });
  }
  cache.eModeSources.set(pool, sources);
  if (changed) return { changed };
  const silent = reserves.find((x) => !cache.tokens.has(x.asset));
  if (silent) return { problem: `token ${silent.asset} does not answer decimals()` };
  for (const x of out) x.token = must(cache.tokens.get(x.asset), `token ${x.asset}`);
  return {
    pool,
    code,
    oracle: must(cache.oracles.get(pool), `oracle of pool ${pool}`),
    baseCurrency: String(baseCurrency.result).toLowerCase(),
    baseUnit: baseUnit.result as bigint,
    reserves: out,
    eModes,
  };
}

/** An incentives controller's address from its token's answer (null: none, or not answered). */
const controllerOf = (r: Results[number]): string | null =>
  r.status === 'success' && String(r.result) !== zeroAddress ? String(r.result).toLowerCase() : null;

/** Rounds of a pass's rewards read at most (a token's list, then its rewards' oracles and tokens). */
const REWARD_ROUNDS = 3;

/**
 * The rewards of every pool's aTokens and variable debt tokens whose incentives controller is set
 * (Aave's RewardsController): per token `getRewardsByAsset`, per reward `getRewardsData`,
 * `getRewardOracle` and the oracle's `latestAnswer`, and the reward token's metadata. One multicall
 * a pass, with the lists and oracles as last read; again (at most REWARD_ROUNDS) when they changed.
 * A controller that does not answer leaves its tokens without rewards, named in `failures`.
 */
export async function readRewards(
  rpc: ChainRpc,
  at: { blockNumber: bigint; allowFailure: true } & MulticallOptions,
  pools: readonly AavePoolRead[],
  cache: AaveCache,
  failures: { id: string; error: string }[],
): Promise<void> {
  const targets = pools.flatMap((p) =>
    p.reserves.flatMap((r) =>
      (['supply', 'borrow'] as const).flatMap((side) => {
        const controller = r.incentives[side];
        const token = side === 'supply' ? r.aToken : r.variableDebt;
        return controller ? [{ pool: p.pool, reserve: r, side, controller, token }] : [];
      }),
    ),
  );
  if (targets.length === 0) return;
  for (let round = 1; ; round++) {
    // Each target with its rewards as last read.
    const listed: readonly { readonly t: (typeof targets)[number]; readonly list: readonly string[] }[] =
      targets.map((t) => ({
        t,
        list: cache.rewardLists.get(`${t.controller}:${t.token}`) ?? [],
      }));
    const rewards = [...new Set(listed.flatMap(({ t, list }) => list.map((rw) => `${t.controller}:${rw}`)))];
    const oracles = rewards.map((key) => cache.rewardOracles.get(key) ?? zeroAddress);
    const newTokens = [...new Set(rewards.map((key) => key.slice(key.indexOf(':') + 1)))].filter(
      (t) => !cache.tokens.has(t),
    ) as Hex[];
    const calls = [
      ...targets.map(
        (t) =>
          ({
            address: t.controller as Hex,
            abi: IRewardsController_ABI,
            functionName: 'getRewardsByAsset',
            args: [t.token as Hex],
          }) as const,
      ),
      ...listed.flatMap(({ t, list }) =>
        list.map(
          (rw) =>
            ({
              address: t.controller as Hex,
              abi: IRewardsController_ABI,
              functionName: 'getRewardsData',
              args: [t.token as Hex, rw as Hex],
            }) as const,
        ),
      ),
      ...rewards.map((key) => {
        const [controller, reward] = key.split(':') as [Hex, Hex];
        return {
          address: controller,
          abi: IRewardsController_ABI,
          functionName: 'getRewardOracle',
          args: [reward],
        } as const;
      }),
      ...oracles.flatMap((o) => [
        { address: o as Hex, abi: extraAbi, functionName: 'latestAnswer' } as const,
        { address: o as Hex, abi: extraAbi, functionName: 'decimals' } as const,
      ]),
      ...tokenCalls(newTokens),
    ];
    const reads = await rpc.multicall({ ...at, contracts: calls });
    throwIfUnread(reads);
    let k = 0;
    const next = () => must(reads[k++], 'rewards answer');
    let changed = false;
    // A controller that refuses: its tokens have no rewards, named once per pool and controller.
    const refused = new Map<string, string>();
    const unlisted = new Set<(typeof listed)[number]>();
    for (const x of listed) {
      const { t, list } = x;
      const r = next();
      const key = `${t.controller}:${t.token}`;
      if (r.status !== 'success') {
        refused.set(`${t.pool}:${t.controller}`, firstLine(r.error));
        cache.rewardLists.delete(key);
        unlisted.add(x);
        continue;
      }
      const now = (r.result as string[]).map((a) => a.toLowerCase());
      if (now.join() !== list.join()) {
        cache.rewardLists.set(key, now);
        changed = true;
      }
    }
    // Every reward's data asked is read, in the order asked (a refused token's too, then dropped:
    // skipping them would hand its answers to the next token's rewards and to the oracles).
    const data = listed.map((x) => {
      const read = x.list.map((reward) => ({ reward, d: next() }));
      return { t: x.t, rewards: unlisted.has(x) ? [] : read };
    });
    rewards.forEach((key, j) => {
      const r = next();
      const oracle = r.status === 'success' ? String(r.result).toLowerCase() : zeroAddress;
      if (oracle !== oracles[j]) {
        cache.rewardOracles.set(key, oracle);
        changed = true;
      }
    });
    const prices = oracles.map(() => [next(), next()] as const);
    keepTokens(newTokens, reads.slice(k), cache.tokens);
    if (newTokens.some((t) => cache.tokens.has(t))) changed = true;
    if (changed && round < REWARD_ROUNDS) continue;
    for (const [key, error] of refused) {
      const [pool, controller] = key.split(':') as [string, string];
      failures.push({ id: `${pool}:rewards`, error: `incentives controller ${controller}: ${error}` });
    }
    if (changed) {
      for (const pool of new Set(targets.map((t) => t.pool)))
        failures.push({ id: `${pool}:rewards`, error: 'the incentives changed while they were read' });
      return;
    }
    for (const { t, rewards: read } of data) {
      t.reserve.rewards[t.side] = read.flatMap(({ reward, d }) => {
        const token = cache.tokens.get(reward);
        if (d.status !== 'success' || !token) return [];
        const [, emissionPerSecond, , distributionEnd] = d.result as readonly bigint[];
        const [answer, decimals] = prices[rewards.indexOf(`${t.controller}:${reward}`)] ?? [];
        const usd = answer?.status === 'success' ? (answer.result as bigint) : 0n;
        // The feed's decimals (8 when it does not say, as Aave's feeds have).
        const places = decimals?.status === 'success' ? Number(decimals.result) : 8;
        return [
          {
            token,
            emissionPerSecond: must(emissionPerSecond, 'emissionPerSecond of getRewardsData'),
            distributionEnd: must(distributionEnd, 'distributionEnd of getRewardsData'),
            oracleUsd: usd > 0n ? Number(usd) / 10 ** places : null,
          },
        ];
      });
    }
    return;
  }
}
