import assert from 'node:assert/strict';
import { after, afterEach, describe, test } from 'node:test';
import { BackendUnavailableError } from '../../src/access/admission.ts';
import type { KeyRecord } from '../../src/domain/records/keys.ts';
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { pgSkipReason, TestSchemas } from '../pg-helpers.ts';
import { PgProxy } from '../pg-proxy.ts';

const skip = await pgSkipReason();
const schemas = new TestSchemas();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => {});
});
after(() => schemas.drop());

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const ACCOUNT = { id: 'acct_1', name: 'acme', email: null, createdAt: '2026-11-22T00:00:00.000Z' };
const KEY: KeyRecord = {
  id: 'key_1',
  accountId: 'acct_1',
  hash: 'h1',
  prefix: 'lrds_live_AbCd',
  mode: 'live',
  tier: 'pro',
  name: null,
  createdAt: '2026-11-22T00:00:00.000Z',
  revokedAt: null,
};

/** A migrated store on a fresh schema, reached through a fault-injecting proxy; an account and a key in it. */
async function storeBehindProxy(options: ConstructorParameters<typeof PostgresStore>[1] = {}) {
  const proxy = await PgProxy.start();
  const { schema, url } = await schemas.create();
  const direct = new PostgresStore(url);
  await direct.migrate();
  await direct.createAccount(ACCOUNT);
  await direct.createKey(KEY);
  await direct.close();
  const store = new PostgresStore(TestSchemas.urlOf(proxy.url(url), schema), options);
  cleanups.push(() => proxy.close());
  cleanups.push(() => store.close());
  return { store, proxy };
}

/** How a call ended, and after how long. */
async function outcome<T>(p: Promise<T>): Promise<{ ms: number; value?: T; error?: unknown }> {
  const started = performance.now();
  try {
    const value = await p;
    return { ms: performance.now() - started, value };
  } catch (error) {
    return { ms: performance.now() - started, error };
  }
}

async function until(what: string, cond: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await sleep(20);
  }
}

describe('PostgresStore when PostgreSQL is unreachable', { skip: skip ?? false }, () => {
  test('behavior: an answer that arrived while the process was busy past the deadline is taken; the store stays up', async () => {
    const { url } = await schemas.create();
    const store = new PostgresStore(url, { callTimeoutMs: 200 });
    cleanups.push(() => store.close());
    await store.migrate();
    await store.createAccount(ACCOUNT);
    assert.deepEqual(await store.getAccount('acct_1'), ACCOUNT); // connected
    const call = outcome(store.getAccount('acct_1'));
    for (let i = 0; i < 10; i++) await new Promise((resolve) => process.nextTick(resolve)); // sent
    // The process computes for twice the deadline (as when it compiles its routes at start):
    // the answer waits in the socket, and the deadline's timer fires before the socket is read.
    const busyUntil = performance.now() + 400;
    while (performance.now() < busyUntil) {
      // busy
    }
    const { value, error } = await call;
    assert.equal(error, undefined);
    assert.deepEqual(value, ACCOUNT);
    assert.equal(store.state(), 'up');
  });

  test('error: a blackhole then recovery never hands one query the rows of another (health ping timed out behind a pipelined read)', async () => {
    // One connection, so the reads below are pipelined on it, as on a busy pool.
    const { store, proxy } = await storeBehindProxy({ poolSize: 1, callTimeoutMs: 1000 });
    assert.deepEqual(await store.getAccount('acct_1'), ACCOUNT);
    proxy.blackhole();
    const tick = () => sleep(5);
    const calls: Promise<{ ms: number; value?: unknown; error?: unknown }>[] = [];
    calls.push(outcome(store.getAccount('acct_1')));
    await tick();
    calls.push(outcome(store.ping!(300))); // /health during the outage: gives up after 300 ms
    await tick();
    calls.push(outcome(store.getAccount('acct_1')));
    await tick();
    calls.push(outcome(store.findKeyByHash('h1')));
    await tick();
    calls.push(outcome(store.keysVersion()));
    await sleep(1500);
    await proxy.heal();
    const [first, ping, second, key, version] = await Promise.all(calls);
    assert.equal(ping!.value, false);
    // Each call either failed as "unavailable" or got its own answer, never another's.
    for (const [c, expected] of [
      [first, ACCOUNT],
      [second, ACCOUNT],
      [key, KEY],
    ] as const) {
      if (c!.error === undefined) assert.deepEqual(c!.value, expected);
      else assert.ok(c!.error instanceof BackendUnavailableError, String(c!.error));
    }
    if (version!.error === undefined) assert.equal(typeof version!.value, 'number');
    await until('the store answers again', () => store.ping!(500));
    // And every later answer on the pool is the right one.
    for (let i = 0; i < 20; i++) {
      assert.deepEqual(await store.getAccount('acct_1'), ACCOUNT);
      assert.deepEqual(await store.findKeyByHash('h1'), KEY);
      assert.equal(typeof (await store.keysVersion()), 'number');
    }
  });

  test('error: during a blackhole every call fails as unavailable: the first within its deadline, the next at once, for as long as it lasts', async () => {
    const { store, proxy } = await storeBehindProxy({ callTimeoutMs: 500, probeIntervalMs: 100 });
    assert.deepEqual(await store.findKeyByHash('h1'), KEY);
    proxy.blackhole();
    const first = await outcome(store.findKeyByHash('h1'));
    assert.ok(first.error instanceof BackendUnavailableError, String(first.error));
    assert.ok(first.ms < 900, `first call failed after ${first.ms} ms`);
    // For the rest of the outage (2 s here), every call fails at once.
    const end = Date.now() + 2000;
    let calls = 0;
    while (Date.now() < end) {
      for (const p of [
        store.findKeyByHash('h2'),
        store.getAccount('acct_1'),
        store.usageTotals('k', '2026-11-22'),
      ]) {
        const c = await outcome<unknown>(p);
        assert.ok(c.error instanceof BackendUnavailableError, String(c.error));
        assert.ok(c.ms < 100, `a call during the outage took ${c.ms} ms`);
        calls++;
      }
      assert.equal(await store.ping!(300), false);
      await sleep(50);
    }
    assert.ok(calls > 20);
    await proxy.heal();
    await until(
      'the store answers again',
      async () => (await outcome(store.findKeyByHash('h1'))).error === undefined,
    );
    assert.deepEqual(await store.getAccount('acct_1'), ACCOUNT);
  });

  test('error: connections refused (server down) fail as unavailable at once; the store recovers when it is back', async () => {
    const { store, proxy } = await storeBehindProxy({ callTimeoutMs: 1000, probeIntervalMs: 100 });
    assert.deepEqual(await store.getAccount('acct_1'), ACCOUNT);
    await proxy.refuse();
    for (let i = 0; i < 10; i++) {
      const c = await outcome(store.getAccount('acct_1'));
      assert.ok(c.error instanceof BackendUnavailableError, String(c.error));
      assert.ok(c.ms < 500, `a call took ${c.ms} ms`);
    }
    await proxy.heal();
    await until(
      'the store answers again',
      async () => (await outcome(store.getAccount('acct_1'))).error === undefined,
    );
    for (let i = 0; i < 5; i++) assert.deepEqual(await store.findKeyByHash('h1'), KEY);
  });

  test('error: errors of the data (not of the connection) are not "unavailable" and leave the store serving', async () => {
    const { store } = await storeBehindProxy();
    await assert.rejects(
      store.createKey({ ...KEY, id: 'key_2' }),
      (err) => !(err instanceof BackendUnavailableError),
    );
    assert.deepEqual(await store.findKeyByHash('h1'), KEY);
  });
});
