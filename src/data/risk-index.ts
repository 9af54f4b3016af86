import { LRUCache } from 'lru-cache';
import type { Protocol } from '../domain/enums.ts';
import { distanceToLiq, leverage } from '../domain/metrics.ts';
import {
  ADDRESS_BYTES,
  addressAt,
  isRiskSorted,
  type PositionColumns,
  riskOrderBefore,
  writeAddress,
} from '../domain/position-columns.ts';
import { fraction, significant, significantOrNull, usd } from '../domain/precision.ts';
import { NO_POSITIONS, type PositionSums } from '../domain/stress.ts';
import type { PositionRecord, PriceChange } from '../domain/types.ts';
import type { Catalog, MarketView } from './catalog.ts';

/** The API's PositionAtRisk (SPEC.md, DECISIONS D5). */
export interface PositionAtRiskView {
  protocol: Protocol;
  chainId: number;
  user: { address: string };
  healthFactor: number;
  state: { collateralUsd: number; borrowAssetsUsd: number; supplyAssetsUsd: number };
  market: {
    uniqueKey: string;
    collateralAsset: { symbol: string };
    loanAsset: { symbol: string };
    lltv: number;
  };
  leverage: number | null;
  distanceToLiq: number;
}

export interface RiskQuery {
  /** Positions with healthFactor strictly below this are returned (0 < x <= 10). */
  healthFactorThreshold: number;
  protocol?: Protocol | undefined;
  /** Chains in scope; undefined = every chain. */
  chainIds?: readonly number[] | undefined;
  /** Market ord in the catalog. */
  marketOrd?: number | undefined;
  minBorrowUsd: number;
  limit: number;
}

/**
 * Bounds of the serialized-positions cache, by entries and by bytes (each entry is its bytes
 * plus a fixed overhead; a position is about 0.5 KB, so 20,000 of them fit in 16 MiB).
 */
export const JSON_CACHE_ENTRIES = 20_000;
export const JSON_CACHE_BYTES = 16 * 1024 * 1024;
const JSON_ENTRY_OVERHEAD_BYTES = 100;

/** Scope arrays of market ords, kept sorted by each market's current lowest health factor. */
interface ScopeMarkets {
  ords: Uint32Array;
  /** The price version the order was computed at (re-sorted lazily on the next query). */
  sortedAt: number;
}

/**
 * Positions ordered by health factor, while prices move.
 *
 * Every market here is isolated: a position's collateral and debt are one token each, so its
 * health factor is collateral x price_c x lltv / (debt x price_l) = hf0 x k, where hf0 is its
 * health factor at the snapshot prices and k = (price_c / price_c0) / (price_l / price_l0) is
 * one number per market. So inside a market the order by health factor never changes with
 * prices: each market keeps its positions sorted once, by (hf0 asc, debt desc), and a price
 * move only updates the factors of the markets that hold the token (applyPrices: no sort, no
 * rebuild). USD amounts move the same way: collateral x (price_c / price_c0), debt and supply x
 * (price_l / price_l0).
 *
 * A query merges markets: each scope (everything, one protocol, one chain, one protocol on one
 * chain) keeps its markets ordered by their current lowest health factor, re-sorted on the first
 * query after a price move (one sort of the scope's markets, not of its positions); a query
 * walks that order, opening a market only once its lowest health factor could be next, and
 * merges the open ones with a small heap: O((k + m) log m) for k answers from m markets, with
 * nothing that grows with the number of positions but the binary search of a single-market
 * query. Storage: the columns (56 bytes a position) plus one list per market (4 bytes).
 */
