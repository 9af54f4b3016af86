/**
 * Compound v3 (Comet) on one chain: each comet's configuration (base token and price feed,
 * collateral assets with their factors, the rate curve), its totals with interest accrued to the
 * block, the price of every asset as the comet itself reads it (`getPrice`), the accounts that
 * its events named, and its absorptions (liquidations). No npm package ships Comet's ABI: the few
 * functions and events read are declared here (its rewards' in compound-rewards.ts), with the
 * signatures of compound-finance/comet.
 *
 * Comet's arithmetic is followed exactly: a base balance is a principal times an index
 * (`principal × index / 1e15`), the indices accrue per second on the kinked rate curve at the
 * utilization of the stored totals, prices have 8 decimals, factors 18. So an account's debt
 * follows from its principal and the comet's totals at every block: a pass after the first reads
 * each comet's totals and prices and only the accounts that new events touched (a CometCache
 * keeps the others), and the debts equal `borrowBalanceOf`.
 */
import { type AbiEvent, type GetLogsReturnType, parseAbi, zeroAddress } from 'viem';
import { must, mustSlice } from '../../domain/must.ts';
import { AccountReads, accountAnswered, groupOf } from './account-reads.ts';
import {
  type CometRewards,
  cometRewards,
  REWARD_CALLS,
  type RewardsAnswer,
  rewardCalls,
  rewardsAnswer,
} from './compound-rewards.ts';
import {
  blockTimes,
  type ChainRpc,
  firstLine,
  type MulticallOptions,
  type SharedLogs,
  takeLogs,
  throwIfUnread,
  walksByRange,
} from './rpc.ts';
import { keepTokens, TOKEN_CALLS, type TokenMeta, tokenCalls } from './tokens.ts';

export const cometAbi = parseAbi([
  'function baseToken() view returns (address)',
  'function baseTokenPriceFeed() view returns (address)',
  'function numAssets() view returns (uint8)',
  'struct AssetInfo { uint8 offset; address asset; address priceFeed; uint64 scale; uint64 borrowCollateralFactor; uint64 liquidateCollateralFactor; uint64 liquidationFactor; uint128 supplyCap; }',
  'function getAssetInfo(uint8 i) view returns (AssetInfo)',
  'function getPrice(address priceFeed) view returns (uint256)',
  'struct TotalsBasic { uint64 baseSupplyIndex; uint64 baseBorrowIndex; uint64 trackingSupplyIndex; uint64 trackingBorrowIndex; uint104 totalSupplyBase; uint104 totalBorrowBase; uint40 lastAccrualTime; uint8 pauseFlags; }',
  'function totalsBasic() view returns (TotalsBasic)',
  'function userBasic(address) view returns (int104 principal, uint64 baseTrackingIndex, uint64 baseTrackingAccrued, uint16 assetsIn, uint8 _reserved)',
  'function collateralBalanceOf(address account, address asset) view returns (uint128)',
  'function borrowBalanceOf(address account) view returns (uint256)',
  'function isLiquidatable(address account) view returns (bool)',
  'function supplyKink() view returns (uint256)',
  'function supplyPerSecondInterestRateSlopeLow() view returns (uint256)',
  'function supplyPerSecondInterestRateSlopeHigh() view returns (uint256)',
  'function supplyPerSecondInterestRateBase() view returns (uint256)',
  'function borrowKink() view returns (uint256)',
  'function borrowPerSecondInterestRateSlopeLow() view returns (uint256)',
  'function borrowPerSecondInterestRateSlopeHigh() view returns (uint256)',
  'function borrowPerSecondInterestRateBase() view returns (uint256)',
  'event Supply(address indexed from, address indexed dst, uint256 amount)',
  'event Withdraw(address indexed src, address indexed to, uint256 amount)',
  'event Transfer(address indexed from, address indexed to, uint256 amount)',
  'event SupplyCollateral(address indexed from, address indexed dst, address indexed asset, uint256 amount)',
  'event TransferCollateral(address indexed from, address indexed to, address indexed asset, uint256 amount)',
  'event WithdrawCollateral(address indexed src, address indexed to, address indexed asset, uint256 amount)',
  'event AbsorbDebt(address indexed absorber, address indexed borrower, uint256 basePaidOut, uint256 usdValue)',
  'event AbsorbCollateral(address indexed absorber, address indexed borrower, address indexed asset, uint256 collateralAbsorbed, uint256 usdValue)',
]);

const eventsOf = (names: readonly string[]) =>
  cometAbi.filter((item) => item.type === 'event' && names.includes(item.name));
