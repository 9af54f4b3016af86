import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../clock.ts';
import {
  createTestApp,
  GENEROUS_TIERS,
  makeMarket,
  makePosition,
  modelOf,
  type TestApp,
} from '../helpers.ts';

const clock = new ManualClock('2026-11-22T12:00:00Z');
// A pooled market (liquidation bonus 5 %), lltv 0.8: health factor = collateral x 0.8 / debt.
const btc = makeMarket({
  protocol: 'aave',
  uniqueKey: 'aave-1-0xpool_0xwbtc_0xusdc',
  collateral: 'WBTC',
  collateralAddress: '0x2260fac5e5542a773aa44fbcfedf7c193bc2c599',
  collateralPrice: 100_000,
  loan: 'USDC',
  loanAddress: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48',
  loanPrice: 1,
  lltv: 0.8,
  supply: 1_000_000,
  borrow: 800_000,
});
const p1 = makePosition(btc, { collateralUsd: 1_000, borrowUsd: 900 }); // hf 0.888...: liquidatable, covered
const p2 = makePosition(btc, { collateralUsd: 1_300, borrowUsd: 1_000 }); // hf 1.04
const p3 = makePosition(btc, { collateralUsd: 2_000, borrowUsd: 1_000 }); // hf 1.6
const p4 = makePosition(btc, { collateralUsd: 1_000, borrowUsd: 1_000 }); // hf 0.8: below 0.8 x 1.05, underwater
// Correlated: cbBTC follows a WBTC shock; wstETH / WETH is untouched by it.
const cbbtc = makeMarket({ collateral: 'cbBTC', loan: 'USDC', lltv: 0.86 });
const c1 = makePosition(cbbtc, { collateralUsd: 10_000, borrowUsd: 8_000 }); // hf 1.075
const eth = makeMarket({ lltv: 0.86 });
const e1 = makePosition(eth, { collateralUsd: 10_000, borrowUsd: 8_500 }); // hf 1.0118
const base = makeMarket({ chainId: 8453, collateral: 'WBTC', loan: 'USDC', lltv: 0.8 });
const b1 = makePosition(base, { collateralUsd: 1_000, borrowUsd: 700 }); // hf 1.142857

let t: TestApp;
let pro: string;
let free: string;

before(async () => {
  t = await createTestApp({
    clock,
    tiers: GENEROUS_TIERS,
    live: modelOf([btc, cbbtc, eth, base], [p1, p2, p3, p4, c1, e1, b1], clock),
  });
  pro = await t.key('pro');
  free = await t.key('free');
});
after(() => t.close());

const near = (a: number, b: number, eps = 0.01) => assert.ok(Math.abs(a - b) <= eps, `${a} != ${b}`);

describe('GET /risk/markets/{marketId}', () => {
  test('liquidatable now and under collateral falls, hand-checked', async () => {
    const res = await t.get(`/api/v1/risk/markets/${btc.uniqueKey}`, pro);
    assert.equal(res.statusCode, 200);
    const d = res.json().data;
    assert.equal(d.liquidationBonus, 0.05);
    assert.equal(d.borrowPositions, 4);
    assert.equal(d.collateralUsd, 5_300);
    assert.equal(d.debtUsd, 3_900);
    assert.equal(d.availableLiquidityUsd, 200_000);
    // Now: p1 (covered) and p4 (underwater). p1: 900 repaid, 945 seized; p4: 1,000 seized,
    // 1,000 / 1.05 = 952.38 repaid, 47.62 bad debt.
    assert.deepEqual(d.liquidatableNow, {
      liquidatablePositions: 2,
      newlyLiquidatable: 0,
      debtAtRiskUsd: 1_900,
      collateralSeizedUsd: 1_945,
      debtRepaidUsd: 1_852.38,
      badDebtUsd: 47.62,
    });
    const [m5, m10, m20, m30] = d.scenarios;
    assert.deepEqual(
      d.scenarios.map((s: { collateralPriceChange: number }) => s.collateralPriceChange),
      [-0.05, -0.1, -0.2, -0.3],
    );
    // -5 %: p2 joins (1.04 x 0.95 = 0.988); p4 underwater; collateral x 0.95.
    assert.equal(m5.liquidatablePositions, 3);
    assert.equal(m5.newlyLiquidatable, 1);
    assert.equal(m5.debtAtRiskUsd, 2_900);
    assert.equal(m5.collateralSeizedUsd, 2_945); // (900 + 1,000) x 1.05 + 950
    assert.equal(m5.debtRepaidUsd, 2_804.76); // 1,900 + 950 / 1.05
    assert.equal(m5.badDebtUsd, 95.24); // 1,000 - 904.76
    near(m5.liquidityCoverage, 200_000 / 2_804.7619);
    // -10 %: p1 at 0.8 < 0.84 is underwater too: p2 covered (1,050 seized), 1,800 of collateral.
    assert.equal(m10.collateralSeizedUsd, 2_850);
    assert.equal(m10.debtRepaidUsd, 2_714.29);
    assert.equal(m10.badDebtUsd, 185.71); // 1,900 - 1,714.29
    // -20 %: all three underwater: 2,640 seized, 2,640 / 1.05 repaid, 2,900 - 2,514.29 bad.
    assert.equal(m20.collateralSeizedUsd, 2_640);
    assert.equal(m20.debtRepaidUsd, 2_514.29);
    assert.equal(m20.badDebtUsd, 385.71);
    // -30 %: p3 at 1.12 still safe; 2,310 seized, 2,200 repaid, 700 bad.
    assert.equal(m30.liquidatablePositions, 3);
    assert.equal(m30.badDebtUsd, 700);
    assert.equal(m30.debtRepaidUsd, 2_200);
    // Debts 900, 1,000 x 3: HHI (0.81 + 3) / 15.21 M.
    assert.deepEqual(d.concentration, { borrowers: 4, top10Share: 1, herfindahl: 0.2504931 });
    assert.ok(d.oracleHealth);
  });

  test('error: unknown market 404, malformed id 400, Free tier 403', async () => {
    assert.equal(
      (await t.get('/api/v1/risk/markets/aave-1-0xnothing', pro)).json().error,
      'MARKET_NOT_FOUND',
    );
    assert.equal((await t.get('/api/v1/risk/markets/nonsense', pro)).statusCode, 400);
    const res = await t.get(`/api/v1/risk/markets/${btc.uniqueKey}`, free);
    assert.equal(res.statusCode, 403);
    assert.equal(res.json().error, 'TIER_FORBIDDEN');
  });
});

