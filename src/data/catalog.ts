import { LRUCache } from 'lru-cache';
import type { Protocol } from '../domain/enums.ts';
import { maxLeverage, utilization } from '../domain/metrics.ts';
import { oracleHealth } from '../domain/oracle.ts';
import { fraction, servedBalances, significant, significantOrNull, usdOrNull } from '../domain/precision.ts';
import { classifyStrategy } from '../domain/strategy.ts';
import type {
  FeedUpdate,
  MarketRecord,
  MarketStateChange,
  OracleFeedRecord,
  OracleHealth,
  OracleRecord,
  PriceChange,
  StrategyInfo,
} from '../domain/types.ts';
import { groupIndexes, walkMerged } from './sorted-lists.ts';

/** The API's Market (SPEC.md) as served: primary facts plus the derived fields. */
export interface MarketView {
  uniqueKey: string;
  protocol: Protocol;
  chainId: number;
  label: string | null;
  collateral: string;
  loan: string;
  collateralAddress: string;
  loanAddress: string;
  collateralPrice: number | null;
  loanPrice: number | null;
  supply: number | null;
  borrow: number | null;
  available: number | null;
  /** Loan-token units: recorded by the source, else supply and borrow over the loan price. */
  supplyAssets: number | null;
  borrowAssets: number | null;
  utilization: number;
  supplyApy: number;
  borrowApy: number;
  supplyRewardsApy: number;
  borrowRewardsApy: number;
  rewardTokens: string[];
  lltv: number;
  maxLeverage: number;
  strategyType: string;
  strategyInfo: StrategyInfo;
  vaultSymbol: string | null;
  vaultAddress: string | null;
  governor: string | null;
  oracle: OracleRecord | null;
  oracleHealth: OracleHealth | null;
}

/**
 * A market view whose oracle health is recomputed at most once per second of the clock, and
 * its serialized form but the oracle health, cached until the market changes.
 */
interface Entry {
  view: MarketView;
  healthAtSec: number;
  json: Uint8Array | null;
  /**
   * The stored record: prices and USD amounts at the snapshot's prices; balances and APYs
   * replaced by each market state applied (applyMarketStates).
   */
  base: MarketRecord;
  /** The dataset's prices of the market's tokens, which its positions' USD amounts are stated at. */
  stated: { collateral: number | null; loan: number | null };
}

/** Oracle health as served: the staleness ratio to 8 significant digits (isStale stays exact). */
function servedHealth(oracle: OracleRecord | null, nowSec: number): OracleHealth | null {
  const h = oracleHealth(oracle, nowSec);
  return h && { ...h, stalenessRatio: significant(h.stalenessRatio) };
}

/** A market's supplied and borrowed loan-token units: as recorded, else its USD amounts over the loan price. */
export function marketAssets(m: MarketRecord): { supply: number | null; borrow: number | null } {
  const over = (x: number | null) =>
    x !== null && m.loanPrice !== null && m.loanPrice > 0 ? x / m.loanPrice : null;
  return { supply: m.supplyAssets ?? over(m.supply), borrow: m.borrowAssets ?? over(m.borrow) };
}

/** What a market's place by supply goes by: its USD supply, below every priced market without one. */
export function supplyRank(m: MarketRecord): number {
  return m.supply ?? -1;
}

export function toMarketView(m: MarketRecord, nowSec: number): MarketView {
  const strategy = classifyStrategy(m.collateral, m.loan);
  const assets = marketAssets(m);
  // available and utilization from the served supply and borrow (servedBalances).
  const served = m.supply === null || m.borrow === null ? null : servedBalances(m.supply, m.borrow);
  return {
    uniqueKey: m.uniqueKey,
    protocol: m.protocol,
    chainId: m.chainId,
    label: m.label,
    collateral: m.collateral,
    loan: m.loan,
    collateralAddress: m.collateralAddress,
    loanAddress: m.loanAddress,
    // Served figures are rounded once, here (src/domain/precision.ts).
    collateralPrice: significantOrNull(m.collateralPrice),
    loanPrice: significantOrNull(m.loanPrice),
    supply: served?.supply ?? usdOrNull(m.supply),
    borrow: served?.borrow ?? usdOrNull(m.borrow),
    available: served?.available ?? null,
    supplyAssets: significantOrNull(assets.supply),
    borrowAssets: significantOrNull(assets.borrow),
    // The same ratio in USD or in loan-token units (one price).
    utilization: served?.utilization ?? fraction(utilization(assets.supply ?? 0, assets.borrow ?? 0)),
    supplyApy: fraction(m.supplyApy),
    borrowApy: fraction(m.borrowApy),
    supplyRewardsApy: fraction(m.supplyRewardsApy),
    borrowRewardsApy: fraction(m.borrowRewardsApy),
    rewardTokens: m.rewardTokens,
    lltv: fraction(m.lltv),
    maxLeverage: significant(maxLeverage(m.lltv)),
    strategyType: strategy.type,
    strategyInfo: strategy,
    vaultSymbol: m.vaultSymbol,
    vaultAddress: m.vaultAddress,
    governor: m.governor,
    oracle: m.oracle,
    oracleHealth: servedHealth(m.oracle, nowSec),
  };
}

