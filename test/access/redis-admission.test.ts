import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { RedisAdmission } from '../../src/access/redis-admission.ts';
import { QUOTA_TTL_MARGIN_MS } from '../../src/access/redis-scripts.ts';
import { nextUtcMonthStart } from '../../src/domain/periods.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/types.ts';
import { ManualClock } from '../clock.ts';
import { admissionContract, tier } from '../contract/admission-contract.ts';
import { deleteKeys, REDIS_URL, redisSkipReason, silentLogger } from '../redis-helpers.ts';

const skip = await redisSkipReason();
/** Every key of this run lives under it, so parallel runs and other suites never meet. */
const PREFIX = `lrds-test:${randomUUID()}:`;

after(async () => {
  if (!skip) await deleteKeys(REDIS_URL, PREFIX);
});

async function open(opts: {
  store: Store;
  clock?: ManualClock;
  flushIntervalMs?: number;
  prefix?: string;
}): Promise<RedisAdmission> {
  const adm = new RedisAdmission({
    url: REDIS_URL,
    store: opts.store,
    prefix: opts.prefix ?? PREFIX,
    logger: silentLogger,
    // A generous timeout: a loaded test machine must not turn a slow reply into an outage.
    commandTimeoutMs: 1000,
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(opts.flushIntervalMs ? { flushIntervalMs: opts.flushIntervalMs } : {}),
  });
  if (!(await adm.ready(3000))) {
    await adm.close();
    throw new Error('Redis not reachable at 127.0.0.1:6379');
  }
  return adm;
}

async function memoryStore(): Promise<SqliteStore> {
  const store = new SqliteStore(':memory:');
  await store.migrate();
  return store;
}

admissionContract('redis (RedisAdmission, injected clock)', ({ clock, store }) => open({ clock, store }), {
  ...(skip ? { skip } : {}),
});

