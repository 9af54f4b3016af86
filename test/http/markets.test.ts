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

const clock = new ManualClock('2026-11-22T12:00:00Z');
const wsteth = makeMarket({ supply: 5_000_000, borrow: 4_000_000, lltv: 0.945 });
const wstethSmall = makeMarket({ supply: 100_000, borrow: 0, label: null });
const usdc = makeMarket({
  protocol: 'aave',
  chainId: 8453,
  uniqueKey:
    'aave-8453-0xa238dd80c259a72e81d7e4664a9801593f98d1c5_0x4200000000000000000000000000000000000006_0x833589fcd6edb6e08f4c7c32d4f71b54bda02913',
  collateral: 'WETH',
  collateralName: 'Wrapped Ether',
  loan: 'USDC',
  loanName: 'USD Coin',
  label: 'Aave Base WETH/USDC',
  supply: 2_000_000,
  borrow: 1_500_000,
  lltv: 0.83,
  oracle: null,
});
const susde = makeMarket({
  chainId: 1,
  collateral: 'sUSDe',
  collateralName: 'Staked USDe',
  loan: 'USDC',
  loanName: 'USD Coin',
  label: 'sUSDe / USDC',
  supply: 3_000_000,
  borrow: 2_700_000,
  lltv: 0.915,
  oracle: makeOracle({
    isComposite: true,
    feeds: [
      {
        address: '0x0000000000000000000000000000000000000a01',
        description: 'sUSDe / USDe exchange rate',
        pair: 'sUSDe/USDe',
        heartbeatSeconds: 86400,
        lastUpdateTimestamp: Date.parse('2026-11-22T06:00:00Z') / 1000,
        updateIntervalSeconds: 86400,
      },
      {
        // stuck for 2 h on a 1 h heartbeat: the stalest feed decides (ratio 2)
        address: '0x0000000000000000000000000000000000000a02',
        description: 'USDe / USD',
        pair: 'USDe/USD',
        heartbeatSeconds: 3600,
        lastUpdateTimestamp: Date.parse('2026-11-22T10:00:00Z') / 1000,
        updateIntervalSeconds: null,
      },
    ],
  }),
});
const euler = makeMarket({
  protocol: 'euler',
  uniqueKey: 'euler-1-0x797dd80692c3b2dadabce8e30c07fde5307d48a9_0x7f39c581f595b53c5cb19bd0b3f8da6c935e2ca0',
  vaultSymbol: 'eWETH-2',
  vaultAddress: '0x797dd80692c3b2dadabce8e30c07fde5307d48a9',
  governor: 'Euler DAO',
  supply: 900_000,
  borrow: 450_000,
});
const markets = [wsteth, wstethSmall, usdc, susde, euler];

let t: TestApp;
let pro: string;
let free: string;
let free_: string;

before(async () => {
  t = await createTestApp({
    clock,
    tiers: GENEROUS_TIERS,
    live: modelOf(markets, [makePosition(wsteth)], clock),
  });
  pro = await t.key('pro');
  free = await t.key('free');
  free_ = await t.key('free');
});
after(() => t.close());

