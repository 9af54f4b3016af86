import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { after, afterEach, before, describe, test } from 'node:test';
import type { AdmissionResult } from '../../src/access/admission.ts';
import { RedisAdmission, type RedisAdmissionOptions } from '../../src/access/redis-admission.ts';
import { utcDay } from '../../src/domain/periods.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { ManualClock } from '../clock.ts';
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
    // Past A's first second: before it, A admits nothing on its own.
    clock.advance(1000);
    await admitN(a, 5);
    await admitN(b, 2);
    assert.equal(b.state(), 'up');
    await proxy.heal();
    // A trusts Redis again once a second has passed since the outage began: it has.
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
    // Past the first second, when a process admits nothing on its own.
    clock.advance(1000);
    const r = track(redis.client());
    await r.call('CLIENT', 'PAUSE', '400', 'ALL');
    const started = Date.now();
    const during: AdmissionResult[] = [];
    for (let i = 0; i < 10; i++) during.push(await adm.admit(request('k', t, clock.now())));
    assert.ok(Date.now() - started < 300, 'only the first request waits for the timeout');
    assert.ok(during.every((x) => x.ok));
    // Redis is trusted again a second after the outage began.
    clock.advance(1000);
    await until('Redis serves again', () => adm.state() === 'up');
    const used = (await adm.status('k', t, clock.now())).dayUsed;
    assert.ok(used === 15 || used === 16, `dayUsed ${used}`);
    r.disconnect();
    await adm.close();
    assert.equal((await store.usageTotals('k', utcDay(clock.now()))).dayUsed, 15);
    await store.close();
  });

  test('behavior: one instance, Redis stalled: no local admission while an admit sent before the failover may still be admitted there', async () => {
    const store = await memoryStore();
    const clock = new ManualClock();
    const adm = await open({
      url: redis.url,
      store,
      clock,
      prefix: `t${randomUUID()}:`,
      commandTimeoutMs: 1000,
    });
    const t = tier(5, null, null);
    // Past the first second, when a process admits nothing on its own. The clock stands still
    // from here: every admission below falls in one window.
    clock.advance(1000);
    const r = track(redis.client());
    // Redis runs nothing for 1,350 ms: the first call times out (at 1,000 ms, the failover), the
    // four sent at 600 ms are still waiting then, and are admitted by Redis at 1,350 ms, within
    // their own timeout (1,600 ms).
    await r.call('CLIENT', 'PAUSE', '1350', 'ALL');
    const first = adm.admit(request('k', t, clock.now()));
    await sleep(600);
    const queued = Array.from({ length: 4 }, () => adm.admit(request('k', t, clock.now())));
    const firstR = await first;
    assert.equal(adm.state(), 'down');
    // While those four may still be admitted by Redis, nothing is admitted locally.
    const meanwhile = [firstR];
    for (let i = 0; i < 4; i++) meanwhile.push(await adm.admit(request('k', t, clock.now())));
    for (const x of meanwhile) {
      assert.ok(
        !x.ok && x.reason === 'RATE_LIMITED',
        `refused while calls to Redis are open: ${JSON.stringify(x)}`,
      );
      assert.ok(x.retryAfterMs > 0 && x.retryAfterMs <= 1000, `retryAfterMs ${x.retryAfterMs}`);
      assert.equal(x.rate.resetAt, clock.now() + x.retryAfterMs);
    }
    const late = await Promise.all(queued);
    assert.deepEqual(
      late.map((x) => x.ok),
      [true, true, true, true],
      'the four queued calls were admitted by Redis',
    );
    // Once they are answered, the local window holds them: one more, then the window is full.
    const after = [];
    for (let i = 0; i < 3; i++) after.push(await adm.admit(request('k', t, clock.now())));
    assert.deepEqual(
      after.map((x) => (x.ok ? 'ok' : x.reason)),
      ['ok', 'RATE_LIMITED', 'RATE_LIMITED'],
    );
    const admitted = [...meanwhile, ...late, ...after].filter((x) => x.ok).length;
    assert.equal(admitted, 5, 'never more than the rate within one window');
    r.disconnect();
    await adm.close();
    await store.close();
  });

  test('behavior: an instance already local when Redis restarts empty trusts the new Redis only a second after it first reaches it', async () => {
    const store = await memoryStore();
    const clock = new ManualClock();
    const prefix = `t${randomUUID()}:`;
    const proxy = track(await CuttableProxy.start(redis.port));
    const a = await open({ url: proxy.url, store, clock, prefix, instances: 2 });
    const b = await open({ url: redis.url, store, clock, prefix, instances: 2 });
    // An odd rate: each instance's share is 2, and Redis keeps 2 free for an instance without a lease.
    const t = tier(5, null, null);
    await proxy.cut();
    await until('A sees Redis down', () => a.state() === 'down');
    // Past A's wait (1.5 s after its last lease renewal); the clock stands still from here.
    clock.advance(2000);
    const r = track(redis.client());
    // B's renewals (every 100 ms) run on the moved clock: its lease is live again, A's is not.
    for (const end = Date.now() + 3000; ; await sleep(10)) {
      if ((await r.zcount(`${prefix}instances`, `(${clock.now() * 1000}`, '+inf')) === 1) break;
      if (Date.now() > end) throw new Error('B did not renew its lease');
    }
    r.disconnect();
    const outcome = (x: AdmissionResult) => (x.ok ? 'ok' : x.reason);
    const burst = async (adm: RedisAdmission, n: number) => {
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push(outcome(await adm.admit(request('k', t, clock.now()))));
      return out;
    };
    // A: its share locally; B: the rest of the window through Redis (which keeps A's share free).
    assert.deepEqual(await burst(a, 3), ['ok', 'ok', 'RATE_LIMITED']);
    assert.deepEqual(await burst(b, 4), ['ok', 'ok', 'ok', 'RATE_LIMITED']);
    assert.equal(b.state(), 'up');
    // Redis restarts empty: B's three admissions are in no window A can see.
    await redis.kill();
    await redis.restart();
    await proxy.heal();
    // A reaches the new Redis at once, but within the second B's admissions are still in the
    // window: A stays local (its share used up) instead of admitting through the empty Redis.
    const during: string[] = [];
    for (const end = Date.now() + 1000; Date.now() < end; await sleep(20)) {
      during.push(...(await burst(a, 1)));
    }
    assert.ok(
      during.every((x) => x === 'RATE_LIMITED'),
      `admitted within the window of B's admissions through the old Redis: ${during.join(' ')}`,
    );
    assert.equal(a.state(), 'down');
    // A second after the restart was seen, A is back on Redis.
    clock.advance(1000);
    await until('A is back on Redis', () => a.state() === 'up');
    assert.equal((await burst(a, 1))[0], 'ok');
    await Promise.all([a.close(), b.close()]);
    await store.close();
  });

  test('behavior: redis-server killed mid-load and restarted: never a throw, never unlimited, nothing regained', async () => {
    const store = await memoryStore();
    const instances = 2;
    const adm = await open({ url: redis.url, store, instances, prefix: `t${randomUUID()}:` });
    const share = Math.floor(40 / instances);
    // k0 and k1 run out of daily quota during the outage (their quota is set at the kill to what
    // they used so far + 5); k2 never does: its local rate is what binds.
    const tiers = new Map([
      ['k0', tier(40, 100_000, null)],
      ['k1', tier(40, 100_000, null)],
      ['k2', tier(40, 100_000, null)],
    ]);
    const keys = [...tiers.keys()];
    const log = new Map<string, { sent: number; answered: number; local: boolean; r: AdmissionResult }[]>(
      keys.map((k) => [k, []]),
    );
    const lastUsed = new Map<string, number>(keys.map((k) => [k, 0]));
    let sawDown = false;
    let killedAt = 0;
    let restartedAt = 0;

    // Killed after 600 requests, down for 2.5 s (local admissions start 1.5 s in at most), then
    // 2.5 s more on the restarted, empty Redis (trusted a second after it is first reached).
    for (let i = 0; i < 600 || !restartedAt || performance.now() - restartedAt < 2500; i++) {
      if (i === 600) {
        await redis.kill();
        killedAt = performance.now();
        for (const k of ['k0', 'k1']) {
          tiers.set(k, tier(40, log.get(k)!.filter((e) => e.r.ok).length + 5, null));
        }
      }
      if (killedAt && !restartedAt && performance.now() - killedAt > 2500) {
        await redis.restart();
        restartedAt = performance.now();
      }
      const key = keys[i % keys.length]!;
      const sent = performance.now();
      const r = await adm.admit(request(key, tiers.get(key)!, Date.now()));
      const local = adm.state() === 'down';
      log.get(key)!.push({ sent, answered: performance.now(), local, r });
      if (local) sawDown = true;
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
          entries.some((e) => e.local && !e.r.ok && e.r.reason === 'DAILY_QUOTA' && e.r.rate.limit === share),
          `${k}: refused by quota during the outage`,
        );
      }
      // Through Redis: the rate, less the share kept for the other instance, which never
      // renews its lease here; locally: floor(rate / instances).
      for (const e of entries) assert.ok(e.r.rate.limit === 40 || e.r.rate.limit === share);
      const local = admitted.filter((e) => e.local);
      assert.ok(local.length > 0, `${k}: some requests were admitted locally`);
      // Never more than the instance's share in any 1,000 ms, as the caller measures it.
      for (let i = share; i < local.length; i++) {
        const span = local[i]!.answered - local[i - share]!.sent;
        assert.ok(span >= 1000, `${k}: ${share + 1} local admissions within ${span.toFixed(2)} ms`);
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
        entries.slice(-5).every((e) => !e.local && e.r.rate.limit === 40),
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
  test('behavior: serves from the local fallback at floor(rate / instances) after its first 1.5 s, quotas decided by the store', async () => {
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
    const outcome = (r: AdmissionResult) => (r.ok ? 'ok' : r.reason);
    // A process that starts without Redis may be replacing one that was admitting a moment ago:
    // nothing on its own for 1 s, + the 0.5 s that process's lease may have had left.
    const first = await adm.admit(request('k', t, clock.now()));
    assert.ok(!first.ok && first.reason === 'RATE_LIMITED' && first.retryAfterMs === 1500);
    clock.advance(1500);
    const started = Date.now();
    const results: AdmissionResult[] = [];
    for (let second = 0; second < 6; second++) {
      for (let i = 0; i < 6; i++) results.push(await adm.admit(request('k', t, clock.now())));
      clock.advance(1000);
    }
    assert.ok(Date.now() - started < 1000, 'no request waits for Redis');
    // 2 per second (floor(5 / 2)), until the daily quota of 10.
    const perSecond = ['ok', 'ok', 'RATE_LIMITED', 'RATE_LIMITED', 'RATE_LIMITED', 'RATE_LIMITED'];
    assert.deepEqual(results.map(outcome), [
      ...perSecond,
      ...perSecond,
      ...perSecond,
      ...perSecond,
      ...perSecond,
      // quota refusals take no slot (docs/decisions.md "Order of checks and what counts"): once the quota is used up, every request is a quota 429
      ...Array(6).fill('DAILY_QUOTA'),
    ]);
    assert.equal(results[0]!.rate.limit, 2);
    const s = await adm.status('k', t, clock.now());
    assert.deepEqual([s.dayUsed, s.monthUsed], [16, 10]);
    // A rate below the number of instances leaves each one nothing: refused while Redis is away.
    const rare = await adm.admit(request('rare', tier(1, null, null), clock.now()));
    assert.ok(!rare.ok && rare.reason === 'RATE_LIMITED' && rare.rate.limit === 0);
    await adm.close();
    assert.deepEqual(await store.usageTotals('k', utcDay(clock.now())), { dayUsed: 16, monthUsed: 10 });
    await store.close();
  });

  test('behavior: with Redis unreachable the store holds an account to its bound', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => {
        const addr = s.address();
        s.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0));
      });
    });
    const store = await memoryStore();
    const clock = new ManualClock('2026-11-22T12:00:00.000Z');
    const adm = track(
      new RedisAdmission({
        url: `redis://127.0.0.1:${port}`,
        store,
        clock,
        instances: 2,
        logger: silentLogger,
      }),
    );
    // 3 a day per key, 1 key per mode: the account's Free keys get 6 a day together
    const t = { ...tier(1000, 3, null), id: 'free' as const, maxKeysPerAccount: 1 };
    const accountId = `acct_${randomUUID()}`;
    await store.createAccount({
      id: accountId,
      name: accountId,
      email: null,
      createdAt: '2026-11-01T00:00:00.000Z',
    });
    const keys = ['k1', 'k2', 'k3'];
    for (const id of keys) {
      await store.createKey({
        id,
        accountId,
        hash: `h_${id}`,
        prefix: 'lrds_live_AbCd',
        mode: 'live',
        tier: 'free',
        name: null,
        createdAt: '2026-11-01T00:00:00.000Z',
        revokedAt: null,
      });
    }
    clock.advance(1500);
    const outcome = (r: AdmissionResult) =>
      r.ok
        ? 'ok'
        : r.reason === 'RATE_LIMITED'
          ? r.reason
          : `${r.reason}:${r.scope ?? 'key'}:${r.used}/${r.limit}`;
    const run = async (keyId: string, n: number) => {
      const out: string[] = [];
      for (let i = 0; i < n; i++)
        out.push(outcome(await adm.admit({ ...request(keyId, t, clock.now()), accountId })));
      return out;
    };
    assert.equal(adm.state(), 'down');
    assert.deepEqual(await run('k1', 4), ['ok', 'ok', 'ok', 'DAILY_QUOTA:key:4/3']);
    assert.deepEqual(await run('k2', 3), ['ok', 'ok', 'ok']);
    assert.deepEqual(await run('k3', 2), ['DAILY_QUOTA:account:7/6', 'DAILY_QUOTA:account:8/6']);
    await adm.close();
    assert.deepEqual(await store.usageTotals('k3', '2026-11-22'), { dayUsed: 2, monthUsed: 0 });
    await store.close();
  });
});