export class RiskIndex {
  /** The positions; replaced by a larger copy when a change adds positions past its room. */
  private cols: PositionColumns;
  /** Per market (by ord): every position number, debt-free ones too; built on the first change. */
  private members: Map<number, number[]> | null = null;
  /** Per wallet (lower-case address): its position numbers, every market; built on the first wallet query. */
  private byUser: Map<string, number[]> | null = null;
  /** The change sequence number of each position changed since the load (0 for the others). */
  private readonly seqs = new Map<number, number>();
  /** Positions with debt in each market (by ord), by (hf0 asc, debt desc, number). */
  private readonly byMarket: (Uint32Array | undefined)[];
  private readonly scopes = new Map<string, ScopeMarkets>();
  private readonly catalog: Catalog;
  private indexedCount: number;
  /**
   * Per market: price factors of its collateral and loan tokens, its borrow index over the one
   * its positions' debt is stated at, debt = loan x index, and k = collateral / debt.
   */
  private readonly collateralFactor: Float64Array;
  private readonly loanFactor: Float64Array;
  private readonly debtIndex: Float64Array;
  private readonly debtFactor: Float64Array;
  private readonly hfFactor: Float64Array;
  /** Per market: bumped whenever its factors change (cached JSON of its positions is stale). */
  private readonly marketVersion: Uint32Array;
  /** Bumped by every price move that changed a factor. */
  private priceVersion = 0;
  /** Per market: the price version at which its factors last changed. */
  private readonly changedAt: Int32Array;
  /** Per market: its lowest health factor when its scopes were last ordered. */
  private readonly heads: Float64Array;
  /**
   * Prefix sums of collateral and debt along each market's list, by the list itself: lists are
   * replaced (never edited) when a position enters or leaves, so a replaced list's sums go with it.
   */
  private readonly prefixes = new WeakMap<Uint32Array, { collateral: Float64Array; debt: Float64Array }>();
  private readonly jsonCache = new LRUCache<number, { version: number; json: Uint8Array }>({
    max: JSON_CACHE_ENTRIES,
    maxSize: JSON_CACHE_BYTES,
    sizeCalculation: (e) => e.json.byteLength + JSON_ENTRY_OVERHEAD_BYTES,
  });

  constructor(catalog: Catalog, cols: PositionColumns) {
    this.catalog = catalog;
    this.cols = cols;
    const { count, healthFactor: hf, borrowUsd } = cols;
    // Debt-free positions are never at risk (D5): they are left out of every list.
    let atRisk = 0;
    for (let i = 0; i < count; i++) if (borrowUsd[i]! > 0 && Number.isFinite(hf[i]!)) atRisk++;
    const order = new Uint32Array(atRisk);
    for (let i = 0, j = 0; i < count; i++) if (borrowUsd[i]! > 0 && Number.isFinite(hf[i]!)) order[j++] = i;
    // Stores keep positions in risk order already; anything else is sorted here.
    if (!isRiskSorted(cols)) order.sort((a, b) => riskOrderBefore(cols, a, b));
    this.indexedCount = atRisk;
    // Bucket the global order by market; appending in global order keeps each list sorted.
    const size = catalog.size;
    const counts = new Uint32Array(size);
    for (let j = 0; j < order.length; j++) counts[cols.marketIndex[order[j]!]!]!++;
    this.byMarket = Array.from(counts, (c) => (c > 0 ? new Uint32Array(c) : undefined));
    // With each list, its prefix sums of collateral and debt (stress tests read them), filled in
    // the same pass: a first stress test then costs no pass over the positions.
    const sums = Array.from(counts, (c) =>
      c > 0 ? { collateral: new Float64Array(c + 1), debt: new Float64Array(c + 1) } : undefined,
    );
    const fill = new Uint32Array(size);
    for (let j = 0; j < order.length; j++) {
      const i = order[j]!;
      const ord = cols.marketIndex[i]!;
      const at = fill[ord]!++;
      this.byMarket[ord]![at] = i;
      const s = sums[ord]!;
      s.collateral[at + 1] = s.collateral[at]! + cols.collateralUsd[i]!;
      s.debt[at + 1] = s.debt[at]! + cols.borrowUsd[i]!;
    }
    for (let ord = 0; ord < size; ord++) if (sums[ord]) this.prefixes.set(this.byMarket[ord]!, sums[ord]!);
    this.collateralFactor = new Float64Array(size).fill(1);
    this.loanFactor = new Float64Array(size).fill(1);
    this.debtIndex = new Float64Array(size).fill(1);
    this.debtFactor = new Float64Array(size).fill(1);
    this.hfFactor = new Float64Array(size).fill(1);
    this.marketVersion = new Uint32Array(size);
    this.changedAt = new Int32Array(size);
    this.heads = new Float64Array(size);
    this.buildScopes();
  }

