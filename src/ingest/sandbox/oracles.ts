/**
 * Oracles of the sandbox: real feed addresses, descriptions and heartbeats (Chainlink and
 * Morpho feed lists, Aave price sources), combined into per-market oracles, with a simulated
 * update clock per feed. A feed has one clock for the whole dataset, whichever markets use it.
 */

import { assetFamily, feedSymbol } from '../../domain/asset-family.ts';
import type { OracleProvider, OracleType } from '../../domain/enums.ts';
import type { OracleFeedRecord, OracleRecord } from '../../domain/types.ts';
import { ptUnderlying } from './prices.ts';
import type { ReferenceData } from './reference.ts';
import { hash32, rngFor } from './rng.ts';

/** A price feed as the reference data knows it. `base`/`quote` are normalized symbols. */
export interface FeedInfo {
  chainId: number;
  address: string;
  description: string;
  pair: string;
  base: string;
  quote: string;
  vendor: string;
  /** Heartbeat from the source, null when the source has none. */
  heartbeat: number | null;
  /** A conversion-rate feed (LST/ETH exchange rate, vault share price), not a market price. */
  exchangeRate: boolean;
  /** Deviation threshold from the source (0.005 = 0.5 %); absent when the source has none. */
  deviation?: number;
}

/** Heartbeats picked (by a hash of chain and address) for feeds whose source gives none. */
const HEARTBEAT_CHOICES = [3600, 86400, 1200] as const;

/**
 * Share of feeds caught in an outage at asOf (updateIntervalSeconds null, stale then; the
 * simulation resumes them within hours: feeds.ts).
 */
const STUCK_FEED_SHARE = 0.01;

const WARNING_LONG_HEARTBEAT = 'Feed heartbeat exceeds 24h';
const WARNING_CUSTOM = 'Price source not identified; check the oracle contract';
const WARNING_NO_FEED_METADATA = 'No public feed metadata for this oracle';
const WARNING_LOAN_UNPRICED = 'Loan asset has no listed feed';

const EXCHANGE_RATE_VENDORS = new Set([
  'Lido',
  'Swell',
  'Kelp Gain',
  'Origin Protocol',
  'Angle',
  'Frax',
  'Sky',
  'Maker',
  'Ethena',
  'Usual',
  'Elixir',
  'Tokemak',
  'Reservoir',
  'AladdinDAO',
  'f(x) Protocol',
]);

function vendorProvider(vendor: string): OracleProvider {
  if (vendor === 'Chainlink') return 'Chainlink';
  if (vendor === 'Redstone' || vendor === 'RedStone') return 'Redstone';
  if (vendor === 'Pyth Network') return 'Pyth';
  if (vendor === 'Chronicle') return 'Chronicle';
  if (vendor === 'API3') return 'API3';
  if (vendor.includes('Pendle')) return 'Pendle';
  return 'Unknown';
}

function providerType(provider: OracleProvider, morpho: boolean): OracleType {
  switch (provider) {
    case 'Chainlink':
      return morpho ? 'ChainlinkOracleV2' : 'ChainlinkOracle';
    case 'Redstone':
      return 'RedstoneOracle';
    case 'Pyth':
      return 'PythOracle';
    case 'Chronicle':
      return 'ChronicleOracle';
    case 'API3':
      return 'Api3Oracle';
    case 'Pendle':
      return 'PendlePtOracle';
    default:
      return 'Custom';
  }
}

/** Type and provider of an oracle from its feeds (the first feed is the collateral's price leg). */
function classifyOracle(
  feeds: readonly FeedInfo[],
  morpho: boolean,
): { type: OracleType; provider: OracleProvider } {
  const pendle = feeds.find((f) => vendorProvider(f.vendor) === 'Pendle');
  if (pendle) return { type: 'PendlePtOracle', provider: 'Pendle' };
  const first = feeds[0];
  if (!first) return { type: 'Custom', provider: 'Unknown' };
  if (first.exchangeRate) {
    const priced = feeds.slice(1).map((f) => vendorProvider(f.vendor));
    return { type: 'ExchangeRateOracle', provider: priced.find((p) => p !== 'Unknown') ?? 'Unknown' };
  }
  const provider = vendorProvider(first.vendor);
  return { type: providerType(provider, morpho), provider };
}

