import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Catalog } from '../../src/data/catalog.ts';
import { RiskIndex } from '../../src/data/risk-index.ts';
import { evcSubAccount } from '../../src/domain/accounts.ts';
import { healthFactor } from '../../src/domain/metrics.ts';
import { PositionColumnsBuilder } from '../../src/domain/position-columns.ts';
import type { MarketRecord } from '../../src/domain/types.ts';
import { makeMarket } from '../helpers.ts';

/**
 * Accounts in the risk index: a wallet's positions in one Aave pool (one Compound comet, one
 * Euler controller vault) show the account's health factor, at any prices.
 */

const POOL = '0x87870bca3f3fd6335c3f4ce8392d69350b4fa4e2';
const WETH = '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2';
const WBTC = '0x2260fac5e5542a773aa44fbcfeaf7d193f53c599';
const USDC = '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48';
const VAULT = '0x797dd80692c3b2dadabce8e30c07fde5307d48a9';

function pair(protocol: 'aave' | 'euler', collateral: [string, string, number], lltv: number): MarketRecord {
  const [symbol, address, price] = collateral;
  const id = protocol === 'aave' ? `${POOL}_${address}_${USDC}` : `${VAULT}_${address}`;
  return makeMarket({
    uniqueKey: `${protocol}-1-${id}`,
    protocol,
    collateral: symbol,
    collateralAddress: address,
    collateralPrice: price,
    loan: 'USDC',
    loanAddress: USDC,
    loanPrice: 1,
    lltv,
  });
}

const wethUsdc = pair('aave', ['WETH', WETH, 2_500], 0.83);
const wbtcUsdc = pair('aave', ['WBTC', WBTC, 100_000], 0.78);
const eulerWeth = pair('euler', ['WETH', WETH, 2_500], 0.85);
const morpho = makeMarket({
  collateralAddress: WETH,
  collateralPrice: 2_500,
  loanAddress: USDC,
  loanPrice: 1,
  lltv: 0.86,
});
const markets = [wethUsdc, wbtcUsdc, eulerWeth, morpho];

const ALICE = '0x1d9c89a15ad077862847110668ea4d608f9ad852';
const BOB = '0x00000000000000000000000000000000000000b0';

function index() {
  const catalog = new Catalog(markets, 0);
  const b = new PositionColumnsBuilder(8);
  const add = (m: MarketRecord, user: string, collateralUsd: number, borrowUsd: number) =>
    b.push(catalog.ordOf(m.uniqueKey)!, {
      user,
      collateralUsd,
      borrowUsd,
      supplyUsd: 0,
      healthFactor: healthFactor(collateralUsd, m.lltv, borrowUsd),
    });
  // Alice's Aave account: WETH $10,000 (8,300) owing $6,000 and WBTC $5,000 (3,900) owing
  // $2,000: 12,200 / 8,000 = 1.525, though the pairs alone say 1.3833 and 1.95.
  add(wethUsdc, ALICE, 10_000, 6_000);
  add(wbtcUsdc, ALICE, 5_000, 2_000);
  // Bob in the same pool, one pair: his own account.
  add(wethUsdc, BOB, 1_000, 800);
  // Alice borrows on Euler through her sub-account 1.
  add(eulerWeth, evcSubAccount(ALICE, 1), 2_000, 1_600);
  // and on Morpho (isolated).
  add(morpho, ALICE, 1_000, 700);
  return { catalog, risk: new RiskIndex(catalog, b.build()) };
}

const near = (a: number, b: number, tol = 1e-4) => assert.ok(Math.abs(a - b) <= tol, `${a} vs ${b}`);

