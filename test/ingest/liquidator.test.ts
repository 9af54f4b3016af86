import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { applyPrices, catchUpChanges, loadReadModel, type ReadModel } from '../../src/data/read-model.ts';
import { eulerLiquidationBonus } from '../../src/domain/accounts.ts';
import { ACTIVITY_SOURCE_ID } from '../../src/ingest/sandbox/activity.ts';
import { sandboxMarketClock, sandboxSimulation } from '../../src/ingest/sandbox/history.ts';
import { DEFAULT_SEED, generateSandbox, SANDBOX_AS_OF } from '../../src/ingest/sandbox/index.ts';
import { SandboxLiquidator } from '../../src/ingest/sandbox/liquidator.ts';
import { sandboxPricer } from '../../src/ingest/sandbox/live.ts';
import { DAY_MS, HOUR_MS } from '../../src/ingest/sandbox/simulation/noise.ts';
import { sandboxPositions } from '../../src/service/sandbox-positions.ts';
import { seededStores } from './seeded.ts';

/**
 * Live liquidations of the sandbox: positions the prices put below health factor 1 are
 * liquidated by the protocol's rules, at the hour the prices put them there; the events go
 * into the history, the positions left are written as changes that every read model applies
 * from the store's change feed.
 */

const seeded = seededStores('lrds-liquidator-');
const AT = SANDBOX_AS_OF * 1000;
const sim = sandboxSimulation('default', DEFAULT_SEED);

/** Prices a model at tMs as the running server does (prices, markets' states and borrow index). */
function priceAt(model: ReadModel, tMs: number): void {
  const records = model.catalog.baseRecords();
  const pricer = sandboxPricer(records, DEFAULT_SEED);
  applyPrices(model, pricer.pricesAt(tMs), tMs, [], sandboxMarketClock(sim).statesAt(tMs));
}

/** The served view of every position under `threshold`, by user and market. */
function atRisk(model: ReadModel, threshold: number) {
  return model.risk
    .query({ healthFactorThreshold: threshold, minBorrowUsd: 0, limit: 1_000_000 })
    .map((i) => model.risk.view(i))
    .map((v) => `${v.market.uniqueKey}/${v.user.address}/${v.healthFactor}/${v.state.borrowAssetsUsd}`);
}

