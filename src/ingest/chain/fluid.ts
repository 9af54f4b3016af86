/**
 * Fluid's vault protocol, read through its resolvers (docs/decisions.md "Real sources": `fluid: { vaultResolver,
 * positionsResolver }`). T1 vaults only (one collateral token, one debt token): vaults with a DEX
 * on either side (T2–T4, smart collateral or smart debt) hold DEX shares, not tokens, and are
 * named, not read.
 *
 * Per pass: the vault resolver's vault list and each vault's `getVaultEntireData` (its tokens,
 * liquidation threshold, oracle price, exchange prices, rates, totals and what it may still
 * borrow), the Liquidity layer's supply rate of each debt token (`getOverallTokenData`), then
 * the positions (ERC-721 tokens of the vault factory) that logs touched, through the positions
 * resolver's `getVaultPositionsForNftIds` (collateral and debt with interest, and the owner).
 * Positions are found from the vaults' `LogOperate` (every operation names its position);
 * `LogLiquidate` and `LogAbsorb` (Fluid liquidates by tick: every position above it moves)
 * re-read all of a vault's positions; `LogAbsorbDustDebt` the ones it names; the factory's
 * `Transfer` a position's owner. Between reads, a position's amounts follow its vault's exchange
 * prices (Fluid's raw amounts × exchange price), so interest and prices need no position read.
 */
import { BaseError, ContractFunctionRevertedError, parseAbi } from 'viem';
import { must, mustSlice } from '../../domain/must.ts';
import { AccountReads } from './account-reads.ts';
import {
  blockTimes,
  type ChainRpc,
  eachLogs,
  firstLine,
  type SharedLogs,
  takeLogs,
  throwIfUnread,
} from './rpc.ts';
import { keepTokens, TOKEN_CALLS, type TokenMeta, tokenCalls } from './tokens.ts';

/** Fluid's placeholder for a chain's native asset (its Liquidity layer's token address for it). */
export const FLUID_NATIVE = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee';

/** The native asset's symbol where it is not ETH (priced by its `<symbol>/USD` feed). */
const NATIVE_SYMBOL: Readonly<Record<number, string>> = { 56: 'BNB', 137: 'POL', 9745: 'XPL', 43114: 'AVAX' };

export function nativeToken(chainId: number): TokenMeta {
  const symbol = NATIVE_SYMBOL[chainId] ?? 'ETH';
  return { address: FLUID_NATIVE, symbol, name: symbol, decimals: 18 };
}

/** The deployed resolvers' layout (Instadapp/fluid-contracts-public, periphery/resolvers/vault). */
export const VAULT_RESOLVER_ABI = parseAbi([
  'function getAllVaultsAddresses() view returns (address[])',
  'function LIQUIDITY_RESOLVER() view returns (address)',
  'struct Tokens { address token0; address token1; }',
  'struct ConstantViews { address liquidity; address factory; address operateImplementation; address adminImplementation; address secondaryImplementation; address deployer; address supply; address borrow; Tokens supplyToken; Tokens borrowToken; uint256 vaultId; uint256 vaultType; bytes32 supplyExchangePriceSlot; bytes32 borrowExchangePriceSlot; bytes32 userSupplySlot; bytes32 userBorrowSlot; }',
  'struct Configs { uint16 supplyRateMagnifier; uint16 borrowRateMagnifier; uint16 collateralFactor; uint16 liquidationThreshold; uint16 liquidationMaxLimit; uint16 withdrawalGap; uint16 liquidationPenalty; uint16 borrowFee; address oracle; uint256 oraclePriceOperate; uint256 oraclePriceLiquidate; address rebalancer; uint256 lastUpdateTimestamp; }',
  'struct ExchangePricesAndRates { uint256 lastStoredLiquiditySupplyExchangePrice; uint256 lastStoredLiquidityBorrowExchangePrice; uint256 lastStoredVaultSupplyExchangePrice; uint256 lastStoredVaultBorrowExchangePrice; uint256 liquiditySupplyExchangePrice; uint256 liquidityBorrowExchangePrice; uint256 vaultSupplyExchangePrice; uint256 vaultBorrowExchangePrice; uint256 supplyRateLiquidity; uint256 borrowRateLiquidity; int256 supplyRateVault; int256 borrowRateVault; int256 rewardsOrFeeRateSupply; int256 rewardsOrFeeRateBorrow; }',
  'struct TotalSupplyAndBorrow { uint256 totalSupplyVault; uint256 totalBorrowVault; uint256 totalSupplyLiquidityOrDex; uint256 totalBorrowLiquidityOrDex; uint256 absorbedSupply; uint256 absorbedBorrow; }',
  'struct LimitsAndAvailability { uint256 withdrawLimit; uint256 withdrawableUntilLimit; uint256 withdrawable; uint256 borrowLimit; uint256 borrowableUntilLimit; uint256 borrowable; uint256 borrowLimitUtilization; uint256 minimumBorrowing; }',
  'struct CurrentBranchState { uint256 status; int256 minimaTick; uint256 debtFactor; uint256 partials; uint256 debtLiquidity; uint256 baseBranchId; int256 baseBranchMinima; }',
  'struct VaultState { uint256 totalPositions; int256 topTick; uint256 currentBranch; uint256 totalBranch; uint256 totalBorrow; uint256 totalSupply; CurrentBranchState currentBranchState; }',
  'struct UserSupplyData { bool modeWithInterest; uint256 supply; uint256 withdrawalLimit; uint256 lastUpdateTimestamp; uint256 expandPercent; uint256 expandDuration; uint256 baseWithdrawalLimit; uint256 withdrawableUntilLimit; uint256 withdrawable; uint256 decayEndTimestamp; uint256 decayAmount; }',
  'struct UserBorrowData { bool modeWithInterest; uint256 borrow; uint256 borrowLimit; uint256 lastUpdateTimestamp; uint256 expandPercent; uint256 expandDuration; uint256 baseBorrowLimit; uint256 maxBorrowLimit; uint256 borrowableUntilLimit; uint256 borrowable; uint256 borrowLimitUtilization; }',
  'struct VaultEntireData { address vault; bool isSmartCol; bool isSmartDebt; ConstantViews constantVariables; Configs configs; ExchangePricesAndRates exchangePricesAndRates; TotalSupplyAndBorrow totalSupplyAndBorrow; LimitsAndAvailability limitsAndAvailability; VaultState vaultState; UserSupplyData liquidityUserSupplyData; UserBorrowData liquidityUserBorrowData; }',
  'function getVaultEntireData(address vault) view returns (VaultEntireData)',
  'function positionsNftIdOfUser(address user_) view returns (uint256[])',
  'function vaultByNftId(uint256 nftId_) view returns (address)',
]);

