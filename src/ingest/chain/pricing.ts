/**
 * Prices of a chain source's pass: a token is priced by the sources file's feeds (`X/USD`, or
 * `X/ETH` × `ETH/USD`; wrapped natives by the native), under the symbol the chain's shipped token
 * list gives its address; a feed that a market's oracle names serves that oracle's record and
 * health, never a token's price. Each pass reads the feeds at its block and the rounds published
 * since the last block read; its records say where each price comes from.
 */

import type { OracleRound } from '../../domain/records/history.ts';
import type { MarketRecord, OracleFeedRecord, OracleRecord, PriceSourceRecord } from '../../domain/types.ts';
import type { ItemReport } from '../contract.ts';
import type { RefChainlinkFeed, RefToken } from '../sandbox/reference.ts';
import { type ChainConfig, DEFAULT_HEARTBEAT_SECONDS, type FeedConfig } from '../sources-file.ts';
import {
  ANSWER_UPDATED,
  type FeedPrice,
  type FeedReading,
  readFeeds,
  readRounds,
  usdPrices,
} from './chainlink.ts';
import { FLUID_NATIVE } from './fluid.ts';
import { type ChainRpc, getLogsAdaptive, type SharedLogs } from './rpc.ts';

/** A token as prices are looked up: its address and the symbol it is priced under. */
export type Token = { address: string; symbol: string };

/** How a chain's tokens are priced by feeds, and why one is not. */
export interface TokenSymbols {
  /** The symbol a token is priced under by the file's feeds; null: none (not a listed token). */
  feedSymbolOf(token: Token): string | null;
  /** Why a token has no USD price, in a pass's item: what the user can do about it. */
  noPriceHint(token: Token): string;
}

export function tokenSymbols(chainId: number, tokens: readonly RefToken[]): TokenSymbols {
  // On a chain the reference data lists tokens for, a token is priced by its feeds only when its
  // address is a listed one, under the listed symbol: a contract naming itself "WETH" is not WETH.
  const listed = new Map(
    tokens.filter((t) => t.chainId === chainId).map((t) => [t.address.toLowerCase(), t.symbol]),
  );
  // (Fluid's placeholder for the native asset is priced as the native: ETH by ETH/USD.)
  const feedSymbolOf = (token: Token): string | null =>
    listed.size === 0 || token.address === FLUID_NATIVE ? token.symbol : (listed.get(token.address) ?? null);
  return {
    feedSymbolOf,
    noPriceHint: (token) =>
      feedSymbolOf(token) === null
        ? 'not in the shipped token list of this chain'
        : `add its ${token.symbol}/USD feed to the sources file`,
  };
}

/** The feeds a pass read, and the prices they give. */
export interface PassPrices extends TokenSymbols {
  readings: FeedReading[];
  byFeed: ReadonlyMap<string, FeedReading>;
  /** A token's USD price by the file's feeds (null: not priced by feeds). */
  usdOf(token: Token): number | null;
  /** The same with the feed behind it. */
  feedPriceOf(token: Token): FeedPrice | null;
}

/** The feeds of a chain source as they stand between passes, and each pass's read of them. */
export class ChainFeeds {
  readonly #chain: ChainConfig;
  readonly #rpc: ChainRpc;
  readonly #reference: readonly RefChainlinkFeed[];
  readonly #symbols: TokenSymbols;
  /**
   * The publishers of the file's feeds as the last pass found them (their logs go in the next
   * pass's shared read; feeds that markets' oracles name are anyone's: read apart, by topic).
   */
  #publishers = new Set<string>();
  /**
   * Each feed's last reading: a feed that fails a pass, or whose proxy changed aggregator, still
   * has that range's rounds read from the publisher it had.
   */
  readonly #lastReading = new Map<string, FeedReading>();
  /** The feeds of the pass under way: the file's, and those its contracts name. */
  #feeds = new Map<string, FeedConfig>();

  constructor(
    chain: ChainConfig,
    rpc: ChainRpc,
    reference: readonly RefChainlinkFeed[],
    symbols: TokenSymbols,
  ) {
    this.#chain = chain;
    this.#rpc = rpc;
    this.#reference = reference;
    this.#symbols = symbols;
  }

  /** The publishers whose logs the chain's shared read takes. */
  get publishers(): ReadonlySet<string> {
    return this.#publishers;
  }

