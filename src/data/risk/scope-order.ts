import type { Catalog } from '../catalog.ts';
import { grown } from '../typed-arrays.ts';
import { CursorHeap } from './cursor-heap.ts';
import type { MarketFactors } from './factors.ts';
import type { MarketLists } from './market-lists.ts';
import type { Positions } from './positions.ts';
import type { RiskQuery } from './types.ts';

/** Scope arrays of market ords, kept sorted by each market's current lowest health factor. */
interface ScopeMarkets {
  ords: Uint32Array;
  /** The price version the order was computed at (re-sorted lazily on the next query). */
  sortedAt: number;
}

/**
 * The isolated markets' positions at risk, across markets: each scope (everything, one protocol,
 * one chain, one protocol on one chain) keeps its markets with debt ordered by their current
 * lowest health factor, re-sorted on the first query after a price move (one sort of the
 * markets that moved, merged with the others); a query walks that order, opening a market only
 * once its lowest health factor could be next, and merges the open ones with a small heap:
 * O((k + m) log m) for k answers from m markets. A single-market query is a binary search of
 * its list.
 */
export class ScopeOrder {
  private readonly scopes = new Map<string, ScopeMarkets>();
  /** Per market: its lowest health factor when its scopes were last ordered. */
  private heads: Float64Array;
  private readonly catalog: Catalog;
  private readonly positions: Positions;
  private readonly lists: MarketLists;
  private readonly factors: MarketFactors;
  /** Per market (by ord): 1 when its positions belong to accounts (queried apart). */
  private pooled: Uint8Array;

  constructor(
    catalog: Catalog,
    positions: Positions,
    lists: MarketLists,
    factors: MarketFactors,
    pooled: Uint8Array,
  ) {
    this.catalog = catalog;
    this.positions = positions;
    this.lists = lists;
    this.factors = factors;
    this.pooled = pooled;
    this.heads = new Float64Array(catalog.size);
    this.build();
  }

  /** Room for the markets up to the catalog's size (`pooled`: the accounts' flags, grown too), scopes built again. */
  grow(pooled: Uint8Array): void {
    this.pooled = pooled;
    this.heads = grown(this.heads, this.catalog.size);
    this.build();
  }

  /** Each scope's isolated markets with debt (ordered on their first query; accounts are queried apart). */
  build(): void {
    const members = new Map<string, number[]>();
    const join = (k: string, ord: number) => {
      const l = members.get(k);
      if (l) l.push(ord);
      else members.set(k, [ord]);
    };
    for (let ord = 0; ord < this.catalog.size; ord++) {
      const m = this.catalog.recordAt(ord);
      if (!this.lists.byMarket[ord] || this.pooled[ord]) continue;
      join('all', ord);
      join(`p:${m.protocol}`, ord);
      join(`c:${m.chainId}`, ord);
      join(`pc:${m.protocol}:${m.chainId}`, ord);
    }
    this.scopes.clear();
    for (const [k, ords] of members) this.scopes.set(k, { ords: Uint32Array.from(ords), sortedAt: -1 });
  }

  /** Current health factor of position `i` (market `ord`). */
  private hfOf(i: number, ord: number): number {
    return this.positions.cols.healthFactor[i]! * this.factors.hfFactor[ord]!;
  }

  /** Current lowest health factor of a market with debt. */
  private headOf(ord: number): number {
    return this.hfOf(this.lists.byMarket[ord]![0]!, ord);
  }

  /**
   * A scope's markets, ordered by current lowest health factor. After a price move only the
   * markets it touched are sorted again, then merged with the others (still in order, their
   * health factors unchanged).
   */
  private scopeOrds(key: string): Uint32Array | undefined {
    const s = this.scopes.get(key);
    if (!s) return undefined;
    if (s.sortedAt !== this.factors.version) {
      const heads = this.heads;
      const before = (a: number, b: number) => heads[a]! - heads[b]! || a - b;
      const moved: number[] = [];
      const kept: number[] = [];
      for (const ord of s.ords) {
        if (this.factors.changedAt[ord]! > s.sortedAt || s.sortedAt < 0) {
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
      s.sortedAt = this.factors.version;
    }
    return s.ords;
  }

  private scopeKeys(q: RiskQuery): string[] {
    if (q.chainIds === undefined) return [q.protocol === undefined ? 'all' : `p:${q.protocol}`];
    return [...new Set(q.chainIds)].map((c) =>
      q.protocol === undefined ? `c:${c}` : `pc:${q.protocol}:${c}`,
    );
  }

  /**

  /** The isolated markets' positions matching the query, merged from their ordered lists. */
  query(q: RiskQuery): number[] {
    const out: number[] = [];
    const borrow0 = this.positions.cols.borrowUsd;
    const debtFactor = this.factors.debtFactor;
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
        const i = this.lists.byMarket[ord]![0]!;
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
      const list = this.lists.byMarket[ord]!;
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
  queryMarket(q: RiskQuery, ord: number): number[] {
    const out: number[] = [];
    const list = this.lists.byMarket[ord];
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
    const borrow0 = this.positions.cols.borrowUsd;
    const df = this.factors.debtFactor[ord]!;
    for (let j = 0; j < lo && out.length < q.limit; j++) {
      if (borrow0[list[j]!]! * df >= q.minBorrowUsd) out.push(list[j]!);
    }
    return out;
  }

  /** Bytes held by the scopes' orders and the markets' heads. */
  byteSize(): number {
    let bytes = this.heads.byteLength;
    for (const s of this.scopes.values()) bytes += s.ords.byteLength;
    return bytes;
  }
}
