import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { catchUpChanges, loadReadModel } from '../../src/data/read-model.ts';
import {
  ACTIVITY_SOURCE_ID,
  MAX_CATCH_UP_MINUTES,
  MEAN_OPENING_WEIGHT,
  SandboxActivity,
} from '../../src/ingest/sandbox/activity.ts';
import { DEFAULT_SEED, SANDBOX_AS_OF } from '../../src/ingest/sandbox/index.ts';
import {
  HF_SPREAD,
  OPENINGS_PER_POSITION,
  riskWeight,
} from '../../src/ingest/sandbox/simulation/market-history.ts';
import { seededStores } from './seeded.ts';

/**
 * Borrowers coming and going in the running sandbox (src/ingest/sandbox/activity.ts): openings
 * and closings per whole minute, written through the change feed like the liquidations.
 */

const seeded = seededStores('lrds-activity-');
const MINUTE0 = SANDBOX_AS_OF / 60;

describe('sandbox activity', () => {
  test('behavior: a day of minutes opens and closes positions at the documented rate, deterministically; openings look like their market, closings leave every list', async () => {
    const store = await seeded('plan');
    const model = (await loadReadModel(store, SANDBOX_AS_OF * 1000))!;
    const activity = new SandboxActivity(DEFAULT_SEED);
    const day = 24 * 60;
    const changes = activity.plan(model, MINUTE0, MINUTE0 + day);
    // The same minutes planned again give the same changes.
    assert.deepEqual(new SandboxActivity(DEFAULT_SEED).plan(model, MINUTE0, MINUTE0 + day), changes);
    const openings = changes.filter((c) => c.borrowUsd > 0);
    const closings = changes.filter((c) => c.borrowUsd === 0);
    // Expected per kind: 4 x positions / 365 a day (50,000 positions: about 548).
    const expected = (OPENINGS_PER_POSITION * model.risk.size) / 365;
    for (const [kind, n] of [
      ['openings', openings.length],
      ['closings', closings.length],
    ] as const)
      assert.ok(
        Math.abs(n - expected) < 5 * Math.sqrt(expected) + 0.1 * expected,
        `${kind}: ${n} vs ${expected}`,
      );
    for (const c of closings) {
      assert.equal(c.collateralUsd, 0);
      assert.equal(c.healthFactor, Number.POSITIVE_INFINITY);
    }
    // An opening adds as much debt as a closing repays, on average: the markets' borrow holds.
    const debtOf = (c: { marketKey: string; user: string }) => {
      const ord = model.catalog.ordOf(c.marketKey)!;
      const held = model.risk.query({
        healthFactorThreshold: 1e9,
        minBorrowUsd: 0,
        limit: 1e9,
        marketOrd: ord,
      });
      const i = held.find((j) => model.risk.stateOf(j).user === c.user)!;
      return model.risk.stateOf(i).borrowUsd;
    };
    const opened = openings.reduce((s, c) => s + c.borrowUsd, 0);
    const repaid = closings.reduce((s, c) => s + debtOf(c), 0);
    assert.ok(opened / repaid > 0.7 && opened / repaid < 1.6, `opened ${opened}, repaid ${repaid}`);
    // Openings at the snapshot prices: health factor 1.04 or more, by its own amounts.
    for (const o of openings) {
      assert.ok(o.healthFactor >= 1.04 - 1e-9, `${o.healthFactor}`);
      assert.equal(o.basedOn, 0);
      assert.match(o.user, /^0x[0-9a-f]{40}$/);
    }
    // Written and followed: the openings are served (positions grew), the closed ones are gone.
    const { applied, changeSeq } = await store.applyPositionChanges(
      ACTIVITY_SOURCE_ID,
      changes,
      model.dataset.version,
    );
    assert.equal(applied.length, changes.length);
    const before = { size: model.risk.size, indexed: model.risk.indexed };
    await catchUpChanges(store, model, changeSeq);
    assert.equal(model.risk.size, before.size + openings.length);
    assert.equal(model.risk.indexed, before.indexed + openings.length - closings.length);
    const served = new Set(
      model.risk
        .query({ healthFactorThreshold: 10, minBorrowUsd: 0, limit: 1_000_000 })
        .map((i) => model.risk.view(i))
        .map((v) => `${v.market.uniqueKey}/${v.user.address}`),
    );
    for (const o of openings.filter((x) => x.healthFactor < 10))
      assert.ok(served.has(`${o.marketKey}/${o.user}`));
    for (const c of closings) assert.ok(!served.has(`${c.marketKey}/${c.user}`));
    // Written twice (a retry, a second process): nothing applies again.
    const again = await store.applyPositionChanges(ACTIVITY_SOURCE_ID, changes, model.dataset.version);
    assert.equal(again.applied.length, 0);
  });

  test('known answers: the mean risk weight of the openings, by which their debt is scaled', () => {
    // riskWeight(1.04 + X), X exponential of mean HF_SPREAD, averaged over its quantiles.
    const n = 200_000;
    let sum = 0;
    for (let k = 0; k < n; k++) sum += riskWeight(1.04 - Math.log(1 - (k + 0.5) / n) * HF_SPREAD);
    assert.ok(Math.abs(MEAN_OPENING_WEIGHT - sum / n) < 1e-5, `${MEAN_OPENING_WEIGHT} vs ${sum / n}`);
  });

  test('behavior: after a long stop only the last week of minutes is caught up', async () => {
    const store = await seeded('catch-up');
    const model = (await loadReadModel(store, SANDBOX_AS_OF * 1000))!;
    const activity = new SandboxActivity(DEFAULT_SEED);
    const late = MINUTE0 + 30 * 24 * 60;
    assert.deepEqual(
      activity.plan(model, MINUTE0, late),
      activity.plan(model, late - MAX_CATCH_UP_MINUTES, late),
    );
  });
});
