/**
 * Exact sliding-window rate limiter, in process (README "Tiers": sliding window, per API key,
 * per second; docs/decisions.md "Order of checks and what counts").
 *
 * Rule: a request at time t is admitted iff fewer than `rate` ADMITTED requests have a
 * timestamp s in (t - 1000, t]. Refused requests take no slot. In floating point the test is
 * written `s <= t < s + 1000` (s leaves the window at exactly s + 1000, the reset time the
 * limiter reports), so reset times are always after t and retry delays always > 0. Hence no half-open interval [a, a + 1000) ever holds more than `rate` admitted
 * requests, and a request is never refused while there is room.
 *
 * Per key the limiter keeps only the last `rate` admitted timestamps in a ring buffer
 * (Float64Array of length `rate`): with them stored in order, the window is full exactly
 * when the oldest stored one is still inside it, so the admit decision is O(1) and
 * remaining/reset cost one binary search, O(log rate). Memory is O(rate) per key, and
 * keys with nothing left in their window are evicted (see evictIdle).
 *
 * Time is a parameter (epoch ms, fractions allowed). Feed it a sub-millisecond clock (the
 * system clock of domain/clock.ts): with whole milliseconds a window could be up to 1 ms
 * shorter than 1,000 ms in real time. Per key it never runs backwards:
 * a request stamped before that key's newest admitted request is treated as arriving at
 * that newest timestamp, so a stepping clock cannot admit extra requests. (A key already
 * evicted has no newest timestamp left to compare with; eviction waits until every stored
 * timestamp is a full window old, so only a backwards jump of more than that could matter.)
 */

/** Length of the window in milliseconds. */
export const WINDOW_MS = 1000;

/** Limiter state for a key, as sent in X-RateLimit-* headers. */
export interface RateState {
  /** The key's rate: requests per window. */
  limit: number;
  /** Requests still admissible in the current window (after this request, for hit()). */
  remaining: number;
  /**
   * Epoch ms at which the oldest admitted request of the current window leaves it
   * (its timestamp + 1000); for an empty window, now + 1000.
   */
  resetAt: number;
}

export type RateResult =
  | { ok: true; limit: number; remaining: number; resetAt: number }
  | {
      ok: false;
      limit: number;
      remaining: 0;
      resetAt: number;
      /** Ms from `nowMs` until a slot frees (= resetAt - nowMs), always > 0. */
      retryAfterMs: number;
    };

/** Ring buffer of a key's last admitted timestamps, oldest at `head`, non-decreasing. */
interface KeyWindow {
  buf: Float64Array;
  head: number;
  count: number;
  /** Newest admitted timestamp (the key's clock high-water mark). */
  newest: number;
}

/** Fewest hits between two automatic sweeps. */
const SWEEP_MIN_HITS = 1024;

function assertArgs(rate: number, nowMs: number): void {
  if (!(Number.isSafeInteger(rate) && rate > 0)) {
    throw new RangeError(`rate must be a positive integer, got ${rate}`);
  }
  if (!Number.isFinite(nowMs)) throw new RangeError(`nowMs must be finite, got ${nowMs}`);
}

/** Stored timestamp at logical position i (0 = oldest). */
function at(w: KeyWindow, i: number): number {
  let j = w.head + i;
  if (j >= w.buf.length) j -= w.buf.length;
  return w.buf[j]!;
}

/**
 * Logical index of the first stored timestamp still inside the window at t, searching only
 * the newest `consider` entries. Returns w.count when none is inside.
 */
