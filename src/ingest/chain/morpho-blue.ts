/**
 * Morpho Blue on one chain, read through its own ABI and math (`@morpho-org/blue-sdk` and
 * `blue-sdk-viem`): markets found from `CreateMarket` logs, their state accrued to the block
 * with the IRM's own `borrowRateView`, the oracle's price, positions of the accounts that
 * events named, and liquidations. Oracles of the `MorphoChainlinkOracleV2` shape are resolved
 * to their feeds.
 *
 * What never changes (market params, token metadata, an oracle's feeds) and the positions read
 * are kept in a MorphoCache between passes: a pass after the first reads the new blocks' logs,
 * every market's state, price and rate, and only the positions that those logs touched; the
 * others' amounts follow from their shares and the market's state (interest accrues to every
 * borrower of a market alike).
 *
 * A call the chain refuses (a revert: a token without `decimals()`) leaves its item out of the
 * pass, named; a request that fails (the RPC) fails the whole pass, so that its source keeps
 * its last data rather than serving what the failed request left out.
 */
import { Market, MarketParams, MarketUtils, MathLib } from '@morpho-org/blue-sdk';
import { adaptiveCurveIrmAbi, blueAbi, blueOracleAbi } from '@morpho-org/blue-sdk-viem';
import { type GetLogsReturnType, getAbiItem, parseAbi, zeroAddress } from 'viem';
import { must, mustSlice } from '../../domain/must.ts';
import { AccountReads } from './account-reads.ts';
import { blockTimes, type ChainRpc, firstLine, type SharedLogs, takeLogs, throwIfUnread } from './rpc.ts';
import { keepTokens, TOKEN_CALLS, type TokenMeta, tokenCalls } from './tokens.ts';

export type { TokenMeta } from './tokens.ts';

const CREATE_MARKET = getAbiItem({ abi: blueAbi, name: 'CreateMarket' });
/**
 * Every event that creates a market or changes a position (its `onBehalf` or `borrower`; an
 * accrual with a fee mints supply shares to the fee recipient).
 */
export const MORPHO_EVENTS = [
  CREATE_MARKET,
  getAbiItem({ abi: blueAbi, name: 'AccrueInterest' }),
  getAbiItem({ abi: blueAbi, name: 'Supply' }),
  getAbiItem({ abi: blueAbi, name: 'Withdraw' }),
  getAbiItem({ abi: blueAbi, name: 'Borrow' }),
  getAbiItem({ abi: blueAbi, name: 'Repay' }),
  getAbiItem({ abi: blueAbi, name: 'SupplyCollateral' }),
  getAbiItem({ abi: blueAbi, name: 'WithdrawCollateral' }),
  getAbiItem({ abi: blueAbi, name: 'Liquidate' }),
] as const;

/** The feed getters of MorphoChainlinkOracleV2 (morpho-blue-oracles). */
export const chainlinkOracleV2Abi = parseAbi([
  'function BASE_FEED_1() view returns (address)',
  'function BASE_FEED_2() view returns (address)',
  'function QUOTE_FEED_1() view returns (address)',
  'function QUOTE_FEED_2() view returns (address)',
]);
const FEED_GETTERS = ['BASE_FEED_1', 'BASE_FEED_2', 'QUOTE_FEED_1', 'QUOTE_FEED_2'] as const;

export interface MorphoMarketRead {
  /** The market id (0x, 32 bytes, lower-case). */
  id: string;
  params: MarketParams;
  /** The state accrued to the block (blue-sdk Market, with the oracle price when it answered). */
  market: Market;
  /** The borrow rate per second at the block, WAD (0 without an IRM): the APYs' rate. */
  borrowRate: bigint;
  loan: TokenMeta;
  collateral: TokenMeta;
  /** The oracle's feeds when it has the MorphoChainlinkOracleV2 shape (non-zero ones); null otherwise. */
  oracleFeeds: string[] | null;
}

