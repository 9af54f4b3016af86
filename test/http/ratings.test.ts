import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { RatingsJob } from '../../src/data/ratings-job.ts';
import { points } from '../../src/domain/precision.ts';
import { gradeOf, ratingMethodology } from '../../src/domain/rating.ts';
import type { AssetPrice, LiquidationEvent } from '../../src/domain/records/history.ts';
import type { RatingChangeView } from '../../src/queries/ratings.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { ManualClock } from '../clock.ts';
import {
  createTestApp,
  GENEROUS_TIERS,
  makeMarket,
  makePosition,
  makeVault,
  modelOf,
  type TestApp,
  tiersWith,
} from '../helpers.ts';

/**
 * The ratings routes on a hand-built model and a store holding its history: every component's
 * score worked out by hand from the data (the arithmetic is in the comments), through HTTP.
 */

const NOW = '2026-11-22T12:00:00.000Z';
const NOW_MS = Date.parse(NOW);
const DAY = 86_400_000;
const HOUR = 3_600_000;
const hex = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;
const WETH = hex(0x1001);
const USDC = hex(0x1002);

// A: WETH/USDC on Ethereum, LLTV 0.95, 8M borrowed of 10M, three borrowers (4M, 2M, 2M).
const a = makeMarket({
  collateral: 'WETH',
  collateralAddress: WETH,
  loan: 'USDC',
  loanAddress: USDC,
  label: 'WETH / USDC',
  collateralPrice: 3000,
  loanPrice: 1,
  lltv: 0.95,
  supply: 10_000_000,
  borrow: 8_000_000,
});
// B: wstETH/WETH on Base (defaults: 800k of 1M, LLTV 0.86), no borrower known.
const b = makeMarket({ chainId: 8453 });
// C: wstETH/WETH on Ethereum without an oracle, no borrower known.
const c = makeMarket({ oracle: null });
const vault = makeVault([a, c], {
  allocations: [
    { marketKey: a.uniqueKey, supplyShare: 0.1, supplyCapUsd: null }, // 1,000,000
    { marketKey: c.uniqueKey, supplyShare: 0.5, supplyCapUsd: null }, // 500,000
  ],
});
const baseVault = makeVault([b]);
const positions = [
  ...[4_000_000, 2_000_000, 2_000_000].map((debt) =>
    makePosition(a, { collateralUsd: debt * 1.5, borrowUsd: debt }),
  ),
  // B and C: one borrower owing the whole borrow each
  makePosition(b, { collateralUsd: 1_200_000, borrowUsd: 800_000 }),
  makePosition(c, { collateralUsd: 1_200_000, borrowUsd: 800_000 }),
];

/** 9 daily closes of WETH alternating 3000 and 3000 x e^0.01 (USDC at 1): returns +-0.01. */
function prices(): AssetPrice[] {
  const rows: AssetPrice[] = [];
  const firstDay = Date.parse('2026-11-13T00:00:00Z');
  for (let d = 0; d < 9; d++) {
    const day = firstDay + d * DAY;
    // a price at noon that the day's close (23:00) replaces
    rows.push({ chainId: 1, token: WETH, at: day + 12 * HOUR, priceUsd: 5000 });
    rows.push({
      chainId: 1,
      token: WETH,
      at: day + 23 * HOUR,
      priceUsd: 3000 * Math.exp(d % 2 === 0 ? 0 : 0.01),
    });
    rows.push({ chainId: 1, token: USDC, at: day + 23 * HOUR, priceUsd: 1 });
  }
  return rows;
}

function liquidation(
  n: number,
  marketKey: string,
  atMs: number,
  repaid: number,
  bad: number,
): LiquidationEvent {
  return {
    protocol: 'morpho',
    chainId: 1,
    txHash: `0x${n.toString(16).padStart(64, '0')}`,
    logIndex: 0,
    block: 21_000_000 + n,
    at: atMs,
    marketKey,
    borrower: hex(0xb0 + n),
    liquidator: hex(0x10),
    collateralSeized: 1,
    collateralSeizedUsd: repaid * 1.05,
    debtRepaid: repaid,
    debtRepaidUsd: repaid,
    badDebt: bad,
    badDebtUsd: bad,
  };
}

const HISTORY = [
  liquidation(1, a.uniqueKey, NOW_MS - 10 * DAY, 100_000, 0),
  liquidation(2, a.uniqueKey, NOW_MS - 20 * DAY, 150_000, 5_000),
  // older than 90 days: not counted
  liquidation(3, a.uniqueKey, NOW_MS - 100 * DAY, 1_000_000, 500_000),
  liquidation(4, c.uniqueKey, NOW_MS - 5 * DAY, 20_000, 0),
];

/** A store holding the models' history (the model is the store's dataset: `stored`). */
async function storeWithHistory(): Promise<SqliteStore> {
  const store = new SqliteStore(':memory:');
  await store.migrate();
  await store.appendAssetPrices(prices());
  await store.appendLiquidations(HISTORY);
  return store;
}