/** Result of resolving a collateral/loan pair to feeds. */
export interface FeedRoute {
  feeds: FeedInfo[];
  warnings: string[];
}

export class OracleFactory {
  readonly #seed: number;
  readonly #asOf: number;
  readonly #byAddress = new Map<string, FeedInfo>();
  /** chainId -> base symbol -> feeds (resolver order: source file order). */
  readonly #byBase = new Map<number, Map<string, FeedInfo[]>>();
  readonly #clock = new Map<string, { last: number; interval: number | null }>();
  readonly #cache = new Map<string, OracleRecord | null>();

  constructor(ref: ReferenceData, seed: number, asOf: number) {
    this.#seed = seed;
    this.#asOf = asOf;
    for (const f of ref.chainlinkFeeds) {
      const pair = f.pair ?? null;
      const info: FeedInfo = {
        chainId: f.chainId,
        address: f.address,
        description: f.pair && f.name.includes('__') ? f.pair.replace('/', ' / ') : f.name,
        pair: pair ?? f.name,
        base: f.baseAsset ? feedSymbol(f.baseAsset) : '',
        quote: f.quoteAsset ? feedSymbol(f.quoteAsset) : '',
        vendor: 'Chainlink',
        heartbeat: f.heartbeatSeconds,
        exchangeRate: /exchange rate/i.test(`${f.productSubType ?? ''} ${f.name}`),
        ...(typeof f.deviationPercent === 'number' && f.deviationPercent > 0
          ? { deviation: f.deviationPercent / 100 }
          : {}),
      };
      this.#register(info, pair !== null && !f.shutdownDate);
    }
    for (const f of ref.morphoOracleFeeds) {
      if (this.#byAddress.has(`${f.chainId}:${f.address}`)) continue;
      const info: FeedInfo = {
        chainId: f.chainId,
        address: f.address,
        description: f.description.trim(),
        pair: f.pair ?? f.description.trim(),
        base: f.baseAsset ? feedSymbol(f.baseAsset) : '',
        quote: f.quoteAsset ? feedSymbol(f.quoteAsset) : '',
        vendor: f.vendor,
        heartbeat: null,
        exchangeRate:
          EXCHANGE_RATE_VENDORS.has(f.vendor) || /exchange rate|redemption|fundamental/i.test(f.description),
      };
      this.#register(info, f.pair !== null);
    }
    // Aave price sources: Chainlink-based adapters priced in USD, one per reserve.
    for (const r of ref.aaveReserves) {
      if (this.#byAddress.has(`${r.chainId}:${r.oracle}`)) continue;
      const sym = r.symbol;
      this.#register(
        {
          chainId: r.chainId,
          address: r.oracle,
          description: r.risk?.oracleDescription ?? `${sym} / USD (Aave price source)`,
          pair: `${sym}/USD`,
          base: feedSymbol(sym),
          quote: 'USD',
          vendor: 'Chainlink',
          heartbeat: null,
          exchangeRate: false,
        },
        true,
      );
    }
  }

  #register(info: FeedInfo, routable: boolean): void {
    const key = `${info.chainId}:${info.address}`;
    if (this.#byAddress.has(key)) return;
    this.#byAddress.set(key, info);
    if (!routable || !info.base || !info.quote || info.base === info.quote) return;
    let chain = this.#byBase.get(info.chainId);
    if (!chain) {
      chain = new Map();
      this.#byBase.set(info.chainId, chain);
    }
    const list = chain.get(info.base);
    if (list) list.push(info);
    else chain.set(info.base, [info]);
  }

  /** The feed at an address, or one described by `fallback` when no list names it. */
  feedAt(chainId: number, address: string, fallback: { description: string; pair: string }): FeedInfo {
    const known = this.#byAddress.get(`${chainId}:${address}`);
    if (known) return known;
    const [base = '', quote = ''] = fallback.pair.split('/');
    return {
      chainId,
      address,
      description: fallback.description,
      pair: fallback.pair,
      base: feedSymbol(base),
      quote: feedSymbol(quote),
      vendor: 'Chainlink',
      heartbeat: null,
      exchangeRate: false,
    };
  }

  #feeds(chainId: number, base: string): FeedInfo[] {
    return this.#byBase.get(chainId)?.get(base) ?? [];
  }