export interface MarketFilter {
  protocol?: Protocol | undefined;
  /** Chains in scope; undefined = every chain. */
  chainIds?: readonly number[] | undefined;
}

const WORD_SPLIT = /[^\p{L}\p{N}.+]+/u;

function normalize(s: string): string {
  return s.normalize('NFKC').toLowerCase();
}

/** Search tiers of D4: exact symbol > word prefix > substring. */
const EXACT = 3;
const PREFIX = 2;
const SUBSTRING = 1;

interface Vocabulary {
  /** Distinct tokens and, for each, the ascending market ords it appears in. */
  tokens: string[];
  postings: Int32Array[];
  /** Sum of the postings' lengths. */
  postingCount: number;
  /**
   * The tokens joined by newlines (whitespace inside a token made a space: no term holds
   * whitespace, so no hit spans two tokens), and each token's start in it, then a sentinel.
   */
  text: string;
  starts: Int32Array;
  /** The token of each character of `text` (a separator counts with the token before it). */
  tokenAt: Int32Array;
  /** Whether a token is a symbol (collateral, loan, vault symbol or pair) of the market. */
  symbolPostings: Map<string, Int32Array>;
}

/**
 * The market catalog: markets ordered by supply descending, lookups by key, filter lists by
 * protocol and chain, and a token index for search (DECISIONS D4).
 *
 * Two numberings: a market's `ord` (what the catalog hands out: the index of its record, fixed
 * for the catalog's life, so other structures such as the risk index can key by it) and its
 * rank (its place by supply, descending, which prices move). The filter lists and the search
 * index hold ranks, so lists and search ties follow the current supply; applyPrices re-ranks.
 */
export class Catalog {
  private readonly entries: Entry[];
  private readonly byKey = new Map<string, number>();
  /** Rank (by current supply, descending) to ord. */
  private idAt: Int32Array;
  /** Per ord: the loan token's price over its snapshot price (supply and borrow scale by it). */
  private readonly loanFactor: Float64Array;
  /** Markets holding a token as collateral (c) or loan (l), by `${chainId}:${token}`. */
  private readonly byToken = new Map<string, { c: number[]; l: number[] }>();
  private readonly byProtocol: Map<string, Int32Array>;
  private readonly byChain: Map<string, Int32Array>;
  private readonly byProtocolChain: Map<string, Int32Array>;
  private readonly all: Int32Array;
  private readonly vocab: Vocabulary;
  private readonly termCache = new LRUCache<string, TermMatch>({
    max: TERM_CACHE_ENTRIES,
    maxSize: TERM_CACHE_BYTES,
    sizeCalculation: termMatchBytes,
  });
  /**
   * The markets' feeds by `${chainId}:${feed address}`: the feed records of each market's own
   * copy of its oracle (built on the first feed update; until then views share the stored one).
   */
  private byFeed: Map<string, { ord: number; feed: OracleFeedRecord }[]> | null = null;
  /** While a term is built: best tier per market (all zero between builds) and the markets marked. */
  private readonly scratch: { mark: Uint8Array; touched: Int32Array };
  readonly protocols: readonly Protocol[];
  readonly chainIds: readonly number[];
  /** Inside batch(): re-ranking waits for its end (rankStale: some update asked for it). */
  private batching = false;
  private rankStale = false;

  constructor(records: readonly MarketRecord[], nowSec: number) {
    const sorted = [...records].sort(
      (a, b) => supplyRank(b) - supplyRank(a) || (a.uniqueKey < b.uniqueKey ? -1 : 1),
    );
    this.entries = sorted.map((m) => ({
      view: toMarketView(m, nowSec),
      healthAtSec: nowSec,
      json: null,
      base: m,
      stated: { collateral: m.collateralPrice, loan: m.loanPrice },
    }));
    // Ranks start as ords (the records are in supply order).
    this.idAt = Int32Array.from({ length: sorted.length }, (_, i) => i);
    this.loanFactor = new Float64Array(sorted.length).fill(1);
    sorted.forEach((m, ord) => {
      for (const [side, token] of [
        ['c', m.collateralAddress],
        ['l', m.loanAddress],
      ] as const) {
        const key = `${m.chainId}:${token.toLowerCase()}`;
        let t = this.byToken.get(key);
        if (!t) {
          t = { c: [], l: [] };
          this.byToken.set(key, t);
        }
        t[side].push(ord);
      }
    });
    this.entries.forEach((e, ord) => {
      this.byKey.set(e.view.uniqueKey, ord);
    });
    const n = this.entries.length;
    this.all = Int32Array.from({ length: n }, (_, i) => i);
    this.byProtocol = groupIndexes(n, (i) => this.entries[i]!.view.protocol);
    this.byChain = groupIndexes(n, (i) => String(this.entries[i]!.view.chainId));
    this.byProtocolChain = groupIndexes(n, (i) => {
      const v = this.entries[i]!.view;
      return `${v.protocol}:${v.chainId}`;
    });
    this.protocols = [...this.byProtocol.keys()].sort() as Protocol[];
    this.chainIds = [...this.byChain.keys()].map(Number).sort((a, b) => a - b);
    this.vocab = buildVocabulary(sorted.map(marketTokens));
    this.scratch = { mark: new Uint8Array(n), touched: new Int32Array(n) };
  }

