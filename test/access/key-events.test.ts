import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { afterEach, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { type KeyChangeHandlers, NoKeyEvents, RedisKeyEvents } from '../../src/access/key-events.ts';
import { generateKey, hashKey, KeyService } from '../../src/access/keys.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { CuttableProxy, REDIS_URL, redisSkipReason, silentLogger, sleep } from '../redis-helpers.ts';

const skip = await redisSkipReason();

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

function events(url: string, channel: string): RedisKeyEvents {
  const e = new RedisKeyEvents(url, { channel, logger: silentLogger });
  cleanups.push(() => e.close());
  return e;
}

async function until(what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 3000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await sleep(10);
  }
}

/** Handlers that record what they were told. */
function recorder(): KeyChangeHandlers & { changes: string[][]; missedCount: number } {
  const r = {
    changes: [] as string[][],
    missedCount: 0,
    changed(hashes: readonly string[]) {
      r.changes.push([...hashes]);
    },
    missed() {
      r.missedCount++;
    },
  };
  return r;
}

describe('RedisKeyEvents', { skip: skip ?? false }, () => {
  test('behavior: a publish reaches every subscribed instance, naming the keys that changed', async () => {
    const channel = `lrds-test:keys:${randomUUID()}`;
    const a = events(REDIS_URL, channel);
    const b = events(REDIS_URL, channel);
    const seenA = recorder();
    const seenB = recorder();
    await a.subscribe(seenA);
    await b.subscribe(seenB);
    await a.publish(['h1', 'h2']);
    await until('both saw the change', () => seenA.changes.length === 1 && seenB.changes.length === 1);
    assert.deepEqual(seenA.changes, [['h1', 'h2']]);
    assert.deepEqual(seenB.changes, [['h1', 'h2']]);
    assert.equal(seenA.missedCount + seenB.missedCount, 0);
  });

  test('behavior: a message that names no keys (another version) asks for a catch-up, never for dropping every key', async () => {
    const channel = `lrds-test:keys:${randomUUID()}`;
    const sub = events(REDIS_URL, channel);
    const seen = recorder();
    await sub.subscribe(seen);
    const raw = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    cleanups.push(async () => raw.disconnect());
    await raw.publish(channel, String(Date.now()));
    await raw.publish(channel, '{"hashes":[1,2]}');
    await until('both messages seen', () => seen.missedCount === 2);
    assert.deepEqual(seen.changes, []);
  });

  test('behavior: an announcement drops only the keys it names; the other cached keys are served without a lookup', async () => {
    const channel = `lrds-test:keys:${randomUUID()}`;
    const store = new SqliteStore(':memory:');
    await store.migrate();
    cleanups.push(() => store.close());
    const here = new KeyService(store, { events: events(REDIS_URL, channel) });
    const there = new KeyService(store);
    const announced: string[] = [];
    await events(REDIS_URL, channel).subscribe({
      changed: (h) => {
        announced.push(...h);
        there.invalidate(h);
      },
      missed: () => void there.refresh(),
    });
    const account = await here.ensureAccount('acme');
    const kept = await here.create({ accountId: account.id, tier: 'free', mode: 'live' });
    const revoked = await here.create({ accountId: account.id, tier: 'free', mode: 'live' });
    // The creations are announced too: wait for both, so a late one cannot drop a key cached below.
    await until('both creations announced', () =>
      [kept.record.hash, revoked.record.hash].every((h) => announced.includes(h)),
    );
    assert.equal((await there.verify(kept.key)).ok, true);
    assert.equal((await there.verify(revoked.key)).ok, true);
    const looked: string[] = [];
    const realFind = store.findKeyByHash.bind(store);
    store.findKeyByHash = (hash) => {
      looked.push(hash);
      return realFind(hash);
    };
    await here.revoke(revoked.record.id); // announced with its hash
    await until(
      'the other instance refuses the revoked key',
      async () => !(await there.verify(revoked.key)).ok,
      1000,
    );
    assert.equal((await there.verify(kept.key)).ok, true);
    assert.deepEqual(looked, [revoked.record.hash], 'the kept key came from the cache');
  });

  test('behavior: a key revoked on one instance is refused by another at once (cache invalidated)', async () => {
    const channel = `lrds-test:keys:${randomUUID()}`;
    const store = new SqliteStore(':memory:');
    await store.migrate();
    cleanups.push(() => store.close());
    const here = new KeyService(store);
    const there = new KeyService(store);
    const publisher = events(REDIS_URL, channel);
    await events(REDIS_URL, channel).subscribe({ changed: (h) => there.invalidate(h), missed: () => {} });
    const account = await here.ensureAccount('acme');
    const { key, record } = await here.create({ accountId: account.id, tier: 'free', mode: 'live' });
    assert.equal((await there.verify(key)).ok, true);
    await here.revoke(record.id);
    // Without the event, `there` still serves its cached record.
    assert.equal((await there.verify(key)).ok, true);
    await publisher.publish([record.hash]);
    await until('the other instance refuses the key', async () => !(await there.verify(key)).ok, 1000);
  });

  test('behavior: a lost subscription, once restored, asks for a catch-up (messages may have been missed)', async () => {
    const channel = `lrds-test:keys:${randomUUID()}`;
    const proxy = await CuttableProxy.start(6379);
    cleanups.push(() => proxy.cut());
    const sub = events(proxy.url, channel);
    const seen = recorder();
    await sub.subscribe(seen);
    await proxy.cut();
    await sleep(50);
    await proxy.heal();
    await until('the restored subscription asked for a catch-up', () => seen.missedCount >= 1);
    assert.deepEqual(seen.changes, []);
    await events(REDIS_URL, channel).publish(['h1']);
    await until('messages flow again', () => seen.changes.length === 1);
  });
});