  /** Each scope's markets with debt (ordered on their first query). */
  private buildScopes(): void {
    const members = new Map<string, number[]>();
    const join = (k: string, ord: number) => {
      const l = members.get(k);
      if (l) l.push(ord);
      else members.set(k, [ord]);
    };
    for (let ord = 0; ord < this.catalog.size; ord++) {
      const m = this.catalog.recordAt(ord);
      if (!this.byMarket[ord]) continue;
      join('all', ord);
      join(`p:${m.protocol}`, ord);
      join(`c:${m.chainId}`, ord);
      join(`pc:${m.protocol}:${m.chainId}`, ord);
    }
    this.scopes.clear();
    for (const [k, ords] of members) this.scopes.set(k, { ords: Uint32Array.from(ords), sortedAt: -1 });
  }

  /**
   * Applies positions as their source now sees them (amounts in the USD of their market
   * record's prices, like the loaded ones): each replaces the position of the same market and
   * user, or is added. Only the markets named change: a position leaves its market's ordered
   * list and re-enters it at its new place (a binary search and a copy of that one list), the
   * market's cached JSON and scope order are invalidated. Returns the positions changed.
   */
  applyPositionChanges(
    changes: Iterable<{ ord: number; seq?: number } & Omit<PositionRecord, 'marketKey'>>,
  ): number {
    const version = this.priceVersion + 1;
    let changed = 0;
    let scopesChanged = false;
    const members = this.membersByMarket();
    const key = new Uint8Array(ADDRESS_BYTES);
    for (const ch of changes) {
      const ord = ch.ord;
      if (!(ord >= 0 && ord < this.catalog.size)) continue;
      writeAddress(key, 0, ch.user);
      const list = members.get(ord) ?? [];
      let i = list.find((j) => this.userIs(j, key)) ?? -1;
      const wasListed = i >= 0 && this.isIndexed(i);
      if (wasListed) scopesChanged = this.unlist(i, ord) || scopesChanged;
      if (i < 0) {
        i = this.addPosition(ord, key);
        list.push(i);
        members.set(ord, list);
      }
      const c = this.cols;
      c.collateralUsd[i] = ch.collateralUsd;
      c.borrowUsd[i] = ch.borrowUsd;
      c.supplyUsd[i] = ch.supplyUsd;
      c.healthFactor[i] = ch.healthFactor;
      if (ch.seq !== undefined) this.seqs.set(i, ch.seq);
      if (this.isIndexed(i)) scopesChanged = this.list(i, ord) || scopesChanged;
      this.indexedCount += (this.isIndexed(i) ? 1 : 0) - (wasListed ? 1 : 0);
      this.changedAt[ord] = version;
      this.marketVersion[ord]!++;
      changed++;
    }
    if (changed > 0) this.priceVersion = version;
    if (scopesChanged) this.buildScopes();
    return changed;
  }

  /**
   * Position i as stored (amounts in its market record's prices, debt at the borrow index it
   * was stated at), with the price factors and borrow index of its market now and the change
   * sequence number it is at (0: as loaded).
   */
  stateOf(i: number) {
    const c = this.cols;
    const ord = c.marketIndex[i]!;
    return {
      ord,
      user: addressAt(c.users, i),
      collateralUsd: c.collateralUsd[i]!,
      borrowUsd: c.borrowUsd[i]!,
      supplyUsd: c.supplyUsd[i]!,
      healthFactor: c.healthFactor[i]!,
      collateralFactor: this.collateralFactor[ord]!,
      loanFactor: this.loanFactor[ord]!,
      debtIndex: this.debtIndex[ord]!,
      seq: this.seqs.get(i) ?? 0,
    };
  }

  /** Whether position i can be at risk: it has debt and a finite health factor (D5). */
  private isIndexed(i: number): boolean {
    return this.cols.borrowUsd[i]! > 0 && Number.isFinite(this.cols.healthFactor[i]!);
  }

  private userIs(i: number, key: Uint8Array): boolean {
    const u = this.cols.users;
    const at = i * ADDRESS_BYTES;
    for (let b = 0; b < ADDRESS_BYTES; b++) if (u[at + b] !== key[b]) return false;
    return true;
  }