  get size(): number {
    return this.entries.length;
  }

  /** Records in supply order, for re-persisting or rebuilding. */
  views(): readonly MarketView[] {
    return Array.from(this.idAt, (ord) => this.entries[ord]!.view);
  }

  /** The records as loaded, in ord order: snapshot prices and amounts. */
  baseRecords(): readonly MarketRecord[] {
    return this.entries.map((e) => e.base);
  }

  /** The ords of the markets holding a token as collateral (c) and as loan (l). */
  holding(
    chainId: number,
    token: string,
  ): { readonly c: readonly number[]; readonly l: readonly number[] } | undefined {
    return this.byToken.get(`${chainId}:${token.toLowerCase()}`);
  }

  /** A market's record as loaded (its snapshot's prices and amounts). */
  baseRecord(ord: number): MarketRecord {
    return this.entries[ord]!.base;
  }

  /** The dataset's prices of a market's tokens (its positions' amounts are stated at them). */
  basePrices(ord: number): { collateral: number | null; loan: number | null } {
    return this.entries[ord]!.stated;
  }

  /**
   * Token price moves: the markets holding a token scale their snapshot price of it by the
   * ratio, and (loan token) their supply, borrow and available too; their cached JSON is
   * dropped; the catalog is re-ranked by the new supply when the order changed. Unknown tokens
   * and non-positive prices are ignored. Returns the markets touched.
   */
  applyPrices(changes: Iterable<PriceChange>): number {
    let touched = 0;
    let reorder = false;
    for (const ch of changes) {
      const t = this.holding(ch.chainId, ch.token);
      if (!t || !(ch.ratio > 0) || !Number.isFinite(ch.ratio)) continue;
      for (const ord of t.c) {
        const e = this.entries[ord]!;
        const p = e.base.collateralPrice;
        if (p === null || !(p > 0)) continue;
        e.view.collateralPrice = significant(p * ch.ratio);
        e.json = null;
        touched++;
      }
      for (const ord of t.l) {
        const e = this.entries[ord]!;
        const b = e.base;
        if (b.loanPrice === null || !(b.loanPrice > 0) || b.supply === null || b.borrow === null) continue;
        const f = ch.ratio;
        e.view.loanPrice = significant(b.loanPrice * f);
        const served = servedBalances(b.supply * f, b.borrow * f);
        e.view.supply = served.supply;
        e.view.borrow = served.borrow;
        e.view.available = served.available;
        // Derived from the served amounts, as available is.
        e.view.utilization = served.utilization;
        e.json = null;
        if (this.loanFactor[ord] !== f) reorder = true;
        this.loanFactor[ord] = f;
        touched++;
      }
    }
    if (reorder) this.orderChanged();
    return touched;
  }

  /**
   * Market records from their source, in place: each replaces its market as served (prices,
   * balances, rates, rewards, LLTV, oracle; the identity, tokens and names stay as loaded, so
   * the search index holds), its cached JSON and oracle health are dropped, the catalog is
   * re-ranked when the order by supply changed. Returns, per market taken, its prices over the
   * dataset's (what its positions' amounts scale by). Unknown markets are skipped.
   */
  applyMarketRecords(records: Iterable<MarketRecord>): { ord: number; collateral: number; loan: number }[] {
    const out: { ord: number; collateral: number; loan: number }[] = [];
    let reorder = false;
    for (const r of records) {
      const ord = this.byKey.get(r.uniqueKey.toLowerCase());
      if (ord === undefined) continue;
      const e = this.entries[ord]!;
      const b = e.base;
      const next: MarketRecord = {
        ...r,
        uniqueKey: b.uniqueKey,
        protocol: b.protocol,
        chainId: b.chainId,
        collateral: b.collateral,
        collateralName: b.collateralName,
        collateralAddress: b.collateralAddress,
        loan: b.loan,
        loanName: b.loanName,
        loanAddress: b.loanAddress,
        label: b.label,
        vaultSymbol: b.vaultSymbol,
      };
      if (next.supply !== b.supply || this.loanFactor[ord] !== 1) reorder = true;
      e.base = next;
      e.view = toMarketView(next, 0);
      e.healthAtSec = Number.NaN;
      e.json = null;
      this.loanFactor[ord] = 1;
      const ratio = (now: number | null, stated: number | null) =>
        now !== null && stated !== null && stated > 0 && now > 0 ? now / stated : 1;
      out.push({
        ord,
        collateral: ratio(next.collateralPrice, e.stated.collateral),
        loan: ratio(next.loanPrice, e.stated.loan),
      });
    }
    // Feed clocks are indexed over the views' oracle copies: rebuilt on the next feed update.
    if (out.length > 0) this.byFeed = null;
    if (reorder) this.orderChanged();
    return out;
  }

