/**
 * Chainlink price feeds (AggregatorV3Interface): `latestRoundData`, `decimals` and
 * `description`, read in one multicall at a block; every round published between two blocks,
 * from the `AnswerUpdated` logs of the feed's aggregator; and token USD prices (docs/decisions.md "Real sources").
 */
import { getAbiItem, parseAbi } from 'viem';
import { feedSymbol } from '../../domain/asset-family.ts';
import type { OracleRound } from '../../domain/records/history.ts';
import { append } from '../append.ts';
import type { FeedConfig } from '../sources-file.ts';
import { type ChainRpc, getLogsAdaptive, type SharedLogs, sharedLogsOf, throwIfUnread } from './rpc.ts';

export const aggregatorV3Abi = parseAbi([
  'function decimals() view returns (uint8)',
  'function description() view returns (string)',
  'function latestRoundData() view returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)',
  // A proxy's (EACAggregatorProxy): the aggregator that publishes its rounds, and its phase.
  'function aggregator() view returns (address)',
  'function phaseId() view returns (uint16)',
  'event AnswerUpdated(int256 indexed current, uint256 indexed roundId, uint256 updatedAt)',
]);

export const ANSWER_UPDATED = getAbiItem({ abi: aggregatorV3Abi, name: 'AnswerUpdated' });

/** A feed's latest round as read at a block. */
export interface FeedReading {
  feed: FeedConfig;
  description: string;
  decimals: number;
  roundId: bigint;
  /** The answer in the quote's units (answer / 10^decimals). */
  answer: number;
  /** Unix seconds of the round's update. */
  updatedAt: number;
  /**
   * Where the feed's rounds are published: a proxy's aggregator, whose round ids are the proxy's
   * with the phase in the top bits (`phase << 64 | round`); the feed itself (phase null) otherwise.
   */
  publisher: { address: string; phase: bigint | null };
}

export interface FeedReads {
  readings: FeedReading[];
  /** Feeds that could not be read, with why. */
  failures: { feed: FeedConfig; error: string }[];
}

/** Reads every feed at `blockNumber` in one multicall (three calls a feed). */
export async function readFeeds(
  rpc: ChainRpc,
  feeds: readonly FeedConfig[],
  blockNumber: bigint,
): Promise<FeedReads> {
  if (feeds.length === 0) return { readings: [], failures: [] };
  const calls = feeds.flatMap((f) => {
    const address = f.address as `0x${string}`;
    return [
      { address, abi: aggregatorV3Abi, functionName: 'decimals' } as const,
      { address, abi: aggregatorV3Abi, functionName: 'description' } as const,
      { address, abi: aggregatorV3Abi, functionName: 'latestRoundData' } as const,
      { address, abi: aggregatorV3Abi, functionName: 'aggregator' } as const,
      { address, abi: aggregatorV3Abi, functionName: 'phaseId' } as const,
    ];
  });
  const results = await rpc.multicall({
    contracts: calls,
    blockNumber,
    allowFailure: true,
    ...(await rpc.multicallOptions()),
  });
  throwIfUnread(results);
  const out: FeedReads = { readings: [], failures: [] };
  feeds.forEach((feed, i) => {
    const [d, desc, round, aggregator, phase] = results.slice(i * PER_FEED, (i + 1) * PER_FEED);
    if (d?.status !== 'success' || round?.status !== 'success') {
      const err = d?.status === 'failure' ? d.error : round?.status === 'failure' ? round.error : null;
      out.failures.push({
        feed,
        error: `feed ${feed.address} (${feed.pair}): ${err?.message.split('\n')[0] ?? 'no answer'}`,
      });
      return;
    }
    const decimals = Number(d.result);
    const [roundId, answer, , updatedAt] = round.result as readonly [bigint, bigint, bigint, bigint, bigint];
    out.readings.push({
      feed,
      description: desc?.status === 'success' ? String(desc.result) : feed.pair,
      decimals,
      roundId,
      answer: scaled(answer, decimals),
      updatedAt: Number(updatedAt),
      // A proxy (it names its aggregator, and its round ids carry its phase); else the feed itself.
      publisher:
        aggregator?.status === 'success' &&
        phase?.status === 'success' &&
        roundId >> 64n === BigInt(phase.result as number)
          ? { address: String(aggregator.result).toLowerCase(), phase: BigInt(phase.result as number) }
          : { address: feed.address, phase: null },
    });
  });
  return out;
}

const PER_FEED = 5;

