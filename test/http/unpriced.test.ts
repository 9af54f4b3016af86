import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LiquidationEvent } from '../../src/domain/records/history.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { ManualClock } from '../clock.ts';
import {
  createTestApp,
  GENEROUS_TIERS,
  makeMarket,
  makeOracle,
  makePosition,
  makeVault,
  modelOf,
  type TestApp,
} from '../helpers.ts';

/**
 * A market whose loan token has no USD price (docs/decisions.md "Real sources"): every route that serves it says so with
 * null, never 0, through the serializers compiled from the response schemas.
 */

const clock = new ManualClock('2026-11-22T12:10:00Z');
const DAI = '0x6b175474e89094c44da98b954eedeac495271d0f';
const oracle = makeOracle({ address: `0x${'0c'.repeat(20)}` });
const priced = makeMarket({ supply: 1_000_000, borrow: 600_000, oracle });
const unpriced = makeMarket({
  loan: 'DAI',
  loanName: 'Dai Stablecoin',
  loanAddress: DAI,
  loanPrice: null,
  supply: null,
  borrow: null,
  supplyAssets: 2_000,
  borrowAssets: 500,
  supplyApy: 0.03,
  oracle,
});
// the same token in a market with a price: its sums cannot be stated without the other one's
const daiPriced = makeMarket({ loan: 'DAI', loanAddress: DAI, loanPrice: 1, supply: 100, borrow: 10 });
const vault = makeVault([daiPriced, unpriced], {
  assetAddress: DAI,
  assetSymbol: 'DAI',
  allocations: [
    { marketKey: daiPriced.uniqueKey, supplyShare: 0.5, supplyCapUsd: null },
    // a cap read in DAI: stated in DAI, its USD unknown
    { marketKey: unpriced.uniqueKey, supplyShare: 0.5, supplyCapUsd: null, supplyCap: 4_000 },
  ],
});

// Liquidations: one in the market without a loan price (its debt of no known USD value, its
// collateral priced), one in the DAI market from before DAI had a price, one fully priced.
const HOUR = 3_600_000;
const liquidation = (n: number, over: Partial<LiquidationEvent>): LiquidationEvent => ({
  protocol: 'morpho',
  chainId: 1,
  txHash: `0x${n.toString(16).padStart(64, '0')}`,
  logIndex: 0,
  block: 1_000 + n,
  at: clock.now() - n * HOUR,
  marketKey: priced.uniqueKey,
  borrower: `0x${'b0'.repeat(20)}`,
  liquidator: `0x${'1a'.repeat(20)}`,
  collateralSeized: 0.5,
  collateralSeizedUsd: 2_000,
  debtRepaid: 1_500,
  debtRepaidUsd: 1_500,
  badDebt: 0,
  badDebtUsd: 0,
  ...over,
});
const liquidations = [
  liquidation(1, { marketKey: unpriced.uniqueKey, debtRepaidUsd: null, badDebt: 10, badDebtUsd: null }),
  liquidation(2, { marketKey: daiPriced.uniqueKey, collateralSeizedUsd: null, debtRepaidUsd: null }),
  liquidation(3, {}),
];

let t: TestApp;
let key: string;

before(async () => {
  const live = modelOf([priced, unpriced, daiPriced], [makePosition(priced)], clock, [vault]);
  live.stored = true;
  const store = new SqliteStore(':memory:');
  await store.migrate();
  await store.appendLiquidations(liquidations);
  t = await createTestApp({ clock, tiers: GENEROUS_TIERS, live, store });
  key = await t.key('enterprise');
});
after(() => t.close());

const get = async (path: string) => {
  const res = await t.get(`/api/v1${path}`, key);
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data;
};