  private membersByMarket(): Map<number, number[]> {
    if (!this.members) {
      this.members = new Map();
      const mi = this.cols.marketIndex;
      for (let i = 0; i < this.cols.count; i++) {
        const l = this.members.get(mi[i]!);
        if (l) l.push(i);
        else this.members.set(mi[i]!, [i]);
      }
    }
    return this.members;
  }

  /** Takes position i out of its market's list; true when the list became empty. */
  private unlist(i: number, ord: number): boolean {
    const l = this.byMarket[ord]!;
    const at = l.indexOf(i);
    if (at < 0) return false;
    const next = new Uint32Array(l.length - 1);
    next.set(l.subarray(0, at));
    next.set(l.subarray(at + 1), at);
    this.byMarket[ord] = next.length > 0 ? next : undefined;
    return next.length === 0;
  }

  /** Puts position i into its market's list at its place; true when the list was empty. */
  private list(i: number, ord: number): boolean {
    const l = this.byMarket[ord] ?? new Uint32Array(0);
    let lo = 0;
    let hi = l.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (riskOrderBefore(this.cols, l[mid]!, i) < 0) lo = mid + 1;
      else hi = mid;
    }
    const next = new Uint32Array(l.length + 1);
    next.set(l.subarray(0, lo));
    next[lo] = i;
    next.set(l.subarray(lo), lo + 1);
    this.byMarket[ord] = next;
    return l.length === 0;
  }

  /** A new position of market ord, user `key`, with no amounts yet: the columns grow by doubling when full. */
  private addPosition(ord: number, key: Uint8Array): number {
    const c = this.cols;
    const i = c.count;
    if (i >= c.marketIndex.length) {
      const cap = Math.max(16, c.marketIndex.length * 2);
      const grow = <T extends Float64Array | Uint32Array | Uint8Array>(a: T, n: number): T => {
        const b = new (a.constructor as new (n: number) => T)(n);
        b.set(a);
        return b;
      };
      this.cols = {
        count: i,
        marketIndex: grow(c.marketIndex, cap),
        users: grow(c.users, cap * ADDRESS_BYTES),
        collateralUsd: grow(c.collateralUsd, cap),
        borrowUsd: grow(c.borrowUsd, cap),
        supplyUsd: grow(c.supplyUsd, cap),
        healthFactor: grow(c.healthFactor, cap),
      };
    }
    const n = this.cols;
    n.count = i + 1;
    n.marketIndex[i] = ord;
    n.users.set(key, i * ADDRESS_BYTES);
    if (this.byUser) {
      const user = addressAt(n.users, i);
      const list = this.byUser.get(user);
      if (list) list.push(i);
      else this.byUser.set(user, [i]);
    }
    return i;
  }

  /**
   * A wallet's positions (numbers), in every market, debt-free and emptied ones too. The index
   * by wallet is built on the first call (one pass over the positions) and then kept up to date.
   */
  positionsOf(address: string): readonly number[] {
    if (!this.byUser) {
      const byUser = new Map<string, number[]>();
      const c = this.cols;
      for (let i = 0; i < c.count; i++) {
        const user = addressAt(c.users, i);
        const list = byUser.get(user);
        if (list) list.push(i);
        else byUser.set(user, [i]);
      }
      this.byUser = byUser;
    }
    return this.byUser.get(address.toLowerCase()) ?? [];
  }

  /**
   * Position i at current prices and borrow index, unrounded: its market (ord), USD amounts and
   * health factor (Infinity without debt).
   */
  amountsOf(i: number): {
    ord: number;
    collateralUsd: number;
    borrowUsd: number;
    supplyUsd: number;
    healthFactor: number;
  } {
    const c = this.cols;
    const ord = c.marketIndex[i]!;
    const borrowUsd = c.borrowUsd[i]! * this.debtFactor[ord]!;
    return {
      ord,
      collateralUsd: c.collateralUsd[i]! * this.collateralFactor[ord]!,
      borrowUsd,
      supplyUsd: c.supplyUsd[i]! * this.loanFactor[ord]!,
      healthFactor: borrowUsd > 0 ? this.hfOf(i, ord) : Number.POSITIVE_INFINITY,
    };
  }

  /** Positions held, debt-free ones included. */
  get size(): number {
    return this.cols.count;
  }

  /** Positions with debt, the ones any query can return. */
  get indexed(): number {
    return this.indexedCount;
  }

  /** Bytes held by the columns, the ordering lists and their prefix sums. */
  byteSize(): number {
    const c = this.cols;
    let bytes =
      c.marketIndex.byteLength +
      c.collateralUsd.byteLength +
      c.borrowUsd.byteLength +
      c.supplyUsd.byteLength +
      c.healthFactor.byteLength +
      c.users.byteLength +
      this.collateralFactor.byteLength * 6 +
      this.marketVersion.byteLength +
      this.changedAt.byteLength;
    for (const l of this.byMarket)
      if (l) bytes += l.byteLength + (this.prefixes.has(l) ? 16 * (l.length + 1) : 0);
    for (const s of this.scopes.values()) bytes += s.ords.byteLength;
    return bytes;
  }

  /**
   * Applies new token prices (relative to the snapshot prices of the catalog's markets): only
   * the factors of the markets holding each token change, O(markets touched). Unknown tokens
   * and markets whose snapshot price is not positive are left alone. Returns the markets touched.
   */
  applyPrices(changes: Iterable<PriceChange>): number {
    // Markets changed by this move are stamped with the version it creates.
    const version = this.priceVersion + 1;
    let touched = 0;
    for (const ch of changes) {
      const t = this.catalog.holding(ch.chainId, ch.token);
      if (!t || !(ch.ratio > 0) || !Number.isFinite(ch.ratio)) continue;
      for (const ord of t.c) {
        const p0 = this.catalog.basePrices(ord).collateral;
        if (p0 !== null && p0 > 0) touched += this.setFactors(ord, ch.ratio, this.loanFactor[ord]!, version);
      }
      for (const ord of t.l) {
        const p0 = this.catalog.basePrices(ord).loan;
        if (p0 !== null && p0 > 0)
          touched += this.setFactors(ord, this.collateralFactor[ord]!, ch.ratio, version);
      }
    }
    if (touched > 0) this.priceVersion = version;
    return touched;
  }

  /**
   * Markets restated by their source: each market's token prices over the dataset's (what its
   * positions' amounts are stated at), replacing its price factors. Returns the markets touched.
   */
  applyMarketFactors(changes: Iterable<{ ord: number; collateral: number; loan: number }>): number {
    const version = this.priceVersion + 1;
    let touched = 0;
    for (const { ord, collateral, loan } of changes) {
      if (!(ord >= 0 && ord < this.catalog.size) || !(collateral > 0 && loan > 0)) continue;
      if (!Number.isFinite(collateral) || !Number.isFinite(loan)) continue;
      touched += this.setFactors(ord, collateral, loan, version);
    }
    if (touched > 0) this.priceVersion = version;
    return touched;
  }

  /**
   * Interest accrued on debt: each market's borrow index now, relative to the one its positions'
   * debt is stated at (1 as loaded). Debt and health factors of the market's positions scale by
   * it (one factor per market, like prices: no re-sort). Non-positive or non-finite indexes and
   * unknown ords are ignored. Returns the markets touched.
   */
  applyDebtIndexes(changes: Iterable<{ ord: number; index: number }>): number {
    const version = this.priceVersion + 1;
    let touched = 0;
    for (const { ord, index } of changes) {
      if (!(ord >= 0 && ord < this.catalog.size) || !(index > 0) || !Number.isFinite(index)) continue;
      touched += this.setFactors(ord, this.collateralFactor[ord]!, this.loanFactor[ord]!, version, index);
    }
    if (touched > 0) this.priceVersion = version;
    return touched;
  }

  private setFactors(
    ord: number,
    collateral: number,
    loan: number,
    version: number,
    index = this.debtIndex[ord]!,
  ): number {
    if (
      this.collateralFactor[ord] === collateral &&
      this.loanFactor[ord] === loan &&
      this.debtIndex[ord] === index
    )
      return 0;
    this.changedAt[ord] = version;
    this.collateralFactor[ord] = collateral;
    this.loanFactor[ord] = loan;
    this.debtIndex[ord] = index;
    this.debtFactor[ord] = loan * index;
    this.hfFactor[ord] = collateral / (loan * index);
    this.marketVersion[ord]!++;
    return 1;
  }

  /**
   * The health factor position `i` has now, as `view(i)` serves it but unrounded: what risk
   * events compare with their thresholds (src/events/matcher.ts).
   */
  healthFactorOf(i: number): number {
    return this.hfOf(i, this.cols.marketIndex[i]!);
  }

  /** Current health factor of position `i` (market `ord`). */
  private hfOf(i: number, ord: number): number {
    return this.cols.healthFactor[i]! * this.hfFactor[ord]!;
  }

  /** Current lowest health factor of a market with debt. */
  private headOf(ord: number): number {
    return this.hfOf(this.byMarket[ord]![0]!, ord);
  }

  /**
   * A scope's markets, ordered by current lowest health factor. After a price move only the
   * markets it touched are sorted again, then merged with the others (still in order, their
   * health factors unchanged).
   */
  private scopeOrds(key: string): Uint32Array | undefined {
    const s = this.scopes.get(key);
    if (!s) return undefined;
    if (s.sortedAt !== this.priceVersion) {
      const heads = this.heads;
      const before = (a: number, b: number) => heads[a]! - heads[b]! || a - b;
      const moved: number[] = [];
      const kept: number[] = [];
      for (const ord of s.ords) {
        if (this.changedAt[ord]! > s.sortedAt || s.sortedAt < 0) {
          heads[ord] = this.headOf(ord);
          moved.push(ord);
        } else kept.push(ord);
      }
      moved.sort(before);
      let a = 0;
      let b = 0;
      for (let j = 0; j < s.ords.length; j++) {
        s.ords[j] =
          b >= moved.length || (a < kept.length && before(kept[a]!, moved[b]!) < 0)
            ? kept[a++]!
            : moved[b++]!;
      }
      s.sortedAt = this.priceVersion;
    }
    return s.ords;
  }

  private scopeKeys(q: RiskQuery): string[] {
    if (q.chainIds === undefined) return [q.protocol === undefined ? 'all' : `p:${q.protocol}`];
    return [...new Set(q.chainIds)].map((c) =>
      q.protocol === undefined ? `c:${c}` : `pc:${q.protocol}:${c}`,
    );
  }

  /** Position numbers matching the query, in (healthFactor asc, borrowUsd desc) order, at current prices. */
  query(q: RiskQuery): number[] {
    const out: number[] = [];
    if (q.limit <= 0) return out;
    if (q.marketOrd !== undefined) return this.queryMarket(q, q.marketOrd);
    const borrow0 = this.cols.borrowUsd;
    const debtFactor = this.debtFactor;
    const T = q.healthFactorThreshold;
    const scopes: Uint32Array[] = [];
    for (const k of this.scopeKeys(q)) {
      const ords = this.scopeOrds(k);
      if (ords) scopes.push(ords);
    }
    const next = new Int32Array(scopes.length);
    // The open markets: a min-heap of cursors by (hf, debt desc, number).
    const heap = new CursorHeap();
    const cursorPos = new Map<number, number>();
    for (;;) {
      // The scope whose next unopened market has the lowest health factor.
      let best = -1;
      let bestHead = Number.POSITIVE_INFINITY;
      for (let s = 0; s < scopes.length; s++) {
        if (next[s]! >= scopes[s]!.length) continue;
        const h = this.headOf(scopes[s]![next[s]!]!);
        if (h < bestHead) {
          best = s;
          bestHead = h;
        }
      }
      // Open it while it could hold the next answer (ties opened too, for the debt order).
      if (best >= 0 && bestHead < T && (heap.size === 0 || bestHead <= heap.topHf())) {
        const ord = scopes[best]![next[best]!++]!;
        const i = this.byMarket[ord]![0]!;
        cursorPos.set(ord, 0);
        heap.push(this.hfOf(i, ord), borrow0[i]! * debtFactor[ord]!, i, ord);
        continue;
      }
      if (heap.size === 0) break;
      const hf = heap.topHf();
      if (hf >= T) break;
      const { i, ord } = heap.pop();
      if (borrow0[i]! * debtFactor[ord]! >= q.minBorrowUsd) {
        out.push(i);
        if (out.length >= q.limit) break;
      }
      const list = this.byMarket[ord]!;
      const pos = cursorPos.get(ord)! + 1;
      if (pos < list.length) {
        cursorPos.set(ord, pos);
        const j = list[pos]!;
        heap.push(this.hfOf(j, ord), borrow0[j]! * debtFactor[ord]!, j, ord);
      }
    }
    return out;
  }

  /** One market: a binary search for the threshold, then its list in order. */
  private queryMarket(q: RiskQuery, ord: number): number[] {
    const out: number[] = [];
    const list = this.byMarket[ord];
    if (!list) return out;
    const m = this.catalog.recordAt(ord);
    if (q.protocol !== undefined && m.protocol !== q.protocol) return out;
    if (q.chainIds !== undefined && !q.chainIds.includes(m.chainId)) return out;
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.hfOf(list[mid]!, ord) < q.healthFactorThreshold) lo = mid + 1;
      else hi = mid;
    }
    const borrow0 = this.cols.borrowUsd;
    const df = this.debtFactor[ord]!;
    for (let j = 0; j < lo && out.length < q.limit; j++) {
      if (borrow0[list[j]!]! * df >= q.minBorrowUsd) out.push(list[j]!);
    }
    return out;
  }

  /**
   * Positions with debt in market ord whose health factor times `scale` is below `bound`, with
   * their collateral and debt in USD now (before the scale): a binary search of the market's
   * list (ordered by health factor) and two prefix sums, O(log n) once the sums are built (one
   * pass over the list, kept until the list changes).
   */
  below(ord: number, scale: number, bound: number): PositionSums {
    const list = this.byMarket[ord];
    if (!list || !(scale > 0)) return NO_POSITIONS;
    // hf0 x hfFactor x scale < bound  <=>  hf0 < bound / (hfFactor x scale)
    const limit = bound / (this.hfFactor[ord]! * scale);
    const hf0 = this.cols.healthFactor;
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (hf0[list[mid]!]! < limit) lo = mid + 1;
      else hi = mid;
    }
    if (lo === 0) return NO_POSITIONS;
    const sums = this.prefixSums(list);
    return {
      positions: lo,
      collateralUsd: sums.collateral[lo]! * this.collateralFactor[ord]!,
      debtUsd: sums.debt[lo]! * this.debtFactor[ord]!,
    };
  }

  /** Cumulative collateral and debt (as stated) along a market's list; entry n sums its first n. */
  private prefixSums(list: Uint32Array): { collateral: Float64Array; debt: Float64Array } {
    let sums = this.prefixes.get(list);
    if (!sums) {
      const collateral = new Float64Array(list.length + 1);
      const debt = new Float64Array(list.length + 1);
      const c = this.cols;
      for (let j = 0; j < list.length; j++) {
        collateral[j + 1] = collateral[j]! + c.collateralUsd[list[j]!]!;
        debt[j + 1] = debt[j]! + c.borrowUsd[list[j]!]!;
      }
      sums = { collateral, debt };
      this.prefixes.set(list, sums);
    }
    return sums;
  }

  /** Positions with debt in market ord, and their collateral and debt in USD now. */
  withDebt(ord: number): PositionSums {
    return this.below(ord, 1, Number.POSITIVE_INFINITY);
  }

  /** The debt in USD now of each position with debt in market ord (one per borrower: a market holds one position per wallet). */
  debtsOf(ord: number): Float64Array {
    const list = this.byMarket[ord];
    if (!list) return new Float64Array(0);
    const out = new Float64Array(list.length);
    const df = this.debtFactor[ord]!;
    for (let j = 0; j < list.length; j++) out[j] = this.cols.borrowUsd[list[j]!]! * df;
    return out;
  }

  /** Positions held in market ord, debt-free ones included. */
  positionsIn(ord: number): number {
    return this.membersByMarket().get(ord)?.length ?? 0;
  }

  /** The protocol of a position's market. */
  protocolOf(i: number): Protocol {
    return this.catalog.recordAt(this.cols.marketIndex[i]!).protocol;
  }

  /**
   * A position's JSON by `serialize`, cached in a bounded LRU until its market's prices move:
   * answers mostly come from the few positions nearest liquidation.
   */
  json<T extends Uint8Array>(i: number, serialize: (view: PositionAtRiskView) => T): T {
    const version = this.marketVersion[this.cols.marketIndex[i]!]!;
    const hit = this.jsonCache.get(i);
    if (hit && hit.version === version) return hit.json as T;
    const json = serialize(this.view(i));
    this.jsonCache.set(i, { version, json });
    return json;
  }

  /** Entries and bytes of the serialized-positions cache (at most JSON_CACHE_ENTRIES and JSON_CACHE_BYTES). */
  jsonCacheStats(): { entries: number; bytes: number } {
    return { entries: this.jsonCache.size, bytes: this.jsonCache.calculatedSize };
  }

  /** The API view of one position, at current prices. */
  view(i: number): PositionAtRiskView {
    const c = this.cols;
    const ord = c.marketIndex[i]!;
    const m: MarketView = this.catalog.recordAt(ord);
    const hf = this.hfOf(i, ord);
    const collateralUsd = c.collateralUsd[i]! * this.collateralFactor[ord]!;
    const borrowUsd = c.borrowUsd[i]! * this.debtFactor[ord]!;
    // Served figures are rounded once, here (src/domain/precision.ts); the index orders on the
    // unrounded ones.
    return {
      protocol: m.protocol,
      chainId: m.chainId,
      user: { address: addressAt(c.users, i) },
      healthFactor: significant(hf),
      state: {
        collateralUsd: usd(collateralUsd),
        borrowAssetsUsd: usd(borrowUsd),
        supplyAssetsUsd: usd(c.supplyUsd[i]! * this.loanFactor[ord]!),
      },
      market: {
        uniqueKey: m.uniqueKey,
        collateralAsset: { symbol: m.collateral },
        loanAsset: { symbol: m.loan },
        lltv: m.lltv,
      },
      leverage: significantOrNull(leverage(collateralUsd, borrowUsd)),
      distanceToLiq: fraction(distanceToLiq(hf)),
    };
  }
}

