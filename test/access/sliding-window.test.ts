import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { type RateResult, SlidingWindowLimiter, WINDOW_MS } from '../../src/access/sliding-window.ts';

/**
 * Naive reference: every admitted timestamp per key, the window scanned in full.
 * Membership uses the limiter's own arithmetic: s is inside at t iff t < s + 1000.
 */
class ReferenceLimiter {
  readonly admitted = new Map<string, number[]>();

  hit(key: string, rate: number, t: number): RateResult {
    const all = this.admitted.get(key) ?? [];
    this.admitted.set(key, all);
    const inWindow = all.filter((s) => t < s + WINDOW_MS);
    if (inWindow.length >= rate) {
      const resetAt = inWindow[0]! + WINDOW_MS;
      return { ok: false, limit: rate, remaining: 0, resetAt, retryAfterMs: resetAt - t };
    }
    all.push(t);
    return {
      ok: true,
      limit: rate,
      remaining: rate - inWindow.length - 1,
      resetAt: (inWindow[0] ?? t) + WINDOW_MS,
    };
  }
}

interface Arrival {
  key: string;
  t: number;
}

/** Gaps between arrivals: bursts, integer and fractional ms (down to 1e-300), and jumps around one window. */
const gap = fc.oneof(
  { weight: 3, arbitrary: fc.constant(0) },
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 60 }) },
  { weight: 3, arbitrary: fc.double({ min: 0, max: 60, noNaN: true }) },
  { weight: 1, arbitrary: fc.integer({ min: 900, max: 1100 }) },
  { weight: 1, arbitrary: fc.double({ min: 999.999, max: 1000.001, noNaN: true }) },
);

/**
 * Sorted arrival times over up to 4 keys, each key with its own rate 1-100 (biased to small
 * rates so that windows fill and ring buffers wrap), up to 400 arrivals per run.
 */
const scenario = fc.record({
  base: fc.constantFrom(0, 1_767_225_600_000, 1_767_225_599_999.5),
  rates: fc.array(fc.oneof(fc.integer({ min: 1, max: 10 }), fc.integer({ min: 1, max: 100 })), {
    minLength: 4,
    maxLength: 4,
  }),
  steps: fc.array(fc.record({ gap, key: fc.integer({ min: 0, max: 3 }) }), { maxLength: 400, size: 'max' }),
});

function arrivals(base: number, steps: { gap: number; key: number }[]): Arrival[] {
  let t = base;
  return steps.map((s) => {
    t += s.gap;
    return { key: `key-${s.key}`, t };
  });
}

const rateOf = (rates: number[], key: string) => rates[Number(key.slice(4))]!;

