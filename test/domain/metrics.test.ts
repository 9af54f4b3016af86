import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  accountHealthFactor,
  available,
  collateralToHealthFactor,
  distanceToLiq,
  healthFactor,
  leverage,
  liquidationPrice,
  maxLeverage,
  moveToLiquidation,
  repayToHealthFactor,
  utilization,
} from '../../src/domain/metrics.ts';

function assertClose(actual: number, expected: number, tolerance = 1e-12): void {
  assert.ok(
    Math.abs(actual - expected) <= tolerance,
    `expected ${actual} to be within ${tolerance} of ${expected}`,
  );
}

/** Finite, non-negative USD amounts up to a trillion. */
const usd = fc.double({ min: 0, max: 1e12, noNaN: true, noDefaultInfinity: true });
const positiveUsd = fc.double({ min: 0.01, max: 1e12, noNaN: true, noDefaultInfinity: true });
/** A valid lltv: 0 <= lltv < 1. */
const lltv = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });

describe('available', () => {
  test('default: supply minus borrow', () => {
    // 1,000 - 800 = 200
    assert.equal(available(1000, 800), 200);
  });

  test('behavior: not clamped, bad source data shows as negative', () => {
    assert.equal(available(100, 150), -50);
  });
});

describe('utilization', () => {
  test('default: borrow over supply', () => {
    // 800 / 1,000 = 0.8
    assert.equal(utilization(1000, 800), 0.8);
  });

  test('behavior: an empty market has utilization 0', () => {
    assert.equal(utilization(0, 0), 0);
    assert.equal(utilization(0, 500), 0);
    fc.assert(fc.property(fc.double({ noNaN: true }), (borrow) => utilization(0, borrow) === 0));
  });

  test('behavior: nothing borrowed is 0, over-borrowed is clamped to 1', () => {
    assert.equal(utilization(1000, 0), 0);
    assert.equal(utilization(1000, 1200), 1);
  });

  test('behavior: always within [0, 1] for finite amounts', () => {
    const amount = fc.double({ noNaN: true, noDefaultInfinity: true });
    fc.assert(
      fc.property(amount, amount, (supply, borrow) => {
        const u = utilization(supply, borrow);
        return u >= 0 && u <= 1;
      }),
    );
  });
});

describe('maxLeverage', () => {
  test('default: 1 / (1 - lltv)', () => {
    // 1 / (1 - 0.86) = 1 / 0.14 = 7.142857...
    assertClose(maxLeverage(0.86), 7.142857142857143);
    // 1 / (1 - 0.5) = 2; 1 / (1 - 0.915) = 11.764705...
    assert.equal(maxLeverage(0.5), 2);
    assertClose(maxLeverage(0.915), 11.764705882352942, 1e-9);
  });

  test('behavior: lltv 0 allows no leverage', () => {
    assert.equal(maxLeverage(0), 1);
  });

  test('behavior: at least 1 and non-decreasing in lltv', () => {
    fc.assert(
      fc.property(lltv, lltv, (a, b) => {
        const [low, high] = a <= b ? [a, b] : [b, a];
        return maxLeverage(low) >= 1 && maxLeverage(low) <= maxLeverage(high);
      }),
    );
  });

  test('behavior: strictly increasing for distinct lltvs', () => {
    assert.ok(maxLeverage(0.5) < maxLeverage(0.86));
    assert.ok(maxLeverage(0.86) < maxLeverage(0.945));
  });

  test('error: lltv 1 has no finite bound', () => {
    assert.throws(() => maxLeverage(1), RangeError);
  });

  test('error: negative lltv', () => {
    assert.throws(() => maxLeverage(-0.1), RangeError);
  });

  test('error: lltv above 1 or not a number', () => {
    assert.throws(() => maxLeverage(1.5), RangeError);
    assert.throws(() => maxLeverage(Number.NaN), RangeError);
    assert.throws(() => maxLeverage(Number.POSITIVE_INFINITY), RangeError);
  });
});

