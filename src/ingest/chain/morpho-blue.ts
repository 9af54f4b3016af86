/**
 * Morpho Blue on one chain, read through its own ABI and math (`@morpho-org/blue-sdk` and
 * `blue-sdk-viem`): markets found from `CreateMarket` logs, their state accrued to the block
 * with the IRM's own `borrowRateView`, the oracle's price, positions of the accounts that
 * events named (`Supply`, `Borrow`, `SupplyCollateral`, `Liquidate`), and liquidations.
 * Oracles of the `MorphoChainlinkOracleV2` shape are resolved to their feeds.
 */
import { Market, MarketParams, MarketUtils, MathLib } from '@morpho-org/blue-sdk';
import { adaptiveCurveIrmAbi, blueAbi, blueOracleAbi } from '@morpho-org/blue-sdk-viem';
import { erc20Abi, getAbiItem, parseAbi, zeroAddress } from 'viem';
import type { ChainRpc } from './rpc.ts';
import { getLogsAdaptive } from './rpc.ts';

const CREATE_MARKET = getAbiItem({ abi: blueAbi, name: 'CreateMarket' });
const ACCOUNT_EVENTS = [
  getAbiItem({ abi: blueAbi, name: 'Supply' }),
  getAbiItem({ abi: blueAbi, name: 'Borrow' }),
  getAbiItem({ abi: blueAbi, name: 'SupplyCollateral' }),
  getAbiItem({ abi: blueAbi, name: 'Liquidate' }),
] as const;

/** The feed getters of MorphoChainlinkOracleV2 (morpho-blue-oracles). */
export const chainlinkOracleV2Abi = parseAbi([
  'function BASE_FEED_1() view returns (address)',
  'function BASE_FEED_2() view returns (address)',
  'function QUOTE_FEED_1() view returns (address)',
  'function QUOTE_FEED_2() view returns (address)',
  'function BASE_VAULT() view returns (address)',
  'function QUOTE_VAULT() view returns (address)',
  'function SCALE_FACTOR() view returns (uint256)',
]);
const FEED_GETTERS = ['BASE_FEED_1', 'BASE_FEED_2', 'QUOTE_FEED_1', 'QUOTE_FEED_2'] as const;

export interface TokenMeta {
  address: string;
  symbol: string;
  name: string;
  /** Null when the token does not answer `decimals()`: its market is not served (amounts unknown). */
  decimals: number | null;
}

export interface MorphoMarketRead {
  /** The market id (0x, 32 bytes, lower-case). */
  id: string;
  params: MarketParams;
  /** The state accrued to the block (blue-sdk Market, with the oracle price when it answered). */
  market: Market;
  /** The IRM's borrow rate per second at the block, WAD (0 without an IRM). */
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
  positions: MorphoPositionRead[];
  liquidations: MorphoLiquidationRead[];
  /** Markets that could not be read (the others are served). */
  failures: { id: string; error: string }[];
}

/** What the last pass knew: the markets and the accounts to read again. */
export interface MorphoKnown {
  marketIds: readonly string[];
  accounts: readonly { id: string; user: string }[];
}

/**
 * One pass over Morpho Blue at `block` (whose timestamp is `timestamp`): the logs of
 * [fromBlock, block] add markets and accounts to those already known; every known market and
 * account is then read at `block` (a few multicalls).
 */
