import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  accountHealth,
  accountLiquidationPrice,
  accountPoolOf,
  accountTotals,
  closeFactorOf,
  eulerLiquidationBonus,
  evcOwnerPrefix,
  evcSubAccount,
  liquidationRatio,
} from '../../src/domain/accounts.ts';
import { absorbAccount, liquidateAccount } from '../../src/domain/liquidation.ts';
import { liquidationPrice } from '../../src/domain/metrics.ts';

function close(actual: number | null, expected: number, tolerance = 1e-9): void {
  assert.ok(actual !== null, `expected ${expected}, got null`);
  assert.ok(
    Math.abs(actual - expected) <= tolerance * Math.max(1, Math.abs(expected)),
    `${actual} vs ${expected}`,
  );
}

/** A leg: collateral USD at threshold lt, debt USD. */
const leg = (collateralUsd: number, lt: number, debtUsd: number) => ({
  collateralUsd,
  weightedCollateralUsd: collateralUsd * lt,
  debtUsd,
});

describe('account health, by protocol (hand-checked)', () => {
  test('default: Aave — WETH and WBTC backing USDC in one pool', () => {
    // WETH $10,000 at LT 0.83 (8,300) owing $6,000; WBTC $5,000 at LT 0.78 (3,900) owing $2,000.
    const t = accountTotals([leg(10_000, 0.83, 6_000), leg(5_000, 0.78, 2_000)]);
    assert.deepEqual(t, { collateralUsd: 15_000, weightedCollateralUsd: 12_200, debtUsd: 8_000 });
    const h = accountHealth(t);
    close(h.healthFactor, 1.525); // 12,200 / 8,000
    close(h.leverage, 15_000 / 7_000); // 2.142857…
    close(h.distanceToLiq, 1 - 1 / 1.525); // 0.3442623…
    // WETH at $2,500: (3,900 + 8,300 r) / 8,000 = 1 → r = 4,100 / 8,300 → $1,234.94
    close(
      accountLiquidationPrice(2_500, t, { weightedCollateralUsd: 8_300, debtUsd: 0 }),
      2_500 * (4_100 / 8_300),
    );
    // WBTC: the WETH alone (8,300) covers the 8,000 of debt — no WBTC price liquidates.
    assert.equal(accountLiquidationPrice(100_000, t, { weightedCollateralUsd: 3_900, debtUsd: 0 }), null);
    // USDC (the debt) rising to $1.525 liquidates.
    close(accountLiquidationPrice(1, t, { weightedCollateralUsd: 0, debtUsd: 8_000 }), 1.525);
  });

  test('default: Compound — one comet, WETH and COMP collateral, USDC base', () => {
    // WETH $20,000 at liquidateCollateralFactor 0.9 (18,000); COMP $1,000 at 0.7 (700); $10,000 owed.
    const t = accountTotals([leg(20_000, 0.9, 9_000), leg(1_000, 0.7, 1_000)]);
    const h = accountHealth(t);
    close(h.healthFactor, 1.87);
    close(h.leverage, 21_000 / 11_000);
    // COMP: (18,000 + 700 r) / 10,000 — above 1 at any COMP price.
    assert.equal(liquidationRatio(t, { weightedCollateralUsd: 700, debtUsd: 0 }), null);
    // WETH: (700 + 18,000 r) = 10,000 → r = 9,300 / 18,000 = 0.51667
    close(liquidationRatio(t, { weightedCollateralUsd: 18_000, debtUsd: 0 }), 9_300 / 18_000);
  });

  test('default: Euler — a sub-account with two collateral vaults under one controller', () => {
    // wstETH $8,000 at LLTV 0.93 (7,440), weETH $2,000 at 0.9 (1,800); WETH debt $9,000.
    const t = accountTotals([leg(8_000, 0.93, 7_200), leg(2_000, 0.9, 1_800)]);
    const h = accountHealth(t);
    close(h.healthFactor, 9_240 / 9_000); // 1.026667
    close(h.leverage, 10_000 / 1_000); // 10
    // weETH falling alone: 7,440 + 1,800 r = 9,000 → r = 0.86667
    close(liquidationRatio(t, { weightedCollateralUsd: 1_800, debtUsd: 0 }), 1_560 / 1_800);
  });

  test('behavior: an isolated position (everything in one token) gives price / hf, as liquidationPrice', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 1, max: 1e7, noNaN: true }),
        fc.double({ min: 0.05, max: 0.95, noNaN: true }),
        fc.double({ min: 1, max: 1e7, noNaN: true }),
        fc.double({ min: 0.01, max: 1e5, noNaN: true }),
        (c, lt, d, price) => {
          const t = accountTotals([leg(c, lt, d)]);
          const hf = accountHealth(t).healthFactor;
          close(
            accountLiquidationPrice(price, t, { weightedCollateralUsd: c * lt, debtUsd: 0 }),
            liquidationPrice(price, hf, 'collateral')!,
            1e-9,
          );
        },
      ),
    );
  });

  test('behavior: at the liquidation price the account health factor is 1', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            c: fc.double({ min: 1, max: 1e6, noNaN: true }),
            lt: fc.double({ min: 0.1, max: 0.95, noNaN: true }),
            // No debt, or at least a billionth of a dollar: below that, amounts reach subnormal
            // doubles (a debt of 7e-323 holds one significant bit) and no ratio is exact.
            d: fc.oneof(fc.constant(0), fc.double({ min: 1e-9, max: 1e6, noNaN: true })),
          }),
          { minLength: 1, maxLength: 5 },
        ),
        fc.nat(4),
        (legs, pick) => {
          const t = accountTotals(legs.map((l) => leg(l.c, l.lt, l.d)));
          const x = legs[pick % legs.length]!;
          const exposure = { weightedCollateralUsd: x.c * x.lt, debtUsd: 0 };
          const r = liquidationRatio(t, exposure);
          if (r === null) return;
          const hf =
            (t.weightedCollateralUsd - exposure.weightedCollateralUsd + exposure.weightedCollateralUsd * r) /
            t.debtUsd;
          close(hf, 1, 1e-7);
        },
      ),
    );
  });

  test('behavior: no debt, no liquidation price; leverage null without equity', () => {
    const t = accountTotals([leg(1_000, 0.8, 0)]);
    assert.equal(accountHealth(t).healthFactor, Number.POSITIVE_INFINITY);
    assert.equal(accountHealth(t).distanceToLiq, 1);
    assert.equal(liquidationRatio(t, { weightedCollateralUsd: 800, debtUsd: 0 }), null);
    assert.equal(accountHealth(accountTotals([leg(1_000, 0.8, 1_200)])).leverage, null);
  });
});

