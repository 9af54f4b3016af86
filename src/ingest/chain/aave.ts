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
 */
import { IAaveOracle_ABI } from '@aave-dao/aave-address-book/abis/IAaveOracle';
import { IAToken_ABI } from '@aave-dao/aave-address-book/abis/IAToken';
import { IPool_ABI } from '@aave-dao/aave-address-book/abis/IPool';
import { IPoolAddressesProvider_ABI } from '@aave-dao/aave-address-book/abis/IPoolAddressesProvider';
import { IRewardsController_ABI } from '@aave-dao/aave-address-book/abis/IRewardsController';
import { type AbiEvent, parseAbi, zeroAddress } from 'viem';
import { append } from '../append.ts';
import { AccountReads, accountAnswered } from './account-reads.ts';
import {
  blockTimes,
  type ChainRpc,
  firstLine,
  getLogsAdaptive,
  type MulticallOptions,
  type SharedLogs,
  sharedLogsOf,
  throwIfUnread,
} from './rpc.ts';
import { keepTokens, TOKEN_CALLS, type TokenMeta, tokenCalls } from './tokens.ts';

/** What v3.0 and v3.1 pools also emit (removed with stable debt), and the scaled-balance views. */
const extraAbi = parseAbi([
  'event SwapBorrowRateMode(address indexed reserve, address indexed user, uint8 interestRateMode)',
  'event RebalanceStableBorrowRate(address indexed reserve, address indexed user)',
  'function scaledBalanceOf(address user) view returns (uint256)',
  'function balanceOf(address user) view returns (uint256)',
  'function totalSupply() view returns (uint256)',
  'function POOL_REVISION() view returns (uint256)',
  'function getIncentivesController() view returns (address)',
  'function latestAnswer() view returns (int256)',
  'function decimals() view returns (uint8)',
]);

const poolEvent = (name: string) => {
  const e = IPool_ABI.find((x) => x.type === 'event' && x.name === name);
  if (!e) throw new Error(`IPool has no event ${name}`);
  return e as AbiEvent;
};
/** Every pool event that changes an account's balances, collateral flags or e-mode, and deficits. */
export const AAVE_EVENTS = [
  ...[
    'Supply',
    'Withdraw',
    'Borrow',
    'Repay',
    'LiquidationCall',
    'ReserveUsedAsCollateralEnabled',
    'ReserveUsedAsCollateralDisabled',
    'UserEModeSet',
    'DeficitCreated',
  ].map(poolEvent),
  ...extraAbi.filter((x) => x.type === 'event'),
] as readonly AbiEvent[];
/** An aToken's transfer between accounts (its collateral moves without a pool event). */
export const ATOKEN_EVENTS = IAToken_ABI.filter(
  (x) => x.type === 'event' && x.name === 'BalanceTransfer',
) as readonly AbiEvent[];

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

type Hex = `0x${string}`;

export const RAY = 10n ** 27n;
const WAD = 10n ** 18n;
const PERCENT = 10_000n;

/** Aave's `rayMul`: half up. */
const rayMul = (a: bigint, b: bigint) => (a * b + RAY / 2n) / RAY;
const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;
/** Aave's `percentMul`: half up. */
const percentMul = (value: bigint, percent: bigint) => (value * percent + PERCENT / 2n) / PERCENT;
/** Aave's `wadDiv`: half up. */
const wadDiv = (a: bigint, b: bigint) => (a * WAD + b / 2n) / b;

/** The fields read of a reserve configuration word (ReserveConfiguration's bit layout, v3.0 on). */
export interface ReserveConfig {
  /** Basis points. */
  liquidationThreshold: bigint;
  decimals: number;
  active: boolean;
  borrowing: boolean;
  paused: boolean;
  /** The e-mode category of v3.0 and v3.1 (from v3.2 on, a category's collateral bitmap says). */
  eModeCategory: number;
}

const bits = (word: bigint, from: number, width: number) =>
  (word >> BigInt(from)) & ((1n << BigInt(width)) - 1n);