/** Every event that changes an account's base principal or collateral. */
export const COMET_EVENTS = eventsOf([
  'Supply',
  'Withdraw',
  'Transfer',
  'SupplyCollateral',
  'TransferCollateral',
  'WithdrawCollateral',
  'AbsorbDebt',
  'AbsorbCollateral',
]) as readonly AbiEvent[];

/** The arguments of each event that name an account whose balances it changes (not a payer). */
const ACCOUNT_FIELDS: Readonly<Record<string, readonly string[]>> = {
  Supply: ['dst'],
  Withdraw: ['src'],
  Transfer: ['from', 'to'],
  SupplyCollateral: ['dst'],
  WithdrawCollateral: ['src'],
  TransferCollateral: ['from', 'to'],
  AbsorbDebt: ['borrower'],
  AbsorbCollateral: ['borrower'],
};

const RATE_GETTERS = [
  'supplyKink',
  'supplyPerSecondInterestRateSlopeLow',
  'supplyPerSecondInterestRateSlopeHigh',
  'supplyPerSecondInterestRateBase',
  'borrowKink',
  'borrowPerSecondInterestRateSlopeLow',
  'borrowPerSecondInterestRateSlopeHigh',
  'borrowPerSecondInterestRateBase',
] as const;

export const FACTOR_SCALE = 10n ** 18n;
const BASE_INDEX_SCALE = 10n ** 15n;

type Hex = `0x${string}`;

/** A kinked rate curve, per second, 1e18 (Comet's `getSupplyRate`/`getBorrowRate`). */
export interface RateCurve {
  kink: bigint;
  slopeLow: bigint;
  slopeHigh: bigint;
  base: bigint;
}

export interface CometAsset {
  asset: string;
  priceFeed: string;
  /** 10^decimals. */
  scale: bigint;
  /** 1e18 factors. */
  liquidateCollateralFactor: bigint;
  liquidationFactor: bigint;
}

/** What a comet's configuration says (read once per process). */
export interface CometConfig {
  baseToken: string;
  baseTokenPriceFeed: string;
  assets: CometAsset[];
  supplyCurve: RateCurve;
  borrowCurve: RateCurve;
}

/** An account's base principal (negative: a debt) and its collateral balance per asset of the comet. */
export interface CometAccount {
  principal: bigint;
  collateral: bigint[];
}

export interface CometRead {
  comet: string;
  config: CometConfig;
  base: TokenMeta;
  /** Per asset of the config, its token (a comet whose tokens do not all answer is not read). */
  tokens: TokenMeta[];
  /** Indices accrued to the block (1e15). */
  supplyIndex: bigint;
  borrowIndex: bigint;
  /** Present values of the totals at the block, base units. */
  totalSupply: bigint;
  totalBorrow: bigint;
  /** Rates per second (1e18) at the stored totals' utilization: those that accrue now. */
  supplyRate: bigint;
  borrowRate: bigint;
  /** `getPrice` of the base feed and of each asset's feed (8 decimals, the comet's quote). */
  basePrice: bigint;
  prices: bigint[];
  /** The accounts kept, by user, as last read (null: none held). */
  accounts: ReadonlyMap<string, CometAccount | null>;
  /**
   * What its rewards contract pays, in whole reward tokens a second to all suppliers and all
   * borrowers; null without one; why not when it could not be read.
   */
  rewards: CometRewards | { problem: string } | null;
}

/** One absorption (Comet's liquidation of an account): its debt event and its collateral events. */
export interface CometAbsorb {
  comet: string;
  txHash: string;
  block: number;
  /** Unix seconds of the block. */
  timestamp: number;
  absorber: string;
  borrower: string;
  /** Base credited to the account: its debt cleared, plus any surplus of collateral value as supply. */
  basePaidOut: bigint;
  /** basePaidOut at the comet's base price (8 decimals). */
  baseValue: bigint;
  /** The surplus credited as supply (the `Transfer` from zero to the account right after `AbsorbDebt`); 0 without. */
  surplus: bigint;
  collateral: { asset: string; logIndex: number; amount: bigint; value: bigint }[];
}

export interface CompoundRead {
  comets: CometRead[];
  absorbs: CometAbsorb[];
  /**
   * What could not be read: a comet as a whole (`id` its address: it keeps its last records),
   * an account (`<comet>:<user>`), or a check (`<comet>:borrowers`).
   */
  failures: { id: string; error: string }[];
  /** Accounts read from the chain this pass (the others came from the cache). */
  accountsRead: number;
  /** The accounts read this pass, as `${comet}:${user}` (those whose reads failed are to retry). */
  read: ReadonlySet<string>;
  /** A comet's accounts holding collateral or a debt (served or not), and those not read yet. */
  holders(comet: string): { comet: string; user: string }[];
}