function firstInWindow(w: KeyWindow, t: number, consider: number): number {
  let lo = w.count - consider;
  let hi = w.count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (t < at(w, mid) + WINDOW_MS) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** Appends timestamp `t` as the newest; a full buffer overwrites its oldest. */
function append(w: KeyWindow, t: number): void {
  const size = w.buf.length;
  if (w.count < size) {
    let j = w.head + w.count;
    if (j >= size) j -= size;
    w.buf[j] = t;
    w.count++;
  } else {
    w.buf[w.head] = t;
    w.head = w.head + 1 === size ? 0 : w.head + 1;
  }
  w.newest = t;
}

/** Re-sizes a window for a new rate, keeping the newest timestamps. */
function resize(w: KeyWindow, rate: number): void {
  const keep = Math.min(w.count, rate);
  const buf = new Float64Array(rate);
  for (let i = 0; i < keep; i++) buf[i] = at(w, w.count - keep + i);
  w.buf = buf;
  w.head = 0;
  w.count = keep;
}

export class SlidingWindowLimiter {
  readonly #windows = new Map<string, KeyWindow>();
  #hitsSinceSweep = 0;
  /** Hits between automatic sweeps: max(SWEEP_MIN_HITS, size after the last sweep), so sweeps cost O(1) amortized. */
  #sweepEvery = SWEEP_MIN_HITS;

  /** Number of keys currently holding state. */
  get size(): number {
    return this.#windows.size;
  }

  /**
   * Counts a request for `key` at `nowMs` against `rate` requests per second and admits it
   * or refuses it. Only admitted requests are recorded. A changed `rate` (tier change)
   * re-sizes the key's state first, keeping its newest timestamps.
   * Precondition: rate is a positive integer (an unlimited rate has no window to bound).
   */
  hit(key: string, rate: number, nowMs: number): RateResult {
    assertArgs(rate, nowMs);
    if (++this.#hitsSinceSweep >= this.#sweepEvery) this.evictIdle(nowMs);

    let w = this.#windows.get(key);
    if (w === undefined) {
      w = { buf: new Float64Array(rate), head: 0, count: 1, newest: nowMs };
      w.buf[0] = nowMs;
      this.#windows.set(key, w);
      return { ok: true, limit: rate, remaining: rate - 1, resetAt: nowMs + WINDOW_MS };
    }
    if (w.buf.length !== rate) resize(w, rate);

    const t = Math.max(nowMs, w.newest);
    if (w.count === rate) {
      const oldest = w.buf[w.head]!;
      const resetAt = oldest + WINDOW_MS;
      if (t < resetAt) {
        // `rate` admitted requests lie in (t - 1000, t]: refuse; a slot frees when the oldest leaves.
        return { ok: false, limit: rate, remaining: 0, resetAt, retryAfterMs: resetAt - nowMs };
      }
    }

    const first = firstInWindow(w, t, w.count);
    const inWindow = w.count - first + 1; // the stored ones still inside, plus this request
    const resetAt = (first < w.count ? at(w, first) : t) + WINDOW_MS;
    append(w, t); // full: the oldest, outside the window, is overwritten
    return { ok: true, limit: rate, remaining: rate - inWindow, resetAt };
  }

  /**
   * The key's newest recorded timestamp (after an admitting hit(): that request's, which is
   * nowMs or, when the clock stepped back, the previous newest); undefined for an unknown key.
   */
  newest(key: string): number | undefined {
    return this.#windows.get(key)?.newest;
  }

  /**
   * Records an admission decided elsewhere (by a shared limiter), without a check: the
   * key's `rate` newest timestamps are kept, as hit() keeps them. `nowMs` before the key's
   * newest timestamp is recorded as that newest one.
   */
  record(key: string, rate: number, nowMs: number): void {
    assertArgs(rate, nowMs);
    if (++this.#hitsSinceSweep >= this.#sweepEvery) this.evictIdle(nowMs);
    let w = this.#windows.get(key);
    if (w === undefined) {
      w = { buf: new Float64Array(rate), head: 0, count: 0, newest: nowMs };
      this.#windows.set(key, w);
    } else if (w.buf.length !== rate) resize(w, rate);
    append(w, Math.max(nowMs, w.newest));
  }

  /**
   * Removes one recorded timestamp `t` of the key (that of a hit() whose request was then
   * refused by a quota: it takes no slot, docs/decisions.md "Order of checks and what counts"), whatever was recorded since. O(rate).
   */
  remove(key: string, t: number): void {
    const w = this.#windows.get(key);
    if (w === undefined) return;
    let i = w.count - 1;
    while (i >= 0 && at(w, i) !== t) i--;
    if (i < 0) return;
    const len = w.buf.length;
    for (; i < w.count - 1; i++) {
      w.buf[(w.head + i) % len] = w.buf[(w.head + i + 1) % len]!;
    }
    w.count--;
  }

  /**
   * Every key's timestamps still inside the window at `nowMs` (s with nowMs < s + 1000),
   * oldest first. O(keys + timestamps returned).
   */
  inWindow(nowMs: number): Map<string, number[]> {
    const out = new Map<string, number[]>();
    for (const [key, w] of this.#windows) {
      if (w.count === 0 || nowMs >= w.newest + WINDOW_MS) continue;
      const list: number[] = [];
      for (let i = firstInWindow(w, nowMs, w.count); i < w.count; i++) list.push(at(w, i));
      if (list.length > 0) out.set(key, list);
    }
    return out;
  }

  /**
   * Gives back the slot of the key's newest admitted request (a request that passed the
   * window but was then refused by a quota takes no slot: docs/decisions.md "Order of checks and what counts"). Call it right after
   * that request's hit(), before any other hit of the key.
   */
  release(key: string): void {
    const w = this.#windows.get(key);
    if (w === undefined || w.count === 0) return;
    w.count--;
  }

  /**
   * The key's state at `nowMs` for `rate`, without admitting or recording anything (for
   * the headers of responses that did not go through hit()). Does not modify the key.
   */
  peek(key: string, rate: number, nowMs: number): RateState {
    assertArgs(rate, nowMs);
    const w = this.#windows.get(key);
    if (w === undefined) return { limit: rate, remaining: rate, resetAt: nowMs + WINDOW_MS };
    const t = Math.max(nowMs, w.newest);
    // Only the newest `rate` timestamps count, as after the resize a hit() would do.
    const first = firstInWindow(w, t, Math.min(w.count, rate));
    if (first === w.count) return { limit: rate, remaining: rate, resetAt: nowMs + WINDOW_MS };
    return { limit: rate, remaining: rate - (w.count - first), resetAt: at(w, first) + WINDOW_MS };
  }

  /**
   * Removes every key whose newest admitted request has left the window at `nowMs`
   * (nowMs >= newest + 1000): such a key behaves exactly like an unknown one. O(size).
   * hit() calls it on its own after max(1024, size after the previous sweep) hits, so idle keys
   * do not accumulate (amortized O(1) per hit: at most about twice the keys active within
   * that many hits are held); call it from a timer as well if traffic can stop entirely.
   * Returns the number of keys removed.
   */
  evictIdle(nowMs: number): number {
    this.#hitsSinceSweep = 0;
    let removed = 0;
    for (const [key, w] of this.#windows) {
      if (nowMs >= w.newest + WINDOW_MS) {
        this.#windows.delete(key);
        removed++;
      }
    }
    this.#sweepEvery = Math.max(SWEEP_MIN_HITS, this.#windows.size);
    return removed;
  }
}