export async function readMorphoBlue(
  rpc: ChainRpc,
  morpho: `0x${string}`,
  range: { fromBlock: bigint; block: bigint; timestamp: bigint },
  known: MorphoKnown,
): Promise<MorphoRead> {
  const mc = await rpc.multicallOptions();
  const at = { blockNumber: range.block, allowFailure: true, ...mc } as const;
  const ids = new Set(known.marketIds.map((id) => id.toLowerCase()));
  const accounts = new Map<string, { id: string; user: string }>();
  for (const a of known.accounts) accounts.set(`${a.id}:${a.user}`, { id: a.id, user: a.user.toLowerCase() });
  const liquidations: MorphoLiquidationRead[] = [];
  if (range.fromBlock <= range.block) {
    const created = await getLogsAdaptive(rpc, {
      address: morpho,
      events: [CREATE_MARKET],
      fromBlock: range.fromBlock,
      toBlock: range.block,
    });
    for (const l of created) ids.add(l.args.id.toLowerCase());
    const logs = await getLogsAdaptive(rpc, {
      address: morpho,
      events: ACCOUNT_EVENTS,
      fromBlock: range.fromBlock,
      toBlock: range.block,
    });
    const times = new Map<bigint, number>();
    for (const l of logs) {
      const id = l.args.id.toLowerCase();
      const user = ('onBehalf' in l.args ? l.args.onBehalf : l.args.borrower).toLowerCase();
      accounts.set(`${id}:${user}`, { id, user });
      if (l.eventName !== 'Liquidate') continue;
      let ts = times.get(l.blockNumber);
      if (ts === undefined) {
        ts = Number((await rpc.client.getBlock({ blockNumber: l.blockNumber })).timestamp);
        times.set(l.blockNumber, ts);
      }
      liquidations.push({
        id,
        txHash: l.transactionHash.toLowerCase(),
        logIndex: l.logIndex,
        block: Number(l.blockNumber),
        timestamp: ts,
        liquidator: l.args.caller.toLowerCase(),
        borrower: user,
        repaidAssets: l.args.repaidAssets,
        seizedAssets: l.args.seizedAssets,
        badDebtAssets: l.args.badDebtAssets,
      });
    }
  }

  // Markets: params and state, then the oracle's price and the IRM's rate.
  const idList = [...ids].sort() as `0x${string}`[];
  const base = await rpc.client.multicall({
    ...at,
    contracts: idList.flatMap((id) => [
      { address: morpho, abi: blueAbi, functionName: 'idToMarketParams', args: [id] } as const,
      { address: morpho, abi: blueAbi, functionName: 'market', args: [id] } as const,
    ]),
  });
  const failures: MorphoRead['failures'] = [];
  const found: { id: string; params: MarketParams; state: readonly bigint[] }[] = [];
  idList.forEach((id, i) => {
    const p = base[i * 2]!;
    const s = base[i * 2 + 1]!;
    if (p.status !== 'success' || s.status !== 'success') {
      failures.push({
        id,
        error: `market ${id}: ${(p.error ?? s.error)?.message.split('\n')[0] ?? 'no answer'}`,
      });
      return;
    }
    const [loanToken, collateralToken, oracle, irm, lltv] = p.result as readonly [
      `0x${string}`,
      `0x${string}`,
      `0x${string}`,
      `0x${string}`,
      bigint,
    ];
    if (loanToken === zeroAddress) return; // not created (yet) at this block
    found.push({
      id,
      params: new MarketParams({ loanToken, collateralToken, oracle, irm, lltv }),
      state: s.result as readonly bigint[],
    });
  });
  const perMarket = await rpc.client.multicall({
    ...at,
    contracts: found.flatMap(({ params, state }) => {
      const [totalSupplyAssets, totalSupplyShares, totalBorrowAssets, totalBorrowShares, lastUpdate, fee] =
        state;
      const stateArg = {
        totalSupplyAssets: totalSupplyAssets!,
        totalSupplyShares: totalSupplyShares!,
        totalBorrowAssets: totalBorrowAssets!,
        totalBorrowShares: totalBorrowShares!,
        lastUpdate: lastUpdate!,
        fee: fee!,
      };
      const paramsArg = {
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
          args: [paramsArg, stateArg],
        } as const,
        ...FEED_GETTERS.map(
          (fn) => ({ address: params.oracle, abi: chainlinkOracleV2Abi, functionName: fn }) as const,
        ),
      ];
    }),
  });
  const tokens = await readTokens(
    rpc,
    [...new Set(found.flatMap((m) => [m.params.loanToken, m.params.collateralToken]))],
    at,
  );
  const markets: MorphoMarketRead[] = [];
  const per = 2 + FEED_GETTERS.length;
  found.forEach(({ id, params, state }, i) => {
    const r = perMarket.slice(i * per, (i + 1) * per);
    const price = r[0]?.status === 'success' ? (r[0].result as bigint) : undefined;
    const borrowRate =
      params.irm === zeroAddress ? 0n : r[1]?.status === 'success' ? (r[1].result as bigint) : null;
    if (borrowRate === null) {
      failures.push({ id, error: `market ${id}: the IRM's borrowRateView did not answer` });
      return;
    }
    const [totalSupplyAssets, totalSupplyShares, totalBorrowAssets, totalBorrowShares, lastUpdate, fee] =
      state as [bigint, bigint, bigint, bigint, bigint, bigint];
    // Interest accrued from the last update to the block, as Morpho would accrue it then.
    const elapsed = range.timestamp > lastUpdate ? range.timestamp - lastUpdate : 0n;
    const { interest, feeShares } = MarketUtils.getAccruedInterest(
      borrowRate,
      { totalSupplyAssets, totalBorrowAssets, totalSupplyShares, fee },
      elapsed,
    );
    const market = new Market({
      params,
      totalSupplyAssets: totalSupplyAssets + interest,
      totalBorrowAssets: totalBorrowAssets + interest,
      totalSupplyShares: totalSupplyShares + feeShares,
      totalBorrowShares,
      lastUpdate: lastUpdate > range.timestamp ? lastUpdate : range.timestamp,
      fee,
      ...(price === undefined ? {} : { price }),
    });
    const loan = tokens.get(params.loanToken.toLowerCase())!;
    const collateral = tokens.get(params.collateralToken.toLowerCase())!;
    const silent = [loan, collateral].find((t) => t.decimals === null);
    if (silent) {
      failures.push({ id, error: `market ${id}: token ${silent.address} does not answer decimals()` });
      return;
    }
    const feeds = r.slice(2);
    const oracleFeeds = feeds.every((f) => f.status === 'success')
      ? feeds.map((f) => String(f.result).toLowerCase()).filter((a) => a !== zeroAddress)
      : null;
    markets.push({
      id,
      params,
      market,
      borrowRate,
      loan,
      collateral,
      oracleFeeds,
    });
  });

  // Positions of every account known, at the block.
  const accountList = [...accounts.values()].filter((a) => markets.some((m) => m.id === a.id));
  const pos = await rpc.client.multicall({
    ...at,
    contracts: accountList.map(
      (a) =>
        ({
          address: morpho,
          abi: blueAbi,
          functionName: 'position',
          args: [a.id as `0x${string}`, a.user as `0x${string}`],
        }) as const,
    ),
  });
  const positions: MorphoPositionRead[] = [];
  accountList.forEach((a, i) => {
    const r = pos[i]!;
    if (r.status !== 'success') {
      failures.push({ id: `${a.id}:${a.user}`, error: `position: ${r.error.message.split('\n')[0]}` });
      return;
    }
    const [supplyShares, borrowShares, collateral] = r.result as readonly [bigint, bigint, bigint];
    if (supplyShares === 0n && borrowShares === 0n && collateral === 0n) return;
    positions.push({ id: a.id, user: a.user, supplyShares, borrowShares, collateral });
  });
  return { markets, positions, liquidations, failures };
}