  /**
   * Market states in place (MarketStateChange: balances and APYs in USD at the record's prices):
   * each market's record takes them, its view follows at the current prices, its cached JSON
   * is dropped; the catalog is re-ranked when the order by supply changed. Unknown markets and
   * states with a negative or non-finite figure are ignored. Returns the markets touched.
   */
  applyMarketStates(states: Iterable<MarketStateChange>): number {
    let touched = 0;
    let reorder = false;
    for (const st of states) {
      const ord = this.byKey.get(st.marketKey);
      if (ord === undefined) continue;
      const figures = [st.supply, st.borrow, st.supplyApy, st.borrowApy];
      if (!figures.every((x) => Number.isFinite(x) && x >= 0)) continue;
      const e = this.entries[ord]!;
      const b = e.base;
      // States are in USD at the record's prices: a market without them has none.
      if (b.loanPrice === null) continue;
      if (
        b.supply === st.supply &&
        b.borrow === st.borrow &&
        b.supplyApy === st.supplyApy &&
        b.borrowApy === st.borrowApy
      )
        continue;
      if (b.supply !== st.supply) reorder = true;
      e.base = {
        ...b,
        supply: st.supply,
        borrow: st.borrow,
        // Recorded token amounts would be of the balances replaced: derived from the new ones.
        supplyAssets: undefined,
        borrowAssets: undefined,
        supplyApy: st.supplyApy,
        borrowApy: st.borrowApy,
      };
      const assets = marketAssets(e.base);
      e.view.supplyAssets = significantOrNull(assets.supply);
      e.view.borrowAssets = significantOrNull(assets.borrow);
      const f = this.loanFactor[ord]!;
      const served = servedBalances(st.supply * f, st.borrow * f);
      e.view.supply = served.supply;
      e.view.borrow = served.borrow;
      e.view.available = served.available;
      e.view.utilization = served.utilization;
      e.view.supplyApy = fraction(st.supplyApy);
      e.view.borrowApy = fraction(st.borrowApy);
      e.json = null;
      touched++;
    }
    if (reorder) this.orderChanged();
    return touched;
  }

  /**
   * Feed update times (a simulation's latest rounds): each market whose oracle lists the feed
   * serves that time as the feed's last update, with no cadence projected beyond it (the
   * feed's updateIntervalSeconds becomes null in the view), so its oracle health ages until the
   * next update; the cached health and JSON of the markets touched are dropped. The stored
   * records stay as loaded. Unknown feeds are ignored. Returns the markets touched.
   */
  applyFeedUpdates(updates: Iterable<FeedUpdate>): number {
    let touched = 0;
    for (const u of updates) {
      const holders = this.feedIndex().get(`${u.chainId}:${u.feed.toLowerCase()}`);
      if (!holders) continue;
      for (const { ord, feed } of holders) {
        if (feed.lastUpdateTimestamp === u.lastUpdateTimestamp && feed.updateIntervalSeconds === null)
          continue;
        feed.lastUpdateTimestamp = u.lastUpdateTimestamp;
        feed.updateIntervalSeconds = null;
        const e = this.entries[ord]!;
        e.healthAtSec = Number.NaN;
        e.json = null;
        touched++;
      }
    }
    return touched;
  }

  /** Gives every market's view its own copy of its oracle and indexes the copies' feeds. */
  private feedIndex(): Map<string, { ord: number; feed: OracleFeedRecord }[]> {
    if (this.byFeed) return this.byFeed;
    const index = new Map<string, { ord: number; feed: OracleFeedRecord }[]>();
    this.entries.forEach((e, ord) => {
      const oracle = e.view.oracle;
      if (oracle === null) return;
      // Stored records (and markets sharing one oracle object) keep their own clocks.
      const own: OracleRecord = { ...oracle, feeds: oracle.feeds.map((f) => ({ ...f })) };
      e.view.oracle = own;
      for (const feed of own.feeds) {
        const key = `${e.view.chainId}:${feed.address.toLowerCase()}`;
        const list = index.get(key);
        if (list) list.push({ ord, feed });
        else index.set(key, [{ ord, feed }]);
      }
    });
    this.byFeed = index;
    return index;
  }

  /**
   * Runs `step` (several updates of one instant: prices, market states, records) with the
   * re-ranking they call for done once, at the end, instead of after each update.
   */
  batch<T>(step: () => T): T {
    if (this.batching) return step();
    this.batching = true;
    try {
      return step();
    } finally {
      this.batching = false;
      if (this.rankStale) {
        this.rankStale = false;
        this.rerank();
      }
    }
  }

  /** An update may have changed the order by supply: re-rank now, or at the end of the batch. */
  private orderChanged(): void {
    if (this.batching) this.rankStale = true;
    else this.rerank();
  }

