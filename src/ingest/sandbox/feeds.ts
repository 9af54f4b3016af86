/**
 * The sandbox's oracle feeds as the simulation sees them: each distinct feed of the dataset (a
 * chain and a feed address, whichever markets use it) becomes a FeedSpec of the oracle-round
 * simulator (simulation/oracle-rounds.ts) over the live pricer's price model, so the rounds a
 * feed posts follow the prices the markets are served at.
 */

import { type AssetFamily, assetFamily, feedSymbol } from '../../domain/asset-family.ts';
import type { OracleRound as OracleRoundRow } from '../../domain/records/history.ts';
import type { FeedUpdate, MarketRecord } from '../../domain/types.ts';
import { SANDBOX_AS_OF } from './index.ts';
import { sandboxPriceBasis } from './live.ts';
import { loadReference, type RefChainlinkFeed, type ReferenceData } from './reference.ts';
import type { PriceModel } from './simulation/index.ts';
import { DAY_MS, HOUR_MS, MINUTE_MS, streamId, unitAt } from './simulation/noise.ts';
import {
  type CheckPrices,
  createOracleSimulator,
  type FeedSpec,
  type OracleRound,
  type RoundCursor,
  type RoundPrices,
  type StaleWindow,
} from './simulation/oracle-rounds.ts';

/** A feed the dataset shows as stopped at the snapshot resumes this many hours after it (uniform, by feed). */
export const RESUME_HOURS: readonly [number, number] = [1, 12];

/** A feed of the sandbox and the simulator's view of it. */
export interface SandboxFeed {
  chainId: number;
  /** Lower-case 0x address. */
  address: string;
  /** The pair as the dataset names it (the first market's, when markets disagree). */
  pair: string;
  heartbeatSec: number;
  /** key `${chainId}:${address}`; asset and quote are keys of the price model. */
  spec: FeedSpec;
  /** Where the deviation threshold comes from. */
  deviationSource: 'reference' | 'default';
  /**
   * A feed the dataset shows as stopped (updateIntervalSeconds null): it posts nothing after
   * its last update until it resumes, RESUME_HOURS after the snapshot (then a recovery round),
   * as a real feed's outage ends. Null for a feed that keeps posting.
   */
  stop: StaleWindow | null;
}

/**
 * Deviation thresholds (fractions) used when the reference data gives none, by what the pair
 * prices. Chainlink's lists put most USD feeds of majors at 0.5 %, stables at 0.25 % and
 * long-tail tokens at 1-2 %.
 */
export const DEFAULT_DEVIATION = {
  /** A stable (USD, yield-bearing USD, EUR) against USD or another stable. */
  stable: 0.0025,
  /** ETH, BTC, gold, well-known tokens against USD, and pairs across pegs (ETH/BTC...). */
  volatile: 0.005,
  /** Long-tail tokens ('other' family) against anything. */
  longTail: 0.01,
  /** Ratio feeds of one peg, moving little (mostly heartbeat rounds): LST/ETH, wrapper/BTC, PT/underlying. */
  samePeg: 0.005,
} as const;

/** Reference thresholds outside this range (PoR feeds at 1e-7 %, NAV feeds at 25 %) are ignored. */
const REFERENCE_DEVIATION_RANGE: readonly [number, number] = [0.0005, 0.1];

/** What a pair side resolves to: a price-model key, or the USD numeraire. */
type Side = { key: string } | 'usd' | null;

/** Symbols a feed quotes in that are USD itself. */
const USD_SYMBOLS = new Set(['USD']);

/** Families, and the price-model key families fall back on when a feed names an asset no market holds. */
const ANCHOR_PREFERENCE: Readonly<Partial<Record<AssetFamily, readonly string[]>>> = {
  eth: ['ETH', 'WETH'],
  'eth-lst': ['ETH', 'WETH'],
  btc: ['WBTC', 'CBBTC', 'BTC', 'TBTC'],
  eur: ['EURC', 'EURE', 'EURS'],
  gold: ['PAXG', 'XAUT'],
};