describe('sandbox liquidations', () => {
  test('invariant: no position of the snapshot is below health factor 1 (nothing to liquidate at the first start)', async () => {
    const store = await seeded('snapshot');
    const model = (await loadReadModel(store, AT))!;
    assert.equal(model.risk.query({ healthFactorThreshold: 1, minBorrowUsd: 0, limit: 10 }).length, 0);
    const { events } = new SandboxLiquidator(store, 'default', DEFAULT_SEED).plan(model, AT);
    assert.equal(events.length, 0);
  });

  test('behavior: each account below 1 is liquidated whole by its protocol: close factor, bonus, absorb, discount; bad debt only when no collateral is left', async () => {
    const store = await seeded('plan');
    const model = (await loadReadModel(store, AT))!;
    const now = AT + 14 * DAY_MS + 1234;
    priceAt(model, now);
    const due = model.risk.query({ healthFactorThreshold: 1, minBorrowUsd: 0, limit: 1_000_000 });
    assert.ok(due.length > 20, `positions below 1 two weeks on (${due.length})`);
    const liquidator = new SandboxLiquidator(store, 'default', DEFAULT_SEED, 10_000);
    const { events, changes } = liquidator.plan(model, now);
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

  test('behavior: catching up from the snapshot liquidates at the hours prices crossed, at the rate of the history, with no burst at the start', async () => {
    const store = await seeded('catch-up');
    const model = (await loadReadModel(store, AT))!;
    const days = 20;
    const now = AT + days * DAY_MS + 17 * 60_000;
    priceAt(model, now);
    const liquidator = new SandboxLiquidator(store, 'default', DEFAULT_SEED, 100_000);
    // The first step after the start: no activity checkpoint, so it catches up from the snapshot.
    const step = await liquidator.step(model, now);
    assert.equal(step.fromMs, AT, 'from the snapshot');
    assert.equal(step.complete, true, 'everything due taken at once (the cap is above it)');
    const events = step.events;
    assert.ok(events.length > 100, `${events.length} liquidations over ${days} days`);
    for (const e of events) assert.ok(e.at > AT && e.at <= now);
    // Stamped when the prices crossed: few at the instant of the catch-up, none in its minute
    // beyond what a minute of the history holds.
    const atStart = events.filter((e) => e.at > now - 60_000).length;
    assert.ok(
      atStart <= Math.max(5, (events.length / (days * 24 * 60)) * 20),
      `${atStart} in the last minute`,
    );
    // Day by day, in line with the history's days before the snapshot (same markets, same rules).
    const perDay = new Array<number>(days).fill(0);
    for (const e of events) perDay[Math.min(days - 1, Math.floor((e.at - AT) / DAY_MS))]! += 1;
    const before = new Array<number>(days).fill(0);
    for (let i = 0; i < sim.dataset.markets.length; i++)
      for (const e of sim.history.liquidations(i, AT - days * DAY_MS, AT))
        before[Math.floor((e.at - (AT - days * DAY_MS)) / DAY_MS)]! += 1;
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
    const ratio = median(perDay) / median(before);
    assert.ok(ratio > 0.25 && ratio < 4, `median day after ${median(perDay)}, before ${median(before)}`);
    assert.ok(
      perDay[0]! < 4 * median(before) + 20,
      `first day ${perDay[0]}, history's median ${median(before)}`,
    );
    // The positions left: nothing below 1 once the changes are applied.
    await catchUpChanges(store, model, (await store.datasetInfo())!.changeSeq);
    assert.deepEqual(atRisk(model, 1), []);
    // The next step, a second later, has nothing to catch up.
    assert.equal((await liquidator.step(model, now + 1000)).events.length, 0);
  });

  test('behavior: a catch-up cut by the cap per step ends, each position due taken once, with the liquidations of one uncut step', async () => {
    const days = 20;
    const now = AT + days * DAY_MS + 17 * 60_000;
    const whole = await seeded('catch-up-whole');
    const wholeModel = (await loadReadModel(whole, AT))!;
    priceAt(wholeModel, now);
    const once = await new SandboxLiquidator(whole, 'default', DEFAULT_SEED, 100_000).step(wholeModel, now);
    assert.equal(once.complete, true);
    const store = await seeded('catch-up-cut');
    const model = (await loadReadModel(store, AT))!;
    priceAt(model, now);
    const liquidator = new SandboxLiquidator(store, 'default', DEFAULT_SEED, 20);
    const hashes: string[] = [];
    let steps = 0;
    for (let done = false; !done; steps++) {
      assert.ok(steps < 500, 'the catch-up ends');
      const step = await liquidator.step(model, now);
      assert.equal(step.fromMs, AT, 'every step of the catch-up from the snapshot');
      hashes.push(...step.events.map((e) => e.txHash));
      done = step.complete;
      // The server's model follows the change feed between steps.
      await catchUpChanges(store, model, (await store.datasetInfo())!.changeSeq);
    }
    assert.ok(steps > 5, `cut into ${steps} steps`);
    assert.deepEqual(hashes.sort(), once.events.map((e) => e.txHash).sort());
    assert.deepEqual(atRisk(model, 1), []);
    assert.equal((await liquidator.step(model, now + 1000)).events.length, 0);
  });

  test('behavior: within a catch-up, a position liquidated at one tick and still below 1 is not taken again at a later tick before the model shows the change, nor in the hours gone through', async () => {
    const store = await seeded('retake');
    const model = (await loadReadModel(store, AT))!;
    const now = Math.floor((AT + 20 * DAY_MS) / HOUR_MS) * HOUR_MS + 17 * 60_000;
    priceAt(model, now);
    const liquidator = new SandboxLiquidator(store, 'default', DEFAULT_SEED, 20);
    const first = await liquidator.step(model, now);
    assert.equal(first.complete, false);
    const keyOf = (e: { marketKey: string; borrower: string }) => `${e.marketKey}/${e.borrower}`;
    const before = new Set(first.events.map(keyOf));
    // The next tick, before the model follows the change feed: none of them is taken again.
    const later = now + 5000;
    const unseen = await liquidator.step(model, later);
    assert.equal(unseen.fromMs, AT, 'the same catch-up');
    assert.deepEqual(
      unseen.events.filter((e) => before.has(keyOf(e))),
      [],
    );
    // Nor picked (they would fill the step's cap): what it took is what the window had left.
    assert.ok(unseen.took > 0);
    // Once it follows, nothing of them is left below 1 to take again (the step took them whole or
    // far enough), and the next tick adds no liquidation of them.
    await catchUpChanges(store, model, (await store.datasetInfo())!.changeSeq);
    const again = await liquidator.step(model, later + 5000);
    assert.deepEqual(
      again.events.filter((e) => before.has(keyOf(e)) && e.at !== later + 5000),
      [],
      'nothing of them stamped in the hours already gone through',
    );
  });

  test('behavior: a restart within the hour (a window with no whole hour) cut by the cap ends, without the model following between its steps', async () => {
    const store = await seeded('no-hour');
    const model = (await loadReadModel(store, AT))!;
    const now = Math.floor((AT + 14 * DAY_MS) / HOUR_MS) * HOUR_MS + 40 * 60_000;
    priceAt(model, now);
    const below = atRisk(model, 1).length;
    assert.ok(below > 40, `${below} positions below 1`);
    // The activity's checkpoint 20 minutes before, in the same hour: the window has no whole hour.
    const version = model.dataset.version;
    await store.saveSource({
      id: ACTIVITY_SOURCE_ID,
      kind: 'simulation',
      chainIds: [1],
      refreshedAt: null,
      lastBlock: {},
      consecutiveFailures: 0,
      lastError: null,
      updatedAt: 0,
      cursor: `${version}:${(now - 20 * 60_000) / 60_000}`,
    });
    const liquidator = new SandboxLiquidator(store, 'default', DEFAULT_SEED, 20);
    const hashes = new Set<string>();
    const liquidated = new Set<string>();
    let steps = 0;
    for (let done = false; !done; steps++) {
      assert.ok(steps < 100, 'the catch-up ends');
      // The model is not given the changes between steps (chained steps run before the feed).
      const step = await liquidator.step(model, now);
      assert.equal(step.fromMs, now - 20 * 60_000);
      for (const e of step.events) {
        assert.ok(!hashes.has(e.txHash), 'no liquidation computed twice');
        hashes.add(e.txHash);
        liquidated.add(`${e.marketKey}/${e.borrower}`);
      }
      done = step.complete;
    }
    assert.ok(steps >= Math.ceil(below / 20) - 1, `${steps} steps for ${below} positions`);
    await catchUpChanges(store, model, (await store.datasetInfo())!.changeSeq);
    // What is still below 1 was liquidated in the catch-up (a leg whose own collateral is gone
    // keeps its debt while another leg holds collateral); nothing below 1 was left untouched.
    const left = atRisk(model, 1);
    assert.ok(left.length < below / 4, `${left.length} of ${below} left below 1`);
    for (const k of left) assert.ok(liquidated.has(k.split('/').slice(0, 2).join('/')), k);
    assert.ok((await liquidator.step(model, now + 5000)).complete);
  });

  test('behavior: the server positions step runs a catch-up steps one after another, says when it is caught up, and leaves the next tick nothing', async () => {
    const store = await seeded('chained');
    const model = (await loadReadModel(store, AT))!;
    const now = AT + 20 * DAY_MS + 17 * 60_000;
    priceAt(model, now);
    const said: { msg: string; o: Record<string, unknown> }[] = [];
    const log = {
      info: (o: Record<string, unknown>, msg: string) => said.push({ msg, o }),
      warn: (o: Record<string, unknown>, msg: string) => said.push({ msg, o }),
    } as unknown as Parameters<typeof sandboxPositions>[2];
    const positions = sandboxPositions(store, { now: () => now }, log);
    // One tick's call: every step of the catch-up (500 positions at most each), the model not
    // following the change feed in between.
    await positions.step(model, now);
    const caughtUp = said.find((x) => x.msg === 'sandbox liquidations caught up');
    assert.ok(caughtUp, said.map((x) => x.msg).join(', '));
    assert.ok(Number(caughtUp.o.steps) > 1, `${caughtUp.o.steps} steps`);
    assert.equal(caughtUp.o.liquidations, (await store.historyCounts()).liquidations);
    await catchUpChanges(store, model, (await store.datasetInfo())!.changeSeq);
    assert.deepEqual(atRisk(model, 1), []);
    // The next tick liquidates nothing more.
    const before = (await store.historyCounts()).liquidations;
    priceAt(model, now + 5000);
    await positions.step(model, now + 5000);
    assert.equal((await store.historyCounts()).liquidations, before);
    await positions.stop();
  });

  test('behavior: a position that dipped below 1 and recovered while the server was down is liquidated at the dip', async () => {
    const store = await seeded('dip');
    const model = (await loadReadModel(store, AT))!;
    const now = AT + 20 * DAY_MS;
    priceAt(model, now);
    const { events, complete } = new SandboxLiquidator(store, 'default', DEFAULT_SEED, 100_000).plan(
      model,
      now,
      AT,
    );
    assert.ok(complete);
    const below = new Set(atRisk(model, 1).map((k) => k.split('/').slice(0, 2).join('/')));
    const recovered = events.filter((e) => !below.has(`${e.marketKey}/${e.borrower}`));
    assert.ok(recovered.length > 0, 'some liquidated positions are back above 1 now');
    // Each event is in the hour before a whole hour of the window.
    for (const e of events) if (e.at !== now) assert.ok(Math.ceil(e.at / HOUR_MS) * HOUR_MS < now);
  });

  test('behavior: a step writes the events and the positions left; the read model follows the change feed, a reload gives the same answers', async () => {
    const store = await seeded('step');
    const model = (await loadReadModel(store, AT))!;
    const stale = (await loadReadModel(store, AT))!;
    const now = AT + 14 * DAY_MS + 1234;
    priceAt(model, now);
    priceAt(stale, now);
    const before = atRisk(model, 1).length;
    assert.ok(before > 40);
    const liquidator = new SandboxLiquidator(store, 'default', DEFAULT_SEED, 20);
    // The first step catches up from the snapshot, 20 positions at a time.
    const first = await liquidator.step(model, now);
    assert.equal(first.applied, 20);
    assert.equal(first.complete, false, 'cut by the cap: the next step goes on from the snapshot');
    assert.equal(first.fromMs, AT);
    const n = first.events.length;
    assert.ok(n >= 20);
    assert.equal((await store.historyCounts()).liquidations, n);
    const info = (await store.datasetInfo())!;
    assert.equal(info.changeSeq, 20);
    assert.equal(await catchUpChanges(store, model, info.changeSeq), 20);
    // Another process's model, loaded and priced now, serves the same positions.
    const reloaded = (await loadReadModel(store, AT))!;
    priceAt(reloaded, now);
    assert.equal(reloaded.changeSeq, 20);
    assert.deepEqual(atRisk(reloaded, 1.2), atRisk(model, 1.2));
    // A second writer working from the model before the step: the same events, stored once,
    // and no position written twice.
    const late = await new SandboxLiquidator(store, 'default', DEFAULT_SEED, 20).step(stale, now);
    assert.deepEqual(
      late.events.map((e) => e.txHash),
      first.events.map((e) => e.txHash),
    );
    assert.equal(late.applied, 0);
    assert.equal((await store.historyCounts()).liquidations, n);
  });
  test('behavior: a catch-up step yields to the event loop while it computes, and stopped meanwhile writes nothing; the next step catches up the same', async () => {
    const store = await seeded('stop');
    const model = (await loadReadModel(store, AT))!;
    const now = AT + 14 * DAY_MS + 1234;
    priceAt(model, now);
    // What the first step writes (plan() is pure: nothing written).
    const expected = new SandboxLiquidator(store, 'default', DEFAULT_SEED, 20).plan(model, now, AT);
    assert.ok(expected.events.length >= 20);
    const liquidator = new SandboxLiquidator(store, 'default', DEFAULT_SEED, 20);
    // Stopped at the first turn of the event loop the step gives back.
    const stop = new AbortController();
    let turns = 0;
    setImmediate(() => {
      turns++;
      stop.abort();
    });
    const stopped = await liquidator.step(model, now, stop.signal);
    assert.equal(turns, 1, 'the event loop ran during the step');
    assert.deepEqual(stopped, { events: [], applied: 0, fromMs: AT, complete: false, took: 0 });
    assert.equal((await store.historyCounts()).liquidations, 0);
    assert.equal((await store.datasetInfo())!.changeSeq, 0);
    // The same liquidator, not stopped: the catch-up from the snapshot, as it was due.
    const step = await liquidator.step(model, now);
    assert.equal(step.applied, 20);
    assert.deepEqual(
      step.events.map((e) => e.txHash),
      expected.events.map((e) => e.txHash),
    );
    assert.equal((await store.historyCounts()).liquidations, step.events.length);
  });
});
