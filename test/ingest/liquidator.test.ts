import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { catchUpChanges, loadReadModel } from '../../src/data/read-model.ts';
import { DEFAULT_SEED, generateSandbox, SANDBOX_AS_OF } from '../../src/ingest/sandbox/index.ts';
import { SandboxLiquidator } from '../../src/ingest/sandbox/liquidator.ts';
import { seededStores } from './seeded.ts';

/**
 * Live liquidations of the sandbox: positions the prices put below health factor 1 are
 * liquidated by the protocol's rules, the events go into the history, the positions left are
 * written as changes that every read model applies from the store's feed.
 */

const seeded = seededStores('lrds-liquidator-');
const AT = SANDBOX_AS_OF * 1000;

/** The served view of every position under `threshold`, by user and market. */
function atRisk(model: NonNullable<Awaited<ReturnType<typeof loadReadModel>>>, threshold: number) {
  return model.risk
    .query({ healthFactorThreshold: threshold, minBorrowUsd: 0, limit: 1_000_000 })
    .map((i) => model.risk.view(i))
    .map((v) => `${v.market.uniqueKey}/${v.user.address}/${v.healthFactor}/${v.state.borrowAssetsUsd}`);
}

describe('sandbox liquidations', () => {
  test('behavior: each position below 1 is liquidated by its close factor and bonus; bad debt when the collateral falls short', async () => {
    const store = await seeded('plan');
    const model = (await loadReadModel(store, AT))!;
    const due = model.risk.query({ healthFactorThreshold: 1, minBorrowUsd: 0, limit: 1_000_000 });
    assert.ok(due.length > 100, `the snapshot holds positions below 1 (${due.length})`);
    const liquidator = new SandboxLiquidator(store, 'default', DEFAULT_SEED, 10_000);
    const { events, changes } = liquidator.plan(model, AT);
    assert.equal(events.length, due.length);
    const ds = generateSandbox({ profile: 'default', seed: DEFAULT_SEED });
    const terms = new Map(ds.markets.map((m, i) => [m.uniqueKey, ds.terms[i]!]));
    let partial = 0;
    let bad = 0;
    events.forEach((e, k) => {
      const t = terms.get(e.marketKey)!;
      const before = model.risk.view(due[k]!);
      const left = changes[k]!;
      assert.equal(e.borrower, before.user.address);
      assert.equal(left.basedOn, 0);
      if (e.badDebt > 0) {
        bad++;
        // All the collateral taken, the rest of the debt written off.
        assert.equal(left.collateralUsd, 0);
        assert.equal(left.borrowUsd, 0);
        assert.ok(Math.abs(e.debtRepaidUsd + e.badDebtUsd - before.state.borrowAssetsUsd) <= 0.05);
      } else {
        // Seized value = repaid x (1 + bonus), to the cent of rounding.
        const expected = e.debtRepaidUsd * (1 + t.liquidationBonus);
        assert.ok(Math.abs(e.collateralSeizedUsd - expected) <= 0.02 + 1e-9 * expected, `${e.txHash}`);
        const share = e.debtRepaidUsd / before.state.borrowAssetsUsd;
        if (share < 0.99) {
          partial++;
          assert.ok(
            t.closeFactor < 1 && before.healthFactor >= 0.95,
            'only a partial-close protocol above 0.95',
          );
          assert.ok(Math.abs(share - t.closeFactor) < 1e-3);
          assert.ok(left.borrowUsd > 0);
        } else assert.equal(left.borrowUsd, 0);
      }
    });
    assert.ok(bad > 0, 'some bad debt');
    assert.ok(partial > 0, 'some partial liquidations (Aave, Spark)');
  });

  test('behavior: a step writes the events and the positions left; the read model follows the change feed, a reload gives the same answers', async () => {
    const store = await seeded('step');
    const model = (await loadReadModel(store, AT))!;
    const stale = (await loadReadModel(store, AT))!;
    const before = atRisk(model, 1).length;
    const liquidator = new SandboxLiquidator(store, 'default', DEFAULT_SEED, 200);
    const planned = liquidator.plan(model, AT);
    const first = await liquidator.step(model, AT);
    assert.deepEqual(first.events, planned.events);
    assert.equal(first.events.length, 200);
    assert.equal(first.applied, 200);
    assert.equal((await store.historyCounts()).liquidations, 200);
    const info = (await store.datasetInfo())!;
    assert.equal(info.changeSeq, 200);
    assert.equal(await catchUpChanges(store, model, info.changeSeq), 200);
    assert.equal(model.changeSeq, 200);
    // At the snapshot's prices (no move yet) a position's health factor is its stored one.
    const stillBelow = planned.changes.filter((c) => c.borrowUsd > 0 && c.healthFactor < 1).length;
    assert.equal(atRisk(model, 1).length, before - 200 + stillBelow);
    // Another process's model, loaded now, serves the same positions.
    const reloaded = (await loadReadModel(store, AT))!;
    assert.equal(reloaded.changeSeq, 200);
    assert.deepEqual(atRisk(reloaded, 1.2), atRisk(model, 1.2));
    // A second writer working from the model before the step: the same events (same hashes,
    // stored once), and no position written twice.
    const late = await new SandboxLiquidator(store, 'default', DEFAULT_SEED, 200).step(stale, AT);
    assert.deepEqual(
      late.events.map((e) => e.txHash),
      first.events.map((e) => e.txHash),
    );
    assert.equal(late.applied, 0);
    assert.equal((await store.historyCounts()).liquidations, 200);
    // The next step goes on with the positions still below 1.
    const second = await liquidator.step(model, AT);
    assert.equal(second.events.length, Math.min(200, before - 200 + stillBelow));
    assert.equal(second.applied, second.events.length);
    assert.equal((await store.historyCounts()).liquidations, 200 + second.events.length);
    assert.equal(model.changeSeq, 200, 'the model moves only with the feed');
  });
});