describe('RedisAdmission', { skip: skip ?? false }, () => {
  const req = (keyId: string, t = tier(5, null, null), counted = true) => ({
    keyId,
    tier: t,
    endpoint: 'GET /api/v1/markets',
    counted,
    nowMs: 0, // ignored without a clock: Redis TIME is the time
  });

  test('behavior: without a clock the window runs on Redis TIME', async () => {
    const store = await memoryStore();
    const adm = await open({ store });
    const key = `key_${randomUUID()}`;
    const before = Date.now();
    const results = [];
    for (let i = 0; i < 7; i++) results.push(await adm.admit(req(key)));
    const after = Date.now();
    assert.deepEqual(
      results.map((r) => r.ok),
      [true, true, true, true, true, false, false],
    );
    const first = results[0]!;
    // Same host: Redis's clock is ours, give or take the round trip.
    assert.ok(first.rate.resetAt >= before + 1000 - 5 && first.rate.resetAt <= after + 1000 + 5);
    const refused = results[6]!;
    assert.ok(!refused.ok && refused.reason === 'RATE_LIMITED');
    assert.ok(refused.retryAfterMs > 0 && refused.retryAfterMs <= 1000);
    assert.equal(refused.rate.resetAt, first.rate.resetAt);
    await adm.close();
    await store.close();
  });

  test('behavior: memory per key is bounded (window trimmed to rate entries, idle keys expire)', async () => {
    const store = await memoryStore();
    const adm = await open({ store });
    const key = `key_${randomUUID()}`;
    for (let i = 0; i < 20; i++) await adm.admit(req(key));
    const r = new Redis(REDIS_URL);
    const w = `${PREFIX}w:{${key}}`;
    assert.equal(await r.zcard(w), 5);
    const pttl = await r.pttl(w);
    assert.ok(pttl > 0 && pttl <= 1001, `window TTL ${pttl}`);
    const q = await r.hgetall(`${PREFIX}q:{${key}}`);
    assert.deepEqual(Object.keys(q).sort(), ['d', 'du', 'g', 'mu', 'rt']);
    assert.deepEqual([q.du, q.mu], ['5', '5']);
    r.disconnect();
    await adm.close();
    await store.close();
  });

  test('behavior: quota counters expire a margin after their month ends (calendar across years, leap and not)', async () => {
    const store = await memoryStore();
    const clock = new ManualClock('2026-01-31T23:59:59.999Z');
    const adm = await open({ store, clock });
    const t = tier(1000, null, 1);
    const r = new Redis(REDIS_URL);
    const monthEnds: number[] = [];
    for (let y = 2026; y <= 2030; y++) {
      for (let m = 0; m < 12; m++) monthEnds.push(Date.UTC(y, m + 1, 1) - 1);
    }
    monthEnds.push(Date.UTC(2096, 2, 1) - 1, Date.UTC(2100, 2, 1) - 1);
    for (const last of monthEnds) {
      const name = new Date(last).toISOString();
      const key = `key_${randomUUID()}`;
      const admit = () => adm.admit({ ...req(key, t), nowMs: clock.now() });
      // Noon on the last day of the month, then its last millisecond, then the 1st.
      clock.set(last - 12 * 3_600_000 + 1);
      assert.equal((await admit()).ok, true, name);
      const pttl = await r.pttl(`${PREFIX}q:{${key}}`);
      const expected = nextUtcMonthStart(clock.now()) - clock.now() + QUOTA_TTL_MARGIN_MS;
      assert.ok(Math.abs(pttl - expected) <= 50, `${name}: TTL ${pttl}, expected ${expected}`);
      clock.set(last);
      assert.equal((await admit()).ok, false, name);
      clock.set(last + 1);
      assert.equal((await admit()).ok, true, `the 1st after ${name}`);
      assert.equal((await admit()).ok, false, name);
    }
    r.disconnect();
    await adm.close();
    await store.close();
  });

  test('behavior: counters lost in Redis are rebuilt from the store and this instance buffer (no quota regained)', async () => {
    const store = await memoryStore();
    const clock = new ManualClock('2026-11-22T12:00:00.000Z');
    // Nothing is flushed on its own: the counts live in the buffer until flush().
    const adm = await open({ store, clock, flushIntervalMs: 3_600_000 });
    const key = `key_${randomUUID()}`;
    const t = tier(1000, 12, null);
    const r = new Redis(REDIS_URL);
    const lose = () => r.del(`${PREFIX}q:{${key}}`, `${PREFIX}w:{${key}}`);
    for (let i = 0; i < 10; i++) assert.ok((await adm.admit({ ...req(key, t), nowMs: clock.now() })).ok);
    await lose();
    // 10 unflushed events: counted from this instance's buffer.
    assert.ok((await adm.admit({ ...req(key, t), nowMs: clock.now() })).ok);
    await adm.flush();
    await lose();
    // 11 in the store.
    assert.ok((await adm.admit({ ...req(key, t), nowMs: clock.now() })).ok);
    await lose();
    // 11 in the store + 1 buffered.
    const next = await adm.admit({ ...req(key, t), nowMs: clock.now() });
    assert.deepEqual(!next.ok && next.reason === 'DAILY_QUOTA' && next.used, 13);
    r.disconnect();
    await adm.close();
    assert.deepEqual(await store.usageTotals(key, '2026-11-22'), { dayUsed: 13, monthUsed: 12 });
    await store.close();
  });

  test('behavior: the key prefix separates deployments sharing a Redis', async () => {
    const store = await memoryStore();
    const clock = new ManualClock();
    const a = await open({ store, clock, prefix: `${PREFIX}a:` });
    const b = await open({ store, clock, prefix: `${PREFIX}b:` });
    const t = tier(1, null, null);
    const key = `key_${randomUUID()}`;
    assert.ok((await a.admit({ ...req(key, t), nowMs: clock.now() })).ok);
    assert.ok((await b.admit({ ...req(key, t), nowMs: clock.now() })).ok);
    assert.equal((await a.admit({ ...req(key, t), nowMs: clock.now() })).ok, false);
    await a.close();
    await b.close();
    await store.close();
  });

  test('behavior: an account bound lost from Redis is rebuilt from the store and the unflushed counts', async () => {
    const store = await memoryStore();
    const clock = new ManualClock('2026-11-22T12:00:00.000Z');
    const prefix = `${PREFIX}acct-${randomUUID()}:`;
    // Hours between flushes: what is unflushed stays so until the test flushes.
    const adm = await open({ store, clock, prefix, flushIntervalMs: 3_600_000 });
    const t = { ...tier(1000, 3, null), id: 'free' as const, maxKeysPerAccount: 1 };
    const accountId = `acct_${randomUUID()}`;
    await store.createAccount({
      id: accountId,
      name: accountId,
      email: null,
      createdAt: '2026-11-01T00:00:00.000Z',
    });
    const keys: string[] = [];
    for (let i = 0; i < 3; i++) {
      const id = `key_${randomUUID()}`;
      keys.push(id);
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
    const admit = (keyId: string) => adm.admit({ ...req(keyId, t), accountId, nowMs: clock.now() });
    // 3 (k0) flushed to the store, then 2 (k1) unflushed: the account is at 5 of its 6
    for (let i = 0; i < 3; i++) assert.ok((await admit(keys[0]!)).ok);
    await adm.flush();
    for (let i = 0; i < 2; i++) assert.ok((await admit(keys[1]!)).ok);
    // Redis loses every count (restarted empty, flushed): rebuilt from the store plus the buffer
    await deleteKeys(REDIS_URL, prefix);
    assert.ok((await admit(keys[2]!)).ok);
    const refused = await admit(keys[2]!);
    assert.ok(!refused.ok && refused.reason === 'DAILY_QUOTA');
    assert.equal(refused.scope, 'account');
    assert.equal(refused.limit, 6);
    assert.equal(refused.used, 7);
    await adm.close();
    await store.close();
  });
});
