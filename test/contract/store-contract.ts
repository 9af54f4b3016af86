import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { positionAt } from '../../src/domain/position-columns.ts';
import type { Store } from '../../src/store/types.ts';
import { newUsageBatchId } from '../../src/store/usage.ts';
import { makeMarket, makePosition, makeVault } from '../helpers.ts';

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
      const vaults = [makeVault([a]), makeVault([a, b], { protocol: 'euler', curator: null, governor: 'G' })];
      const info = await store.replaceDataset(
        { kind: 'sandbox', profile: 'test', seed: 7, markets: [a, b], vaults, positions, positionCount: 2 },
        (done) => progress.push(done),
      );
      assert.equal(info.version, 1);
      assert.equal(info.marketCount, 2);
      assert.equal(info.positionCount, 2);
      assert.equal(progress.at(-1), 4);
      assert.deepEqual(await store.loadMarkets(), [a, b]);
      assert.deepEqual(await store.loadVaults(), vaults, 'vaults in the order written');
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
      assert.deepEqual(await store.loadVaults(), [], 'a replacement without vaults has none');
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

    test('behavior: position changes are upserted one by one, in a feed ordered by sequence number', async () => {
      const store = await open();
      const a = makeMarket();
      const b = makeMarket();
      const p = makePosition(a);
      const info = await store.replaceDataset({
        kind: 'sandbox',
        profile: 'test',
        seed: 1,
        markets: [a, b],
        positions: [p],
        positionCount: 1,
      });
      assert.equal(info.changeSeq, 0);
      const moved = { ...p, collateralUsd: 5_000, healthFactor: 0.5 };
      const added = { ...makePosition(b), borrowUsd: 0, healthFactor: Number.POSITIVE_INFINITY };
      const first = await store.applyPositionChanges('src-a', [moved, added]);
      assert.equal(first.changeSeq, 2);
      assert.equal(first.applied.length, 2);
      assert.equal((await store.datasetInfo())?.changeSeq, 2);
      assert.equal((await store.datasetInfo())?.version, info.version, 'a change is no new dataset');
      // Upserted in place: the same position again takes the next number, once in the feed.
      const again = { ...moved, borrowUsd: 4_000 };
      assert.equal((await store.applyPositionChanges('src-b', [again])).changeSeq, 3);
      const feed = await store.positionChangesSince(0, 10);
      assert.deepEqual(
        feed.map((c) => [c.seq, c.source, c.marketKey, c.user, c.borrowUsd, c.healthFactor]),
        [
          [2, 'src-a', b.uniqueKey, added.user, 0, Number.POSITIVE_INFINITY],
          [3, 'src-b', a.uniqueKey, p.user, 4_000, 0.5],
        ],
      );
      assert.deepEqual(
        (await store.positionChangesSince(2, 10)).map((c) => c.seq),
        [3],
      );
      assert.deepEqual(
        (await store.positionChangesSince(0, 1)).map((c) => c.seq),
        [2],
      );
      // The dataset's own blocks are untouched: the changes lie over them.
      let loaded = 0;
      await store.loadPositions((block) => {
        loaded += block.count;
      });
      assert.equal(loaded, 1);
      await store.close();
    });

    test("behavior: market changes are upserted one by one in the same feed as positions; the dataset's records stay as written", async () => {
      const store = await open();
      const a = makeMarket();
      const b = makeMarket();
      const p = makePosition(a);
      const info = await store.replaceDataset({
        kind: 'sandbox',
        profile: 'test',
        seed: 1,
        markets: [a, b],
        positions: [p],
        positionCount: 1,
      });
      const a1 = { ...a, supply: a.supply! * 2, collateralPrice: a.collateralPrice! * 0.9, borrowApy: 0.07 };
      assert.equal(await store.applyMarketChanges('chain-1', [a1]), 1);
      assert.equal((await store.applyPositionChanges('chain-1', [{ ...p, borrowUsd: 7 }])).changeSeq, 2);
      const b1 = { ...b, borrow: 0 };
      const a2 = { ...a1, supplyApy: 0.01 };
      assert.equal(await store.applyMarketChanges('chain-2', [b1, a2]), 4);
      assert.equal((await store.datasetInfo())?.changeSeq, 4);
      assert.equal((await store.datasetInfo())?.version, info.version, 'a change is no new dataset');
      const feed = await store.marketChangesSince(0, 10);
      assert.deepEqual(
        feed.map((c) => [c.seq, c.source, c.record]),
        [
          [3, 'chain-2', b1],
          [4, 'chain-2', a2],
        ],
      );
      assert.deepEqual(
        (await store.marketChangesSince(3, 10)).map((c) => c.seq),
        [4],
      );
      assert.deepEqual(await store.loadMarkets(), [a, b]);
      // From another dataset version: nothing written. An unknown market or a bad record: the
      // batch is refused. A replacement forgets them.
      assert.equal(await store.applyMarketChanges('x', [{ ...a, supply: 1 }], info.version + 1), 4);
      await assert.rejects(store.applyMarketChanges('x', [a, makeMarket()]), RangeError);
      await assert.rejects(store.applyMarketChanges('x', [{ ...a, supply: -1 }]), RangeError);
      await assert.rejects(store.applyMarketChanges('x', [{ ...a, lltv: Number.NaN }]), RangeError);
      await assert.rejects(store.applyMarketChanges('x', [a, a]), RangeError);
      // A price unknown is null (docs/decisions.md "Real sources"), and the loan token's USD amounts with it, never one alone.
      await assert.rejects(store.applyMarketChanges('x', [{ ...a, supply: null }]), /exactly when loanPrice/);
      await assert.rejects(
        store.applyMarketChanges('x', [{ ...a, loanPrice: null }]),
        /exactly when loanPrice/,
      );
      await assert.rejects(
        store.applyMarketChanges('x', [{ ...a, loanPrice: null, borrow: null }]),
        /exactly when loanPrice/,
      );
      await assert.rejects(store.applyMarketChanges('x', [{ ...a, supplyAssets: -1 }]), RangeError);
      // a price is unknown (null), never 0
      await assert.rejects(
        store.applyMarketChanges('x', [{ ...a, loanPrice: 0, supply: 0, borrow: 0 }]),
        /loanPrice must be finite and > 0, or null/,
      );
      await assert.rejects(store.applyMarketChanges('x', [{ ...a, collateralPrice: 0 }]), /collateralPrice/);
      const a3 = { ...a2, loanPrice: null, supply: null, borrow: null, supplyAssets: 5, borrowAssets: 1 };
      assert.equal(await store.applyMarketChanges('x', [a3]), 5);
      assert.deepEqual(
        (await store.marketChangesSince(4, 10)).map((c) => c.record),
        [a3],
      );
      // (upserted: a's change replaces its last one)
      assert.equal((await store.marketChangesSince(0, 10)).length, 2);
      await store.replaceDataset({
        kind: 'sandbox',
        profile: 'test',
        seed: 1,
        markets: [a],
        positions: [],
        positionCount: 0,
      });
      assert.deepEqual(await store.marketChangesSince(0, 10), []);
      await store.close();
    });

    test("behavior: applyChanges writes a pass's markets, positions, vaults and refresh time in one transaction", async () => {
      const store = await open();
      const a = makeMarket();
      const b = makeMarket();
      const p = makePosition(a);
      const v = makeVault([a]);
      const w = makeVault([b]);
      const info = await store.replaceDataset({
        kind: 'live',
        profile: 'sources',
        seed: null,
        refreshedAt: 1_000_000,
        markets: [a, b],
        vaults: [v, w],
        positions: [p],
        positionCount: 1,
      });
      const a1 = { ...a, supplyApy: 0.09 };
      const p1 = { ...p, borrowUsd: 9_000, healthFactor: 0.9 };
      const q = makePosition(b);
      const v1 = { ...v, fee: 0.2 };
      const seq = await store.applyChanges(
        'chain:1',
        { markets: [a1], positions: [p1, q], vaults: [v1], refreshedAt: 2_000_000 },
        { version: info.version, changeSeq: 0 },
      );
      assert.equal(seq, 4, 'markets, then positions, then vaults take the next numbers');
      const after = await store.datasetInfo();
      assert.equal(after?.changeSeq, 4);
      assert.equal(after?.refreshedAt, 2_000_000);
      assert.equal(after?.version, info.version, 'no new dataset');
      assert.deepEqual(
        (await store.marketChangesSince(0, 10)).map((c) => [c.seq, c.source, c.record]),
        [[1, 'chain:1', a1]],
      );
      assert.deepEqual(
        (await store.positionChangesSince(0, 10)).map((c) => [c.seq, c.user, c.borrowUsd]),
        [
          [2, p.user, 9_000],
          [3, q.user, q.borrowUsd],
        ],
      );
      assert.deepEqual(
        (await store.vaultChangesSince(0, 10)).map((c) => [c.seq, c.source, c.record]),
        [[4, 'chain:1', v1]],
      );
      assert.deepEqual(await store.vaultChangesSince(4, 10), []);
      assert.deepEqual(await store.loadVaults(), [v, w], "the dataset's own records stay");
      // Nothing changed but the time: only the refresh time moves.
      assert.equal(
        await store.applyChanges(
          'chain:1',
          { markets: [], positions: [], vaults: [], refreshedAt: 3_000_000 },
          { version: info.version, changeSeq: 4 },
        ),
        4,
      );
      assert.equal((await store.datasetInfo())?.refreshedAt, 3_000_000);
      // Upserted: a vault's second change replaces its first.
      const v2 = { ...v1, fee: 0.3 };
      assert.equal(
        await store.applyChanges(
          'chain:1',
          { markets: [], positions: [], vaults: [v2], refreshedAt: 3_000_000 },
          { version: info.version, changeSeq: 4 },
        ),
        5,
      );
      assert.deepEqual(
        (await store.vaultChangesSince(0, 10)).map((c) => [c.seq, c.record.fee]),
        [[5, 0.3]],
      );
      // Another dataset version, or changes written since (by another process): nothing
      // written. An unknown market or vault, or an invalid record: the whole batch is refused,
      // the refresh time with it.
      const none = { markets: [], positions: [], vaults: [], refreshedAt: 9_000_000 };
      const at = { version: info.version, changeSeq: 5 };
      assert.equal(await store.applyChanges('x', none, { ...at, version: info.version + 1 }), null);
      assert.equal(await store.applyChanges('x', { ...none, vaults: [v1] }, { ...at, changeSeq: 4 }), null);
      await assert.rejects(
        store.applyChanges('x', { ...none, markets: [a1], vaults: [makeVault([a])] }, at),
        /unknown vault/,
      );
      await assert.rejects(
        store.applyChanges('x', { ...none, positions: [makePosition(makeMarket())] }, at),
        /unknown market/,
      );
      await assert.rejects(
        store.applyChanges('x', { ...none, vaults: [{ ...v, address: 'nope' }] }, at),
        RangeError,
      );
      await assert.rejects(store.applyChanges('x', { ...none, vaults: [v, v] }, at), /named twice/);
      assert.equal((await store.datasetInfo())?.refreshedAt, 3_000_000);
      assert.equal((await store.marketChangesSince(0, 10)).length, 1);
      // Markets and vaults added: appended to the dataset's (loadMarkets, by key too), its
      // market count moved on, in the change feed before the batch's changes; the positions of
      // a market added may come in the same batch.
      const c = makeMarket();
      const d = makeMarket();
      const x = makeVault([c]);
      const r = makePosition(c);
      assert.equal(
        await store.applyChanges(
          'chain:1',
          { ...none, added: { markets: [c, d], vaults: [x] }, markets: [a1], positions: [r], vaults: [v2] },
          at,
        ),
        11,
      );
      const added = await store.datasetInfo();
      assert.equal(added?.marketCount, 4);
      assert.equal(added?.version, info.version, 'no new dataset');
      assert.deepEqual(await store.loadMarkets(), [a, b, c, d]);
      assert.deepEqual(await store.loadMarkets([d.uniqueKey, a.uniqueKey, 'nope']), [a, d]);
      assert.deepEqual(await store.loadVaults(), [v, w, x]);
      assert.deepEqual(
        (await store.marketChangesSince(5, 10)).map((m) => [m.seq, m.record.uniqueKey]),
        [
          [6, c.uniqueKey],
          [7, d.uniqueKey],
          [8, a.uniqueKey],
        ],
      );
      assert.deepEqual(
        (await store.vaultChangesSince(5, 10)).map((m) => [m.seq, m.record.address]),
        [
          [10, x.address],
          [11, v.address],
        ],
      );
      const at11 = { ...at, changeSeq: 11 };
      // One held already, or added and changed in one batch: refused, nothing written.
      await assert.rejects(
        store.applyChanges('x', { ...none, added: { markets: [makeMarket(), c], vaults: [] } }, at11),
        /added twice/,
      );
      await assert.rejects(
        store.applyChanges('x', { ...none, added: { markets: [], vaults: [w] } }, at11),
        /added twice/,
      );
      const e = makeMarket();
      await assert.rejects(
        store.applyChanges('x', { ...none, added: { markets: [e], vaults: [] }, markets: [e] }, at11),
        /named twice/,
      );
      assert.equal((await store.datasetInfo())?.marketCount, 4);
      assert.equal((await store.loadMarkets()).length, 4);
      // A replacement forgets them.
      await store.replaceDataset({
        kind: 'live',
        profile: 'sources',
        seed: null,
        markets: [a],
        vaults: [v],
        positions: [],
        positionCount: 0,
      });
      assert.deepEqual(await store.vaultChangesSince(0, 10), []);
      await store.close();
    });

    test('behavior: a change based on another version of its position is skipped; another dataset version writes nothing', async () => {
      const store = await open();
      const a = makeMarket();
      const p = makePosition(a);
      const q = makePosition(a);
      const info = await store.replaceDataset({
        kind: 'sandbox',
        profile: 'test',
        seed: 1,
        markets: [a],
        positions: [p, q],
        positionCount: 2,
      });
      const r1 = await store.applyPositionChanges('s', [{ ...p, borrowUsd: 1, basedOn: 0 }]);
      assert.equal(r1.applied.length, 1);
      // A second writer computed from the dataset's version of p (0): p has moved on, q has not.
      const r2 = await store.applyPositionChanges('s', [
        { ...p, borrowUsd: 2, basedOn: 0 },
        { ...q, borrowUsd: 3, basedOn: 0 },
      ]);
      assert.deepEqual(
        r2.applied.map((c) => c.user),
        [q.user],
      );
      assert.equal(r2.changeSeq, 2);
      const r3 = await store.applyPositionChanges('s', [{ ...p, borrowUsd: 4, basedOn: 1 }]);
      assert.equal(r3.applied.length, 1);
      const stale = await store.applyPositionChanges('s', [{ ...p, borrowUsd: 5 }], info.version + 1);
      assert.deepEqual(stale, { applied: [], changeSeq: 3 });
      const byUser = new Map((await store.positionChangesSince(0, 10)).map((c) => [c.user, c.borrowUsd]));
      assert.equal(byUser.get(p.user), 4);
      assert.equal(byUser.get(q.user), 3);
      await store.close();
    });

    test('error: a change of an unknown market or with an invalid row refuses the batch; a replacement forgets the changes', async () => {
      const store = await open();
      const a = makeMarket();
      const p = makePosition(a);
      await store.replaceDataset({
        kind: 'sandbox',
        profile: 'test',
        seed: 1,
        markets: [a],
        positions: [p],
        positionCount: 1,
      });
      const stranger = makePosition(makeMarket());
      await assert.rejects(
        store.applyPositionChanges('s', [{ ...p, borrowUsd: 1 }, stranger]),
        /unknown market/,
      );
      await assert.rejects(store.applyPositionChanges('s', [{ ...p, borrowUsd: -1 }]), RangeError);
      await assert.rejects(store.applyPositionChanges('s', [{ ...p, user: '0xABC' }]), RangeError);
      await assert.rejects(store.applyPositionChanges('s', [p, p]), /twice/);
      assert.equal((await store.datasetInfo())?.changeSeq, 0);
      assert.deepEqual(await store.positionChangesSince(0, 10), []);
      await store.applyPositionChanges('s', [{ ...p, borrowUsd: 1 }]);
      const next = await store.replaceDataset({
        kind: 'sandbox',
        profile: 'test',
        seed: 2,
        markets: [a],
        positions: [p],
        positionCount: 1,
      });
      assert.equal(next.changeSeq, 0);
      assert.deepEqual(await store.positionChangesSince(0, 10), []);
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

    test('behavior: createKeyWithin caps active keys of a tier and creations in a window, atomically', async () => {
      const store = await open();
      await store.createAccount({
        id: 'acct_c',
        name: 'capped',
        email: null,
        createdAt: '2026-11-22T00:00:00.000Z',
      });
      const key = (i: number, tier = 'free', createdAt = `2026-11-22T10:00:0${i}.000Z`) => ({
        id: `key_c${i}`,
        accountId: 'acct_c',
        hash: `hc${i}`,
        prefix: 'lrds_live_AbCd',
        mode: 'live' as const,
        tier,
        name: null,
        createdAt,
        revokedAt: null,
      });
      const caps = { maxActive: 2, creations: null };
      // concurrent creations: exactly two pass the cap of two
      const results = await Promise.all([0, 1, 2, 3].map((i) => store.createKeyWithin(key(i), caps)));
      assert.equal(results.filter((r) => r.ok).length, 2);
      assert.deepEqual(
        results.find((r) => !r.ok),
        { ok: false, reason: 'TOO_MANY_KEYS', active: 2 },
      );
      assert.equal((await store.listKeys('acct_c')).length, 2);
      // another tier has its own cap; a revoked key frees its place
      assert.deepEqual(await store.createKeyWithin(key(5, 'pro'), caps), { ok: true });
      const [first] = await store.listKeys('acct_c');
      await store.revokeKey(first!.id, '2026-11-22T11:00:00.000Z');
      assert.deepEqual(await store.createKeyWithin(key(6), caps), { ok: true });
      // creations in the window count revoked keys too
      const window = { maxActive: null, creations: { since: '2026-11-22T10:00:00.500Z', max: 3 } };
      const refused = await store.createKeyWithin(key(7, 'pro'), window);
      assert.equal(refused.ok, false);
      assert.equal(refused.ok === false && refused.reason, 'TOO_MANY_CREATIONS');
      assert.equal(refused.ok === false && refused.reason === 'TOO_MANY_CREATIONS' && refused.created, 3);
      const later = { ...window, creations: { since: '2026-11-22T10:00:03.500Z', max: 3 } };
      assert.deepEqual(await store.createKeyWithin(key(7, 'pro'), later), { ok: true });
      // over the limit by more than one (a lowered limit): the place frees with the (n - max + 1)-th oldest
      const lowered = { maxActive: null, creations: { since: '2026-11-22T10:00:00.500Z', max: 2 } };
      const over = await store.createKeyWithin(key(8, 'pro', '2026-11-22T10:00:08.000Z'), lowered);
      assert.deepEqual(over, {
        ok: false,
        reason: 'TOO_MANY_CREATIONS',
        created: 4,
        freedBy: '2026-11-22T10:00:06.000Z',
      });
      // a test key has caps of its own
      const testKey = { ...key(9), mode: 'test' as const };
      assert.deepEqual(await store.createKeyWithin(testKey, { maxActive: 1, creations: lowered.creations }), {
        ok: true,
      });
      await store.close();
    });

    test('behavior: keyChangesSince names exactly the keys created, revoked or re-tiered after a version', async () => {
      const store = await open();
      await store.createAccount({
        id: 'acct_k',
        name: 'changes',
        email: null,
        createdAt: '2026-11-22T00:00:00.000Z',
      });
      const key = (i: number) => ({
        id: `key_k${i}`,
        accountId: 'acct_k',
        hash: `hk${i}`,
        prefix: 'lrds_live_AbCd',
        mode: 'live' as const,
        tier: 'free',
        name: null,
        createdAt: '2026-11-22T00:00:00.000Z',
        revokedAt: null,
      });
      const v0 = await store.keysVersion();
      assert.deepEqual(await store.keyChangesSince(v0), { version: v0, hashes: [] });
      await store.createKey(key(1));
      await store.createKey(key(2));
      const first = await store.keyChangesSince(v0);
      assert.deepEqual(first.hashes, ['hk1', 'hk2']);
      assert.equal(first.version, await store.keysVersion());
      assert.ok(first.version > v0);
      // each kind of change, once per key however many times it changed
      await store.revokeKey('key_k1', '2026-11-22T01:00:00.000Z');
      await store.setKeyTier('key_k2', 'pro');
      await store.setKeyTier('key_k2', 'enterprise');
      assert.deepEqual(await store.createKeyWithin(key(3), { maxActive: null, creations: null }), {
        ok: true,
      });
      const second = await store.keyChangesSince(first.version);
      assert.deepEqual(second.hashes, ['hk1', 'hk2', 'hk3']);
      assert.ok(second.version > first.version);
      // what did not change, or was refused, is not named
      assert.equal(await store.revokeKey('key_k1', '2026-11-22T02:00:00.000Z'), false);
      assert.equal(await store.setKeyTier('key_x', 'pro'), false);
      assert.deepEqual(await store.keyChangesSince(second.version), { version: second.version, hashes: [] });
      await store.setKeyTier('key_k3', 'pro');
      assert.deepEqual((await store.keyChangesSince(second.version)).hashes, ['hk3']);
      // a version the store never reached (another store's): nothing named, the version tells
      const ahead = await store.keyChangesSince(second.version + 1000);
      assert.deepEqual(ahead.hashes, []);
      assert.ok(ahead.version < second.version + 1000);
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
      await store.recordUsage(
        [e('2026-11-21', 'GET /a'), e('2026-11-22', 'GET /a'), e('2026-11-22', 'GET /b')],
        newUsageBatchId(),
      );
      await store.recordUsage([e('2026-11-22', 'GET /a', false)], newUsageBatchId());
      await store.recordUsage([e('2026-10-31', 'GET /a')], newUsageBatchId());
      await store.recordUsage([{ ...e('2026-11-22', 'GET /a'), keyId: 'other' }], newUsageBatchId());
      assert.deepEqual(await store.usageTotals('k', '2026-11-22'), { dayUsed: 3, monthUsed: 3 });
      assert.deepEqual(await store.usageTotals('k', '2026-12-01'), { dayUsed: 0, monthUsed: 0 });
      assert.deepEqual(await store.usageByDay('k', '2026-11-01', '2026-11-22'), [
        { day: '2026-11-21', endpoint: 'GET /a', requests: 1 },
        { day: '2026-11-22', endpoint: 'GET /a', requests: 2 },
        { day: '2026-11-22', endpoint: 'GET /b', requests: 1 },
      ]);
      await store.close();
    });

    test('behavior: moveKey moves a key to another account and names it as changed', async () => {
      const store = await open();
      for (const id of ['acct_m1', 'acct_m2']) {
        await store.createAccount({ id, name: id, email: null, createdAt: '2026-11-22T00:00:00.000Z' });
      }
      const key = {
        id: 'key_m',
        accountId: 'acct_m1',
        hash: 'hm',
        prefix: 'lrds_live_AbCd',
        mode: 'live' as const,
        tier: 'free',
        name: null,
        createdAt: '2026-11-22T00:00:00.000Z',
        revokedAt: null,
      };
      await store.createKey(key);
      const before = await store.keysVersion();
      assert.equal(await store.moveKey('key_m', 'acct_m2'), true);
      assert.equal(await store.moveKey('key_x', 'acct_m2'), false);
      assert.equal((await store.getKey('key_m'))?.accountId, 'acct_m2');
      assert.deepEqual(await store.listKeys('acct_m1'), []);
      assert.deepEqual((await store.keyChangesSince(before)).hashes, ['hm']);
      await store.close();
    });

    test('behavior: accountUsageTotals sums the keys of an account and tier, each capped at its quota', async () => {
      const store = await open();
      for (const id of ['acct_u', 'acct_v']) {
        await store.createAccount({ id, name: id, email: null, createdAt: '2026-11-01T00:00:00.000Z' });
      }
      const key = (id: string, tier: string, mode: 'live' | 'test', accountId = 'acct_u') => ({
        id,
        accountId,
        hash: `h_${id}`,
        prefix: 'lrds_live_AbCd',
        mode,
        tier,
        name: null,
        createdAt: '2026-11-01T00:00:00.000Z',
        revokedAt: null,
      });
      await store.createKey(key('ku1', 'free', 'live'));
      await store.createKey(key('ku2', 'free', 'test'));
      await store.createKey(key('ku3', 'pro', 'live'));
      await store.createKey(key('kv1', 'free', 'live', 'acct_v'));
      const events = (keyId: string, day: string, n: number, countedMonthly = true) =>
        Array.from({ length: n }, () => ({ keyId, day, endpoint: 'GET /a', countedMonthly }));
      await store.recordUsage(
        [
          // ku1: 5 on the 22nd (3 within its daily quota of 3), 4 on the 21st
          ...events('ku1', '2026-11-22', 3),
          ...events('ku1', '2026-11-22', 2, false),
          ...events('ku1', '2026-11-21', 4),
          // ku2 (test, same tier): 2 on the 22nd
          ...events('ku2', '2026-11-22', 2),
          // of another tier, another account, another month: not counted
          ...events('ku3', '2026-11-22', 7),
          ...events('kv1', '2026-11-22', 7),
          ...events('ku1', '2026-10-31', 9),
        ],
        newUsageBatchId(),
      );
      await store.revokeKey('ku2', '2026-11-22T12:00:00.000Z'); // revoked keys' use stays counted
      const scope = { accountId: 'acct_u', tier: 'free' };
      assert.deepEqual(await store.accountUsageTotals(scope, '2026-11-22', { daily: null, monthly: null }), {
        dayUsed: 7,
        monthUsed: 9,
      });
      // per key: min(5, 3) + min(2, 3) = 5 that day; min(7, 5) + min(2, 5) = 7 that month
      assert.deepEqual(await store.accountUsageTotals(scope, '2026-11-22', { daily: 3, monthly: 5 }), {
        dayUsed: 5,
        monthUsed: 7,
      });
      assert.deepEqual(await store.accountUsageTotals(scope, '2026-12-01', { daily: 3, monthly: 5 }), {
        dayUsed: 0,
        monthUsed: 0,
      });
      assert.deepEqual(
        await store.accountUsageTotals({ accountId: 'acct_none', tier: 'free' }, '2026-11-22', {
          daily: 3,
          monthly: 5,
        }),
        { dayUsed: 0, monthUsed: 0 },
      );
      // a key moved to another account takes its usage with it
      await store.moveKey('kv1', 'acct_u');
      assert.deepEqual(await store.accountUsageTotals(scope, '2026-11-22', { daily: null, monthly: null }), {
        dayUsed: 14,
        monthUsed: 16,
      });
      // reserveUsage decides against the account bound too: the account is at 14 that day
      const bound = { accountId: 'acct_u', tier: 'free', daily: 15, monthly: 1000 };
      const reserve = (keyId: string) => ({
        keyId,
        day: '2026-11-22',
        endpoint: 'GET /a',
        daily: null,
        monthly: null,
        account: bound,
      });
      assert.deepEqual(
        await store.reserveUsage([reserve('ku1'), reserve('ku2'), reserve('ku1')], newUsageBatchId()),
        [
          { dayUsed: 6, monthUsed: 8, countedMonthly: true },
          {
            dayUsed: 3,
            monthUsed: 2,
            countedMonthly: false,
            byAccount: { reason: 'DAILY_QUOTA', limit: 15, used: 16 },
          },
          {
            dayUsed: 7,
            monthUsed: 8,
            countedMonthly: false,
            byAccount: { reason: 'DAILY_QUOTA', limit: 15, used: 17 },
          },
        ],
      );
      // the refused requests were counted in their keys' day (not their month)
      assert.deepEqual(await store.usageTotals('ku1', '2026-11-22'), { dayUsed: 7, monthUsed: 8 });
      // the month: 17 used of a bound of 18: one more, then refused
      const monthly = { accountId: 'acct_u', tier: 'free', daily: null, monthly: 18 };
      const next = (keyId: string) => ({ ...reserve(keyId), account: monthly, day: '2026-11-23' });
      const r = await store.reserveUsage([next('ku1'), next('ku1')], newUsageBatchId());
      assert.deepEqual(
        r.map((x) => x.byAccount ?? 'ok'),
        ['ok', { reason: 'MONTHLY_QUOTA', limit: 18, used: 19 }],
      );
      await store.close();
    });

    test('behavior: reserveUsage decides each request in order against its quotas (docs/decisions.md "Order of checks and what counts") and records it', async () => {
      const store = await open();
      const r = (day: string, daily: number | null, monthly: number | null, keyId = 'k') => ({
        keyId,
        day,
        endpoint: 'GET /a',
        daily,
        monthly,
      });
      await store.recordUsage(
        [{ keyId: 'k', day: '2026-11-21', endpoint: 'GET /b', countedMonthly: true }],
        newUsageBatchId(),
      );
      assert.deepEqual(await store.reserveUsage([], newUsageBatchId()), []);
      assert.deepEqual(
        await store.reserveUsage(
          [
            r('2026-11-22', 2, 3),
            r('2026-11-22', 2, 3),
            r('2026-11-22', 2, 3), // daily quota: counted that day, not in the month
            r('2026-11-23', 2, 3), // the next day: counted, over the monthly quota
            r('2026-11-22', null, null, 'other'),
          ],
          newUsageBatchId(),
        ),
        [
          { dayUsed: 1, monthUsed: 2, countedMonthly: true },
          { dayUsed: 2, monthUsed: 3, countedMonthly: true },
          { dayUsed: 3, monthUsed: 3, countedMonthly: false },
          { dayUsed: 1, monthUsed: 4, countedMonthly: true },
          { dayUsed: 1, monthUsed: 1, countedMonthly: true },
        ],
      );
      assert.deepEqual(await store.reserveUsage([r('2026-11-23', 2, 3)], newUsageBatchId()), [
        { dayUsed: 2, monthUsed: 5, countedMonthly: true },
      ]);
      assert.deepEqual(await store.usageTotals('k', '2026-11-22'), { dayUsed: 3, monthUsed: 5 });
      assert.deepEqual(await store.usageTotals('k', '2026-11-23'), { dayUsed: 2, monthUsed: 5 });
      assert.deepEqual(await store.usageTotals('other', '2026-11-22'), { dayUsed: 1, monthUsed: 1 });
      await store.close();
    });

    test('behavior: concurrent reservations never admit beyond the quota and lose no count', async () => {
      const store = await open();
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          store.reserveUsage(
            [{ keyId: 'k', day: '2026-11-22', endpoint: `GET /${i % 3}`, daily: 50, monthly: null }],
            newUsageBatchId(),
          ),
        ),
      );
      const flat = results.flat();
      assert.deepEqual(
        flat.map((x) => x.dayUsed).sort((a, b) => a - b),
        Array.from({ length: 200 }, (_, i) => i + 1),
      );
      assert.equal(flat.filter((x) => x.countedMonthly).length, 50);
      assert.ok(flat.every((x) => x.countedMonthly === x.dayUsed <= 50));
      assert.deepEqual(await store.usageTotals('k', '2026-11-22'), { dayUsed: 200, monthUsed: 50 });
      await store.close();
    });

    test('behavior: concurrent reservations whose key ids hash alike do not deadlock', async () => {
      // hashtext('key_137169') = hashtext('key_173126') in PostgreSQL; 'key_15' sorts between them
      const store = await open();
      const batch = (keyIds: string[]) =>
        store.reserveUsage(
          keyIds.map((keyId) => ({
            keyId,
            day: '2026-11-22',
            endpoint: 'GET /a',
            daily: null,
            monthly: null,
          })),
          newUsageBatchId(),
        );
      for (let round = 0; round < 10; round++) {
        await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            batch(i % 2 ? ['key_137169', 'key_15'] : ['key_15', 'key_173126']),
          ),
        );
      }
      assert.deepEqual(await store.usageTotals('key_15', '2026-11-22'), { dayUsed: 80, monthUsed: 80 });
      await store.close();
    });

    test('behavior: a usage batch written twice under one id counts once; other ids count', async () => {
      const store = await open();
      const ev = (endpoint: string, countedMonthly = true) => ({
        keyId: 'k',
        day: '2026-11-22',
        endpoint,
        countedMonthly,
      });
      const batch = [ev('GET /a'), ev('GET /a'), ev('GET /b', false)];
      const id = newUsageBatchId();
      await store.recordUsage(batch, id);
      await store.recordUsage(batch, id); // the retry of a write whose answer was lost
      assert.deepEqual(await store.usageTotals('k', '2026-11-22'), { dayUsed: 3, monthUsed: 2 });
      // at once, as a retry still under way on the server and the next attempt would be
      const again = newUsageBatchId();
      await Promise.all([store.recordUsage([ev('GET /c')], again), store.recordUsage([ev('GET /c')], again)]);
      await store.recordUsage([ev('GET /a')], newUsageBatchId());
      assert.deepEqual(await store.usageByDay('k', '2026-11-22', '2026-11-22'), [
        { day: '2026-11-22', endpoint: 'GET /a', requests: 3 },
        { day: '2026-11-22', endpoint: 'GET /b', requests: 1 },
        { day: '2026-11-22', endpoint: 'GET /c', requests: 1 },
      ]);
      await store.close();
    });

    test('behavior: a reservation batch applied twice counts once; recordUsage under its id then changes nothing', async () => {
      const store = await open();
      const r = (endpoint: string) => ({ keyId: 'k', day: '2026-11-22', endpoint, daily: 2, monthly: null });
      const id = newUsageBatchId();
      const first = await store.reserveUsage([r('GET /a'), r('GET /a'), r('GET /b')], id);
      assert.deepEqual(first, [
        { dayUsed: 1, monthUsed: 1, countedMonthly: true },
        { dayUsed: 2, monthUsed: 2, countedMonthly: true },
        { dayUsed: 3, monthUsed: 2, countedMonthly: false },
      ]);
      // Applied already: nothing counted; every request gets the stored totals.
      assert.deepEqual(await store.reserveUsage([r('GET /a'), r('GET /a'), r('GET /b')], id), [
        { dayUsed: 3, monthUsed: 2, countedMonthly: false },
        { dayUsed: 3, monthUsed: 2, countedMonthly: false },
        { dayUsed: 3, monthUsed: 2, countedMonthly: false },
      ]);
      // The counts a failed reservation's requests got locally, written under its id.
      await store.recordUsage(
        [
          { keyId: 'k', day: '2026-11-22', endpoint: 'GET /a', countedMonthly: true },
          { keyId: 'k', day: '2026-11-22', endpoint: 'GET /a', countedMonthly: true },
          { keyId: 'k', day: '2026-11-22', endpoint: 'GET /b', countedMonthly: false },
        ],
        id,
      );
      assert.deepEqual(await store.usageTotals('k', '2026-11-22'), { dayUsed: 3, monthUsed: 2 });
      // Under the id of a reservation that never reached the store, they count.
      await store.recordUsage(
        [{ keyId: 'k', day: '2026-11-22', endpoint: 'GET /a', countedMonthly: false }],
        newUsageBatchId(),
      );
      assert.deepEqual(await store.usageTotals('k', '2026-11-22'), { dayUsed: 4, monthUsed: 2 });
      await store.close();
    });

    test('behavior: concurrent usage writes lose no increment', async () => {
      const store = await open();
      const writes = Array.from({ length: 500 }, () =>
        store.recordUsage(
          [{ keyId: 'k', day: '2026-11-22', endpoint: 'GET /a', countedMonthly: true }],
          newUsageBatchId(),
        ),
      );
      await Promise.all(writes);
      assert.deepEqual(await store.usageTotals('k', '2026-11-22'), { dayUsed: 500, monthUsed: 500 });
      await store.close();
    });
  });
}