describe('RiskIndex accounts', () => {
  test('default: every position of an account shows its health factor, leverage and distance', () => {
    const { risk } = index();
    const views = [0, 1].map((i) => risk.view(i));
    for (const v of views) {
      near(v.healthFactor, 1.525);
      near(v.leverage!, 15_000 / 7_000);
      near(v.distanceToLiq, 1 - 1 / 1.525);
    }
    // Bob's own account: 1,000 x 0.83 / 800.
    near(risk.view(2).healthFactor, 1.0375);
    assert.equal(risk.accountOf(4), null, 'Morpho positions are isolated');
  });

  test('behavior: a price move of one collateral moves the whole account, other pools untouched', () => {
    const { risk, catalog } = index();
    // WBTC halves: 8,300 + 1,950 = 10,250 / 8,000.
    risk.applyPrices([{ chainId: 1, token: WBTC, ratio: 0.5 }]);
    near(risk.view(0).healthFactor, 10_250 / 8_000);
    near(risk.view(1).healthFactor, 10_250 / 8_000);
    near(risk.view(2).healthFactor, 1.0375);
    // WETH falls 40 %: Alice (4,980 + 1,950) / 8,000 = 0.86625, Bob 0.6225, Euler 0.6375, Morpho.
    risk.applyPrices([{ chainId: 1, token: WETH, ratio: 0.6 }]);
    // Bob 0.6225, Alice's sub-account 0.6375, Morpho 0.7371, then Alice's Aave account 0.86625
    // (its positions by debt, largest first).
    assert.deepEqual(risk.query({ healthFactorThreshold: 1, minBorrowUsd: 0, limit: 10 }), [2, 3, 4, 0, 1]);
    assert.deepEqual(risk.query({ healthFactorThreshold: 1, minBorrowUsd: 0, limit: 4 }), [2, 3, 4, 0]);
    near(risk.view(0).healthFactor, 0.86625);
    near(risk.view(1).healthFactor, 0.86625);
    // One pool's market: its positions by their accounts' health factors.
    const wbtcOnly = risk.query({
      healthFactorThreshold: 1,
      minBorrowUsd: 0,
      limit: 10,
      marketOrd: catalog.ordOf(wbtcUsdc.uniqueKey),
    });
    assert.deepEqual(wbtcOnly, [1]);
    assert.deepEqual(
      risk.query({ healthFactorThreshold: 1, minBorrowUsd: 0, limit: 10, protocol: 'aave' }),
      [2, 0, 1],
    );
  });

  test('behavior: a stress move reaches every position of the accounts holding the token', () => {
    const { risk, catalog } = index();
    const [wethOrd, wbtcOrd, eulerOrd] = [wethUsdc, wbtcUsdc, eulerWeth].map(
      (m) => catalog.ordOf(m.uniqueKey)!,
    );
    // WBTC -60 % alone: Alice 8,300 + 1,560 = 9,860 / 8,000 stays above 1; WETH -30 % with it:
    // 5,810 + 1,560 = 7,370 / 8,000 below 1, in both of her Aave markets.
    const moveWbtc = (o: number) => ({ c: o === wbtcOrd ? -0.6 : 0, l: 0 });
    assert.equal(risk.belowMoved(wbtcOrd!, moveWbtc, 1).positions, 0);
    const both = (o: number) => ({
      c: o === wbtcOrd ? -0.6 : o === wethOrd || o === eulerOrd ? -0.3 : 0,
      l: 0,
    });
    assert.equal(risk.belowMoved(wbtcOrd!, both, 1).positions, 1);
    assert.equal(risk.belowMoved(wethOrd!, both, 1).positions, 2, 'Alice and Bob in WETH/USDC');
  });

  test('behavior: a wallet’s positions include its Euler sub-accounts’, each naming its sub-account', () => {
    const { risk } = index();
    const mine = risk.positionsOf(ALICE);
    assert.deepEqual([...mine].sort(), [0, 1, 3, 4]);
    assert.equal(risk.view(3).user.address, evcSubAccount(ALICE, 1));
    // The sub-account sees its owner group too, an unrelated wallet nothing of Alice's.
    assert.ok(risk.positionsOf(evcSubAccount(ALICE, 1)).includes(3));
    assert.deepEqual(risk.positionsOf(BOB), [2]);
  });

  test('behavior: a position change re-prices its account', () => {
    const { risk, catalog } = index();
    // Alice repays the WBTC leg's debt: 12,200 / 6,000.
    risk.applyPositionChanges([
      {
        ord: catalog.ordOf(wbtcUsdc.uniqueKey)!,
        user: ALICE,
        collateralUsd: 5_000,
        borrowUsd: 0,
        supplyUsd: 0,
        healthFactor: Infinity,
      },
    ]);
    near(risk.view(0).healthFactor, 12_200 / 6_000);
    near(risk.amountsOf(1).healthFactor, 12_200 / 6_000);
  });

  test('behavior: an account sums its positions in one order whatever order its markets and positions came in', () => {
    // Three legs whose sums depend on their order in floating point: (0.1 + 0.2) + 0.3 is not
    // 0.1 + (0.2 + 0.3).
    const dai = pair('aave', ['DAI', '0x6b175474e89094c44da98b954eedeac495271d0f', 1], 0.77);
    const legs: [MarketRecord, number][] = [
      [wethUsdc, 0.1],
      [wbtcUsdc, 0.2],
      [dai, 0.3],
    ];
    const totals = (order: readonly number[], catalogOrder: readonly number[]) => {
      const catalog = new Catalog(
        catalogOrder.map((k) => legs[k]![0]),
        0,
      );
      const b = new PositionColumnsBuilder(4);
      for (const k of order) {
        const [m, usd] = legs[k]!;
        b.push(catalog.ordOf(m.uniqueKey)!, {
          user: ALICE,
          collateralUsd: usd,
          borrowUsd: usd / 2,
          supplyUsd: 0,
          healthFactor: healthFactor(usd, m.lltv, usd / 2),
        });
      }
      const risk = new RiskIndex(catalog, b.build());
      return { ...risk.accountOf(0)!.totals, hf: risk.view(0).healthFactor, leverage: risk.view(0).leverage };
    };
    const first = totals([0, 1, 2], [0, 1, 2]);
    for (const [order, catalogOrder] of [
      [
        [2, 1, 0],
        [0, 1, 2],
      ],
      [
        [1, 2, 0],
        [2, 0, 1],
      ],
      [
        [0, 2, 1],
        [1, 2, 0],
      ],
    ] as const)
      assert.deepEqual(totals(order, catalogOrder), first, JSON.stringify([order, catalogOrder]));
    assert.notEqual(0.1 + 0.2 + 0.3, 0.1 + (0.2 + 0.3), 'the sums do depend on their order');
  });
});