export function reserveConfig(word: bigint): ReserveConfig {
  return {
    liquidationThreshold: bits(word, 16, 16),
    decimals: Number(bits(word, 48, 8)),
    active: bits(word, 56, 1) === 1n,
    borrowing: bits(word, 58, 1) === 1n,
    paused: bits(word, 60, 1) === 1n,
    eModeCategory: Number(bits(word, 168, 8)),
  };
}

/** A reserve's addresses (fixed while it is listed). */
interface ReserveTokens {
  asset: string;
  /** Its index in the pool's list: the account configuration's bits 2·id (borrowing) and 2·id+1 (collateral). */
  id: number;
  aToken: string;
  variableDebt: string;
  /** Zero on pools without stable debt. */
  stableDebt: string;
}

/** A reserve at the block. */
export interface AaveReserve extends ReserveTokens {
  token: TokenMeta;
  config: ReserveConfig;
  /** Per-second rates as APRs (1e27): what suppliers earn and variable borrowers pay now. */
  liquidityRate: bigint;
  variableBorrowRate: bigint;
  /** The normalized income and variable debt at the block (1e27). */
  income: bigint;
  debtIndex: bigint;
  /** `getAssetPrice` (base currency units). */
  price: bigint;
  /** The oracle's source for the asset (a Chainlink-like feed), or null. */
  source: string | null;
  /** Present totals at the block, token units. */
  totalSupply: bigint;
  /** Variable and stable debt; the variable debt token's supply alone (what its rewards are shared by). */
  totalDebt: bigint;
  variableDebtTotal: bigint;
  /** The incentives controllers of its aToken and variable debt token (null: none). */
  incentives: { supply: string | null; borrow: string | null };
  /** What each controller emits to its suppliers and variable borrowers (filled by `readRewards`). */
  rewards: { supply: AaveReward[]; borrow: AaveReward[] };
}

/** A reward an incentives controller (RewardsController) emits to a token's holders. */
export interface AaveReward {
  token: TokenMeta;
  /** Reward units per second, to all holders. */
  emissionPerSecond: bigint;
  /** Unix seconds: no emission after. */
  distributionEnd: bigint;
  /** The controller's reward oracle's `latestAnswer` (USD, 8 decimals); null when it has none. */
  oracleUsd: number | null;
}

/** An e-mode category as the pool states it. */
export interface EModeCategory {
  liquidationThreshold: bigint;
  /** v3.0–3.1: the price every asset of the category takes when not zero. */
  priceSource: string;
  /** v3.2 on: the reserves (by id) that count as collateral in the category; null before. */
  collateralBitmap: bigint | null;
  /** The price source's price (0 when none). */
  price: bigint;
}

/** An account as last read: its configuration word, e-mode, and the balances its flags name. */
export interface AaveAccount {
  config: bigint;
  eMode: number;
  /** Per reserve asset it uses: scaled aToken balance (when a collateral), scaled variable debt and stable debt. */
  balances: Map<string, { collateral: bigint; variable: bigint; stable: bigint }>;
}

export interface AavePoolRead {
  pool: string;
  code: PoolCode;
  oracle: string;
  /** The oracle's `BASE_CURRENCY` (zero: USD) and `BASE_CURRENCY_UNIT`. */
  baseCurrency: string;
  baseUnit: bigint;
  reserves: AaveReserve[];
  eModes: Map<number, EModeCategory>;
  /** Accounts with a debt. */
  accounts: { user: string; account: AaveAccount }[];
}

/** One `LiquidationCall`, or a deficit it left on another debt of the account (v3.3 on). */
export interface AaveLiquidation {
  pool: string;
  txHash: string;
  logIndex: number;
  block: number;
  /** Unix seconds of the block. */
  timestamp: number;
  collateral: string;
  debt: string;
  user: string;
  liquidator: string;
  /** Token units: the collateral the liquidator received, the debt repaid, the deficit left (bad debt). */
  seized: bigint;
  repaid: bigint;
  deficit: bigint;
}