function liveModel(clock: ManualClock) {
  const model = modelOf([a, b, c], positions, clock, [vault, baseVault]);
  model.stored = true;
  return model;
}

// ---- the expected ratings, by hand --------------------------------------------------------------

// A. oracle: Chainlink, one fresh feed: 90.
// lltvBuffer: 8 returns of +-0.01, mean 0: daily sigma sqrt(8 x 0.01^2 / 7); move 3 sigma;
// coverage 0.05 / move = 1.559; score 100 x (coverage - 0.5) / 2.
const sigmaA = Math.sqrt((8 * 0.01 ** 2) / 7);
const bufferA = points((100 * (0.05 / (3 * sigmaA) - 0.5)) / 2);
// liquidity: utilization 0.8 (part 100); 2M available: 100 x (log10(2e6) - 4) / 3 = 76.70; 0.6 x 100 + 0.4 x 76.70
const liquidityA = points(60 + (0.4 * 100 * (Math.log10(2e6) - 4)) / 3);
// concentration: top 10 owe all; HHI 0.5^2 + 0.25^2 + 0.25^2 = 0.375: 100 x (1 - 1.375 / 2)
const concentrationA = 31.25;
// liquidations (2 in 90 days): repaid 250k = 3.125 % of 8M: 30 x 0.125 = 3.75;
// bad debt 5k = 0.0625 %: 70 x 0.0625 = 4.375; 100 - 8.125
const liquidationsA = 91.88;
// size: 10M supplied: 100 x (7 - 5) / (9 - 5) = 50; usage: 3 borrowers: 100 x log10(3) / 3;
// history: 9 days with a price of both tokens: 100 x 9 / 90 = 10
const usageA = points((100 * Math.log10(3)) / 3);
const scoreA = points(
  0.2 * 90 +
    0.2 * bufferA +
    0.15 * liquidityA +
    0.1 * concentrationA +
    0.1 * liquidationsA +
    0.1 * 50 +
    0.05 * usageA +
    0.1 * 10,
);
// C. no oracle: 0; wstETH/WETH without history: the eth peg's 6 %/yr, coverage 0.14 / (3 x 0.06 /
// sqrt(365)) = 14.9: 100; 200k available: 0.6 x 100 + 0.4 x 100 x (log10(2e5) - 4) / 3;
// one borrower owes all: 0; one liquidation repaid 20k = 2.5 %: 100 - 3; 1M supplied: size 25;
// one borrower: usage 0; no day with a price of wstETH: history 0
const liquidityC = points(60 + (0.4 * 100 * (Math.log10(2e5) - 4)) / 3);
const scoreC = points(0.2 * 0 + 0.2 * 100 + 0.15 * liquidityC + 0.1 * 0 + 0.1 * 97 + 0.1 * 25);
// B. as C but with its fresh Chainlink oracle (90) and no liquidation (100).
const scoreB = points(0.2 * 90 + 0.2 * 100 + 0.15 * liquidityC + 0.1 * 0 + 0.1 * 100 + 0.1 * 25);
// The vault: 1M in A, 500k in C: markets 2/3 x A + 1/3 x C; HHI 4/9 + 1/9: diversification 100 x 4/9;
// 1.5M held: size 100 x (log10(1.5e6) - 5) / 4
const vaultMarkets = points((2 / 3) * scoreA + (1 / 3) * scoreC);
const vaultDiversification = points((100 * 4) / 9);
const vaultSize = points((100 * (Math.log10(1.5e6) - 5)) / 4);
const vaultScore = points(0.7 * vaultMarkets + 0.15 * vaultDiversification + 0.15 * vaultSize);
// The Base vault: 500k in B alone: diversification 0, size 100 x (log10(5e5) - 5) / 4
const baseVaultScore = points(0.7 * scoreB + 0.15 * points((100 * (Math.log10(5e5) - 5)) / 4));

// ---------------------------------------------------------------------------------------------------

const clock = new ManualClock(NOW);
let t: TestApp;
let pro: string;
let free: string;
let enterprise: string;

before(async () => {
  t = await createTestApp({
    clock,
    tiers: GENEROUS_TIERS,
    live: liveModel(clock),
    store: await storeWithHistory(),
  });
  pro = await t.key('pro');
  free = await t.key('free');
  enterprise = await t.key('enterprise');
});
after(() => t.close());

const ROUTES = [
  '/api/v1/ratings/markets',
  `/api/v1/ratings/markets/${a.uniqueKey}`,
  `/api/v1/ratings/markets/${a.uniqueKey}/history`,
  '/api/v1/ratings/vaults',
  `/api/v1/ratings/vaults/1/${vault.address}`,
  `/api/v1/ratings/vaults/1/${vault.address}/history`,
  '/api/v1/ratings/methodology',
];

