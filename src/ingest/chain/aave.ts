/**
 * Aave v3 pools on one chain (Aave's, and Spark's: SparkLend is Aave v3's code): each pool's
 * reserves (configuration, indices and rates, the totals of their aTokens and debt tokens), the
 * price of every reserve as the pool's own oracle gives it (`getAssetPrice`, in its base currency),
 * the accounts its events named, and its liquidations. The ABIs are aave-address-book's (the
 * pool's current interface; the functions read here have kept their shape since v3.0).
 *
 * Aave's arithmetic is followed exactly: an account's balances are scaled balances times the
 * reserve's normalized income or debt (read at the block: `getReserveNormalizedIncome`,
 * `getReserveNormalizedVariableDebt`), and its health factor is `GenericLogic`'s
 * (`calculateUserAccountData`, as `getUserAccountData` states it): Σ collateral in the base
 * currency × its liquidation threshold (its e-mode category's when the account is in that
 * category) over the debt in the base currency. So a pass after the first reads every reserve and
 * price, and only the accounts that new events touched: the others follow from their scaled
 * balances.
 *
 * This is a pass's read (its logs, then the state at the block, then the rewards); the reserves
 * and rewards are read by aave-reserves.ts, the accounts' balances and values by
 * aave-accounts.ts, and the shapes of it all are in aave-types.ts.
 */
import { IPool_ABI } from '@aave-dao/aave-address-book/abis/IPool';
import { type GetLogsReturnType, zeroAddress } from 'viem';
import { must, mustSlice } from '../../domain/must.ts';
import { append } from '../append.ts';
import { readBalances } from './aave-accounts.ts';
import { listReserves, parsePool, poolCalls, readRewards } from './aave-reserves.ts';
import {
  AAVE_EVENTS,
  AaveCache,
  type AaveLiquidation,
  type AavePoolRead,
  type AaveRead,
  ATOKEN_EVENTS,
  type At,
  type Hex,
} from './aave-types.ts';
import { accountAnswered, groupOf } from './account-reads.ts';
import { blockTimes, type ChainRpc, type SharedLogs, takeLogs, throwIfUnread, walksByRange } from './rpc.ts';
import { keepTokens, TOKEN_CALLS, tokenCalls } from './tokens.ts';

/** The arguments of each event that name an account whose position it changes. */
const ACCOUNT_FIELDS: Readonly<Record<string, readonly string[]>> = {
  Supply: ['onBehalfOf'],
  Withdraw: ['user'],
  Borrow: ['onBehalfOf'],
  Repay: ['user'],
  LiquidationCall: ['user'],
  ReserveUsedAsCollateralEnabled: ['user'],
  ReserveUsedAsCollateralDisabled: ['user'],
  UserEModeSet: ['user'],
  DeficitCreated: ['user'],
  SwapBorrowRateMode: ['user'],
  RebalanceStableBorrowRate: ['user'],
  BalanceTransfer: ['from', 'to'],
};

/** The pools and their aTokens, as this process knows them (the chain's shared log read takes them). */
export function aaveLogAddresses(pools: readonly string[], cache: AaveCache): string[] {
  return pools.flatMap((p) => [p, ...(cache.reserves.get(p) ?? []).map((r) => r.aToken)]);
}

/**
 * One pass over the pools at `block`: the logs of each pool (and its aTokens) from its `from`
 * name the accounts to read again and the liquidations; every pool's reserves, prices and
 * touched accounts are read at `block`.
 */
