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

/** GET /tokens, /tokens/{chainId}/{address}, /oracles, /oracles/{chainId}/{address}: figures by hand. */

const clock = new ManualClock('2026-11-22T12:10:00Z');
const WETH = '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2';
const WSTETH = '0x7f39c581f595b53c5cb19bd0b3f8da6c935e2ca0';
const USDC = '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48';
// Fresh: updates every 30 min on a 1 h heartbeat (last at 12:00, 600 s ago).
const fresh = makeOracle();
// Stale: stopped at 09:10, 3 h ago, on a 1 h heartbeat.
const staleFeed = {
  address: `0x${'5'.repeat(40)}`,
  description: 'USDC / USD',
  pair: 'USDC/USD',
  heartbeatSeconds: 3600,
  lastUpdateTimestamp: Date.parse('2026-11-22T09:10:00Z') / 1000,
  updateIntervalSeconds: null,
  deviationThreshold: 0.001,
};
const stale = makeOracle({
  address: `0x${'0a'.repeat(20)}`,
  type: 'ChainlinkOracle',
  provider: 'Chainlink',
  feeds: [staleFeed],
});
// wstETH/WETH, largest: supply 1,000,000, borrow 800,000; WETH at 3300
const m1 = makeMarket({ oracle: fresh, collateralDecimals: 18, loanDecimals: 18 });
// wstETH/WETH too, smaller: WETH priced 3290 there
const m2 = makeMarket({ supply: 500_000, borrow: 100_000, loanPrice: 3290, oracle: fresh });
// WETH/USDC: WETH as collateral, USDC lent
const m3 = makeMarket({
  collateral: 'WETH',
  collateralName: 'Wrapped Ether',
  collateralAddress: WETH,
  collateralPrice: 3300,
  loan: 'USDC',
  loanName: 'USD Coin',
  loanAddress: USDC,
  loanPrice: 1,
  supply: 2_000_000,
  borrow: 1_500_000,
  oracle: stale,
});
// Base: WETH lent on another chain, by a source that records where its prices come from (an API
// for WETH; none known for wstETH)
const API_PRICE = { kind: 'api', address: null, description: 'Morpho API priceUsd' } as const;
const m4 = makeMarket({
  chainId: 8453,
  oracle: fresh,
  loanPriceSource: API_PRICE,
  collateralPriceSource: null,
});

let t: TestApp;
let pro: string;
let free: string;

before(async () => {
  t = await createTestApp({
    clock,
    tiers: GENEROUS_TIERS,
    live: modelOf([m1, m2, m3, m4], [makePosition(m1)], clock),
  });
  pro = await t.key('pro');
  free = await t.key('free');
});
after(() => t.close());

