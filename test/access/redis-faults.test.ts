import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { after, afterEach, before, describe, test } from 'node:test';
import type { AdmissionResult } from '../../src/access/admission.ts';
import { RedisAdmission, type RedisAdmissionOptions } from '../../src/access/redis-admission.ts';
import { ManualClock } from '../../src/domain/clock.ts';
import { utcDay } from '../../src/domain/periods.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { tier } from '../contract/admission-contract.ts';
import { CuttableProxy, PrivateRedis, redisServerSkipReason, silentLogger, sleep } from '../redis-helpers.ts';

const skip = redisServerSkipReason();

async function memoryStore(): Promise<SqliteStore> {
  const store = new SqliteStore(':memory:');
  await store.migrate();
  return store;
}

/** Closed after each test, also when it fails (an open connection would keep the run alive). */
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

function track<T extends { close(): Promise<void> } | { disconnect(): void } | CuttableProxy>(x: T): T {
  if (x instanceof CuttableProxy) cleanups.push(() => x.cut());
  else if ('close' in x) cleanups.push(() => x.close());
  else cleanups.push(() => x.disconnect());
  return x;
}

async function open(options: Omit<RedisAdmissionOptions, 'logger'>): Promise<RedisAdmission> {
  // A generous timeout: a loaded test machine must not turn a slow reply into an outage.
  const adm = track(new RedisAdmission({ logger: silentLogger, commandTimeoutMs: 1000, ...options }));
  assert.equal(await adm.ready(3000), true, `Redis at ${options.url} not ready`);
  return adm;
}

async function until(what: string, cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await sleep(10);
  }
}

const request = (keyId: string, t: ReturnType<typeof tier>, nowMs: number) => ({
  keyId,
  tier: t,
  endpoint: 'GET /api/v1/markets',
  counted: true,
  nowMs,
});

