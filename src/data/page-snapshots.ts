import { LRUCache } from 'lru-cache';
import type { Clock } from '../domain/clock.ts';

/**
 * How long a paged list's snapshot serves its cursor (ms): 10 minutes from the first page.
 * Past this the cursor is refused, naming the time it expired.
 */
export const PAGE_SNAPSHOT_TTL_MS = 10 * 60_000;

/** Items a snapshot keeps per chunk: a page reads the one or two chunks it spans, not the whole set. */
export const PAGE_SNAPSHOT_CHUNK = 500;

/**
 * What a snapshot's first page fixed: the query it answered (`scope`, checked on every later
 * page), the instant its set was taken (`asOfMs`, the first page's meta.asOf), when it stops
 * serving (`expiresAtMs`) and how many items it holds.
 */
export interface PageSnapshotHeader {
  scope: string;
  asOfMs: number;
  expiresAtMs: number;
  total: number;
}

/** One item of a snapshot: its served JSON and the protocol it belongs to (meta.source). */
export interface SnapshotItem {
  protocol: string;
  json: Uint8Array;
}

/**
 * Where paged lists keep the set their first page fixed, for every process that may serve a
 * later page: in memory for a single process, in Redis when instances share the traffic.
 * `put` resolves once any process can read the snapshot; `header` and `items` resolve null
 * when it is unknown or gone (expired snapshots are dropped, in Redis by its key expiry).
 */
export interface PageSnapshots {
  put(id: string, header: PageSnapshotHeader, items: readonly SnapshotItem[]): Promise<void>;
  header(id: string): Promise<PageSnapshotHeader | null>;
  /** Items `offset` to `offset + count` (fewer at the end of the set). */
  items(id: string, offset: number, count: number): Promise<SnapshotItem[] | null>;
}

/** A chunk as stored: one line per item, `protocol TAB json` (JSON text holds no raw newline). */
export function encodeChunk(items: readonly SnapshotItem[]): Buffer {
  const parts: Buffer[] = [];
  for (const it of items) {
    parts.push(Buffer.from(`${it.protocol}\t`), Buffer.from(it.json), Buffer.from('\n'));
  }
  return Buffer.concat(parts);
}

export function decodeChunk(buf: Uint8Array): SnapshotItem[] {
  const out: SnapshotItem[] = [];
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  let start = 0;
  while (start < b.length) {
    let end = b.indexOf(10, start);
    if (end < 0) end = b.length;
    const tab = b.indexOf(9, start);
    out.push({ protocol: b.toString('utf8', start, tab), json: b.subarray(tab + 1, end) });
    start = end + 1;
  }
  return out;
}

/** The chunks items `offset` to `offset + count` fall in, first and last (inclusive). */
export function chunkSpan(offset: number, count: number, total: number): [number, number] | null {
  const end = Math.min(total, offset + count);
  if (offset >= end || offset < 0) return null;
  return [Math.floor(offset / PAGE_SNAPSHOT_CHUNK), Math.floor((end - 1) / PAGE_SNAPSHOT_CHUNK)];
}

/** Bytes of snapshots one process keeps in memory at most (the least recently used go first). */
export const MEMORY_SNAPSHOT_BYTES = 64 * 1024 * 1024;

/**
 * Snapshots in this process's memory, bounded by bytes (MEMORY_SNAPSHOT_BYTES), each dropped
 * once `clock` passes its expiry: the store of a single process.
 */
export class MemoryPageSnapshots implements PageSnapshots {
  readonly #clock: Clock;
  readonly #lru: LRUCache<string, { header: PageSnapshotHeader; items: readonly SnapshotItem[] }>;

  constructor(clock: Clock, maxBytes = MEMORY_SNAPSHOT_BYTES) {
    this.#clock = clock;
    this.#lru = new LRUCache({
      maxSize: maxBytes,
      sizeCalculation: (s) => {
        let n = 64;
        for (const it of s.items) n += it.json.byteLength + 32;
        return Math.max(1, n);
      },
    });
  }

  async put(id: string, header: PageSnapshotHeader, items: readonly SnapshotItem[]): Promise<void> {
    this.#lru.set(id, { header, items });
  }

  #live(id: string) {
    const s = this.#lru.get(id);
    if (!s) return null;
    if (this.#clock.now() >= s.header.expiresAtMs) {
      this.#lru.delete(id);
      return null;
    }
    return s;
  }

  async header(id: string): Promise<PageSnapshotHeader | null> {
    return this.#live(id)?.header ?? null;
  }

  async items(id: string, offset: number, count: number): Promise<SnapshotItem[] | null> {
    const s = this.#live(id);
    if (!s) return null;
    return s.items.slice(offset, offset + count);
  }
}
