import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { catchUpChanges, loadReadModel, type ReadModel } from '../../src/data/read-model.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { makeMarket, makePosition, tempDir } from '../helpers.ts';

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
});