export interface MorphoPositionRead {
  id: string;
  user: string;
  supplyShares: bigint;
  borrowShares: bigint;
  collateral: bigint;
}

export interface MorphoLiquidationRead {
  id: string;
  txHash: string;
  logIndex: number;
  block: number;
  /** Unix seconds of the block. */
  timestamp: number;
  liquidator: string;
  borrower: string;
  repaidAssets: bigint;
  seizedAssets: bigint;
  badDebtAssets: bigint;
}

export interface MorphoRead {
  markets: MorphoMarketRead[];
  liquidations: MorphoLiquidationRead[];
  /** Markets and positions that could not be read (the others are served). */
  failures: { id: string; error: string }[];
  /** Positions read from the chain in this pass (the others came from the cache). */
  positionsRead: number;
  /** Those positions as read, by market id: per account, its position, null when it held nothing. */
  read: Map<string, Map<string, MorphoPositionRead | null>>;
  /** Every market id known after this pass (served or not), for the checkpoint. */
  marketIds: string[];
  /** Every account known after this pass, of every market. */
  accounts: { id: string; user: string }[];
}

/** What the last pass served: the markets and the accounts to follow (from the store after a restart). */
export interface MorphoKnown {
  marketIds: readonly string[];
  accounts: readonly { id: string; user: string }[];
}

/** What a chain source keeps between passes in one process (see the module comment). */
export class MorphoCache {
  /** Per market id: its params; null for an idle market (no collateral token: never read). */
  readonly params = new Map<string, MarketParams | null>();
  readonly tokens = new Map<string, TokenMeta>();
  /** Per oracle address: its feeds, or null when it does not have the MorphoChainlinkOracleV2 shape. */
  readonly oracleFeeds = new Map<string, string[] | null>();
  /**
   * Per market id and user: the position as last read (every position of a market served, in
   * this process); null when it was empty. Those supplying are listed per market.
   */
  readonly positions = new AccountReads<MorphoPositionRead>((p) => p.supplyShares > 0n);

  clear(): void {
    this.params.clear();
    this.tokens.clear();
    this.oracleFeeds.clear();
    this.positions.clear();
  }
}

type Hex = `0x${string}`;

type MorphoLog = GetLogsReturnType<undefined, typeof MORPHO_EVENTS, true>[number];

/**
 * One pass over Morpho Blue at `block` (whose timestamp is `timestamp`): the logs of
 * [fromBlock, block] add markets and accounts to those known, and name the accounts to read
 * again; every market is read at `block` (see the module comment).
 */