describe('GET /markets/:marketId', () => {
  test('default: every Market field, derived fields exact', async () => {
    const res = await t.get(`/api/v1/markets/${wsteth.uniqueKey}`, pro);
    assert.equal(res.statusCode, 200);
    const { data, meta } = res.json();
    // available = 5,000,000 - 4,000,000; utilization = 4/5; maxLeverage = 1 / (1 - 0.945) = 18.1818...
    // to 8 significant digits (the README's Numbers)
    assert.equal(data.available, 1_000_000);
    assert.equal(data.utilization, 0.8);
    assert.equal(data.maxLeverage, 18.181818);
    assert.equal(data.strategyType, 'eth-lst-loop');
    assert.equal(data.strategyInfo.type, 'eth-lst-loop');
    assert.ok(['low', 'medium', 'high'].includes(data.strategyInfo.riskLevel));
    for (const f of ['label', 'vaultSymbol', 'vaultAddress', 'governor']) assert.ok(f in data, f);
    assert.equal(data.vaultSymbol, null);
    assert.deepEqual(data.oracle.feeds[0], {
      address: `0x${'feed'.padStart(40, '0')}`,
      description: 'ETH / USD',
      pair: 'ETH/USD',
    });
    // last update 11:30 on a 30 min cadence: at 12:00 it has just updated (0 s ago)
    assert.deepEqual(data.oracleHealth, {
      lastUpdateTimestamp: Date.parse('2026-11-22T12:00:00Z') / 1000,
      secondsSinceUpdate: 0,
      expectedHeartbeatSeconds: 3600,
      isStale: false,
      stalenessRatio: 0,
    });
    assert.equal(meta.freshness, 'snapshot');
    assert.equal(meta.source, 'morpho');
    assert.equal(typeof meta.latencyMs, 'number');
    // the spec's 28, and the balances in loan-token units (supply / loanPrice here)
    assert.equal(Object.keys(data).length, 30);
    assert.equal(data.supplyAssets, Number((data.supply / data.loanPrice).toPrecision(8)));
  });

  test('behavior: composite oracle reports its stalest feed', async () => {
    const res = await t.get(`/api/v1/markets/${susde.uniqueKey}`, pro);
    const h = res.json().data.oracleHealth;
    // USDe/USD stuck at 10:00, heartbeat 3600: 7200 s since update, ratio 2, stale
    assert.equal(h.secondsSinceUpdate, 7200);
    assert.equal(h.stalenessRatio, 2);
    assert.equal(h.isStale, true);
    assert.equal(h.expectedHeartbeatSeconds, 3600);
  });

  test('behavior: oracle and oracleHealth are null without oracle data', async () => {
    const res = await t.get(`/api/v1/markets/${usdc.uniqueKey}`, pro);
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().data.oracle, null);
    assert.equal(res.json().data.oracleHealth, null);
  });

  test('behavior: euler markets carry vault fields', async () => {
    const { data } = (await t.get(`/api/v1/markets/${euler.uniqueKey}`, pro)).json();
    assert.equal(data.vaultSymbol, 'eWETH-2');
    assert.equal(data.governor, 'Euler DAO');
  });

  test('behavior: the id matches case-insensitively', async () => {
    const res = await t.get(`/api/v1/markets/${wsteth.uniqueKey.toUpperCase()}`, pro);
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().data.uniqueKey, wsteth.uniqueKey);
  });

  test('error: malformed id is 400 INVALID_PARAMETER', async () => {
    for (const bad of [
      'nope',
      'bitcoin-1-0xabc',
      'morpho-x-0xabc',
      'morpho-1-0x-abc',
      `morpho-1-${'a'.repeat(250)}`,
    ]) {
      const res = await t.get(`/api/v1/markets/${encodeURIComponent(bad)}`, pro);
      assert.equal(res.statusCode, 400, bad);
      assert.equal(res.json().error, 'INVALID_PARAMETER');
      assert.equal(res.json().details[0].parameter, 'marketId');
    }
  });

  test('error: well-formed unknown id is 404 MARKET_NOT_FOUND', async () => {
    const res = await t.get(`/api/v1/markets/morpho-1-0x${'0'.repeat(64)}`, pro);
    assert.equal(res.statusCode, 404);
    assert.equal(res.json().error, 'MARKET_NOT_FOUND');
  });

  test('error: a market on a chain outside the tier is 403 CHAIN_FORBIDDEN', async () => {
    const res = await t.get(`/api/v1/markets/${usdc.uniqueKey}`, free);
    assert.equal(res.statusCode, 403);
    assert.deepEqual(res.json(), {
      error: 'CHAIN_FORBIDDEN',
      message: 'The free tier does not include chain 8453.',
      tier: 'free',
      chainId: 8453,
    });
  });

  test('error: unknown query parameters are refused', async () => {
    const res = await t.get(`/api/v1/markets/${wsteth.uniqueKey}?verbose=1`, pro);
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json().details, [{ parameter: 'verbose', problem: 'is not a known parameter' }]);
  });
});

