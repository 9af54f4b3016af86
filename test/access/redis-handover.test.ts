import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, afterEach, before, describe, test } from 'node:test';
import type { AdmissionResult } from '../../src/access/admission.ts';
import { RedisAdmission, type RedisAdmissionOptions } from '../../src/access/redis-admission.ts';
import { utcDay } from '../../src/domain/periods.ts';
import type { ReservedUsage, UsageReservation } from '../../src/domain/records/usage.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/types.ts';
import { ManualClock } from '../clock.ts';
import { tier } from '../contract/admission-contract.ts';
import { CuttableProxy, PrivateRedis, redisServerSkipReason, silentLogger, sleep } from '../redis-helpers.ts';

/**
 * The hand-over between the two deciders of quotas: Redis, and the store (Store.reserveUsage)
 * while an instance serves without Redis. Two instances (INSTANCES=2) on a private redis-server,
 * each behind a proxy that cuts it off; an injected clock, so every step happens in a chosen
 * order: one instance back on Redis while the other still decides in the store, Redis restarted
 * empty meanwhile, and instance buffers that have not reached the store yet.
 */

const skip = redisServerSkipReason();

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function memoryStore(): Promise<SqliteStore> {
  const store = new SqliteStore(':memory:');
  await store.migrate();
  cleanups.push(() => store.close());
  return store;
}

async function proxy(port: number): Promise<CuttableProxy> {
  const p = await CuttableProxy.start(port);
  cleanups.push(() => p.cut());
  return p;
}