describe('ratings: access', () => {
  test('error: the Free tier gets 403 TIER_FORBIDDEN on every ratings route; Pro and Enterprise are answered', async () => {
    for (const path of ROUTES) {
      const res = await t.get(path, free);
      assert.equal(res.statusCode, 403, path);
      assert.deepEqual(res.json(), {
        error: 'TIER_FORBIDDEN',
        message: "The free tier does not include the 'ratings' endpoints.",
        tier: 'free',
        category: 'ratings',
      });
      assert.equal((await t.get(path, pro)).statusCode, 200, path);
      assert.equal((await t.get(path, enterprise)).statusCode, 200, path);
    }
  });
});

describe('GET /ratings/markets/{marketId}', () => {
  test('default: every component computed from the data, as worked out by hand', async () => {
    const res = await t.get(`/api/v1/ratings/markets/${a.uniqueKey.toUpperCase()}`, pro);
    assert.equal(res.statusCode, 200);
    const { data, meta } = res.json();
    assert.equal(data.marketId, a.uniqueKey);
    assert.deepEqual(
      Object.fromEntries(Object.entries<{ score: number }>(data.components).map(([k, v]) => [k, v.score])),
      {
        oracle: 90,
        lltvBuffer: bufferA,
        liquidity: liquidityA,
        concentration: concentrationA,
        liquidations: liquidationsA,
        size: 50,
        usage: usageA,
        history: 10,
      },
    );
    assert.equal(bufferA, 52.95);
    assert.equal(data.score, scoreA);
    assert.equal(data.score, 61.3);
    assert.equal(data.grade, 'BBB');
    assert.equal(data.reason, null);
    assert.equal(data.methodologyVersion, '2.0.0');
    assert.equal(data.ratedAt, NOW);
    assert.deepEqual(
      Object.values<{ weight: number }>(data.components).map((x) => x.weight),
      [0.2, 0.2, 0.15, 0.1, 0.1, 0.1, 0.05, 0.1],
    );
    assert.equal(
      data.components.size.explanation,
      '$10,000,000 supplied (the floor of $100,000 scores 0, $1,000,000,000 scores 100).',
    );
    assert.equal(data.components.usage.explanation, '3 borrowers with debt (1,000 score 100).');
    assert.equal(
      data.components.history.explanation,
      '9 days of stored prices of both tokens in the last 90.',
    );
    assert.deepEqual(data.metrics, {
      oracleStalenessRatio: 0,
      lltv: 0.95,
      volatility: Number((sigmaA * Math.sqrt(365)).toFixed(8)),
      volatilitySource: 'history',
      volatilityReturns: 8,
      stressMove: Number((3 * sigmaA).toFixed(8)),
      bufferCoverage: Number((0.05 / (3 * sigmaA)).toPrecision(8)),
      utilization: 0.8,
      supplyUsd: 10_000_000,
      availableUsd: 2_000_000,
      borrowers: 3,
      historyDays: 9,
      top10Share: 1,
      herfindahl: 0.375,
      liquidations: 2,
      liquidatedUsd: 250_000,
      badDebtUsd: 5_000,
    });
    assert.equal(
      data.components.liquidations.explanation,
      '2 liquidations in the last 90 days repaid $250,000 (3.13 % of borrow); bad debt $5,000 (0.06 % of borrow).',
    );
    assert.match(data.components.lltvBuffer.explanation, /measured over 8 daily returns/);
    assert.equal(
      data.components.concentration.explanation,
      '3 borrowers: the largest 3 owe 100.0 % of the debt, Herfindahl index 0.375.',
    );
    // the envelope of every data route; asOf: the data the ratings were computed from
    assert.equal(meta.freshness, 'snapshot');
    assert.equal(meta.source, 'morpho');
    assert.equal(meta.asOf, '2026-11-22T00:00:00.000Z');
    assert.ok(res.headers.etag);
  });

  test("default: without stored price history the volatility is the families' default, and says so", async () => {
    const data = (await t.get(`/api/v1/ratings/markets/${c.uniqueKey}`, pro)).json().data;
    assert.equal(data.components.oracle.score, 0);
    assert.equal(data.components.oracle.explanation, 'No oracle data: the price source is unknown.');
    assert.equal(data.components.lltvBuffer.score, 100);
    assert.equal(data.metrics.volatility, 0.06);
    assert.equal(data.metrics.volatilitySource, 'family');
    assert.match(
      data.components.lltvBuffer.explanation,
      /no stored price history: eth-lst\/eth family default/,
    );
    assert.equal(data.components.concentration.score, 0);
    assert.equal(data.components.liquidations.score, 97);
    assert.equal(data.components.history.score, 0);
    assert.equal(data.score, scoreC);
    assert.equal(data.grade, gradeOf(scoreC));
  });

  test('error: unknown market 404, malformed id 400', async () => {
    const unknown = await t.get(`/api/v1/ratings/markets/morpho-1-0x${'9'.repeat(64)}`, pro);
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json().error, 'MARKET_NOT_FOUND');
    const bad = await t.get('/api/v1/ratings/markets/not-a-market', pro);
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().details[0].parameter, 'marketId');
  });
});

