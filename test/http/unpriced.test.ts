import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
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
 * A market whose loan token has no USD price (D15): every route that serves it says so with
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
    { marketKey: unpriced.uniqueKey, supplyShare: 0.5, supplyCapUsd: 1_000 },
  ],
});

let t: TestApp;
let key: string;

before(async () => {
  t = await createTestApp({
    clock,
    tiers: GENEROUS_TIERS,
    live: modelOf([priced, unpriced, daiPriced], [makePosition(priced)], clock, [vault]),
  });
  key = await t.key('enterprise');
});
after(() => t.close());

const get = async (path: string) => {
  const res = await t.get(`/api/v1${path}`, key);
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data;
};

describe('a market without a USD price (D15)', () => {
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
    // weighed by amounts of DAI: 50 priced, 1,000 unpriced
    assert.deepEqual(
      v.allocations.map(
        (a: { marketId: string; supplyUsd: number | null; share: number; capUsage: number | null }) => [
          a.marketId,
          a.supplyUsd,
          a.share,
          a.capUsage,
        ],
      ),
      [
        [unpriced.uniqueKey, null, Number((1_000 / 1_050).toFixed(8)), null],
        [daiPriced.uniqueKey, 50, Number((50 / 1_050).toFixed(8)), null],
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
});