  /** Ranks by current supply again; the rank lists and search postings follow, the term cache empties. */
  private rerank(): void {
    const n = this.entries.length;
    const supply = new Float64Array(n);
    for (let ord = 0; ord < n; ord++) {
      const s = this.entries[ord]!.base.supply;
      supply[ord] = s === null ? -1 : s * this.loanFactor[ord]!;
    }
    const order = Int32Array.from(this.idAt).sort(
      (a, b) =>
        supply[b]! - supply[a]! ||
        (this.entries[a]!.view.uniqueKey < this.entries[b]!.view.uniqueKey ? -1 : 1),
    );
    let same = true;
    for (let r = 0; r < n && same; r++) same = order[r] === this.idAt[r];
    if (same) return;
    const newRank = new Int32Array(n);
    for (let r = 0; r < n; r++) newRank[order[r]!] = r;
    const oldIdAt = this.idAt;
    const remap = (list: Int32Array) => {
      for (let i = 0; i < list.length; i++) list[i] = newRank[oldIdAt[list[i]!]!]!;
      list.sort();
    };
    for (const lists of [this.byProtocol, this.byChain, this.byProtocolChain])
      for (const l of lists.values()) remap(l);
    for (const l of this.vocab.postings) remap(l);
    for (const l of this.vocab.symbolPostings.values()) remap(l);
    this.idAt = order;
    this.termCache.clear();
  }

  /**
   * The market as JSON bytes in two pieces: `head(view)`, all of it before its oracle health
   * (serialized once, until the market changes), then `health(oracleHealth)`, the part that
   * moves with the clock (a few bytes: the caller shares them between markets). So the time
   * of day never makes a market be serialized again.
   */
  json(
    ord: number,
    nowSec: number,
    head: (view: MarketView) => Uint8Array,
    health: (h: OracleHealth | null) => Uint8Array,
  ): [Uint8Array, Uint8Array] {
    const e = this.entries[ord]!;
    const view = this.viewAt(ord, nowSec);
    e.json ??= head(view);
    return [e.json, health(view.oracleHealth)];
  }

  viewAt(ord: number, nowSec: number): MarketView {
    const e = this.entries[ord]!;
    if (e.healthAtSec !== nowSec) {
      e.view.oracleHealth = servedHealth(e.view.oracle, nowSec);
      e.healthAtSec = nowSec;
    }
    return e.view;
  }

  /** Case-insensitive lookup of a uniqueKey (keys are stored lowercase). */
  get(uniqueKey: string, nowSec: number): MarketView | undefined {
    const ord = this.byKey.get(uniqueKey.toLowerCase());
    return ord === undefined ? undefined : this.viewAt(ord, nowSec);
  }

  ordOf(uniqueKey: string): number | undefined {
    return this.byKey.get(uniqueKey.toLowerCase());
  }

  recordAt(ord: number): MarketView {
    return this.entries[ord]!.view;
  }

  /** The ord lists that together cover exactly the filter's scope. */
  private scopeLists(filter: MarketFilter): Int32Array[] {
    const { protocol, chainIds } = filter;
    if (chainIds === undefined) {
      if (protocol === undefined) return [this.all];
      const l = this.byProtocol.get(protocol);
      return l ? [l] : [];
    }
    const lists: Int32Array[] = [];
    for (const c of new Set(chainIds)) {
      const l =
        protocol === undefined ? this.byChain.get(String(c)) : this.byProtocolChain.get(`${protocol}:${c}`);
      if (l) lists.push(l);
    }
    return lists;
  }

  private inScope(ord: number, filter: MarketFilter): boolean {
    const v = this.entries[ord]!.view;
    if (filter.protocol !== undefined && v.protocol !== filter.protocol) return false;
    if (filter.chainIds !== undefined && !filter.chainIds.includes(v.chainId)) return false;
    return true;
  }

  /** Ords of the markets in scope, supply descending. Cost O(offset + limit), never a scan of the catalog. */
  list(filter: MarketFilter, offset: number, limit: number): number[] {
    const out: number[] = [];
    if (limit <= 0) return out;
    let skipped = 0;
    walkMerged(this.scopeLists(filter), (rank) => {
      if (skipped < offset) {
        skipped++;
        return true;
      }
      out.push(this.idAt[rank]!);
      return out.length < limit;
    });
    return out;
  }

  /** The protocols that have markets in the filter's scope (sorted): meta.source of an empty answer. */
  protocolsIn(filter: MarketFilter): Protocol[] {
    // A protocol the query names is its scope, whether or not it has markets there.
    if (filter.protocol !== undefined) return [filter.protocol];
    const chains = filter.chainIds;
    if (chains === undefined) return [...this.protocols];
    return this.protocols.filter((p) => chains.some((c) => this.byProtocolChain.has(`${p}:${c}`)));
  }

  /** Number of markets in scope (for pagination metadata). */
  count(filter: MarketFilter): number {
    let n = 0;
    for (const l of this.scopeLists(filter)) n += l.length;
    return n;
  }