describe('GET /ratings/markets', () => {
  test('default: by score, best first, with the total', async () => {
    const { data, meta } = (await t.get('/api/v1/ratings/markets', pro)).json();
    assert.deepEqual(
      data.map((m: { marketId: string; score: number }) => [m.marketId, m.score]),
      [
        [b.uniqueKey, scoreB],
        [a.uniqueKey, scoreA],
        [c.uniqueKey, scoreC],
      ],
    );
    assert.equal(meta.total, 3);
    assert.equal(meta.nextCursor, undefined);
    const asc = (await t.get('/api/v1/ratings/markets?order=asc', pro)).json().data;
    assert.deepEqual(
      asc.map((m: { marketId: string }) => m.marketId),
      [c.uniqueKey, a.uniqueKey, b.uniqueKey],
    );
  });

  test('behavior: minScore, grade, protocol and chain filters', async () => {
    const ids = async (query: string) => {
      const body = (await t.get(`/api/v1/ratings/markets?${query}`, pro)).json();
      return { ids: body.data.map((m: { marketId: string }) => m.marketId), meta: body.meta };
    };
    assert.deepEqual((await ids(`minScore=${scoreA}`)).ids, [b.uniqueKey, a.uniqueKey]);
    assert.deepEqual((await ids(`grade=${gradeOf(scoreC)}`)).ids, [c.uniqueKey]);
    assert.deepEqual((await ids('chainIds=8453')).ids, [b.uniqueKey]);
    assert.deepEqual((await ids('chainIds=1&order=asc')).ids, [c.uniqueKey, a.uniqueKey]);
    const none = await ids('protocol=aave');
    assert.deepEqual(none.ids, []);
    assert.equal(none.meta.total, 0);
    assert.equal(none.meta.source, 'aave');
    for (const q of ['minScore=101', 'minScore=-1', 'grade=E', 'order=up', 'limit=0', 'cursor=abc']) {
      const res = await t.get(`/api/v1/ratings/markets?${q}`, pro);
      assert.equal(res.statusCode, 400, q);
      assert.equal(res.json().error, 'INVALID_PARAMETER');
    }
  });

  test('behavior: pages by cursor, in both orders, without repeating an item', async () => {
    for (const order of ['desc', 'asc']) {
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const url = `/api/v1/ratings/markets?limit=1&order=${order}${cursor ? `&cursor=${cursor}` : ''}`;
        const { data, meta } = (await t.get(url, pro)).json();
        assert.equal(meta.total, 3);
        seen.push(...data.map((m: { marketId: string }) => m.marketId));
        cursor = meta.nextCursor;
      } while (cursor);
      const best = [b.uniqueKey, a.uniqueKey, c.uniqueKey];
      assert.deepEqual(seen, order === 'desc' ? best : best.reverse());
    }
    // a cursor of another order is refused
    const first = (await t.get('/api/v1/ratings/markets?limit=1', pro)).json().meta.nextCursor;
    const res = await t.get(`/api/v1/ratings/markets?limit=1&order=asc&cursor=${first}`, pro);
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().details[0].parameter, 'cursor');
  });

  test('behavior: limit is lowered to the route maximum and the tier cap, and reported', async () => {
    // Pro: result cap 500 below the route maximum 1,000
    const capped = (await t.get('/api/v1/ratings/markets?limit=5000', pro)).json().meta;
    assert.deepEqual(capped.clamped, { limit: { requested: 5000, applied: 500 } });
    // Enterprise: no cap, the route maximum
    const max = (await t.get('/api/v1/ratings/markets?limit=5000', enterprise)).json().meta;
    assert.deepEqual(max.clamped, { limit: { requested: 5000, applied: 1000 } });
    const vaults = (await t.get('/api/v1/ratings/vaults?limit=600', enterprise)).json().meta;
    assert.deepEqual(vaults.clamped, { limit: { requested: 600, applied: 500 } });
  });
});