describe('GET /markets/search', () => {
  const search = (qs: string, key = pro) => t.get(`/api/v1/markets/search?${qs}`, key);

  test('default: exact symbol first, ties by supply', async () => {
    const res = await search('query=wsteth');
    assert.equal(res.statusCode, 200);
    const keys = res.json().data.map((m: { uniqueKey: string }) => m.uniqueKey);
    // wstETH is the collateral symbol of wsteth (5M), euler (0.9M), wstethSmall (0.1M)
    assert.deepEqual(keys, [wsteth.uniqueKey, euler.uniqueKey, wstethSmall.uniqueKey]);
  });

  test('behavior: pair notation and AND of terms', async () => {
    const pair = await search('query=sUSDe%2FUSDC');
    assert.deepEqual(
      pair.json().data.map((m: { uniqueKey: string }) => m.uniqueKey),
      [susde.uniqueKey],
    );
    const words = await search('query=%20weth%20usdc%20');
    assert.deepEqual(
      words.json().data.map((m: { uniqueKey: string }) => m.uniqueKey),
      [usdc.uniqueKey],
    );
    assert.equal((await search('query=weth%20nothingmatches')).json().data.length, 0);
  });

  test('behavior: prefix beats substring', async () => {
    // "usd" is a prefix of USDC (usdc, susde markets) and a substring of sUSDe
    const res = await search('query=usd');
    const keys = res.json().data.map((m: { uniqueKey: string }) => m.uniqueKey);
    assert.deepEqual(keys, [susde.uniqueKey, usdc.uniqueKey]);
  });

  test('behavior: names match too', async () => {
    const res = await search('query=staked');
    assert.ok(res.json().data.some((m: { uniqueKey: string }) => m.uniqueKey === susde.uniqueKey));
  });

  test('behavior: protocol and chainIds filter; meta.source lists returned protocols', async () => {
    const res = await search('query=weth&protocol=aave&chainIds=8453');
    assert.deepEqual(
      res.json().data.map((m: { uniqueKey: string }) => m.uniqueKey),
      [usdc.uniqueKey],
    );
    assert.equal(res.json().meta.source, 'aave');
    const mixed = await search('query=weth');
    assert.equal(mixed.json().meta.source, 'aave,euler,morpho');
  });

  test('behavior: empty result names the scope in meta.source', async () => {
    const res = await search('query=zzz&protocol=fluid');
    assert.deepEqual(res.json().data, []);
    assert.equal(res.json().meta.source, 'fluid');
  });

  test('behavior: an empty answer names the protocols of its chain scope', async () => {
    // only aave has a market on Base (8453) in this catalog
    const res = await search('query=zzz&chainIds=8453');
    assert.deepEqual(res.json().data, []);
    assert.equal(res.json().meta.source, 'aave');
    const free = await search('query=zzz', free_);
    assert.equal(free.json().meta.source, 'euler,morpho');
  });

  test('behavior: a free key sees Ethereum only, without a clamp note', async () => {
    const res = await search('query=weth', free);
    assert.ok(res.json().data.every((m: { chainId: number }) => m.chainId === 1));
    assert.equal(res.json().meta.clamped, undefined);
  });

  test('behavior: limit above the route maximum is lowered and reported', async () => {
    const res = await search('query=weth&limit=5000');
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json().meta.clamped, { limit: { requested: 5000, applied: 200 } });
    const limited = await search('query=wsteth&limit=1');
    assert.equal(limited.json().data.length, 1);
  });

  test('error: missing, blank or too long query', async () => {
    for (const qs of ['', 'query=', 'query=%20%20', `query=${'a'.repeat(101)}`]) {
      const res = await search(qs);
      assert.equal(res.statusCode, 400, qs);
      assert.equal(res.json().error, 'INVALID_PARAMETER');
      assert.equal(res.json().details[0].parameter, 'query');
    }
  });

  test('error: bad limit, protocol and chainIds', async () => {
    const cases: [string, string][] = [
      ['query=a&limit=0', 'limit'],
      ['query=a&limit=-3', 'limit'],
      ['query=a&limit=2.5', 'limit'],
      ['query=a&limit=ten', 'limit'],
      ['query=a&limit=1&limit=2', 'limit'],
      ['query=a&protocol=maker', 'protocol'],
      ['query=a&chainIds=1,base', 'chainIds'],
      ['query=a&chainIds=', 'chainIds'],
    ];
    for (const [qs, parameter] of cases) {
      const res = await search(qs);
      assert.equal(res.statusCode, 400, qs);
      const body = res.json();
      assert.equal(body.error, 'INVALID_PARAMETER', qs);
      assert.equal(body.details[0].parameter, parameter, qs);
      assert.equal(typeof body.message, 'string');
    }
  });
});

describe('GET /markets', () => {
  test('default: supply descending with total', async () => {
    const res = await t.get('/api/v1/markets', pro);
    const supplies = res.json().data.map((m: { supply: number }) => m.supply);
    assert.deepEqual(supplies, [5_000_000, 3_000_000, 2_000_000, 900_000, 100_000]);
    assert.equal(res.json().meta.total, 5);
  });

  test('behavior: offset pages, filters apply', async () => {
    const res = await t.get('/api/v1/markets?limit=2&offset=1&protocol=morpho', pro);
    assert.deepEqual(
      res.json().data.map((m: { supply: number }) => m.supply),
      [3_000_000, 100_000],
    );
    assert.equal(res.json().meta.total, 3);
  });

  test('behavior: its own maximum is 1,000, within the tier cap', async () => {
    const ent = await t.key('enterprise');
    const e = await t.get('/api/v1/markets?limit=5000', ent);
    assert.deepEqual(e.json().meta.clamped.limit, { requested: 5000, applied: 1000 });
    const p = await t.get('/api/v1/markets?limit=800', pro);
    assert.deepEqual(p.json().meta.clamped.limit, { requested: 800, applied: 500 });
  });

  test('behavior: chainIds outside the tier are filtered and reported', async () => {
    const res = await t.get('/api/v1/markets?chainIds=1,8453', free);
    assert.deepEqual(res.json().meta.clamped, { chainIds: { requested: [1, 8453], applied: [1] } });
    const none = await t.get('/api/v1/markets?chainIds=8453', free);
    assert.equal(none.statusCode, 200);
    assert.deepEqual(none.json().data, []);
  });
});