/** What a chain source keeps of its comets between passes in one process. */
export class CometCache {
  readonly configs = new Map<string, CometConfig>();
  readonly tokens = new Map<string, TokenMeta>();
  /**
   * Per comet and user: the account as last read; null when it neither borrows nor holds
   * collateral (a lender, or nothing: no position; it cannot borrow unseen without collateral).
   */
  readonly accounts = new AccountReads<CometAccount>();
  /** Accounts whose read failed or could not be made (their comet unreadable): read next pass. */
  readonly retry = new Set<string>();
  /**
   * Per comet, how far its known borrowers' principals are from its totalBorrowBase after every
   * holder was read again (borrowers this source never saw): not read again while it holds.
   */
  readonly gaps = new Map<string, bigint>();
  /** Per comet, its kept accounts' borrowed principal (what its totalBorrowBase is checked against). */
  private readonly borrowed = new Map<string, bigint>();

  clear(): void {
    this.retry.clear();
    this.gaps.clear();
    this.configs.clear();
    this.tokens.clear();
    this.accounts.clear();
    this.borrowed.clear();
  }

  /** An account as read at `block` (null: it holds nothing). */
  setAccount(comet: string, user: string, account: CometAccount | null, block: number): void {
    const owed = borrowedOf(account) - borrowedOf(this.accounts.get(comet, user) ?? null);
    if (owed !== 0n) this.borrowed.set(comet, (this.borrowed.get(comet) ?? 0n) + owed);
    this.accounts.set(comet, user, account, block);
  }

  /** The borrowed principal of the comet's kept accounts. */
  borrowedBy(comet: string): bigint {
    return this.borrowed.get(comet) ?? 0n;
  }

  /**
   * Forgets a comet's accounts (`holdersOnly`: those that held something), so that they are read
   * again; returns their keys.
   */
  forget(comet: string, holdersOnly: boolean): string[] {
    const keys: string[] = [];
    for (const [user, account] of this.accounts.of(comet))
      if (account !== null || !holdersOnly) keys.push(`${comet}:${user}`);
    this.accounts.forget(comet, (account) => account !== null || !holdersOnly);
    this.borrowed.delete(comet);
    return keys;
  }
}

/** An account's borrowed principal (0 for a lender or none). */
const borrowedOf = (account: CometAccount | null) =>
  account && account.principal < 0n ? -account.principal : 0n;

/** Comet's `totalsBasic()` as viem decodes it. */
interface Totals {
  baseSupplyIndex: bigint;
  baseBorrowIndex: bigint;
  totalSupplyBase: bigint;
  totalBorrowBase: bigint;
  lastAccrualTime: number;
}

const MAX_SCALE = 10n ** 36n;

/** Comet's kinked curve at utilization `u` (1e18). */
export function rateAt(curve: RateCurve, u: bigint): bigint {
  if (u <= curve.kink) return curve.base + (curve.slopeLow * u) / FACTOR_SCALE;
  return (
    curve.base +
    (curve.slopeLow * curve.kink) / FACTOR_SCALE +
    (curve.slopeHigh * (u - curve.kink)) / FACTOR_SCALE
  );
}

/** An account's debt (base units) at a borrow index: Comet's `presentValueBorrow`. */
export function debtOf(principal: bigint, borrowIndex: bigint): bigint {
  return principal < 0n ? (-principal * borrowIndex) / BASE_INDEX_SCALE : 0n;
}

/** The calls that read a comet's configuration: its head (CONFIG_HEAD of them), then `getAssetInfo(i)` for i < `assets`. */
function configCalls(address: Hex, assets: number) {
  return [
    { address, abi: cometAbi, functionName: 'baseToken' } as const,
    { address, abi: cometAbi, functionName: 'baseTokenPriceFeed' } as const,
    { address, abi: cometAbi, functionName: 'numAssets' } as const,
    ...RATE_GETTERS.map((functionName) => ({ address, abi: cometAbi, functionName }) as const),
    ...Array.from(
      { length: assets },
      (_, i) => ({ address, abi: cometAbi, functionName: 'getAssetInfo', args: [i] }) as const,
    ),
  ];
}
const CONFIG_HEAD = 3 + RATE_GETTERS.length;

type CallResult = { status: 'success' | 'failure'; result?: unknown; error?: Error | undefined };

/**
 * A configuration from its calls' results: the config, the asset count it announces when its
 * infos were not all read (`more`), or a problem (a call refused, or values no real comet has:
 * they would make every figure meaningless, so the comet is not served).
 */
