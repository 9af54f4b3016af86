import { Redis } from 'ioredis';
import { redisCall, timed } from '../metrics.ts';
import type { WarnLogger } from './redis-link.ts';

/** What an instance does with announcements (see KeyEvents). */
export interface KeyChangeHandlers {
  /** These keys (by hash) were created, revoked or re-tiered: drop exactly them. */
  changed(hashes: readonly string[]): void;
  /**
   * Announcements may have been missed (the subscription was lost and is back), or one could
   * not be read (another version): catch up from the store (`KeyService.refresh()`), which
   * drops only what changed, and nothing while the store is unreachable.
   */
  missed(): void;
}

/**
 * Tells every instance which keys changed (created, revoked, re-tiered), so each drops those
 * keys from its cache at once instead of at its next poll of the store. Wiring: `publish()`
 * the hashes after every key mutation; `subscribe({ changed: (h) => keys.invalidate(h),
 * missed: () => keys.refresh() })` once at start.
 */
export interface KeyEvents {
  /** Announces that the keys with these hashes changed, to every instance (this one included). Never throws. */
  publish(hashes: readonly string[]): Promise<void>;
  /** Calls `handlers.changed` for every announcement, `handlers.missed` when some may have been lost. */
  subscribe(handlers: KeyChangeHandlers): Promise<void>;
  close(): Promise<void>;
}

/** Embedded mode: nothing to announce; the key cache follows the store's key changes (polled). */
export class NoKeyEvents implements KeyEvents {
  async publish(_hashes: readonly string[]): Promise<void> {}
  async subscribe(_handlers: KeyChangeHandlers): Promise<void> {}
  async close(): Promise<void> {}
}

/** An announcement on the channel: the hashes of the keys changed. */
export function encodeKeyChange(hashes: readonly string[]): string {
  return JSON.stringify({ hashes });
}

/** The hashes an announcement names, or null when it names none it can be trusted for. */
export function decodeKeyChange(message: string): string[] | null {
  try {
    const parsed = JSON.parse(message) as { hashes?: unknown };
    const hashes = parsed?.hashes;
    if (Array.isArray(hashes) && hashes.every((h) => typeof h === 'string')) return hashes as string[];
  } catch {
    // not ours, or from another version
  }
  return null;
}

export interface RedisKeyEventsOptions {
  /** Pub/sub channel. Default `lrds:keys`. */
  channel?: string;
  /** Default: console. */
  logger?: WarnLogger;
}

/** How long subscribe() waits for Redis to confirm before returning anyway (ms). */
const SUBSCRIBE_WAIT_MS = 1000;

/**
 * Redis pub/sub on one channel: a publishing connection that gives up after 500 ms (publish()
 * never blocks a key mutation for long) and a separate subscriber connection that re-subscribes by
 * itself after a reconnect. Messages published while an instance was disconnected are lost,
 * so `missed` is called whenever the subscription is restored; polling the store's key changes
 * stays as the backstop.
 */
export class RedisKeyEvents implements KeyEvents {
  readonly #url: string;
  readonly #channel: string;
  readonly #logger: WarnLogger;
  readonly #pub: Redis;
  #sub: Redis | null = null;

  constructor(url: string, options: RedisKeyEventsOptions = {}) {
    this.#url = url;
    this.#channel = options.channel ?? 'lrds:keys';
    this.#logger = options.logger ?? { warn: (obj, msg) => console.warn(msg ?? '', obj) };
    // A publish waits at most 500 ms, for a connection (being) established included.
    this.#pub = new Redis(url, {
      commandTimeout: 500,
      connectTimeout: 1000,
      // Lets a closed instance's process exit at once when Redis was unreachable.
      disconnectTimeout: 200,
      maxRetriesPerRequest: 1,
      retryStrategy: (times) => Math.min(50 * times, 1000),
    });
    this.#pub.on('error', () => {});
  }

  async publish(hashes: readonly string[]): Promise<void> {
    try {
      await timed(
        redisCall('publish'),
        performance.now(),
        this.#pub.publish(this.#channel, encodeKeyChange(hashes)),
      );
    } catch (err) {
      this.#logger.warn(
        { err },
        'key change not announced over Redis: other instances see it at their next poll',
      );
    }
  }

  async subscribe(handlers: KeyChangeHandlers): Promise<void> {
    if (this.#sub) throw new Error('RedisKeyEvents.subscribe() may be called once');
    const sub = new Redis(this.#url, {
      connectTimeout: 1000,
      // Lets a closed instance's process exit at once when Redis was unreachable.
      disconnectTimeout: 200,
      retryStrategy: (times) => Math.min(50 * times, 1000),
      // The SUBSCRIBE waits in the offline queue until Redis is reachable, however long that takes.
      maxRetriesPerRequest: null,
      autoResubscribe: true,
    });
    this.#sub = sub;
    let connectedBefore = false;
    sub.on('error', () => {});
    sub.on('message', (channel: string, message: string) => {
      if (channel !== this.#channel) return;
      const hashes = decodeKeyChange(message);
      if (hashes) handlers.changed(hashes);
      else handlers.missed();
    });
    sub.on('ready', () => {
      // Changes announced while disconnected were missed.
      if (connectedBefore) handlers.missed();
      connectedBefore = true;
    });
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), SUBSCRIBE_WAIT_MS);
    });
    const subscribed = sub.subscribe(this.#channel);
    subscribed.catch((err) => this.#logger.warn({ err }, 'key change subscription failed'));
    try {
      const outcome = await Promise.race([subscribed, waited]);
      if (outcome === 'late') {
        this.#logger.warn(
          { channel: this.#channel },
          'Redis not reachable yet: key changes subscribed once it is',
        );
      }
    } catch {
      // logged above
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    // Nothing to finish gracefully: publishes are fire-and-forget.
    this.#pub.disconnect();
    this.#sub?.disconnect();
  }
}