export interface AaveRead {
  pools: AavePoolRead[];
  liquidations: AaveLiquidation[];
  /** A pool as a whole (`id` its address: it keeps its last records) or an account (`<pool>:<user>`). */
  failures: { id: string; error: string }[];
  accountsRead: number;
  /** Accounts with a debt, by pool (served or not), and those not read yet. */
  holders: { pool: string; user: string }[];
  /** The pools whose reserves have been read (the others are read from their start again). */
  listed: string[];
}

/**
 * What a pool's code is: `bitmaps` (v3.2 on: an e-mode category's collateral is a bitmap of
 * reserves; no stable debt), `rounding` (v3.5 on, `POOL_REVISION` 9 or more: collateral rounded
 * down, debt up, and the health factor from the unrounded weighted sum) and `flagged` (v3.6 on,
 * revision 10 or more: every collateral whose flag is set counts, at its e-mode category's
 * threshold when the category's bitmap holds it, else at its own; before, only a reserve whose own
 * threshold is above 0).
 */
export interface PoolCode {
  bitmaps: boolean;
  rounding: 'v3.0' | 'v3.5';
  flagged: boolean;
}

/** The pool revisions of Aave v3.5 (balances rounded each its own way) and v3.6 (e-mode-only collateral). */
const V3_5_REVISION = 9n;
const V3_6_REVISION = 10n;

/** What a chain source keeps of its Aave pools between passes in one process. */
export class AaveCache {
  readonly code = new Map<string, PoolCode>();
  readonly providers = new Map<string, string>();
  readonly oracles = new Map<string, string>();
  readonly reserves = new Map<string, ReserveTokens[]>();
  /** Per pool, the e-mode categories' price sources as last read (null: not read yet). */
  readonly eModeSources = new Map<string, Map<number, string | null>>();
  /** Per `${controller}:${token}`, its rewards; per `${controller}:${reward}`, its price oracle (as last read). */
  readonly rewardLists = new Map<string, string[]>();
  readonly rewardOracles = new Map<string, string>();
  readonly tokens = new Map<string, TokenMeta>();
  /** Per pool and user: the account as last read; null without a debt (not a position; a Borrow names it). */
  readonly accounts = new AccountReads<AaveAccount>();
  readonly retry = new Set<string>();

  clear(): void {
    this.code.clear();
    this.providers.clear();
    this.oracles.clear();
    this.reserves.clear();
    this.eModeSources.clear();
    this.rewardLists.clear();
    this.rewardOracles.clear();
    this.tokens.clear();
    this.accounts.clear();
    this.retry.clear();
  }
}

/** The pools and their aTokens, as this process knows them (the chain's shared log read takes them). */
export function aaveLogAddresses(pools: readonly string[], cache: AaveCache): string[] {
  return pools.flatMap((p) => [p, ...(cache.reserves.get(p) ?? []).map((r) => r.aToken)]);
}

/** A pool's `POOL_REVISION` (0 when it does not answer). */
const revisionOf = (r: { status: 'success' | 'failure'; result?: unknown }) =>
  r.status === 'success' ? (r.result as bigint) : 0n;

type Results = readonly { status: 'success' | 'failure'; result?: unknown; error?: Error | undefined }[];
type At = { blockNumber: bigint; allowFailure: true } & MulticallOptions;

/**
 * One pass over the pools at `block`: the logs of each pool (and its aTokens) from its `from`
 * name the accounts to read again and the liquidations; every pool's reserves, prices and
 * touched accounts are read at `block`.
 */