describe('healthFactor', () => {
  test('default: collateral x lltv / borrow', () => {
    // 10,000 x 0.86 / 8,000 = 8,600 / 8,000 = 1.075
    assertClose(healthFactor(10_000, 0.86, 8_000), 1.075);
    // 10,000 x 0.86 / 9,000 = 0.9555... (liquidatable)
    assertClose(healthFactor(10_000, 0.86, 9_000), 0.9555555555555556);
  });

  test('behavior: zero debt is never at risk', () => {
    assert.equal(healthFactor(10_000, 0.86, 0), Number.POSITIVE_INFINITY);
    assert.equal(healthFactor(0, 0.86, 0), Number.POSITIVE_INFINITY);
  });

  test('behavior: no collateral with debt is 0', () => {
    assert.equal(healthFactor(0, 0.86, 100), 0);
  });

  test('behavior: equals the account health factor of a single leg', () => {
    fc.assert(
      fc.property(usd, lltv, usd, (collateral, l, debt) =>
        Object.is(
          healthFactor(collateral, l, debt),
          accountHealthFactor([{ valueUsd: collateral, liquidationThreshold: l }], debt),
        ),
      ),
    );
  });

  test('behavior: non-decreasing in collateral', () => {
    fc.assert(
      fc.property(usd, usd, lltv, positiveUsd, (a, b, l, debt) => {
        const [low, high] = a <= b ? [a, b] : [b, a];
        return healthFactor(low, l, debt) <= healthFactor(high, l, debt);
      }),
    );
  });

  test('behavior: non-increasing in debt', () => {
    fc.assert(
      fc.property(usd, lltv, usd, usd, (collateral, l, a, b) => {
        const [low, high] = a <= b ? [a, b] : [b, a];
        return healthFactor(collateral, l, low) >= healthFactor(collateral, l, high);
      }),
    );
  });
});

describe('accountHealthFactor', () => {
  test('default: sum of collateral x liquidation threshold over debt', () => {
    // WETH 10,000 x 0.83 = 8,300; WBTC 5,000 x 0.78 = 3,900; (8,300 + 3,900) / 10,000 = 1.22
    const legs = [
      { valueUsd: 10_000, liquidationThreshold: 0.83 },
      { valueUsd: 5_000, liquidationThreshold: 0.78 },
    ];
    assertClose(accountHealthFactor(legs, 10_000), 1.22);
  });

  test('behavior: zero debt is never at risk', () => {
    assert.equal(
      accountHealthFactor([{ valueUsd: 1, liquidationThreshold: 0.8 }], 0),
      Number.POSITIVE_INFINITY,
    );
    assert.equal(accountHealthFactor([], 0), Number.POSITIVE_INFINITY);
  });

  test('behavior: no collateral legs with debt is 0', () => {
    assert.equal(accountHealthFactor([], 100), 0);
  });

  test('behavior: adding a collateral leg never lowers the health factor', () => {
    const leg = fc.record({ valueUsd: usd, liquidationThreshold: lltv });
    fc.assert(
      fc.property(fc.array(leg, { maxLength: 5 }), leg, positiveUsd, (legs, extra, debt) => {
        return accountHealthFactor([...legs, extra], debt) >= accountHealthFactor(legs, debt);
      }),
    );
  });
});

describe('leverage', () => {
  test('default: collateral over equity', () => {
    // 10,000 / (10,000 - 8,000) = 10,000 / 2,000 = 5
    assert.equal(leverage(10_000, 8_000), 5);
    // no debt: 1x
    assert.equal(leverage(10_000, 0), 1);
  });

  test('behavior: null without positive equity', () => {
    assert.equal(leverage(8_000, 8_000), null);
    assert.equal(leverage(8_000, 10_000), null);
    assert.equal(leverage(0, 0), null);
  });

  test('behavior: null iff collateral <= debt, otherwise at least 1', () => {
    fc.assert(
      fc.property(usd, usd, (collateral, debt) => {
        const value = leverage(collateral, debt);
        if (collateral <= debt) return value === null;
        return value !== null && value >= 1;
      }),
    );
  });
});

describe('distanceToLiq', () => {
  test('default: 1 - 1 / healthFactor', () => {
    // 1 - 1 / 1.075 = 0.075 / 1.075 = 0.0697674418...
    assertClose(distanceToLiq(1.075), 0.06976744186046513);
    // 1 - 1 / 2 = 0.5: the collateral price can halve
    assert.equal(distanceToLiq(2), 0.5);
  });

  test('behavior: zero at the liquidation point, negative below it', () => {
    assert.equal(distanceToLiq(1), 0);
    // 1 - 1 / 0.8 = -0.25
    assertClose(distanceToLiq(0.8), -0.25);
  });

  test('behavior: a position without debt has distance 1', () => {
    assert.equal(distanceToLiq(Number.POSITIVE_INFINITY), 1);
  });

  test('behavior: chains with healthFactor for the hand-checked position', () => {
    // HF 1.075 from 10,000 x 0.86 / 8,000, then 1 - 1 / 1.075
    assertClose(distanceToLiq(healthFactor(10_000, 0.86, 8_000)), 0.0697674418604651);
  });

  test('behavior: <= 0 iff the health factor is <= 1', () => {
    fc.assert(fc.property(fc.double({ min: 0, noNaN: true }), (hf) => distanceToLiq(hf) <= 0 === hf <= 1));
  });

  test('behavior: below 1 for any health factor of a realistic size', () => {
    // Above ~1e16, 1 / hf is lost to rounding and the result is 1, as for no debt.
    fc.assert(fc.property(fc.double({ min: 0, max: 1e12, noNaN: true }), (hf) => distanceToLiq(hf) < 1));
  });
});