describe('RedisAdmission with two instances and lost data', { skip: skip ?? false }, () => {
  let redis: PrivateRedis;
  before(async () => {
    redis = await PrivateRedis.start();
  });
  after(async () => {
    await redis?.stop();
  });

  test('behavior: two instances share one window: a burst split across both admits exactly the rate', async () => {
    const store = await memoryStore();
    const clock = new ManualClock();
    const prefix = `t${randomUUID()}:`;
    const a = await open({ url: redis.url, store, clock, prefix });
    const b = await open({ url: redis.url, store, clock, prefix });
    const t = tier(5, null, null);
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).admit(request('k', t, clock.now()))),
    );
    assert.equal(results.filter((r) => r.ok).length, 5);
    clock.advance(1000);
    const next = await Promise.all(
      Array.from({ length: 12 }, (_, i) => (i % 2 ? b : a).admit(request('k', t, clock.now()))),
    );
    assert.equal(next.filter((r) => r.ok).length, 5);
    await Promise.all([a.close(), b.close()]);
    await store.close();
  });

  test('behavior: 300 concurrent requests split across two instances against a quota of 100 admit exactly 100', async () => {
    const store = await memoryStore();
    const clock = new ManualClock();
    const prefix = `t${randomUUID()}:`;
    const a = await open({ url: redis.url, store, clock, prefix });
    const b = await open({ url: redis.url, store, clock, prefix });
    const t = tier(1000, 100, null);
    const results = await Promise.all(
      Array.from({ length: 300 }, (_, i) => (i % 2 ? a : b).admit(request('k', t, clock.now()))),
    );
    assert.equal(results.filter((r) => r.ok).length, 100);
    await Promise.all([a.close(), b.close()]);
    assert.deepEqual(await store.usageTotals('k', utcDay(clock.now())), { dayUsed: 300, monthUsed: 100 });
    await store.close();
  });

  test('behavior: after FLUSHALL the next request sees used = N + 1 (no quota regained)', async () => {
    const store = await memoryStore();
    const clock = new ManualClock();
    const adm = await open({ url: redis.url, store, clock, prefix: `t${randomUUID()}:` });
    const t = tier(1000, 10, null);
    for (let i = 0; i < 10; i++) assert.ok((await adm.admit(request('k', t, clock.now()))).ok);
    const r = track(redis.client());
    await r.flushall();
    const next = await adm.admit(request('k', t, clock.now()));
    assert.deepEqual(!next.ok && next.reason === 'DAILY_QUOTA' && next.used, 11);
    await adm.flush();
    await r.flushall();
    const again = await adm.admit(request('k', t, clock.now()));
    assert.deepEqual(!again.ok && again.reason === 'DAILY_QUOTA' && again.used, 12);
    r.disconnect();
    await adm.close();
    await store.close();
  });

  test('behavior: loss bound: when Redis loses its data only events buffered in other instances are regained', async () => {
    const store = await memoryStore();
    const clock = new ManualClock();
    const prefix = `t${randomUUID()}:`;
    // Neither flushes on its own: every count sits in its instance's buffer.
    const a = await open({ url: redis.url, store, clock, prefix, flushIntervalMs: 3_600_000 });
    const b = await open({ url: redis.url, store, clock, prefix, flushIntervalMs: 3_600_000 });
    const t = tier(1000, null, null);
    for (let i = 0; i < 5; i++) await a.admit(request('k', t, clock.now()));
    for (let i = 0; i < 7; i++) await b.admit(request('k', t, clock.now()));
    assert.equal((await a.status('k', t, clock.now())).dayUsed, 12);
    const r = track(redis.client());
    await r.flushall();
    // A rebuilds from the store (0) and its own buffer (5): B's 7 buffered events are regained.
    assert.equal((await a.status('k', t, clock.now())).dayUsed, 5);
    await Promise.all([a.flush(), b.flush()]);
    await r.flushall();
    // Once flushed, nothing is regained.
    assert.equal((await b.status('k', t, clock.now())).dayUsed, 12);
    r.disconnect();
    await Promise.all([a.close(), b.close()]);
    await store.close();
  });

  test('behavior: one instance cut off counts locally, and its counts are added to Redis when it is back', async () => {
    const store = await memoryStore();
    const clock = new ManualClock();
    const prefix = `t${randomUUID()}:`;
    const proxy = track(await CuttableProxy.start(redis.port));
    const a = await open({ url: proxy.url, store, clock, prefix });
    // B's counts stay in its buffer, so the store alone could not restore them: only adding
    // A's local counts to what Redis holds gives the exact total.
    const b = await open({ url: redis.url, store, clock, prefix, flushIntervalMs: 3_600_000 });
    const t = tier(1000, null, null);
    const admitN = async (adm: RedisAdmission, n: number) => {
      for (let i = 0; i < n; i++) assert.ok((await adm.admit(request('k', t, clock.now()))).ok);
    };
    await admitN(a, 3);
    await admitN(b, 4);
    await proxy.cut();
    await until('A sees Redis down', () => a.state() === 'down');
    await admitN(a, 5);
    await admitN(b, 2);
    assert.equal(b.state(), 'up');
    await proxy.heal();
    await until('A is back on Redis', () => a.state() === 'up');
    assert.equal((await b.status('k', t, clock.now())).dayUsed, 14);
    assert.equal((await a.status('k', t, clock.now())).dayUsed, 14);
    await Promise.all([a.close(), b.close()]);
    await proxy.cut();
    assert.equal((await store.usageTotals('k', utcDay(clock.now()))).dayUsed, 14);
    await store.close();
  });

  test('behavior: a command timeout serves locally; the late reply is counted at most once more, never less', async () => {
    const store = await memoryStore();
    const clock = new ManualClock();
    const adm = await open({
      url: redis.url,
      store,
      clock,
      prefix: `t${randomUUID()}:`,
      commandTimeoutMs: 100,
    });
    const t = tier(1000, null, null);
    for (let i = 0; i < 5; i++) await adm.admit(request('k', t, clock.now()));
    const r = track(redis.client());
    await r.call('CLIENT', 'PAUSE', '400', 'ALL');
    const started = Date.now();
    const during: AdmissionResult[] = [];
    for (let i = 0; i < 10; i++) during.push(await adm.admit(request('k', t, clock.now())));
    assert.ok(Date.now() - started < 300, 'only the first request waits for the timeout');
    assert.ok(during.every((x) => x.ok));
    await until('Redis serves again', () => adm.state() === 'up');
    const used = (await adm.status('k', t, clock.now())).dayUsed;
    assert.ok(used === 15 || used === 16, `dayUsed ${used}`);
    r.disconnect();
    await adm.close();
    assert.equal((await store.usageTotals('k', utcDay(clock.now()))).dayUsed, 15);
    await store.close();
  });

  test('behavior: redis-server killed mid-load and restarted: never a throw, never unlimited, nothing regained', async () => {
    const store = await memoryStore();
    const instances = 2;
    const adm = await open({ url: redis.url, store, instances, prefix: `t${randomUUID()}:` });
    const share = Math.ceil(40 / instances);
    // k0 and k1 run out of daily quota during the outage (their quota is set at the kill to what
    // they used so far + 5); k2 never does: its local rate is what binds.
    const tiers = new Map([
      ['k0', tier(40, 100_000, null)],
      ['k1', tier(40, 100_000, null)],
      ['k2', tier(40, 100_000, null)],
    ]);
    const keys = [...tiers.keys()];
    const log = new Map<string, { nowMs: number; r: AdmissionResult }[]>(keys.map((k) => [k, []]));
    const lastUsed = new Map<string, number>(keys.map((k) => [k, 0]));
    let sawDown = false;

    for (let i = 0; i < 2000; i++) {
      if (i === 600) {
        await redis.kill();
        for (const k of ['k0', 'k1']) {
          tiers.set(k, tier(40, log.get(k)!.filter((e) => e.r.ok).length + 5, null));
        }
      }
      if (i === 1300) await redis.restart();
      const key = keys[i % keys.length]!;
      const nowMs = Date.now();
      const r = await adm.admit(request(key, tiers.get(key)!, nowMs));
      log.get(key)!.push({ nowMs, r });
      if (adm.state() === 'down') sawDown = true;
      if (i % 50 === 0) {
        for (const k of keys) {
          const used = (await adm.status(k, tiers.get(k)!, Date.now())).dayUsed;
          assert.ok(used >= lastUsed.get(k)!, `${k}: dayUsed went from ${lastUsed.get(k)} to ${used}`);
          lastUsed.set(k, used);
        }
      }
      await sleep(1);
    }
    assert.ok(sawDown, 'the outage was noticed');
    await until('Redis serves again', () => adm.state() === 'up');

    const day = utcDay(Date.now());
    const expected = new Map<string, { dayUsed: number; monthUsed: number }>();
    for (const k of keys) {
      const entries = log.get(k)!;
      const counted = entries.filter((e) => e.r.ok || e.r.reason !== 'RATE_LIMITED');
      const admitted = entries.filter((e) => e.r.ok);
      // Never unlimited: the quota holds across the outage, exactly.
      if (k !== 'k2') {
        assert.equal(admitted.length, tiers.get(k)!.dailyQuota, `${k}: admitted`);
        assert.ok(
          entries.some((e) => !e.r.ok && e.r.reason === 'DAILY_QUOTA' && e.r.rate.limit === share),
          `${k}: refused by quota during the outage`,
        );
      }
      for (const e of entries) assert.ok(e.r.rate.limit === 40 || e.r.rate.limit === share);
      // The local fallback admits at most the instance's share in any 1,000 ms.
      assert.ok(
        entries.some((e) => e.r.rate.limit === share),
        `${k}: some requests were served locally`,
      );
      const local = admitted.filter((e) => e.r.rate.limit === share).map((e) => e.nowMs);
      for (let i = share; i < local.length; i++) {
        assert.ok(local[i]! - local[i - share]! >= 1000, `${k}: more than ${share} local admits in 1 s`);
      }
      // Counted requests see used grow by one each time, through the outage and the restart.
      // A command in flight when Redis was killed may have been applied there too and then counted
      // locally: Redis may count one more (at least once, never less); the store counts exactly.
      let n = 0;
      for (const e of counted) {
        n++;
        if (!e.r.ok && e.r.reason === 'DAILY_QUOTA')
          assert.ok(e.r.used === n || e.r.used === n + 1, `${k}: used ${e.r.used} of counted request ${n}`);
      }
      assert.ok(
        entries.slice(-5).every((e) => e.r.rate.limit === 40),
        `${k}: back on Redis at the end`,
      );
      const s = await adm.status(k, tiers.get(k)!, Date.now());
      assert.ok(
        s.dayUsed === counted.length || s.dayUsed === counted.length + 1,
        `${k}: Redis counts after reconciliation: ${s.dayUsed} for ${counted.length}`,
      );
      expected.set(k, { dayUsed: counted.length, monthUsed: admitted.length });
    }
    await adm.close();
    for (const k of keys) assert.deepEqual(await store.usageTotals(k, day), expected.get(k), `${k}: store`);
    await store.close();
  });
});