describe('GET /risk/stress', () => {
  const stress = (qs: string, key = pro) => t.get(`/api/v1/risk/stress?${qs}`, key);

  test('a WBTC shock moves WBTC and cbBTC markets, not ETH ones; totals hand-checked', async () => {
    const res = await stress('shocks=WBTC:-0.2&chainIds=1');
    assert.equal(res.statusCode, 200);
    const d = res.json().data;
    assert.deepEqual(d.shocks, [{ asset: 'WBTC', change: -0.2 }]);
    assert.deepEqual(
      d.markets.map((m: { marketId: string }) => m.marketId),
      [cbbtc.uniqueKey, btc.uniqueKey], // by debt at risk, largest first
    );
    const [c, a] = d.markets;
    assert.deepEqual(a.collateralAsset, { symbol: 'WBTC', change: -0.2, via: 'WBTC' });
    assert.deepEqual(a.loanAsset, { symbol: 'USDC', change: 0, via: null });
    assert.equal(a.healthFactorScale, 0.8);
    assert.equal(a.newlyLiquidatable, 1);
    assert.equal(a.debtAtRiskUsd, 2_900);
    assert.equal(a.newDebtAtRiskUsd, 1_000);
    assert.equal(a.badDebtUsd, 385.71);
    // cbBTC follows WBTC: 1.075 x 0.8 = 0.86 < 1.
    assert.deepEqual(c.collateralAsset, { symbol: 'cbBTC', change: -0.2, via: 'WBTC' });
    assert.equal(c.newlyLiquidatable, 1);
    assert.equal(c.debtAtRiskUsd, 8_000);
    assert.equal(d.totals.markets, 2);
    assert.equal(d.totals.newlyLiquidatable, 2);
    assert.equal(d.totals.debtAtRiskUsd, 10_900);
    assert.equal(d.totals.newDebtAtRiskUsd, 9_000);
    assert.equal(res.json().meta.total, 2);
  });

  test('the Base market counts when its chain is in scope; the loan side moves too', async () => {
    const all = (await stress('shocks=WBTC:-0.2')).json();
    assert.equal(all.data.totals.markets, 3);
    // USDC up 25 % is the same health factor scale as WBTC down 20 %.
    const usdc = (await stress('shocks=USDC:0.25&chainIds=1')).json().data;
    const a = usdc.markets.find((m: { marketId: string }) => m.marketId === btc.uniqueKey);
    assert.equal(a.healthFactorScale, 0.8);
    assert.equal(a.liquidatablePositions, 3);
    assert.equal(a.debtAtRiskUsd, 3_625); // 2,900 x 1.25
  });

  test('error: bad shocks are 400 INVALID_PARAMETER with the problem', async () => {
    for (const qs of [
      'shocks=WETH',
      'shocks=WETH:-1',
      'shocks=WETH:-0.2,weth:-0.1',
      'shocks=NOPE:-0.1',
      'shocks=',
      '',
    ]) {
      const res = await stress(qs);
      assert.equal(res.statusCode, 400, qs);
      assert.equal(res.json().error, 'INVALID_PARAMETER', qs);
    }
  });

  test('limit clamps the markets listed, not the totals', async () => {
    const d = (await stress('shocks=WBTC:-0.2&limit=1')).json();
    assert.equal(d.data.markets.length, 1);
    assert.equal(d.data.totals.markets, 3);
  });

  test('error: Free tier 403 TIER_FORBIDDEN', async () => {
    assert.equal((await stress('shocks=WBTC:-0.2', free)).statusCode, 403);
  });
});
