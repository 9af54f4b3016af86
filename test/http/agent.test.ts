import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../clock.ts';
import {
  createTestApp,
  GENEROUS_TIERS,
  makeMarket,
  makeOracle,
  makePosition,
  modelOf,
  type TestApp,
} from '../helpers.ts';

const NOW = Date.parse('2026-11-22T12:00:00Z');
const clock = new ManualClock(NOW);
const WALLET = '0x00000000000000000000000000000000000000aa';
// lltv 0.8, collateral 4,000 USD a token, loan 1 USD: health factor = collateral x 0.8 / debt
const weth = makeMarket({
  collateral: 'WETH',
  collateralPrice: 4_000,
  loan: 'USDC',
  loanPrice: 1,
  lltv: 0.8,
});
// Its oracle stopped two hours ago on a one-hour heartbeat: stale (ratio 2).
const stale = makeMarket({
  collateral: 'WBTC',
  collateralPrice: 100_000,
  loan: 'USDC',
  loanPrice: 1,
  lltv: 0.8,
  supply: 100_000,
  borrow: 99_000,
  oracle: makeOracle({
    feeds: [
      {
        address: '0x000000000000000000000000000000000000beef',
        description: 'BTC / USD',
        pair: 'BTC/USD',
        heartbeatSeconds: 3600,
        lastUpdateTimestamp: NOW / 1000 - 7200,
        updateIntervalSeconds: null,
      },
    ],
  }),
});
const base = makeMarket({ chainId: 8453, lltv: 0.8 });
const near = makePosition(weth, { user: WALLET, collateralUsd: 13_000, borrowUsd: 10_000 }); // 1.04
const under = makePosition(stale, { user: WALLET, collateralUsd: 1_000, borrowUsd: 900 }); // 0.888...
const safe = makePosition(base, { user: WALLET, collateralUsd: 30_000, borrowUsd: 10_000 }); // 2.4
const other = makePosition(stale, { collateralUsd: 2_000, borrowUsd: 1_000 }); // 1.6, someone else

let t: TestApp;
let ent: string;
let pro: string;

before(async () => {
  t = await createTestApp({
    clock,
    tiers: GENEROUS_TIERS,
    live: modelOf([weth, stale, base], [near, under, safe, other], clock),
  });
  ent = await t.key('enterprise');
  pro = await t.key('pro');
});
after(() => t.close());

describe('GET /agent/wallet-risk/{address}', () => {
  test('weakest first, risk level, flags with reasons, what brings each position back, hand-checked', async () => {
    const res = await t.get(`/api/v1/agent/wallet-risk/${WALLET}?chainIds=1`, ent);
    assert.equal(res.statusCode, 200);
    const d = res.json().data;
    assert.equal(d.riskLevel, 'critical');
    assert.equal(d.weakestHealthFactor, 0.88888889);
    assert.equal(d.targetHealthFactor, 1.25);
    assert.equal(d.borrowPositions, 2); // Base is out of scope
    assert.equal(d.debtUsd, 10_900);
    const [u, n] = d.positions;
    assert.equal(u.marketId, stale.uniqueKey);
    // 900 x (1 - 0.8889 / 1.25) = 260; 1,000 x (1.25 / 0.8889 - 1) = 406.25
    assert.deepEqual(u.toTarget, {
      repayUsd: 260,
      repayAmount: 260,
      addCollateralUsd: 406.25,
      addCollateralAmount: 0.0040625,
    });
    assert.equal(u.collateral.liquidationPriceUsd, 112_500); // 100,000 / 0.8889
    // 10,000 x (1 - 1.04 / 1.25) = 1,680; 13,000 x (1.25 / 1.04 - 1) = 2,625
    assert.deepEqual(n.toTarget, {
      repayUsd: 1_680,
      repayAmount: 1_680,
      addCollateralUsd: 2_625,
      addCollateralAmount: 0.65625,
    });
    assert.deepEqual(
      d.flags.map((f: { code: string; marketId: string }) => [f.code, f.marketId]),
      [
        ['LIQUIDATABLE', stale.uniqueKey],
        ['STALE_ORACLE', stale.uniqueKey],
        ['NEAR_LIQUIDATION', weth.uniqueKey],
      ],
    );
    const liq = d.flags[0];
    assert.equal(liq.severity, 'critical');
    assert.match(liq.reason, /health factor 0\.8889, below 1/);
    assert.match(liq.reason, /repay \$260\.00 of USDC or add \$406\.25 of WBTC to reach 1\.25/);
    assert.match(d.flags[1].reason, /7200 s ago, 2 times its 3600 s heartbeat/);
    assert.match(d.flags[2].reason, /a 3\.8 % fall of WETH against USDC liquidates it/);
  });

  test('targetHealthFactor moves the amounts; a wallet without debt is none', async () => {
    const d = (await t.get(`/api/v1/agent/wallet-risk/${WALLET}?chainIds=1&targetHealthFactor=2`, ent)).json()
      .data;
    // 10,000 x (1 - 1.04 / 2) = 4,800
    assert.equal(d.positions[1].toTarget.repayUsd, 4_800);
    const empty = (
      await t.get('/api/v1/agent/wallet-risk/0x00000000000000000000000000000000000000bb', ent)
    ).json().data;
    assert.equal(empty.riskLevel, 'none');
    assert.deepEqual(empty.positions, []);
    assert.equal(empty.weakestHealthFactor, null);
  });

  test('error: bad target 400; Pro tier 403 TIER_FORBIDDEN', async () => {
    assert.equal(
      (await t.get(`/api/v1/agent/wallet-risk/${WALLET}?targetHealthFactor=1`, ent)).statusCode,
      400,
    );
    const res = await t.get(`/api/v1/agent/wallet-risk/${WALLET}`, pro);
    assert.equal(res.statusCode, 403);
    assert.equal(res.json().error, 'TIER_FORBIDDEN');
  });
});

