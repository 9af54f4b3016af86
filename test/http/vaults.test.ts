import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../clock.ts';
import {
  createTestApp,
  GENEROUS_TIERS,
  makeMarket,
  makePosition,
  makeVault,
  modelOf,
  type TestApp,
} from '../helpers.ts';

/** GET /vaults and /vaults/{chainId}/{address}: figures from the markets' state, by hand. */

const clock = new ManualClock('2026-11-22T12:10:00Z');
const m1 = makeMarket({ supply: 1_000_000, borrow: 600_000, supplyApy: 0.02 });
const m2 = makeMarket({ supply: 500_000, borrow: 100_000, supplyApy: 0.05, oracle: null });
const base = makeMarket({ chainId: 8453 });
const morpho = makeVault([m1, m2], {
  fee: 0.1,
  allocations: [
    { marketKey: m1.uniqueKey, supplyShare: 0.3, supplyCapUsd: 600_000 },
    { marketKey: m2.uniqueKey, supplyShare: 0.4, supplyCapUsd: null },
  ],
});
const euler = makeVault([m1], {
  protocol: 'euler',
  curator: null,
  governor: 'Euler DAO',
  address: `0x${'e'.repeat(40)}`,
  allocations: [{ marketKey: m1.uniqueKey, supplyShare: 1, supplyCapUsd: null }],
});
const onBase = makeVault([base]);

let t: TestApp;
let pro: string;
let free: string;

before(async () => {
  t = await createTestApp({
    clock,
    tiers: GENEROUS_TIERS,
    live: modelOf([m1, m2, base], [makePosition(m1)], clock, [euler, onBase, morpho]),
  });
  pro = await t.key('pro');
  free = await t.key('free');
});
after(() => t.close());

