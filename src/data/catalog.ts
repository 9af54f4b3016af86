import type { Protocol } from '../domain/enums.ts';
import { maxLeverage, utilization } from '../domain/metrics.ts';
import { oracleHealth } from '../domain/oracle.ts';
import { fraction, servedBalances, significant, significantOrNull, usdOrNull } from '../domain/precision.ts';
import { classifyStrategy } from '../domain/strategy.ts';
import {
  type FeedUpdate,
  type MarketRecord,
  type MarketStateChange,
  type OracleFeedRecord,
  type OracleHealth,
  type OracleRecord,
  type PriceChange,
  type StatedAt,
  type StrategyInfo,
  statedAt,
} from '../domain/types.ts';
import { SearchIndex } from './search/search-index.ts';
import type { SearchWork } from './search/work.ts';
import { groupIndexes, walkMerged } from './sorted-lists.ts';
import { grown } from './typed-arrays.ts';

/** The API's Market (its OpenAPI schema) as served: primary facts plus the derived fields. */
/**
 * A market's factors after a change of its record: its prices and borrow index over the
 * dataset's; the collateral's price with its collateral index.
 */
export interface MarketFactorChange {
  ord: number;
  collateral: number;
  loan: number;
  /** Absent: the record or the dataset's has no borrow index (the debt factor stays). */
  debtIndex?: number;
}

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
   * The stored record: prices and USD amounts at the snapshot's prices. The balances and APYs
   * of the market states applied since (applyMarketStates) are held apart (Catalog.states);
   * `record` is the two together, built when asked for (null: not built since they moved).
   */
  base: MarketRecord;
  record: MarketRecord | null;
  /**
   * The dataset's prices of the market's tokens, which its positions' USD amounts are stated at,
   * and its borrow and collateral indexes, which their debt and collateral are stated at (null:
   * not recorded).
   */
  stated: StatedAt;
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

/**
 * The market catalog: markets ordered by supply descending, lookups by key, filter lists by
 * protocol and chain, and a token index for search (docs/decisions.md "Search").
 *
 * Two numberings: a market's `ord` (what the catalog hands out: the index of its record, fixed
 * for the catalog's life, so other structures such as the risk index can key by it) and its
 * rank (its place by supply, descending, which prices move). The filter lists and the search
 * index hold ranks, so lists and search ties follow the current supply; applyPrices re-ranks.
 */
export class Catalog {
  private readonly entries: Entry[] = [];
  private readonly byKey = new Map<string, number>();
  /** Rank (by current supply, descending) to ord. */
  private idAt: Int32Array;
  /** Per ord: the loan token's price over its snapshot price (supply and borrow scale by it). */
  private loanFactor: Float64Array;
  /** Per ord: the collateral token's price over its snapshot price. */
  private collateralFactor: Float64Array;
  /**
   * Per ord: what a price move reads of the record, kept apart from it (the records' shapes
   * vary): bit 1, a positive collateral price; bit 2, a positive loan price with supply and
   * borrow known.
   */
  private movable: Uint8Array;
  /**
   * Per ord, 1: the view's prices and balances are behind its record and factors (a step moved
   * them). A step only records what moved; the view is derived again when it is next read
   * (#fresh), so a step costs a few stores per market and markets nobody reads cost nothing.
   */
  private stale: Uint8Array;
  /**
   * Per ord: the balances and APYs of the last market state applied, in USD at the record's
   * prices, over the record's own when `held` is 1 (a step allocates nothing per market).
   */
  private readonly states: {
    held: Uint8Array;
    supply: Float64Array;
    borrow: Float64Array;
    supplyApy: Float64Array;
    borrowApy: Float64Array;
  };
  /** Markets holding a token as collateral (c) or loan (l), by `${chainId}:${token}`. */
  private readonly byToken = new Map<string, { c: number[]; l: number[] }>();
  private byProtocol = new Map<string, Int32Array>();
  private byChain = new Map<string, Int32Array>();
  private byProtocolChain = new Map<string, Int32Array>();
  private all = new Int32Array(0);
  private searchIndex = new SearchIndex([]);
  /**
   * The markets' feeds by `${chainId}:${feed address}`: the feed records of each market's own
   * copy of its oracle (built on the first feed update; until then views share the stored one).
   */
  private byFeed: Map<string, { ord: number; feed: OracleFeedRecord }[]> | null = null;
  protocols: readonly Protocol[] = [];
  chainIds: readonly number[] = [];
  /**
   * Bumped by every market added (addMarkets): what is derived from the whole catalog and kept
   * apart from it (the token and oracle index) is derived again when it moved.
   */
  generation = 0;
  /** Inside batch(): re-ranking waits for its end (rankStale: some update asked for it). */
  private batching = false;
  private rankStale = false;