describe('GET /agent/market-brief/{marketId}', () => {
  test('key figures, flags by severity with reasons, the 10 and 20 % stress', async () => {
    const res = await t.get(`/api/v1/agent/market-brief/${stale.uniqueKey}`, ent);
    assert.equal(res.statusCode, 200);
    const d = res.json().data;
    assert.equal(d.keyFigures.utilization, 0.99);
    assert.equal(d.keyFigures.liquidatablePositions, 1);
    assert.equal(d.keyFigures.debtLiquidatableUsd, 900);
    assert.equal(d.keyFigures.oracleStalenessRatio, 2);
    assert.deepEqual(
      d.flags.map((f: { code: string }) => f.code),
      [
        'LIQUIDATABLE_POSITIONS',
        'HIGH_UTILIZATION',
        'STALE_ORACLE',
        'BAD_DEBT_UNDER_STRESS',
        'CONCENTRATED_BORROWERS',
      ],
    );
    // -20 %: the liquidatable one holds 800 of collateral for 900 of debt; at Morpho's bonus for lltv 0.8,
    // 1 / 0.94 - 1, liquidators repay 800 x 0.94 = 752: 148 is bad debt.
    assert.match(d.flags[3].reason, /A 20 % fall of WBTC would leave \$148\.00 of debt/);
    assert.match(d.flags[0].reason, /^1 position\(s\) with \$900\.00 of debt/);
    assert.match(d.flags[1].reason, /Utilization is 99\.0 %: only \$1,000\.00/);
    assert.match(
      d.summary,
      /^WBTC\/USDC on morpho \(chain 1\): \$100,000\.00 supplied, 99\.0 % borrowed by 2 position\(s\), LLTV 80\.0 %; liquidatable positions\.$/,
    );
    // -10 %: 1.6 x 0.9 = 1.44, still safe: nothing new; -20 %: 1.28, still safe.
    assert.deepEqual(
      d.stress.map((s: { collateralPriceChange: number; newlyLiquidatable: number }) => [
        s.collateralPriceChange,
        s.newlyLiquidatable,
      ]),
      [
        [-0.1, 0],
        [-0.2, 0],
      ],
    );
  });

  test('error: unknown market 404; Pro 403', async () => {
    assert.equal((await t.get('/api/v1/agent/market-brief/morpho-1-0xnothing', ent)).statusCode, 404);
    assert.equal((await t.get(`/api/v1/agent/market-brief/${stale.uniqueKey}`, pro)).statusCode, 403);
  });
});