describe('RedisAdmission with Redis unreachable from the start', () => {
  test('behavior: serves at once from the local fallback at rate / instances, quotas enforced, usage stored', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => {
        const addr = s.address();
        s.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0));
      });
    });
    const store = await memoryStore();
    const clock = new ManualClock();
    const adm = track(
      new RedisAdmission({
        url: `redis://127.0.0.1:${port}`,
        store,
        clock,
        instances: 2,
        logger: silentLogger,
      }),
    );
    assert.equal(adm.state(), 'down');
    const t = tier(5, 10, null);
    const started = Date.now();
    const results: AdmissionResult[] = [];
    for (let second = 0; second < 5; second++) {
      for (let i = 0; i < 6; i++) results.push(await adm.admit(request('k', t, clock.now())));
      clock.advance(1000);
    }
    assert.ok(Date.now() - started < 1000, 'no request waits for Redis');
    // 3 per second (ceil(5 / 2)), until the daily quota of 10.
    assert.deepEqual(
      results.map((r) => (r.ok ? 'ok' : r.reason)),
      [
        ...['ok', 'ok', 'ok', 'RATE_LIMITED', 'RATE_LIMITED', 'RATE_LIMITED'],
        ...['ok', 'ok', 'ok', 'RATE_LIMITED', 'RATE_LIMITED', 'RATE_LIMITED'],
        ...['ok', 'ok', 'ok', 'RATE_LIMITED', 'RATE_LIMITED', 'RATE_LIMITED'],
        // quota refusals take no slot (D7): once the quota is used up, every request is a quota 429
        ...['ok', 'DAILY_QUOTA', 'DAILY_QUOTA', 'DAILY_QUOTA', 'DAILY_QUOTA', 'DAILY_QUOTA'],
        ...['DAILY_QUOTA', 'DAILY_QUOTA', 'DAILY_QUOTA', 'DAILY_QUOTA', 'DAILY_QUOTA', 'DAILY_QUOTA'],
      ],
    );
    assert.equal(results[0]!.rate.limit, 3);
    const s = await adm.status('k', t, clock.now());
    assert.deepEqual([s.dayUsed, s.monthUsed], [21, 10]);
    await adm.close();
    assert.deepEqual(await store.usageTotals('k', utcDay(clock.now())), { dayUsed: 21, monthUsed: 10 });
    await store.close();
  });
});