export async function readAave(
  rpc: ChainRpc,
  pools: readonly { pool: string; from: bigint; to?: bigint }[],
  range: { block: bigint; logsTo?: bigint },
  known: readonly { pool: string; user: string }[],
  cache: AaveCache = new AaveCache(),
  shared?: SharedLogs,
): Promise<AaveRead> {
  // Aave's views answer much more than they are asked (a reserve's data, names).
  const at: At = { blockNumber: range.block, allowFailure: true, ...(await rpc.multicallOptions('large')) };
  const addresses = pools.map((p) => p.pool);
  const failures: AaveRead['failures'] = [];
  // 1. The reserves of pools not read yet (their aTokens' logs name accounts too).
  await listReserves(
    rpc,
    at,
    addresses.filter((p) => !cache.reserves.has(p)),
    cache,
    failures,
  );
  // The accounts that may be read: those known (the last pass's, to read again), those to retry
  // and those the logs name; each is read unless the process holds it as last read and no log
  // named it (what a pass costs follows the accounts named, not those held).
  const accounts = new Set<string>();
  for (const a of known) accounts.add(`${a.pool}:${a.user}`);
  for (const key of cache.retry) if (addresses.includes(groupOf(key))) accounts.add(key);
  const touched = new Set<string>();

  // 2. Logs: the listed pools' (and their aTokens'), one walk per range (walksByRange).
  const logsTo = range.logsTo ?? range.block;
  const walks = walksByRange(
    pools.filter((p) => cache.reserves.has(p.pool)).map((p) => ({ ...p, address: p.pool })),
    logsTo,
  );
  const poolOf = new Map<string, string>();
  for (const p of addresses) {
    poolOf.set(p, p);
    for (const r of cache.reserves.get(p) ?? []) poolOf.set(r.aToken, p);
  }
  type Log = GetLogsReturnType<undefined, typeof AAVE_EVENTS, true>[number];
  const liquidations: Omit<AaveLiquidation, 'timestamp'>[] = [];
  // One range of logs at a time (a first sync walks millions of them): what they name is kept,
  // not the logs. A range holds whole blocks, so a liquidation's deficit log is with it.
  const take = (logs: readonly Log[]) => {
    const found: Omit<AaveLiquidation, 'timestamp'>[] = [];
    for (const l of logs) {
      const pool = poolOf.get(l.address.toLowerCase());
      if (!pool) continue;
      const args = l.args as Record<string, unknown>;
      for (const field of ACCOUNT_FIELDS[l.eventName] ?? []) {
        const u = String(args[field]).toLowerCase();
        if (u === zeroAddress) continue;
        accounts.add(`${pool}:${u}`);
        touched.add(`${pool}:${u}`);
      }
      if (l.eventName === 'LiquidationCall')
        found.push({
          pool,
          txHash: l.transactionHash.toLowerCase(),
          logIndex: l.logIndex,
          block: Number(l.blockNumber),
          collateral: String(args['collateralAsset']).toLowerCase(),
          debt: String(args['debtAsset']).toLowerCase(),
          user: String(args['user']).toLowerCase(),
          liquidator: String(args['liquidator']).toLowerCase(),
          seized: args['liquidatedCollateralAmount'] as bigint,
          repaid: args['debtToCover'] as bigint,
          deficit: 0n,
        });
    }
    append(liquidations, withDeficits(found, logs, poolOf));
  };
  for (const { fromBlock, toBlock, addresses } of walks) {
    const address = aaveLogAddresses(addresses, cache) as Hex[];
    const events = [...AAVE_EVENTS, ...ATOKEN_EVENTS];
    await takeLogs(rpc, shared, { what: 'aave', address, events, fromBlock, toBlock }, take);
  }
  const times = await blockTimes(
    rpc,
    liquidations.map((l) => BigInt(l.block)),
  );

  // 3. Every listed pool's reserves, prices and e-modes, and the touched accounts; again (up to
  // MAX_ROUNDS) when a pool's list or oracle changed, an account entered an e-mode category not
  // read yet, or a category's price source is new (a pool whose reserves changed: its accounts too).
  const listedNow = () => addresses.filter((p) => cache.reserves.has(p));
  let state = await readState(rpc, at, listedNow(), accounts, touched, cache, false);
  let accountsRead = state.accountsRead;
  const read = new Set(state.read);
  for (let round = 2; state.again.length > 0; round++) {
    const relisted = state.again.filter((a) => a.relisted).map((a) => a.pool);
    for (const p of relisted) {
      for (const user of cache.accounts.of(p).keys()) accounts.add(`${p}:${user}`);
      for (const key of accounts) if (key.startsWith(`${p}:`)) touched.add(key);
    }
    await listReserves(rpc, at, relisted, cache, failures);
    state = await readState(rpc, at, listedNow(), accounts, touched, cache, round === MAX_ROUNDS);
    accountsRead += state.accountsRead;
    for (const key of state.read) read.add(key);
  }
  // (An account read in one round and failing in a later one is to retry.)
  for (const key of cache.retry) read.delete(key);
  append(failures, state.failures);
  await readRewards(rpc, at, state.pools, cache, failures);
  for (const key of cache.retry) if (!addresses.includes(groupOf(key))) cache.retry.delete(key);
  // A pool's holders: those kept with a debt, and those it could not read (the pool not listed,
  // or their reads failed).
  const holders = (pool: string): { pool: string; user: string }[] => {
    const out = new Map<string, { pool: string; user: string }>();
    for (const [user, account] of cache.accounts.of(pool)) if (account) out.set(user, { pool, user });
    for (const key of accounts) {
      const [p, user] = key.split(':') as [string, string];
      if (
        p === pool &&
        !cache.accounts.get(pool, user) &&
        (cache.retry.has(key) || !cache.reserves.has(pool))
      )
        out.set(user, { pool, user });
    }
    return [...out.values()];
  };
  return {
    pools: state.pools,
    liquidations: liquidations.map((l) => ({
      ...l,
      timestamp: must(times.get(BigInt(l.block)), `time of block ${l.block}`),
    })),
    failures,
    accountsRead,
    read,
    holders,
    listed: addresses.filter((p) => cache.reserves.has(p)),
  };
}

