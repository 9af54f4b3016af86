import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { borrowRate, type RateCurve, rateToApy, supplyRate } from '../../src/domain/rates.ts';

function assertClose(actual: number, expected: number, tolerance = 1e-12): void {
  assert.ok(
    Math.abs(actual - expected) <= tolerance,
    `expected ${actual} to be within ${tolerance} of ${expected}`,
  );
}

const curve: RateCurve = { base: 0.01, slopeLow: 0.05, slopeHigh: 0.6, kink: 0.8 };

const fraction = fc.double({ min: 0, max: 1, noNaN: true });
const arbitraryCurve = fc.record({
  base: fc.double({ min: 0, max: 0.2, noNaN: true }),
  slopeLow: fc.double({ min: 0, max: 0.5, noNaN: true }),
  slopeHigh: fc.double({ min: 0, max: 10, noNaN: true }),
  kink: fc.double({ min: 0.01, max: 1, noNaN: true }),
});

describe('borrowRate', () => {
  test('default: below the kink only slopeLow applies', () => {
    // 0.01 + 0.05 x 0.5 = 0.035
    assertClose(borrowRate(0.5, curve), 0.035);
  });

  test('default: at the kink', () => {
    // 0.01 + 0.05 x 0.8 = 0.05
    assertClose(borrowRate(0.8, curve), 0.05);
  });

  test('default: above the kink slopeHigh applies to the excess', () => {
    // 0.01 + 0.05 x 0.8 + 0.6 x (0.9 - 0.8) = 0.01 + 0.04 + 0.06 = 0.11
    assertClose(borrowRate(0.9, curve), 0.11);
    // 0.01 + 0.04 + 0.6 x 0.2 = 0.17
    assertClose(borrowRate(1, curve), 0.17);
  });

  test('default: zero utilization pays the base rate', () => {
    assert.equal(borrowRate(0, curve), 0.01);
  });

  test('default: Compound v3 mainnet USDC curve', () => {
    // base 0.015, slopeLow 0.035, slopeHigh 0.25, kink 0.8 at u = 0.9:
    // 0.015 + 0.035 x 0.8 + 0.25 x 0.1 = 0.015 + 0.028 + 0.025 = 0.068
    assertClose(borrowRate(0.9, { base: 0.015, slopeLow: 0.035, slopeHigh: 0.25, kink: 0.8 }), 0.068);
  });

  test('behavior: kink 1 is a single straight line', () => {
    // 0.02 + 0.1 x 1 = 0.12
    assertClose(borrowRate(1, { base: 0.02, slopeLow: 0.1, slopeHigh: 5, kink: 1 }), 0.12);
  });

  test('behavior: non-decreasing in utilization', () => {
    fc.assert(
      fc.property(arbitraryCurve, fraction, fraction, (c, a, b) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        return borrowRate(lo, c) <= borrowRate(hi, c);
      }),
    );
  });

  test('error: utilization outside [0, 1]', () => {
    assert.throws(() => borrowRate(-0.1, curve), RangeError);
    assert.throws(() => borrowRate(1.01, curve), RangeError);
    assert.throws(() => borrowRate(Number.NaN, curve), RangeError);
  });

  test('error: negative slope or kink out of range', () => {
    assert.throws(() => borrowRate(0.5, { ...curve, slopeLow: -0.01 }), RangeError);
    assert.throws(() => borrowRate(0.5, { ...curve, kink: 0 }), RangeError);
    assert.throws(() => borrowRate(0.5, { ...curve, kink: 1.2 }), RangeError);
  });
});

describe('supplyRate', () => {
  test('default: borrow rate x utilization x (1 - reserveFactor)', () => {
    // 0.11 x 0.9 x (1 - 0.1) = 0.0891
    assertClose(supplyRate(0.11, 0.9, 0.1), 0.0891);
  });

  test('behavior: nothing borrowed earns nothing', () => {
    assert.equal(supplyRate(0.05, 0, 0.1), 0);
  });

  test('behavior: never above the borrow rate', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 10, noNaN: true }), fraction, fraction, (rate, u, rf) => {
        return supplyRate(rate, u, rf) <= rate;
      }),
    );
  });

  test('error: reserve factor or utilization outside [0, 1], negative rate', () => {
    assert.throws(() => supplyRate(0.05, 0.5, 1.5), RangeError);
    assert.throws(() => supplyRate(0.05, -1, 0.1), RangeError);
    assert.throws(() => supplyRate(-0.05, 0.5, 0.1), RangeError);
  });
});

describe('rateToApy', () => {
  test('default: continuous compounding e^rate - 1', () => {
    // e^0.05 - 1 = 0.051271096376024...
    assertClose(rateToApy(0.05), 0.05127109637602403);
    // e^ln 2 - 1 = 1: a rate of ln 2 doubles in a year
    assertClose(rateToApy(Math.LN2), 1);
  });

  test('behavior: zero rate is zero APY, APY is at least the rate', () => {
    assert.equal(rateToApy(0), 0);
    fc.assert(fc.property(fc.double({ min: 0, max: 5, noNaN: true }), (r) => rateToApy(r) >= r));
  });
});

describe('rates together', () => {
  test('behavior: borrow APY non-decreasing in utilization', () => {
    fc.assert(
      fc.property(arbitraryCurve, fraction, fraction, (c, a, b) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        return rateToApy(borrowRate(lo, c)) <= rateToApy(borrowRate(hi, c));
      }),
    );
  });

  test('behavior: supply APY never above borrow APY', () => {
    fc.assert(
      fc.property(arbitraryCurve, fraction, fraction, (c, u, rf) => {
        const borrow = borrowRate(u, c);
        return rateToApy(supplyRate(borrow, u, rf)) <= rateToApy(borrow);
      }),
    );
  });
});