describe('GET /tokens', () => {
  test('default: by chain then address, with price, source and the markets lending them', async () => {
    const res = await t.get('/api/v1/tokens', pro);
    assert.equal(res.statusCode, 200);
    const { data, meta } = res.json();
    assert.deepEqual(
      data.map((x: { chainId: number; symbol: string }) => `${x.chainId}:${x.symbol}`),
      ['1:wstETH', '1:USDC', '1:WETH', '8453:wstETH', '8453:WETH'],
    );
    assert.equal(meta.total, 5);
    const weth = data.find(
      (x: { chainId: number; symbol: string }) => x.chainId === 1 && x.symbol === 'WETH',
    );
    assert.deepEqual(weth, {
      chainId: 1,
      address: WETH,
      symbol: 'WETH',
      name: 'Wrapped Ether',
      decimals: 18,
      // the price of the largest market holding it (m3, 2,000,000 supply: WETH as collateral)
      priceUsd: 3300,
      // ETH/USD prices WETH (the asset it wraps)
      priceSource: { kind: 'feed', address: fresh.feeds[0]!.address, description: 'ETH / USD' },
      collateralMarkets: 1,
      loanMarkets: 2,
      supplyUsd: 1_500_000, // m1 + m2
      borrowUsd: 900_000,
    });
    const wsteth = data.find(
      (x: { chainId: number; symbol: string }) => x.chainId === 1 && x.symbol === 'wstETH',
    );
    assert.equal(wsteth.address, WSTETH);
    // no feed prices wstETH: the oracle of its largest collateral market (m1)
    assert.deepEqual(wsteth.priceSource, {
      kind: 'oracle',
      address: fresh.address,
      description: 'ChainlinkOracleV2 (Chainlink)',
    });
    assert.equal(wsteth.supplyUsd, 0);
  });

  test('behavior: pages by cursor; symbol and chain filters; Free sees Ethereum', async () => {
    const seen: string[] = [];
    let cursor = '';
    for (;;) {
      const body = (await t.get(`/api/v1/tokens?limit=2${cursor ? `&cursor=${cursor}` : ''}`, pro)).json();
      seen.push(...body.data.map((x: { chainId: number; address: string }) => `${x.chainId}:${x.address}`));
      if (!body.meta.nextCursor) break;
      cursor = body.meta.nextCursor;
    }
    assert.equal(seen.length, 5);
    assert.equal(new Set(seen).size, 5);
    const weth = (await t.get('/api/v1/tokens?symbol=weth', pro)).json();
    assert.deepEqual(
      weth.data.map((x: { chainId: number }) => x.chainId),
      [1, 8453],
    );
    const base = (await t.get('/api/v1/tokens?chainIds=8453', pro)).json();
    assert.equal(base.meta.total, 2);
    // a recorded price source is served as recorded (an API's; none), not guessed from feeds and oracles
    assert.deepEqual(
      base.data.map((x: { symbol: string; priceSource: unknown }) => [x.symbol, x.priceSource]),
      [
        ['wstETH', null],
        ['WETH', API_PRICE],
      ],
    );
    const onFree = (await t.get('/api/v1/tokens', free)).json();
    assert.ok(onFree.data.every((x: { chainId: number }) => x.chainId === 1));
  });

  test('default: one token with its feeds and every market holding it', async () => {
    const res = await t.get(`/api/v1/tokens/1/${WETH.toUpperCase().replace('0X', '0x')}`, pro);
    assert.equal(res.statusCode, 200);
    const d = res.json().data;
    assert.deepEqual(
      d.markets.map((m: { uniqueKey: string; role: string }) => [m.uniqueKey, m.role]),
      [
        [m3.uniqueKey, 'collateral'],
        [m1.uniqueKey, 'loan'],
        [m2.uniqueKey, 'loan'],
      ],
    );
    assert.deepEqual(d.feeds, [
      {
        address: fresh.feeds[0]!.address,
        description: 'ETH / USD',
        pair: 'ETH/USD',
        heartbeatSeconds: 3600,
        deviationThreshold: null,
        lastUpdateTimestamp: Date.parse('2026-11-22T12:00:00Z') / 1000,
        secondsSinceUpdate: 600,
        isStale: false,
        stalenessRatio: 0.16666667,
      },
    ]);
    assert.equal(res.json().meta.source, 'morpho');
  });

  test('error: unknown token 404, bad address 400', async () => {
    const res = await t.get(`/api/v1/tokens/1/0x${'1'.repeat(40)}`, pro);
    assert.equal(res.statusCode, 404);
    assert.deepEqual(res.json(), {
      error: 'TOKEN_NOT_FOUND',
      message: `No token 0x${'1'.repeat(40)} on chain 1.`,
    });
    for (const path of ['/api/v1/tokens/1/0x12', '/api/v1/tokens/x/' + WETH, '/api/v1/tokens?cursor=%%%']) {
      const bad = await t.get(path, pro);
      assert.equal(bad.statusCode, 400, path);
    }
  });
});