export async function readMorphoBlue(
  rpc: ChainRpc,
  morpho: Hex,
  range: { fromBlock: bigint; block: bigint; timestamp: bigint; logsTo?: bigint },
  known: MorphoKnown,
  cache: MorphoCache = new MorphoCache(),
  shared?: SharedLogs,
): Promise<MorphoRead> {
  const at = {
    blockNumber: range.block,
    allowFailure: true,
    ...(await rpc.multicallOptions()),
  } as const;
  const ids = new Set(known.marketIds.map((id) => id.toLowerCase()));
  const accounts = new Map<string, { id: string; user: string }>();
  for (const a of known.accounts) accounts.set(`${a.id}:${a.user}`, { id: a.id, user: a.user.toLowerCase() });
  const touched = new Set<string>();
  const feesMinted = new Set<string>();
  const liquidations: MorphoLiquidationRead[] = [];
  // One range of logs at a time (a first sync walks millions of them): what they name is kept,
  // not the logs.
  const take = (logs: readonly MorphoLog[]) => {
    for (const l of logs) {
      const id = l.args.id.toLowerCase();
      // Any event names its market (one created before fromBlock is found by its later events).
      ids.add(id);
      if (l.eventName === 'CreateMarket') continue;
      if (l.eventName === 'AccrueInterest') {
        if (l.args.feeShares > 0n) feesMinted.add(id);
        continue;
      }
      const user = ('onBehalf' in l.args ? l.args.onBehalf : l.args.borrower).toLowerCase();
      const key = `${id}:${user}`;
      accounts.set(key, { id, user });
      touched.add(key);
      if (l.eventName !== 'Liquidate') continue;
      liquidations.push({
        id,
        txHash: l.transactionHash.toLowerCase(),
        logIndex: l.logIndex,
        block: Number(l.blockNumber),
        // (Timed once the walk ends: one request per hundred blocks of liquidations.)
        timestamp: 0,
        liquidator: l.args.caller.toLowerCase(),
        borrower: user,
        repaidAssets: l.args.repaidAssets,
        seizedAssets: l.args.seizedAssets,
        badDebtAssets: l.args.badDebtAssets,
      });
    }
  };
  const logsTo = range.logsTo ?? range.block;
  if (range.fromBlock <= logsTo) {
    await takeLogs(
      rpc,
      shared,
      {
        what: 'morpho',
        address: morpho,
        events: MORPHO_EVENTS,
        fromBlock: range.fromBlock,
        toBlock: logsTo,
      },
      take,
    );
    const times = await blockTimes(
      rpc,
      liquidations.map((l) => BigInt(l.block)),
    );
    for (const l of liquidations) l.timestamp = must(times.get(BigInt(l.block)), `time of block ${l.block}`);
  }
  const failures: MorphoRead['failures'] = [];

  // 1. Every market's state; the params of markets not seen before.
  const idList = [...ids].filter((id) => cache.params.get(id) !== null).sort() as Hex[];
  const newIds = idList.filter((id) => !cache.params.has(id));
  const states = await rpc.multicall({
    ...at,
    contracts: [
      ...idList.map((id) => ({ address: morpho, abi: blueAbi, functionName: 'market', args: [id] }) as const),
      ...newIds.map(
        (id) => ({ address: morpho, abi: blueAbi, functionName: 'idToMarketParams', args: [id] }) as const,
      ),
      { address: morpho, abi: blueAbi, functionName: 'feeRecipient' } as const,
    ],
  });
  throwIfUnread(states);
  // The fee recipient's supply grew where an accrual minted fee shares: read it again.
  const recipient = states.at(-1);
  if (recipient?.status === 'success' && recipient.result !== zeroAddress)
    for (const id of feesMinted) {
      const user = String(recipient.result).toLowerCase();
      accounts.set(`${id}:${user}`, { id, user });
      touched.add(`${id}:${user}`);
    }
  newIds.forEach((id, i) => {
    const p = must(states[idList.length + i], `idToMarketParams answer of ${id}`);
    if (p.status !== 'success') return;
    const [loanToken, collateralToken, oracle, irm, lltv] = p.result as readonly [Hex, Hex, Hex, Hex, bigint];
    if (loanToken === zeroAddress) return; // not created at this block
    // An idle market (vaults park liquidity there): no borrower, no risk; never read again.
    cache.params.set(
      id,
      collateralToken === zeroAddress
        ? null
        : new MarketParams({ loanToken, collateralToken, oracle, irm, lltv }),
    );
  });
  const found: { id: string; params: MarketParams; state: readonly bigint[] }[] = [];
  idList.forEach((id, i) => {
    const s = must(states[i], `market answer of ${id}`);
    const params = cache.params.get(id);
    if (s.status !== 'success') {
      failures.push({ id, error: `market ${id}: ${firstLine(s.error)}` });
      return;
    }
    if (!params) return; // not created at this block, or idle
    found.push({ id, params, state: s.result as readonly bigint[] });
  });

  // 2. Tokens and oracle shapes not seen before; every market's oracle price and IRM rate.
  const newTokens = [...new Set(found.flatMap((m) => [m.params.loanToken, m.params.collateralToken]))].filter(
    (t) => !cache.tokens.has(t.toLowerCase()),
  );
  const newOracles = [...new Set(found.map((m) => m.params.oracle))].filter(
    (o) => !cache.oracleFeeds.has(o.toLowerCase()),
  );
  const reads = await rpc.multicall({
    ...at,
    contracts: [
      ...found.flatMap(({ id, params, state }) => {
        const [totalSupplyAssets, totalSupplyShares, totalBorrowAssets, totalBorrowShares, lastUpdate, fee] =
          state as [bigint, bigint, bigint, bigint, bigint, bigint];
        const market = {
          totalSupplyAssets,
          totalSupplyShares,
          totalBorrowAssets,
          totalBorrowShares,
          lastUpdate,
          fee,
        };
        const marketParams = {
          loanToken: params.loanToken,
          collateralToken: params.collateralToken,
          oracle: params.oracle,
          irm: params.irm,
          lltv: params.lltv,
        };
        return [
          { address: params.oracle, abi: blueOracleAbi, functionName: 'price' } as const,
          {
            address: params.irm,
            abi: adaptiveCurveIrmAbi,
            functionName: 'borrowRateView',
            args: [marketParams, market],
          } as const,
          // An AdaptiveCurveIrm's rate at target: the instantaneous rate, not the average since
          // the last update that borrowRateView gives (refused by other IRMs).
          {
            address: params.irm,
            abi: adaptiveCurveIrmAbi,
            functionName: 'rateAtTarget',
            args: [id as Hex],
          } as const,
        ];
      }),
      ...tokenCalls(newTokens),
      ...newOracles.flatMap((address) =>
        FEED_GETTERS.map((fn) => ({ address, abi: chainlinkOracleV2Abi, functionName: fn }) as const),
      ),
    ],
  });
  throwIfUnread(reads);
  const PER_MARKET = 3;
  let k = found.length * PER_MARKET;
  keepTokens(newTokens, reads.slice(k), cache.tokens);
  k += newTokens.length * TOKEN_CALLS;
  for (const address of newOracles) {
    const feeds = reads.slice(k, k + FEED_GETTERS.length);
    k += FEED_GETTERS.length;
    cache.oracleFeeds.set(
      address.toLowerCase(),
      feeds.every((f) => f.status === 'success')
        ? feeds.map((f) => String(f.result).toLowerCase()).filter((a) => a !== zeroAddress)
        : null,
    );
  }

  const markets: MorphoMarketRead[] = [];
  found.forEach(({ id, params, state: read }, i) => {
    const [priceRead, rateRead, targetRead] = mustSlice(
      reads,
      i * PER_MARKET,
      PER_MARKET,
      `answers of market ${id}`,
    );
    const price = priceRead.status === 'success' ? (priceRead.result as bigint) : undefined;
    const borrowRate =
      params.irm === zeroAddress ? 0n : rateRead.status === 'success' ? (rateRead.result as bigint) : null;
    if (borrowRate === null) {
      failures.push({ id, error: `market ${id}: the IRM's borrowRateView did not answer` });
      return;
    }
    const loan = cache.tokens.get(params.loanToken.toLowerCase());
    const collateral = cache.tokens.get(params.collateralToken.toLowerCase());
    if (!loan || !collateral) {
      const silent = loan ? params.collateralToken : params.loanToken;
      failures.push({ id, error: `market ${id}: token ${silent.toLowerCase()} does not answer decimals()` });
      return;
    }
    const [totalSupplyAssets, totalSupplyShares, totalBorrowAssets, totalBorrowShares, lastUpdate, fee] =
      read as [bigint, bigint, bigint, bigint, bigint, bigint];
    const at = lastUpdate > range.timestamp ? lastUpdate : range.timestamp;
    const state = {
      params,
      totalSupplyAssets,
      totalBorrowAssets,
      totalSupplyShares,
      totalBorrowShares,
      lastUpdate,
      fee,
    };
    const priced = price === undefined ? {} : { price };
    let market: Market;
    let rate: bigint;
    if (params.irm !== zeroAddress && targetRead.status === 'success') {
      // AdaptiveCurveIrm: blue-sdk accrues as the contract would, and gives the rate at the block.
      market = new Market({ ...state, ...priced, rateAtTarget: targetRead.result as bigint }).accrueInterest(
        at,
      );
      rate = market.getEndBorrowRate(at);
    } else {
      // Any other IRM: its borrowRateView, over the time since the last update.
      const elapsed = at - lastUpdate;
      const { interest, feeShares } = MarketUtils.getAccruedInterest(
        borrowRate,
        { totalSupplyAssets, totalBorrowAssets, totalSupplyShares, fee },
        elapsed,
      );
      market = new Market({
        ...state,
        ...priced,
        totalSupplyAssets: totalSupplyAssets + interest,
        totalBorrowAssets: totalBorrowAssets + interest,
        totalSupplyShares: totalSupplyShares + feeShares,
        lastUpdate: at,
      });
      rate = borrowRate;
    }
    markets.push({
      id,
      params,
      market,
      borrowRate: rate,
      loan,
      collateral,
      oracleFeeds: cache.oracleFeeds.get(params.oracle.toLowerCase()) ?? null,
    });
  });

  // 3. The positions the logs touched, and those never read in this process.
  const served = new Set(markets.map((m) => m.id));
  // An account the logs name while its market cannot be read is not read: what the process kept
  // of it is forgotten, so that it is read once the market is (it waits in the checkpoint).
  for (const key of touched) {
    const a = accounts.get(key);
    if (a && !served.has(a.id)) cache.positions.delete(a.id, a.user);
  }
  const toRead = [...accounts.entries()].filter(
    ([key, a]) => served.has(a.id) && (touched.has(key) || !cache.positions.has(a.id, a.user)),
  );
  const pos =
    toRead.length === 0
      ? []
      : await rpc.multicall({
          ...at,
          contracts: toRead.map(
            ([, a]) =>
              ({
                address: morpho,
                abi: blueAbi,
                functionName: 'position',
                args: [a.id as Hex, a.user as Hex],
              }) as const,
          ),
        });
  throwIfUnread(pos);
  const read = new Map<string, Map<string, MorphoPositionRead | null>>();
  toRead.forEach(([key, a], i) => {
    const r = must(pos[i], `position answer of ${key}`);
    if (r.status !== 'success') {
      // (Forgotten: read again at the next pass, from the checkpoint.)
      failures.push({ id: key, error: `position ${key}: ${firstLine(r.error)}` });
      cache.positions.delete(a.id, a.user);
      return;
    }
    const [supplyShares, borrowShares, collateral] = r.result as readonly [bigint, bigint, bigint];
    const empty = supplyShares === 0n && borrowShares === 0n && collateral === 0n;
    const p = empty ? null : { id: a.id, user: a.user, supplyShares, borrowShares, collateral };
    cache.positions.set(a.id, a.user, p, Number(range.block));
    const users = read.get(a.id) ?? new Map<string, MorphoPositionRead | null>();
    read.set(a.id, users.set(a.user, p));
  });
  return {
    markets,
    liquidations,
    failures,
    positionsRead: toRead.length,
    read,
    marketIds: idList,
    accounts: [...accounts.values()],
  };
}

/** A position's health factor as Morpho computes it (WAD → number); Infinity without debt, null without a price. */
export function healthFactor(market: Market, p: { collateral: bigint; borrowShares: bigint }): number | null {
  if (p.borrowShares === 0n) return Number.POSITIVE_INFINITY;
  const hf = market.getHealthFactor(p);
  if (hf === undefined) return null;
  return hf === MathLib.MAX_UINT_256 ? Number.POSITIVE_INFINITY : Number(hf) / 1e18;
}
