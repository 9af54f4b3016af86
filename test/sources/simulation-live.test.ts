import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { createService, type Service } from '../../src/service.ts';
import { ManualClock } from '../clock.ts';
import { embeddedSettings, QUIET, tempDir } from '../helpers.ts';

/**
 * The living sandbox: the simulation moves token prices with time, markets and positions
 * together, deterministically from the seed and the time (the service is ticked by hand here,
 * with a clock the test moves).
 */

const dataDir = tempDir('lrds-live-');
const settings = embeddedSettings(dataDir);
const open: Service[] = [];
after(async () => {
  for (const s of open) await s.close();
});

async function start(clock: ManualClock, using = settings) {
  const service = await createService(using, { clock, server: QUIET });
  open.push(service);
  const account = await service.keys.ensureAccount('acme');
  const { key } = await service.keys.create({ accountId: account.id, tier: 'pro', mode: 'live' });
  const get = async (url: string) => {
    const res = await service.app.inject({
      url: `/api/v1${url}`,
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };
  return { service, get };
}

const WETH = 'wETH';

describe('the sandbox market moves with time', () => {
  test('behavior: prices, USD amounts, health factors and meta.asOf move between ticks; the same instant gives the same market after a restart', async () => {
    const clock = new ManualClock('2026-11-24T12:00:00.000Z');
    const first = await start(clock);
    const market = (await first.get(`/markets/search?query=${WETH}&limit=1`)).data[0];
    const detail = async (g: typeof first.get) => (await g(`/markets/${market.uniqueKey}`)).data;
    const atRisk = async (g: typeof first.get, limit = 50) =>
      (await g(`/risk/positions-at-risk?healthFactorThreshold=10&limit=${limit}`)).data as {
        user: { address: string };
        healthFactor: number;
        market: { uniqueKey: string };
      }[];
    const snapshot = await detail(first.get);
    const risk0 = await atRisk(first.get);

    assert.equal(await first.service.models.tickSimulation(clock.now()), 1);
    const t1 = await first.get(`/markets/${market.uniqueKey}`);
    assert.equal(t1.meta.asOf, '2026-11-24T12:00:00.000Z');
    assert.equal(t1.meta.freshness, 'snapshot');
    // Three weeks after the snapshot the price has moved (the path is continuous, so not by much
    // in an hour, but surely by something over 23 days).
    assert.notEqual(t1.data.collateralPrice, snapshot.collateralPrice);
    // The market itself moved on too (utilization does not depend on prices): interest accrued,
    // suppliers came and went, the APYs follow the curve at the new utilization.
    assert.notEqual(t1.data.utilization, snapshot.utilization);
    assert.notEqual(t1.data.borrowApy, snapshot.borrowApy);

    clock.advance(3_600_000);
    await first.service.models.tickSimulation(clock.now());
    const t2 = await detail(first.get);
    assert.notEqual(t2.collateralPrice, t1.data.collateralPrice);
    assert.notEqual(t2.supply, t1.data.supply);
    // (the snapshot's lowest are near 1 everywhere: three weeks on, some of them are among the lowest 200)
    const risk2 = await atRisk(first.get, 200);
    const hf0 = new Map(risk0.map((p) => [p.user.address + p.market.uniqueKey, p.healthFactor]));
    const changed = risk2.filter((p) => {
      const before = hf0.get(p.user.address + p.market.uniqueKey);
      return before !== undefined && before !== p.healthFactor;
    });
    assert.ok(changed.length > 0, 'health factors moved');
    // Still ordered by the new health factors.
    for (let i = 1; i < risk2.length; i++) assert.ok(risk2[i - 1]!.healthFactor <= risk2[i]!.healthFactor);

    // A restart at the same instant shows the same market.
    await first.service.close();
    open.splice(open.indexOf(first.service), 1);
    const second = await start(clock);
    await second.service.models.tickSimulation(clock.now());
    assert.deepEqual(await detail(second.get), t2);
  });
});

describe('a step of the sandbox', () => {
  test('behavior: its market states are computed over several turns of the event loop and applied in one: no answer between them sees part of the step', async () => {
    const clock = new ManualClock('2026-11-24T12:00:00.000Z');
    const { service, get } = await start(clock);
    await service.models.tickSimulation(clock.now());
    clock.advance(5000);
    const id = (await get('/markets/search?query=wETH&limit=1')).data[0].uniqueKey;
    // What an answer is built from, read in every turn of the event loop while the step runs.
    const served = () => {
      const model = service.models.get('live');
      return JSON.stringify([model.catalog.get(id, 0), model.asOf]);
    };
    const before = served();
    const seen: string[] = [];
    let running = true;
    const look = () => {
      if (!running) return;
      seen.push(served());
      setImmediate(look);
    };
    setImmediate(look);
    await service.models.tickSimulation(clock.now());
    running = false;
    const after = served();
    assert.notEqual(after, before, 'the step moved the market');
    assert.ok(seen.length >= 2, `the step yielded (${seen.length} turns)`);
    const states = new Set(seen);
    states.delete(before);
    states.delete(after);
    assert.deepEqual([...states], [], 'only the market before the step or after it');
  });
});

describe('a sandbox reloaded while the simulation runs', () => {
  test('behavior: the new model is priced at the last tick before it serves (no jump back to the snapshot)', async () => {
    const clock = new ManualClock('2026-11-24T15:00:00.000Z');
    const { service, get } = await start(clock);
    const id = (await get('/markets/search?query=wETH&limit=1')).data[0].uniqueKey;
    await service.models.tickSimulation(clock.now());
    const ticked = await get(`/markets/${id}`);
    // Another process writes the sandbox again (the store's dataset version moves on).
    const { seedStore } = await import('../../src/service.ts');
    await seedStore(service.store, 'default', 42, undefined, false, clock);
    assert.equal(await service.models.reloadIfChanged(), true);
    const reloaded = await get(`/markets/${id}`);
    assert.equal(reloaded.data.collateralPrice, ticked.data.collateralPrice);
    assert.equal(reloaded.data.supply, ticked.data.supply);
    assert.equal(reloaded.meta.asOf, ticked.meta.asOf);
  });
});

describe('liquidations in the running sandbox', () => {
  test('behavior: a step liquidates the positions below 1 and every model serves what is left, through the change feed', async () => {
    const clock = new ManualClock('2026-11-24T18:00:00.000Z');
    const { service, get } = await start(clock);
    const below = async () =>
      (await get('/risk/positions-at-risk?healthFactorThreshold=1&limit=500')).data as {
        user: { address: string };
        market: { uniqueKey: string };
      }[];
    await service.models.tickSimulation(clock.now());
    const due = await below();
    assert.ok(due.length > 0);
    const liquidatedBefore = (await service.store.historyCounts()).liquidations;
    await service.stepSimulation(clock.now());
    const info = (await service.store.datasetInfo())!;
    assert.ok(info.changeSeq > 0, 'positions written as changes');
    assert.ok((await service.store.historyCounts()).liquidations > liquidatedBefore, 'events in the history');
    // Served once the feed is read (the service reads it every 500 ms), without a reload.
    assert.equal(await service.models.reloadIfChanged(), false);
    assert.equal(service.models.get('live').changeSeq, info.changeSeq);
    const after = new Set((await below()).map((p) => `${p.market.uniqueKey}/${p.user.address}`));
    const gone = due.filter((p) => !after.has(`${p.market.uniqueKey}/${p.user.address}`));
    assert.ok(gone.length > 0, 'liquidated positions left the list');
    const health = (await service.app.inject({ url: '/api/v1/health' })).json();
    assert.ok(health.sources.some((x: { id: string }) => x.id === 'sandbox-liquidations'));

    // Ten minutes on: borrowers opened and closed positions in those minutes; the checkpoint
    // holds the last minute written, so a step at the same instant writes nothing again.
    const held = service.models.get('live').risk.size;
    clock.advance(10 * 60_000);
    await service.stepSimulation(clock.now());
    const activity = (await service.store.listSources()).find((x) => x.id === 'sandbox-activity');
    assert.ok(activity?.cursor?.endsWith(`:${Math.floor(clock.now() / 60_000)}`), activity?.cursor ?? 'none');
    await service.models.reloadIfChanged();
    assert.ok(service.models.get('live').risk.size > held, 'positions opened');
    const seq = (await service.store.datasetInfo())!.changeSeq;
    await service.stepSimulation(clock.now());
    const writtenAgain = (await service.store.datasetInfo())!.changeSeq - seq;
    // (only liquidations the new prices call for may follow)
    assert.ok(writtenAgain <= 500);
    assert.equal(
      (await service.store.listSources()).find((x) => x.id === 'sandbox-activity')?.cursor,
      activity?.cursor,
    );
  });
});

describe('the running sandbox when the store refuses its writes', () => {
  test('error: a failed liquidation or activity write shows on its own source in /health, nothing advances, the next step recovers', async () => {
    const clock = new ManualClock('2026-11-24T18:00:00.000Z');
    // A store of its own: the snapshot's positions below 1 are still there to liquidate.
    const { service } = await start(clock, embeddedSettings(tempDir('lrds-live-faults-')));
    const store = service.store;
    const sourceOf = async (id: string) => (await store.listSources()).find((x) => x.id === id);
    const write = store.applyPositionChanges.bind(store);
    let refuse: string | null = 'sandbox-liquidations';
    store.applyPositionChanges = async (source, changes, version) => {
      if (source === refuse) throw new Error(`disk full (${source})`);
      return write(source, changes, version);
    };
    await service.models.tickSimulation(clock.now());
    const seq0 = (await store.datasetInfo())!.changeSeq;
    await service.stepSimulation(clock.now());
    const liq = await sourceOf('sandbox-liquidations');
    assert.equal(liq?.consecutiveFailures, 1);
    assert.equal(liq?.lastError, 'disk full (sandbox-liquidations)');
    assert.equal((await store.datasetInfo())!.changeSeq, seq0, 'nothing written');

    // Back: the liquidations go through, and the activity starts from this minute.
    refuse = null;
    await service.stepSimulation(clock.now());
    assert.equal((await sourceOf('sandbox-liquidations'))?.consecutiveFailures, 0);
    assert.equal((await sourceOf('sandbox-liquidations'))?.lastError, null);
    assert.ok((await store.datasetInfo())!.changeSeq > seq0, 'liquidated');
    const cursor0 = (await sourceOf('sandbox-activity'))?.cursor;
    assert.ok(cursor0);

    // An hour later (a few dozen openings and closings) the activity's write fails: its own
    // checkpoint says so and its minute does not advance.
    refuse = 'sandbox-activity';
    clock.advance(60 * 60_000);
    await service.models.tickSimulation(clock.now());
    await service.stepSimulation(clock.now());
    const act = await sourceOf('sandbox-activity');
    assert.equal(act?.consecutiveFailures, 1);
    assert.equal(act?.lastError, 'disk full (sandbox-activity)');
    assert.equal(act?.cursor, cursor0);

    // Back: the minutes missed are written at the next step.
    refuse = null;
    clock.advance(60_000);
    await service.stepSimulation(clock.now());
    const back = await sourceOf('sandbox-activity');
    assert.equal(back?.consecutiveFailures, 0);
    assert.equal(back?.lastError, null);
    assert.ok(back?.cursor?.endsWith(`:${Math.floor(clock.now() / 60_000)}`));
  });
});

describe('the sandbox pricer', () => {
  test('behavior: at the snapshot instant every ratio is 1 and nothing moves (tokens priced differently in different markets keep their own prices)', async () => {
    const { buildReadModel, applyPrices } = await import('../../src/data/read-model.ts');
    const { generateSandbox, SANDBOX_AS_OF } = await import('../../src/ingest/sandbox/index.ts');
    const { sandboxPricer } = await import('../../src/ingest/sandbox/live.ts');
    const ds = generateSandbox({ profile: 'default' });
    const info = {
      kind: 'sandbox' as const,
      profile: 'default',
      seed: 42,
      refreshedAt: 0,
      marketCount: ds.markets.length,
      positionCount: ds.positionCount,
      version: 1,
      changeSeq: 0,
    };
    const model = buildReadModel(ds.markets, ds.positions(), info, SANDBOX_AS_OF * 1000);
    const before = JSON.stringify(model.catalog.views());
    const atRisk = model.risk.query({ healthFactorThreshold: 1, minBorrowUsd: 0, limit: 100_000 }).length;
    const changes = sandboxPricer(ds.markets, 42).pricesAt(SANDBOX_AS_OF * 1000);
    assert.ok(changes.every((c) => c.ratio === 1));
    applyPrices(model, changes, SANDBOX_AS_OF * 1000);
    assert.equal(JSON.stringify(model.catalog.views()), before);
    assert.equal(
      model.risk.query({ healthFactorThreshold: 1, minBorrowUsd: 0, limit: 100_000 }).length,
      atRisk,
    );
  });
});