describe('a market without a USD price (docs/decisions.md "Real sources")', () => {
  test('behavior: GET /markets serves it with null USD figures and its token amounts, after every priced market', async () => {
    const list = await get('/markets?limit=10');
    assert.deepEqual(
      list.map((m: { uniqueKey: string }) => m.uniqueKey),
      [priced.uniqueKey, daiPriced.uniqueKey, unpriced.uniqueKey],
    );
    const m = await get(`/markets/${unpriced.uniqueKey}`);
    assert.deepEqual(
      [m.loanPrice, m.supply, m.borrow, m.available, m.collateralPrice],
      [null, null, null, null, 4000],
    );
    assert.deepEqual([m.supplyAssets, m.borrowAssets, m.utilization, m.supplyApy], [2_000, 500, 0.25, 0.03]);
    // a priced market's token amounts: its USD over its loan price
    const p = await get(`/markets/${priced.uniqueKey}`);
    assert.equal(p.supplyAssets, Number((1_000_000 / 3300).toPrecision(8)));
  });

  test('behavior: the token, the oracle and the vault state no USD sum that would leave it out', async () => {
    const dai = await get(`/tokens/1/${DAI}`);
    assert.deepEqual([dai.priceUsd, dai.supplyUsd, dai.borrowUsd], [1, null, null]);
    assert.deepEqual(
      dai.markets.map((x: { uniqueKey: string; supply: number | null }) => [x.uniqueKey, x.supply]),
      [
        [daiPriced.uniqueKey, 100],
        [unpriced.uniqueKey, null],
      ],
    );
    const o = await get(`/oracles/1/${oracle.address}`);
    assert.deepEqual([o.supplyAtStakeUsd, o.borrowAtStakeUsd], [null, null]);
    const v = await get(`/vaults/1/${vault.address}`);
    assert.equal(v.totalAssetsUsd, null);
    // weighed by amounts of DAI: 50 priced, 1,000 unpriced (of a 4,000 DAI cap)
    assert.deepEqual(
      v.allocations.map((a: Record<string, unknown>) => [
        a.marketId,
        a.supplyUsd,
        a.share,
        a.supplyCap,
        a.supplyCapUsd,
        a.capUsage,
      ]),
      [
        [unpriced.uniqueKey, null, Number((1_000 / 1_050).toFixed(8)), 4_000, null, 0.25],
        [daiPriced.uniqueKey, 50, Number((50 / 1_050).toFixed(8)), null, null, null],
      ],
    );
  });

  test('behavior: analytics count it apart from the USD sums; risk and the agent brief say why their USD figures are null', async () => {
    const o = await get('/analytics/overview');
    assert.deepEqual([o.totals.markets, o.totals.unpricedMarkets, o.totals.supplyUsd], [3, 1, 1_000_100]);
    const r = await get(`/risk/markets/${unpriced.uniqueKey}`);
    assert.deepEqual(
      [r.loanAsset.priceUsd, r.supplyUsd, r.borrowUsd, r.availableLiquidityUsd, r.utilization],
      [null, null, null, null, 0.25],
    );
    const b = await get(`/agent/market-brief/${unpriced.uniqueKey}`);
    assert.deepEqual([b.keyFigures.supplyUsd, b.keyFigures.availableLiquidityUsd], [null, null]);
    assert.equal(b.flags[0].code, 'NO_USD_PRICE');
    assert.match(b.flags[0].reason, /No USD price is known for DAI/);
    assert.match(b.summary, /2000 DAI supplied/);
  });

  test('behavior: its rating scores the depth as unknown; a vault supplying it is rated by amounts of the asset, its USD total null', async () => {
    const m = await get(`/ratings/markets/${unpriced.uniqueKey}`);
    assert.equal(m.metrics.availableUsd, null);
    assert.match(m.components.liquidity.explanation, /depth is scored as unknown/);
    const v = await get(`/ratings/vaults/1/${vault.address}`);
    assert.equal(v.metrics.totalAssetsUsd, null);
    assert.deepEqual(
      v.allocations.map((a: { marketId: string; share: number }) => [a.marketId, a.share]),
      [
        [unpriced.uniqueKey, Number((1_000 / 1_050).toFixed(8))],
        [daiPriced.uniqueKey, Number((50 / 1_050).toFixed(8))],
      ],
    );
  });

  test('behavior: a liquidation in it states its amounts in tokens, their unknown USD values null; minRepaidUsd leaves it out', async () => {
    const list = await get('/liquidations');
    assert.deepEqual(
      list.map((l: Record<string, unknown>) => [
        l.marketId,
        l.collateralSeized,
        l.collateralSeizedUsd,
        l.debtRepaid,
        l.debtRepaidUsd,
        l.badDebt,
        l.badDebtUsd,
      ]),
      [
        [unpriced.uniqueKey, 0.5, 2_000, 1_500, null, 10, null],
        [daiPriced.uniqueKey, 0.5, null, 1_500, null, 0, 0],
        [priced.uniqueKey, 0.5, 2_000, 1_500, 1_500, 0, 0],
      ],
    );
    // as NDJSON too (the streamed lines are the schema's JSON)
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/v1/liquidations',
      headers: { authorization: `Bearer ${key}`, accept: 'application/x-ndjson' },
    });
    assert.equal(JSON.parse(res.body.split('\n')[0]!).debtRepaidUsd, null);
    // a repayment of no known USD value is not known to reach any amount
    const min = await get('/liquidations?minRepaidUsd=0');
    assert.deepEqual(
      min.map((l: { marketId: string }) => l.marketId),
      [priced.uniqueKey],
    );
  });

  test('behavior: the daily timeseries counts its liquidations apart and sums the USD values that are known', async () => {
    const [day] = await get('/analytics/timeseries?groupBy=chain');
    assert.deepEqual(
      [
        day.liquidations,
        day.unpricedLiquidations,
        day.liquidatedDebtUsd,
        day.collateralSeizedUsd,
        day.badDebtUsd,
      ],
      [3, 2, 1_500, 4_000, 0],
    );
  });

  test('behavior: a market whose window holds a liquidation of no known USD value has its liquidation record scored as unknown', async () => {
    const r = await get(`/ratings/markets/${daiPriced.uniqueKey}`);
    assert.deepEqual([r.metrics.liquidations, r.metrics.liquidatedUsd, r.metrics.badDebtUsd], [1, null, 0]);
    assert.match(r.components.liquidations.explanation, /no known USD value.*scored as unknown/);
    const p = await get(`/ratings/markets/${priced.uniqueKey}`);
    assert.deepEqual([p.metrics.liquidations, p.metrics.liquidatedUsd], [1, 1_500]);
  });
});
