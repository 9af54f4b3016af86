import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { createService } from '../src/service.ts';
import { openStore } from '../src/store/open.ts';
import { ManualClock } from './clock.ts';
import { embeddedSettings, makeMarket, makePosition, QUIET, seedOneMarket, tempDir } from './helpers.ts';
import { sleep } from './redis-helpers.ts';

test('behavior: a backend warning after start-up is logged by the app logger', async () => {
  const dataDir = tempDir('lrds-service-');
  // A one-market dataset, so the service does not seed the sandbox.
  const seeded = await openStore({ dataDir, databaseUrl: null });
  await seedOneMarket(seeded);
  await seeded.close();
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      lines.push(JSON.parse(String(chunk)));
      callback();
    },
  });
  const service = await createService(embeddedSettings(dataDir), {
    logger: { level: 'warn', stream },
    server: QUIET,
  });
  try {
    const account = await service.keys.ensureAccount('acme');
    const { key } = await service.keys.create({ accountId: account.id, tier: 'pro', mode: 'live' });
    const get = () =>
      service.app.inject({ url: '/api/v1/markets', headers: { authorization: `Bearer ${key}` } });
    assert.equal((await get()).statusCode, 200);
    // The store stops taking writes: counts wait in memory, and the backend says so.
    service.store.recordUsage = () => Promise.reject(new Error('disk full'));
    assert.equal((await get()).statusCode, 200);
    const end = Date.now() + 2000;
    const warned = () =>
      lines.find((l) => l.msg === 'usage counts kept in memory until the store takes writes again');
    while (!warned() && Date.now() < end) await sleep(20);
    assert.ok(warned(), `app log: ${JSON.stringify(lines)}`);
    assert.equal(warned()!.level, 40);
  } finally {
    delete (service.store as unknown as Record<string, unknown>).recordUsage; // the prototype's again
    await service.close();
  }
});

test('behavior: a dataset written by another process is served without a restart', async () => {
  const dataDir = tempDir('lrds-reload-');
  const seeded = await openStore({ dataDir, databaseUrl: null });
  await seedOneMarket(seeded);
  const service = await createService(embeddedSettings(dataDir));
  try {
    // Health may shed with 503 while the test-key sandbox is built (about a second after start).
    const markets = async () => {
      const res = await service.app.inject({ url: '/api/v1/health' });
      return res.statusCode === 200 ? (res.json().datasets[0].markets as number) : null;
    };
    const first = performance.now() + 10_000;
    let count = await markets();
    while (count === null && performance.now() < first) {
      await sleep(50);
      count = await markets();
    }
    assert.equal(count, 1);
    // Another process (here: another connection to the same file) replaces the dataset.
    const a = makeMarket();
    const b = makeMarket();
    await seeded.replaceDataset({
      kind: 'live',
      profile: 'test',
      seed: null,
      markets: [a, b],
      positions: [makePosition(a)],
      positionCount: 1,
    });
    const deadline = performance.now() + 10_000;
    while ((await markets()) !== 2) {
      assert.ok(performance.now() < deadline, 'the new dataset was not picked up');
      await sleep(50);
    }
  } finally {
    await service.close();
    await seeded.close();
  }
});

test('behavior: ratings are computed at start-up, for a replaced dataset and daily at 00:00 UTC, and their changes recorded', async () => {
  const dataDir = tempDir('lrds-ratings-');
  const seeded = await openStore({ dataDir, databaseUrl: null });
  await seedOneMarket(seeded);
  const clock = new ManualClock('2026-11-22T12:00:00Z');
  const service = await createService(embeddedSettings(dataDir), { clock, server: QUIET });
  try {
    const account = await service.keys.ensureAccount('acme');
    const { key } = await service.keys.create({ accountId: account.id, tier: 'pro', mode: 'live' });
    const ratings = async () =>
      (
        await service.app.inject({
          url: '/api/v1/ratings/markets',
          headers: { authorization: `Bearer ${key}` },
        })
      ).json();
    // the start-up run (begun once the app is ready) finds nothing due, or is joined: one run
    await service.ratings.runDue();
    const first = await ratings();
    assert.equal(first.meta.total, 1);
    assert.equal(first.data[0].ratedAt, '2026-11-22T12:00:00.000Z');
    const recorded = await service.store.latestRatingChanges('market', 10);
    assert.deepEqual(
      recorded.map((r) => [r.subject, r.at, r.score]),
      [[first.data[0].marketId, Date.parse('2026-11-22T12:00:00Z'), first.data[0].score]],
    );
    // another process replaces the dataset: the reloaded model is rated when first seen
    const a = makeMarket();
    const b = makeMarket();
    await seeded.replaceDataset({
      kind: 'live',
      profile: 'test',
      seed: null,
      markets: [a, b],
      positions: [makePosition(a)],
      positionCount: 1,
    });
    assert.equal(await service.models.reloadIfChanged(), true);
    assert.equal(await service.ratings.runDue(), 1);
    assert.equal((await ratings()).meta.total, 2);
    // not again the same day; again from 00:00 UTC
    assert.equal(await service.ratings.runDue(), 0);
    clock.set('2026-11-23T00:00:00Z');
    assert.equal(await service.ratings.runDue(), 1);
    assert.equal((await ratings()).data[0].ratedAt, '2026-11-23T00:00:00.000Z');
  } finally {
    await service.close();
    await seeded.close();
  }
});

test('behavior: close() writes the usage counts still waiting before it waits for a slow job', async () => {
  const dataDir = tempDir('lrds-close-');
  // A one-market dataset, so the service does not seed the sandbox.
  const seeded = await openStore({ dataDir, databaseUrl: null });
  await seedOneMarket(seeded);
  await seeded.close();
  const service = await createService(embeddedSettings(dataDir), { server: QUIET });
  // A job whose run does not heed its signal: it ends when the test says.
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let slowEnded = false;
  service.jobs.add({
    name: 'slow',
    everyMs: 3_600_000,
    run: async () => {
      await released;
      slowEnded = true;
    },
  });
  const account = await service.keys.ensureAccount('acme');
  const { key, record } = await service.keys.create({ accountId: account.id, tier: 'pro', mode: 'live' });
  const day = new Date().toISOString().slice(0, 10);
  // When the admission's close() ended: the request's count in the store, and whether the slow
  // job had ended then.
  let flushed: { dayUsed: number; slowEnded: boolean } | null = null;
  const close = service.admission.close.bind(service.admission);
  service.admission.close = async () => {
    await close();
    flushed = { dayUsed: (await service.store.usageTotals(record.id, day)).dayUsed, slowEnded };
  };
  let closing: Promise<void> | null = null;
  try {
    // The store refuses writes for a moment: the request's count waits in memory.
    service.store.recordUsage = () => Promise.reject(new Error('disk full'));
    const res = await service.app.inject({
      url: '/api/v1/markets',
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(res.statusCode, 200);
    delete (service.store as unknown as Record<string, unknown>).recordUsage; // the prototype's again
    closing = service.close();
    const end = performance.now() + 30_000;
    while (!flushed && performance.now() < end) await sleep(10);
    assert.deepEqual(flushed, { dayUsed: 1, slowEnded: false }, 'counted while the slow job still ran');
  } finally {
    release();
    await (closing ?? service.close());
  }
});