function swapIn(arr: number[], a: number, b: number): void {
  const t = arr[a]!;
  arr[a] = arr[b]!;
  arr[b] = t;
}

/**
 * A binary min-heap of market cursors ordered like answers: health factor ascending, then debt
 * descending, then position number. Parallel arrays, reused across pushes.
 */
class CursorHeap {
  private hf: number[] = [];
  private debt: number[] = [];
  private pos: number[] = [];
  private ord: number[] = [];
  size = 0;

  private before(a: number, b: number): boolean {
    const ha = this.hf[a]!;
    const hb = this.hf[b]!;
    if (ha !== hb) return ha < hb;
    const da = this.debt[a]!;
    const db = this.debt[b]!;
    if (da !== db) return da > db;
    return this.pos[a]! < this.pos[b]!;
  }

  private swap(a: number, b: number): void {
    swapIn(this.hf, a, b);
    swapIn(this.debt, a, b);
    swapIn(this.pos, a, b);
    swapIn(this.ord, a, b);
  }

  topHf(): number {
    return this.hf[0]!;
  }

  push(hf: number, debt: number, i: number, ord: number): void {
    let n = this.size++;
    this.hf[n] = hf;
    this.debt[n] = debt;
    this.pos[n] = i;
    this.ord[n] = ord;
    while (n > 0) {
      const parent = (n - 1) >> 1;
      if (!this.before(n, parent)) break;
      this.swap(n, parent);
      n = parent;
    }
  }

  pop(): { i: number; ord: number } {
    const top = { i: this.pos[0]!, ord: this.ord[0]! };
    const last = --this.size;
    if (last > 0) {
      this.hf[0] = this.hf[last]!;
      this.debt[0] = this.debt[last]!;
      this.pos[0] = this.pos[last]!;
      this.ord[0] = this.ord[last]!;
      let n = 0;
      for (;;) {
        const l = 2 * n + 1;
        const r = l + 1;
        let m = n;
        if (l < last && this.before(l, m)) m = l;
        if (r < last && this.before(r, m)) m = r;
        if (m === n) break;
        this.swap(n, m);
        n = m;
      }
    }
    return top;
  }
}