describe('SlidingWindowLimiter', () => {
  test('default: a fresh key is admitted with rate - 1 remaining', () => {
    const limiter = new SlidingWindowLimiter();
    assert.deepEqual(limiter.hit('k', 5, 10_000), { ok: true, limit: 5, remaining: 4, resetAt: 11_000 });
    assert.equal(limiter.size, 1);
  });

  test('behavior: a burst of 12 at t=0 on rate 5 admits exactly 5; t=600 refused; t=1000 admitted', () => {
    const limiter = new SlidingWindowLimiter();
    const burst = Array.from({ length: 12 }, () => limiter.hit('k', 5, 0));
    assert.equal(burst.filter((r) => r.ok).length, 5);
    assert.deepEqual(
      burst.slice(0, 5).map((r) => r.remaining),
      [4, 3, 2, 1, 0],
    );
    assert.deepEqual(burst[5], { ok: false, limit: 5, remaining: 0, resetAt: 1000, retryAfterMs: 1000 });
    assert.deepEqual(limiter.hit('k', 5, 600), {
      ok: false,
      limit: 5,
      remaining: 0,
      resetAt: 1000,
      retryAfterMs: 400,
    });
    // At t=1000 the five requests of t=0 have left (t - 0 >= 1000): the window is empty again.
    assert.deepEqual(limiter.hit('k', 5, 1000), { ok: true, limit: 5, remaining: 4, resetAt: 2000 });
  });

  test('behavior: keys are limited independently', () => {
    const limiter = new SlidingWindowLimiter();
    assert.equal(limiter.hit('a', 1, 0).ok, true);
    assert.equal(limiter.hit('a', 1, 1).ok, false);
    assert.equal(limiter.hit('b', 1, 1).ok, true);
  });

  test('behavior: never more than rate admitted in any 1,000 ms interval', () => {
    fc.assert(
      fc.property(scenario, ({ base, rates, steps }) => {
        const limiter = new SlidingWindowLimiter();
        const admitted = new Map<string, number[]>();
        for (const { key, t } of arrivals(base, steps)) {
          if (limiter.hit(key, rateOf(rates, key), t).ok)
            admitted.set(key, [...(admitted.get(key) ?? []), t]);
        }
        for (const [key, times] of admitted) {
          for (let i = 0; i < times.length; i++) {
            // admitted requests in [times[i], times[i] + 1000)
            let n = 0;
            for (let j = i; j < times.length && times[j]! < times[i]! + WINDOW_MS; j++) n++;
            assert.ok(
              n <= rateOf(rates, key),
              `${n} admitted in [${times[i]}, +1000) for rate ${rateOf(rates, key)}`,
            );
          }
        }
      }),
    );
  });

  test('behavior: refuses only a full window, and remaining/resetAt/retryAfterMs match the reference model', () => {
    fc.assert(
      fc.property(scenario, ({ base, rates, steps }) => {
        const limiter = new SlidingWindowLimiter();
        const reference = new ReferenceLimiter();
        for (const { key, t } of arrivals(base, steps)) {
          const rate = rateOf(rates, key);
          const got = limiter.hit(key, rate, t);
          assert.deepEqual(got, reference.hit(key, rate, t));
          if (!got.ok) assert.ok(got.retryAfterMs > 0);
          else assert.ok(got.remaining >= 0 && got.resetAt > t);
        }
      }),
    );
  });

  test('behavior: refused requests take no slot', () => {
    fc.assert(
      fc.property(scenario, ({ base, rates, steps }) => {
        const limiter = new SlidingWindowLimiter();
        const results: [Arrival, RateResult][] = arrivals(base, steps).map((a) => [
          a,
          limiter.hit(a.key, rateOf(rates, a.key), a.t),
        ]);
        // Replaying only the admitted requests gives each one the same answer: the refused ones changed nothing.
        const replay = new SlidingWindowLimiter();
        for (const [a, r] of results) {
          if (r.ok) assert.deepEqual(replay.hit(a.key, rateOf(rates, a.key), a.t), r);
        }
      }),
    );
  });

  test('behavior: peek reports the state without taking a slot', () => {
    const limiter = new SlidingWindowLimiter();
    assert.deepEqual(limiter.peek('k', 5, 100), { limit: 5, remaining: 5, resetAt: 1100 });
    assert.equal(limiter.size, 0);
    limiter.hit('k', 5, 100);
    limiter.hit('k', 5, 300);
    limiter.hit('k', 5, 300);
    assert.deepEqual(limiter.peek('k', 5, 500), { limit: 5, remaining: 2, resetAt: 1100 });
    assert.deepEqual(limiter.peek('k', 5, 500), { limit: 5, remaining: 2, resetAt: 1100 });
    assert.deepEqual(limiter.peek('k', 5, 1100), { limit: 5, remaining: 3, resetAt: 1300 });
    assert.deepEqual(limiter.peek('k', 5, 1300), { limit: 5, remaining: 5, resetAt: 2300 });
    assert.deepEqual(limiter.hit('k', 5, 500), { ok: true, limit: 5, remaining: 1, resetAt: 1100 });
  });

  test('behavior: peek agrees with the reference model before every hit', () => {
    fc.assert(
      fc.property(scenario, ({ base, rates, steps }) => {
        const limiter = new SlidingWindowLimiter();
        const reference = new ReferenceLimiter();
        for (const { key, t } of arrivals(base, steps)) {
          const rate = rateOf(rates, key);
          const inWindow = (reference.admitted.get(key) ?? []).filter((s) => t < s + WINDOW_MS);
          assert.deepEqual(limiter.peek(key, rate, t), {
            limit: rate,
            remaining: rate - inWindow.length,
            resetAt: (inWindow[0] ?? t) + WINDOW_MS,
          });
          limiter.hit(key, rate, t);
          reference.hit(key, rate, t);
        }
      }),
    );
  });

  test('behavior: a rate decrease keeps the newest timestamps', () => {
    const limiter = new SlidingWindowLimiter();
    for (let t = 0; t < 20; t++) assert.equal(limiter.hit('k', 20, t).ok, true);
    // 20 in the window, new rate 5: full; a slot frees when the 5th newest (t=15) leaves.
    assert.deepEqual(limiter.hit('k', 5, 100), {
      ok: false,
      limit: 5,
      remaining: 0,
      resetAt: 1015,
      retryAfterMs: 915,
    });
    assert.deepEqual(limiter.peek('k', 5, 100), { limit: 5, remaining: 0, resetAt: 1015 });
    assert.equal(limiter.hit('k', 5, 1014.999).ok, false);
    assert.deepEqual(limiter.hit('k', 5, 1015), { ok: true, limit: 5, remaining: 0, resetAt: 1016 });
  });

  test('behavior: a rate increase keeps every timestamp and opens the new slots', () => {
    const limiter = new SlidingWindowLimiter();
    for (let i = 0; i < 5; i++) limiter.hit('k', 5, 0);
    assert.equal(limiter.hit('k', 5, 1).ok, false);
    assert.deepEqual(limiter.hit('k', 10, 1), { ok: true, limit: 10, remaining: 4, resetAt: 1000 });
    for (let i = 0; i < 4; i++) assert.equal(limiter.hit('k', 10, 2).ok, true);
    assert.equal(limiter.hit('k', 10, 2).ok, false);
  });

  test('behavior: time going backwards admits nothing extra', () => {
    const limiter = new SlidingWindowLimiter();
    assert.equal(limiter.hit('k', 2, 5000).ok, true);
    assert.equal(limiter.hit('k', 2, 5000).ok, true);
    // At 4500 the true window (3500, 4500] would be empty; the key's clock is still at 5000.
    assert.deepEqual(limiter.hit('k', 2, 4500), {
      ok: false,
      limit: 2,
      remaining: 0,
      resetAt: 6000,
      retryAfterMs: 1500,
    });
    assert.equal(limiter.hit('k', 2, 5999).ok, false);
    assert.equal(limiter.hit('k', 2, 6000).ok, true);
    // An admitted late request is recorded at the key's newest time, keeping the order.
    assert.deepEqual(limiter.hit('k', 2, 100), { ok: true, limit: 2, remaining: 0, resetAt: 7000 });
  });

  test('behavior: evictIdle removes exactly the keys with nothing left in their window', () => {
    const limiter = new SlidingWindowLimiter();
    limiter.hit('old', 5, 0);
    limiter.hit('edge', 5, 500);
    limiter.hit('fresh', 5, 1200);
    assert.equal(limiter.evictIdle(1500), 2);
    assert.equal(limiter.size, 1);
    assert.deepEqual(limiter.peek('fresh', 5, 1500), { limit: 5, remaining: 4, resetAt: 2200 });
    // An evicted key behaves like an unknown one.
    assert.deepEqual(limiter.hit('old', 5, 1500), { ok: true, limit: 5, remaining: 4, resetAt: 2500 });
  });

  test('behavior: idle keys are evicted automatically, so size stays bounded', () => {
    const limiter = new SlidingWindowLimiter();
    let maxSize = 0;
    // 100,000 distinct keys, one request each, 10 per ms: about 10,000 keys active per window.
    for (let i = 0; i < 100_000; i++) {
      limiter.hit(`key-${i}`, 3, i / 10);
      maxSize = Math.max(maxSize, limiter.size);
    }
    assert.ok(maxSize <= 2 * 10_000 + 1024 + 10, `size reached ${maxSize}`);
    limiter.evictIdle(100_000 / 10 + WINDOW_MS);
    assert.equal(limiter.size, 0);
  });

  test('behavior: record() keeps admissions decided elsewhere; remove() takes back exactly one; inWindow() lists them', () => {
    const limiter = new SlidingWindowLimiter();
    limiter.record('k', 3, 100);
    limiter.record('k', 3, 200);
    limiter.record('k', 3, 150); // before the newest: counts as the newest
    assert.equal(limiter.newest('k'), 200);
    assert.deepEqual(limiter.inWindow(1000), new Map([['k', [100, 200, 200]]]));
    assert.equal(limiter.hit('k', 3, 1000).ok, false);
    // recorded past the rate: the newest `rate` are kept
    limiter.record('k', 3, 300);
    assert.deepEqual(limiter.inWindow(1000).get('k'), [200, 200, 300]);
    assert.deepEqual(limiter.inWindow(1200).get('k'), [300]);
    assert.equal(limiter.inWindow(1300).size, 0);

    const hits = new SlidingWindowLimiter();
    assert.ok(hits.hit('k', 3, 0).ok);
    assert.ok(hits.hit('k', 3, 10).ok);
    const at = hits.newest('k')!;
    assert.ok(hits.hit('k', 3, 20).ok);
    // the request admitted at 10 was refused by a quota after the one at 20 was admitted
    hits.remove('k', at);
    hits.remove('k', 999); // not there: nothing changes
    assert.deepEqual(hits.inWindow(20).get('k'), [0, 20]);
    assert.ok(hits.hit('k', 3, 30).ok);
    assert.equal(hits.hit('k', 3, 40).ok, false);
    assert.equal(hits.newest('unknown'), undefined);
  });

  test('error: rate must be a positive integer and time finite', () => {
    const limiter = new SlidingWindowLimiter();
    assert.throws(() => limiter.hit('k', 0, 0), RangeError);
    assert.throws(() => limiter.hit('k', 2.5, 0), RangeError);
    assert.throws(() => limiter.hit('k', Number.POSITIVE_INFINITY, 0), RangeError);
    assert.throws(() => limiter.hit('k', 5, Number.NaN), RangeError);
    assert.throws(() => limiter.peek('k', -1, 0), RangeError);
  });
});
