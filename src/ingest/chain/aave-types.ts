/**
 * What an Aave v3 pool's read is made of (aave.ts reads it): the ABI beyond aave-address-book's
 * (v3.0 and v3.1's events, the scaled-balance views), the events that name accounts, the shapes
 * of reserves, e-mode categories, accounts and liquidations as read, and what a chain source keeps
 * of its pools between passes.
 */
import { IAToken_ABI } from '@aave-dao/aave-address-book/abis/IAToken';
import { IPool_ABI } from '@aave-dao/aave-address-book/abis/IPool';
import { type AbiEvent, parseAbi } from 'viem';
import { AccountReads } from './account-reads.ts';
import type { MulticallOptions } from './rpc.ts';
import type { TokenMeta } from './tokens.ts';

/** What v3.0 and v3.1 pools also emit (removed with stable debt), and the scaled-balance views. */
export const extraAbi = parseAbi([
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

export type Hex = `0x${string}`;

export const RAY = 10n ** 27n;

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
export interface ReserveTokens {
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
  /** The accounts kept, by user, as last read (null: none held, or not read yet in this pool). */
  accounts: ReadonlyMap<string, AaveAccount | null>;
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
  /** The accounts read this pass, as `${pool}:${user}` (those whose reads failed are to retry). */
  read: ReadonlySet<string>;
  /** A pool's accounts with a debt (served or not), and those not read yet. */
  holders(pool: string): { pool: string; user: string }[];
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

export type Results = readonly {
  status: 'success' | 'failure';
  result?: unknown;
  error?: Error | undefined;
}[];
export type At = { blockNumber: bigint; allowFailure: true } & MulticallOptions;
