import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { catchUpChanges, loadReadModel, type ReadModel } from '../../src/data/read-model.ts';
import { stressTest } from '../../src/queries/stress.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { makeMarket, makePosition, makeVault, tempDir } from '../helpers.ts';

/**
 * A read model follows its sources' changes in place: markets restated, positions moved, in
 * the store's feed order; a model loaded afterwards serves the same.
 */

const dir = tempDir('lrds-read-model-');
const stores: SqliteStore[] = [];
after(async () => {
  for (const s of stores) await s.close();
});

const served = (model: ReadModel) => ({
  markets: model.catalog.views().map((v) => ({ ...v, oracleHealth: null })),
  positions: model.risk
    .query({ healthFactorThreshold: 10, minBorrowUsd: 0, limit: 100 })
    .map((i) => model.risk.view(i)),
  // What the catalog's lists and search index answer, by key.
  byProtocol: Object.fromEntries(
    (['aave', 'morpho'] as const).map((protocol) => [
      protocol,
      model.catalog.list({ protocol }, 0, 100).map((o) => model.catalog.keyAt(o)),
    ]),
  ),
  searched: model.catalog.search('wbtc', {}, 10).map((o) => model.catalog.keyAt(o)),
  vaults: model.vaults.entries.map((e) => e.record),
});

