import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { afterEach, describe, test } from 'node:test';
import { NoKeyEvents, RedisKeyEvents } from '../../src/access/key-events.ts';
import { KeyService } from '../../src/access/keys.ts';
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

describe('RedisKeyEvents', { skip: skip ?? false }, () => {
  test('behavior: a publish reaches every subscribed instance', async () => {
    const channel = `lrds-test:keys:${randomUUID()}`;
    const a = events(REDIS_URL, channel);
    const b = events(REDIS_URL, channel);
    let seenA = 0;
    let seenB = 0;
    await a.subscribe(() => seenA++);
    await b.subscribe(() => seenB++);
    await a.publish();
    await until('both saw the change', () => seenA === 1 && seenB === 1);
  });

  test('behavior: a key revoked on one instance is refused by another at once (cache invalidated)', async () => {
    const channel = `lrds-test:keys:${randomUUID()}`;
    const store = new SqliteStore(':memory:');
    await store.migrate();
    cleanups.push(() => store.close());
    const here = new KeyService(store);
    const there = new KeyService(store);
    const publisher = events(REDIS_URL, channel);
    await events(REDIS_URL, channel).subscribe(() => there.invalidate());
    const account = await here.ensureAccount('acme');
    const { key, record } = await here.create({ accountId: account.id, tier: 'free', mode: 'live' });
    assert.equal((await there.verify(key)).ok, true);
    await here.revoke(record.id);
    // Without the event, `there` still serves its cached record.
    assert.equal((await there.verify(key)).ok, true);
    await publisher.publish();
    await until('the other instance refuses the key', async () => !(await there.verify(key)).ok, 1000);
  });

  test('behavior: a lost subscription, once restored, reports a change (messages may have been missed)', async () => {
    const channel = `lrds-test:keys:${randomUUID()}`;
    const proxy = await CuttableProxy.start(6379);
    cleanups.push(() => proxy.cut());
    const sub = events(proxy.url, channel);
    let seen = 0;
    await sub.subscribe(() => seen++);
    await proxy.cut();
    await sleep(50);
    await proxy.heal();
    await until('the restored subscription reported', () => seen >= 1);
    const before = seen;
    await events(REDIS_URL, channel).publish();
    await until('messages flow again', () => seen > before);
  });
});

describe('RedisKeyEvents with Redis unreachable', () => {
  test('behavior: publish and subscribe return quickly and never throw', async () => {
    const e = events('redis://127.0.0.1:1', 'lrds:keys');
    const started = Date.now();
    await e.publish();
    await e.subscribe(() => {});
    assert.ok(Date.now() - started < 2500);
  });
});

describe('NoKeyEvents', () => {
  test('default: every call is a no-op', async () => {
    const e = new NoKeyEvents();
    let seen = 0;
    await e.subscribe(() => seen++);
    await e.publish();
    await e.close();
    assert.equal(seen, 0);
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
});