/** The unit a family is pegged to, null for tokens on their own. */
const PEGS: Readonly<Partial<Record<AssetFamily | 'usd', string>>> = {
  usd: 'usd',
  'usd-yield': 'usd',
  eur: 'eur',
  eth: 'eth',
  'eth-lst': 'eth',
  btc: 'btc',
  gold: 'gold',
};

/** The two sides of a pair: `X/Y`, the first and last of `X/Y/Z`, or Aave's `PREFIX_X__Y`. */
export function pairSides(pair: string): [string, string] | null {
  const parts = pair.split('/').map((s) => s.trim());
  if (parts.length >= 2) return [parts[0] as string, parts[parts.length - 1] as string];
  const m = /(?:^|_)([^_]+)__([^_]+)$/.exec(pair);
  return m ? [m[1] as string, m[2] as string] : null;
}

/**
 * Deviation thresholds of the Chainlink list (`deviationPercent`, a percentage) by
 * `${chainId}:${address}`, as fractions, when in a plausible range.
 */
export function referenceDeviations(ref: ReferenceData): Map<string, number> {
  // reference.ts declares only the fields the generator reads; the list carries this one too.
  const feeds = ref.chainlinkFeeds as readonly (RefChainlinkFeed & { deviationPercent?: number | null })[];
  const out = new Map<string, number>();
  const [lo, hi] = REFERENCE_DEVIATION_RANGE;
  for (const f of feeds) {
    const d = typeof f.deviationPercent === 'number' ? f.deviationPercent / 100 : Number.NaN;
    if (d >= lo && d <= hi) out.set(`${f.chainId}:${f.address.toLowerCase()}`, d);
  }
  return out;
}

/** The default threshold of a pair whose sides are of these families (`usd` for the numeraire). */
export function defaultDeviation(base: AssetFamily | 'usd', quote: AssetFamily | 'usd'): number {
  if (base === 'other' || quote === 'other') return DEFAULT_DEVIATION.longTail;
  const pb = PEGS[base];
  const pq = PEGS[quote];
  const stable = (p: string | undefined) => p === 'usd' || p === 'eur';
  if (stable(pb) && stable(pq)) return DEFAULT_DEVIATION.stable;
  if ((pb !== undefined && pb === pq) || base === 'pt' || quote === 'pt') return DEFAULT_DEVIATION.samePeg;
  return DEFAULT_DEVIATION.volatile;
}

/**
 * The distinct feeds of a dataset's markets (by chain and address, in the order markets first
 * use them) as simulator feeds over `model` (the live pricer's: its keys are the markets' token
 * symbols). A side of the pair resolves to the model key of the same feed symbol (WETH and ETH
 * are one), else to its family's anchor (BTC to WBTC, EUR to EURC), else, for the priced side,
 * to the token of the first market whose oracle lists the feed (collateral for its first feed,
 * loan for a later one); USD is the numeraire. A feed whose quote cannot be resolved is taken
 * in USD; one whose priced side cannot be resolved either is left out (it keeps the dataset's
 * clock; none in the default sandbox). Deviation: `deviations` (the reference's, see
 * referenceDeviations) when it has the feed, else DEFAULT_DEVIATION by pair kind. Heartbeat:
 * the feed record's.
 */
