import { LRUCache } from 'lru-cache';
import type { Protocol } from '../domain/enums.ts';
import { distanceToLiq, leverage } from '../domain/metrics.ts';
import {
  addressAt,
  isRiskSorted,
  type PositionColumns,
  riskOrderBefore,
} from '../domain/position-columns.ts';
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

/**
 * Positions ordered by health factor. Storage is column-wise (PositionColumns, with market
 * indexes = catalog ords; about 76 bytes a position including every ordering list). Each ordering list holds position numbers
 * sorted by (healthFactor asc, borrowUsd desc) and covers one scope: everything, one
 * protocol, one chain, one protocol on one chain, or one market. A query picks the
 * narrowest list for its filters, finds the threshold by binary search and reads in order
 * until `limit` matches: O(log n + k), with k the positions read.
 */
export class RiskIndex {
  private readonly cols: PositionColumns;
  private readonly all: Uint32Array;
  private readonly lists = new Map<string, Uint32Array>();
  private readonly catalog: Catalog;
  private readonly jsonCache = new LRUCache<number, Uint8Array>({
    max: JSON_CACHE_ENTRIES,
    maxSize: JSON_CACHE_BYTES,
    sizeCalculation: (json) => json.byteLength + JSON_ENTRY_OVERHEAD_BYTES,
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
    this.all = order;
    // Bucket the global order into scope lists; appending in global order keeps each sorted.
    // Every market belongs to four scopes: its protocol, chain, protocol on chain, itself.
    const scopeIds = new Map<string, number>();
    const scopeId = (k: string) => {
      const known = scopeIds.get(k);
      if (known !== undefined) return known;
      const id = scopeIds.size;
      scopeIds.set(k, id);
      return id;
    };
    const marketScopes = new Int32Array(catalog.size * 4);
    for (let ord = 0; ord < catalog.size; ord++) {
      const m = catalog.recordAt(ord);
      marketScopes[ord * 4] = scopeId(`p:${m.protocol}`);
      marketScopes[ord * 4 + 1] = scopeId(`c:${m.chainId}`);
      marketScopes[ord * 4 + 2] = scopeId(`pc:${m.protocol}:${m.chainId}`);
      marketScopes[ord * 4 + 3] = scopeId(`m:${ord}`);
    }
    const counts = new Int32Array(scopeIds.size);
    for (let j = 0; j < order.length; j++) {
      const base = cols.marketIndex[order[j]!]! * 4;
      for (let s = 0; s < 4; s++) counts[marketScopes[base + s]!]!++;
    }
    const lists = Array.from(counts, (c) => new Uint32Array(c));
    const fill = new Int32Array(scopeIds.size);
    for (let j = 0; j < order.length; j++) {
      const i = order[j]!;
      const base = cols.marketIndex[i]! * 4;
      for (let s = 0; s < 4; s++) {
        const id = marketScopes[base + s]!;
        lists[id]![fill[id]!++] = i;
      }
    }
    for (const [k, id] of scopeIds) if (counts[id]! > 0) this.lists.set(k, lists[id]!);
  }

  /** Positions held, debt-free ones included. */
  get size(): number {
    return this.cols.count;
  }

  /** Positions with debt, the ones any query can return. */
  get indexed(): number {
    return this.all.length;
  }

  /** Bytes held by the columns and the ordering lists. */
  byteSize(): number {
    const c = this.cols;
    let bytes =
      c.marketIndex.byteLength +
      c.collateralUsd.byteLength +
      c.borrowUsd.byteLength +
      c.supplyUsd.byteLength +
      c.healthFactor.byteLength +
      c.users.byteLength +
      this.all.byteLength;
    for (const l of this.lists.values()) bytes += l.byteLength;
    return bytes;
  }

  private scopeLists(q: RiskQuery): Uint32Array[] {
    const pick = (k: string) => this.lists.get(k);
    if (q.marketOrd !== undefined) {
      const l = pick(`m:${q.marketOrd}`);
      return l ? [l] : [];
    }
    if (q.chainIds === undefined) {
      if (q.protocol === undefined) return [this.all];
      const l = pick(`p:${q.protocol}`);
      return l ? [l] : [];
    }
    const out: Uint32Array[] = [];
    for (const c of new Set(q.chainIds)) {
      const l = q.protocol === undefined ? pick(`c:${c}`) : pick(`pc:${q.protocol}:${c}`);
      if (l) out.push(l);
    }
    return out;
  }

  /** Number of positions of a list whose health factor is below the threshold. */
  private belowCount(list: Uint32Array, threshold: number): number {
    const hf = this.cols.healthFactor;
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (hf[list[mid]!]! < threshold) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Position numbers matching the query, in (healthFactor asc, borrowUsd desc) order. */
  query(q: RiskQuery): number[] {
    const out: number[] = [];
    if (q.limit <= 0) return out;
    const { marketIndex: marketOrd, borrowUsd, healthFactor: hf } = this.cols;
    const lists = this.scopeLists(q).map((l) => l.subarray(0, this.belowCount(l, q.healthFactorThreshold)));
    const needsMarketCheck =
      q.marketOrd !== undefined && (q.protocol !== undefined || q.chainIds !== undefined);
    const accept = (i: number): boolean => {
      if (borrowUsd[i]! < q.minBorrowUsd) return false;
      if (needsMarketCheck) {
        const m = this.catalog.recordAt(marketOrd[i]!);
        if (q.protocol !== undefined && m.protocol !== q.protocol) return false;
        if (q.chainIds !== undefined && !q.chainIds.includes(m.chainId)) return false;
      }
      return true;
    };
    if (lists.length === 1) {
      const l = lists[0]!;
      for (let j = 0; j < l.length && out.length < q.limit; j++) if (accept(l[j]!)) out.push(l[j]!);
      return out;
    }
    // Several chains: merge by (hf asc, borrow desc); position numbers are not that order, so
    // merge on list position through a comparator-aware walk.
    const heads = new Int32Array(lists.length);
    while (out.length < q.limit) {
      let best = -1;
      for (let li = 0; li < lists.length; li++) {
        if (heads[li]! >= lists[li]!.length) continue;
        if (best < 0) {
          best = li;
          continue;
        }
        const a = lists[li]![heads[li]!]!;
        const b = lists[best]![heads[best]!]!;
        if (
          hf[a]! < hf[b]! ||
          (hf[a] === hf[b] && (borrowUsd[a]! > borrowUsd[b]! || (borrowUsd[a] === borrowUsd[b] && a < b)))
        )
          best = li;
      }
      if (best < 0) break;
      const i = lists[best]![heads[best]!]!;
      heads[best]!++;
      if (accept(i)) out.push(i);
    }
    return out;
  }

  /** The protocol of a position's market. */
  protocolOf(i: number): Protocol {
    return this.catalog.recordAt(this.cols.marketIndex[i]!).protocol;
  }

  /**
   * A position's JSON by `serialize`, cached (positions do not change within a dataset) in a
   * bounded LRU: answers mostly come from the few positions nearest liquidation.
   */
  json<T extends Uint8Array>(i: number, serialize: (view: PositionAtRiskView) => T): T {
    let s = this.jsonCache.get(i) as T | undefined;
    if (s === undefined) {
      s = serialize(this.view(i));
      this.jsonCache.set(i, s);
    }
    return s;
  }

  /** Entries and bytes of the serialized-positions cache (at most JSON_CACHE_ENTRIES and JSON_CACHE_BYTES). */
  jsonCacheStats(): { entries: number; bytes: number } {
    return { entries: this.jsonCache.size, bytes: this.jsonCache.calculatedSize };
  }

  /** The API view of one position. */
  view(i: number): PositionAtRiskView {
    const c = this.cols;
    const m: MarketView = this.catalog.recordAt(c.marketIndex[i]!);
    const hf = c.healthFactor[i]!;
    const collateralUsd = c.collateralUsd[i]!;
    const borrowUsd = c.borrowUsd[i]!;
    return {
      protocol: m.protocol,
      chainId: m.chainId,
      user: { address: addressAt(c.users, i) },
      healthFactor: hf,
      state: { collateralUsd, borrowAssetsUsd: borrowUsd, supplyAssetsUsd: c.supplyUsd[i]! },
      market: {
        uniqueKey: m.uniqueKey,
        collateralAsset: { symbol: m.collateral },
        loanAsset: { symbol: m.loan },
        lltv: m.lltv,
      },
      leverage: leverage(collateralUsd, borrowUsd),
      distanceToLiq: distanceToLiq(hf),
    };
  }
}