function parseConfig(results: readonly CallResult[]): CometConfig | { more: number } | { problem: string } {
  const bad = results.find((r) => r.status !== 'success');
  if (bad) return { problem: firstLine(bad.error) };
  const [base, feed, n, ...rest] = results.map((r) => r.result);
  const count = Number(n);
  const infos = rest.slice(RATE_GETTERS.length);
  if (infos.length !== count) return { more: count };
  const rates = rest.slice(0, RATE_GETTERS.length) as bigint[];
  const [sk, sl, sh, sb, bk, bl, bh, bb] = mustSlice(rates, 0, RATE_GETTERS.length, 'interest rate answers');
  const baseToken = String(base).toLowerCase();
  const assets = infos.map((r) => {
    const info = r as {
      asset: string;
      priceFeed: string;
      scale: bigint;
      liquidateCollateralFactor: bigint;
      liquidationFactor: bigint;
    };
    return {
      asset: info.asset.toLowerCase(),
      priceFeed: info.priceFeed.toLowerCase(),
      scale: info.scale,
      liquidateCollateralFactor: info.liquidateCollateralFactor,
      liquidationFactor: info.liquidationFactor,
    };
  });
  const seen = new Set([baseToken]);
  for (const a of assets) {
    if (a.asset === zeroAddress || seen.has(a.asset))
      return { problem: `asset ${a.asset} is zero or listed twice` };
    seen.add(a.asset);
    let scale = a.scale;
    while (scale > 1n && scale % 10n === 0n) scale /= 10n;
    if (scale !== 1n || a.scale > MAX_SCALE)
      return { problem: `asset ${a.asset}: scale ${a.scale} is not a power of ten up to 1e36` };
    if (a.liquidateCollateralFactor > FACTOR_SCALE || a.liquidationFactor > FACTOR_SCALE)
      return { problem: `asset ${a.asset}: a factor above 1` };
  }
  if (baseToken === zeroAddress) return { problem: 'no base token' };
  return {
    baseToken,
    baseTokenPriceFeed: String(feed).toLowerCase(),
    assets,
    supplyCurve: { kink: sk, slopeLow: sl, slopeHigh: sh, base: sb },
    borrowCurve: { kink: bk, slopeLow: bl, slopeHigh: bh, base: bb },
  };
}

/** The same base and collateral assets (an account's balances read under one hold under the other). */
const sameAssets = (a: CometConfig, b: CometConfig) =>
  a.baseToken === b.baseToken &&
  a.assets.map((x) => `${x.asset}:${x.scale}`).join() === b.assets.map((x) => `${x.asset}:${x.scale}`).join();

const configText = (c: CometConfig) =>
  JSON.stringify(c, (_, v) => (typeof v === 'bigint' ? v.toString() : v));

/**
 * One pass over the comets at `block` (whose time is `timestamp`): the logs of each comet from
 * its `from` to `block` name the accounts to read again; every comet's configuration (Comet is
 * upgraded in place: a new collateral, new factors), totals and prices are read at `block`.
 * Accounts that changed without an event naming them (a base `transfer` that borrows or repays
 * emits none) show as a mismatch between the known borrowers' principals and the comet's
 * `totalBorrowBase`: the comet's holders are then read again.
 */