describe('accounts: pools and Euler sub-accounts', () => {
  test('default: the pool of a market', () => {
    assert.equal(accountPoolOf('aave', 'aave-1-0xpool_0xc_0xl'), '0xpool');
    assert.equal(accountPoolOf('spark', 'spark-100-0xpool_0xc_0xl'), '0xpool');
    assert.equal(accountPoolOf('compound', 'compound-8453-0xcomet_0xc'), '0xcomet');
    assert.equal(accountPoolOf('euler', 'euler-1-0xvault_0xcollateral'), '0xvault');
    assert.equal(accountPoolOf('morpho', 'morpho-1-0xabc'), null);
    assert.equal(accountPoolOf('fluid', 'fluid-1-0xvault_3'), null);
  });

  test('default: sub-accounts share their owner’s first 19 bytes', () => {
    const owner = '0x1d9c89a15ad077862847110668ea4d608f9ad852';
    assert.equal(evcSubAccount(owner, 0), owner);
    assert.equal(evcSubAccount(owner, 1), '0x1d9c89a15ad077862847110668ea4d608f9ad853');
    assert.equal(evcSubAccount(owner, 255), '0x1d9c89a15ad077862847110668ea4d608f9ad8ad');
    assert.equal(evcOwnerPrefix(evcSubAccount(owner, 7)), evcOwnerPrefix(owner));
    assert.notEqual(evcOwnerPrefix('0x1d9c89a15ad077862847110668ea4d608f9ad952'), evcOwnerPrefix(owner));
    assert.throws(() => evcSubAccount(owner, 256), RangeError);
  });
});