/**
 * Every round the feeds published in [fromBlock, toBlock]: their publishers' `AnswerUpdated`
 * logs, in one walk, as rounds of the feeds (a proxy's round ids, its answers at its decimals).
 * A feed given twice (its proxy's old and new aggregator) has both publishers' rounds. A
 * publisher's logs that do not agree with the feed (a round id twice, or the feed's latest round
 * with another answer: an aggregator publishing for several feeds, a wrapper that scales) are
 * not taken as the feed's rounds.
 */
export async function readRounds(
  rpc: ChainRpc,
  chainId: number,
  readings: readonly FeedReading[],
  range: { fromBlock: bigint; toBlock: bigint },
  shared?: SharedLogs,
): Promise<OracleRound[]> {
  if (readings.length === 0 || range.fromBlock > range.toBlock) return [];
  // One aggregator may publish for several feeds (a proxy, and the aggregator read directly).
  const publishers = [...new Set(readings.map((r) => r.publisher.address))] as `0x${string}`[];
  const logs =
    sharedLogsOf<Awaited<ReturnType<typeof getLogsAdaptive<[typeof ANSWER_UPDATED]>>>[number]>(
      shared,
      [ANSWER_UPDATED],
      publishers,
      range.fromBlock,
      range.toBlock,
    ) ??
    (await getLogsAdaptive(rpc, {
      what: 'chainlink',
      address: publishers,
      events: [ANSWER_UPDATED],
      ...range,
    }));
  const out: OracleRound[] = [];
  // A feed may come twice (its proxy's aggregator before and after a change): each publisher's
  // logs under that publisher's phase.
  for (const r of readings) {
    const mine = logs.filter((l) => l.address.toLowerCase() === r.publisher.address);
    const rounds = mine.map((l) => ({
      chainId,
      feed: r.feed.address,
      roundId: (r.publisher.phase === null
        ? l.args.roundId
        : (r.publisher.phase << 64n) | l.args.roundId
      ).toString(),
      answer: scaled(l.args.current, r.decimals),
      updatedAt: Number(l.args.updatedAt) * 1000,
    }));
    const ids = new Set(rounds.map((x) => x.roundId));
    const latest = rounds.find((x) => x.roundId === r.roundId.toString());
    if (ids.size !== rounds.length || (latest && latest.answer !== r.answer)) continue;
    append(out, rounds);
  }
  return out;
}

/** Integers up to it are exact as doubles. */
const MAX_EXACT = BigInt(Number.MAX_SAFE_INTEGER);

/** `value / 10^decimals` as a number, exact to double precision for any size of integer. */
export function scaled(value: bigint, decimals: number): number {
  if (decimals === 0) return Number(value);
  const negative = value < 0n;
  const abs = negative ? -value : value;
  // Both exact as doubles: one division rounds the quotient once, as parsing its decimals does.
  if (abs <= MAX_EXACT && decimals <= 22) {
    const n = Number(abs) / 10 ** decimals;
    return negative ? -n : n;
  }
  const unit = 10n ** BigInt(decimals);
  const whole = abs / unit;
  const frac = abs % unit;
  const n = Number(`${whole}.${frac.toString().padStart(decimals, '0')}`);
  return negative ? -n : n;
}

/** A token's USD price from feeds: the feed it is the base of, and what it multiplies (`X / ETH × ETH / USD`). */
export interface FeedPrice {
  usd: number;
  feed: string;
  description: string;
}

/**
 * USD prices by upper-case symbol, from the feeds (docs/decisions.md "Real sources"): `X/USD` directly, `X/ETH` times
 * `ETH/USD` (any quote that itself has a USD price). A symbol with two prices keeps the direct
 * USD one. Symbols are compared as feeds name them (feedSymbol: WETH is priced by ETH/USD).
 */
export function usdPrices(readings: readonly FeedReading[]): {
  prices: Map<string, FeedPrice>;
  priceOf(symbol: string): FeedPrice | null;
} {
  const prices = new Map<string, FeedPrice>();
  // The first feed of a symbol wins (the sources file's order).
  for (const r of readings)
    if (r.feed.quote === 'USD' && r.answer > 0 && !prices.has(feedSymbol(r.feed.base)))
      prices.set(feedSymbol(r.feed.base), {
        usd: r.answer,
        feed: r.feed.address,
        description: r.description,
      });
  for (const r of readings) {
    const base = feedSymbol(r.feed.base);
    if (r.feed.quote === 'USD' || prices.has(base) || r.answer <= 0) continue;
    const quote = prices.get(feedSymbol(r.feed.quote));
    if (quote)
      prices.set(base, {
        usd: r.answer * quote.usd,
        feed: r.feed.address,
        description: `${r.description} × ${quote.description}`,
      });
  }
  const priceOf = (symbol: string) => prices.get(feedSymbol(symbol)) ?? null;
  return { prices, priceOf };
}