export async function readAave(
  rpc: ChainRpc,
  pools: readonly { pool: string; from: bigint }[],
  range: { block: bigint },
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
  const accounts = new Set<string>();
  for (const a of known) accounts.add(`${a.pool}:${a.user}`);
  for (const key of [...cache.accounts.keys(), ...cache.retry])
    if (addresses.includes(key.split(':')[0]!)) accounts.add(key);
  const touched = new Set<string>();

  // 2. Logs: one walk per start block (in steady state, every pool resumes at the same block).
  const starts = new Map<bigint, string[]>();
  for (const p of pools)
    if (p.from <= range.block && cache.reserves.has(p.pool))
      starts.set(p.from, [...(starts.get(p.from) ?? []), p.pool]);
  const poolOf = new Map<string, string>();
  for (const p of addresses) {
    poolOf.set(p, p);
    for (const r of cache.reserves.get(p) ?? []) poolOf.set(r.aToken, p);
  }
  type Log = Awaited<ReturnType<typeof getLogsAdaptive<typeof AAVE_EVENTS>>>[number];
  const logs: Log[] = [];
  for (const [fromBlock, group] of starts) {
    const address = aaveLogAddresses(group, cache) as Hex[];
    const events = [...AAVE_EVENTS, ...ATOKEN_EVENTS];
    append(
      logs,
      sharedLogsOf<Log>(shared, events, address, fromBlock, range.block) ??
        (await getLogsAdaptive(rpc, { address, events, fromBlock, toBlock: range.block })),
    );
  }
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
  const liquidations = withDeficits(found, logs, poolOf);
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
  for (let round = 2; state.again.length > 0; round++) {
    const relisted = state.again.filter((a) => a.relisted).map((a) => a.pool);
    for (const p of relisted) for (const key of accounts) if (key.startsWith(`${p}:`)) touched.add(key);
    await listReserves(rpc, at, relisted, cache, failures);
    state = await readState(rpc, at, listedNow(), accounts, touched, cache, round === MAX_ROUNDS);
    accountsRead += state.accountsRead;
  }
  append(failures, state.failures);
  await readRewards(rpc, at, state.pools, cache, failures);
  for (const key of cache.retry) if (!addresses.includes(key.split(':')[0]!)) cache.retry.delete(key);
  const holders: AaveRead['holders'] = [];
  for (const key of accounts) {
    const [pool, user] = key.split(':') as [string, string];
    const account = cache.accounts.get(pool, user);
    if (account || (account === undefined && (cache.retry.has(key) || !cache.reserves.has(pool))))
      holders.push({ pool, user });
  }
  return {
    pools: state.pools,
    liquidations: liquidations.map((l) => ({ ...l, timestamp: times.get(BigInt(l.block))! })),
    failures,
    accountsRead,
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

/** The addresses provider, oracle and reserves of pools not read yet (two multicalls). */
async function listReserves(
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
    const [provider, list, revision, bitmap] = heads.slice(i * 4, i * 4 + 4) as [
      Results[number],
      Results[number],
      Results[number],
      Results[number],
    ];
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
    const oracle = reads[k++]!;
    const data = reads.slice(k, k + w.assets.length);
    k += w.assets.length;
    const bad = [oracle, ...data].find((r) => r.status !== 'success');
    if (bad) {
      failures.push({ id: w.pool, error: `pool ${w.pool}: ${firstLine(bad.error)}` });
      continue;
    }
    cache.providers.set(w.pool, w.provider);
    cache.oracles.set(w.pool, String(oracle.result).toLowerCase());
    cache.reserves.set(
      w.pool,
      w.assets.map((asset, i) => tokensOf(asset, data[i]!.result as ReserveData, cache.code.get(w.pool)!)),
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

/** Reads of a pass's state at most (one, and again after a change: a new category, then its price). */
const MAX_ROUNDS = 3;

/** A pool to read again in the same pass; `relisted`: its reserves changed (its accounts are read again). */
type AaveAgain = { pool: string; relisted: boolean };

/** Calls per reserve in a pass's read. */
const RESERVE_CALLS = 9;
/** Calls per e-mode category. */
const EMODE_CALLS = 2;

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
  // The e-mode categories the pool's accounts are in (those read now are added after their read).
  const eModesOf = (pool: string) => {
    const ids = new Set(cache.eModeSources.get(pool)?.keys() ?? []);
    for (const a of cache.accounts.of(pool).values()) if (a && a.eMode !== 0) ids.add(a.eMode);
    return [...ids].sort((a, b) => a - b);
  };
  const newTokens = [...new Set(pools.flatMap((p) => cache.reserves.get(p)!.map((r) => r.asset)))].filter(
    (t) => !cache.tokens.has(t),
  ) as Hex[];
  const reads = await rpc.multicall({
    ...at,
    contracts: [
      ...pools.flatMap((p) => {
        const pool = p as Hex;
        const oracle = cache.oracles.get(p)! as Hex;
        const sources = cache.eModeSources.get(p);
        return [
          { address: pool, abi: IPool_ABI, functionName: 'getReservesList' } as const,
          {
            address: cache.providers.get(p)! as Hex,
            abi: IPoolAddressesProvider_ABI,
            functionName: 'getPriceOracle',
          } as const,
          { address: oracle, abi: IAaveOracle_ABI, functionName: 'BASE_CURRENCY' } as const,
          { address: oracle, abi: IAaveOracle_ABI, functionName: 'BASE_CURRENCY_UNIT' } as const,
          ...cache.reserves.get(p)!.flatMap((r) => {
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
          ...cache.reserves
            .get(p)!
            .filter((r) => r.stableDebt !== zeroAddress)
            .map(
              (r) => ({ address: r.stableDebt as Hex, abi: extraAbi, functionName: 'totalSupply' }) as const,
            ),
          // Each category's threshold, and its collateral bitmap (v3.2 on) or its price source's price.
          ...eModesOf(p).flatMap((id) => [
            { address: pool, abi: IPool_ABI, functionName: 'getEModeCategoryData', args: [id] } as const,
            cache.code.get(p)!.bitmaps
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
      }),
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
  const shapes = pools.map((pool) => {
    const reserves = cache.reserves.get(pool)!;
    const ids = eModesOf(pool);
    const stable = reserves.filter((r) => r.stableDebt !== zeroAddress).length;
    return {
      pool,
      reserves,
      ids,
      n: 4 + reserves.length * RESERVE_CALLS + stable + ids.length * EMODE_CALLS,
    };
  });
  let k = shapes.reduce((s, x) => s + x.n, 0);
  keepTokens(newTokens, reads.slice(k), cache.tokens);
  const accountsAt = k + newTokens.length * TOKEN_CALLS;
  k = 0;
  const again: AaveAgain[] = [];
  const parsed: { pool: string; read: Omit<AavePoolRead, 'accounts'> }[] = [];
  for (const { pool, reserves, ids, n } of shapes) {
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
    const r = reads.slice(k, k + 2);
    k += 2;
    if (!accountAnswered(key, r, cache.retry, failures)) continue;
    heads.set(key, {
      config: (r[0]!.result as { data: bigint }).data,
      eMode: Number(r[1]!.result),
    });
  }
  // The balances each read account's flags name (its debt, and its collateral while it has one).
  const good = new Map(parsed.map((p) => [p.pool, p.read]));
  const wanted = [...heads].flatMap(([key, head]) => {
    const pool = key.split(':')[0]!;
    const read = good.get(pool);
    if (!read) {
      cache.retry.add(key);
      return [];
    }
    const borrowing = read.reserves.some((r) => isBorrowing(head.config, r.id));
    return [{ key, head, uses: borrowing ? read.reserves.filter((r) => uses(head.config, r.id)) : [] }];
  });
  const calls = wanted.map(({ key, head, uses }) =>
    balanceCalls(key.split(':')[1]! as Hex, head.config, uses),
  );
  const flat = calls.flat();
  const balances = flat.length === 0 ? [] : await rpc.multicall({ ...at, contracts: flat });
  throwIfUnread(balances);
  k = 0;
  for (const [i, { key, head, uses }] of wanted.entries()) {
    const r = balances.slice(k, k + calls[i]!.length);
    k += calls[i]!.length;
    if (!accountAnswered(key, r, cache.retry, failures)) continue;
    const account: AaveAccount = { config: head.config, eMode: head.eMode, balances: new Map() };
    let j = 0;
    for (const reserve of uses) {
      const collateral = isCollateral(head.config, reserve.id) ? (r[j++]!.result as bigint) : 0n;
      let variable = 0n;
      let stable = 0n;
      if (isBorrowing(head.config, reserve.id)) {
        variable = r[j++]!.result as bigint;
        if (reserve.stableDebt !== zeroAddress) stable = r[j++]!.result as bigint;
      }
      account.balances.set(reserve.asset, { collateral, variable, stable });
    }
    const [pool, user] = key.split(':') as [string, string];
    const hasDebt = [...account.balances.values()].some((b) => b.variable > 0n || b.stable > 0n);
    cache.accounts.set(pool, user, hasDebt ? account : null, Number(at.blockNumber));
  }
  const out: AavePoolRead[] = [];
  for (const { pool, read } of parsed) {
    // An account in an e-mode category not read yet (it entered it this pass): read next round.
    const missing = [...cache.accounts.of(pool).values()].find(
      (a) => a && a.eMode !== 0 && !read.eModes.has(a.eMode),
    );
    if (missing && final) {
      // (Not reachable in practice: a category is read in the round after an account enters it.)
      failures.push({ id: pool, error: `pool ${pool}: e-mode category ${missing.eMode} could not be read` });
      continue;
    }
    if (missing) {
      const sources = cache.eModeSources.get(pool) ?? new Map<number, string | null>();
      sources.set(missing.eMode, null);
      cache.eModeSources.set(pool, sources);
      again.push({ pool, relisted: false });
      continue;
    }
    const held: AavePoolRead['accounts'] = [];
    for (const [user, account] of cache.accounts.of(pool)) if (account) held.push({ user, account });
    out.push({ ...read, accounts: held });
  }
  return { pools: out, again, accountsRead: toRead.length, failures };
}

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

/** A pool's part of a pass's read; `changed` when its list, oracle or an e-mode's price source moved. */
function parsePool(
  pool: string,
  r: Results,
  reserves: readonly ReserveTokens[],
  eModeIds: readonly number[],
  cache: AaveCache,
): Omit<AavePoolRead, 'accounts'> | { problem: string } | { changed: 'reserves' | 'prices' } {
  const [list, oracle, baseCurrency, baseUnit] = r;
  const refused = r.slice(0, 4).find((x) => x.status !== 'success');
  if (refused) return { problem: firstLine(refused.error) };
  const assets = (list!.result as string[]).map((a) => a.toLowerCase());
  let changed: 'reserves' | 'prices' | null = null;
  if (String(oracle!.result).toLowerCase() !== cache.oracles.get(pool)) {
    cache.oracles.set(pool, String(oracle!.result).toLowerCase());
    changed = 'prices';
  }
  const out: AaveReserve[] = [];
  const fresh: ReserveTokens[] = [];
  let k = 4;
  for (const reserve of reserves) {
    const [data, income, debtIndex, price, source, aSupply, vSupply, aIncentives, vIncentives] = r.slice(
      k,
      k + RESERVE_CALLS,
    );
    k += RESERVE_CALLS;
    if (data!.status !== 'success')
      return { problem: `getReserveData(${reserve.asset}): ${firstLine(data!.error)}` };
    const d = data!.result as ReserveData;
    fresh.push(tokensOf(reserve.asset, d, cache.code.get(pool)!));
    const bad = [income, debtIndex, price, aSupply, vSupply].find((x) => x!.status !== 'success');
    if (bad) return { problem: `reserve ${reserve.asset}: ${firstLine(bad.error)}` };
    if ((price!.result as bigint) <= 0n)
      return { problem: `the oracle prices reserve ${reserve.asset} at 0` };
    const token = cache.tokens.get(reserve.asset);
    out.push({
      ...reserve,
      token: token ?? { address: reserve.asset, symbol: '', name: '', decimals: null },
      config: reserveConfig(d.configuration.data),
      liquidityRate: d.currentLiquidityRate,
      variableBorrowRate: d.currentVariableBorrowRate,
      income: income!.result as bigint,
      debtIndex: debtIndex!.result as bigint,
      price: price!.result as bigint,
      source:
        source!.status === 'success' && String(source!.result) !== zeroAddress
          ? String(source!.result).toLowerCase()
          : null,
      totalSupply: aSupply!.result as bigint,
      totalDebt: vSupply!.result as bigint,
      variableDebtTotal: vSupply!.result as bigint,
      incentives: { supply: controllerOf(aIncentives!), borrow: controllerOf(vIncentives!) },
      rewards: { supply: [], borrow: [] },
    });
  }
  for (const reserve of out.filter((x) => x.stableDebt !== zeroAddress)) {
    const s = r[k++]!;
    if (s.status !== 'success') return { problem: `stable debt of ${reserve.asset}: ${firstLine(s.error)}` };
    reserve.totalDebt += s.result as bigint;
  }
  // Another list (a reserve listed or dropped) or another token of a reserve: listed again.
  if (assets.join() !== reserves.map((x) => x.asset).join() || !sameTokens(fresh, reserves)) {
    cache.reserves.delete(pool);
    return { changed: 'reserves' };
  }
  const code = cache.code.get(pool)!;
  const eModes = new Map<number, EModeCategory>();
  const sources = new Map<number, string | null>();
  for (const id of eModeIds) {
    const [data, second] = r.slice(k, k + EMODE_CALLS) as [Results[number], Results[number]];
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
  for (const x of out) x.token = cache.tokens.get(x.asset)!;
  return {
    pool,
    code,
    oracle: cache.oracles.get(pool)!,
    baseCurrency: String(baseCurrency!.result).toLowerCase(),
    baseUnit: baseUnit!.result as bigint,
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
async function readRewards(
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
    const lists = targets.map((t) => cache.rewardLists.get(`${t.controller}:${t.token}`) ?? []);
    const rewards = [...new Set(targets.flatMap((t, i) => lists[i]!.map((rw) => `${t.controller}:${rw}`)))];
    const oracles = rewards.map((key) => cache.rewardOracles.get(key) ?? zeroAddress);
    const newTokens = [...new Set(rewards.map((key) => key.split(':')[1]!))].filter(
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
      ...targets.flatMap((t, i) =>
        lists[i]!.map(
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
    let changed = false;
    // A controller that refuses: its tokens have no rewards, named once per pool and controller.
    const refused = new Map<string, string>();
    targets.forEach((t, i) => {
      const r = reads[k++]!;
      const key = `${t.controller}:${t.token}`;
      if (r.status !== 'success') {
        refused.set(`${t.pool}:${t.controller}`, firstLine(r.error));
        cache.rewardLists.delete(key);
        lists[i] = [];
        return;
      }
      const now = (r.result as string[]).map((a) => a.toLowerCase());
      if (now.join() !== lists[i]!.join()) {
        cache.rewardLists.set(key, now);
        changed = true;
      }
    });
    const data = targets.map((_, i) => lists[i]!.map(() => reads[k++]!));
    rewards.forEach((key, j) => {
      const r = reads[k++]!;
      const oracle = r.status === 'success' ? String(r.result).toLowerCase() : zeroAddress;
      if (oracle !== oracles[j]) {
        cache.rewardOracles.set(key, oracle);
        changed = true;
      }
    });
    const prices = oracles.map(() => [reads[k++]!, reads[k++]!] as const);
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
    targets.forEach((t, i) => {
      t.reserve.rewards[t.side] = lists[i]!.flatMap((reward, n) => {
        const d = data[i]![n]!;
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
            emissionPerSecond: emissionPerSecond!,
            distributionEnd: distributionEnd!,
            oracleUsd: usd > 0n ? Number(usd) / 10 ** places : null,
          },
        ];
      });
    });
    return;
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
    const threshold = inCategory ? category!.liquidationThreshold : r.config.liquidationThreshold;
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
