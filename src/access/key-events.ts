import { Redis } from 'ioredis';
import type { WarnLogger } from './redis-admission.ts';

/**
 * Tells every instance that keys changed (created, revoked, re-tiered), so each drops its key
 * cache at once instead of at its next poll of the store's keys version. Wiring: call
 * `publish()` after every key mutation; `subscribe(() => keys.invalidate())` once at start.
 */
export interface KeyEvents {
  /** Announces a key change to every instance (this one included). Never throws. */
  publish(): Promise<void>;
  /** Calls `onChange` on every announced change, and after a lost subscription is restored. */
  subscribe(onChange: () => void): Promise<void>;
  close(): Promise<void>;
}

/** Embedded mode: nothing to announce; the key cache follows the store's keys version (polled). */
export class NoKeyEvents implements KeyEvents {
  async publish(): Promise<void> {}
  async subscribe(_onChange: () => void): Promise<void> {}
  async close(): Promise<void> {}
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
 * so `onChange` is also called whenever the subscription is restored; the store's keys version
 * polling stays as the backstop.
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

  async publish(): Promise<void> {
    try {
      await this.#pub.publish(this.#channel, String(Date.now()));
    } catch (err) {
      this.#logger.warn(
        { err },
        'key change not announced over Redis: other instances see it at their next poll',
      );
    }
  }

  async subscribe(onChange: () => void): Promise<void> {
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
    sub.on('message', (channel: string) => {
      if (channel === this.#channel) onChange();
    });
    sub.on('ready', () => {
      // Changes announced while disconnected were missed.
      if (connectedBefore) onChange();
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