/**
 * The Liquidity resolver's `getOverallTokenData`: a static struct, so its first two fields are the
 * answer's first two words (the rest is not read).
 */
const LIQUIDITY_RESOLVER_ABI = parseAbi([
  'function getOverallTokenData(address token) view returns (uint256 borrowRate, uint256 supplyRate)',
]);

export const POSITIONS_RESOLVER_ABI = parseAbi([
  'error FluidVaultPositionsResolver__InvalidParams()',
  'struct UserPosition { uint256 nftId; address owner; uint256 supply; uint256 borrow; }',
  'function getVaultPositionsForNftIds(uint256[] nftIds, address vault) view returns (UserPosition[])',
]);

/** A vault's events that change its positions (vaultTypesCommon/coreModule and adminModule). */
export const FLUID_VAULT_EVENTS = parseAbi([
  'event LogOperate(address user_, uint256 nftId_, int256 colAmt_, int256 debtAmt_, address to_)',
  'event LogLiquidate(address liquidator_, uint256 colAmt_, uint256 debtAmt_, address to_)',
  'event LogAbsorb(uint256 colAbsorbedRaw_, uint256 debtAbsorbedRaw_)',
  'event LogAbsorbDustDebt(uint256[] nftIds_, uint256 absorbedDustDebt_)',
]);

/** The vault factory's ERC-721 transfers: a position changing owner. */
export const FLUID_FACTORY_EVENTS = parseAbi([
  'event Transfer(address indexed from, address indexed to, uint256 indexed id)',
]);

/** Fluid's exchange prices start at 1e12; percentages are in 1e2 (8500 = 85 %). */
const PERCENT = 10_000;

/**
 * Positions asked per `getVaultPositionsForNftIds` call: 100 answer 12.8 KB (4 words each), within
 * a deployless multicall's 24 KiB of results (200 would not fit, and would fail every pass).
 */
export const NFTS_PER_CALL = 100;

export interface FluidPositionRead {
  nftId: bigint;
  owner: string;
  /** Collateral and debt in the tokens' smallest units, with interest to the pass's block. */
  supply: bigint;
  borrow: bigint;
}

/** A position as last read, with its vault's exchange prices then (amounts follow them). */
interface KeptPosition {
  owner: string;
  supply: bigint;
  borrow: bigint;
  supplyExchangePrice: bigint;
  borrowExchangePrice: bigint;
}

export interface FluidVaultRead {
  vault: string;
  vaultId: number;
  factory: string;
  oracle: string;
  supplyToken: TokenMeta;
  borrowToken: TokenMeta;
  /** Fractions (0.85 = 85 %). */
  collateralFactor: number;
  liquidationThreshold: number;
  liquidationMaxLimit: number;
  liquidationPenalty: number;
  /** The liquidation threshold in Fluid's 1e2 percent (8500), for the exact health. */
  thresholdPercent: bigint;
  /** Debt per collateral in the tokens' smallest units, 1e27 (`getExchangeRateLiquidate`). */
  priceLiquidate: bigint;
  supplyExchangePrice: bigint;
  borrowExchangePrice: bigint;
  /** Yearly rates, fractions: the borrowers' (the vault's), the debt token's lenders' at Liquidity (null: not read). */
  borrowRate: number;
  lenderRate: number | null;
  totalSupply: bigint;
  totalBorrow: bigint;
  /** What the vault may still borrow from Liquidity (its limits and Liquidity's balance). */
  borrowable: bigint;
}