  /**
   * Search per DECISIONS D4: every term must match; a market's score is the sum over terms of
   * its best tier for that term (exact symbol 3, word prefix 2, substring 1); results by score
   * descending, then supply descending (ord ascending).
   *
   * One term: its markets are read in rank order (tier, then ord) until `limit` are in scope.
   * Several terms: the markets of the term matching fewest are walked in ord order; each other
   * term gives its tier for the market (a lookup, or a gallop through its ascending list) or
   * drops it; each score keeps its first `limit` markets, and the walk stops early once the
   * highest reachable score has `limit`. Work is linear in the distinct terms, whatever they
   * are: at most about 6 reads per term per market of the catalog, plus, for each term not in
   * the term cache, the postings of the tokens containing it. `work`, when given, receives the
   * counts.
   */
  search(query: string, filter: MarketFilter, limit: number, work?: SearchWork): number[] {
    const terms = searchTerms(query);
    if (work) work.terms += terms.length;
    if (terms.length === 0 || limit <= 0) return [];
    const matches: TermMatch[] = [];
    for (const term of terms) {
      const m = this.termMatch(term, work);
      if (m.size === 0) return [];
      matches.push(m);
    }
    const filtered = filter.protocol !== undefined || filter.chainIds !== undefined;
    // The search index works in ranks; answers are ords.
    const accept = filtered ? (rank: number) => this.inScope(this.idAt[rank]!, filter) : () => true;
    const ranks =
      matches.length === 1
        ? rankedSingle(matches[0]!, limit, accept, work)
        : rankedIntersection(matches, this.entries.length, limit, accept, work);
    return ranks.map((rank) => this.idAt[rank]!);
  }

  /** Entries and bytes of the term cache (at most TERM_CACHE_ENTRIES and TERM_CACHE_BYTES). */
  termCacheStats(): { entries: number; bytes: number } {
    return { entries: this.termCache.size, bytes: this.termCache.calculatedSize };
  }

  /** Sizes of the search index: markets, distinct tokens, postings (token-market pairs). */
  indexStats(): { markets: number; tokens: number; postings: number } {
    return {
      markets: this.entries.length,
      tokens: this.vocab.tokens.length,
      postings: this.vocab.postingCount,
    };
  }

  /** Markets matching a term with their best tier; cached per catalog in a bounded LRU. */
  private termMatch(term: string, work?: SearchWork): TermMatch {
    const cached = this.termCache.get(term);
    if (cached) return cached;
    const match = this.buildTermMatch(term, work);
    this.termCache.set(term, match);
    return match;
  }

  /**
   * A term's matches from the token index, never a k-way merge. The tokens containing the term
   * are found by native substring search in the vocabulary text (jumping to the next token
   * after each hit); their postings raise each market's best tier in a scratch array. A term
   * matching more than 1/DENSE_DIVISOR of the catalog keeps a copy of that array (n bytes,
   * smaller than its lists); any other is read back in ord order, by sorting the markets
   * touched or by one pass over the catalog, whichever is less. Cost: the vocabulary text
   * (native), the postings of the matching tokens, and at most one pass over the catalog.
   */
  private buildTermMatch(term: string, work?: SearchWork): TermMatch {
    const { text, starts, tokenAt, postings, symbolPostings } = this.vocab;
    const { mark, touched } = this.scratch;
    const n = this.entries.length;
    let count = 0;
    let read = 0;
    let tokens = 0;
    let maxTier = 0;
    const exact = symbolPostings.get(term) ?? EMPTY;
    if (exact.length > 0) {
      count = markPostings(exact, EXACT, mark, touched, count);
      read += exact.length;
      maxTier = EXACT;
    }
    for (let at = text.indexOf(term); at >= 0; ) {
      const ti = tokenAt[at]!;
      const tier = at === starts[ti] ? PREFIX : SUBSTRING;
      const list = postings[ti]!;
      count = markPostings(list, tier, mark, touched, count);
      read += list.length;
      tokens++;
      if (tier > maxTier) maxTier = tier;
      // a later hit can only count in a later token
      at = text.indexOf(term, starts[ti + 1]!);
    }
    if (work) {
      work.misses++;
      work.tokens += tokens;
      work.postings += read;
    }
    if (count === 0) return NO_MATCH;
    if (count * DENSE_DIVISOR > n) {
      const byOrd = mark.slice(0, n);
      mark.fill(0);
      if (work) work.build += n;
      return { dense: true, size: count, maxTier, byOrd, exact };
    }
    let all: Int32Array;
    if (count * Math.ceil(Math.log2(count + 1)) <= n) {
      all = touched.slice(0, count).sort();
      if (work) work.build += count;
    } else {
      all = new Int32Array(count);
      for (let ord = 0, j = 0; ord < n; ord++) if (mark[ord] !== 0) all[j++] = ord;
      if (work) work.build += n;
    }
    return sparseMatch(all, mark, maxTier);
  }
}

/**
 * Words of a search query as Catalog.search reads them: NFKC, lowercase, split on whitespace,
 * duplicates dropped (a repeated term changes neither the matches nor the ranking).
 */
export function searchTerms(query: string): string[] {
  return [...new Set(normalize(query).split(/\s+/).filter(Boolean))];
}

/**
 * Elements read by searches, added to by Catalog.search: tests and benchmarks check that work
 * stays linear in the distinct terms whatever the query, without timing anything.
 */
export interface SearchWork {
  /** Distinct terms of the queries. */
  terms: number;
  /** Terms not in the term cache, built from the token index. */
  misses: number;
  /** Vocabulary tokens found to contain a missed term. */
  tokens: number;
  /** Posting entries read while building missed terms. */
  postings: number;
  /** Markets written or read back while building missed terms (touched ones, or the catalog). */
  build: number;
  /** Elements of term lists or tier arrays read while ranking. */
  reads: number;
}

export function newSearchWork(): SearchWork {
  return { terms: 0, misses: 0, tokens: 0, postings: 0, build: 0, reads: 0 };
}

