/**
 * Aave's account arithmetic as each generation of its code rounds it (GenericLogic's
 * `calculateUserAccountData`): v3.0 to v3.4 (anvil runs v3.0: its figures are compared to the
 * contract's there) and v3.5 on (collateral rounded down, debt up, the health factor from the
 * unrounded weighted sum), and e-mode membership by the reserve's category (v3.0–3.1) or the
 * category's collateral bitmap (v3.2 on). Expected figures worked out by hand from the Solidity.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { accountValues } from '../../src/ingest/chain/aave-accounts.ts';
import {
  type AaveAccount,
  type AavePoolRead,
  type AaveReserve,
  RAY,
  reserveConfig,
} from '../../src/ingest/chain/aave-types.ts';

/** A configuration word: LTV, threshold, bonus, decimals, active, borrowing, e-mode category. */
function word(o: { lt: number; decimals: number; category: number }): bigint {
  return (
    7000n |
    (BigInt(o.lt) << 16n) |
    (10500n << 32n) |
    (BigInt(o.decimals) << 48n) |
    (1n << 56n) |
    (1n << 58n) |
    (BigInt(o.category) << 168n)
  );
}

function reserve(id: number, over: Partial<AaveReserve> & { word: bigint }): AaveReserve {
  const config = reserveConfig(over.word);
  return {
    asset: `0x${String(id).repeat(40)}`,
    id,
    aToken: '0xa',
    variableDebt: '0xv',
    stableDebt: '0x0000000000000000000000000000000000000000',
    token: { address: '', symbol: `R${id}`, name: '', decimals: config.decimals },
    config,
    liquidityRate: 0n,
    variableBorrowRate: 0n,
    income: RAY,
    debtIndex: RAY,
    price: 100_000_000n,
    source: null,
    totalSupply: 0n,
    totalDebt: 0n,
    variableDebtTotal: 0n,
    incentives: { supply: null, borrow: null },
    rewards: { supply: [], borrow: [] },
    ...over,
  };
}

// Reserve 0 (18 decimals, threshold 78 %, in category 1 by its configuration) lent as collateral;
// reserve 1 (6 decimals) borrowed. Indices chosen so that each rounding shows.
const collateral = reserve(0, {
  word: word({ lt: 7800, decimals: 18, category: 1 }),
  income: (RAY * 105n) / 100n + 123_456_789n,
  price: 99_990_000n,
});
const loan = reserve(1, {
  word: word({ lt: 8000, decimals: 6, category: 0 }),
  debtIndex: (RAY * 11n) / 10n + 7n,
});
const account: AaveAccount = {
  // bit 2·0+1: reserve 0 as collateral; bit 2·1: borrowing reserve 1
  config: (1n << 1n) | (1n << 2n),
  eMode: 1,
  balances: new Map([
    [collateral.asset, { collateral: 1000n * 10n ** 18n + 1n, variable: 0n, stable: 0n }],
    [loan.asset, { collateral: 0n, variable: 800_000_003n, stable: 0n }],
  ]),
};
const pool = (
  code: AavePoolRead['code'],
  bitmap: bigint | null,
): Pick<AavePoolRead, 'reserves' | 'eModes' | 'code'> => ({
  code,
  reserves: [collateral, loan],
  eModes: new Map([
    [
      1,
      {
        liquidationThreshold: 9500n,
        priceSource: '0x0000000000000000000000000000000000000000',
        collateralBitmap: bitmap,
        price: 0n,
      },
    ],
  ]),
});

test("behavior: v3.0 rounds balances half up and the average threshold down (e-mode by the reserve's category)", () => {
  const v = accountValues(pool({ bitmaps: false, rounding: 'v3.0', flagged: false }, null), account);
  assert.equal(v.collateral.get(collateral.asset)!.amount, 1_050_000_000_000_000_000_125n);
  assert.equal(v.collateral.get(collateral.asset)!.value, 104_989_500_000n);
  assert.equal(v.debt.get(loan.asset)!.amount, 880_000_003n);
  assert.equal(v.debt.get(loan.asset)!.value, 88_000_000_300n);
  assert.equal(v.healthFactor, 1_133_409_371_136_104_417n);
});

test('behavior: v3.5 rounds collateral down and debt up, and divides the weighted sum once', () => {
  const v = accountValues(pool({ bitmaps: true, rounding: 'v3.5', flagged: false }, 1n), account);
  assert.equal(v.collateral.get(collateral.asset)!.amount, 1_050_000_000_000_000_000_124n);
  assert.equal(v.debt.get(loan.asset)!.amount, 880_000_004n);
  assert.equal(v.debt.get(loan.asset)!.value, 88_000_000_400n);
  assert.equal(v.healthFactor, 1_133_409_369_848_139_227n);
});

test('behavior: from v3.2 a category counts the reserves of its bitmap, whatever their configuration names', () => {
  // Reserve 0's configuration still names category 1, but the bitmap leaves it out: its own 78 %.
  const v = accountValues(pool({ bitmaps: true, rounding: 'v3.0', flagged: false }, 0n), account);
  assert.equal(v.healthFactor, 930_588_746_827_538_363n);
  // No debt: no health factor (Aave's type(uint256).max).
  const none = accountValues(pool({ bitmaps: true, rounding: 'v3.0', flagged: false }, 1n), {
    ...account,
    config: 1n << 1n,
  });
  assert.equal(none.healthFactor, null);
});

test("behavior: from v3.6 a collateral whose own threshold is 0 counts at its e-mode category's", () => {
  // Reserve 0 listed with a threshold of 0 (collateral only in e-mode), in the category's bitmap.
  const eModeOnly = reserve(0, {
    word: word({ lt: 0, decimals: 18, category: 1 }),
    income: collateral.income,
    price: collateral.price,
  });
  const read = (flagged: boolean) => ({
    ...pool({ bitmaps: true, rounding: 'v3.5', flagged }, 1n),
    reserves: [eModeOnly, loan],
  });
  assert.equal(accountValues(read(true), account).healthFactor, 1_133_409_369_848_139_227n);
  // before v3.6 it counts for nothing: the debt stands alone
  assert.equal(accountValues(read(false), account).healthFactor, 0n);
});