export interface FluidLiquidationRead {
  vault: string;
  txHash: string;
  logIndex: number;
  block: number;
  timestamp: number;
  liquidator: string;
  /** Collateral taken and debt repaid, in the tokens' smallest units. */
  collateral: bigint;
  debt: bigint;
}

export interface FluidRead {
  vaults: FluidVaultRead[];
  liquidations: FluidLiquidationRead[];
  failures: { id: string; error: string }[];
  /** The T1 vaults whose logs are read up to this pass's block, and their factories. */
  logged: string[];
  factories: string[];
  /** The positions kept (`${vault}:${nftId}`): read again after a restart. */
  held: string[];
  accountsRead: number;
}

/**
 * What a process keeps between passes: tokens, and each vault's positions as last read, with
 * their owners (an owner's positions in a vault are served as one).
 */
export class FluidCache {
  readonly tokens = new Map<string, TokenMeta>();
  /** The vaults the resolver listed, its Liquidity resolver, and the debt tokens rated, last pass. */
  listed: string[] = [];
  liquidity: string | null = null;
  debtTokens: string[] = [];
  /** Vaults with a DEX on a side (T2–T4: not read). */
  readonly smart = new Set<string>();
  /** Whether this process has read Fluid since it started (or since the chain was read again). */
  warm = false;
  readonly positions = new AccountReads<KeptPosition>();
  /** Per vault, each owner's positions held (ids); kept with `positions` (setPosition). */
  readonly owners = new Map<string, Map<string, Set<string>>>();
  /**
   * Per vault, the owners whose positions were read (before and after: a transfer changes the
   * owner) since a pass was last stored (cleared by the adapter's settle): what a vault handed in
   * part hands, so that a read of a pass that failed is handed by the next.
   */
  readonly ownersRead = new Map<string, Set<string>>();
  /** The positions held (`${vault}:${nftId}`), built when asked after a change. */
  #held: string[] | null = null;
  /** Position id → its vault, for the factory's transfers. */
  readonly vaultOf = new Map<string, string>();
  /** Positions whose read failed: read again next pass. */
  readonly retry = new Set<string>();
  /** Positions moved (a factory Transfer) whose vault the vault resolver refused: looked up again. */
  readonly unplaced = new Set<string>();

  clear(): void {
    this.listed = [];
    this.liquidity = null;
    this.debtTokens = [];
    this.smart.clear();
    this.warm = false;
    this.positions.clear();
    this.owners.clear();
    this.ownersRead.clear();
    this.#held = null;
    this.vaultOf.clear();
    this.retry.clear();
    this.unplaced.clear();
  }

  /** A position read at `block` (null: it holds nothing), its owner's entry moved with it. */
  setPosition(vault: string, id: string, state: KeptPosition | null, block: number): void {
    const was = this.positions.get(vault, id);
    const read = this.ownersRead.get(vault) ?? new Set<string>();
    this.ownersRead.set(vault, read);
    const owners = this.owners.get(vault) ?? new Map<string, Set<string>>();
    this.owners.set(vault, owners);
    if (was) {
      read.add(was.owner);
      const ids = owners.get(was.owner);
      if (ids?.delete(id) && ids.size === 0) owners.delete(was.owner);
    }
    if (state) {
      read.add(state.owner);
      const ids = owners.get(state.owner) ?? new Set<string>();
      owners.set(state.owner, ids.add(id));
    }
    if (owners.size === 0) this.owners.delete(vault);
    if (Boolean(was) !== Boolean(state)) this.#held = null;
    this.positions.set(vault, id, state, block);
  }

  /** Forgets a vault's positions (no longer listed). */
  forgetVault(vault: string): void {
    this.positions.forget(vault);
    this.owners.delete(vault);
    this.ownersRead.delete(vault);
    this.#held = null;
  }