describe('GET /oracles', () => {
  test('default: every oracle by chain then address (one per chain it prices on)', async () => {
    const { data, meta } = (await t.get('/api/v1/oracles', pro)).json();
    assert.equal(meta.total, 3);
    assert.deepEqual(
      data.map((o: { chainId: number; address: string; marketCount: number }) => [
        o.chainId,
        o.address,
        o.marketCount,
      ]),
      [
        [1, fresh.address, 2],
        [1, stale.address, 1],
        [8453, fresh.address, 1],
      ],
    );
    const page = (await t.get('/api/v1/oracles?limit=2', pro)).json();
    assert.equal(page.data.length, 2);
    const rest = (await t.get(`/api/v1/oracles?limit=2&cursor=${page.meta.nextCursor}`, pro)).json();
    assert.deepEqual(
      rest.data.map((o: { chainId: number }) => o.chainId),
      [8453],
    );
    assert.equal(rest.meta.nextCursor, undefined);
  });

  test('behavior: stale=true keeps the oracles past their heartbeat', async () => {
    const res = await t.get('/api/v1/oracles?stale=true', pro);
    const { data, meta } = res.json();
    assert.equal(meta.total, 1);
    assert.deepEqual(data[0], {
      chainId: 1,
      address: stale.address,
      type: 'ChainlinkOracle',
      provider: 'Chainlink',
      isComposite: false,
      warnings: null,
      health: {
        lastUpdateTimestamp: Date.parse('2026-11-22T09:10:00Z') / 1000,
        secondsSinceUpdate: 10_800,
        expectedHeartbeatSeconds: 3600,
        isStale: true,
        stalenessRatio: 3,
      },
      feeds: [
        {
          address: staleFeed.address,
          description: 'USDC / USD',
          pair: 'USDC/USD',
          heartbeatSeconds: 3600,
          deviationThreshold: 0.001,
          lastUpdateTimestamp: Date.parse('2026-11-22T09:10:00Z') / 1000,
          secondsSinceUpdate: 10_800,
          isStale: true,
          stalenessRatio: 3,
        },
      ],
      marketCount: 1,
      supplyAtStakeUsd: 2_000_000,
      borrowAtStakeUsd: 1_500_000,
    });
    const freshOnes = (await t.get('/api/v1/oracles?stale=false&provider=Chainlink&chainIds=1', pro)).json();
    assert.deepEqual(
      freshOnes.data.map((o: { address: string; marketCount: number; supplyAtStakeUsd: number }) => [
        o.address,
        o.marketCount,
        o.supplyAtStakeUsd,
      ]),
      [[fresh.address, 2, 1_500_000]],
    );
    const pyth = (await t.get('/api/v1/oracles?provider=Pyth', pro)).json();
    assert.deepEqual(pyth.data, []);
  });

  test('default: one oracle and the markets that depend on it', async () => {
    const d = (await t.get(`/api/v1/oracles/1/${fresh.address}`, pro)).json().data;
    assert.deepEqual(
      d.markets.map((m: { uniqueKey: string; supply: number }) => [m.uniqueKey, m.supply]),
      [
        [m1.uniqueKey, 1_000_000],
        [m2.uniqueKey, 500_000],
      ],
    );
    assert.equal(d.health.secondsSinceUpdate, 600);
    clock.advance(30 * 60_000); // the next update falls at 12:30
    const later = (await t.get(`/api/v1/oracles/1/${fresh.address}`, pro)).json().data;
    assert.equal(later.health.secondsSinceUpdate, 600);
    assert.equal(later.health.lastUpdateTimestamp, Date.parse('2026-11-22T12:30:00Z') / 1000);
    clock.advance(-30 * 60_000);
  });

  test('error: unknown oracle 404; a Free key and another chain 403', async () => {
    const res = await t.get(`/api/v1/oracles/1/0x${'1'.repeat(40)}`, pro);
    assert.equal(res.statusCode, 404);
    assert.equal(res.json().error, 'ORACLE_NOT_FOUND');
    const forbidden = await t.get(`/api/v1/oracles/8453/${fresh.address}`, free);
    assert.equal(forbidden.statusCode, 403);
    assert.equal(forbidden.json().error, 'CHAIN_FORBIDDEN');
  });
});