describe('GET /ratings/vaults', () => {
  test('default: 0.7 x the supply-weighted markets + 0.15 x diversification + 0.15 x size, by hand', async () => {
    const { data } = (
      await t.get(`/api/v1/ratings/vaults/1/${vault.address.toUpperCase().replace('0X', '0x')}`, pro)
    ).json();
    assert.equal(data.components.markets.score, vaultMarkets);
    assert.equal(data.components.diversification.score, vaultDiversification);
    assert.equal(data.components.diversification.score, 44.44);
    assert.equal(data.components.size.score, vaultSize);
    assert.equal(data.score, vaultScore);
    assert.equal(data.grade, gradeOf(vaultScore));
    assert.equal(data.reason, null);
    assert.deepEqual(data.metrics, {
      totalAssetsUsd: 1_500_000,
      allocations: 2,
      ratedAllocations: 2,
      herfindahl: 0.55555556,
      largestShare: 0.66666667,
    });
    assert.deepEqual(data.allocations, [
      { marketId: a.uniqueKey, share: 0.66666667, grade: gradeOf(scoreA), score: scoreA },
      { marketId: c.uniqueKey, share: 0.33333333, grade: gradeOf(scoreC), score: scoreC },
    ]);
  });

  test('behavior: lists by score with filters; unknown vault 404', async () => {
    const { data, meta } = (await t.get('/api/v1/ratings/vaults', pro)).json();
    assert.equal(meta.total, 2);
    assert.deepEqual(
      data.map((v: { address: string }) => v.address),
      baseVaultScore > vaultScore ? [baseVault.address, vault.address] : [vault.address, baseVault.address],
    );
    const base = data.find((v: { address: string }) => v.address === baseVault.address);
    assert.equal(base.score, baseVaultScore);
    const onOne = (await t.get('/api/v1/ratings/vaults?chainIds=1&asset=weth', pro)).json();
    assert.deepEqual(
      onOne.data.map((v: { address: string }) => v.address),
      [],
      'the Ethereum vault lends USDC',
    );
    const usdc = (await t.get('/api/v1/ratings/vaults?asset=usdc', pro)).json();
    assert.deepEqual(
      usdc.data.map((v: { address: string }) => v.address),
      [vault.address],
    );
    const missing = await t.get(`/api/v1/ratings/vaults/1/${hex(0xdead)}`, pro);
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.json().error, 'VAULT_NOT_FOUND');
  });
});

describe('ratings: not graded (NR)', () => {
  test('behavior: below the size floor, or without a known borrower, not graded; an empty vault says so', async () => {
    const own = new ManualClock(NOW);
    // tiny: 50k supplied; unknown: 800k borrowed, no borrower known; both with a month of prices
    const tiny = makeMarket({
      collateral: 'WETH',
      collateralAddress: WETH,
      loan: 'USDC',
      loanAddress: USDC,
      collateralPrice: 3000,
      loanPrice: 1,
      supply: 50_000,
      borrow: 10_000,
    });
    const unknown = makeMarket({
      collateral: 'WETH',
      collateralAddress: WETH,
      loan: 'USDC',
      loanAddress: USDC,
      collateralPrice: 3000,
      loanPrice: 1,
    });
    const empty = makeVault([tiny], {
      allocations: [{ marketKey: tiny.uniqueKey, supplyShare: 0, supplyCapUsd: null }],
    });
    const model = modelOf([tiny, unknown], [makePosition(tiny, { borrowUsd: 10_000 })], own, [empty]);
    model.stored = true;
    const app = await createTestApp({
      clock: own,
      tiers: GENEROUS_TIERS,
      live: model,
      store: await storeWithHistory(),
    });
    try {
      const key = await app.key('pro');
      const get = async (path: string) => (await app.get(`/api/v1/ratings/${path}`, key)).json().data;
      const small = await get(`markets/${tiny.uniqueKey}`);
      assert.equal(small.grade, 'NR');
      assert.equal(small.score, null);
      assert.equal(small.reason, 'Not graded: $50,000 supplied, below the size floor of $100,000.');
      const blind = await get(`markets/${unknown.uniqueKey}`);
      assert.equal(blind.grade, 'NR');
      assert.equal(
        blind.reason,
        'Not graded: concentration: no borrower position is known for its $800,000 of borrow.',
      );
      const v = await get(`vaults/1/${empty.address}`);
      assert.equal(v.grade, 'NR');
      assert.equal(v.score, null);
      assert.equal(v.reason, 'Not graded: $0 held, below the size floor of $100,000.');
      for (const c of Object.values<{ explanation: string }>(v.components))
        assert.doesNotMatch(c.explanation, /allocation \d/);
      // graded first in the lists; minScore leaves the not graded out
      const list = (await app.get('/api/v1/ratings/markets?minScore=0', key)).json();
      assert.equal(list.meta.total, 0);
      const nr = (await app.get('/api/v1/ratings/markets?grade=NR', key)).json();
      assert.equal(nr.meta.total, 2);
    } finally {
      await app.close();
    }
  });
});

describe('GET /ratings/methodology', () => {
  test('default: the versioned methodology, as the formulas use it', async () => {
    const { data, meta } = (await t.get('/api/v1/ratings/methodology', pro)).json();
    assert.deepEqual(data, ratingMethodology());
    assert.equal(data.version, '2.0.0');
    assert.equal(data.sizeFloorUsd, 100_000);
    assert.equal(meta.source, 'morpho');
  });
});