  constructor(records: readonly MarketRecord[], nowSec: number) {
    const sorted = [...records].sort(
      (a, b) => supplyRank(b) - supplyRank(a) || (a.uniqueKey < b.uniqueKey ? -1 : 1),
    );
    const n = sorted.length;
    this.loanFactor = new Float64Array(n).fill(1);
    this.collateralFactor = new Float64Array(n).fill(1);
    this.movable = new Uint8Array(n);
    this.stale = new Uint8Array(n);
    this.states = {
      held: new Uint8Array(n),
      supply: new Float64Array(n),
      borrow: new Float64Array(n),
      supplyApy: new Float64Array(n),
      borrowApy: new Float64Array(n),
    };
    this.#append(sorted, nowSec);
    // Ranks start as ords (the records are in supply order).
    this.idAt = Int32Array.from({ length: n }, (_, i) => i);
    this.#index();
  }

  /** Entries for `records`, numbered from the catalog's size on (its arrays have room for them). */
  #append(records: readonly MarketRecord[], nowSec: number): void {
    for (const m of records) {
      const ord = this.entries.length;
      this.entries.push({
        view: toMarketView(m, nowSec),
        healthAtSec: nowSec,
        json: null,
        base: m,
        record: null,
        stated: statedAt(m),
      });
      this.byKey.set(m.uniqueKey.toLowerCase(), ord);
      this.#setMovable(ord, m);
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
    }
  }

  /** The rank lists (every market, by protocol, chain, both) and the search index, from `idAt`. */
  #index(): void {
    const n = this.entries.length;
    const at = (rank: number) => this.entries[this.idAt[rank]!]!.view;
    this.all = Int32Array.from({ length: n }, (_, i) => i);
    this.byProtocol = groupIndexes(n, (r) => at(r).protocol);
    this.byChain = groupIndexes(n, (r) => String(at(r).chainId));
    this.byProtocolChain = groupIndexes(n, (r) => `${at(r).protocol}:${at(r).chainId}`);
    this.protocols = [...this.byProtocol.keys()].sort() as Protocol[];
    this.chainIds = [...this.byChain.keys()].map(Number).sort((a, b) => a - b);
    this.searchIndex = new SearchIndex(Array.from(this.idAt, (ord) => this.entries[ord]!.base));
  }

  /**
   * Markets new to the catalog (a source found them), in place: each takes the next ord (those
   * handed out stay, so what is keyed by ord holds), the catalog is ranked and indexed again
   * (O(markets)), the feed index is rebuilt on the next feed update. Their records are the
   * dataset's statement of them (their positions are stated at their prices and indexes).
   * Markets already held are skipped. Returns the ords added.
   */
  addMarkets(records: readonly MarketRecord[]): number[] {
    const fresh = new Map<string, MarketRecord>();
    for (const m of records) {
      const key = m.uniqueKey.toLowerCase();
      if (!this.byKey.has(key) && !fresh.has(key)) fresh.set(key, m);
    }
    if (fresh.size === 0) return [];
    const from = this.entries.length;
    const n = from + fresh.size;
    this.loanFactor = grown(this.loanFactor, n, 1);
    this.collateralFactor = grown(this.collateralFactor, n, 1);
    this.movable = grown(this.movable, n);
    this.stale = grown(this.stale, n);
    const st = this.states;
    st.held = grown(st.held, n);
    st.supply = grown(st.supply, n);
    st.borrow = grown(st.borrow, n);
    st.supplyApy = grown(st.supplyApy, n);
    st.borrowApy = grown(st.borrowApy, n);
    this.#append([...fresh.values()], 0);
    const idAt = new Int32Array(n);
    idAt.set(this.idAt);
    for (let ord = from; ord < n; ord++) idAt[ord] = ord;
    this.idAt = idAt;
    this.idAt = this.#rankOrder();
    this.#index();
    this.byFeed = null;
    this.generation++;
    return Array.from({ length: fresh.size }, (_, i) => from + i);
  }

  get size(): number {
    return this.entries.length;
  }

  /** Records in supply order, for re-persisting or rebuilding. */
  views(): readonly MarketView[] {
    return Array.from(this.idAt, (ord) => this.#fresh(ord).view);
  }

  #setMovable(ord: number, m: MarketRecord): void {
    const collateral = m.collateralPrice !== null && m.collateralPrice > 0;
    const loan = m.loanPrice !== null && m.loanPrice > 0 && m.supply !== null && m.borrow !== null;
    this.movable[ord] = (collateral ? 1 : 0) | (loan ? 2 : 0);
  }

  /**
   * The entry with its view brought up to its record and factors: the prices (the snapshot's
   * times the factor), the balances served at the loan factor, the token amounts and the APYs,
   * derived as toMarketView derives them (with factors of 1, the same view).
   */
  #fresh(ord: number): Entry {
    const e = this.entries[ord]!;
    if (this.stale[ord] === 0) return e;
    this.stale[ord] = 0;
    const b = this.#record(ord);
    const v = e.view;
    if (b.collateralPrice !== null && b.collateralPrice > 0)
      v.collateralPrice = significant(b.collateralPrice * this.collateralFactor[ord]!);
    const f = this.loanFactor[ord]!;
    if (b.loanPrice !== null && b.loanPrice > 0) v.loanPrice = significant(b.loanPrice * f);
    if (b.supply !== null && b.borrow !== null) {
      const served = servedBalances(b.supply * f, b.borrow * f);
      v.supply = served.supply;
      v.borrow = served.borrow;
      v.available = served.available;
      // Derived from the served amounts, as available is.
      v.utilization = served.utilization;
    }
    const assets = marketAssets(b);
    v.supplyAssets = significantOrNull(assets.supply);
    v.borrowAssets = significantOrNull(assets.borrow);
    v.supplyApy = fraction(b.supplyApy);
    v.borrowApy = fraction(b.borrowApy);
    return e;
  }

  /**
   * The records as loaded, in ord order: snapshot prices and amounts, with the balances and APYs
   * of the last market state applied.
   */
  baseRecords(): readonly MarketRecord[] {
    return this.entries.map((_, ord) => this.#record(ord));
  }

  /** A market's record with its last market state (built once per state). */
  #record(ord: number): MarketRecord {
    const e = this.entries[ord]!;
    const st = this.states;
    if (st.held[ord] === 0) return e.base;
    e.record ??= {
      ...e.base,
      supply: st.supply[ord]!,
      borrow: st.borrow[ord]!,
      // Recorded token amounts would be of the balances replaced: derived from the new ones.
      supplyAssets: undefined,
      borrowAssets: undefined,
      supplyApy: st.supplyApy[ord]!,
      borrowApy: st.borrowApy[ord]!,
    };
    return e.record;
  }

  /** A market's supply in USD at its record's prices (its last state's). */
  #supply(ord: number): number | null {
    return this.states.held[ord] === 1 ? this.states.supply[ord]! : this.entries[ord]!.base.supply;
  }

  /** The ords of the markets holding a token as collateral (c) and as loan (l). */
  holding(
    chainId: number,
    token: string,
  ): { readonly c: readonly number[]; readonly l: readonly number[] } | undefined {
    return this.byToken.get(`${chainId}:${token.toLowerCase()}`);
  }

  /** A market's record as loaded (its snapshot's prices and amounts; its last state's balances and APYs). */
  baseRecord(ord: number): MarketRecord {
    return this.#record(ord);
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
      const f = ch.ratio;
      if (!t || !(f > 0) || !Number.isFinite(f)) continue;
      for (const ord of t.c) {
        if ((this.movable[ord]! & 1) === 0) continue;
        this.collateralFactor[ord] = f;
        this.#moved(ord);
        touched++;
      }
      for (const ord of t.l) {
        if ((this.movable[ord]! & 2) === 0) continue;
        if (this.loanFactor[ord] !== f) reorder = true;
        this.loanFactor[ord] = f;
        this.#moved(ord);
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
   * re-ranked when the order by supply changed. Returns, per market taken, its prices and borrow
   * index over the dataset's (what its positions' amounts scale by; a price not known: 1).
   * Unknown markets are skipped.
   */
  applyMarketRecords(records: Iterable<MarketRecord>): MarketFactorChange[] {
    const out: MarketFactorChange[] = [];
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
      if (next.supply !== this.#supply(ord) || this.loanFactor[ord] !== 1) reorder = true;
      e.base = next;
      e.record = null;
      this.states.held[ord] = 0;
      e.view = toMarketView(next, 0);
      e.healthAtSec = Number.NaN;
      e.json = null;
      this.loanFactor[ord] = 1;
      this.collateralFactor[ord] = 1;
      this.stale[ord] = 0;
      this.#setMovable(ord, next);
      const ratio = (now: number | null, stated: number | null) =>
        now !== null && stated !== null && stated > 0 && now > 0 ? now / stated : 1;
      out.push({
        ord,
        // (Collateral that earns interest: its index too, when both records have one.)
        collateral:
          ratio(next.collateralPrice, e.stated.collateral) *
          ratio(next.collateralIndex ?? null, e.stated.collateralIndex),
        loan: ratio(next.loanPrice, e.stated.loan),
        ...(next.borrowIndex && e.stated.borrowIndex
          ? { debtIndex: ratio(next.borrowIndex, e.stated.borrowIndex) }
          : {}),
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
   * `ords`, when the caller knows them: each state's market (-1: none), not looked up by key.
   */
  applyMarketStates(states: readonly MarketStateChange[], ords?: ArrayLike<number>): number {
    let touched = 0;
    let reorder = false;
    const valid = (x: number) => Number.isFinite(x) && x >= 0;
    for (let i = 0; i < states.length; i++) {
      const st = states[i]!;
      const ord = ords ? ords[i]! : (this.byKey.get(st.marketKey) ?? -1);
      if (ord < 0) continue;
      if (!(valid(st.supply) && valid(st.borrow) && valid(st.supplyApy) && valid(st.borrowApy))) continue;
      const e = this.entries[ord]!;
      const b = e.base;
      // States are in USD at the record's prices: a market without them has none.
      if (b.loanPrice === null) continue;
      const s = this.states;
      const held = s.held[ord] === 1;
      if (
        (held ? s.supply[ord] : b.supply) === st.supply &&
        (held ? s.borrow[ord] : b.borrow) === st.borrow &&
        (held ? s.supplyApy[ord] : b.supplyApy) === st.supplyApy &&
        (held ? s.borrowApy[ord] : b.borrowApy) === st.borrowApy
      )
        continue;
      if (this.#supply(ord) !== st.supply) reorder = true;
      s.held[ord] = 1;
      s.supply[ord] = st.supply;
      s.borrow[ord] = st.borrow;
      s.supplyApy[ord] = st.supplyApy;
      s.borrowApy[ord] = st.borrowApy;
      e.record = null;
      // Balances known now: the loan side moves with its price (if it has one).
      if (b.loanPrice > 0) this.movable[ord] = (this.movable[ord] ?? 0) | 2;
      this.#moved(ord);
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

  /** A step moved the market: its view is derived again when read, its cached JSON dropped. */
  #moved(ord: number): void {
    this.stale[ord] = 1;
    this.entries[ord]!.json = null;
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

  /** The ords by current supply, descending (ties by key): rank to ord. */
  #rankOrder(): Int32Array {
    const n = this.entries.length;
    const supply = new Float64Array(n);
    for (let ord = 0; ord < n; ord++) {
      const s = this.#supply(ord);
      supply[ord] = s === null ? -1 : s * this.loanFactor[ord]!;
    }
    return Int32Array.from(this.idAt).sort(
      (a, b) =>
        supply[b]! - supply[a]! ||
        (this.entries[a]!.view.uniqueKey < this.entries[b]!.view.uniqueKey ? -1 : 1),
    );
  }

  /** Ranks by current supply again; the rank lists and search postings follow, the term cache empties. */
  private rerank(): void {
    const n = this.entries.length;
    const order = this.#rankOrder();
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
    this.searchIndex.reorder(remap);
    this.idAt = order;
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
    const view = this.viewAt(ord, nowSec);
    const e = this.entries[ord]!;
    e.json ??= head(view);
    return [e.json, health(view.oracleHealth)];
  }

  viewAt(ord: number, nowSec: number): MarketView {
    const e = this.#fresh(ord);
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
    return this.#fresh(ord).view;
  }

  /** A market's uniqueKey, without deriving its view (what a step moves is not read). */
  keyAt(ord: number): string {
    return this.entries[ord]!.view.uniqueKey;
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
   * Markets matching every word of `query`, in the filter's scope: at most `limit` ords, by
   * score (the sum of each word's best match: exact symbol, word prefix, substring), then by
   * supply descending. See SearchIndex.search; `work`, when given, receives the elements read.
   */
  search(query: string, filter: MarketFilter, limit: number, work?: SearchWork): number[] {
    const filtered = filter.protocol !== undefined || filter.chainIds !== undefined;
    // The search index works in ranks; answers are ords.
    const accept = filtered ? (rank: number) => this.inScope(this.idAt[rank]!, filter) : () => true;
    return this.searchIndex.search(query, limit, accept, work).map((rank) => this.idAt[rank]!);
  }

  /** Entries and bytes of the search's term cache (at most TERM_CACHE_ENTRIES and TERM_CACHE_BYTES). */
  termCacheStats(): { entries: number; bytes: number } {
    return this.searchIndex.termCacheStats();
  }

  /** Sizes of the search index: markets, distinct tokens, postings (token-market pairs). */
  indexStats(): { markets: number; tokens: number; postings: number } {
    return this.searchIndex.stats();
  }
}
