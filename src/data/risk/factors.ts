import type { PriceChange } from '../../domain/types.ts';
import type { Catalog } from '../catalog.ts';
import { grown } from '../typed-arrays.ts';

/**
 * Per market of a risk index (by ord): what its positions' stated amounts are multiplied by now.
 * The price factors of its collateral and loan tokens (their prices over the ones its positions
 * are stated at), its borrow index over the one its positions' debt is stated at, debt = loan x
 * index, and hf = collateral / debt. A price move or a new borrow index changes one number per
 * market: no position is touched, no list re-sorted.
 */
export class MarketFactors {
  collateralFactor: Float64Array;
  loanFactor: Float64Array;
  debtIndex: Float64Array;
  debtFactor: Float64Array;
  hfFactor: Float64Array;
  /** Per market: bumped whenever its factors change (cached JSON of its positions is stale). */
  marketVersion: Uint32Array;
  /** Per market: the version at which its factors or positions last changed. */
  changedAt: Int32Array;
  /** Per market: the version at which its positions last changed (added, restated, emptied). */
  positionsChangedAt: Int32Array;
  /** Bumped by every price move that changed a factor, and by every change of positions. */
  version = 0;
  private readonly catalog: Catalog;

  constructor(catalog: Catalog) {
    this.catalog = catalog;
    const size = catalog.size;
    this.collateralFactor = new Float64Array(size).fill(1);
    this.loanFactor = new Float64Array(size).fill(1);
    this.debtIndex = new Float64Array(size).fill(1);
    this.debtFactor = new Float64Array(size).fill(1);
    this.hfFactor = new Float64Array(size).fill(1);
    this.marketVersion = new Uint32Array(size);
    this.changedAt = new Int32Array(size);
    this.positionsChangedAt = new Int32Array(size);
  }

  /** Room for the markets up to the catalog's size (new ones at factor 1, never changed). */
  grow(): void {
    const n = this.catalog.size;
    this.collateralFactor = grown(this.collateralFactor, n, 1);
    this.loanFactor = grown(this.loanFactor, n, 1);
    this.debtIndex = grown(this.debtIndex, n, 1);
    this.debtFactor = grown(this.debtFactor, n, 1);
    this.hfFactor = grown(this.hfFactor, n, 1);
    this.marketVersion = grown(this.marketVersion, n);
    this.changedAt = grown(this.changedAt, n);
    this.positionsChangedAt = grown(this.positionsChangedAt, n);
  }

  /** Market ord's positions changed, at `version` (the one the change creates). */
  touch(ord: number, version: number): void {
    this.changedAt[ord] = version;
    this.positionsChangedAt[ord] = version;
    this.marketVersion[ord]!++;
  }

  /**
   * Applies new token prices (relative to the snapshot prices of the catalog's markets): only
   * the factors of the markets holding each token change, O(markets touched). Unknown tokens
   * and markets whose snapshot price is not positive are left alone. Returns the markets touched.
   */
  applyPrices(changes: Iterable<PriceChange>): number {
    // Markets changed by this move are stamped with the version it creates.
    const version = this.version + 1;
    let touched = 0;
    for (const ch of changes) {
      const t = this.catalog.holding(ch.chainId, ch.token);
      if (!t || !(ch.ratio > 0) || !Number.isFinite(ch.ratio)) continue;
      for (const ord of t.c) {
        const p0 = this.catalog.basePrices(ord).collateral;
        if (p0 !== null && p0 > 0) touched += this.set(ord, ch.ratio, this.loanFactor[ord]!, version);
      }
      for (const ord of t.l) {
        const p0 = this.catalog.basePrices(ord).loan;
        if (p0 !== null && p0 > 0) touched += this.set(ord, this.collateralFactor[ord]!, ch.ratio, version);
      }
    }
    if (touched > 0) this.version = version;
    return touched;
  }

  /**
   * Markets restated by their source: each market's token prices over the dataset's (what its
   * positions' amounts are stated at), replacing its price factors, and its borrow index over
   * the dataset's when given (left out: the index stays). Returns the markets touched.
   */
  applyMarketFactors(
    changes: Iterable<{ ord: number; collateral: number; loan: number; debtIndex?: number }>,
  ): number {
    const version = this.version + 1;
    let touched = 0;
    for (const { ord, collateral, loan, debtIndex } of changes) {
      if (!(ord >= 0 && ord < this.catalog.size) || !(collateral > 0 && loan > 0)) continue;
      if (!Number.isFinite(collateral) || !Number.isFinite(loan)) continue;
      const index =
        debtIndex !== undefined && debtIndex > 0 && Number.isFinite(debtIndex) ? debtIndex : undefined;
      touched += this.set(ord, collateral, loan, version, index);
    }
    if (touched > 0) this.version = version;
    return touched;
  }

  /**
   * Interest accrued on debt: each market's borrow index now, relative to the one its positions'
   * debt is stated at (1 as loaded). Debt and health factors of the market's positions scale by
   * it (one factor per market, like prices: no re-sort). Non-positive or non-finite indexes and
   * unknown ords are ignored. Returns the markets touched.
   */
  applyDebtIndexes(changes: Iterable<{ ord: number; index: number }>): number {
    const version = this.version + 1;
    let touched = 0;
    for (const { ord, index } of changes) {
      if (!(ord >= 0 && ord < this.catalog.size) || !(index > 0) || !Number.isFinite(index)) continue;
      touched += this.set(ord, this.collateralFactor[ord]!, this.loanFactor[ord]!, version, index);
    }
    if (touched > 0) this.version = version;
    return touched;
  }

  private set(
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

  /** Bytes held by the factors and versions. */
  byteSize(): number {
    return (
      this.collateralFactor.byteLength * 5 +
      this.marketVersion.byteLength +
      this.changedAt.byteLength +
      this.positionsChangedAt.byteLength
    );
  }
}
