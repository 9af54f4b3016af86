import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { liquidate } from '../../src/domain/liquidation.ts';
import { healthFactor } from '../../src/domain/metrics.ts';
import {
  concentration,
  correlationGroup,
  healthFactorScale,
  liquidationBonus,
  liquidationTotals,
  shockResolver,
  underwaterHealthFactor,
} from '../../src/domain/stress.ts';

const close = (a: number, b: number, eps = 1e-9) =>
  assert.ok(Math.abs(a - b) <= eps * Math.max(1, Math.abs(b)), `${a} != ${b}`);

describe('liquidationBonus', () => {
  test("Morpho: the liquidation incentive factor of the market's lltv", () => {
    close(liquidationBonus('morpho', 0.86), 1 / (0.3 * 0.86 + 0.7) - 1); // 0.0438413...
    close(liquidationBonus('morpho', 0.945), 1 / (0.3 * 0.945 + 0.7) - 1); // 0.0168...
    close(liquidationBonus('morpho', 0.385), 0.15); // capped at 1.15
  });
  test('pooled protocols: 5 %', () => {
    for (const p of ['aave', 'spark', 'compound', 'euler', 'fluid'] as const)
      assert.equal(liquidationBonus(p, 0.8), 0.05);
  });
});

describe('liquidationTotals', () => {
  test('covered: debt repaid, debt x (1 + bonus) seized, no bad debt', () => {
    // collateral 100, debt 90, bonus 5 %: 94.5 seized <= 100
    const t = liquidationTotals(
      { positions: 1, collateralUsd: 100, debtUsd: 90 },
      { positions: 0, collateralUsd: 0, debtUsd: 0 },
      0.05,
    );
    close(t.collateralSeizedUsd, 94.5);
    close(t.debtRepaidUsd, 90);
    assert.equal(t.badDebtUsd, 0);
  });
  test('underwater: all collateral seized, collateral / (1 + bonus) repaid, the rest bad debt', () => {
    // collateral 90, debt 90: 90 / 1.05 = 85.714285... repaid, 4.285714... bad debt
    const s = { positions: 1, collateralUsd: 90, debtUsd: 90 };
    const t = liquidationTotals(s, s, 0.05);
    close(t.collateralSeizedUsd, 90);
    close(t.debtRepaidUsd, 85.71428571428571);
    close(t.badDebtUsd, 4.285714285714285);
  });
  test('property: matches liquidate() at full close for every position, summed', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.double({ min: 1, max: 1e6, noNaN: true }),
            fc.double({ min: 0.3, max: 3, noNaN: true }),
          ),
          {
            minLength: 1,
            maxLength: 20,
          },
        ),
        fc.double({ min: 0.3, max: 0.95, noNaN: true }),
        fc.double({ min: 0, max: 0.15, noNaN: true }),
        (positions, lltv, bonus) => {
          // Each: debt, and collateral as a multiple of the debt; only liquidatable ones (hf < 1).
          const liq = { positions: 0, collateralUsd: 0, debtUsd: 0 };
          const under = { positions: 0, collateralUsd: 0, debtUsd: 0 };
          const want = { seized: 0, repaid: 0, bad: 0 };
          for (const [debt, ratio] of positions) {
            const collateral = debt * ratio;
            const hf = healthFactor(collateral, lltv, debt);
            if (!(hf < 1)) continue;
            liq.positions++;
            liq.collateralUsd += collateral;
            liq.debtUsd += debt;
            if (hf < underwaterHealthFactor(lltv, bonus)) {
              under.positions++;
              under.collateralUsd += collateral;
              under.debtUsd += debt;
            }
            // USD prices of 1: token amounts are USD amounts; hf < 0.95 forces full close.
            const o = liquidate(collateral, debt, 0.5, 1, 1, { closeFactor: 1, liquidationBonus: bonus });
            want.seized += o.seized;
            want.repaid += o.repaid;
            want.bad += o.badDebt;
          }
          const t = liquidationTotals(liq, under, bonus);
          close(t.collateralSeizedUsd, want.seized, 1e-7);
          close(t.debtRepaidUsd, want.repaid, 1e-7);
          close(t.badDebtUsd, want.bad, 1e-7);
        },
      ),
    );
  });
});

describe('concentration', () => {
  test('known answers: shares, top 10, Herfindahl', () => {
    // 50, 30, 20: shares .5 .3 .2, HHI .25 + .09 + .04 = .38
    const c = concentration([50, 30, 20]);
    assert.equal(c.borrowers, 3);
    close(c.top10Share, 1);
    close(c.herfindahl, 0.38);
  });
  test('top 10 of 12 equal borrowers: 10 / 12; HHI 1 / 12', () => {
    const c = concentration(Array(12).fill(5));
    close(c.top10Share, 10 / 12);
    close(c.herfindahl, 1 / 12);
  });
  test('behavior: no debt, zeros; non-positive debts ignored', () => {
    assert.deepEqual(concentration([]), { borrowers: 0, top10Share: 0, herfindahl: 0 });
    assert.deepEqual(concentration([0, -1, 100]), { borrowers: 1, top10Share: 1, herfindahl: 1 });
  });
  test('property: 1 / n <= HHI <= top10Share-bounded, within 0..1', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0.01, max: 1e9, noNaN: true }), { minLength: 1, maxLength: 50 }),
        (d) => {
          const c = concentration(d);
          assert.ok(c.herfindahl >= 1 / d.length - 1e-12 && c.herfindahl <= 1 + 1e-12);
          assert.ok(c.top10Share > 0 && c.top10Share <= 1);
        },
      ),
    );
  });
});

describe('shockResolver', () => {
  const move = shockResolver([
    { asset: 'WETH', change: -0.2 },
    { asset: 'wbtc', change: -0.15 },
    { asset: 'weETH', change: -0.3 },
  ]);
  test('an asset shocked by name takes its shock, case-insensitively', () => {
    assert.deepEqual(move('weth'), { change: -0.2, via: 'WETH' });
    assert.deepEqual(move('WBTC'), { change: -0.15, via: 'wbtc' });
  });
  test('correlated assets follow their base unless shocked themselves', () => {
    assert.deepEqual(move('wstETH'), { change: -0.2, via: 'WETH' });
    assert.deepEqual(move('cbBTC'), { change: -0.15, via: 'wbtc' });
    assert.deepEqual(move('weETH'), { change: -0.3, via: 'weETH' });
  });
  test('others are unmoved; ETHFI is not an ETH staking token', () => {
    assert.deepEqual(move('USDC'), { change: 0, via: null });
    assert.deepEqual(move('ETHFI'), { change: 0, via: null });
    assert.equal(correlationGroup('ETHFI'), null);
  });
  test('a group named by its name moves its family', () => {
    assert.deepEqual(shockResolver([{ asset: 'ETH', change: -0.1 }])('rETH'), { change: -0.1, via: 'ETH' });
    assert.deepEqual(shockResolver([{ asset: 'BTC', change: -0.1 }])('LBTC'), { change: -0.1, via: 'BTC' });
  });
  test('healthFactorScale: both sides move; a pair moving together is unchanged', () => {
    close(healthFactorScale(-0.2, 0), 0.8);
    close(healthFactorScale(-0.2, -0.2), 1);
    close(healthFactorScale(0, 0.25), 0.8);
  });
});
