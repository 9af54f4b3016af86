import { LRUCache } from 'lru-cache';

/**
 * The budget of requests without an API key (the OpenAPI document, the docs page, health,
 * unknown paths, refused keys), per client address: a token bucket. An address holds at most
 * `burst` tokens and gets `ratePerSecond` back each second; each anonymous request takes one,
 * and a request that finds none is refused with the seconds until one is back. Authenticated
 * requests never touch it: a paying client behind the same address keeps its own limits.
 *
 * In process and bounded: the `maxAddresses` most recently seen addresses are kept; an address
 * pushed out starts again with a full bucket, which only gives back what its idle time would
 * have. Time is a parameter (epoch ms), never read here.
 */
export interface AnonymousLimits {
  /** Tokens an address gets back per second. */
  ratePerSecond: number;
  /** Tokens an address holds at most: the requests it may send at once after a pause. */
  burst: number;
  /** Addresses tracked at once. */
  maxAddresses: number;
}

export type AnonymousResult = { ok: true } | { ok: false; retryAfterSeconds: number };

interface Bucket {
  tokens: number;
  /** Epoch ms of the last refill. */
  at: number;
}

export class AnonymousLimiter {
  readonly limits: Readonly<AnonymousLimits>;
  readonly #buckets: LRUCache<string, Bucket>;

  constructor(limits: AnonymousLimits) {
    if (!(limits.ratePerSecond > 0) || !(limits.burst >= 1) || !(limits.maxAddresses >= 1))
      throw new RangeError('anonymous limits: ratePerSecond > 0, burst >= 1 and maxAddresses >= 1');
    this.limits = Object.freeze({ ...limits });
    this.#buckets = new LRUCache({ max: limits.maxAddresses });
  }

  /** Takes a token of `address` at `nowMs`, or says how long until one is back. */
  take(address: string, nowMs: number): AnonymousResult {
    const { ratePerSecond, burst } = this.limits;
    let b = this.#buckets.get(address);
    if (b === undefined) {
      b = { tokens: burst, at: nowMs };
      this.#buckets.set(address, b);
    } else if (nowMs > b.at) {
      b.tokens = Math.min(burst, b.tokens + ((nowMs - b.at) / 1000) * ratePerSecond);
      b.at = nowMs;
    }
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return { ok: true };
    }
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - b.tokens) / ratePerSecond)) };
  }
}