  /**
   * The positions a process holds (`${vault}:${nftId}`): those read with collateral or debt, and
   * those left to read (a vault not read whole this pass).
   */
  held(): string[] {
    this.#held ??= [...this.owners].flatMap(([vault, owners]) =>
      [...owners.values()].flatMap((ids) => [...ids].map((id) => `${vault}:${id}`)),
    );
    if (this.retry.size === 0) return this.#held;
    return [...new Set([...this.retry, ...this.#held])];
  }

  /**
   * A vault's positions at its exchange prices now (`ex`), read or followed since: every one, or
   * those of `owners`.
   */
  positionsOf(
    vault: string,
    ex: { supply: bigint; borrow: bigint },
    owners?: Iterable<string>,
  ): FluidPositionRead[] {
    const out: FluidPositionRead[] = [];
    const add = (id: string, p: KeptPosition | null | undefined) => {
      if (!p) return;
      out.push({
        nftId: BigInt(id),
        owner: p.owner,
        supply: grown(p.supply, ex.supply, p.supplyExchangePrice),
        borrow: grown(p.borrow, ex.borrow, p.borrowExchangePrice),
      });
    };
    if (owners === undefined) for (const [id, p] of this.positions.of(vault)) add(id, p);
    else
      for (const owner of owners)
        for (const id of this.owners.get(vault)?.get(owner) ?? []) add(id, this.positions.get(vault, id));
    return out;
  }
}

type Log = {
  address: string;
  eventName: string;
  args: Record<string, unknown>;
  transactionHash: string;
  logIndex: number;
  blockNumber: bigint;
  topics: readonly string[];
};

type EntireData = {
  isSmartCol: boolean;
  isSmartDebt: boolean;
  constantVariables: {
    factory: string;
    supplyToken: { token0: string };
    borrowToken: { token0: string };
    vaultId: bigint;
    vaultType: bigint;
  };
  configs: {
    collateralFactor: number;
    liquidationThreshold: number;
    liquidationMaxLimit: number;
    liquidationPenalty: number;
    oracle: string;
    oraclePriceLiquidate: bigint;
  };
  exchangePricesAndRates: {
    vaultSupplyExchangePrice: bigint;
    vaultBorrowExchangePrice: bigint;
    borrowRateVault: bigint;
  };
  totalSupplyAndBorrow: { totalSupplyVault: bigint; totalBorrowVault: bigint };
  limitsAndAvailability: { borrowable: bigint };
};

/**
 * `getVaultEntireData` calls per `eth_call`: each reads the vault, its oracle and Liquidity (a
 * DEX too for a smart vault), so a chain's hundred vaults in one call could pass a node's gas cap
 * for `eth_call`. The chunks go out together (one JSON-RPC batch).
 */
const VAULTS_PER_REQUEST = 10;
/** Position calls per `eth_call` (500 positions), likewise. */
const POSITION_CALLS_PER_REQUEST = 5;
/** Owner and id lookups per `eth_call` (a new process listing the positions the store holds). */
const OWNER_CALLS_PER_REQUEST = 100;

/** Reads Fluid at `at.block` (see the module comment). */
export async function readFluid(
  rpc: ChainRpc,
  resolvers: { vaultResolver: string; positionsResolver: string },
  range: {
    /**
     * Where a vault's logs start when they were never read: on a chain read from its start, the
     * file's `fromBlock` or its factory's deployment (`vault` null: one walk for every vault); for
     * a vault found later, its own deployment (not before `fromBlock`).
     */
    start: (factory: string, vault: string | null) => Promise<bigint>;
    /** Where the vaults already read resume (null: none has been). */
    resume: bigint | null;
    block: bigint;
    /** The last block whose logs are read (the block, unless a first sync goes step by step). */
    logsTo?: bigint;
  },
  known: {
    /** The T1 vaults whose logs were read up to resume, and their factories. */
    logged: readonly string[];
    factories: readonly string[];
    /**
     * Positions held when the checkpoint was written that it names (those of vaults not served:
     * read again by a new process).
     */
    positions: readonly { vault: string; nftId: string }[];
    /**
     * The owners of the positions the store holds, by vault (a new process lists their positions
     * through the vault resolver and reads them again; empty for a process that has read Fluid).
     */
    owners: readonly { vault: string; owner: string }[];
  },
  cache: FluidCache,
  shared?: SharedLogs,
): Promise<FluidRead> {
  const failures: FluidRead['failures'] = [];
  const chainId = rpc.chainId;
  const at = { blockNumber: range.block, allowFailure: true } as const;
  const resolver = resolvers.vaultResolver.toLowerCase() as `0x${string}`;
  type Result = { status: 'success' | 'failure'; result?: unknown; error?: Error | undefined };
  /** The calls at the block, `perRequest` per `eth_call` (the requests sent together); none for no calls. */
  const multicall = async (contracts: readonly unknown[], perRequest = Number.POSITIVE_INFINITY) => {
    if (contracts.length === 0) return [];
    const options = await rpc.multicallOptions('large');
    const chunks: (readonly unknown[])[] = [];
    const size = Math.min(contracts.length, perRequest);
    for (let k = 0; k < contracts.length; k += size) chunks.push(contracts.slice(k, k + size));
    const out = (
      await Promise.all(
        chunks.map((chunk) => rpc.multicall({ ...at, ...options, contracts: chunk as never })),
      )
    ).flat() as Result[];
    throwIfUnread(out);
    return out;
  };
  const entireCall = (vault: string) => ({
    address: resolver,
    abi: VAULT_RESOLVER_ABI,
    functionName: 'getVaultEntireData',
    args: [vault],
  });
  const rateCall = (liquidity: string, token: string) => ({
    address: liquidity,
    abi: LIQUIDITY_RESOLVER_ABI,
    functionName: 'getOverallTokenData',
    args: [token],
  });

  // One round in steady state: the vault list, the Liquidity resolver, the entire data of the T1
  // vaults the last pass listed (a vault's type never changes: smart ones are not read again) and
  // their debt tokens' rates. Vaults and tokens new to the process take one or two more.
  const entire = new Map<string, Result>();
  const rates = new Map<string, Result>();
  const listedBefore = cache.listed.filter((vault) => !cache.smart.has(vault));
  const liquidityBefore = cache.liquidity;
  const ratedBefore = liquidityBefore ? cache.debtTokens : [];
  const first = await multicall(
    [
      { address: resolver, abi: VAULT_RESOLVER_ABI, functionName: 'getAllVaultsAddresses' },
      { address: resolver, abi: VAULT_RESOLVER_ABI, functionName: 'LIQUIDITY_RESOLVER' },
      ...(liquidityBefore ? ratedBefore.map((token) => rateCall(liquidityBefore, token)) : []),
      ...listedBefore.map(entireCall),
    ],
    VAULTS_PER_REQUEST,
  );
  const [list, liquidityResolver] = mustSlice(first, 0, 2, 'vault resolver answers');
  ratedBefore.forEach((token, i) => {
    rates.set(token, must(first[2 + i], `rates answer of ${token}`));
  });
  listedBefore.forEach((vault, i) => {
    entire.set(vault, must(first[2 + ratedBefore.length + i], `answer of vault ${vault}`));
  });
  // A resolver that does not list: nothing is served this pass (the source keeps the vaults' last
  // records), but the logs of the vaults read before are still read (their positions are read
  // once the vaults are again), so that no block goes unread.
  const listed = list.status === 'success';
  if (!listed) failures.push({ id: resolver, error: `vault resolver ${resolver}: ${firstLine(list.error)}` });
  const addresses = listed ? (list.result as readonly string[]).map((a) => a.toLowerCase()) : [];
  const liquidity =
    liquidityResolver.status === 'success' ? (liquidityResolver.result as string).toLowerCase() : null;
  // Another Liquidity resolver than the one asked: its rates are asked again.
  if (liquidity !== cache.liquidity) rates.clear();
  if (listed) {
    cache.listed = addresses;
    // Positions of vaults no longer listed are forgotten (not read, not held).
    const still = new Set(addresses);
    for (const key of cache.retry)
      if (!still.has(key.slice(0, key.lastIndexOf(':')))) cache.retry.delete(key);
    for (const vault of [...cache.positions.groupKeys()]) if (!still.has(vault)) cache.forgetVault(vault);
  }
  cache.liquidity = liquidity;
  const unlisted = addresses.filter((vault) => !entire.has(vault) && !cache.smart.has(vault));
  const second = await multicall(unlisted.map(entireCall), VAULTS_PER_REQUEST);
  unlisted.forEach((vault, i) => {
    entire.set(vault, must(second[i], `answer of vault ${vault}`));
  });
  const t1: { vault: string; d: EntireData }[] = [];
  for (const vault of addresses) {
    if (cache.smart.has(vault)) continue;
    const r = must(entire.get(vault), `answer of vault ${vault}`);
    if (r.status !== 'success') {
      failures.push({ id: vault, error: `vault ${vault}: ${firstLine(r.error)}` });
      continue;
    }
    const d = r.result as EntireData;
    if (d.isSmartCol || d.isSmartDebt) cache.smart.add(vault);
    else if (d.constantVariables.vaultType === 0n || BigInt(d.constantVariables.factory) === 0n)
      // The resolver's answer for an address it does not know as a vault: zeros.
      failures.push({
        id: vault,
        error: `vault ${vault}: the resolver knows no vault there (its answer is empty)`,
      });
    else t1.push({ vault, d });
  }
  const smart = addresses.filter((vault) => cache.smart.has(vault)).length;
  if (smart > 0)
    failures.push({
      id: 'smart-vaults',
      error: `${smart} vaults with a DEX as collateral or debt (T2–T4: DEX shares, not tokens) are not read`,
    });

  // Tokens new to the process (the native placeholder is the chain's native asset), and the rates
  // of debt tokens not asked yet.
  const newTokens = [
    ...new Set(
      t1.flatMap(({ d }) => [d.constantVariables.supplyToken.token0, d.constantVariables.borrowToken.token0]),
    ),
  ]
    .map((a) => a.toLowerCase())
    .filter((a) => a !== FLUID_NATIVE && !cache.tokens.has(a)) as `0x${string}`[];
  const debtTokens = [...new Set(t1.map(({ d }) => d.constantVariables.borrowToken.token0.toLowerCase()))];
  const unrated = liquidity ? debtTokens.filter((token) => !rates.has(token)) : [];
  const third = await multicall([
    ...tokenCalls(newTokens),
    ...(liquidity ? unrated.map((token) => rateCall(liquidity, token)) : []),
  ]);
  keepTokens(newTokens, third, cache.tokens);
  unrated.forEach((token, i) => {
    rates.set(token, must(third[newTokens.length * TOKEN_CALLS + i], `rates answer of ${token}`));
  });
  if (listed) cache.debtTokens = liquidity ? debtTokens : [];
  const lenderRate = new Map<string, number>();
  if (liquidity)
    for (const token of debtTokens) {
      const r = must(rates.get(token), `rates answer of ${token}`);
      if (r.status === 'success') lenderRate.set(token, Number((r.result as readonly bigint[])[1]) / PERCENT);
      else
        failures.push({
          id: `rates:${token}`,
          error: `Liquidity's rates of ${token}: ${firstLine(r.error)}: its lenders' APY is served as 0`,
        });
    }
  else if (t1.length > 0)
    failures.push({
      id: 'rates',
      error: `vault resolver ${resolver}: no Liquidity resolver (${firstLine(liquidityResolver.error)}): lenders' APYs are served as 0`,
    });
  const tokenOf = (address: string): TokenMeta | null => {
    const a = address.toLowerCase();
    return a === FLUID_NATIVE ? nativeToken(chainId) : (cache.tokens.get(a) ?? null);
  };

  // Logs: the vaults read before resume (in the pass's shared read, whether they are read whole
  // this pass or not), the others from their start.
  const loggedBefore = new Set(range.resume === null ? [] : known.logged.map((v) => v.toLowerCase()));
  // A new process: the positions of the owners the store holds, listed by the vault resolver
  // (the checkpoint does not name them). An owner whose list is refused has its vaults read from
  // their start, their logs naming every position again.
  const ownedIds = await ownersPositions(known.owners, resolver, multicall);
  for (const vault of ownedIds.unlisted) loggedBefore.delete(vault);
  // Those still listed (all of them when the list failed: it may list them again).
  const listedSet = new Set(addresses);
  const resumed = [...loggedBefore].filter((vault) => !listed || listedSet.has(vault));
  const fresh = t1.filter(({ vault }) => !loggedBefore.has(vault));
  const factories = [
    ...new Set([
      ...(range.resume === null ? [] : known.factories),
      ...t1.map(({ d }) => d.constantVariables.factory.toLowerCase()),
    ]),
  ];
  const factorySet = new Set(factories);
  // The positions to read: named by logs, held in the checkpoint and not read by this process,
  // left to read. Those of a vault not read whole this pass are left to read (kept in the
  // checkpoint): read once it is.
  const served = new Set(t1.map(({ vault }) => vault));
  const touched = new Map<string, Set<string>>();
  const touch = (vault: string, nftId: string) => {
    // (A vault with a DEX on a side is not read: its positions are not held.)
    if (cache.smart.has(vault)) {
      cache.retry.delete(`${vault}:${nftId}`);
      return;
    }
    if (!served.has(vault)) {
      if (listed ? listedSet.has(vault) : loggedBefore.has(vault)) cache.retry.add(`${vault}:${nftId}`);
      return;
    }
    const ids = touched.get(vault) ?? new Set<string>();
    touched.set(vault, ids);
    ids.add(nftId);
  };
  const liquidated: Omit<FluidLiquidationRead, 'timestamp'>[] = [];
  const wholeVault = new Set<string>();
  const transferred = new Set<string>();
  // One range of logs at a time (a first sync walks millions of them): what they name is kept,
  // not the logs.
  const take = (logs: readonly Log[]) => {
    for (const log of logs) {
      const address = log.address.toLowerCase();
      const args = log.args;
      switch (log.eventName) {
        case 'LogOperate':
          touch(address, String(args.nftId_));
          cache.vaultOf.set(String(args.nftId_), address);
          break;
        case 'LogAbsorbDustDebt':
          for (const id of args.nftIds_ as readonly bigint[]) touch(address, String(id));
          break;
        case 'LogLiquidate':
          wholeVault.add(address);
          liquidated.push({
            vault: address,
            txHash: log.transactionHash.toLowerCase(),
            logIndex: log.logIndex,
            block: Number(log.blockNumber),
            liquidator: String(args.liquidator_).toLowerCase(),
            collateral: args.colAmt_ as bigint,
            debt: args.debtAmt_ as bigint,
          });
          break;
        case 'LogAbsorb':
          wholeVault.add(address);
          break;
        case 'Transfer': {
          // (A mint: its vault's LogOperate names it, if it is a vault read.)
          if (!factorySet.has(address) || BigInt(String(args.from)) === 0n) break;
          const vault = cache.vaultOf.get(String(args.id));
          if (vault) touch(vault, String(args.id));
          // (A position this process holds no vault of: one moved while it was stopped, a
          // mint whose LogOperate follows, another vault's: looked up after the logs.)
          else transferred.add(String(args.id));
          break;
        }
      }
    }
  };
  const logsTo = range.logsTo ?? range.block;
  if (range.resume !== null && range.resume <= logsTo && resumed.length > 0) {
    const events = [...FLUID_VAULT_EVENTS, ...FLUID_FACTORY_EVENTS];
    const watched = [...resumed, ...factories];
    await takeLogs(
      rpc,
      shared,
      {
        what: 'fluid',
        address: watched as `0x${string}`[],
        events,
        fromBlock: range.resume,
        toBlock: logsTo,
      },
      take,
    );
  }
  // Never-read vaults, grouped by their start (on a chain read from its start: one factory, one
  // start, on a real chain; a vault found later, from its deployment: its own short walk; one
  // whose owners' positions could not be listed, from the start).
  const byStart = new Map<bigint, string[]>();
  const starts = await Promise.all(
    fresh.map(({ vault, d }) =>
      range.start(
        d.constantVariables.factory.toLowerCase(),
        range.resume === null || ownedIds.unlisted.has(vault) ? null : vault,
      ),
    ),
  );
  fresh.forEach(({ vault }, i) => {
    const start = must(starts[i], 'start');
    byStart.set(start, [...(byStart.get(start) ?? []), vault]);
  });
  for (const [start, vaults] of byStart)
    if (start <= logsTo)
      await eachLogs(
        rpc,
        {
          what: 'fluid',
          address: vaults as `0x${string}`[],
          events: FLUID_VAULT_EVENTS,
          fromBlock: start,
          toBlock: logsTo,
        },
        (logs) => take(logs as unknown as Log[]),
      );

  // Positions moved whose vault the logs did not tell: their vaults, by the vault resolver (one
  // refused is looked up again next pass).
  const unplaced = [...new Set([...transferred, ...cache.unplaced])].filter((id) => !cache.vaultOf.has(id));
  const placed = await vaultsOfIds(unplaced, resolver, multicall);
  const wasPlaced = new Set(placed.map((p) => p.nftId));
  cache.unplaced.clear();
  for (const id of unplaced)
    if (!wasPlaced.has(id)) {
      cache.unplaced.add(id);
      failures.push({
        id: `transfer:${id}`,
        error: `position ${id} changed owner, and the vault resolver does not say its vault: looked up again next pass`,
      });
    }
  for (const p of [...known.positions, ...ownedIds.positions, ...placed])
    if (!cache.positions.has(p.vault, p.nftId)) touch(p.vault.toLowerCase(), p.nftId);
  for (const key of [...cache.retry]) {
    const split = key.lastIndexOf(':');
    touch(key.slice(0, split), key.slice(split + 1));
  }
  for (const vault of wholeVault) for (const [id, p] of cache.positions.of(vault)) if (p) touch(vault, id);

  // The touched positions, NFTS_PER_CALL per call. The resolver refuses a whole call when one id
  // is not of the vault (a position minted in orphaned blocks, whose id another vault took): a
  // refused call is asked again in halves, and an id refused alone is no position of the vault.
  let calls: { vault: string; ids: string[] }[] = [];
  for (const [vault, ids] of touched) {
    const all = [...ids];
    for (let k = 0; k < all.length; k += NFTS_PER_CALL)
      calls.push({ vault, ids: all.slice(k, k + NFTS_PER_CALL) });
  }
  const positionsResolver = resolvers.positionsResolver.toLowerCase() as `0x${string}`;
  const exchange = new Map(t1.map(({ vault, d }) => [vault, d.exchangePricesAndRates]));
  let accountsRead = 0;
  while (calls.length > 0) {
    const answers = await multicall(
      calls.map((c) => ({
        address: positionsResolver,
        abi: POSITIONS_RESOLVER_ABI,
        functionName: 'getVaultPositionsForNftIds',
        args: [c.ids.map(BigInt), c.vault],
      })),
      POSITION_CALLS_PER_REQUEST,
    );
    const again: typeof calls = [];
    calls.forEach((c, k) => {
      const r = must(answers[k], 'positions answer');
      if (r.status !== 'success') {
        if (c.ids.length > 1) {
          const half = Math.ceil(c.ids.length / 2);
          again.push(
            { vault: c.vault, ids: c.ids.slice(0, half) },
            { vault: c.vault, ids: c.ids.slice(half) },
          );
          return;
        }
        const key = `${c.vault}:${c.ids[0]}`;
        // The resolver's own word that the id is not of the vault: no position there. Any other
        // refusal (the vault's exchange prices not computed) leaves it to read again.
        const notOfVault =
          r.error instanceof BaseError &&
          r.error.walk(
            (e) =>
              e instanceof ContractFunctionRevertedError &&
              e.data?.errorName === 'FluidVaultPositionsResolver__InvalidParams',
          ) !== null;
        if (notOfVault) {
          cache.retry.delete(key);
          cache.setPosition(c.vault, must(c.ids[0], 'position id'), null, Number(range.block));
        } else cache.retry.add(key);
        failures.push({
          id: key,
          error: `position ${c.ids[0]} of vault ${c.vault}: ${firstLine(r.error)}${notOfVault ? ' (not a position of the vault: none)' : ': read again next pass'}`,
        });
        return;
      }
      const ex = must(exchange.get(c.vault), `exchange prices of vault ${c.vault}`);
      for (const p of r.result as readonly {
        nftId: bigint;
        owner: string;
        supply: bigint;
        borrow: bigint;
      }[]) {
        const id = String(p.nftId);
        const empty = p.supply === 0n && p.borrow === 0n;
        accountsRead++;
        cache.retry.delete(`${c.vault}:${id}`);
        if (empty) cache.vaultOf.delete(id);
        else cache.vaultOf.set(id, c.vault);
        cache.setPosition(
          c.vault,
          id,
          empty
            ? null
            : {
                owner: p.owner.toLowerCase(),
                supply: p.supply,
                borrow: p.borrow,
                supplyExchangePrice: ex.vaultSupplyExchangePrice,
                borrowExchangePrice: ex.vaultBorrowExchangePrice,
              },
          Number(range.block),
        );
      }
    });
    calls = again;
  }

  const vaults: FluidVaultRead[] = [];
  for (const { vault, d } of t1) {
    const supplyToken = tokenOf(d.constantVariables.supplyToken.token0);
    const borrowToken = tokenOf(d.constantVariables.borrowToken.token0);
    if (!supplyToken || !borrowToken) {
      failures.push({
        id: vault,
        error: `vault ${vault}: its ${supplyToken ? 'debt' : 'collateral'} token does not answer decimals()`,
      });
      continue;
    }
    const ex = d.exchangePricesAndRates;
    const c = d.configs;
    vaults.push({
      vault,
      vaultId: Number(d.constantVariables.vaultId),
      factory: d.constantVariables.factory.toLowerCase(),
      oracle: c.oracle.toLowerCase(),
      supplyToken,
      borrowToken,
      collateralFactor: c.collateralFactor / PERCENT,
      liquidationThreshold: c.liquidationThreshold / PERCENT,
      liquidationMaxLimit: c.liquidationMaxLimit / PERCENT,
      liquidationPenalty: c.liquidationPenalty / PERCENT,
      thresholdPercent: BigInt(c.liquidationThreshold),
      priceLiquidate: c.oraclePriceLiquidate,
      supplyExchangePrice: ex.vaultSupplyExchangePrice,
      borrowExchangePrice: ex.vaultBorrowExchangePrice,
      borrowRate: Number(ex.borrowRateVault) / PERCENT,
      lenderRate: lenderRate.get(borrowToken.address) ?? null,
      totalSupply: d.totalSupplyAndBorrow.totalSupplyVault,
      totalBorrow: d.totalSupplyAndBorrow.totalBorrowVault,
      borrowable: d.limitsAndAvailability.borrowable,
    });
  }
  const times = await blockTimes(
    rpc,
    liquidated.map((l) => BigInt(l.block)),
  );
  cache.warm = true;
  return {
    vaults,
    liquidations: liquidated.map((l) => ({
      ...l,
      timestamp: must(times.get(BigInt(l.block)), `time of block ${l.block}`),
    })),
    failures,
    // Read up to the block: the vaults resumed and those read from their start.
    logged: [...new Set([...resumed, ...fresh.map(({ vault }) => vault)])],
    factories,
    held: cache.held(),
    accountsRead,
  };
}

/** An amount read at exchange price `then`, at exchange price `now` (Fluid's raw amount × price). */
function grown(amount: bigint, now: bigint, then: bigint): bigint {
  return then === 0n || now === then ? amount : (amount * now) / then;
}

/**
 * The positions of `owners` through the vault resolver at the pass's block: each owner's ids
 * (`positionsNftIdOfUser`), then each id's vault (`vaultByNftId`). `unlisted`: the vaults of the
 * owners whose ids were refused (read from their start instead).
 */
async function ownersPositions(
  owners: readonly { vault: string; owner: string }[],
  resolver: `0x${string}`,
  multicall: (
    contracts: readonly unknown[],
    perRequest?: number,
  ) => Promise<{ status: 'success' | 'failure'; result?: unknown }[]>,
): Promise<{ positions: { vault: string; nftId: string }[]; unlisted: Set<string> }> {
  const vaultsOf = new Map<string, Set<string>>();
  for (const { vault, owner } of owners) {
    const set = vaultsOf.get(owner) ?? new Set<string>();
    vaultsOf.set(owner, set.add(vault.toLowerCase()));
  }
  const list = [...vaultsOf.keys()];
  const idsOf = await multicall(
    list.map((owner) => ({
      address: resolver,
      abi: VAULT_RESOLVER_ABI,
      functionName: 'positionsNftIdOfUser',
      args: [owner],
    })),
    OWNER_CALLS_PER_REQUEST,
  );
  const unlisted = new Set<string>();
  const refused = (owner: string) => {
    for (const vault of must(vaultsOf.get(owner), 'owner vaults')) unlisted.add(vault);
  };
  const ids: { id: bigint; owner: string }[] = [];
  list.forEach((owner, k) => {
    const r = must(idsOf[k], 'ids answer');
    if (r.status === 'success') for (const id of r.result as readonly bigint[]) ids.push({ id, owner });
    else refused(owner);
  });
  const placed = await vaultsOfIds(
    ids.map(({ id }) => String(id)),
    resolver,
    multicall,
  );
  const found = new Set(placed.map((p) => p.nftId));
  for (const { id, owner } of ids) if (!found.has(String(id))) refused(owner);
  return { positions: placed, unlisted };
}

/** Each position's vault (`vaultByNftId`); one refused is left out. */
async function vaultsOfIds(
  ids: readonly string[],
  resolver: `0x${string}`,
  multicall: (
    contracts: readonly unknown[],
    perRequest?: number,
  ) => Promise<{ status: 'success' | 'failure'; result?: unknown }[]>,
): Promise<{ vault: string; nftId: string }[]> {
  const vaults = await multicall(
    ids.map((id) => ({
      address: resolver,
      abi: VAULT_RESOLVER_ABI,
      functionName: 'vaultByNftId',
      args: [BigInt(id)],
    })),
    OWNER_CALLS_PER_REQUEST,
  );
  const out: { vault: string; nftId: string }[] = [];
  ids.forEach((id, k) => {
    const r = must(vaults[k], 'vault answer');
    if (r.status === 'success') out.push({ vault: String(r.result).toLowerCase(), nftId: id });
  });
  return out;
}