describe('liquidationPrice and moveToLiquidation', () => {
  test('default: hand-checked', () => {
    // hf 2: the collateral may fall 50 %, the debt rise 100 %
    assert.equal(moveToLiquidation(2, 'collateral'), -0.5);
    assert.equal(moveToLiquidation(2, 'debt'), 1);
    assert.equal(liquidationPrice(4000, 2), 2000);
    assert.equal(liquidationPrice(1, 2, 'debt'), 2);
    // liquidatable already (hf 0.8): the collateral would have to rise 25 %
    assert.ok(Math.abs(moveToLiquidation(0.8, 'collateral')! - 0.25) < 1e-12);
  });

  test('behavior: at the liquidation price the health factor is 1', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 1, max: 1e6, noNaN: true }),
        fc.double({ min: 1, max: 1e9, noNaN: true }),
        fc.double({ min: 0.1, max: 0.95, noNaN: true }),
        fc.double({ min: 1, max: 1e9, noNaN: true }),
        (price, collateral, lltv, debt) => {
          const hf = healthFactor(collateral, lltv, debt);
          const p = liquidationPrice(price, hf)!;
          const atP = healthFactor((collateral * p) / price, lltv, debt);
          return Math.abs(atP - 1) < 1e-9;
        },
      ),
    );
  });

  test('error: no debt, no liquidation price; a non-positive price has none', () => {
    assert.equal(liquidationPrice(4000, Number.POSITIVE_INFINITY), null);
    assert.equal(moveToLiquidation(Number.POSITIVE_INFINITY, 'debt'), null);
    assert.equal(liquidationPrice(0, 1.5), null);
  });
});

describe('repayToHealthFactor', () => {
  test('known answer: debt 10,000 at health factor 1.04 to 1.25 repays 10,000 x (1 - 1.04 / 1.25) = 1,680', () => {
    assert.ok(Math.abs(repayToHealthFactor(10_000, 1.04, 1.25) - 1_680) < 1e-9);
  });
  test('behavior: at or above the target nothing; without debt nothing', () => {
    assert.equal(repayToHealthFactor(10_000, 1.25, 1.25), 0);
    assert.equal(repayToHealthFactor(10_000, 2, 1.25), 0);
    assert.equal(repayToHealthFactor(0, 0.5, 1.25), 0);
  });
  test('property: repaying it leaves the debt at which the health factor (collateral x lltv / debt) is the target', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 1, max: 1e9, noNaN: true }),
        fc.double({ min: 1, max: 1e9, noNaN: true }),
        fc.double({ min: 0.3, max: 0.95, noNaN: true }),
        fc.double({ min: 1.01, max: 5, noNaN: true }),
        (collateral, debt, l, target) => {
          const hf = healthFactor(collateral, l, debt);
          const repay = repayToHealthFactor(debt, hf, target);
          if (hf >= target) return repay === 0;
          // The debt left is what the target allows, collateral x lltv / target (to the debt's precision).
          return Math.abs(debt - repay - (collateral * l) / target) <= 1e-9 * debt;
        },
      ),
    );
  });
});

describe('collateralToHealthFactor', () => {
  test('known answer: collateral 13,000 at 1.04 to 1.25 adds 13,000 x (1.25 / 1.04 - 1) = 2,625', () => {
    assert.ok(Math.abs(collateralToHealthFactor(13_000, 1.04, 1.25)! - 2_625) < 1e-9);
  });
  test('behavior: 0 at or above the target; null without collateral', () => {
    assert.equal(collateralToHealthFactor(13_000, 1.3, 1.25), 0);
    assert.equal(collateralToHealthFactor(0, 0, 1.25), null);
  });
  test('property: adding it brings the health factor to the target', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 1, max: 1e9, noNaN: true }),
        fc.double({ min: 1, max: 1e9, noNaN: true }),
        fc.double({ min: 0.3, max: 0.95, noNaN: true }),
        fc.double({ min: 1.01, max: 5, noNaN: true }),
        (collateral, debt, l, target) => {
          const hf = healthFactor(collateral, l, debt);
          const add = collateralToHealthFactor(collateral, hf, target)!;
          if (hf >= target) return add === 0;
          return Math.abs(healthFactor(collateral + add, l, debt) / target - 1) < 1e-9;
        },
      ),
    );
  });
});