/** ERC-20 symbol, name and decimals of each token (a token that does not answer is named by its address). */
async function readTokens(
  rpc: ChainRpc,
  addresses: readonly `0x${string}`[],
  at: { blockNumber: bigint; allowFailure: true },
): Promise<Map<string, TokenMeta>> {
  const r = await rpc.client.multicall({
    ...at,
    ...(await rpc.multicallOptions()),
    contracts: addresses.flatMap((address) => [
      { address, abi: erc20Abi, functionName: 'symbol' } as const,
      { address, abi: erc20Abi, functionName: 'name' } as const,
      { address, abi: erc20Abi, functionName: 'decimals' } as const,
    ]),
  });
  const out = new Map<string, TokenMeta>();
  addresses.forEach((address, i) => {
    const [symbol, name, decimals] = r.slice(i * 3, i * 3 + 3);
    const a = address.toLowerCase();
    const short = `${a.slice(0, 6)}…${a.slice(-4)}`;
    out.set(a, {
      address: a,
      symbol: symbol?.status === 'success' ? String(symbol.result) : short,
      name: name?.status === 'success' ? String(name.result) : short,
      decimals: decimals?.status === 'success' ? Number(decimals.result) : null,
    });
  });
  return out;
}

/** A position's health factor as Morpho computes it (WAD → number); Infinity without debt, null without a price. */
export function healthFactor(market: Market, p: { collateral: bigint; borrowShares: bigint }): number | null {
  if (p.borrowShares === 0n) return Number.POSITIVE_INFINITY;
  const hf = market.getHealthFactor(p);
  if (hf === undefined) return null;
  return hf === MathLib.MAX_UINT_256 ? Number.POSITIVE_INFINITY : Number(hf) / 1e18;
}
