import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DailyTotals } from '../../src/queries/analytics.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { ManualClock } from '../clock.ts';
import {
  createTestApp,
  daySnapshot,
  GENEROUS_TIERS,
  liquidationOf,
  makeMarket,
  makePosition,
  modelOf,
  type TestApp,
} from '../helpers.ts';

const NOW = Date.parse('2026-11-22T12:00:00Z');
const DAY = 86_400_000;
// A clock between two milliseconds, as the service's is (performance.now() based).
const clock = new ManualClock(NOW + 0.25);
const midnight = Math.floor(NOW / DAY) * DAY;

// lltv 0.8: health factor = collateral x 0.8 / debt
const a = makeMarket({ lltv: 0.8, supply: 1_000_000, borrow: 600_000 });
const b = makeMarket({ lltv: 0.8, supply: 500_000, borrow: 400_000 });
const c = makeMarket({
  protocol: 'aave',
  chainId: 8453,
  uniqueKey: 'aave-8453-0xp_0xc_0xl',
  lltv: 0.8,
  supply: 200_000,
  borrow: 50_000,
});
const positions = [
  makePosition(a, { collateralUsd: 1_000, borrowUsd: 900 }), // 0.889: liquidatable
  makePosition(a, { collateralUsd: 1_300, borrowUsd: 1_000 }), // 1.04: at risk
  makePosition(a, { collateralUsd: 5_000, borrowUsd: 0 }), // no debt
  makePosition(b, { collateralUsd: 2_000, borrowUsd: 1_000 }), // 1.6
  makePosition(c, { collateralUsd: 1_000, borrowUsd: 750 }), // 1.0667: at risk
];

let t: TestApp;
/** The days the app read from the store's daily totals, [from, to). */
const historyReads: [number, number][] = [];
let pro: string;
let free: string;

