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
const m1 = makeMarket({ lltv: 0.8 });
const m2 = makeMarket({
  protocol: 'aave',
  chainId: 42161,
  uniqueKey: 'aave-42161-0xpool_0xcollateral_0xloan',
  lltv: 0.8,
});
// HF = collateral x 0.8 / borrow
const liquidatable = makePosition(m1, { collateralUsd: 1_000, borrowUsd: 900 }); // 0.8 / 0.9 = 0.888...
const close = makePosition(m1, { collateralUsd: 13_000, borrowUsd: 10_000 }); // 1.04
const closeBig = makePosition(m2, { collateralUsd: 26_000, borrowUsd: 20_000 }); // 1.04, more debt
const healthy = makePosition(m1, { collateralUsd: 30_000, borrowUsd: 10_000 }); // 2.4
const noDebt = makePosition(m1, { collateralUsd: 5_000, borrowUsd: 0 }); // Infinity: never at risk
const underwater = makePosition(m2, { collateralUsd: 1_000, borrowUsd: 1_200 }); // 0.666...

let t: TestApp;
let pro: string;

before(async () => {
  t = await createTestApp({
    clock,
    tiers: GENEROUS_TIERS,
    live: modelOf([m1, m2], [liquidatable, close, closeBig, healthy, noDebt, underwater], clock),
  });
  pro = await t.key('pro');
});
after(() => t.close());

const risk = (qs = '', key = pro) => t.get(`/api/v1/risk/positions-at-risk${qs ? `?${qs}` : ''}`, key);
const users = (body: { data: { user: { address: string } }[] }) => body.data.map((p) => p.user.address);

describe('GET /risk/positions-at-risk', () => {
  test('default: below 1.1, health factor ascending then debt descending', async () => {
    const res = await risk();
    assert.equal(res.statusCode, 200);
    assert.deepEqual(users(res.json()), [underwater.user, liquidatable.user, closeBig.user, close.user]);
  });

  test('default: every PositionAtRisk field, hand-checked', async () => {
    const p = (await risk())
      .json()
      .data.find((x: { user: { address: string } }) => x.user.address === close.user);
    assert.deepEqual(p, {
      protocol: 'morpho',
      chainId: 1,
      user: { address: close.user },
      healthFactor: (13_000 * 0.8) / 10_000,
      state: { collateralUsd: 13_000, borrowAssetsUsd: 10_000, supplyAssetsUsd: 0 },
      market: {
        uniqueKey: m1.uniqueKey,
        collateralAsset: { symbol: 'wstETH' },
        loanAsset: { symbol: 'WETH' },
        lltv: 0.8,
      },
      leverage: 4.3333333, // 13,000 / 3,000 to 8 significant digits
      distanceToLiq: 0.03846154, // 1 - 1 / 1.04 to 8 decimals
    });
  });

  test('behavior: underwater positions have null leverage and negative distance', async () => {
    const p = (await risk()).json().data[0];
    assert.equal(p.user.address, underwater.user);
    assert.equal(p.leverage, null);
    assert.ok(p.distanceToLiq < 0);
  });

  test('behavior: threshold, minBorrowUsd, protocol, chainIds and marketId filter', async () => {
    assert.deepEqual(users((await risk('healthFactorThreshold=1')).json()), [
      underwater.user,
      liquidatable.user,
    ]);
    assert.deepEqual(users((await risk('healthFactorThreshold=10')).json()).length, 5);
    assert.deepEqual(users((await risk('minBorrowUsd=5000')).json()), [closeBig.user, close.user]);
    assert.deepEqual(users((await risk('protocol=aave')).json()), [underwater.user, closeBig.user]);
    assert.deepEqual(users((await risk('chainIds=1')).json()), [liquidatable.user, close.user]);
    assert.deepEqual(users((await risk(`marketId=${m1.uniqueKey.toUpperCase()}`)).json()), [
      liquidatable.user,
      close.user,
    ]);
    assert.deepEqual(users((await risk('limit=1')).json()), [underwater.user]);
  });

  test('behavior: positions without debt are never at risk', async () => {
    const res = await risk('healthFactorThreshold=10');
    assert.ok(!users(res.json()).includes(noDebt.user));
  });

  test('error: bad parameters', async () => {
    const cases: [string, string][] = [
      ['healthFactorThreshold=0', 'healthFactorThreshold'],
      ['healthFactorThreshold=10.5', 'healthFactorThreshold'],
      ['healthFactorThreshold=abc', 'healthFactorThreshold'],
      ['healthFactorThreshold=NaN', 'healthFactorThreshold'],
      ['minBorrowUsd=-1', 'minBorrowUsd'],
      ['marketId=not-a-market', 'marketId'],
      ['limit=0', 'limit'],
      ['threshold=1', 'threshold'],
    ];
    for (const [qs, parameter] of cases) {
      const res = await risk(qs);
      assert.equal(res.statusCode, 400, qs);
      assert.equal(res.json().error, 'INVALID_PARAMETER');
      assert.equal(res.json().details[0].parameter, parameter, qs);
    }
  });

  test('error: unknown marketId is 404 MARKET_NOT_FOUND', async () => {
    const res = await risk(`marketId=morpho-1-0x${'f'.repeat(64)}`);
    assert.equal(res.statusCode, 404);
    assert.equal(res.json().error, 'MARKET_NOT_FOUND');
  });

  test('error: the free tier has no risk endpoints', async () => {
    const free = await t.key('free');
    const res = await risk('', free);
    assert.equal(res.statusCode, 403);
    assert.deepEqual(res.json(), {
      error: 'TIER_FORBIDDEN',
      message: "The free tier does not include the 'risk' endpoints.",
      tier: 'free',
      category: 'risk',
    });
  });
});
