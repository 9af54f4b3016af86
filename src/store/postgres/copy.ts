/**
 * Bulk writes through `COPY ... FROM STDIN (FORMAT binary)`: rows encoded straight into
 * buffers (doubles as their 8 IEEE bytes: exact, Infinity included, and about twice as fast as
 * formatting them as text). Format: https://www.postgresql.org/docs/current/sql-copy.html
 * ("Binary Format").
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { TransactionSql } from 'postgres';

/** Signature, flags (no OIDs) and header extension length (0). */
export const COPY_HEADER: Buffer = Buffer.concat([
  Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'),
  Buffer.alloc(8),
]);
/** A field count of -1 ends the data. */
export const COPY_TRAILER: Buffer = Buffer.from([0xff, 0xff]);

/** Encodes rows field by field into a growing buffer; `take()` hands over what is written so far. */
export class BinaryRows {
  private buf: Buffer;
  private pos = 0;

  /** `capacity`: initial buffer size in bytes; it doubles when a row does not fit. */
  constructor(capacity = 256 * 1024) {
    this.buf = Buffer.allocUnsafe(capacity);
  }

  /** Bytes written since the last take(). */
  get length(): number {
    return this.pos;
  }

  private ensure(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + bytes));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  /** Starts a row of `fields` fields. */
  row(fields: number): void {
    this.ensure(2);
    this.buf.writeInt16BE(fields, this.pos);
    this.pos += 2;
  }

  int4(x: number): void {
    this.ensure(8);
    this.buf.writeInt32BE(4, this.pos);
    this.buf.writeInt32BE(x, this.pos + 4);
    this.pos += 8;
  }

  /** A safe integer as int8 (high and low 32 bits, no BigInt allocated). */
  int8(x: number): void {
    this.ensure(12);
    this.buf.writeInt32BE(8, this.pos);
    this.buf.writeInt32BE(Math.floor(x / 2 ** 32), this.pos + 4);
    this.buf.writeUInt32BE(x >>> 0, this.pos + 8);
    this.pos += 12;
  }

  float8(x: number): void {
    this.ensure(12);
    this.buf.writeInt32BE(8, this.pos);
    this.buf.writeDoubleBE(x, this.pos + 4);
    this.pos += 12;
  }

  /** UTF-8 text. PostgreSQL text cannot hold NUL: such a string throws here, before it is sent. */
  text(s: string): void {
    if (s.includes('\0')) throw new Error('text with a NUL character cannot be stored');
    const bytes = Buffer.byteLength(s);
    this.ensure(4 + bytes);
    this.buf.writeInt32BE(bytes, this.pos);
    this.buf.write(s, this.pos + 4, bytes, 'utf8');
    this.pos += 4 + bytes;
  }

  /** The bytes written so far; the writer starts over on a fresh buffer. */
  take(): Buffer {
    const out = this.buf.subarray(0, this.pos);
    this.buf = Buffer.allocUnsafe(this.buf.length);
    this.pos = 0;
    return out;
  }
}

/**
 * Binary COPY data for `items`: header, rows in chunks of about `chunkBytes`, trailer.
 * `encode` writes one item's row; if it throws, the COPY is aborted and nothing is stored.
 */
export function* copyChunks<T>(
  items: Iterable<T>,
  encode: (rows: BinaryRows, item: T) => void,
  chunkBytes = 256 * 1024,
): Generator<Buffer> {
  yield COPY_HEADER;
  const rows = new BinaryRows(chunkBytes + 64 * 1024);
  for (const item of items) {
    encode(rows, item);
    if (rows.length >= chunkBytes) yield rows.take();
  }
  if (rows.length > 0) yield rows.take();
  yield COPY_TRAILER;
}

/**
 * Streams `chunks` into `statement` (a `COPY ... FROM STDIN (FORMAT binary)`) with
 * backpressure. Rejects if the source throws (the COPY is aborted) or the server refuses the
 * data; either way the surrounding transaction rolls back.
 *
 * postgres.js 3.4.9 never settles the writable when the server refuses the data after its
 * last chunk (porsager/postgres#1173: the error reaches only the query's internal reject), which
 * would hang the transaction forever; so the query's reject is watched as well.
 */
export async function copyIn(tx: TransactionSql, statement: string, chunks: Iterable<Buffer>): Promise<void> {
  const query = tx.unsafe(statement);
  const failed = new Promise<never>((_, reject) => {
    const internal = query as unknown as { reject: (err: unknown) => void };
    const original = internal.reject;
    internal.reject = (err) => {
      reject(err);
      original(err);
    };
  });
  failed.catch(() => {});
  const writable = await query.writable();
  await Promise.race([pipeline(Readable.from(chunks), writable), failed]);
}