/** Total elements read: the figure work budgets bound. */
export function totalWork(w: SearchWork): number {
  return w.tokens + w.postings + w.build + w.reads;
}

/**
 * A term's matching markets with their best tier, in one of two forms. Sparse: the markets
 * ascending (`all`) with their tiers, and the same markets by tier then ord (`ranked`), 9 bytes a
 * market. Dense, for a term matching a large share of the catalog: the tier of every market by
 * ord (0: no match), 1 byte a market of the catalog, and the exact-symbol markets ascending.
 */
type TermMatch = SparseMatch | DenseMatch;

interface SparseMatch {
  dense: false;
  size: number;
  /** Best tier of any market: the most this term adds to a score. */
  maxTier: number;
  all: Int32Array;
  tiers: Uint8Array;
  ranked: Int32Array;
}

interface DenseMatch {
  dense: true;
  size: number;
  maxTier: number;
  byOrd: Uint8Array;
  exact: Int32Array;
}

const EMPTY = new Int32Array(0);
const NO_MATCH: TermMatch = {
  dense: false,
  size: 0,
  maxTier: 0,
  all: EMPTY,
  tiers: new Uint8Array(0),
  ranked: EMPTY,
};

/** A term matching more than 1/DENSE_DIVISOR of the markets is kept dense (1 byte a market). */
const DENSE_DIVISOR = 8;

/**
 * Bounds of a catalog's term cache, by entries and by bytes (key, arrays and a fixed overhead
 * per entry). The largest entry is a dense term: one byte a market (100 KB on 100,000 markets);
 * a sparse term is at most 9 bytes for each of n/8 markets; an unmatched term costs its key and
 * the overhead. 32 MiB holds every common term of a 20,000-market catalog many times over; the
 * entry bound keeps unmatched terms (typos, adversaries) to about 3 MB.
 */
export const TERM_CACHE_ENTRIES = 10_000;
export const TERM_CACHE_BYTES = 32 * 1024 * 1024;
const ENTRY_OVERHEAD_BYTES = 300;

function termMatchBytes(match: TermMatch, term: string): number {
  const arrays = match.dense
    ? match.byOrd.byteLength
    : match.all.byteLength + match.tiers.byteLength + match.ranked.byteLength;
  return ENTRY_OVERHEAD_BYTES + 2 * term.length + arrays;
}

/** Raises mark[ord] to `tier` for every ord of the list, appending first-seen ords to `touched`. */
function markPostings(
  list: Int32Array,
  tier: number,
  mark: Uint8Array,
  touched: Int32Array,
  count: number,
): number {
  let c = count;
  for (let k = 0; k < list.length; k++) {
    const ord = list[k]!;
    const had = mark[ord]!;
    if (had < tier) {
      if (had === 0) touched[c++] = ord;
      mark[ord] = tier;
    }
  }
  return c;
}

/** The sparse form from the ascending matching ords and their marked tiers (marks reset to 0). */
function sparseMatch(all: Int32Array, mark: Uint8Array, maxTier: number): SparseMatch {
  const size = all.length;
  let exact = 0;
  let prefix = 0;
  for (let k = 0; k < size; k++) {
    const t = mark[all[k]!]!;
    if (t === EXACT) exact++;
    else if (t === PREFIX) prefix++;
  }
  // offsets in `ranked`: exact, then prefix, then substring
  let atExact = 0;
  let atPrefix = exact;
  let atSubstring = exact + prefix;
  const tiers = new Uint8Array(size);
  const ranked = new Int32Array(size);
  for (let k = 0; k < size; k++) {
    const ord = all[k]!;
    const t = mark[ord]!;
    tiers[k] = t;
    if (t === EXACT) ranked[atExact++] = ord;
    else if (t === PREFIX) ranked[atPrefix++] = ord;
    else ranked[atSubstring++] = ord;
    mark[ord] = 0;
  }
  return { dense: false, size, maxTier, all, tiers, ranked };
}

/**
 * One term: its markets in rank order until `limit` are in scope. Sparse: the ranked list.
 * Dense: the exact-symbol list, then one pass over the tiers per lower tier (at most 2n reads).
 */
function rankedSingle(
  match: TermMatch,
  limit: number,
  accept: (ord: number) => boolean,
  work: SearchWork | undefined,
): number[] {
  const out: number[] = [];
  let reads = 0;
  if (!match.dense) {
    const { ranked } = match;
    for (; reads < ranked.length && out.length < limit; reads++)
      if (accept(ranked[reads]!)) out.push(ranked[reads]!);
  } else {
    const { exact, byOrd } = match;
    for (let k = 0; k < exact.length && out.length < limit; k++, reads++)
      if (accept(exact[k]!)) out.push(exact[k]!);
    for (const tier of [PREFIX, SUBSTRING]) {
      for (let ord = 0; ord < byOrd.length && out.length < limit; ord++, reads++)
        if (byOrd[ord] === tier && accept(ord)) out.push(ord);
    }
  }
  if (work) work.reads += reads;
  return out;
}

