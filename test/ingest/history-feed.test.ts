import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  HISTORY_SOURCE_ID,
  historyScope,
  SandboxHistoryFeed,
  sandboxSimulation,
  writeSandboxHistory,
} from '../../src/ingest/sandbox/history.ts';
import { DEFAULT_SEED } from '../../src/ingest/sandbox/index.ts';
import { DAY_MS, HOUR_MS } from '../../src/ingest/sandbox/simulation/noise.ts';
import { createService, type Service } from '../../src/service.ts';
import type { HistoryStore } from '../../src/store/ports/history.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { ManualClock } from '../clock.ts';
import { embeddedSettings, QUIET, tempDir } from '../helpers.ts';

/**
 * The sandbox history in the store: written by the seed (daily snapshots, liquidations), then
 * in the background (hourly snapshots, prices), then hour by hour; it survives restarts.
 */

const dir = tempDir('lrds-history-');
const stores: SqliteStore[] = [];
after(async () => {
  for (const s of stores) await s.close();
});
/** The feed writes the history of the dataset the store holds: a sandbox dataset record (no markets needed). */
async function holdSandbox(store: SqliteStore, seed: number): Promise<void> {
  await store.replaceDataset({
    kind: 'sandbox',
    profile: 'default',
    seed,
    markets: [],
    positions: [],
    positionCount: 0,
  });
}

async function openStore(name: string, seed = DEFAULT_SEED): Promise<SqliteStore> {
  const store = new SqliteStore(join(dir, `${name}.db`));
  await store.migrate();
  stores.push(store);
  await holdSandbox(store, seed);
  return store;
}

const sim = sandboxSimulation('default', DEFAULT_SEED);
// Before the snapshot instant: the history's own borrowers are liquidated then (after it, the served positions are, by the live liquidator).
const NOW = Date.parse('2026-10-22T12:34:56Z');
const HOUR = Math.floor(NOW / HOUR_MS) * HOUR_MS;
const DAYS = 2;

