import type { PositionRecord } from './types.ts';

/**
 * Positions column-wise: one typed array per field, so a million positions are six flat
 * buffers (56 bytes a position) rather than a million objects. `users` holds each owner's
 * 20-byte address. `marketIndex` refers to a list of markets held next to the columns.
 * USD amounts; healthFactor dimensionless, Infinity without debt.
 */
export interface PositionColumns {
  count: number;
  marketIndex: Uint32Array;
  users: Uint8Array;
  collateralUsd: Float64Array;
  borrowUsd: Float64Array;
  supplyUsd: Float64Array;
  healthFactor: Float64Array;
}

export const ADDRESS_BYTES = 20;

export function emptyColumns(count: number): PositionColumns {
  return {
    count,
    marketIndex: new Uint32Array(count),
    users: new Uint8Array(count * ADDRESS_BYTES),
    collateralUsd: new Float64Array(count),
    borrowUsd: new Float64Array(count),
    supplyUsd: new Float64Array(count),
    healthFactor: new Float64Array(count),
  };
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** Writes a `0x`-prefixed 40-hex-digit address into 20 bytes at `offset`. */
export function writeAddress(target: Uint8Array, offset: number, address: string): void {
  if (!ADDRESS.test(address))
    throw new RangeError(`not a 0x address: ${JSON.stringify(address.slice(0, 50))}`);
  Buffer.from(target.buffer, target.byteOffset, target.byteLength).write(address.slice(2, 42), offset, 'hex');
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** The `0x`-prefixed lowercase address of position `i`. */
export function addressAt(users: Uint8Array, i: number): string {
  let s = '0x';
  for (let b = i * ADDRESS_BYTES, end = b + ADDRESS_BYTES; b < end; b++) s += HEX[users[b]!];
  return s;
}

/** Position `i` as a plain object (tests, exports): the market as its index. */
export function positionAt(c: PositionColumns, i: number) {
  return {
    marketIndex: c.marketIndex[i]!,
    user: addressAt(c.users, i),
    collateralUsd: c.collateralUsd[i]!,
    borrowUsd: c.borrowUsd[i]!,
    supplyUsd: c.supplyUsd[i]!,
    healthFactor: c.healthFactor[i]!,
  };
}

/** Risk order: health factor ascending, then debt descending, then position number. */
export function riskOrderBefore(c: PositionColumns, a: number, b: number): number {
  return c.healthFactor[a]! - c.healthFactor[b]! || c.borrowUsd[b]! - c.borrowUsd[a]! || a - b;
}

/** Whether every position is at or after the previous one in risk order (an O(n) check). */
export function isRiskSorted(c: PositionColumns): boolean {
  const hf = c.healthFactor;
  const borrow = c.borrowUsd;
  for (let i = 1; i < c.count; i++) {
    const a = hf[i - 1]!;
    const b = hf[i]!;
    if (a < b) continue;
    if (a > b || borrow[i - 1]! < borrow[i]!) return false;
  }
  return true;
}

/** The columns rearranged into risk order (a new set; the input is left as it was). */
export function sortByRisk(c: PositionColumns): PositionColumns {
  const order = new Uint32Array(c.count);
  for (let i = 0; i < c.count; i++) order[i] = i;
  order.sort((a, b) => riskOrderBefore(c, a, b));
  const out = emptyColumns(c.count);
  for (let j = 0; j < c.count; j++) {
    const i = order[j]!;
    out.marketIndex[j] = c.marketIndex[i]!;
    out.collateralUsd[j] = c.collateralUsd[i]!;
    out.borrowUsd[j] = c.borrowUsd[i]!;
    out.supplyUsd[j] = c.supplyUsd[i]!;
    out.healthFactor[j] = c.healthFactor[i]!;
    out.users.set(c.users.subarray(i * ADDRESS_BYTES, (i + 1) * ADDRESS_BYTES), j * ADDRESS_BYTES);
  }
  return out;
}

/** A view of positions [start, end) sharing the same buffers. */
export function sliceColumns(c: PositionColumns, start: number, end: number): PositionColumns {
  return {
    count: end - start,
    marketIndex: c.marketIndex.subarray(start, end),
    users: c.users.subarray(start * ADDRESS_BYTES, end * ADDRESS_BYTES),
    collateralUsd: c.collateralUsd.subarray(start, end),
    borrowUsd: c.borrowUsd.subarray(start, end),
    supplyUsd: c.supplyUsd.subarray(start, end),
    healthFactor: c.healthFactor.subarray(start, end),
  };
}

/**
 * Accumulates positions into columns, growing by doubling. Accepts one record at a time
 * (a generator) or whole blocks (a store load, with market indexes remapped on the way).
 */
export class PositionColumnsBuilder {
  private cols: PositionColumns;
  private n = 0;

  constructor(expected = 1024) {
    this.cols = emptyColumns(Math.max(16, expected));
  }

  private reserve(extra: number): void {
    const need = this.n + extra;
    if (need <= this.cols.count) return;
    let cap = this.cols.count;
    while (cap < need) cap *= 2;
    const next = emptyColumns(cap);
    next.marketIndex.set(this.cols.marketIndex);
    next.users.set(this.cols.users);
    next.collateralUsd.set(this.cols.collateralUsd);
    next.borrowUsd.set(this.cols.borrowUsd);
    next.supplyUsd.set(this.cols.supplyUsd);
    next.healthFactor.set(this.cols.healthFactor);
    this.cols = next;
  }

  push(marketIndex: number, p: Omit<PositionRecord, 'marketKey'>): void {
    this.reserve(1);
    const i = this.n++;
    const c = this.cols;
    c.marketIndex[i] = marketIndex;
    c.collateralUsd[i] = p.collateralUsd;
    c.borrowUsd[i] = p.borrowUsd;
    c.supplyUsd[i] = p.supplyUsd;
    c.healthFactor[i] = p.healthFactor;
    writeAddress(c.users, i * ADDRESS_BYTES, p.user);
  }

  /** Appends a block; `remap[marketIndex]` gives the market index to store. */
  append(block: PositionColumns, remap?: ArrayLike<number>): void {
    this.reserve(block.count);
    const c = this.cols;
    const at = this.n;
    if (remap) for (let i = 0; i < block.count; i++) c.marketIndex[at + i] = remap[block.marketIndex[i]!]!;
    else c.marketIndex.set(block.marketIndex, at);
    c.users.set(block.users, at * ADDRESS_BYTES);
    c.collateralUsd.set(block.collateralUsd, at);
    c.borrowUsd.set(block.borrowUsd, at);
    c.supplyUsd.set(block.supplyUsd, at);
    c.healthFactor.set(block.healthFactor, at);
    this.n += block.count;
  }

  get size(): number {
    return this.n;
  }

  /** The columns, trimmed to what was added (copies, so the builder's spare room is freed). */
  build(): PositionColumns {
    const s = sliceColumns(this.cols, 0, this.n);
    return {
      count: this.n,
      marketIndex: s.marketIndex.slice(),
      users: s.users.slice(),
      collateralUsd: s.collateralUsd.slice(),
      borrowUsd: s.borrowUsd.slice(),
      supplyUsd: s.supplyUsd.slice(),
      healthFactor: s.healthFactor.slice(),
    };
  }
}