  /**
   * Reads at `block` the file's feeds and those the markets' oracles and the comets name
   * (`named`), each an item of the pass.
   */
  async read(block: bigint, named: readonly string[], items: ItemReport[]): Promise<PassPrices> {
    const chain = this.#chain;
    const feeds = new Map(chain.chainlink.map((f) => [f.address, f]));
    const fileFeeds = new Set(feeds.keys());
    for (const address of named)
      if (!feeds.has(address)) feeds.set(address, discoveredFeed(chain.chainId, address, this.#reference));
    this.#feeds = feeds;
    const read = await readFeeds(this.#rpc, [...feeds.values()], block);
    for (const f of read.failures) items.push({ id: `feed:${f.feed.address}`, ok: false, error: f.error });
    const readings = read.readings.map(withPairFromDescription);
    for (const r of readings) items.push({ id: `feed:${r.feed.address}`, ok: true });
    const byFeed = new Map(readings.map((r) => [r.feed.address, r]));
    // Prices come from the file's feeds only: a feed an oracle names is anyone's contract
    // (Morpho Blue is permissionless); it serves that oracle's health, never a token's price.
    const feedPriceOf = feedPricer(
      readings.filter((r) => fileFeeds.has(r.feed.address)),
      this.#symbols.feedSymbolOf,
    );
    return { ...this.#symbols, readings, byFeed, feedPriceOf, usdOf: usdOnly(feedPriceOf) };
  }

  /**
   * The logs, in the shared read's blocks, of the feeds read last pass that it does not cover
   * (those an oracle names: anyone's contracts, read apart, `AnswerUpdated` alone); null when
   * there are none. The pass's rounds take theirs from them (`rounds`).
   */
  async apart(shared: SharedLogs): Promise<SharedLogs | null> {
    const addresses = [...new Set([...this.#lastReading.values()].map((r) => r.publisher.address))].filter(
      (a) => !shared.addresses.has(a),
    );
    if (addresses.length === 0) return null;
    const logs = await getLogsAdaptive(this.#rpc, {
      what: 'chainlink',
      address: addresses as `0x${string}`[],
      events: [ANSWER_UPDATED],
      fromBlock: shared.fromBlock,
      toBlock: shared.toBlock,
    });
    return { fromBlock: shared.fromBlock, toBlock: shared.toBlock, addresses: new Set(addresses), logs };
  }

  /**
   * Each feed's latest round, and every round published in `range` (none on a first sync: the
   * history window is days, not years); then the feeds read this pass are the ones kept.
   */
  async rounds(
    prices: PassPrices,
    range: { fromBlock: bigint; toBlock: bigint } | null,
    shared: SharedLogs | undefined,
    apart: SharedLogs | null,
  ): Promise<OracleRound[]> {
    const chainId = this.#chain.chainId;
    const { readings, byFeed } = prices;
    const latestRounds: OracleRound[] = readings.map((r) => ({
      chainId,
      feed: r.feed.address,
      roundId: r.roundId.toString(),
      answer: r.answer,
      updatedAt: r.updatedAt * 1000,
    }));
    // The shared read, with the feeds' logs read apart this pass (`apart`: a reader of the
    // protocols' logs never sees those).
    const logs =
      shared && apart && apart.fromBlock === shared.fromBlock && apart.toBlock === shared.toBlock
        ? {
            ...shared,
            addresses: new Set([...shared.addresses, ...apart.addresses]),
            logs: [...shared.logs, ...apart.logs],
          }
        : shared;
    const published =
      range === null
        ? []
        : await readRounds(
            this.#rpc,
            chainId,
            [
              ...readings,
              ...[...this.#lastReading.values()].filter((before) => {
                const now = byFeed.get(before.feed.address);
                return now === undefined || now.publisher.address !== before.publisher.address;
              }),
            ],
            range,
            logs,
          );
    for (const r of readings) this.#lastReading.set(r.feed.address, r);
    // Feeds no longer read (their market gone) are forgotten.
    for (const address of this.#lastReading.keys())
      if (!this.#feeds.has(address)) this.#lastReading.delete(address);
    const fileFeeds = new Set(this.#chain.chainlink.map((f) => f.address));
    this.#publishers = new Set(
      readings.filter((r) => fileFeeds.has(r.feed.address)).map((r) => r.publisher.address),
    );
    return [...new Map([...published, ...latestRounds].map((r) => [`${r.feed}:${r.roundId}`, r])).values()];
  }
}

/** A feed an oracle names that the file does not list: its heartbeat from the reference data. */
function discoveredFeed(
  chainId: number,
  address: string,
  reference: readonly RefChainlinkFeed[],
): FeedConfig {
  const ref = reference.find((r) => r.chainId === chainId && r.address.toLowerCase() === address);
  const [base, quote] = (ref?.pair ?? '?/?').split('/') as [string, string];
  return {
    address,
    pair: ref?.pair ?? '',
    base: base.toUpperCase(),
    quote: quote.toUpperCase(),
    heartbeatSeconds: ref?.heartbeatSeconds ?? DEFAULT_HEARTBEAT_SECONDS,
    deviationThreshold: ref?.deviationPercent == null ? null : ref.deviationPercent / 100,
  };
}

/** A feed without a known pair takes it from its description (`ETH / USD`). */
function withPairFromDescription(r: FeedReading): FeedReading {
  if (r.feed.pair !== '') return r;
  const m = /^\s*([^/\s]+)\s*\/\s*([^/\s]+)\s*$/.exec(r.description);
  if (!m) return r;
  const [, base = '', quote = ''] = m;
  return {
    ...r,
    feed: { ...r.feed, pair: `${base}/${quote}`, base: base.toUpperCase(), quote: quote.toUpperCase() },
  };
}

/** The USD price alone of a feed pricer's answer (null: not priced by feeds). */
function usdOnly(priceOf: (token: Token) => FeedPrice | null) {
  return (token: Token): number | null => priceOf(token)?.usd ?? null;
}

/** A token's USD price from feed readings (docs/decisions.md "Real sources"), by the symbol it is priced under (null: not priced by feeds). */
export function pricer(readings: readonly FeedReading[], feedSymbolOf: (t: Token) => string | null) {
  return usdOnly(feedPricer(readings, feedSymbolOf));
}

/** A token's feed price (docs/decisions.md "Real sources") with the feed behind it; null: not priced by feeds. */
function feedPricer(readings: readonly FeedReading[], feedSymbolOf: (t: Token) => string | null) {
  const { priceOf } = usdPrices(readings);
  return (token: Token): FeedPrice | null => {
    const symbol = feedSymbolOf(token);
    return symbol === null ? null : priceOf(symbol);
  };
}

/**
 * Records where each price of the markets read this pass comes from ("Real sources" (docs/decisions.md)'s order): the feed that
 * gives that price, else the market's oracle. A market kept from the last pass (one of
 * `kept`) keeps its own.
 */
export function recordPriceSources(
  markets: MarketRecord[],
  kept: ReadonlySet<MarketRecord>,
  feedPriceOf: (token: Token) => FeedPrice | null,
): void {
  const sourceOf = (
    token: Token,
    usd: number | null,
    oracle: OracleRecord | null,
  ): PriceSourceRecord | null => {
    if (usd === null) return null;
    const f = feedPriceOf(token);
    if (f && f.usd === usd) return { kind: 'feed', address: f.feed, description: f.description };
    return (
      oracle && {
        kind: 'oracle',
        address: oracle.address,
        description: `${oracle.type} (${oracle.provider})`,
      }
    );
  };
  for (const m of markets) {
    if (kept.has(m)) continue;
    m.loanPriceSource = sourceOf({ address: m.loanAddress, symbol: m.loan }, m.loanPrice, m.oracle);
    m.collateralPriceSource = sourceOf(
      { address: m.collateralAddress, symbol: m.collateral },
      m.collateralPrice,
      m.oracle,
    );
  }
}

/** An oracle whose price sources are not resolved (`Custom`), with why. */
export function customOracle(address: string, warning: string): OracleRecord {
  return {
    address: address.toLowerCase(),
    type: 'Custom',
    provider: 'Unknown',
    feeds: [],
    isComposite: false,
    warnings: [warning],
  };
}

/**
 * An oracle record from the feeds behind it (null: its shape is not known), each with its last
 * update as read this pass; `address` is the oracle's (a comet's: the collateral's feed).
 */
export function oracleRecord(
  address: string,
  feedAddresses: readonly string[] | null,
  byFeed: ReadonlyMap<string, FeedReading>,
  type: 'ChainlinkOracleV2' | 'ChainlinkOracle',
): OracleRecord {
  if (feedAddresses === null)
    return customOracle(address, 'Price source not identified; check the oracle contract');
  const feeds: OracleFeedRecord[] = [];
  const warnings: string[] = [];
  for (const feed of new Set(feedAddresses)) {
    const r = byFeed.get(feed);
    if (!r) {
      warnings.push(`Feed ${feed} did not answer`);
      continue;
    }
    feeds.push({
      address: feed,
      description: r.description,
      pair: r.feed.pair,
      heartbeatSeconds: r.feed.heartbeatSeconds,
      lastUpdateTimestamp: r.updatedAt,
      updateIntervalSeconds: null,
      deviationThreshold: r.feed.deviationThreshold,
    });
  }
  return {
    address: address.toLowerCase(),
    type,
    provider: 'Chainlink',
    feeds,
    isComposite: new Set(feedAddresses).size > 1,
    warnings: warnings.length > 0 ? warnings : null,
  };
}