async function open(options: Omit<RedisAdmissionOptions, 'logger'>): Promise<RedisAdmission> {
  const adm = new RedisAdmission({ logger: silentLogger, commandTimeoutMs: 1000, ...options });
  cleanups.push(() => adm.close());
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

const outcome = (r: AdmissionResult) => (r.ok ? 'ok' : r.reason);

describe('RedisAdmission: quotas handed between Redis and the store', { skip: skip ?? false }, () => {
  let redis: PrivateRedis;
  before(async () => {
    redis = await PrivateRedis.start();
  });
  after(async () => {
    await redis?.stop();
  });

  /** Two instances, each behind its own proxy, sharing a store, a prefix and a clock. */
  async function pair(flushIntervalMs?: number) {
    const store = await memoryStore();
    const clock = new ManualClock();
    const prefix = `t${randomUUID()}:`;
    const pa = await proxy(redis.port);
    const pb = await proxy(redis.port);
    const common = { store, clock, prefix, instances: 2 };
    // A's counts reach the store only when it is told to flush (or reserves there, which
    // flushes first): what another instance's store decision cannot see yet, deterministically.
    const a = await open({ url: pa.url, ...common, ...(flushIntervalMs ? { flushIntervalMs } : {}) });
    const b = await open({ url: pb.url, ...common });
    const calls: { who: string; r: AdmissionResult }[] = [];
    const admit = async (who: 'a' | 'b', t: ReturnType<typeof tier>, n = 1) => {
      for (let i = 0; i < n; i++) {
        const r = await (who === 'a' ? a : b).admit({
          keyId: 'k',
          tier: t,
          endpoint: 'GET /api/v1/markets',
          counted: true,
          nowMs: clock.now(),
        });
        calls.push({ who, r });
      }
    };
    /** Both cut off from Redis, and past the 1.5 s before either admits on its own. */
    const outage = async () => {
      await Promise.all([pa.cut(), pb.cut()]);
      await until('both serve locally', () => a.state() === 'down' && b.state() === 'down');
      clock.advance(1600);
    };
    return { store, clock, prefix, pa, pb, a, b, calls, admit, outage };
  }

  test('behavior: one instance back on Redis while the other still decides in the store: the daily quota is never passed', async () => {
    const { store, clock, pa, pb, a, b, calls, admit, outage } = await pair(3_600_000);
    const t = tier(1000, 10, null);
    await admit('a', t, 4);
    await a.flush();
    await outage();
    await admit('b', t, 2);
    await admit('a', t, 1);
    // A is back first; B still serves on its own, deciding quotas in the store.
    await pa.heal();
    await until('A is back on Redis', () => a.state() === 'up');
    assert.equal(b.state(), 'down');
    for (let i = 0; i < 4; i++) {
      await admit('a', t);
      await admit('b', t);
    }
    await pb.heal();
    await until('B is back on Redis', () => b.state() === 'up');
    await admit('a', t, 2);
    await admit('b', t, 2);

    const admitted = calls.filter((c) => c.r.ok).length;
    assert.equal(
      admitted,
      10,
      `admitted ${admitted} of a quota of 10: ${calls.map((c) => `${c.who}:${outcome(c.r)}`).join(' ')}`,
    );
    // Every request was counted (quota refusals too), once, in Redis and in the store.
    const counted = calls.length;
    assert.equal((await a.status('k', t, clock.now())).dayUsed, counted, 'A: Redis counts');
    assert.equal((await b.status('k', t, clock.now())).dayUsed, counted, 'B: Redis counts');
    await Promise.all([a.close(), b.close()]);
    assert.deepEqual(await store.usageTotals('k', utcDay(clock.now())), { dayUsed: counted, monthUsed: 10 });
  });

  test('behavior: Redis restarted empty, one instance back and counting while the other still counts in the store: no count lost in Redis', async () => {
    const { store, clock, pa, pb, a, b, calls, admit, outage } = await pair(3_600_000);
    const t = tier(1000, null, null);
    await admit('a', t, 2);
    await admit('b', t, 2);
    await a.flush();
    await outage();
    await admit('b', t, 2);
    const r = redis.client();
    cleanups.push(() => r.disconnect());
    await r.flushall();
    await pa.heal();
    await until('A is back on Redis', () => a.state() === 'up');
    // A rebuilds the key's counts from the store and counts on; its counts sit in its buffer.
    await admit('a', t, 3);
    await admit('b', t, 2);
    await pb.heal();
    await until('B is back on Redis', () => b.state() === 'up');

    assert.ok(calls.every((c) => c.r.ok));
    assert.equal((await a.status('k', t, clock.now())).dayUsed, 11, 'A: Redis counts');
    assert.equal((await b.status('k', t, clock.now())).dayUsed, 11, 'B: Redis counts');
    await admit('a', t);
    await admit('b', t);
    assert.equal((await a.status('k', t, clock.now())).dayUsed, 13);
    await Promise.all([a.close(), b.close()]);
    assert.equal((await store.usageTotals('k', utcDay(clock.now()))).dayUsed, 13);
  });

  test('behavior: one instance cut off from a Redis the other still reaches: the quota holds across both', async () => {
    const { store, clock, pb, a, b, calls, admit } = await pair(3_600_000);
    const t = tier(1000, 10, null);
    await admit('a', t, 3);
    await admit('b', t, 2);
    await a.flush();
    await pb.cut();
    await until('B serves locally', () => b.state() === 'down');
    clock.advance(1600);
    // A renews its lease (every 100 ms) at the new time, as it would have all along.
    await sleep(250);
    for (let i = 0; i < 5; i++) {
      await admit('b', t);
      await admit('a', t);
    }
    assert.equal(a.state(), 'up');
    await pb.heal();
    await until('B is back on Redis', () => b.state() === 'up');
    await admit('a', t);
    await admit('b', t);

    const admitted = calls.filter((c) => c.r.ok).length;
    assert.equal(admitted, 10, calls.map((c) => `${c.who}:${outcome(c.r)}`).join(' '));
    const counted = calls.length;
    assert.equal((await a.status('k', t, clock.now())).dayUsed, counted);
    await Promise.all([a.close(), b.close()]);
    assert.deepEqual(await store.usageTotals('k', utcDay(clock.now())), { dayUsed: counted, monthUsed: 10 });
  });

  test('behavior: a lease lapses moments after Redis decided: the store decides only once the counts Redis decided are written, so the quota holds', async () => {
    const { store, clock, pa, a, b, calls, admit } = await pair(3_600_000);
    const t = tier(1000, 10, null);
    // Decided by Redis; the counts wait in A's buffer (its flush is an hour away).
    await admit('a', t, 8);
    assert.equal((await store.usageTotals('k', utcDay(clock.now()))).dayUsed, 0);
    // A loses Redis (a renewal timed out under load, say): its lease lapses, B renews its own.
    await pa.cut();
    await until('A serves locally', () => a.state() === 'down');
    clock.advance(600);
    await sleep(250);
    // B's requests now go to the store, which must not decide before A's counts are in it.
    const decided = admit('b', t, 3);
    await sleep(50);
    await a.flush();
    // A second after Redis last decided (B's lease, renewed at the last step, still live).
    clock.advance(400);
    await decided;
    const admitted = calls.filter((c) => c.r.ok).length;
    assert.equal(admitted, 10, calls.map((c) => `${c.who}:${outcome(c.r)}`).join(' '));
    await Promise.all([a.close(), b.close()]);
    assert.deepEqual(await store.usageTotals('k', utcDay(clock.now())), { dayUsed: 11, monthUsed: 10 });
  });

  test('behavior: every instance on Redis, a decision made in the store still being added: a request waits for it, then Redis decides; not beyond 200 ms', async () => {
    const { store, clock, prefix, a, admit } = await pair(3_600_000);
    const t = tier(1000, 10, null);
    await admit('a', t);
    await a.flush();
    const stored = async () => (await store.usageTotals('k', utcDay(clock.now()))).dayUsed;
    assert.equal(await stored(), 1);
    const r = redis.client();
    cleanups.push(() => r.disconnect());
    // Another instance's decision under way in the store (its token), settled 60 ms later.
    const decisions = `${prefix}s:{k}`;
    const deadlineUs = Math.round((clock.now() + 60_000) * 1000);
    await r.zadd(decisions, deadlineUs, 'other.1');
    let started = performance.now();
    const waiting = admit('a', t);
    await sleep(60);
    await r.zrem(decisions, 'other.1');
    await waiting;
    // (timers fire on the event loop's millisecond clock: up to 1 ms early by performance.now())
    const held = performance.now() - started;
    assert.ok(held >= 55, `answered after ${held.toFixed(1)} ms, before the token was settled`);
    // Decided by Redis: its count is in A's buffer, not in the store.
    assert.equal(await stored(), 1);
    assert.equal((await a.status('k', t, clock.now())).dayUsed, 2);
    // A token that stays (its instance died): decided in the store after 200 ms (a second
    // after Redis last decided, so the store holds every count Redis decided).
    clock.advance(1000);
    // Both renew their leases at the new time.
    await sleep(250);
    await r.zadd(decisions, deadlineUs, 'other.2');
    started = performance.now();
    await admit('a', t);
    const waited = performance.now() - started;
    assert.ok(waited >= 200 && waited < 1000, `waited ${waited.toFixed(0)} ms`);
    assert.equal(await stored(), 3, 'decided in the store (after A flushed its own counts)');
    assert.equal((await a.status('k', t, clock.now())).dayUsed, 3);
  });
});

/** A store whose quota reservations take `delayMs` (a loaded or half-cut PostgreSQL). */
function slowReservations(store: Store, delayMs: number): Store {
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'reserveUsage') {
        return async (requests: readonly UsageReservation[], batchId: string): Promise<ReservedUsage[]> => {
          await sleep(delayMs);
          return target.reserveUsage(requests, batchId);
        };
      }
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

describe('RedisAdmission: a store that takes reservations but not usage writes', {
  skip: skip ?? false,
}, () => {
  let redis: PrivateRedis;
  before(async () => {
    redis = await PrivateRedis.start();
  });
  after(async () => {
    await redis?.stop();
  });

  test('error: when its own counts cannot be written, the store does not decide without them (local counters do)', async () => {
    const inner = await memoryStore();
    let writesFail = false;
    const store = new Proxy(inner, {
      get(target, prop, receiver) {
        if (prop === 'recordUsage' && writesFail)
          return async () => Promise.reject(new Error('write timed out'));
        const v = Reflect.get(target, prop, receiver);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    }) as Store;
    const clock = new ManualClock();
    const p = await proxy(redis.port);
    const a = await open({
      url: p.url,
      store,
      clock,
      prefix: `t${randomUUID()}:`,
      flushIntervalMs: 3_600_000,
    });
    const t = tier(1000, 10, null);
    const admit = () =>
      a.admit({ keyId: 'k', tier: t, endpoint: 'GET /api/v1/markets', counted: true, nowMs: clock.now() });
    let admitted = 0;
    for (let i = 0; i < 8; i++) if ((await admit()).ok) admitted++;
    // Redis lost, and the store refuses the 8 buffered counts while still answering reservations.
    writesFail = true;
    await p.cut();
    await until('A serves locally', () => a.state() === 'down');
    clock.advance(1600);
    for (let i = 0; i < 6; i++) if ((await admit()).ok) admitted++;
    assert.equal(admitted, 10);
    writesFail = false;
  });
});

describe('RedisAdmission: the return to Redis', { skip: skip ?? false }, () => {
  let redis: PrivateRedis;
  before(async () => {
    redis = await PrivateRedis.start();
  });
  after(async () => {
    await redis?.stop();
  });

  test('behavior: back on Redis within 3 s of its return under steady load, though each store decision takes 700 ms', async () => {
    const store = slowReservations(await memoryStore(), 700);
    const p = await proxy(redis.port);
    const adm = await open({ url: p.url, store, prefix: `t${randomUUID()}:` });
    const t = tier(1000, null, null);
    let stop = false;
    let answered = 0;
    const loop = async (k: number) => {
      while (!stop) {
        await adm.admit({
          keyId: `k${k % 3}`,
          tier: t,
          endpoint: 'GET /api/v1/markets',
          counted: true,
          nowMs: Date.now(),
        });
        answered++;
        await sleep(5);
      }
    };
    const loops = Array.from({ length: 8 }, (_, k) => loop(k));
    try {
      await sleep(300);
      await p.cut();
      await until('Redis lost', () => adm.state() === 'down');
      // Serving on its own (a store decision under way at every moment) for over a second.
      await sleep(1500);
      await p.heal();
      const healed = performance.now();
      await until('back on Redis', () => adm.state() === 'up', 10_000);
      const took = performance.now() - healed;
      // A probe, the outage's counts written, then the local admissions under way let finish
      // (each waits on the store's 700 ms decisions): about 2 s here, bounded, not growing with
      // the load's length.
      assert.ok(took < 3000, `back on Redis ${took.toFixed(0)} ms after it answered again`);
    } finally {
      stop = true;
      await Promise.all(loops);
    }
    assert.ok(answered > 0);
  });
});