export function sandboxFeeds(
  markets: readonly MarketRecord[],
  model: PriceModel,
  deviations: ReadonlyMap<string, number> = referenceDeviations(loadReference()),
): SandboxFeed[] {
  const byFeedSymbol = new Map<string, string>();
  const note = (symbol: string) => {
    if (!model.has(symbol)) return;
    const fs = feedSymbol(symbol);
    const had = byFeedSymbol.get(fs);
    // Prefer the key spelled like the feed symbol (ETH over WETH), else the first seen.
    if (had === undefined || (had.toUpperCase() !== fs && symbol.toUpperCase() === fs))
      byFeedSymbol.set(fs, symbol);
  };
  for (const m of markets) {
    note(m.collateral);
    note(m.loan);
  }
  const resolve = (symbol: string): Side => {
    const fs = feedSymbol(symbol);
    if (USD_SYMBOLS.has(fs)) return 'usd';
    const exact = byFeedSymbol.get(fs);
    if (exact !== undefined) return { key: exact };
    for (const anchor of ANCHOR_PREFERENCE[assetFamily(symbol)] ?? []) {
      const key = byFeedSymbol.get(anchor);
      if (key !== undefined) return { key };
    }
    return null;
  };
  const familyOf = (side: { key: string } | 'usd'): AssetFamily | 'usd' =>
    side === 'usd' ? 'usd' : assetFamily(side.key);

  const out: SandboxFeed[] = [];
  const seen = new Set<string>();
  for (const m of markets) {
    const feeds = m.oracle?.feeds ?? [];
    for (const [i, f] of feeds.entries()) {
      const address = f.address.toLowerCase();
      const key = `${m.chainId}:${address}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const sides = pairSides(f.pair);
      let base: Side = sides ? resolve(sides[0]) : null;
      let quote: Side = sides ? resolve(sides[1]) : 'usd';
      if (base === null || base === 'usd') {
        // Not a symbol the model knows: the token this feed prices in the market that lists it.
        const token = i === 0 ? m.collateral : m.loan;
        base = model.has(token) ? { key: token } : null;
      }
      if (base === null) continue;
      if (quote === null) quote = 'usd';
      const fromRef = deviations.get(key);
      const deviation = fromRef ?? defaultDeviation(familyOf(base), familyOf(quote));
      const spec: FeedSpec = { key, asset: base.key, deviation, heartbeatSec: f.heartbeatSeconds };
      if (quote !== 'usd') spec.quote = quote.key;
      const stop =
        f.updateIntervalSeconds === null
          ? {
              startMs: f.lastUpdateTimestamp * 1000 + 1,
              endMs:
                SANDBOX_AS_OF * 1000 +
                Math.round(
                  RESUME_HOURS[0] +
                    unitAt(streamId(model.seed, `resume|${key}`), 0) * (RESUME_HOURS[1] - RESUME_HOURS[0]),
                ) *
                  HOUR_MS,
            }
          : null;
      if (stop) spec.stop = stop;
      out.push({
        chainId: m.chainId,
        address,
        pair: f.pair,
        heartbeatSec: f.heartbeatSeconds,
        spec,
        deviationSource: fromRef === undefined ? 'default' : 'reference',
        stop,
      });
    }
  }
  return out;
}

/** Feeds replayed to the start of oracleRoundRows' range between two (empty) batches. */
const SEEK_BATCH = 32;

/**
 * The rounds `feeds` posted with fromMs <= updatedAt < toMs, as history rows, one batch per
 * window of `windowMs` (a day by default), every feed's rounds of the window in each. Rows are
 * those of the simulator over `model` (OracleSimulator.rounds), exactly: each feed is followed
 * by a cursor (every check made once), and within a window each asset's price is computed once
 * per minute for all the feeds that read it. A stopped feed has no rows while it is stopped.
 * Nothing before the model's start. First come empty batches, one per SEEK_BATCH feeds whose
 * current heartbeat cell is replayed up to fromMs (about half a second for the default
 * sandbox in all), so a caller pausing between batches is never held long.
 */
export function* oracleRoundRows(
  model: PriceModel,
  feeds: readonly SandboxFeed[],
  fromMs: number,
  toMs: number,
  windowMs: number = DAY_MS,
): Generator<OracleRoundRow[]> {
  if (!(windowMs > 0)) throw new RangeError('windowMs must be positive');
  const start = Math.max(fromMs, model.startMs);
  if (!(toMs > start)) return;
  const prices = new WindowPrices(model);
  const sim = createOracleSimulator(prices);
  const followed = feeds.map((f) => ({ f, c: sim.cursor(f.spec) }));
  for (const [i, { c }] of followed.entries()) {
    c.latestAt(start - 1);
    if ((i + 1) % SEEK_BATCH === 0 && i + 1 < followed.length) yield [];
  }
  const rounds: OracleRound[] = [];
  for (let w = start; w < toMs; w += windowMs) {
    const end = Math.min(toMs, w + windowMs);
    prices.window(w, end);
    const rows: OracleRoundRow[] = [];
    for (const { f, c } of followed) {
      const until = end - 1;
      if (!(until > c.at)) continue;
      rounds.length = 0;
      c.advance(until, rounds);
      for (const r of rounds) {
        rows.push({
          chainId: f.chainId,
          feed: f.address,
          roundId: r.roundId.toString(),
          answer: r.answer,
          updatedAt: r.updatedAtMs,
        });
      }
    }
    yield rows;
  }
}

/**
 * The model's prices, and each asset's prices at the whole minutes of one window computed once
 * (when first asked) for every feed that reads the asset: the checks of a feed whose heartbeat
 * is whole minutes fall on that grid.
 */
class WindowPrices implements RoundPrices {
  readonly #model: PriceModel;
  readonly #series = new Map<string, CheckPrices>();
  #from = 0;
  #count = 0;

  constructor(model: PriceModel) {
    this.#model = model;
  }

  get seed(): number {
    return this.#model.seed;
  }

  get startMs(): number {
    return this.#model.startMs;
  }

  has(key: string): boolean {
    return this.#model.has(key);
  }

  priceAt(key: string, tMs: number): number {
    return this.#model.priceAt(key, tMs);
  }

  /** Forgets the last window's prices; those of the minutes of [fromMs, toMs) come when asked. */
  window(fromMs: number, toMs: number): void {
    this.#series.clear();
    this.#from = Math.ceil(fromMs / MINUTE_MS) * MINUTE_MS;
    this.#count = Math.max(0, Math.ceil((toMs - this.#from) / MINUTE_MS));
  }

  checkPrices(key: string): CheckPrices | null {
    let series = this.#series.get(key);
    if (!series) {
      const prices = new Float64Array(this.#count);
      for (let j = 0; j < this.#count; j++) prices[j] = this.#model.priceAt(key, this.#from + j * MINUTE_MS);
      series = { fromMs: this.#from, prices };
      this.#series.set(key, series);
    }
    return series;
  }
}

/** The served clocks of a sandbox's feeds, following the simulation as it ticks. */
export interface SandboxFeedClock {
  readonly feeds: readonly SandboxFeed[];
  /** Replays every feed up to tMs a few feeds at a time, yielding to the event loop between. */
  warm(tMs: number): Promise<void>;
  /**
   * Each feed's latest round at tMs, for the feeds whose latest round is not the one the last
   * call returned (all feeds with a round, on the first call). Moving forward by less than a
   * heartbeat checks only the minutes in between.
   */
  updatesAt(tMs: number): FeedUpdate[];
}

/** Feeds posting between warm()'s pauses. */
const WARM_BATCH = 32;

/** The clocks of `feeds` over `model` (see SandboxFeedClock). */
export function feedClock(feeds: readonly SandboxFeed[], model: RoundPrices): SandboxFeedClock {
  const sim = createOracleSimulator(model);
  // Each feed, its cursor, and the second of the last update sent for it (NaN: none yet).
  const followed: { readonly f: SandboxFeed; readonly c: RoundCursor; sent: number }[] = feeds.map((f) => ({
    f,
    c: sim.cursor(f.spec),
    sent: Number.NaN,
  }));
  return {
    feeds,
    async warm(tMs) {
      for (const [i, { c }] of followed.entries()) {
        c.latestAt(tMs);
        if ((i + 1) % WARM_BATCH === 0) await new Promise((resolve) => setImmediate(resolve));
      }
    },
    updatesAt(tMs) {
      const out: FeedUpdate[] = [];
      for (const feed of followed) {
        const r = feed.c.latestAt(tMs);
        if (r === null) continue;
        const sec = Math.floor(r.updatedAtMs / 1000);
        if (feed.sent === sec) continue;
        feed.sent = sec;
        const { f } = feed;
        out.push({ chainId: f.chainId, feed: f.address, lastUpdateTimestamp: sec });
      }
      return out;
    },
  };
}

/**
 * The feed clocks of a sandbox dataset's markets, over the price model of its live pricer
 * (sandboxPriceBasis: same seed, same paths).
 */
export function sandboxFeedClock(markets: readonly MarketRecord[], seed: number): SandboxFeedClock {
  const { model } = sandboxPriceBasis(markets, seed);
  return feedClock(sandboxFeeds(markets, model), model);
}