export async function readCompound(
  rpc: ChainRpc,
  comets: readonly { comet: string; from: bigint; to?: bigint; rewards?: string | null }[],
  range: { block: bigint; timestamp: bigint; logsTo?: bigint },
  known: readonly { comet: string; user: string }[],
  cache: CometCache = new CometCache(),
  shared?: SharedLogs,
): Promise<CompoundRead> {
  const at = { blockNumber: range.block, allowFailure: true, ...(await rpc.multicallOptions()) } as const;
  const addresses = comets.map((c) => c.comet);
  // The accounts that may be read: those known (the last pass's, to read again), those to retry,
  // those the logs name, and those of a comet forgotten this pass; each is read unless the
  // process holds it as last read and no log named it (what a pass costs follows the accounts
  // named, not those held).
  const accounts = new Set<string>();
  for (const a of known) accounts.add(`${a.comet}:${a.user}`);
  for (const key of cache.retry) if (addresses.includes(groupOf(key))) accounts.add(key);
  const touched = new Set<string>();
  const failures: CompoundRead['failures'] = [];

  // 1. Logs of every comet in one walk: the accounts they touch, and absorptions.
  const absorbs = new Map<string, Omit<CometAbsorb, 'timestamp'>>();
  const logsTo = range.logsTo ?? range.block;
  type Log = GetLogsReturnType<undefined, typeof COMET_EVENTS, true>[number];
  // One range of logs at a time (a first sync walks millions of them): what they name is kept,
  // not the logs. A range holds whole blocks, so an absorb's surplus Transfer is with it.
  const take = (logs: readonly Log[]) => {
    const surplusAt = new Map<string, bigint>();
    const debtLogOf = new Map<string, number>();
    for (const l of logs) {
      const comet = l.address.toLowerCase();
      const args = l.args as Record<string, unknown>;
      for (const field of ACCOUNT_FIELDS[l.eventName] ?? []) {
        const u = String(args[field]).toLowerCase();
        // A mint or burn (Transfer from or to zero) names no second account.
        if (u === zeroAddress) continue;
        accounts.add(`${comet}:${u}`);
        touched.add(`${comet}:${u}`);
      }
      const tx = l.transactionHash.toLowerCase();
      if (l.eventName === 'Transfer' && String(args['from']) === zeroAddress)
        surplusAt.set(`${tx}:${l.logIndex}:${String(args['to']).toLowerCase()}`, args['amount'] as bigint);
      if (l.eventName !== 'AbsorbCollateral' && l.eventName !== 'AbsorbDebt') continue;
      const borrower = String(args['borrower']).toLowerCase();
      const key = `${comet}:${tx}:${borrower}`;
      let a = absorbs.get(key);
      if (!a) {
        a = {
          comet,
          txHash: tx,
          block: Number(l.blockNumber),
          absorber: String(args['absorber']).toLowerCase(),
          borrower,
          basePaidOut: 0n,
          baseValue: 0n,
          surplus: 0n,
          collateral: [],
        };
        absorbs.set(key, a);
      }
      if (l.eventName === 'AbsorbDebt') {
        a.basePaidOut = args['basePaidOut'] as bigint;
        a.baseValue = args['usdValue'] as bigint;
        debtLogOf.set(key, l.logIndex);
      } else {
        a.collateral.push({
          asset: String(args['asset']).toLowerCase(),
          logIndex: l.logIndex,
          amount: args['collateralAbsorbed'] as bigint,
          value: args['usdValue'] as bigint,
        });
      }
    }
    // Comet credits a surplus to the account as supply in the log right after AbsorbDebt.
    for (const [key, at] of debtLogOf) {
      const a = must(absorbs.get(key), `absorb ${key}`);
      a.surplus = surplusAt.get(`${a.txHash}:${at + 1}:${a.borrower}`) ?? 0n;
    }
  };
  for (const { fromBlock, toBlock, addresses } of walksByRange(
    comets.map((c) => ({ ...c, address: c.comet })),
    logsTo,
  )) {
    const address = addresses as Hex[];
    await takeLogs(
      rpc,
      shared,
      { what: 'compound', address, events: COMET_EVENTS, fromBlock, toBlock },
      take,
    );
  }
  const times = await blockTimes(
    rpc,
    [...absorbs.values()].map((p) => BigInt(p.block)),
  );

  // 2. The comets' state; a second round when a configuration changed or the borrowers do not
  // add up (the accounts concerned are read again).
  const read = (round: 1 | 2) =>
    readState(
      rpc,
      at,
      {
        addresses,
        accounts,
        touched,
        round,
        syncing: new Set(comets.filter((c) => (c.to ?? logsTo) < range.block).map((c) => c.comet)),
        rewards: new Map(comets.map((c) => [c.comet, c.rewards ?? null])),
      },
      cache,
      range.timestamp,
      failures,
    );
  let state = await read(1);
  let accountsRead = state.accountsRead;
  const answered = new Set(state.read);
  if (state.again.length > 0) {
    failures.length = 0;
    state = await read(2);
    accountsRead += state.accountsRead;
    for (const key of state.read) answered.add(key);
  }
  // (An account read in one round and failing in the other is to retry.)
  for (const key of cache.retry) answered.delete(key);
  // The accounts of a comet whose configuration could not be read this pass (those the logs
  // named, those known, those it forgot): read once it is. (Those of comets no longer read are
  // forgotten.)
  for (const key of accounts) if (!cache.configs.has(groupOf(key))) cache.retry.add(key);
  for (const key of cache.retry) if (!addresses.includes(groupOf(key))) cache.retry.delete(key);
  // Holders, and accounts whose state is not known (their read failed): kept to be read.
  const holders = (comet: string): { comet: string; user: string }[] => {
    const out = new Map<string, { comet: string; user: string }>();
    for (const [user, account] of cache.accounts.of(comet)) if (account) out.set(user, { comet, user });
    for (const key of cache.retry) {
      const user = key.slice(comet.length + 1);
      if (groupOf(key) === comet && cache.accounts.get(comet, user) === undefined)
        out.set(user, { comet, user });
    }
    return [...out.values()];
  };
  return {
    comets: state.comets,
    absorbs: [...absorbs.values()].map((a) => ({
      ...a,
      timestamp: must(times.get(BigInt(a.block)), `time of block ${a.block}`),
    })),
    failures,
    accountsRead,
    read: answered,
    holders,
  };
}