describe('RedisKeyEvents with Redis unreachable', () => {
  test('behavior: publish and subscribe return quickly and never throw', async () => {
    const e = events('redis://127.0.0.1:1', 'lrds:keys');
    const started = Date.now();
    await e.publish(['h1']);
    await e.subscribe(recorder());
    assert.ok(Date.now() - started < 2500);
  });
});

describe('NoKeyEvents', () => {
  test('default: every call is a no-op', async () => {
    const e = new NoKeyEvents();
    const seen = recorder();
    await e.subscribe(seen);
    await e.publish(['h1']);
    await e.close();
    assert.deepEqual(seen.changes, []);
    assert.equal(seen.missedCount, 0);
  });
});

describe('KeyService cache', () => {
  test('behavior: a lookup that read a key before its revocation does not cache it', async () => {
    const store = new SqliteStore(':memory:');
    await store.migrate();
    const service = new KeyService(store);
    const account = await service.ensureAccount('acme');
    const { key, record } = await service.create({ accountId: account.id, tier: 'pro', mode: 'live' });
    // A slow read: it sees the key as it was before the revocation below.
    const realFind = store.findKeyByHash.bind(store);
    const before = await realFind(record.hash);
    store.findKeyByHash = async () => {
      await new Promise((r) => setTimeout(r, 20));
      return before;
    };
    const slow = service.verify(key);
    await service.revoke(record.id); // invalidates while the slow read is in flight
    assert.equal((await slow).ok, true, 'the read in flight answers as of its read');
    store.findKeyByHash = realFind;
    assert.equal((await service.verify(key)).ok, false, 'the stale read was not cached');
    await store.close();
  });
  /** A service over a store whose key lookups are counted and can be made to fail (store unreachable). */
  async function countedStore() {
    const store = new SqliteStore(':memory:');
    await store.migrate();
    cleanups.push(() => store.close());
    const state = { down: false, lookups: [] as string[] };
    const realFind = store.findKeyByHash.bind(store);
    store.findKeyByHash = (hash) => {
      state.lookups.push(hash);
      return state.down ? Promise.reject(new Error('connection refused')) : realFind(hash);
    };
    for (const method of ['keysVersion', 'keyChangesSince'] as const) {
      const real = (store[method] as (...a: unknown[]) => Promise<unknown>).bind(store);
      (store as unknown as Record<string, unknown>)[method] = (...args: unknown[]) =>
        state.down ? Promise.reject(new Error('connection refused')) : real(...args);
    }
    return { store, state };
  }

  test('behavior: refresh drops exactly the keys changed elsewhere since the last one; the others stay cached', async () => {
    const { store, state } = await countedStore();
    const elsewhere = new KeyService(store);
    const here = new KeyService(store);
    await here.refresh();
    const account = await elsewhere.ensureAccount('acme');
    const kept = await elsewhere.create({ accountId: account.id, tier: 'free', mode: 'live' });
    const revoked = await elsewhere.create({ accountId: account.id, tier: 'free', mode: 'live' });
    const retiered = await elsewhere.create({ accountId: account.id, tier: 'free', mode: 'live' });
    await here.refresh(); // up to date with the three creations
    for (const k of [kept, revoked, retiered]) assert.equal((await here.verify(k.key)).ok, true);
    await elsewhere.revoke(revoked.record.id);
    await elsewhere.setTier(retiered.record.id, 'pro');
    const created = await elsewhere.create({ accountId: account.id, tier: 'free', mode: 'live' });
    state.lookups.length = 0;
    await here.refresh();
    assert.equal((await here.verify(kept.key)).ok, true);
    assert.equal((await here.verify(revoked.key)).ok, false);
    const check = await here.verify(retiered.key);
    assert.equal(check.ok && check.key.tier, 'pro');
    assert.equal((await here.verify(created.key)).ok, true);
    assert.deepEqual(
      state.lookups.sort(),
      [revoked.record.hash, retiered.record.hash, created.record.hash].sort(),
      'only the changed keys were looked up again',
    );
  });

  test('behavior: a hash cached as unknown is looked up again once a key with it is created elsewhere', async () => {
    const { store } = await countedStore();
    const here = new KeyService(store);
    await here.refresh();
    const account = await here.ensureAccount('acme');
    const key = generateKey('live');
    assert.equal((await here.verify(key)).ok, false); // cached: no such key
    // Created by another instance (straight into the store: nothing announced here).
    await store.createKey({
      id: 'key_elsewhere',
      accountId: account.id,
      hash: hashKey(key),
      prefix: key.slice(0, 14),
      mode: 'live',
      tier: 'free',
      name: null,
      createdAt: '2026-11-22T00:00:00.000Z',
      revokedAt: null,
    });
    assert.equal((await here.verify(key)).ok, false, 'still the cached answer');
    await here.refresh();
    assert.equal((await here.verify(key)).ok, true);
  });

  test('error: while the store is unreachable, cached keys keep working after changes to other keys (announced or polled)', async () => {
    const { store, state } = await countedStore();
    const elsewhere = new KeyService(store);
    const here = new KeyService(store);
    await here.refresh();
    const account = await elsewhere.ensureAccount('acme');
    const cached = await elsewhere.create({ accountId: account.id, tier: 'pro', mode: 'live' });
    const other = await elsewhere.create({ accountId: account.id, tier: 'pro', mode: 'live' });
    assert.equal((await here.verify(cached.key)).ok, true);
    assert.equal((await here.verify(other.key)).ok, true);
    state.down = true;
    // Another key created elsewhere during the outage, announced: only that hash is dropped.
    here.invalidate([hashKey('lrds_live_ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ')]);
    await assert.rejects(here.refresh(), /connection refused/);
    await assert.rejects(here.refresh(), /connection refused/);
    for (let i = 0; i < 5; i++) assert.equal((await here.verify(cached.key)).ok, true);
    // A key revoked elsewhere during the outage, announced: no longer served from the cache;
    // it cannot be checked either (503), so it is never served after its revocation.
    here.invalidate([other.record.hash]);
    await assert.rejects(here.verify(other.key), (err: Error) => err.name === 'BackendUnavailableError');
    assert.equal((await here.verify(cached.key)).ok, true);
    state.down = false;
    await here.refresh();
    assert.equal((await here.verify(other.key)).ok, true);
  });

  test('behavior: the cache is a least-recently-used cache bounded by entries', async () => {
    const { store, state } = await countedStore();
    const service = new KeyService(store, { cacheSize: 2 });
    const account = await service.ensureAccount('acme');
    const [a, b, c] = [
      await service.create({ accountId: account.id, tier: 'free', mode: 'live' }),
      await service.create({ accountId: account.id, tier: 'free', mode: 'live' }),
      await service.create({ accountId: account.id, tier: 'free', mode: 'live' }),
    ];
    await service.verify(a!.key);
    await service.verify(b!.key);
    await service.verify(a!.key); // a is now the most recently used
    await service.verify(c!.key); // evicts b
    state.lookups.length = 0;
    await service.verify(a!.key);
    await service.verify(c!.key);
    assert.deepEqual(state.lookups, []);
    await service.verify(b!.key);
    assert.deepEqual(state.lookups, [b!.record.hash]);
  });
});
