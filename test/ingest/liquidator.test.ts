import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { catchUpChanges, loadReadModel } from '../../src/data/read-model.ts';
import { eulerLiquidationBonus } from '../../src/domain/accounts.ts';
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
  test('behavior: each account below 1 is liquidated whole by its protocol: close factor, bonus, absorb, discount; bad debt only when no collateral is left', async () => {
    const store = await seeded('plan');
    const model = (await loadReadModel(store, AT))!;
    const due = model.risk.query({ healthFactorThreshold: 1, minBorrowUsd: 0, limit: 1_000_000 });
    assert.ok(due.length > 100, `the snapshot holds positions below 1 (${due.length})`);
    const liquidator = new SandboxLiquidator(store, 'default', DEFAULT_SEED, 10_000);
    const { events, changes } = liquidator.plan(model, AT);
    const ds = generateSandbox({ profile: 'default', seed: DEFAULT_SEED });
    const terms = new Map(ds.markets.map((m, i) => [m.uniqueKey, ds.terms[i]!]));
    // Every position of an account due is liquidated with it, and no other.
    const members = new Set<number>();
    for (const i of due) for (const j of model.risk.accountOf(i)?.members ?? [i]) members.add(j);
    const byKey = new Map(
      [...members].map((j) => [
        `${model.risk.view(j).market.uniqueKey}/${model.risk.view(j).user.address}`,
        j,
      ]),
    );
    assert.equal(
      events.length,
      [...members].filter((j) => model.risk.view(j).state.collateralUsd > 0).length,
    );
    const changeOf = new Map(changes.map((c) => [`${c.marketKey}/${c.user}`, c]));
    let partial = 0;
    let bad = 0;
    let absorbed = 0;
    const compound = new Map<string, { debt: number; repaid: number; bad: number }>();
    for (const e of events) {
      const key = `${e.marketKey}/${e.borrower}`;
      const j = byKey.get(key);
      assert.ok(j !== undefined, `${key} is a position of an account due`);
      const t = terms.get(e.marketKey)!;
      const before = model.risk.view(j);
      const account = model.risk.accountOf(j);
      const left = changeOf.get(key)!;
      assert.equal(left.basedOn, 0);
      assert.ok(before.healthFactor < 1);
      if (before.protocol === 'compound') {
        // Absorbed: all collateral taken, no debt left; repaid + bad debt = the debt absorbed.
        absorbed++;
        assert.equal(left.collateralUsd, 0);
        assert.equal(left.borrowUsd, 0);
        const acc = compound.get(`${account!.id}`) ?? { debt: account!.totals.debtUsd, repaid: 0, bad: 0 };
        acc.repaid += e.debtRepaidUsd;
        acc.bad += e.badDebtUsd;
        compound.set(`${account!.id}`, acc);
        continue;
      }
      if (e.badDebt > 0) {
        bad++;
        // Bad debt only once the account has no collateral left anywhere.
        for (const m of account?.members ?? [j]) {
          const v = model.risk.view(m);
          assert.equal(changeOf.get(`${v.market.uniqueKey}/${v.user.address}`)!.collateralUsd, 0);
        }
        assert.equal(left.borrowUsd, 0);
        assert.ok(Math.abs(e.debtRepaidUsd + e.badDebtUsd - before.state.borrowAssetsUsd) <= 0.05);
        continue;
      }
      const hf = account ? account.healthFactor : before.healthFactor;
      const bonus =
        before.protocol === 'euler'
          ? eulerLiquidationBonus(hf, 1 - 1 / (1 + t.liquidationBonus))
          : t.liquidationBonus;
      if (left.collateralUsd > 0) {
        // Seized value = repaid x (1 + bonus), to the cent of rounding.
        const expected = e.debtRepaidUsd * (1 + bonus);
        assert.ok(Math.abs(e.collateralSeizedUsd - expected) <= 0.02 + 1e-9 * expected, `${e.txHash}`);
      }
      const share = e.debtRepaidUsd / before.state.borrowAssetsUsd;
      if (share < 0.99 && left.collateralUsd > 0) {
        partial++;
        assert.ok(
          before.protocol === 'aave' || before.protocol === 'spark',
          'only Aave and Spark close in part',
        );
        assert.ok(hf >= 0.95, 'only above health factor 0.95');
        if (before.protocol === 'aave')
          assert.ok(
            before.state.borrowAssetsUsd >= 2_000 && before.state.collateralUsd >= 2_000,
            'Aave closes small legs whole',
          );
        assert.ok(Math.abs(share - 0.5) < 1e-3);
        assert.ok(left.borrowUsd > 0);
      }
    }
    for (const [id, c] of compound)
      assert.ok(
        Math.abs(c.repaid + c.bad - c.debt) <= 0.05 * 4,
        `comet account ${id}: ${c.repaid} + ${c.bad} vs ${c.debt}`,
      );
    assert.ok(bad > 0, 'some bad debt');
    assert.ok(partial > 0, 'some partial liquidations (Aave, Spark)');
    assert.ok(absorbed > 0, 'some absorbs (Compound)');
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
    // 200 positions due, with every other position of their accounts.
    const n = planned.changes.length;
    assert.ok(n >= 200 && first.events.length >= 200, `${n} changes, ${first.events.length} events`);
    assert.equal(first.applied, n);
    assert.equal((await store.historyCounts()).liquidations, first.events.length);
    const info = (await store.datasetInfo())!;
    assert.equal(info.changeSeq, n);
    assert.equal(await catchUpChanges(store, model, info.changeSeq), n);
    assert.equal(model.changeSeq, n);
    const after = atRisk(model, 1).length;
    assert.ok(after < before, `${after} below 1 after, ${before} before`);
    // Another process's model, loaded now, serves the same positions.
    const reloaded = (await loadReadModel(store, AT))!;
    assert.equal(reloaded.changeSeq, n);
    assert.deepEqual(atRisk(reloaded, 1.2), atRisk(model, 1.2));
    // A second writer working from the model before the step: the same events (same hashes,
    // stored once), and no position written twice.
    const late = await new SandboxLiquidator(store, 'default', DEFAULT_SEED, 200).step(stale, AT);
    assert.deepEqual(
      late.events.map((e) => e.txHash),
      first.events.map((e) => e.txHash),
    );
    assert.equal(late.applied, 0);
    assert.equal((await store.historyCounts()).liquidations, first.events.length);
    // The next step goes on with the positions still below 1.
    const second = await liquidator.step(model, AT);
    assert.ok(second.events.length > 0);
    assert.equal((await store.historyCounts()).liquidations, first.events.length + second.events.length);
    assert.equal(model.changeSeq, n, 'the model moves only with the feed');
  });
});