describe('sandbox history feed', () => {
  test('behavior: seed, backfill, then the hours as they end; a restart goes on without duplicates', async () => {
    const store = await openStore('feed');
    let backfills = 0;
    const feed = new SandboxHistoryFeed(store, sim, { days: DAYS, onBackfilled: () => backfills++ });
    const base = await feed.advance(NOW, { baseOnly: true });
    assert.equal(backfills, 0);
    const markets = sim.dataset.markets.length;
    // Daily rows for every market with money, hourly ones for the large markets (historyScope).
    const scope = historyScope(sim);
    const daily = sim.dataset.markets.filter((_, i) => scope.daily(i)).length;
    const hourly = sim.dataset.markets.filter((_, i) => scope.hourly(i)).length;
    assert.ok(hourly > 500 && hourly < daily && daily < markets, `${hourly} hourly, ${daily} daily`);
    // whole days in [HOUR - 2 days, HOUR): 00:00 of the two days after the start hour
    assert.equal(base.dailySnapshots, daily * DAYS);
    assert.equal(base.hourlySnapshots, 0);
    let expectedLiquidations = 0;
    for (let i = 0; i < markets; i++)
      expectedLiquidations += sim.history.liquidations(i, HOUR - DAYS * DAY_MS, HOUR).length;
    assert.equal(base.liquidations, expectedLiquidations);
    assert.ok(expectedLiquidations > 0);

    const backfill = await feed.advance(NOW);
    assert.equal(backfills, 1, 'told once the hourly backfill is written');
    assert.equal(backfill.hourlySnapshots, hourly * DAYS * 24);
    assert.equal(backfill.assetPrices, sim.basis.tokens.length * DAYS * 24);
    assert.equal(backfill.liquidations, 0);
    // Every feed posts at least one round a heartbeat (a day at most), bar outages.
    assert.ok(backfill.oracleRounds >= scope.feeds.length, `${backfill.oracleRounds} rounds`);
    assert.ok(scope.feeds.length > 100 && scope.feeds.length < sim.feeds().length);
    const oracle = scope.feeds[0]!;
    const stored = await store.oracleRounds(oracle.chainId, oracle.address, HOUR - DAYS * DAY_MS, HOUR, 1000);
    assert.ok(stored.length > 0);
    const counts = await store.historyCounts();
    assert.equal(counts.liquidations, expectedLiquidations);

    // Nothing to do within the same hour.
    const idle = await feed.advance(NOW + 60_000);
    assert.equal(backfills, 1);
    assert.deepEqual(idle, {
      dailySnapshots: 0,
      hourlySnapshots: 0,
      assetPrices: 0,
      liquidations: 0,
      oracleRounds: 0,
    });

    // A restart two hours later: a new feed on the same store writes the two hours that ended.
    const later = NOW + 2 * HOUR_MS;
    const again = await new SandboxHistoryFeed(store, sim, { days: DAYS }).advance(later);
    assert.equal(again.hourlySnapshots, hourly * 2);
    assert.equal(again.assetPrices, sim.basis.tokens.length * 2);
    const after2 = await store.historyCounts();
    assert.equal(after2.hourlySnapshots, counts.hourlySnapshots + hourly * 2);

    const source = (await store.listSources()).find((s) => s.id === HISTORY_SOURCE_ID);
    assert.ok(source);
    assert.equal(source.refreshedAt, later);
    assert.equal(source.consecutiveFailures, 0);
    const cursor = JSON.parse(source.cursor ?? '{}');
    assert.equal(cursor.untilMs, HOUR + 2 * HOUR_MS);
    assert.equal(cursor.backfilled, true);
  });

  test('behavior: in the background every write is of at most 250 rows, and together they are what one write of each batch holds', async () => {
    // A store that records the rows of each write.
    const writes = (): { sizes: number[]; store: HistoryStore } => {
      const sizes: number[] = [];
      const take = async (rows: readonly unknown[]) => {
        sizes.push(rows.length);
        return rows.length;
      };
      const store = {
        appendOracleRounds: take,
        appendMarketSnapshots: take,
        appendLiquidations: take,
        appendAssetPrices: take,
      } as unknown as HistoryStore;
      return { sizes, store };
    };
    const window = { fromMs: HOUR - 6 * HOUR_MS, toMs: HOUR };
    const plan = { daily: window, hourly: window, prices: window, liquidations: window, rounds: window };
    const fast = writes();
    const gentle = writes();
    const inFast = await writeSandboxHistory(fast.store, sim, plan, undefined, undefined, 'fast');
    const inGentle = await writeSandboxHistory(gentle.store, sim, plan, undefined, undefined, 'gentle');
    assert.deepEqual(inGentle, inFast);
    assert.ok(Math.max(...fast.sizes) > 250, 'a batch holds more rows than a background write');
    assert.ok(Math.max(...gentle.sizes) <= 250);
    const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);
    assert.equal(sum(gentle.sizes), sum(fast.sizes));
  });

  test("behavior: stored prices and snapshots are the simulation's, at the prices the server serves", async () => {
    const store = await openStore('consistency');
    await new SandboxHistoryFeed(store, sim, { days: 1 }).advance(NOW);
    const t = sim.basis.tokens[3]!;
    const rows = await store.assetPrices(t.chainId, t.token, HOUR - 5 * HOUR_MS, HOUR, 10);
    assert.equal(rows.length, 5);
    for (const r of rows) {
      const expected = t.base * sim.basis.ratioAt(t.symbol, r.at);
      assert.ok(Math.abs(r.priceUsd - expected) <= 1e-7 * expected, `${r.priceUsd} vs ${expected}`);
    }
    const scope = historyScope(sim);
    const big = sim.dataset.markets.findIndex((_, i) => scope.hourly(i));
    const m = sim.dataset.markets[big]!;
    const snaps = await store.marketSnapshots(m.uniqueKey, 'hour', HOUR - 3 * HOUR_MS, HOUR, 10);
    assert.equal(snaps.length, 3);
    // A small market has daily rows only; an empty one none.
    const small = sim.dataset.markets.findIndex((_, i) => scope.daily(i) && !scope.hourly(i));
    const key = sim.dataset.markets[small]!.uniqueKey;
    assert.equal((await store.marketSnapshots(key, 'hour', 0, HOUR, 10)).length, 0);
    assert.equal((await store.marketSnapshots(key, 'day', 0, HOUR, 10)).length, 1);
    const empty = sim.dataset.markets.findIndex((_, i) => !scope.daily(i));
    assert.equal(
      (await store.marketSnapshots(sim.dataset.markets[empty]!.uniqueKey, 'day', 0, HOUR, 10)).length,
      0,
    );
    assert.deepEqual(
      snaps,
      sim.history.snapshots(
        big,
        snaps.map((s) => s.at),
        'hour',
      ),
    );
  });

  test('behavior: another seed starts the history over; retention deletes what is older', async () => {
    const store = await openStore('reseed');
    await new SandboxHistoryFeed(store, sim, { days: 1 }).advance(NOW, { baseOnly: true });
    const other = sandboxSimulation('default', 7);
    // A feed of another dataset than the store's writes and wipes nothing.
    const before = await store.historyCounts();
    await new SandboxHistoryFeed(store, other, { days: 1 }).advance(NOW, { baseOnly: true });
    assert.deepEqual(await store.historyCounts(), before);
    // Once the store holds the other seed, its feed starts the history over.
    await holdSandbox(store, 7);
    await new SandboxHistoryFeed(store, other, { days: 1 }).advance(NOW, { baseOnly: true });
    const otherScope = historyScope(other);
    assert.equal(
      (await store.historyCounts()).dailySnapshots,
      other.dataset.markets.filter((_, i) => otherScope.daily(i)).length,
    );
    const big = other.dataset.markets.findIndex((_, i) => otherScope.hourly(i));
    const m = other.dataset.markets[big]!;
    const [stored] = await store.marketSnapshots(m.uniqueKey, 'day', 0, NOW, 1);
    assert.ok(stored);
    assert.deepEqual(stored, other.history.snapshots(big, [stored.at], 'day')[0]);

    const kept = new SandboxHistoryFeed(store, other, { days: 1, retentionDays: 1 });
    await kept.advance(NOW + 3 * DAY_MS);
    const oldest = await store.marketSnapshots(m.uniqueKey, 'hour', 0, NOW + 4 * DAY_MS, 1);
    assert.ok(oldest[0]);
    assert.ok(oldest[0].at >= NOW + 2 * DAY_MS, new Date(oldest[0].at).toISOString());
  });

  test('error: a step the store refuses moves no checkpoint, shows in the source, and the next step redoes it', async () => {
    const store = await openStore('failing');
    const feed = new SandboxHistoryFeed(store, sim, { days: 1 });
    const append = store.appendLiquidations.bind(store);
    store.appendLiquidations = async () => {
      throw new Error('disk full');
    };
    await assert.rejects(feed.advance(NOW, { baseOnly: true }), /disk full/);
    const failed = (await store.listSources()).find((s) => s.id === HISTORY_SOURCE_ID);
    assert.ok(failed);
    assert.equal(failed.consecutiveFailures, 1);
    assert.equal(failed.lastError, 'disk full');
    assert.equal(failed.cursor, null);
    store.appendLiquidations = append;
    const redone = await feed.advance(NOW, { baseOnly: true });
    assert.ok(redone.liquidations > 0);
    // Rows written before the failure are kept, and not written twice.
    const scope = historyScope(sim);
    assert.equal(
      (await store.historyCounts()).dailySnapshots,
      sim.dataset.markets.filter((_, i) => scope.daily(i)).length,
    );
    const ok = (await store.listSources()).find((s) => s.id === HISTORY_SOURCE_ID);
    assert.equal(ok?.consecutiveFailures, 0);
    assert.equal(ok?.lastError, null);
    assert.ok(ok?.cursor);
  });

  test('behavior: a service closed mid-backfill ends its history worker at once; a restart completes the backfill without duplicates', async () => {
    const settings = {
      ...embeddedSettings(tempDir('lrds-history-close-')),
      sandboxHistoryDays: DAYS,
      sandboxHourlyHistoryDays: DAYS,
    };
    const clock = new ManualClock(NOW);
    const cursorOf = async (service: Service) => {
      const text = (await service.store.listSources()).find((x) => x.id === HISTORY_SOURCE_ID)?.cursor;
      return text ? (JSON.parse(text) as { backfilled: boolean; untilMs: number }) : null;
    };
    const first = await createService(settings, { clock, server: QUIET });
    let closed = false;
    try {
      // The history job starts its worker once the app is ready; it is caught mid-backfill (the
      // seed wrote the daily rows, the worker has begun the hourly ones).
      await first.app.ready();
      const deadline = performance.now() + 120_000;
      while ((await first.store.historyCounts()).hourlySnapshots === 0) {
        assert.ok(performance.now() < deadline, 'the hourly backfill never started');
        await sleep(10);
      }
      assert.equal((await cursorOf(first))?.backfilled, false);
      const started = performance.now();
      await first.close();
      closed = true;
      // Not a speed figure: the bound the server itself gives a shutdown before it exits with
      // code 1; waiting for the backfill to end (what close() did) takes longer on a loaded machine.
      const took = performance.now() - started;
      assert.ok(took < 10_000, `close() took ${Math.round(took)} ms`);
    } finally {
      if (!closed) await first.close();
    }
    const second = await createService(settings, { clock, server: QUIET });
    try {
      // Closed before the backfill ended: its checkpoint says so (close() did not wait it out).
      assert.equal((await cursorOf(second))?.backfilled, false);
      await second.app.ready();
      const deadline = performance.now() + 300_000;
      while (!(await cursorOf(second))?.backfilled) {
        assert.ok(performance.now() < deadline, 'the backfill was not completed after the restart');
        await sleep(20);
      }
      // Every hourly row once: the rows of the interrupted run were not written twice.
      const scope = historyScope(sim);
      const hourly = sim.dataset.markets.filter((_, i) => scope.hourly(i)).length;
      const counts = await second.store.historyCounts();
      assert.equal(counts.hourlySnapshots, hourly * DAYS * 24);
      assert.equal(counts.assetPrices, sim.basis.tokens.length * DAYS * 24);
      assert.equal((await cursorOf(second))?.untilMs, HOUR);
    } finally {
      await second.close();
    }
  });

  test('behavior: a service on an empty store seeds the dataset, writes the history after start and lists its source in /health', async () => {
    const clock = new ManualClock(NOW);
    const service = await createService(
      { ...embeddedSettings(tempDir('lrds-history-svc-')), sandboxHistoryDays: 1 },
      { clock, server: QUIET },
    );
    try {
      // The seed writes the dataset; the history follows in the background once the app is ready
      // (as when it listens).
      await service.app.ready();
      const written = async () =>
        (await service.store.listSources()).some((x) => x.id === HISTORY_SOURCE_ID && x.cursor !== null);
      for (let i = 0; i < 6000 && !(await written()); i++)
        await new Promise((resolve) => setTimeout(resolve, 20));
      const counts = await service.store.historyCounts();
      const scope = historyScope(sim);
      assert.equal(counts.dailySnapshots, sim.dataset.markets.filter((_, i) => scope.daily(i)).length);
      const health = await service.app.inject({ url: '/api/v1/health' });
      const sources = health.json().sources as { id: string }[];
      assert.ok(
        sources.some((s) => s.id === HISTORY_SOURCE_ID),
        JSON.stringify(sources),
      );
    } finally {
      await service.close();
    }
  });
});
