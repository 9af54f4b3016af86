import type { OracleProvider, OracleType, Protocol, RiskLevel } from './enums.ts';

/**
 * One price feed behind an oracle, with what is known of its update clock.
 * `lastUpdateTimestamp` is unix seconds. `updateIntervalSeconds` is how often the feed is
 * observed to update (sandbox data simulates it; null means the feed stopped updating at
 * `lastUpdateTimestamp`). `heartbeatSeconds` is the feed's promised maximum interval.
 */
export interface OracleFeedRecord {
  address: string;
  description: string;
  pair: string;
  heartbeatSeconds: number;
  lastUpdateTimestamp: number;
  updateIntervalSeconds: number | null;
  /**
   * The relative price move that makes the feed publish a round before its heartbeat (0.005 =
   * 0.5 %); null or absent when unknown.
   */
  deviationThreshold?: number | null;
}

export interface OracleRecord {
  address: string;
  type: OracleType;
  provider: OracleProvider;
  feeds: OracleFeedRecord[];
  isComposite: boolean;
  warnings: string[] | null;
}

export interface StrategyInfo {
  type: string;
  label: string;
  description: string;
  riskLevel: RiskLevel;
  color: string;
  icon: string;
}

/** Oracle freshness at a moment (docs/decisions.md "Oracle health"). Unix seconds, ratio dimensionless. */
export interface OracleHealth {
  lastUpdateTimestamp: number;
  secondsSinceUpdate: number;
  expectedHeartbeatSeconds: number;
  isStale: boolean;
  stalenessRatio: number;
}

/**
 * Where a market's price of a token comes from: a Chainlink feed of the sources file (its
 * address; `X / ETH × ETH / USD` for a price through ETH), the market's own oracle, or an API
 * (no address: the Morpho API's `priceUsd`).
 */
export interface PriceSourceRecord {
  kind: 'feed' | 'oracle' | 'api';
  address: string | null;
  description: string;
}

/**
 * A lending market as stored: the primary facts. Derived fields of the API (available,
 * utilization, maxLeverage, strategy, oracle health) are computed from these by domain math.
 * USD amounts are plain numbers; APYs are decimals (0.042 = 4.2 %); lltv is 0 to 1.
 *
 * A price no source could state is null, never 0 (docs/decisions.md "Real sources"): a null `loanPrice` makes `supply` and
 * `borrow` null too (no USD amount of the loan token can be stated; `supplyAssets` and
 * `borrowAssets` say how much there is). A market with a null price has no positions served.
 */
export interface MarketRecord {
  uniqueKey: string;
  protocol: Protocol;
  chainId: number;
  label: string | null;
  collateral: string;
  collateralName: string;
  collateralAddress: string;
  loan: string;
  loanName: string;
  loanAddress: string;
  /** The tokens' decimals (ERC-20 `decimals()`); null or absent when unknown. */
  collateralDecimals?: number | null;
  loanDecimals?: number | null;
  collateralPrice: number | null;
  loanPrice: number | null;
  supply: number | null;
  borrow: number | null;
  /**
   * Supplied and borrowed amounts in loan-token units, as the source read them; absent when
   * not recorded (then they are supply and borrow over the loan price, when it is known).
   */
  supplyAssets?: number | null;
  borrowAssets?: number | null;
  /**
   * The market's borrow index as its source read it: what one unit of the protocol's own debt
   * accounting (a Morpho borrow share, Aave's scaled debt, a Comet principal, an Euler or Fluid
   * debt share) owes now, in any fixed unit. Absent where not recorded. A market change's index
   * over the dataset's is the interest its positions' debt accrued since they were stated.
   */
  borrowIndex?: number | null;
  /**
   * The market's collateral index, where collateral earns interest: what one unit of the
   * protocol's own collateral accounting (Aave's scaled aToken balance) is worth now, in any
   * fixed unit. Absent where not recorded (collateral that does not accrue). A market change's
   * index over the dataset's is the interest its positions' collateral earned since they were
   * stated.
   */
  collateralIndex?: number | null;
  supplyApy: number;
  borrowApy: number;
  supplyRewardsApy: number;
  borrowRewardsApy: number;
  rewardTokens: string[];
  lltv: number;
  vaultSymbol: string | null;
  vaultAddress: string | null;
  governor: string | null;
  oracle: OracleRecord | null;
  /** Where its loan and collateral prices come from; absent when not recorded (sandbox data). */
  loanPriceSource?: PriceSourceRecord | null;
  collateralPriceSource?: PriceSourceRecord | null;
}

/**
 * One borrower's position in one market. USD amounts; healthFactor dimensionless
 * (collateralUsd x lltv / borrowUsd, below 1 liquidatable); Infinity when there is no debt.
 */
export interface PositionRecord {
  marketKey: string;
  user: string;
  collateralUsd: number;
  borrowUsd: number;
  supplyUsd: number;
  healthFactor: number;
}

/**
 * A token's price move, as the ratio of its price now to its price in the snapshot: each
 * market scales its own snapshot price of the token (sources may price one token slightly
 * differently in different markets; a ratio moves them all alike). The token is its chain and
 * lower-case address.
 */
export interface PriceChange {
  chainId: number;
  token: string;
  ratio: number;
}

/**
 * A market's balances and rates as its source sees them now, in USD at the market record's
 * prices (prices move apart, as PriceChange), and its borrow index over the one its positions'
 * debt is stated at (interest accrued on every position of the market alike).
 */