describe('ratings: chains outside the tier', () => {
  test('error: a tier limited to Ethereum has Base filtered out of lists and refused on details', async () => {
    const own = new ManualClock(NOW);
    const app = await createTestApp({
      clock: own,
      live: liveModel(own),
      store: await storeWithHistory(),
      tiers: tiersWith((tiers) => {
        tiers.pro!.chains = [1];
        tiers.pro!.ratePerSecond = 1_000_000;
      }),
    });
    try {
      const key = await app.key('pro');
      const list = (await app.get('/api/v1/ratings/markets?chainIds=1,8453', key)).json();
      assert.deepEqual(
        list.data.map((m: { chainId: number }) => m.chainId),
        [1, 1],
      );
      assert.deepEqual(list.meta.clamped, { chainIds: { requested: [1, 8453], applied: [1] } });
      const scoped = (await app.get('/api/v1/ratings/vaults', key)).json();
      assert.deepEqual(
        scoped.data.map((v: { chainId: number }) => v.chainId),
        [1],
      );
      for (const path of [
        `/api/v1/ratings/markets/${b.uniqueKey}`,
        `/api/v1/ratings/markets/${b.uniqueKey}/history`,
        `/api/v1/ratings/vaults/8453/${baseVault.address}`,
        `/api/v1/ratings/vaults/8453/${baseVault.address}/history`,
      ]) {
        const res = await app.get(path, key);
        assert.equal(res.statusCode, 403, path);
        assert.deepEqual(res.json(), {
          error: 'CHAIN_FORBIDDEN',
          message: 'The pro tier does not include chain 8453.',
          tier: 'pro',
          chainId: 8453,
        });
      }
    } finally {
      await app.close();
    }
  });
});