describe('GET /vaults', () => {
  test('default: assets, APY net of fee and allocations from the markets now', async () => {
    const v = (await t.get(`/api/v1/vaults/1/${morpho.address}`, pro)).json().data;
    assert.equal(v.totalAssetsUsd, 500_000); // 0.3 x 1,000,000 + 0.4 x 500,000
    // (0.6 x 0.02 + 0.4 x 0.05) x (1 - 0.1)
    assert.equal(v.apy, 0.0288);
    assert.equal(v.fee, 0.1);
    assert.equal(v.curator, 'Curator');
    assert.equal(v.governor, null);
    assert.deepEqual(v.asset, { address: m1.loanAddress, symbol: 'WETH' });
    assert.deepEqual(v.allocations[0], {
      marketId: m1.uniqueKey,
      collateral: 'wstETH',
      loan: 'WETH',
      supplyUsd: 300_000,
      share: 0.6,
      supplyCapUsd: 600_000,
      // a cap recorded in USD: in WETH at its price now
      supplyCap: Number((600_000 / 3300).toPrecision(8)),
      capUsage: 0.5,
      supplyApy: 0.02,
      strategyType: v.allocations[0].strategyType,
      riskLevel: v.allocations[0].riskLevel,
      oracleHealth: {
        lastUpdateTimestamp: Date.parse('2026-11-22T12:00:00Z') / 1000,
        secondsSinceUpdate: 600,
        expectedHeartbeatSeconds: 3600,
        isStale: false,
        stalenessRatio: 0.16666667,
      },
    });
    assert.equal(v.allocations[0].strategyType, 'eth-lst-loop');
    assert.equal(v.allocations[1].oracleHealth, null);
    assert.deepEqual(
      [v.allocations[1].capUsage, v.allocations[1].supplyCap, v.allocations[1].supplyCapUsd],
      [null, null, null],
    );
  });

  test('behavior: a cap read in units of the asset is valued at the market price now; capUsage is in units', async () => {
    // 100 WETH of cap; the vault supplies 0.3 x (1,000,000 / 3,300) WETH
    const capped = makeVault([m1], {
      address: `0x${'c'.repeat(40)}`,
      allocations: [{ marketKey: m1.uniqueKey, supplyShare: 0.3, supplyCapUsd: 1, supplyCap: 100 }],
    });
    const app = await createTestApp({
      clock,
      tiers: GENEROUS_TIERS,
      live: modelOf([m1], [], clock, [capped]),
    });
    try {
      const key = await app.key('pro');
      const [a] = (await app.get(`/api/v1/vaults/1/${capped.address}`, key)).json().data.allocations;
      assert.deepEqual([a.supplyCap, a.supplyCapUsd], [100, 330_000]);
      // (from the market's served supply in WETH, to 8 significant digits)
      assert.ok(Math.abs(a.capUsage - (0.3 * 1_000_000) / 3300 / 100) < 1e-7, String(a.capUsage));
    } finally {
      await app.close();
    }
  });

  test("behavior: a Morpho vault's idle assets count in its total and shares, at no APY; a record stored without them is served", async () => {
    const governance = {
      owner: `0x${'0'.repeat(39)}1`,
      guardian: null,
      feeRecipient: null,
      timelockSeconds: 86_400,
      supplyQueue: [m1.uniqueKey],
      withdrawQueue: [m1.uniqueKey, m2.uniqueKey],
      totalAssets: 0,
      lostAssets: null,
      pendingCaps: [],
      pendingRemovals: [],
      pendingTimelock: null,
      pendingGuardian: null,
      block: 1,
    };
    const withIdle = makeVault([m1, m2], {
      address: `0x${'d'.repeat(40)}`,
      fee: 0.1,
      allocations: morpho.allocations,
      governance: { ...governance, idleAssets: 100 },
    });
    // (a record of before idle assets were read)
    const { idleAssets: _, ...older } = { ...governance, idleAssets: 0 };
    const stored = makeVault([m1, m2], {
      address: `0x${'f'.repeat(40)}`,
      allocations: morpho.allocations,
      governance: older,
    });
    const app = await createTestApp({
      clock,
      tiers: GENEROUS_TIERS,
      live: modelOf([m1, m2], [], clock, [withIdle, stored]),
    });
    try {
      const key = await app.key('pro');
      const v = (await app.get(`/api/v1/vaults/1/${withIdle.address}`, key)).json().data;
      // 500,000 in the markets, 100 WETH idle at the markets' $3,300
      assert.equal(v.totalAssetsUsd, 830_000);
      assert.equal(v.governance.idleAssets, 100);
      assert.deepEqual(
        v.allocations.map((a: { share: number }) => a.share),
        [Number((300_000 / 830_000).toFixed(8)), Number((200_000 / 830_000).toFixed(8))],
      );
      assert.ok(Math.abs(v.apy - ((300_000 * 0.02 + 200_000 * 0.05) / 830_000) * 0.9) < 1e-8, String(v.apy));
      const old = (await app.get(`/api/v1/vaults/1/${stored.address}`, key)).json().data;
      assert.deepEqual([old.totalAssetsUsd, old.governance.idleAssets], [500_000, 0]);
    } finally {
      await app.close();
    }
  });

  test('behavior: by chain and address; filters; Free sees Ethereum; cursor', async () => {
    const all = (await t.get('/api/v1/vaults', pro)).json();
    assert.deepEqual(
      all.data.map((v: { chainId: number; address: string }) => `${v.chainId}:${v.address}`),
      [`1:${morpho.address}`, `1:${euler.address}`, `8453:${onBase.address}`].sort(),
    );
    assert.equal(all.meta.total, 3);
    assert.equal(all.meta.source, 'euler,morpho');
    const eulerOnly = (await t.get('/api/v1/vaults?protocol=euler', pro)).json();
    assert.deepEqual(
      eulerOnly.data.map((v: { governor: string }) => v.governor),
      ['Euler DAO'],
    );
    const onFree = (await t.get('/api/v1/vaults', free)).json();
    assert.equal(onFree.meta.total, 2);
    const first = (await t.get('/api/v1/vaults?limit=2', pro)).json();
    const rest = (await t.get(`/api/v1/vaults?limit=2&cursor=${first.meta.nextCursor}`, pro)).json();
    assert.deepEqual(
      rest.data.map((v: { chainId: number }) => v.chainId),
      [8453],
    );
    assert.equal(rest.meta.nextCursor, undefined);
    assert.equal((await t.get('/api/v1/vaults?asset=usdc', pro)).json().meta.total, 0);
  });

  test('error: unknown vault 404, another chain on Free 403', async () => {
    const res = await t.get(`/api/v1/vaults/1/0x${'1'.repeat(40)}`, pro);
    assert.equal(res.statusCode, 404);
    assert.equal(res.json().error, 'VAULT_NOT_FOUND');
    const forbidden = await t.get(`/api/v1/vaults/8453/${onBase.address}`, free);
    assert.equal(forbidden.json().error, 'CHAIN_FORBIDDEN');
  });
});