/**
 * The deficits (v3.3 on: `DeficitCreated`, the debt left when a liquidation takes the last
 * collateral) logged in a liquidation's transaction for its account: of the liquidated debt, as
 * its bad debt; of the account's other debts, each as a liquidation of its own (that debt, the
 * same collateral, nothing repaid or seized).
 */
export function withDeficits(
  found: readonly Omit<AaveLiquidation, 'timestamp'>[],
  logs: readonly {
    address: string;
    eventName: string;
    args: unknown;
    transactionHash: string;
    logIndex: number;
  }[],
  poolOf: ReadonlyMap<string, string>,
): Omit<AaveLiquidation, 'timestamp'>[] {
  const out = found.map((l) => ({ ...l }));
  // The liquidations of each transaction and account (a first sync meets thousands of each).
  const byAccount = new Map<string, Omit<AaveLiquidation, 'timestamp'>[]>();
  for (const l of out) {
    const key = `${l.pool}:${l.txHash}:${l.user}`;
    byAccount.set(key, [...(byAccount.get(key) ?? []), l]);
  }
  for (const d of logs) {
    if (d.eventName !== 'DeficitCreated') continue;
    const args = d.args as Record<string, unknown>;
    const pool = poolOf.get(d.address.toLowerCase());
    const tx = d.transactionHash.toLowerCase();
    const user = String(args['user']).toLowerCase();
    const debt = String(args['debtAsset']).toLowerCase();
    const amount = args['amountCreated'] as bigint;
    const of = byAccount.get(`${pool}:${tx}:${user}`) ?? [];
    const same = of.find((l) => l.debt === debt);
    if (same) same.deficit += amount;
    else if (of[0])
      out.push({ ...of[0], logIndex: d.logIndex, debt, seized: 0n, repaid: 0n, deficit: amount });
  }
  return out;
}

/** Reads of a pass's state at most (one, and again after a change: a new category, then its price). */
const MAX_ROUNDS = 3;

/** A pool to read again in the same pass; `relisted`: its reserves changed (its accounts are read again). */
type AaveAgain = { pool: string; relisted: boolean };

