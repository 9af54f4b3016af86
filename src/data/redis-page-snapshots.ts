import { Redis } from 'ioredis';
import { BackendUnavailableError } from '../domain/unavailable.ts';
import { redisCall, timed } from '../metrics.ts';
import {
  chunkSpan,
  decodeChunk,
  encodeChunk,
  PAGE_SNAPSHOT_CHUNK,
  PAGE_SNAPSHOT_TTL_MS,
  type PageSnapshotHeader,
  type PageSnapshots,
  type SnapshotItem,
} from './page-snapshots.ts';

/**
 * Kept this long past a snapshot's expiry before Redis drops it (ms): the expiry itself is
 * judged by the serving process's clock against the header, so instances whose clocks differ
 * by less than this all see the same snapshot until it expires.
 */
const EXPIRY_SLACK_MS = 60_000;

/** Redis unreachable or failing: the answer is 503 SERVICE_UNAVAILABLE (retry shortly), not a 500. */
async function unavailableOnError<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    throw new BackendUnavailableError(`page snapshots unavailable: ${(err as Error).message}`);
  }
}

export interface RedisPageSnapshotsOptions {
  /** Prefix of every key (default `lrds:`). */
  prefix?: string;
}

/**
 * Snapshots shared by every instance through Redis: `<prefix>snap:<id>:h` holds the header (JSON)
 * and `<prefix>snap:<id>:<n>` the n-th chunk of PAGE_SNAPSHOT_CHUNK items, all written in one
 * MULTI before the first page is answered and expiring with the snapshot (plus a minute).
 */
export class RedisPageSnapshots implements PageSnapshots {
  readonly #redis: Redis;
  readonly #prefix: string;

  constructor(url: string, options: RedisPageSnapshotsOptions = {}) {
    this.#prefix = `${options.prefix ?? 'lrds:'}snap:`;
    this.#redis = new Redis(url, {
      commandTimeout: 2000,
      connectTimeout: 1000,
      disconnectTimeout: 200,
      maxRetriesPerRequest: 1,
      retryStrategy: (times) => Math.min(50 * times, 1000),
    });
    this.#redis.on('error', () => {});
  }

  async put(id: string, header: PageSnapshotHeader, items: readonly SnapshotItem[]): Promise<void> {
    return unavailableOnError(this.#put(id, header, items));
  }

  async header(id: string): Promise<PageSnapshotHeader | null> {
    return unavailableOnError(this.#header(id));
  }

  async items(id: string, offset: number, count: number): Promise<SnapshotItem[] | null> {
    return unavailableOnError(this.#items(id, offset, count));
  }

  async #put(id: string, header: PageSnapshotHeader, items: readonly SnapshotItem[]): Promise<void> {
    const ttl = PAGE_SNAPSHOT_TTL_MS + EXPIRY_SLACK_MS;
    const m = this.#redis.multi();
    for (let c = 0; c * PAGE_SNAPSHOT_CHUNK < items.length; c++) {
      const chunk = items.slice(c * PAGE_SNAPSHOT_CHUNK, (c + 1) * PAGE_SNAPSHOT_CHUNK);
      m.set(`${this.#prefix}${id}:${c}`, encodeChunk(chunk), 'PX', ttl);
    }
    m.set(`${this.#prefix}${id}:h`, JSON.stringify(header), 'PX', ttl);
    const done = await timed(redisCall('snapshot_put'), performance.now(), m.exec());
    const failed = done?.find(([err]) => err !== null);
    if (!done || failed) throw failed?.[0] ?? new Error('snapshot not written');
  }

  async #header(id: string): Promise<PageSnapshotHeader | null> {
    const raw = await timed(
      redisCall('snapshot_get'),
      performance.now(),
      this.#redis.get(`${this.#prefix}${id}:h`),
    );
    return raw === null ? null : (JSON.parse(raw) as PageSnapshotHeader);
  }

  async #items(id: string, offset: number, count: number): Promise<SnapshotItem[] | null> {
    const h = await this.#header(id);
    if (!h) return null;
    const span = chunkSpan(offset, count, h.total);
    if (!span) return [];
    const keys: string[] = [];
    for (let c = span[0]; c <= span[1]; c++) keys.push(`${this.#prefix}${id}:${c}`);
    const bufs = await timed(redisCall('snapshot_get'), performance.now(), this.#redis.mgetBuffer(...keys));
    const items: SnapshotItem[] = [];
    for (const b of bufs) {
      if (b === null) return null;
      items.push(...decodeChunk(b));
    }
    const from = offset - span[0] * PAGE_SNAPSHOT_CHUNK;
    return items.slice(from, from + count);
  }

  async close(): Promise<void> {
    this.#redis.disconnect();
  }
}