/**
 * Several terms: walk the markets of the term matching fewest in ord order (its list, or its
 * tier array when every term is dense), take each other term's tier (a lookup in a dense term,
 * a gallop in a sparse one: its list is ascending like the walk), and keep the first `limit`
 * markets of each score. See Catalog.search.
 */
function rankedIntersection(
  matches: readonly TermMatch[],
  n: number,
  limit: number,
  accept: (ord: number) => boolean,
  work: SearchWork | undefined,
): number[] {
  const sorted = [...matches].sort((a, b) => a.size - b.size);
  const base = sorted[0]!;
  const terms = sorted.length;
  const sparse: SparseMatch[] = [];
  const dense: Uint8Array[] = [];
  for (const m of sorted.slice(1)) {
    if (m.dense) dense.push(m.byOrd);
    else sparse.push(m);
  }
  let maxScore = 0;
  for (const m of sorted) maxScore += m.maxTier;
  // buckets[s - terms] holds markets of score s in ord order, at most `limit` of them
  const buckets: number[][] = Array.from({ length: maxScore - terms + 1 }, () => []);
  const top = buckets[maxScore - terms]!;
  const pos = new Int32Array(sparse.length);
  let reads = 0;
  const baseLength = base.dense ? n : base.size;
  walk: for (let i = 0; i < baseLength; i++) {
    let ord: number;
    let score: number;
    reads++;
    if (base.dense) {
      score = base.byOrd[i]!;
      if (score === 0) continue;
      ord = i;
    } else {
      ord = base.all[i]!;
      score = base.tiers[i]!;
    }
    for (let j = 0; j < dense.length; j++) {
      const t = dense[j]![ord]!;
      reads++;
      if (t === 0) continue walk;
      score += t;
    }
    for (let j = 0; j < sparse.length; j++) {
      const list = sparse[j]!.all;
      const len = list.length;
      let p = pos[j]!;
      reads++;
      if (list[p]! < ord) {
        // gallop: list[lo] < ord; probe lo + 1, lo + 2, lo + 4, ... then binary search
        let lo = p;
        let step = 1;
        let hi = lo + 1;
        while (hi < len) {
          reads++;
          if (list[hi]! >= ord) break;
          lo = hi;
          step *= 2;
          hi = lo + step;
        }
        if (hi > len) hi = len;
        p = lo + 1;
        while (p < hi) {
          const mid = (p + hi) >>> 1;
          reads++;
          if (list[mid]! < ord) p = mid + 1;
          else hi = mid;
        }
        pos[j] = p;
        // no later market of the walk can be in this list
        if (p >= len) break walk;
        reads++;
      }
      if (list[p] !== ord) continue walk;
      score += sparse[j]!.tiers[p]!;
    }
    if (!accept(ord)) continue;
    const bucket = buckets[score - terms]!;
    if (bucket.length < limit) bucket.push(ord);
    if (top.length >= limit) break;
  }
  if (work) work.reads += reads;
  const out: number[] = [];
  for (let s = buckets.length - 1; s >= 0 && out.length < limit; s--) {
    const bucket = buckets[s]!;
    for (let k = 0; k < bucket.length && out.length < limit; k++) out.push(bucket[k]!);
  }
  return out;
}

function marketTokens(m: MarketRecord): { symbols: string[]; words: string[] } {
  const symbols = [m.collateral, m.loan, `${m.collateral}/${m.loan}`];
  if (m.vaultSymbol) symbols.push(m.vaultSymbol);
  const normalizedSymbols = [...new Set(symbols.map(normalize))];
  const words = new Set<string>(normalizedSymbols);
  for (const text of [m.collateralName, m.loanName, m.label ?? '', m.vaultSymbol ?? '']) {
    for (const w of normalize(text).split(WORD_SPLIT)) if (w) words.add(w);
  }
  return { symbols: normalizedSymbols, words: [...words] };
}

function buildVocabulary(perMarket: readonly { symbols: string[]; words: string[] }[]): Vocabulary {
  const words = new Map<string, number[]>();
  const symbols = new Map<string, number[]>();
  perMarket.forEach((t, ord) => {
    for (const w of t.words) {
      const l = words.get(w);
      if (l) l.push(ord);
      else words.set(w, [ord]);
    }
    for (const s of t.symbols) {
      const l = symbols.get(s);
      if (l) l.push(ord);
      else symbols.set(s, [ord]);
    }
  });
  const tokens = [...words.keys()];
  const postings = tokens.map((t) => Int32Array.from(words.get(t)!));
  const starts = new Int32Array(tokens.length + 1);
  let at = 0;
  tokens.forEach((t, i) => {
    starts[i] = at;
    at += t.length + 1;
  });
  starts[tokens.length] = at;
  const tokenAt = new Int32Array(Math.max(0, at - 1));
  for (let i = 0; i < tokens.length; i++) tokenAt.fill(i, starts[i]!, starts[i + 1]!);
  return {
    tokens,
    postings,
    postingCount: postings.reduce((sum, l) => sum + l.length, 0),
    text: tokens.map((t) => t.replace(/\s/g, ' ')).join('\n'),
    starts,
    tokenAt,
    symbolPostings: new Map([...symbols].map(([s, l]) => [s, Int32Array.from(l)])),
  };
}