describe('ratings: the job', () => {
  test('behavior: changes are recorded, daily at 00:00 UTC, only beyond the tolerance, with the rating before', async () => {
    const own = new ManualClock(NOW);
    const store = await storeWithHistory();
    const app = await createTestApp({ clock: own, tiers: GENEROUS_TIERS, live: liveModel(own), store });
    try {
      const key = await app.key('pro');
      const history = async (path: string, query = '') =>
        (await app.get(`/api/v1/ratings/${path}/history${query}`, key)).json();
      const first = await history(`markets/${a.uniqueKey}`);
      assert.deepEqual(first.data, [
        {
          at: NOW,
          grade: gradeOf(scoreA),
          score: scoreA,
          reason: null,
          previousGrade: null,
          previousScore: null,
          methodologyVersion: '2.0.0',
          components: {
            oracle: 90,
            lltvBuffer: bufferA,
            liquidity: liquidityA,
            concentration: concentrationA,
            liquidations: liquidationsA,
            size: 50,
            usage: usageA,
            history: 10,
          },
        },
      ]);
      assert.equal((await history(`vaults/1/${vault.address}`)).data.length, 1);
      // not due before midnight; due at 00:00 UTC, and nothing moved: nothing recorded
      own.set('2026-11-22T23:59:59.999Z');
      assert.equal(await app.ratings.runDue(), 0);
      own.set('2026-11-23T00:00:00.000Z');
      assert.equal(await app.ratings.runDue(), 1);
      assert.equal(await app.ratings.runDue(), 0, 'rated for the day');
      // the store's history gained days (a backfill): due again at once, then not
      app.ratings.historyWritten();
      assert.equal(await app.ratings.runDue(), 1, 'rated again with the new history');
      assert.equal(await app.ratings.runDue(), 0);
      assert.equal((await history(`markets/${a.uniqueKey}`)).data.length, 1);
      const rerated = (await app.get(`/api/v1/ratings/markets/${a.uniqueKey}`, key)).json().data;
      assert.equal(rerated.ratedAt, '2026-11-23T00:00:00.000Z');
      assert.equal(rerated.score, scoreA);
      // bad debt of 1 % of A's borrow: the liquidations component loses its 70 points
      await store.appendLiquidations([liquidation(9, a.uniqueKey, NOW_MS, 0, 80_000)]);
      own.set('2026-11-24T00:00:00.000Z');
      assert.equal(await app.ratings.runDue(), 1);
      // 100 - 3.75 - 70 = 26.25
      const dropped = points(
        0.2 * 90 +
          0.2 * bufferA +
          0.15 * liquidityA +
          0.1 * concentrationA +
          0.1 * 26.25 +
          0.1 * 50 +
          0.05 * usageA +
          0.1 * 10,
      );
      const after = await history(`markets/${a.uniqueKey}`);
      assert.deepEqual(
        after.data.map((r: { at: string; score: number; previousScore: number | null }) => [
          r.at,
          r.score,
          r.previousScore,
        ]),
        [
          [NOW, scoreA, null],
          ['2026-11-24T00:00:00.000Z', dropped, scoreA],
        ],
      );
      assert.equal(after.data[1].previousGrade, gradeOf(scoreA));
      assert.equal(after.data[1].grade, gradeOf(dropped));
      // the vault follows its market
      assert.equal((await history(`vaults/1/${vault.address}`)).data.length, 2);
      // B and C did not move: one record each
      assert.equal((await history(`markets/${c.uniqueKey}`)).data.length, 1);
      // time range, limit and cursor
      const page = await history(`markets/${a.uniqueKey}`, '?limit=1');
      assert.equal(page.data[0].at, NOW);
      const next = await history(`markets/${a.uniqueKey}`, `?limit=1&cursor=${page.meta.nextCursor}`);
      assert.equal(next.data[0].at, '2026-11-24T00:00:00.000Z');
      assert.equal(next.meta.nextCursor, undefined);
      assert.deepEqual(
        (await history(`markets/${a.uniqueKey}`, '?startDate=2026-11-23')).data.map(
          (r: { at: string }) => r.at,
        ),
        ['2026-11-24T00:00:00.000Z'],
      );
      assert.deepEqual((await history(`markets/${a.uniqueKey}`, '?endDate=2026-11-21')).data, []);
      // startDate raised to the Pro tier's 90 days
      const clamped = await history(`markets/${a.uniqueKey}`, '?startDate=2026-01-01');
      assert.deepEqual(clamped.meta.clamped, {
        startDate: { requested: '2026-01-01T00:00:00.000Z', applied: '2026-08-26T00:00:00.000Z' },
      });
      const backwards = await app.get(
        `/api/v1/ratings/markets/${a.uniqueKey}/history?startDate=2026-11-20&endDate=2026-11-10`,
        key,
      );
      assert.equal(backwards.statusCode, 400);
      assert.equal(backwards.json().details[0].parameter, 'endDate');
    } finally {
      await app.close();
    }
  });

  test('behavior: the history records the step into NR with its reason and back out; NR after NR, a new reason alone, is not recorded', async () => {
    const own = new ManualClock(NOW);
    const live = liveModel(own);
    // The size floor, moved between runs: C (1M supplied) and the vault (1.5M held) fall below 2M.
    let floor = 100_000;
    const app = await createTestApp({
      clock: own,
      tiers: GENEROUS_TIERS,
      live,
      store: await storeWithHistory(),
      ratings: (store, clk) =>
        new RatingsJob({
          models: () => [live],
          store,
          clock: clk,
          writes: true,
          get sizeFloorUsd() {
            return floor;
          },
        }),
    });
    try {
      const key = await app.key('pro');
      const history = async (path: string) =>
        (await app.get(`/api/v1/ratings/${path}/history`, key)).json().data as RatingChangeView[];
      const brief = (rows: Awaited<ReturnType<typeof history>>) =>
        rows.map((r) => [r.at.slice(0, 10), r.grade, r.score, r.reason, r.previousGrade, r.previousScore]);
      const gradeC = gradeOf(scoreC);
      floor = 2_000_000;
      own.set('2026-11-23T00:00:00.000Z');
      assert.equal(await app.ratings.runDue(), 1);
      // still below, for another reason's figures: NR after NR is no change
      floor = 3_000_000;
      own.set('2026-11-24T00:00:00.000Z');
      assert.equal(await app.ratings.runDue(), 1);
      floor = 100_000;
      own.set('2026-11-25T00:00:00.000Z');
      assert.equal(await app.ratings.runDue(), 1);
      assert.deepEqual(brief(await history(`markets/${c.uniqueKey}`)), [
        ['2026-11-22', gradeC, scoreC, null, null, null],
        [
          '2026-11-23',
          'NR',
          null,
          'Not graded: $1,000,000 supplied, below the size floor of $2,000,000.',
          gradeC,
          scoreC,
        ],
        ['2026-11-25', gradeC, scoreC, null, 'NR', null],
      ]);
      const vaultRows = await history(`vaults/1/${vault.address}`);
      assert.deepEqual(
        vaultRows.map((r) => [r.at.slice(0, 10), r.grade, r.previousGrade]),
        [
          ['2026-11-22', gradeOf(vaultScore), null],
          ['2026-11-23', 'NR', gradeOf(vaultScore)],
          ['2026-11-25', gradeOf(vaultScore), 'NR'],
        ],
      );
      assert.match(
        vaultRows[1]?.reason ?? '',
        /^Not graded: \$1,500,000 held, below the size floor of \$2,000,000/,
      );
      // A (10M supplied) stayed graded (its size component, measured from the floor, moved)
      assert.ok(
        (await history(`markets/${a.uniqueKey}`)).every((r) => r.grade !== 'NR' && r.reason === null),
      );
    } finally {
      await app.close();
    }
  });

  test('behavior: a model no run has rated yet is 503 with Retry-After; the job rates it when asked', async () => {
    const own = new ManualClock(NOW);
    const live = liveModel(own);
    let models: (typeof live)[] = [];
    let job: RatingsJob | null = null;
    const app = await createTestApp({
      clock: own,
      tiers: GENEROUS_TIERS,
      live,
      ratings: (store, clk) => {
        job = new RatingsJob({ models: () => models, store, clock: clk, writes: true });
        return job;
      },
    });
    try {
      const key = await app.key('pro');
      const res = await app.get('/api/v1/ratings/markets', key);
      assert.equal(res.statusCode, 503);
      assert.equal(res.json().error, 'SERVICE_UNAVAILABLE');
      assert.equal(res.headers['retry-after'], '5');
      // the methodology needs no ratings
      assert.equal((await app.get('/api/v1/ratings/methodology', key)).statusCode, 200);
      models = [live];
      assert.equal(await job!.runDue(), 1);
      assert.equal((await app.get('/api/v1/ratings/markets', key)).json().meta.total, 3);
      // A market added to the model in place (the change feed) is rated with it again, once its
      // ratings are a minute old: markets may be added at every block.
      live.catalog.addMarkets([makeMarket({ chainId: 1 })]);
      live.risk.marketsAdded();
      assert.equal(await job!.runDue(), 0);
      own.advance(60_000);
      assert.equal(await job!.runDue(), 1);
      assert.equal((await app.get('/api/v1/ratings/markets', key)).json().meta.total, 4);
    } finally {
      await app.close();
    }
  });

  test('behavior: a failed run is reported and retried a minute later; stop abandons a run under way', async () => {
    const own = new ManualClock(NOW);
    const model = liveModel(own);
    const store = await storeWithHistory();
    let failures = 1;
    const flaky = Object.assign(Object.create(store) as SqliteStore, {
      assetPrices: (...args: Parameters<SqliteStore['assetPrices']>) => {
        if (failures-- > 0) return Promise.reject(new Error('store unreachable'));
        return store.assetPrices(...args);
      },
    });
    const errors: unknown[] = [];
    const job = new RatingsJob({
      models: () => [model],
      store: flaky,
      clock: own,
      writes: true,
      onError: (err) => errors.push(err),
    });
    assert.equal(await job.runDue(), 0);
    assert.deepEqual(
      errors.map((e) => (e as Error).message),
      ['store unreachable'],
    );
    assert.equal(job.ratingsOf(model), null);
    own.advance(59_999);
    assert.equal(await job.runDue(), 0, 'retried no sooner than a minute later');
    own.advance(1);
    assert.equal(await job.runDue(), 1);
    assert.equal(job.ratingsOf(model)?.markets.length, 3);
    // a run abandoned by stop() is neither an error nor a rating
    const other = liveModel(own);
    const stopping = new RatingsJob({
      models: () => [other],
      store,
      clock: own,
      writes: true,
      onError: (err) => errors.push(err),
    });
    const run = stopping.runDue();
    await stopping.stop();
    assert.equal(await run, 0);
    assert.equal(stopping.ratingsOf(other), null);
    assert.equal(await stopping.runDue(), 0, 'no run after stop');
    assert.equal(errors.length, 1);
    await store.close();
  });

  test("behavior: a dataset that is not the store's is not graded (no history), and records nothing", async () => {
    const own = new ManualClock(NOW);
    const sandbox = modelOf(
      [a, c],
      positions.filter((p) => p.marketKey !== b.uniqueKey),
      own,
      [vault],
    );
    const store = await storeWithHistory();
    const app = await createTestApp({
      clock: own,
      tiers: GENEROUS_TIERS,
      live: liveModel(own),
      sandbox,
      store,
    });
    try {
      const key = await app.key('pro', 'test');
      const data = (await app.get(`/api/v1/ratings/markets/${a.uniqueKey}`, key)).json().data;
      assert.equal(data.components.liquidations.score, 50);
      assert.equal(
        data.components.liquidations.explanation,
        'No stored liquidation history for this dataset: scored as unknown.',
      );
      assert.equal(data.metrics.volatilitySource, 'family');
      assert.equal(data.metrics.liquidations, null);
      assert.equal(data.metrics.historyDays, null);
      assert.equal(data.grade, 'NR');
      assert.equal(data.score, null);
      assert.equal(
        data.reason,
        'Not graded: liquidations: the dataset has no stored liquidation history; history: the dataset has no stored price history.',
      );
      // the vault rests on no graded market: not graded either, and listed after the graded
      const v = (await app.get(`/api/v1/ratings/vaults/1/${vault.address}`, key)).json().data;
      assert.equal(v.grade, 'NR');
      assert.equal(v.score, null);
      assert.match(v.reason, /markets: it has no allocation to a graded market/);
      assert.deepEqual(
        (await app.get(`/api/v1/ratings/markets/${a.uniqueKey}/history`, key)).json().data,
        [],
      );
      // the store records the live model's ratings only: one record of A, not two
      assert.equal((await store.ratingChanges('market', a.uniqueKey, 0, NOW_MS + 1, 10)).length, 1);
    } finally {
      await app.close();
    }
  });
});