export interface MarketStateChange {
  marketKey: string;
  supply: number;
  borrow: number;
  supplyApy: number;
  borrowApy: number;
  debtIndex: number;
}

/**
 * A feed's latest update as a simulation knows it at an instant: every oracle listing the
 * feed (its chain and lower-case address) reads `lastUpdateTimestamp` (unix seconds) as its
 * last update, with no cadence projected beyond it (the next update comes with the next step).
 */
export interface FeedUpdate {
  chainId: number;
  feed: string;
  lastUpdateTimestamp: number;
}

/** A vault's supply into one market. */
export interface VaultAllocation {
  /** The market's uniqueKey. */
  marketKey: string;
  /** The fraction of the market's supply that is the vault's (0 to 1): its USD follows the market. */
  supplyShare: number;
  /**
   * The most the vault may supply to the market, in units of the vault's asset as its source read
   * it (valued at the market's price now); null: no cap.
   */
  supplyCap?: number | null;
  /**
   * Where the cap was written in USD instead (the sandbox's, records of before): USD at the
   * prices then; null or absent: no cap.
   */
  supplyCapUsd?: number | null;
}

/**
 * A vault that lends one asset into markets: a Morpho vault (MetaMorpho) allocating to Morpho
 * markets, run by its curator; an Euler vault lending to the borrowers of its collateral
 * pairs, run by its governor. Addresses lower-case; fee 0 to 1.
 */
export interface VaultRecord {
  protocol: 'morpho' | 'euler';
  chainId: number;
  address: string;
  name: string;
  symbol: string;
  assetAddress: string;
  assetSymbol: string;
  /** Morpho: the curator; null when unknown. */
  curator: string | null;
  /** Euler: the governor; null when unknown. */
  governor: string | null;
  /** Fee on the interest earned (Morpho performance fee, Euler interest fee), 0 to 1. */
  fee: number;
  allocations: VaultAllocation[];
  /**
   * A Morpho vault read from its contract (MetaMorpho): its roles, queues and what is pending;
   * absent where its source does not read them (the Morpho API, the sandbox, Euler vaults).
   */
  governance?: MorphoVaultGovernance;
}

/**
 * What a MetaMorpho vault's contract states beyond its allocations, at the block it was read.
 * Market keys are uniqueKeys; amounts in units of the vault's asset; times unix seconds.
 */
export interface MorphoVaultGovernance {
  owner: string;
  /** Null: none (the zero address). */
  guardian: string | null;
  feeRecipient: string | null;
  timelockSeconds: number;
  /** The markets deposits go to, in order. */
  supplyQueue: string[];
  /** The markets withdrawals come from, in order: every market the vault has enabled. */
  withdrawQueue: string[];
  /**
   * The vault's supply in its markets (its shares at each market's state when the record was
   * written, idle markets included): MetaMorpho's realTotalAssets.
   */
  totalAssets: number;
  /**
   * Its part in idle markets (no collateral: no borrower, no interest), which no allocation holds;
   * absent in a record stored before it was read (none counted).
   */
  idleAssets?: number;
  /** MetaMorpho v1.1's lost assets (bad debt its markets realized against it); null: v1.0. */
  lostAssets: number | null;
  /** Cap raises waiting for the timelock: the new cap (null: no cap) and when it may be accepted. */
  pendingCaps: { marketKey: string; cap: number | null; validAt: number }[];
  /** Markets submitted for removal (their cap set to 0) and when they may be removed. */
  pendingRemovals: { marketKey: string; removableAt: number }[];
  pendingTimelock: { seconds: number; validAt: number } | null;
  /** A new guardian (null: none) and when it may be accepted. */
  pendingGuardian: { guardian: string | null; validAt: number } | null;
  /** The block its contract was last read at (its state changes only by its own transactions). */
  block: number;
}

/** A market record whose tokens both have a USD price (every sandbox market; most live ones). */
export type PricedMarketRecord = MarketRecord & {
  collateralPrice: number;
  loanPrice: number;
  supply: number;
  borrow: number;
};

/**
 * What a market's positions are stated at, from its record in a dataset: its tokens' prices,
 * its borrow index (their debt) and its collateral index (their collateral); null when not
 * recorded.
 */
export interface StatedAt {
  collateral: number | null;
  loan: number | null;
  borrowIndex: number | null;
  collateralIndex: number | null;
}

export function statedAt(m: MarketRecord): StatedAt {
  return {
    collateral: m.collateralPrice,
    loan: m.loanPrice,
    borrowIndex: m.borrowIndex ?? null,
    collateralIndex: m.collateralIndex ?? null,
  };
}

/** Whether both of a market's tokens have a USD price (then its USD amounts are known too). */
export function isPriced<T extends { collateralPrice: number | null; loanPrice: number | null }>(
  m: T,
): m is T & { collateralPrice: number; loanPrice: number; supply: number; borrow: number } {
  return m.collateralPrice !== null && m.loanPrice !== null;
}

/**
 * A market's balances as its record holds them: in loan-token units as read, and in USD at the
 * loan token's price, null when that price is unknown ("Real sources" (docs/decisions.md): never stated at 0).
 */
export function loanBalances(
  supplyAssets: number,
  borrowAssets: number,
  loanUsd: number | null,
): Pick<MarketRecord, 'supply' | 'borrow' | 'supplyAssets' | 'borrowAssets'> {
  return {
    supply: loanUsd === null ? null : supplyAssets * loanUsd,
    borrow: loanUsd === null ? null : borrowAssets * loanUsd,
    supplyAssets,
    borrowAssets,
  };
}
