import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SlidingWindowLimiter } from '../../src/access/sliding-window.ts';
import { systemClock } from '../../src/domain/clock.ts';

/** The clock's tolerance before it corrects itself (MAX_DRIFT_MS in src/domain/clock.ts). */
const MAX_DRIFT_MS_FOR_TEST = 1000;

test('behavior: the system clock reads below the millisecond and never goes back', () => {
  const clock = systemClock();
  let last = clock.now();
  let fractional = 0;
  const end = performance.now() + 20;
  while (performance.now() < end) {
    const t = clock.now();
    assert.ok(t >= last, `${t} after ${last}`);
    if (!Number.isInteger(t)) fractional++;
    last = t;
  }
  assert.ok(fractional > 0, 'every reading was a whole millisecond');
  assert.ok(Math.abs(clock.now() - Date.now()) < 1000, 'epoch milliseconds');
});

test('behavior: the limiter on the system clock never admits rate + 1 in a span a client measures under 1,000 ms', () => {
  // The client's view: a request is admitted somewhere between its send and its answer. Keys of
  // rate 1 start a few microseconds apart, so their first admissions fall at every fraction of a
  // millisecond; a clock that drops the fraction shortens some of their windows by up to 1 ms.
  const clock = systemClock();
  const limiter = new SlidingWindowLimiter();
  const keys = 40;
  const admitted: { sent: number; answered: number }[][] = Array.from({ length: keys }, () => []);
  const start = performance.now();
  let started = 0;
  while (performance.now() - start < 1100) {
    const elapsed = performance.now() - start;
    // key i joins after i * 25 us
    while (started < keys && elapsed >= started * 0.025) started++;
    for (let k = 0; k < started; k++) {
      const sent = performance.now();
      const r = limiter.hit(`k${k}`, 1, clock.now());
      const answered = performance.now();
      if (r.ok) admitted[k]!.push({ sent, answered });
    }
  }
  let tightest = Number.POSITIVE_INFINITY;
  for (const list of admitted) {
    assert.ok(list.length >= 2, 'each key was admitted again after its window');
    for (let i = 1; i < list.length; i++) {
      tightest = Math.min(tightest, list[i]!.answered - list[i - 1]!.sent);
    }
  }
  // 1 us of slack for the rounding of an epoch-ms double (about 0.24 us at today's epoch).
  assert.ok(tightest >= 1000 - 0.001, `two admissions of a rate-1 key within ${tightest.toFixed(4)} ms`);
});

test('behavior: the system clock follows the wall clock: jumps to it when ahead by over a second, runs slow when it stepped back', () => {
  let wall = Date.parse('2026-11-22T12:00:00.000Z');
  let mono = 5_000;
  const clock = systemClock(
    () => wall,
    () => mono,
  );
  assert.equal(clock.now(), wall);
  // both advance together: the monotonic reading, with its fractions
  wall += 1500;
  mono += 1500.25;
  assert.equal(clock.now(), Date.parse('2026-11-22T12:00:01.500Z') + 0.25);
  // the wall clock steps forward by an hour (a VM resumed): followed at the next check
  wall += 3_600_000;
  mono += 1000;
  assert.equal(clock.now(), wall);
  // a drift under a second is left alone (no step inside open windows)
  wall += 1200;
  mono += 1000;
  const before = clock.now();
  assert.equal(before, wall - 200);
  // a step back of 10 s: the clock never goes back nor stands still; it runs at 0.9 x real time
  wall -= 10_000;
  mono += 1000;
  assert.equal(clock.now(), before + 1000, 'the check that sees the step');
  let last = clock.now();
  for (let s = 0; s < 200; s++) {
    wall += 1000;
    mono += 1000;
    const t = clock.now();
    assert.ok(t > last, 'moves forward');
    assert.ok(t - last >= 900 - 1e-6 && t - last <= 1000 + 1e-6, `${t - last} ms per second`);
    last = t;
  }
  // caught up (10 s at 0.1 s lost per second: about 100 s): real speed again, on wall time
  assert.ok(
    Math.abs(clock.now() - wall) <= MAX_DRIFT_MS_FOR_TEST,
    `${clock.now() - wall} from the wall clock`,
  );
  wall += 1000;
  mono += 1000;
  const a = clock.now();
  wall += 1000;
  mono += 1000;
  assert.equal(clock.now() - a, 1000);
});

test('behavior: a limiter on a clock whose wall time stepped back keeps admitting at the rate', () => {
  let wall = Date.parse('2026-11-22T12:00:00.000Z');
  let mono = 0;
  const clock = systemClock(
    () => wall,
    () => mono,
  );
  const limiter = new SlidingWindowLimiter();
  let admitted = 0;
  for (let i = 0; i < 40; i++) {
    // 20 requests a second for 2 s: 5 a second admitted
    mono += 50;
    wall += 50;
    if (limiter.hit('k', 5, clock.now()).ok) admitted++;
  }
  assert.equal(admitted, 10);
  wall -= 60_000;
  admitted = 0;
  for (let i = 0; i < 600; i++) {
    mono += 50;
    wall += 50;
    if (limiter.hit('k', 5, clock.now()).ok) admitted++;
  }
  // 30 s of real time at 0.9 x: 27 s of windows, 5 each (the first window may hold fewer)
  assert.ok(admitted >= 130 && admitted <= 136, `${admitted} admitted in 30 s after the step`);
});