/** Step 2 of a pass: configurations, totals, prices and the accounts to read, at the block. */
async function readState(
  rpc: ChainRpc,
  at: { blockNumber: bigint; allowFailure: true } & MulticallOptions,
  pass: {
    addresses: readonly string[];
    /** Each comet's CometRewards contract (null: none read). */
    rewards: ReadonlyMap<string, string | null>;
    /** The accounts that may be read (those of a comet forgotten here join them). */
    accounts: Set<string>;
    touched: ReadonlySet<string>;
    /** The second round reports what the first would have read again. */
    round: 1 | 2;
    /**
     * The comets whose logs end before the block (a sync under way): borrowers the later logs
     * name are not known yet, so the known ones' principals are not checked against the total.
     */
    syncing: ReadonlySet<string>;
  },
  cache: CometCache,
  timestamp: bigint,
  failures: CompoundRead['failures'],
): Promise<{ comets: CometRead[]; again: string[]; read: string[]; accountsRead: number }> {
  const { addresses, accounts, touched, round, syncing } = pass;
  // Configurations not known yet: the head, then the asset infos it announces.
  const unknown = addresses.filter((c) => !cache.configs.has(c)) as Hex[];
  if (unknown.length > 0) {
    const heads = await rpc.multicall({ ...at, contracts: unknown.flatMap((c) => configCalls(c, 0)) });
    throwIfUnread(heads);
    const counts = unknown.map((comet, i) => {
      const parsed = parseConfig(heads.slice(i * CONFIG_HEAD, (i + 1) * CONFIG_HEAD));
      if ('problem' in parsed) failures.push({ id: comet, error: `comet ${comet}: ${parsed.problem}` });
      return { comet, n: 'more' in parsed ? parsed.more : 'problem' in parsed ? -1 : 0 };
    });
    const wanted = counts.filter((w) => w.n >= 0);
    const full = await rpc.multicall({
      ...at,
      contracts: wanted.flatMap((w) => configCalls(w.comet, w.n)),
    });
    throwIfUnread(full);
    let k = 0;
    for (const w of wanted) {
      const parsed = parseConfig(full.slice(k, k + CONFIG_HEAD + w.n));
      k += CONFIG_HEAD + w.n;
      if ('problem' in parsed || 'more' in parsed)
        failures.push({
          id: w.comet,
          error: `comet ${w.comet}: ${'problem' in parsed ? parsed.problem : 'its asset count changed'}`,
        });
      else cache.configs.set(w.comet, parsed);
    }
  }
  const configured = addresses.flatMap((c) => {
    const config = cache.configs.get(c);
    return config ? [{ comet: c as Hex, config }] : [];
  });

  // Every comet's configuration again (it may have been upgraded), totals and prices; tokens not
  // seen before; the accounts to read.
  const newTokens = [
    ...new Set(configured.flatMap(({ config }) => [config.baseToken, ...config.assets.map((a) => a.asset)])),
  ].filter((t) => !cache.tokens.has(t)) as Hex[];
  // Each account with its comet's assets when its calls are made (a comet whose asset list changes
  // in this read is forgotten and read again: its accounts' answers are skipped).
  const toRead = [...accounts].flatMap((key) => {
    const [comet, user] = key.split(':') as [Hex, Hex];
    const config = cache.configs.get(comet);
    return config && (touched.has(key) || cache.retry.has(key) || !cache.accounts.has(comet, user))
      ? [{ key, comet, user, assets: config.assets }]
      : [];
  });
  const reads = await rpc.multicall({
    ...at,
    contracts: [
      ...configured.flatMap(({ comet: address, config }) => {
        return [
          ...configCalls(address, config.assets.length),
          { address, abi: cometAbi, functionName: 'totalsBasic' } as const,
          ...[config.baseTokenPriceFeed, ...config.assets.map((a) => a.priceFeed)].map(
            (feed) => ({ address, abi: cometAbi, functionName: 'getPrice', args: [feed as Hex] }) as const,
          ),
          ...rewardCalls(address, pass.rewards.get(address) ?? null),
        ];
      }),
      ...tokenCalls(newTokens),
      ...toRead.flatMap(({ comet, user, assets }) => {
        return [
          { address: comet, abi: cometAbi, functionName: 'userBasic', args: [user] } as const,
          ...assets.map(
            (asset) =>
              ({
                address: comet,
                abi: cometAbi,
                functionName: 'collateralBalanceOf',
                args: [user, asset.asset as Hex],
              }) as const,
          ),
        ];
      }),
    ],
  });
  throwIfUnread(reads);
  let k = 0;
  const again: string[] = [];
  const states: {
    comet: Hex;
    config: CometConfig;
    totals: Totals;
    prices: (bigint | null)[];
    rewards: RewardsAnswer | { problem: string } | null;
  }[] = [];
  const next = () => must(reads[k++], 'comet answer');
  for (const { comet, config } of configured) {
    const n = CONFIG_HEAD + config.assets.length;
    const parsed = parseConfig(reads.slice(k, k + n));
    k += n;
    const totals = next();
    const prices = [config.baseTokenPriceFeed, ...config.assets].map(() => {
      const r = next();
      return r.status === 'success' && (r.result as bigint) > 0n ? (r.result as bigint) : null;
    });
    const rewardsAt = pass.rewards.get(comet) ?? null;
    const rewardsRead = rewardsAt ? REWARD_CALLS + 1 : 0;
    const rewards = rewardsAnswer(reads.slice(k, k + rewardsRead));
    k += rewardsRead;
    if ('more' in parsed && round === 1) {
      // Upgraded with another asset count: read whole again, with its accounts.
      cache.configs.delete(comet);
      for (const key of cache.forget(comet, false)) accounts.add(key);
      again.push(comet);
      continue;
    }
    if (!('baseToken' in parsed)) {
      // Refused or implausible now: not served this pass (kept), its configuration and accounts
      // as they were.
      const why = 'problem' in parsed ? parsed.problem : 'its asset count changed while it was read';
      failures.push({ id: comet, error: `comet ${comet}: ${why}` });
      continue;
    }
    if (configText(parsed) !== configText(config)) {
      if (round === 2) {
        failures.push({ id: comet, error: `comet ${comet}: its configuration changed while it was read` });
        continue;
      }
      // Upgraded: new factors, feeds or curve are served from now on; another asset list or base
      // is read whole again, with its accounts.
      if (sameAssets(parsed, config)) cache.configs.set(comet, parsed);
      else {
        cache.configs.delete(comet);
        for (const key of cache.forget(comet, false)) accounts.add(key);
      }
      again.push(comet);
      continue;
    }
    if (totals.status !== 'success') {
      failures.push({ id: comet, error: `comet ${comet}: totalsBasic: ${firstLine(totals.error)}` });
      continue;
    }
    states.push({ comet, config, totals: totals.result as Totals, prices, rewards });
  }
  keepTokens(newTokens, reads.slice(k), cache.tokens);
  k += newTokens.length * TOKEN_CALLS;
  for (const { key, comet, user, assets } of toRead) {
    const n = assets.length;
    const r = reads.slice(k, k + 1 + n);
    k += 1 + n;
    if (cache.configs.get(comet)?.assets.length !== n) continue;
    // Not answered: as last read meanwhile (its item named), and read again next pass.
    if (!accountAnswered(key, r, cache.retry, failures)) continue;
    const [basic, ...balances] = r;
    const principal = (must(basic, `userBasic of ${key}`).result as readonly unknown[])[0] as bigint;
    const collateral = balances.map((x) => x.result as bigint);
    const holds = principal < 0n || collateral.some((c) => c > 0n);
    cache.setAccount(comet, user, holds ? { principal, collateral } : null, Number(at.blockNumber));
  }

  // Reward tokens not seen before (known once a comet's rewards contract has named them).
  const rewardTokens = [
    ...new Set(states.flatMap((x) => (x.rewards && 'token' in x.rewards ? [x.rewards.token] : []))),
  ].filter((t) => !cache.tokens.has(t)) as Hex[];
  if (rewardTokens.length > 0) {
    const meta = await rpc.multicall({ ...at, contracts: tokenCalls(rewardTokens) });
    throwIfUnread(meta);
    keepTokens(rewardTokens, meta, cache.tokens);
  }

  // Each comet at the block, by Comet's arithmetic.
  const out: CometRead[] = [];
  for (const { comet, config, totals, prices, rewards } of states) {
    const base = cache.tokens.get(config.baseToken);
    const [basePrice, ...assetPrices] = prices;
    const tokens = config.assets.map((a) => cache.tokens.get(a.asset) ?? null);
    const silent = [
      base ? null : config.baseToken,
      ...config.assets.map((a, i) => (tokens[i] ? null : a.asset)),
    ].find((t) => t !== null);
    // Any part that cannot be read leaves the whole comet out (it keeps its last records): an
    // account's health and its debt's shares need every collateral's price and decimals.
    if (!base || silent) {
      failures.push({ id: comet, error: `comet ${comet}: token ${silent} does not answer decimals()` });
      continue;
    }
    const unpriced = [config.baseTokenPriceFeed, ...config.assets.map((a) => a.priceFeed)].find(
      (_, i) => !prices[i],
    );
    if (!basePrice || unpriced) {
      failures.push({
        id: comet,
        error: `comet ${comet}: getPrice of feed ${unpriced} did not answer a positive price`,
      });
      continue;
    }
    const { baseSupplyIndex, baseBorrowIndex, totalSupplyBase, totalBorrowBase } = totals;
    // The borrowers this pass knows owe what the comet says its borrowers owe, or some changed unseen.
    const gap = cache.borrowedBy(comet) - totalBorrowBase;
    if (gap === 0n || syncing.has(comet)) cache.gaps.delete(comet);
    else if (round === 1 && gap !== cache.gaps.get(comet)) {
      // A borrow or repayment no log named (a base transfer): every holder is read again.
      for (const key of cache.forget(comet, true)) accounts.add(key);
      again.push(comet);
      continue;
    } else {
      // Still apart after every holder was read again: borrowers this source never saw (before
      // fromBlock). Named every pass; read again only when the gap moves.
      cache.gaps.set(comet, gap);
      failures.push({
        id: `${comet}:borrowers`,
        error: `comet ${comet}: the known borrowers' principals are ${gap} apart from totalBorrowBase (borrowers before fromBlock?)`,
      });
    }
    const storedSupply = (totalSupplyBase * baseSupplyIndex) / BASE_INDEX_SCALE;
    const storedBorrow = (totalBorrowBase * baseBorrowIndex) / BASE_INDEX_SCALE;
    const u = storedSupply === 0n ? 0n : (storedBorrow * FACTOR_SCALE) / storedSupply;
    const supplyRate = rateAt(config.supplyCurve, u);
    const borrowRate = rateAt(config.borrowCurve, u);
    const last = BigInt(totals.lastAccrualTime);
    const elapsed = timestamp > last ? timestamp - last : 0n;
    const supplyIndex = baseSupplyIndex + (baseSupplyIndex * supplyRate * elapsed) / FACTOR_SCALE;
    const borrowIndex = baseBorrowIndex + (baseBorrowIndex * borrowRate * elapsed) / FACTOR_SCALE;
    out.push({
      comet,
      config,
      base,
      tokens: tokens as TokenMeta[],
      supplyIndex,
      borrowIndex,
      totalSupply: (totalSupplyBase * supplyIndex) / BASE_INDEX_SCALE,
      totalBorrow: (totalBorrowBase * borrowIndex) / BASE_INDEX_SCALE,
      supplyRate,
      borrowRate,
      basePrice,
      prices: assetPrices as bigint[],
      accounts: cache.accounts.of(comet),
      rewards: cometRewards(rewards, cache.tokens, totals),
    });
  }
  return {
    comets: out,
    again,
    read: toRead.filter(({ key }) => !cache.retry.has(key)).map(({ key }) => key),
    accountsRead: toRead.length,
  };
}

