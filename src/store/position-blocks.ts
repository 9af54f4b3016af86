import { endianness } from 'node:os';
import {
  emptyColumns,
  type PositionColumns,
  PositionColumnsBuilder,
  sliceColumns,
  sortByRisk,
} from '../domain/position-columns.ts';
import type { MarketRecord, PositionRecord } from '../domain/types.ts';

/**
 * Positions are stored as blocks of columns, each column a byte string (SQLite BLOB,
 * PostgreSQL bytea), already in risk order (health factor ascending, debt descending). A load
 * is then a copy of a few large buffers, not a million rows to parse, and the risk index needs
 * no sort. Byte order is little-endian (checked).
 */
export const BLOCK_SIZE = 65_536;

export interface EncodedBlock {
  block: number;
  count: number;
  marketIndex: Uint8Array;
  users: Uint8Array;
  collateralUsd: Uint8Array;
  borrowUsd: Uint8Array;
  supplyUsd: Uint8Array;
  healthFactor: Uint8Array;
}

function assertLittleEndian(): void {
  if (endianness() !== 'LE') throw new Error('position blocks are little-endian; this machine is big-endian');
}

const bytes = (a: ArrayBufferView) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/** Gathers records into columns (market index = position of the market in `markets`) in risk order. */
export function columnsOf(
  markets: readonly MarketRecord[],
  positions: Iterable<PositionRecord>,
  expected: number,
): PositionColumns {
  const indexOf = new Map(markets.map((m, i) => [m.uniqueKey, i]));
  const builder = new PositionColumnsBuilder(expected);
  for (const p of positions) {
    const index = indexOf.get(p.marketKey);
    if (index === undefined) throw new Error(`position refers to unknown market ${p.marketKey}`);
    builder.push(index, p);
  }
  return sortByRisk(builder.build());
}

export function* encodeBlocks(columns: PositionColumns, size = BLOCK_SIZE): Generator<EncodedBlock> {
  assertLittleEndian();
  for (let start = 0, block = 0; start < columns.count; start += size, block++) {
    const c = sliceColumns(columns, start, Math.min(columns.count, start + size));
    yield {
      block,
      count: c.count,
      marketIndex: bytes(c.marketIndex),
      users: bytes(c.users),
      collateralUsd: bytes(c.collateralUsd),
      borrowUsd: bytes(c.borrowUsd),
      supplyUsd: bytes(c.supplyUsd),
      healthFactor: bytes(c.healthFactor),
    };
  }
}

/** Decodes one stored block (copies into aligned typed arrays). */
export function decodeBlock(b: Omit<EncodedBlock, 'block'>): PositionColumns {
  assertLittleEndian();
  const c = emptyColumns(b.count);
  const fill = (target: ArrayBufferView, source: Uint8Array, name: string) => {
    if (source.byteLength !== target.byteLength) {
      throw new Error(
        `position block column ${name}: ${source.byteLength} bytes, expected ${target.byteLength}`,
      );
    }
    bytes(target).set(source);
  };
  fill(c.marketIndex, b.marketIndex, 'market_index');
  fill(c.users, b.users, 'users');
  fill(c.collateralUsd, b.collateralUsd, 'collateral_usd');
  fill(c.borrowUsd, b.borrowUsd, 'borrow_usd');
  fill(c.supplyUsd, b.supplyUsd, 'supply_usd');
  fill(c.healthFactor, b.healthFactor, 'health_factor');
  return c;
}