describe('liquidation rules of accounts (hand-checked)', () => {
  test('default: close factors', () => {
    assert.equal(closeFactorOf('aave', 0.97, 5_000, 6_000), 0.5);
    assert.equal(closeFactorOf('aave', 0.94, 5_000, 6_000), 1, 'below 0.95: whole');
    assert.equal(closeFactorOf('aave', 0.97, 1_500, 6_000), 1, 'Aave 3.3: debt under $2,000');
    assert.equal(closeFactorOf('aave', 0.97, 5_000, 1_900), 1, 'Aave 3.3: collateral under $2,000');
    assert.equal(closeFactorOf('spark', 0.97, 1_500, 1_900), 0.5);
    assert.equal(closeFactorOf('compound', 0.99, 5_000, 6_000), 1);
    assert.equal(closeFactorOf('euler', 0.99, 5_000, 6_000), 1);
  });

  test('default: Euler’s discount is 1 - hf, capped', () => {
    close(eulerLiquidationBonus(0.9, 0.15), 1 / 0.9 - 1); // 11.11 %
    close(eulerLiquidationBonus(0.5, 0.15), 1 / 0.85 - 1); // 17.65 %
    close(eulerLiquidationBonus(0.99, 0.15), 1 / 0.99 - 1);
  });

  test('default: an Aave account keeps owing what one leg could not cover while collateral is left', () => {
    const [a, b] = liquidateAccount([
      // 1 WETH at $1,000 owing $900 at a 50 % close factor, 5 % bonus: $450 repaid, 0.4725 WETH taken.
      {
        collateral: 1,
        debt: 900,
        collateralPrice: 1_000,
        loanPrice: 1,
        closeFactor: 0.5,
        liquidationBonus: 0.05,
      },
      // 0.1 WETH ($100) owing $500, whole: all taken, $95.24 repaid; the rest stays owed.
      {
        collateral: 0.1,
        debt: 500,
        collateralPrice: 1_000,
        loanPrice: 1,
        closeFactor: 1,
        liquidationBonus: 0.05,
      },
    ]);
    close(a!.repaid, 450);
    close(a!.seized, 0.4725);
    close(a!.collateralLeft, 0.5275);
    close(a!.debtLeft, 450);
    close(b!.repaid, 100 / 1.05);
    close(b!.seized, 0.1);
    assert.equal(b!.badDebt, 0);
    close(b!.debtLeft, 500 - 100 / 1.05);
    // Alone, nothing is left: the rest is bad debt.
    const [c] = liquidateAccount([
      {
        collateral: 0.1,
        debt: 500,
        collateralPrice: 1_000,
        loanPrice: 1,
        closeFactor: 1,
        liquidationBonus: 0.05,
      },
    ]);
    close(c!.badDebt, 500 - 100 / 1.05);
    assert.equal(c!.debtLeft, 0);
  });

  test('default: Compound absorbs the account: repaid + bad debt = the debt absorbed', () => {
    // 10 WETH at $1,000 (factor 0.95: $9,500) and 0.5 WBTC at $20,000 (0.9: $9,000) against $31,000.
    const short = absorbAccount([
      {
        collateral: 10,
        debt: 15_500,
        collateralPrice: 1_000,
        loanPrice: 1,
        closeFactor: 1,
        liquidationBonus: 0.05,
      },
      {
        collateral: 0.5,
        debt: 15_500,
        collateralPrice: 20_000,
        loanPrice: 1,
        closeFactor: 1,
        liquidationBonus: 0.1,
      },
    ]);
    close(short.legs[0]!.repaid, 9_500);
    close(short.legs[1]!.repaid, 9_000);
    close(short.legs[0]!.badDebt, 12_500 * (9_500 / 18_500));
    close(short.legs[1]!.badDebt, 12_500 * (9_000 / 18_500));
    close(
      short.legs.reduce((s, l) => s + l.repaid + l.badDebt, 0),
      31_000,
    );
    assert.equal(short.surplus, 0);
    for (const l of short.legs) assert.deepEqual([l.collateralLeft, l.debtLeft], [0, 0]);
    // Covered: $18,500 against $10,000: all repaid, $8,500 credited as supply.
    const covered = absorbAccount([
      {
        collateral: 10,
        debt: 5_000,
        collateralPrice: 1_000,
        loanPrice: 1,
        closeFactor: 1,
        liquidationBonus: 0.05,
      },
      {
        collateral: 0.5,
        debt: 5_000,
        collateralPrice: 20_000,
        loanPrice: 1,
        closeFactor: 1,
        liquidationBonus: 0.1,
      },
    ]);
    close(covered.legs[0]!.repaid + covered.legs[1]!.repaid, 10_000);
    assert.equal(covered.legs[0]!.badDebt + covered.legs[1]!.badDebt, 0);
    close(covered.surplus, 8_500);
  });
});