  /** Deterministic weighted choice (Chainlink weighs 3, others 1), seed-independent. */
  #pick(candidates: readonly FeedInfo[], key: string): FeedInfo {
    let total = 0;
    for (const c of candidates) total += c.vendor === 'Chainlink' ? 3 : 1;
    let x = (hash32(key) / 4294967296) * total;
    for (const c of candidates) {
      x -= c.vendor === 'Chainlink' ? 3 : 1;
      if (x < 0) return c;
    }
    return candidates[candidates.length - 1] as FeedInfo;
  }

  /** Feeds pricing `symbol` in USD: one direct feed, or two (symbol/X then X/USD). */
  #usdRoute(chainId: number, symbol: string, key: string): FeedInfo[] | null {
    const all = this.#feeds(chainId, symbol);
    const direct = all.filter((f) => f.quote === 'USD');
    if (direct.length > 0) return [this.#pick(direct, `${key}|usd`)];
    const hops = all.filter((f) => this.#feeds(chainId, f.quote).some((g) => g.quote === 'USD'));
    if (hops.length > 0) {
      const first = this.#pick(hops, `${key}|hop`);
      const second = this.#feeds(chainId, first.quote).filter((g) => g.quote === 'USD');
      return [first, this.#pick(second, `${key}|hop2`)];
    }
    if (symbol !== 'BTC' && symbol.includes('BTC')) return this.#usdRoute(chainId, 'BTC', key);
    return null;
  }

  /**
   * Feeds that price a collateral in loan units on a chain, null if the lists have none:
   * a direct collateral/loan feed, a two-step route (wstETH/stETH, stETH/ETH), or
   * collateral/USD and loan/USD legs; at most 3 feeds. `key` makes the choice among
   * equivalent feeds deterministic and varied across oracles.
   */
  route(chainId: number, collateral: string, loan: string, key: string): FeedRoute | null {
    const c = feedSymbol(collateral);
    const l = feedSymbol(loan);
    const all = this.#feeds(chainId, c);
    if (c !== l) {
      const direct = all.filter((f) => f.quote === l);
      if (direct.length > 0) return { feeds: [this.#pick(direct, `${key}|direct`)], warnings: [] };
      const twoStep = all.filter((f) => this.#feeds(chainId, f.quote).some((g) => g.quote === l));
      if (twoStep.length > 0) {
        const first = this.#pick(twoStep, `${key}|two`);
        const second = this.#feeds(chainId, first.quote).filter((g) => g.quote === l);
        return { feeds: [first, this.#pick(second, `${key}|two2`)], warnings: [] };
      }
    }
    const cr = this.#usdRoute(chainId, c, `${key}|usd|${c}`);
    if (!cr) return null;
    const lr = c === l ? cr : this.#usdRoute(chainId, l, `${key}|usd|${l}`);
    if (!lr || cr.length + lr.length > 3) return { feeds: cr, warnings: [WARNING_LOAN_UNPRICED] };
    const feeds = [...cr];
    for (const f of lr) if (!feeds.includes(f)) feeds.push(f);
    return { feeds, warnings: [] };
  }

  /** Heartbeat of a feed: the source's, else one of HEARTBEAT_CHOICES by a hash of the feed. */
  heartbeat(feed: FeedInfo): number {
    if (feed.heartbeat !== null && feed.heartbeat > 0) return feed.heartbeat;
    const i = hash32(`heartbeat|${feed.chainId}|${feed.address}`) % HEARTBEAT_CHOICES.length;
    return HEARTBEAT_CHOICES[i] as number;
  }

  /**
   * The feed's simulated clock at asOf. Most feeds update every 5 to 100 % of their heartbeat
   * and were last updated less than one interval ago (fresh); STUCK_FEED_SHARE of them stopped
   * (interval null) 1.1 to 2 heartbeats ago (stale, until they resume after asOf).
   */
  feedRecord(feed: FeedInfo): OracleFeedRecord {
    const key = `${feed.chainId}:${feed.address}`;
    const heartbeatSeconds = this.heartbeat(feed);
    let clock = this.#clock.get(key);
    if (!clock) {
      const rng = rngFor(this.#seed, `feed|${key}`);
      if (rng.chance(STUCK_FEED_SHARE)) {
        clock = { last: this.#asOf - Math.round(heartbeatSeconds * rng.float(1.1, 2)), interval: null };
      } else {
        const interval = Math.max(1, Math.round(heartbeatSeconds * rng.float(0.05, 1)));
        clock = { last: this.#asOf - Math.floor(rng.next() * interval), interval };
      }
      this.#clock.set(key, clock);
    }
    return {
      address: feed.address,
      description: feed.description,
      pair: feed.pair,
      heartbeatSeconds,
      lastUpdateTimestamp: clock.last,
      updateIntervalSeconds: clock.interval,
      deviationThreshold: feed.deviation ?? null,
    };
  }

  /** An oracle over known feeds; warnings from the feeds plus `extraWarnings`. */
  build(
    address: string,
    feeds: readonly FeedInfo[],
    morpho: boolean,
    extraWarnings: readonly string[] = [],
    override?: { type: OracleType; provider: OracleProvider },
  ): OracleRecord {
    const records = feeds.map((f) => this.feedRecord(f));
    const { type, provider } = override ?? classifyOracle(feeds, morpho);
    const warnings = [...extraWarnings];
    if (records.some((r) => r.heartbeatSeconds > 86_400)) warnings.push(WARNING_LONG_HEARTBEAT);
    if (type === 'Custom' && !warnings.includes(WARNING_CUSTOM)) warnings.push(WARNING_CUSTOM);
    return {
      address,
      type,
      provider,
      feeds: records,
      isComposite: records.length > 1,
      warnings: warnings.length > 0 ? warnings : null,
    };
  }

  /**
   * An oracle with a known address whose pair no listed feed prices. Its internal sources are
   * not in the reference, so it is shown as one feed at the oracle's own address, typed by the
   * collateral: a PT gets PendlePtOracle (Pendle), followed by its underlying's listed route;
   * a yield-bearing stable or an LST gets ExchangeRateOracle, followed by the peg's route;
   * anything else is Custom (Unknown), with a warning.
   */
  unlisted(
    chainId: number,
    address: string,
    collateral: string,
    loan: string,
    morpho: boolean,
  ): OracleRecord {
    const self = (description: string, pair: string, vendor: string, exchangeRate: boolean): FeedInfo => {
      const [base = '', quote = ''] = pair.split('/');
      return {
        chainId,
        address,
        description,
        pair,
        base: feedSymbol(base),
        quote: feedSymbol(quote),
        vendor,
        heartbeat: null,
        exchangeRate,
      };
    };
    const family = assetFamily(collateral);
    if (family === 'pt') {
      const underlying = ptUnderlying(collateral);
      const rest = this.route(chainId, underlying, loan, address);
      const first = self(
        `${collateral} / ${underlying} (Pendle PT oracle)`,
        `${collateral}/${underlying}`,
        'Pendle',
        false,
      );
      const feeds = [first, ...(rest?.feeds ?? []).slice(0, 2)];
      return this.build(address, feeds, morpho, rest ? rest.warnings : [WARNING_NO_FEED_METADATA]);
    }
    if (family === 'usd-yield' || family === 'eth-lst') {
      const peg = family === 'eth-lst' ? 'ETH' : 'USD';
      const loanFamily = assetFamily(loan);
      let rest: FeedRoute | null = null;
      if (peg === 'ETH' && loanFamily !== 'eth') rest = this.route(chainId, 'ETH', loan, address);
      if (peg === 'USD' && loanFamily !== 'usd') rest = this.route(chainId, 'USDC', loan, address);
      const first = self(`${collateral} / ${peg} exchange rate`, `${collateral}/${peg}`, 'Unknown', true);
      const feeds = [first, ...(rest?.feeds ?? []).slice(0, 2)];
      return this.build(address, feeds, morpho, rest ? rest.warnings : []);
    }
    const first = self(`${collateral} / ${loan} oracle`, `${collateral}/${loan}`, 'Unknown', false);
    return this.build(address, [first], morpho, [WARNING_NO_FEED_METADATA], {
      type: 'Custom',
      provider: 'Unknown',
    });
  }

  /** Memoizes an oracle by key (a Morpho oracle address is one oracle, whatever market uses it). */
  cached(key: string, make: () => OracleRecord | null): OracleRecord | null {
    if (this.#cache.has(key)) return this.#cache.get(key) ?? null;
    const oracle = make();
    this.#cache.set(key, oracle);
    return oracle;
  }
}
