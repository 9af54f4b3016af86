import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AnonymousLimiter } from '../../src/access/anonymous-limit.ts';

const T0 = Date.parse('2026-11-22T12:00:00Z');

describe('AnonymousLimiter', () => {
  test('default: an address sends its burst at once, then is refused with the seconds until a token is back', () => {
    const l = new AnonymousLimiter({ ratePerSecond: 2, burst: 3, maxAddresses: 10 });
    for (let i = 0; i < 3; i++) assert.deepEqual(l.take('10.0.0.1', T0), { ok: true });
    assert.deepEqual(l.take('10.0.0.1', T0), { ok: false, retryAfterSeconds: 1 });
  });

  test('behavior: tokens come back at the rate, never above the burst', () => {
    const l = new AnonymousLimiter({ ratePerSecond: 2, burst: 3, maxAddresses: 10 });
    for (let i = 0; i < 3; i++) l.take('a', T0);
    assert.equal(l.take('a', T0 + 400).ok, false);
    assert.equal(l.take('a', T0 + 500).ok, true);
    assert.equal(l.take('a', T0 + 500).ok, false);
    // An hour idle gives back the burst, not 7,200 tokens.
    for (let i = 0; i < 3; i++) assert.equal(l.take('a', T0 + 3_600_000).ok, true);
    assert.equal(l.take('a', T0 + 3_600_000).ok, false);
  });

  test('behavior: Retry-After is the whole seconds until the next token', () => {
    const l = new AnonymousLimiter({ ratePerSecond: 0.2, burst: 1, maxAddresses: 10 });
    assert.equal(l.take('a', T0).ok, true);
    assert.deepEqual(l.take('a', T0), { ok: false, retryAfterSeconds: 5 });
    assert.deepEqual(l.take('a', T0 + 2_500), { ok: false, retryAfterSeconds: 3 });
    assert.equal(l.take('a', T0 + 5_000).ok, true);
  });

  test('behavior: addresses have their own budgets', () => {
    const l = new AnonymousLimiter({ ratePerSecond: 1, burst: 1, maxAddresses: 10 });
    assert.equal(l.take('a', T0).ok, true);
    assert.equal(l.take('a', T0).ok, false);
    assert.equal(l.take('b', T0).ok, true);
  });

  test('behavior: at most maxAddresses are kept; a forgotten one starts with a full bucket', () => {
    const l = new AnonymousLimiter({ ratePerSecond: 1, burst: 1, maxAddresses: 2 });
    assert.equal(l.take('a', T0).ok, true);
    assert.equal(l.take('b', T0).ok, true);
    assert.equal(l.take('c', T0).ok, true);
    assert.equal(l.take('a', T0).ok, true, 'a was pushed out by c');
    assert.equal(l.take('c', T0).ok, false);
  });

  test('error: limits out of range', () => {
    assert.throws(() => new AnonymousLimiter({ ratePerSecond: 0, burst: 1, maxAddresses: 1 }), RangeError);
    assert.throws(() => new AnonymousLimiter({ ratePerSecond: 1, burst: 0, maxAddresses: 1 }), RangeError);
  });
});
