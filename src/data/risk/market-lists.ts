import { isRiskSorted, type PositionColumns, riskOrderBefore } from '../../domain/position-columns.ts';

/** Cumulative collateral and debt (as stated) along a market's list; entry n sums its first n. */
interface PrefixSums {
  collateral: Float64Array;
  debt: Float64Array;
}

/**
 * Each market's positions with debt, in risk order at any prices: by (hf0 asc, debt desc,
 * number), where hf0 is the health factor as stated (a market's factor scales all of them
 * alike). A list is replaced, never edited, when a position enters or leaves it (a binary
 * search and a copy of that one list), and its prefix sums of collateral and debt go with it.
 */
export class MarketLists {
  /** Positions with debt in each market (by ord), by (hf0 asc, debt desc, number). */
  readonly byMarket: (Uint32Array | undefined)[];
  /**
   * Prefix sums of collateral and debt along each market's list, by the list itself: lists are
   * replaced (never edited) when a position enters or leaves, so a replaced list's sums go with it.
   */
  private readonly prefixes = new WeakMap<Uint32Array, PrefixSums>();
  /** Positions listed when built (the ones that can be at risk). */
  readonly listed: number;

  /** The lists of markets 0 to size - 1, built from the columns with their prefix sums. */
  constructor(size: number, cols: PositionColumns) {
    const { count, healthFactor: hf, borrowUsd } = cols;
    // Debt-free positions are never at risk (docs/decisions.md "Positions at risk"): they are left out of every list.
    let atRisk = 0;
    for (let i = 0; i < count; i++) if (borrowUsd[i]! > 0 && Number.isFinite(hf[i]!)) atRisk++;
    const order = new Uint32Array(atRisk);
    for (let i = 0, j = 0; i < count; i++) if (borrowUsd[i]! > 0 && Number.isFinite(hf[i]!)) order[j++] = i;
    // Stores keep positions in risk order already; anything else is sorted here.
    if (!isRiskSorted(cols)) order.sort((a, b) => riskOrderBefore(cols, a, b));
    this.listed = atRisk;
    // Bucket the global order by market; appending in global order keeps each list sorted.
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
  }

  /** Room for markets up to `size` (new to the catalog, no position listed yet). */
  grow(size: number): void {
    while (this.byMarket.length < size) this.byMarket.push(undefined);
  }

  /** Takes position i out of its market's list; true when the list became empty. */
  unlist(i: number, ord: number): boolean {
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
  list(cols: PositionColumns, i: number, ord: number): boolean {
    const l = this.byMarket[ord] ?? new Uint32Array(0);
    let lo = 0;
    let hi = l.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (riskOrderBefore(cols, l[mid]!, i) < 0) lo = mid + 1;
      else hi = mid;
    }
    const next = new Uint32Array(l.length + 1);
    next.set(l.subarray(0, lo));
    next[lo] = i;
    next.set(l.subarray(lo), lo + 1);
    this.byMarket[ord] = next;
    return l.length === 0;
  }

  /**
   * Market ord's list again after many of its positions changed at once: the positions it held
   * but `changed`, and those of `changed` now with debt (`listed`), sorted once (cheaper than a
   * copy of the list per change). True when the list became empty or stopped being so.
   */
  rebuild(
    cols: PositionColumns,
    ord: number,
    changed: ReadonlySet<number>,
    listed: (i: number) => boolean,
  ): boolean {
    const before = this.byMarket[ord];
    const next: number[] = [];
    if (before) for (const i of before) if (!changed.has(i)) next.push(i);
    for (const i of changed) if (listed(i)) next.push(i);
    next.sort((a, b) => riskOrderBefore(cols, a, b));
    this.byMarket[ord] = next.length > 0 ? Uint32Array.from(next) : undefined;
    return (before === undefined) !== (next.length === 0);
  }

  /** A list's prefix sums: built on first use (one pass over it), kept with the list. */
  prefixSums(c: PositionColumns, list: Uint32Array): PrefixSums {
    let sums = this.prefixes.get(list);
    if (!sums) {
      const collateral = new Float64Array(list.length + 1);
      const debt = new Float64Array(list.length + 1);
      for (let j = 0; j < list.length; j++) {
        collateral[j + 1] = collateral[j]! + c.collateralUsd[list[j]!]!;
        debt[j + 1] = debt[j]! + c.borrowUsd[list[j]!]!;
      }
      sums = { collateral, debt };
      this.prefixes.set(list, sums);
    }
    return sums;
  }

  /** Bytes held by the lists and their prefix sums. */
  byteSize(): number {
    let bytes = 0;
    for (const l of this.byMarket)
      if (l) bytes += l.byteLength + (this.prefixes.has(l) ? 16 * (l.length + 1) : 0);
    return bytes;
  }
}