describe('read model following the change feed', () => {
  test('behavior: a market restated by its source is replaced in place (rank, figures, its positions at its new prices); a fresh load serves the same', async () => {
    const store = new SqliteStore(join(dir, 'markets.db'));
    await store.migrate();
    stores.push(store);
    const big = makeMarket({
      supply: 5_000_000,
      borrow: 1_000_000,
      collateralPrice: 2_000,
      loanPrice: 1,
      lltv: 0.8,
    });
    const small = makeMarket({
      supply: 1_000_000,
      borrow: 500_000,
      collateralPrice: 2_000,
      loanPrice: 1,
      lltv: 0.8,
    });
    const p = makePosition(small, {
      collateralUsd: 10_000,
      borrowUsd: 7_000,
      healthFactor: (10_000 * 0.8) / 7_000,
    });
    const q = makePosition(big, {
      collateralUsd: 10_000,
      borrowUsd: 6_000,
      healthFactor: (10_000 * 0.8) / 6_000,
    });
    await store.replaceDataset({
      kind: 'live',
      profile: 'test',
      seed: null,
      markets: [big, small],
      positions: [p, q],
      positionCount: 2,
    });
    const model = (await loadReadModel(store, 0))!;
    const before = served(model);
    assert.deepEqual(
      before.markets.map((m) => m.uniqueKey),
      [big.uniqueKey, small.uniqueKey],
    );

    // The source restates the small market: grown past the big one, its collateral down 10 %.
    const restated = {
      ...small,
      supply: 9_000_000,
      borrow: 6_000_000,
      collateralPrice: 1_800,
      borrowApy: 0.09,
    };
    const seq = await store.applyMarketChanges('chain-1', [restated]);
    // and then a position change of the other market, in the same feed
    const { changeSeq } = await store.applyPositionChanges('chain-1', [
      { ...q, borrowUsd: 7_500, healthFactor: (10_000 * 0.8) / 7_500 },
    ]);
    assert.equal(changeSeq, seq + 1);
    assert.equal(await catchUpChanges(store, model, changeSeq), 2);
    assert.equal(model.changeSeq, changeSeq);
    const now = served(model);
    assert.deepEqual(
      now.markets.map((m) => m.uniqueKey),
      [small.uniqueKey, big.uniqueKey],
      're-ranked by supply',
    );
    const m = now.markets[0]!;
    assert.equal(m.supply, 9_000_000);
    assert.equal(m.borrow, 6_000_000);
    assert.equal(m.utilization, 0.66666667);
    assert.equal(m.borrowApy, 0.09);
    assert.equal(m.collateralPrice, 1_800);
    // The position of that market at the new price: collateral and health factor down 10 %.
    const pos = now.positions.find((x) => x.user.address === p.user)!;
    assert.equal(pos.state.collateralUsd, 9_000);
    assert.equal(pos.healthFactor, Number(((9_000 * 0.8) / 7_000).toPrecision(8)));
    assert.equal(now.positions.find((x) => x.user.address === q.user)!.state.borrowAssetsUsd, 7_500);
    // Another process loading now serves exactly the same.
    const fresh = (await loadReadModel(store, 0))!;
    assert.equal(fresh.changeSeq, changeSeq);
    assert.deepEqual(served(fresh), now);
  });

  test('behavior: markets and vaults a pass adds are added in place (ranked, listed, searchable, their positions at risk, an account joined by a new pair); a fresh load serves the same', async () => {
    const store = new SqliteStore(join(dir, 'added.db'));
    await store.migrate();
    stores.push(store);
    const POOL = '0x87870bca3f3fd6335c3f4ce8392d69350b4fa4e2';
    const USDC = '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48';
    const WETH = '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2';
    const WBTC = '0x2260fac5e5542a773aa44fbcfeaf7d193f53c599';
    const aavePair = (symbol: string, address: string, price: number, lltv: number) =>
      makeMarket({
        uniqueKey: `aave-1-${POOL}_${address}_${USDC}`,
        protocol: 'aave',
        label: `${symbol} / USDC`,
        collateral: symbol,
        collateralName: symbol,
        collateralAddress: address,
        collateralPrice: price,
        loan: 'USDC',
        loanAddress: USDC,
        loanPrice: 1,
        lltv,
        supply: 1_000_000,
        borrow: 400_000,
      });
    const wethPair = aavePair('WETH', WETH, 2_500, 0.83);
    const morpho = makeMarket({ supply: 2_000_000, borrow: 1_000_000 });
    const ALICE = '0x1d9c89a15ad077862847110668ea4d608f9ad852';
    const alone = { ...makePosition(wethPair, { collateralUsd: 10_000, borrowUsd: 7_000 }), user: ALICE };
    const info = await store.replaceDataset({
      kind: 'live',
      profile: 'test',
      seed: null,
      markets: [wethPair, morpho],
      vaults: [makeVault([morpho])],
      positions: [alone, makePosition(morpho, { collateralUsd: 10_000, borrowUsd: 8_000 })],
      positionCount: 2,
    });
    const model = (await loadReadModel(store, 0))!;
    const before = served(model);
    assert.deepEqual(before.searched, []);
    // (A stress test names the catalog's tokens: WBTC is none yet.)
    assert.throws(() => stressTest(model, { shocks: [{ asset: 'WBTC', change: -0.3 }], limit: 10 }));

    // The pool lists WBTC (a new pair, largest by supply), Alice borrows against it too: her
    // account's health is now of both pairs. A new Morpho market and a vault of it appear.
    const wbtcPair = { ...aavePair('WBTC', WBTC, 100_000, 0.78), supply: 9_000_000 };
    const newMorpho = makeMarket({ supply: 500_000, borrow: 100_000 });
    const vault = makeVault([newMorpho]);
    // Alice: WETH 10,000 x 0.83 + WBTC 5,000 x 0.78 over 9,000 of debt, split between the pairs
    // as her collateral at its threshold is (as the pooled sources split it).
    const weighted = { weth: 10_000 * 0.83, wbtc: 5_000 * 0.78 };
    const hf = (weighted.weth + weighted.wbtc) / 9_000;
    const seq = await store.applyChanges(
      'sources',
      {
        added: { markets: [wbtcPair, newMorpho], vaults: [vault] },
        markets: [],
        positions: [
          { ...alone, borrowUsd: weighted.weth / hf, healthFactor: hf },
          {
            marketKey: wbtcPair.uniqueKey,
            user: ALICE,
            collateralUsd: 5_000,
            borrowUsd: weighted.wbtc / hf,
            supplyUsd: 0,
            healthFactor: hf,
          },
          makePosition(newMorpho, { collateralUsd: 3_000, borrowUsd: 2_500 }),
        ],
        vaults: [],
        refreshedAt: info.refreshedAt + 1_000,
      },
      info,
    );
    assert.ok(seq !== null);
    assert.equal((await store.datasetInfo())!.marketCount, 4);
    // A market restated after it was added: its positions follow it from the record as added.
    const restated = { ...wbtcPair, collateralPrice: 90_000 };
    const last = await store.applyMarketChanges('sources', [restated]);
    await catchUpChanges(store, model, last);
    const now = served(model);
    assert.equal(model.catalog.size, 4);
    assert.deepEqual(now.markets[0]!.uniqueKey, wbtcPair.uniqueKey, 'ranked by supply');
    assert.equal(now.markets[0]!.collateralPrice, 90_000);
    assert.deepEqual(now.byProtocol.aave, [wbtcPair.uniqueKey, wethPair.uniqueKey]);
    assert.deepEqual(now.searched, [wbtcPair.uniqueKey]);
    assert.deepEqual(
      now.vaults.map((v) => v.address),
      [...before.vaults.map((v) => v.address), vault.address],
    );
    // Alice's account: both pairs, its health at WBTC's new price (collateral down 10 %).
    const hfNow = (10_000 * 0.83 + 4_500 * 0.78) / 9_000;
    const alice = now.positions.filter((p) => p.user.address === ALICE);
    assert.equal(alice.length, 2);
    for (const p of alice) assert.equal(p.healthFactor, Number(hfNow.toPrecision(8)));
    assert.ok(now.positions.some((p) => p.market.uniqueKey === newMorpho.uniqueKey));
    assert.deepEqual(served((await loadReadModel(store, 0))!), now);
    // A stress test may shock the tokens of a market added (WBTC here: no market held it before).
    const shocked = stressTest(model, { shocks: [{ asset: 'WBTC', change: -0.3 }], limit: 10 });
    assert.equal(shocked.items[0]!.totals.markets, 1);

    // A market added, its positions with it, then changed again: its change row moves on past
    // them. A follower whose round stops before it (it read the dataset's sequence number before
    // the later change) meets the positions first, and adds the market for them.
    const another = makeMarket({ supply: 300_000, borrow: 100_000 });
    const at = (await store.datasetInfo())!;
    const added = (await store.applyChanges(
      'sources',
      {
        added: { markets: [another], vaults: [] },
        markets: [],
        positions: [makePosition(another, { collateralUsd: 2_000, borrowUsd: 1_700 })],
        vaults: [],
        refreshedAt: at.refreshedAt + 1_000,
      },
      at,
    ))!;
    const moved = await store.applyMarketChanges('sources', [{ ...another, borrowApy: 0.2 }]);
    await catchUpChanges(store, model, added);
    assert.ok(served(model).positions.some((p) => p.market.uniqueKey === another.uniqueKey));
    await catchUpChanges(store, model, moved);
    assert.deepEqual(served(model), served((await loadReadModel(store, 0))!));
  });

  test('behavior: a round read after the dataset was written whole is not applied (the next poll loads the new one)', async () => {
    const store = new SqliteStore(join(dir, 'replaced.db'));
    await store.migrate();
    stores.push(store);
    const m = makeMarket();
    const p = makePosition(m);
    await store.replaceDataset({
      kind: 'live',
      profile: 'test',
      seed: null,
      markets: [m],
      positions: [p],
      positionCount: 1,
    });
    const model = (await loadReadModel(store, 0))!;
    const { changeSeq } = await store.applyPositionChanges('sources', [{ ...p, borrowUsd: 9_000 }]);
    // The version as read after the round: another dataset's.
    const replaced = new Proxy(store, {
      get(target, prop) {
        if (prop === 'datasetInfo')
          return async () => {
            const info = (await target.datasetInfo())!;
            return { ...info, version: info.version + 1 };
          };
        const value = Reflect.get(target, prop);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    assert.equal(await catchUpChanges(replaced, model, changeSeq), 0);
    assert.equal(model.changeSeq, 0);
    assert.equal(await catchUpChanges(store, model, changeSeq), 1);
    assert.equal(model.changeSeq, changeSeq);
  });
});