/**
 * An account's health as Comet judges it (`isLiquidatable`): the collateral's value at the
 * liquidation factors over the debt's value, each in the comet's price units with Comet's
 * rounding; Infinity without debt. Also each asset's weighted value (the debt's share of each
 * market follows it).
 */
export function accountHealth(
  read: Pick<CometRead, 'config' | 'basePrice' | 'prices' | 'borrowIndex'> & { baseScale: bigint },
  account: CometAccount,
): { healthFactor: number; weighted: bigint[]; debt: bigint } {
  const weighted = read.config.assets.map((a, i) => {
    const price = read.prices[i];
    const balance = account.collateral[i] ?? 0n;
    if (!price || balance === 0n) return 0n;
    return (((balance * price) / a.scale) * a.liquidateCollateralFactor) / FACTOR_SCALE;
  });
  const debt = debtOf(account.principal, read.borrowIndex);
  const debtValue = (debt * read.basePrice) / read.baseScale;
  const total = weighted.reduce((s, w) => s + w, 0n);
  const healthFactor = debtValue === 0n ? Number.POSITIVE_INFINITY : ratio(total, debtValue);
  return { healthFactor, weighted, debt };
}

/** a / b as a number, exact to a double's precision whatever their size. */
function ratio(a: bigint, b: bigint): number {
  const scale = 10n ** 18n;
  return Number((a * scale) / b) / 1e18;
}