before(async () => {
  const live = modelOf([a, b, c], positions, clock);
  live.stored = true;
  // The history is in the store before the server starts, as the service writes it.
  const store = new SqliteStore(':memory:');
  await store.migrate();
  const d2 = midnight - 2 * DAY;
  const d1 = midnight - DAY;
  await store.appendMarketSnapshots([
    daySnapshot(a, d2, 1_000, 500),
    daySnapshot(b, d2, 3_000, 1_500),
    daySnapshot(c, d2, 400, 100),
    daySnapshot(a, d1, 1_100, 600),
    daySnapshot(a, midnight - 200 * DAY, 9, 9), // outside the Pro window
  ]);
  await store.appendLiquidations([
    liquidationOf(1, a, d2 + 3_600_000, 100),
    liquidationOf(2, b, d2 + 7_200_000, 50, 5),
    liquidationOf(3, c, d1 + 60_000, 30),
  ]);
  const dailyMarketTotals = async (from: number, to: number) => {
    historyReads.push([from, to]);
    return store.dailyMarketTotals(from, to);
  };
  const history = new Proxy(store, {
    get: (target, name) => {
      if (name === 'dailyMarketTotals') return dailyMarketTotals;
      const value = Reflect.get(target, name, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  t = await createTestApp({ clock, tiers: GENEROUS_TIERS, live, store, history });
  pro = await t.key('pro');
  free = await t.key('free');
});
after(() => t.close());

describe('GET /analytics/overview', () => {
  test('totals, by protocol and by chain, hand-checked', async () => {
    const res = await t.get('/api/v1/analytics/overview', pro);
    assert.equal(res.statusCode, 200);
    const d = res.json().data;
    assert.equal(d.atRiskHealthFactor, 1.1);
    assert.deepEqual(d.totals, {
      markets: 3,
      unpricedMarkets: 0,
      supplyUsd: 1_700_000,
      borrowUsd: 1_050_000,
      utilization: 0.61764706, // 1.05 M / 1.7 M
      positions: 5,
      borrowPositions: 4,
      positionsAtRisk: 3,
      liquidatablePositions: 1,
      debtAtRiskUsd: 2_650, // 900 + 1,000 + 750
    });
    assert.deepEqual(
      d.byProtocol.map((p: { protocol: string; markets: number; positionsAtRisk: number }) => [
        p.protocol,
        p.markets,
        p.positionsAtRisk,
      ]),
      [
        ['morpho', 2, 2],
        ['aave', 1, 1],
      ],
    );
    assert.deepEqual(
      d.byChain.map((p: { chainId: number; supplyUsd: number }) => [p.chainId, p.supplyUsd]),
      [
        [1, 1_500_000],
        [8453, 200_000],
      ],
    );
  });

  test('chainIds narrows the scope; Free tier is 403', async () => {
    const d = (await t.get('/api/v1/analytics/overview?chainIds=8453', pro)).json().data;
    assert.equal(d.totals.markets, 1);
    assert.equal(d.totals.debtAtRiskUsd, 750);
    assert.equal((await t.get('/api/v1/analytics/overview', free)).statusCode, 403);
  });
});

describe('GET /analytics/timeseries', () => {
  test('behavior: the days that can no longer change are read when the server starts, not by the first request', async () => {
    // The app reads them right after it is ready, in the background.
    for (let i = 0; i < 100 && !historyReads.some(([, to]) => to === midnight - DAY); i++)
      await new Promise((r) => setTimeout(r, 10));
    assert.ok(historyReads.length > 0, 'read at start');
    assert.ok(historyReads.every(([, to]) => to <= midnight - DAY));
    historyReads.length = 0;
    const res = await t.get('/api/v1/analytics/timeseries', pro);
    assert.equal(res.statusCode, 200);
    // The first request reads yesterday and today only.
    assert.equal(historyReads.length, 1, JSON.stringify(historyReads));
    assert.equal(historyReads[0]![0], midnight - DAY);
  });

  test('daily sums by protocol from the stored history, hand-checked', async () => {
    const res = await t.get('/api/v1/analytics/timeseries', pro);
    assert.equal(res.statusCode, 200);
    const d = res.json().data;
    assert.deepEqual(d, [
      {
        date: '2026-11-20',
        protocol: 'aave',
        chainId: null,
        markets: 1,
        supplyUsd: 400,
        borrowUsd: 100,
        utilization: 0.25,
        liquidations: 0,
        unpricedLiquidations: 0,
        liquidatedDebtUsd: 0,
        collateralSeizedUsd: 0,
        badDebtUsd: 0,
      },
      {
        date: '2026-11-20',
        protocol: 'morpho',
        chainId: null,
        markets: 2,
        supplyUsd: 4_000,
        borrowUsd: 2_000,
        utilization: 0.5,
        liquidations: 2,
        unpricedLiquidations: 0,
        liquidatedDebtUsd: 150,
        collateralSeizedUsd: 157.5,
        badDebtUsd: 5,
      },
      {
        date: '2026-11-21',
        protocol: 'aave',
        chainId: null,
        markets: 0,
        supplyUsd: 0,
        borrowUsd: 0,
        utilization: 0,
        liquidations: 1,
        unpricedLiquidations: 0,
        liquidatedDebtUsd: 30,
        collateralSeizedUsd: 31.5,
        badDebtUsd: 0,
      },
      {
        date: '2026-11-21',
        protocol: 'morpho',
        chainId: null,
        markets: 1,
        supplyUsd: 1_100,
        borrowUsd: 600,
        utilization: 0.54545455,
        liquidations: 0,
        unpricedLiquidations: 0,
        liquidatedDebtUsd: 0,
        collateralSeizedUsd: 0,
        badDebtUsd: 0,
      },
    ]);
  });

  test('groupBy=chain, chain filter, paging by cursor', async () => {
    const byChain = (await t.get('/api/v1/analytics/timeseries?groupBy=chain&chainIds=1', pro)).json();
    assert.deepEqual(
      byChain.data.map((p: { date: string; chainId: number; supplyUsd: number }) => [
        p.date,
        p.chainId,
        p.supplyUsd,
      ]),
      [
        ['2026-11-20', 1, 4_000],
        ['2026-11-21', 1, 1_100],
      ],
    );
    const first = (await t.get('/api/v1/analytics/timeseries?limit=3', pro)).json();
    assert.equal(first.data.length, 3);
    const next = (
      await t.get(`/api/v1/analytics/timeseries?limit=3&cursor=${first.meta.nextCursor}`, pro)
    ).json();
    assert.deepEqual(
      next.data.map((p: { date: string; protocol: string }) => [p.date, p.protocol]),
      [['2026-11-21', 'morpho']],
    );
    assert.equal(next.meta.nextCursor, undefined);
  });

  test('startDate is clamped to the tier window; an enterprise key sees the older day', async () => {
    const res = (await t.get('/api/v1/analytics/timeseries?startDate=2026-01-01', pro)).json();
    assert.ok(res.meta.clamped.startDate);
    assert.ok(res.data.every((p: { date: string }) => p.date >= '2026-08-24'));
    const ent = await t.key('enterprise');
    const all = (await t.get('/api/v1/analytics/timeseries?startDate=2026-01-01', ent)).json();
    assert.equal(all.data[0].date, '2026-05-06');
  });
});

describe('DailyTotals', () => {
  test('behavior: a slow store is read in shorter slices, a fast one in longer, 1 to 30 days', async () => {
    const ranges: number[] = [];
    let clockMs = 0;
    // Each query "takes" 4 ms a day: 30 days is 120 ms, over the 15 ms aimed at.
    const reader = {
      dailyMarketTotals: async (from: number, to: number) => {
        ranges.push((to - from) / DAY);
        clockMs += ((to - from) / DAY) * 4;
        return [];
      },
      dailyLiquidationTotals: async () => [],
    };
    const totals = new DailyTotals(reader, { elapsed: () => clockMs });
    await totals.read(midnight - 200 * DAY, midnight - DAY, NOW, 1);
    assert.equal(
      ranges.reduce((a, b) => a + b, 0),
      199,
      'every day read once',
    );
    assert.deepEqual(ranges.slice(0, 4), [30, 15, 7, 3]);
    // From then on no query takes over 15 ms (3 days: 12 ms).
    assert.ok(
      ranges.slice(3).every((d) => d * 4 <= 15),
      JSON.stringify(ranges),
    );
  });

  test('behavior: prepare keeps every day that can no longer change, so a request then reads two days', async () => {
    const ranges: [number, number][] = [];
    const reader = {
      dailyMarketTotals: async (from: number, to: number) => {
        ranges.push([from, to]);
        return t.store.dailyMarketTotals(from, to);
      },
      dailyLiquidationTotals: (from: number, to: number) => t.store.dailyLiquidationTotals(from, to),
    };
    const totals = new DailyTotals(reader, { elapsed: () => 0 });
    await totals.prepare(NOW, 1);
    assert.ok(ranges.length > 0);
    assert.ok(ranges.every(([, to]) => to <= midnight - DAY));
    ranges.length = 0;
    await totals.read(midnight - 400 * DAY, NOW, NOW, 1);
    assert.deepEqual(ranges, [[midnight - DAY, NOW]]);
  });

  test('behavior: days before yesterday are read once; yesterday and today on every call', async () => {
    const ranges: [number, number][] = [];
    const reader = {
      dailyMarketTotals: async (from: number, to: number) => {
        ranges.push([from, to]);
        return t.store.dailyMarketTotals(from, to);
      },
      dailyLiquidationTotals: (from: number, to: number) => t.store.dailyLiquidationTotals(from, to),
    };
    const totals = new DailyTotals(reader, { elapsed: () => 0 });
    const from = midnight - 10 * DAY;
    const first = await totals.read(from, NOW, NOW, 1);
    assert.deepEqual(ranges, [
      [from, midnight - DAY],
      [midnight - DAY, NOW],
    ]);
    const again = await totals.read(from, NOW, NOW, 1);
    assert.deepEqual(ranges.slice(2), [[midnight - DAY, NOW]]);
    assert.deepEqual([...again.keys()], [...first.keys()]);
    // A day later the kept range grows by the one day that became stable.
    await totals.read(from, NOW + DAY, NOW + DAY, 1);
    assert.deepEqual(ranges.slice(3), [
      [midnight - DAY, midnight],
      [midnight, NOW + DAY],
    ]);
    // A new dataset version starts over.
    await totals.read(from, NOW, NOW, 2);
    assert.deepEqual(ranges.slice(5)[0], [from, midnight - DAY]);
  });
  test('behavior: concurrent reads keep each day once; a far end date is cut to tomorrow', async () => {
    const ranges: [number, number][] = [];
    const reader = {
      dailyMarketTotals: async (from: number, to: number) => {
        ranges.push([from, to]);
        return t.store.dailyMarketTotals(from, to);
      },
      dailyLiquidationTotals: (from: number, to: number) => t.store.dailyLiquidationTotals(from, to),
    };
    const totals = new DailyTotals(reader, { elapsed: () => 0 });
    const from = midnight - 10 * DAY;
    const [x, y] = await Promise.all([totals.read(from, NOW, NOW, 1), totals.read(from, NOW, NOW, 1)]);
    const supplyOf = (days: typeof x) =>
      [...days.values()].flatMap((d) => d.markets).reduce((sum, m) => sum + m.supplyUsd, 0);
    // d2: 1,000 + 3,000 + 400; d1: 1,100
    assert.equal(supplyOf(x), 5_500);
    assert.equal(supplyOf(y), 5_500);
    await totals.read(from, Date.parse('9999-12-31'), NOW, 1);
    assert.ok(
      ranges.every(([, to]) => to <= midnight + DAY),
      JSON.stringify(ranges),
    );
  });
});
