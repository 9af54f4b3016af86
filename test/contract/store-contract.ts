import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { positionAt } from '../../src/domain/position-columns.ts';
import type { Store } from '../../src/store/types.ts';
import { makeMarket, makePosition } from '../helpers.ts';

/**
 * The store contract: every Store implementation must pass it. `open` returns a migrated,
 * empty store; the suite closes what it opens.
 */
export function storeContract(name: string, open: () => Promise<Store>): void {
  describe(`Store contract: ${name}`, () => {
    test('behavior: migrate is idempotent', async () => {
      const store = await open();
      await store.migrate();
      await store.migrate();
      assert.equal(await store.datasetInfo(), null);
      await store.close();
    });

    test('behavior: replaceDataset round-trips markets and positions, and bumps the version', async () => {
      const store = await open();
      const a = makeMarket({ supply: 10 });
      const b = makeMarket({
        protocol: 'aave',
        chainId: 10,
        uniqueKey: 'aave-10-0xpool_0xa_0xb',
        oracle: null,
      });
      const positions = [
        makePosition(a),
        makePosition(b, { borrowUsd: 0, healthFactor: Number.POSITIVE_INFINITY }),
      ];
      const progress: number[] = [];
      const info = await store.replaceDataset(
        { kind: 'sandbox', profile: 'test', seed: 7, markets: [a, b], positions, positionCount: 2 },
        (done) => progress.push(done),
      );
      assert.equal(info.version, 1);
      assert.equal(info.marketCount, 2);
      assert.equal(info.positionCount, 2);
      assert.equal(progress.at(-1), 4);
      assert.deepEqual(await store.loadMarkets(), [a, b]);
      const rows: unknown[] = [];
      await store.loadPositions((block) => {
        for (let i = 0; i < block.count; i++) rows.push(positionAt(block, i));
      });
      assert.deepEqual(rows, [
        {
          marketIndex: 0,
          user: positions[0]!.user,
          collateralUsd: 10_000,
          borrowUsd: 8_000,
          supplyUsd: 0,
          healthFactor: positions[0]!.healthFactor,
        },
        {
          marketIndex: 1,
          user: positions[1]!.user,
          collateralUsd: 10_000,
          borrowUsd: 0,
          supplyUsd: 0,
          healthFactor: Number.POSITIVE_INFINITY,
        },
      ]);
      const again = await store.replaceDataset({
        kind: 'sandbox',
        profile: 'test',
        seed: 7,
        markets: [a],
        positions: [],
        positionCount: 0,
      });
      assert.equal(again.version, 2);
      assert.equal((await store.loadMarkets()).length, 1);
      assert.deepEqual((await store.datasetInfo())?.version, 2);
      await store.close();
    });

    test('behavior: positions come back in blocks, in risk order, with exact doubles', async () => {
      const store = await open();
      const m = makeMarket();
      const positions = Array.from({ length: 70_001 }, (_, i) =>
        makePosition(m, {
          collateralUsd: i + 0.1,
          borrowUsd: i % 7 === 0 ? 0 : 1 / (i + 3),
          supplyUsd: 1e-9 * i,
          healthFactor: i % 7 === 0 ? Number.POSITIVE_INFINITY : (Math.PI * i) % 5,
        }),
      );
      const info = await store.replaceDataset({
        kind: 'live',
        profile: 'p',
        seed: 4_000_000_000,
        markets: [m],
        positions,
        positionCount: positions.length,
      });
      assert.equal(info.positionCount, positions.length);
      const sizes: number[] = [];
      const rows: ReturnType<typeof positionAt>[] = [];
      await store.loadPositions((block) => {
        sizes.push(block.count);
        for (let i = 0; i < block.count; i++) rows.push(positionAt(block, i));
      });
      assert.deepEqual(sizes, [65_536, 70_001 - 65_536]);
      const expected = positions
        .map((p, i) => ({ p, i }))
        .sort((a, b) => a.p.healthFactor - b.p.healthFactor || b.p.borrowUsd - a.p.borrowUsd || a.i - b.i)
        .map(({ p }) => ({
          marketIndex: 0,
          user: p.user,
          collateralUsd: p.collateralUsd,
          borrowUsd: p.borrowUsd,
          supplyUsd: p.supplyUsd,
          healthFactor: p.healthFactor,
        }));
      assert.deepEqual(rows, expected);
      assert.equal((await store.datasetInfo())?.seed, 4_000_000_000);
      await store.close();
    });

    test('behavior: onlyIfEmpty seeds an empty store and leaves a seeded one alone', async () => {
      const store = await open();
      const a = makeMarket();
      const first = await store.replaceDataset({
        kind: 'sandbox',
        profile: 'a',
        seed: 1,
        markets: [a],
        positions: [],
        positionCount: 0,
        onlyIfEmpty: true,
      });
      assert.equal(first.profile, 'a');
      const second = await store.replaceDataset({
        kind: 'sandbox',
        profile: 'b',
        seed: 1,
        markets: [a],
        positions: [],
        positionCount: 0,
        onlyIfEmpty: true,
      });
      assert.deepEqual(second, first);
      assert.equal((await store.datasetInfo())?.version, 1);
      await store.close();
    });

    test('error: a position of an unknown market rolls the whole replacement back', async () => {
      const store = await open();
      const a = makeMarket();
      await store.replaceDataset({
        kind: 'sandbox',
        profile: 'p',
        seed: null,
        markets: [a],
        positions: [],
        positionCount: 0,
      });
      const orphan = makePosition(makeMarket());
      await assert.rejects(
        store.replaceDataset({
          kind: 'sandbox',
          profile: 'q',
          seed: null,
          markets: [a],
          positions: [orphan],
          positionCount: 1,
        }),
      );
      assert.equal((await store.datasetInfo())?.profile, 'p');
      await store.close();
    });

    test('behavior: keys by hash, listing, revocation, tier change, and the keys version', async () => {
      const store = await open();
      const v0 = await store.keysVersion();
      await store.createAccount({
        id: 'acct_1',
        name: 'acme',
        email: null,
        createdAt: '2026-11-22T00:00:00.000Z',
      });
      assert.equal((await store.findAccountByName('acme'))?.id, 'acct_1');
      assert.equal(await store.findAccountByName('nobody'), null);
      const key = {
        id: 'key_1',
        accountId: 'acct_1',
        hash: 'h1',
        prefix: 'lrds_live_AbCd',
        mode: 'live' as const,
        tier: 'free',
        name: null,
        createdAt: '2026-11-22T00:00:00.000Z',
        revokedAt: null,
      };
      await store.createKey(key);
      const v1 = await store.keysVersion();
      assert.notEqual(v1, v0);
      assert.deepEqual(await store.findKeyByHash('h1'), key);
      assert.equal(await store.findKeyByHash('nope'), null);
      assert.deepEqual(await store.listKeys('acct_1'), [key]);
      assert.equal(await store.setKeyTier('key_1', 'pro'), true);
      assert.equal(await store.setKeyTier('key_x', 'pro'), false);
      assert.equal((await store.getKey('key_1'))?.tier, 'pro');
      assert.equal(await store.revokeKey('key_1', '2026-11-22T01:00:00.000Z'), true);
      assert.equal(await store.revokeKey('key_1', '2026-11-22T02:00:00.000Z'), false);
      assert.equal((await store.getKey('key_1'))?.revokedAt, '2026-11-22T01:00:00.000Z');
      assert.notEqual(await store.keysVersion(), v1);
      await assert.rejects(store.createKey({ ...key, id: 'key_2' }), 'hash is unique');
      await store.close();
    });

    test('behavior: usage counts per day and endpoint, daily and monthly totals', async () => {
      const store = await open();
      const e = (day: string, endpoint: string, countedMonthly = true) => ({
        keyId: 'k',
        day,
        endpoint,
        countedMonthly,
      });
      await store.recordUsage([
        e('2026-11-21', 'GET /a'),
        e('2026-11-22', 'GET /a'),
        e('2026-11-22', 'GET /b'),
      ]);
      await store.recordUsage([e('2026-11-22', 'GET /a', false)]);
      await store.recordUsage([e('2026-10-31', 'GET /a')]);
      await store.recordUsage([{ ...e('2026-11-22', 'GET /a'), keyId: 'other' }]);
      assert.deepEqual(await store.usageTotals('k', '2026-11-22'), { dayUsed: 3, monthUsed: 3 });
      assert.deepEqual(await store.usageTotals('k', '2026-12-01'), { dayUsed: 0, monthUsed: 0 });
      assert.deepEqual(await store.usageByDay('k', '2026-11-01', '2026-11-22'), [
        { day: '2026-11-21', endpoint: 'GET /a', requests: 1 },
        { day: '2026-11-22', endpoint: 'GET /a', requests: 2 },
        { day: '2026-11-22', endpoint: 'GET /b', requests: 1 },
      ]);
      await store.close();
    });

    test('behavior: concurrent usage writes lose no increment', async () => {
      const store = await open();
      const writes = Array.from({ length: 500 }, () =>
        store.recordUsage([{ keyId: 'k', day: '2026-11-22', endpoint: 'GET /a', countedMonthly: true }]),
      );
      await Promise.all(writes);
      assert.deepEqual(await store.usageTotals('k', '2026-11-22'), { dayUsed: 500, monthUsed: 500 });
      await store.close();
    });
  });
}