/** Step 3 of a pass: every pool's reserves and e-modes, and the accounts to read, at the block. */
async function readState(
  rpc: ChainRpc,
  at: At,
  pools: readonly string[],
  accounts: ReadonlySet<string>,
  touched: ReadonlySet<string>,
  cache: AaveCache,
  /** The last round: a pool that changed again is named, not read again. */
  final: boolean,
): Promise<{
  pools: AavePoolRead[];
  again: AaveAgain[];
  /** The accounts read, their reads answered; and how many reads were made. */
  read: string[];
  accountsRead: number;
  failures: AaveRead['failures'];
}> {
  const failures: AaveRead['failures'] = [];
  const toRead = [...accounts].filter((key) => {
    const [pool, user] = key.split(':') as [string, string];
    return (
      cache.reserves.has(pool) &&
      (touched.has(key) || cache.retry.has(key) || !cache.accounts.has(pool, user))
    );
  });
  // The e-mode categories the pool's accounts are in: each read since an account entered it (one
  // entered now is added after the account's read).
  const eModesOf = (pool: string) => [...(cache.eModeSources.get(pool)?.keys() ?? [])].sort((a, b) => a - b);
  const newTokens = [
    ...new Set(
      pools.flatMap((p) => must(cache.reserves.get(p), `reserves of pool ${p}`).map((r) => r.asset)),
    ),
  ].filter((t) => !cache.tokens.has(t)) as Hex[];
  const shapes = pools.map((pool) => {
    const ids = eModesOf(pool);
    return {
      pool,
      reserves: must(cache.reserves.get(pool), `reserves of pool ${pool}`),
      ids,
      calls: poolCalls(pool, ids, cache),
    };
  });
  const reads = await rpc.multicall({
    ...at,
    contracts: [
      ...shapes.flatMap((s) => s.calls),
      ...tokenCalls(newTokens),
      ...toRead.flatMap((key) => {
        const [pool, user] = key.split(':') as [Hex, Hex];
        return [
          { address: pool, abi: IPool_ABI, functionName: 'getUserConfiguration', args: [user] } as const,
          { address: pool, abi: IPool_ABI, functionName: 'getUserEMode', args: [user] } as const,
        ];
      }),
    ],
  });
  throwIfUnread(reads);
  let k = shapes.reduce((s, x) => s + x.calls.length, 0);
  keepTokens(newTokens, reads.slice(k), cache.tokens);
  const accountsAt = k + newTokens.length * TOKEN_CALLS;
  k = 0;
  const again: AaveAgain[] = [];
  const parsed: { pool: string; read: Omit<AavePoolRead, 'accounts'> }[] = [];
  for (const { pool, reserves, ids, calls } of shapes) {
    const n = calls.length;
    const out = parsePool(pool, reads.slice(k, k + n), reserves, ids, cache);
    k += n;
    if ('problem' in out) {
      failures.push({ id: pool, error: `pool ${pool}: ${out.problem}` });
      continue;
    }
    if ('changed' in out) {
      if (final) failures.push({ id: pool, error: `pool ${pool}: it changed while it was read` });
      else again.push({ pool, relisted: out.changed === 'reserves' });
      continue;
    }
    parsed.push({ pool, read: out });
  }
  k = accountsAt;
  const heads = new Map<string, { config: bigint; eMode: number }>();
  for (const key of toRead) {
    const r = mustSlice(reads, k, 2, `answers of account ${key}`);
    k += 2;
    if (!accountAnswered(key, r, cache.retry, failures)) continue;
    const [config, eMode] = r;
    heads.set(key, { config: (config.result as { data: bigint }).data, eMode: Number(eMode.result) });
  }
  // The balances each read account's flags name (its debt, and its collateral while it has one).
  await readBalances(rpc, at, heads, new Map(parsed.map((p) => [p.pool, p.read])), cache, failures);
  const out: AavePoolRead[] = [];
  const answered = toRead.filter((key) => !cache.retry.has(key));
  // An account read now in an e-mode category not read yet (it entered it this pass): the
  // category is read from now on, and the pool again in this pass.
  // (A process's first pass reads every holder at once: they may be in several categories.)
  const entered = new Map<string, Set<number>>();
  for (const key of answered) {
    const [pool, user] = key.split(':') as [string, string];
    const a = cache.accounts.get(pool, user);
    if (a && a.eMode !== 0 && !cache.eModeSources.get(pool)?.has(a.eMode))
      entered.set(pool, (entered.get(pool) ?? new Set<number>()).add(a.eMode));
  }
  for (const [pool, eModes] of entered) {
    const sources = cache.eModeSources.get(pool) ?? new Map<number, string | null>();
    for (const eMode of eModes) sources.set(eMode, null);
    cache.eModeSources.set(pool, sources);
  }
  for (const { pool, read } of parsed) {
    const missing = entered.get(pool);
    if (missing && final) {
      // (Not reachable in practice: a category is read in the round after an account enters it.)
      failures.push({
        id: pool,
        error: `pool ${pool}: e-mode categories ${[...missing].join(', ')} could not be read`,
      });
      continue;
    }
    if (missing) {
      again.push({ pool, relisted: false });
      continue;
    }
    out.push({ ...read, accounts: cache.accounts.of(pool) });
  }
  return { pools: out, again, read: answered, accountsRead: toRead.length, failures };
}
