import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, afterEach, describe, test } from 'node:test';
import { GroupCommit } from '../../src/access/admission.ts';
import { RedisAdmission } from '../../src/access/redis-admission.ts';
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { ManualClock } from '../clock.ts';
import { tier } from '../contract/admission-contract.ts';
import { pgSkipReason, TestSchemas } from '../pg-helpers.ts';
import { PgProxy } from '../pg-proxy.ts';
import { deleteKeys, REDIS_URL, redisSkipReason, silentLogger, sleep } from '../redis-helpers.ts';

/**
 * Usage writes whose COMMIT reached PostgreSQL but whose answer was lost (the network cut
 * right after it, the call's deadline passed): the writer cannot tell whether the counts are
 * in, retries, and the store must still count each request once.
 */
const skip = await pgSkipReason();
const redisSkip = await redisSkipReason();
const schemas = new TestSchemas();
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => {});
});
after(() => schemas.drop());

/**
 * The server's answer to a statement that committed: a CommandComplete of an INSERT (outside a
 * transaction) or of a COMMIT, followed by ReadyForQuery with no transaction open ('I').
 */
function committed(answer: Buffer): boolean {
  const text = answer.toString('latin1');
  return /C\0\0\0.(INSERT 0 \d+|COMMIT)\0/s.test(text) && text.endsWith('Z\0\0\0\x05I');
}

/** A migrated store on a fresh schema reached through the proxy, and one reached directly (to read the truth). */
async function storesBehindProxy() {
  const proxy = await PgProxy.start();
  cleanups.push(() => proxy.close());
  const { schema, url } = await schemas.create();
  const direct = new PostgresStore(url);
  cleanups.push(() => direct.close());
  await direct.migrate();
  const store = new PostgresStore(TestSchemas.urlOf(proxy.url(url), schema), {
    callTimeoutMs: 500,
    probeIntervalMs: 100,
  });
  cleanups.push(() => store.close());
  return { store, direct, proxy };
}

/** Every request the store counted for `keyId`, all days and endpoints. */
async function counted(store: PostgresStore, keyId: string): Promise<number> {
  const rows = await store.usageByDay(keyId, '2000-01-01', '2999-12-31');
  return rows.reduce((sum, r) => sum + r.requests, 0);
}

async function until(what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await sleep(20);
  }
}

/** Runs `write` with the network cut once it has committed; resolves when `write` settles (its deadline passed). */
async function cutAfterCommit(proxy: PgProxy, write: () => Promise<unknown>): Promise<void> {
  proxy.cutAtAnswer(committed);
  await write();
}

describe('usage writes retried after a lost COMMIT answer count once', { skip: skip ?? false }, () => {
  test('error: GroupCommit (in-process admission) retries the batch whose answer was lost; the store counts it once', async () => {
    const { store, direct, proxy } = await storesBehindProxy();
    assert.equal(await store.ping(), true);
    const gc = new GroupCommit(store);
    cleanups.push(() => gc.close());
    await gc.record({ keyId: 'k', day: '2026-11-22', endpoint: 'GET /a', countedMonthly: true });
    assert.equal(await counted(direct, 'k'), 1);
    await cutAfterCommit(proxy, () =>
      gc.record({ keyId: 'k', day: '2026-11-22', endpoint: 'GET /a', countedMonthly: true }),
    );
    // The deadline passed: the writer does not know the count is in, and keeps it to retry.
    assert.equal(gc.durable, false);
    assert.equal(await counted(direct, 'k'), 2, 'the COMMIT went through');
    await proxy.heal();
    await until('the batch is written again', () => gc.durable, 8000);
    // A later batch is counted too.
    await gc.record({ keyId: 'k', day: '2026-11-22', endpoint: 'GET /b', countedMonthly: true });
    assert.equal(gc.durable, true);
    assert.equal(await counted(direct, 'k'), 3);
    assert.deepEqual(await direct.usageTotals('k', '2026-11-22'), { dayUsed: 3, monthUsed: 3 });
  });

  test('error: RedisAdmission retries the usage batch whose answer was lost; the store counts it once', {
    skip: redisSkip ?? false,
  }, async () => {
    const { store, direct, proxy } = await storesBehindProxy();
    const prefix = `t${randomUUID()}:`;
    cleanups.push(() => deleteKeys(REDIS_URL, prefix));
    const adm = new RedisAdmission({
      url: REDIS_URL,
      store,
      prefix,
      flushIntervalMs: 60_000,
      commandTimeoutMs: 1000,
      logger: silentLogger,
    });
    cleanups.push(() => adm.close());
    assert.equal(await adm.ready(3000), true);
    const t = tier(10, null, null);
    const req = { keyId: 'k', tier: t, endpoint: 'GET /a', counted: true, nowMs: Date.now() };
    assert.equal((await adm.admit(req)).ok, true);
    await cutAfterCommit(proxy, () => adm.flush());
    assert.equal(await counted(direct, 'k'), 1, 'the COMMIT went through');
    assert.equal((await adm.admit(req)).ok, true); // counted meanwhile: its own batch
    await proxy.heal();
    await until('the store answers again', () => store.ping(300), 8000);
    await adm.flush();
    assert.equal(await counted(direct, 'k'), 2);
    await adm.flush();
    assert.equal(await counted(direct, 'k'), 2);
  });

  test('error: a quota reservation whose answer was lost (Redis down) is counted once, not again by the local decision that replaced it', async () => {
    const { store, direct, proxy } = await storesBehindProxy();
    const clock = new ManualClock();
    // No Redis there: requests are admitted locally, their quotas reserved in the store.
    const adm = new RedisAdmission({
      url: 'redis://127.0.0.1:1',
      store,
      clock,
      flushIntervalMs: 60_000,
      logger: silentLogger,
    });
    cleanups.push(() => adm.close());
    clock.advance(1001); // local admissions start one second after start-up
    const t = tier(10, 100, null);
    const req = () => ({ keyId: 'k', tier: t, endpoint: 'GET /a', counted: true, nowMs: clock.now() });
    assert.equal((await adm.admit(req())).ok, true);
    assert.equal(await counted(direct, 'k'), 1);
    proxy.cutAtAnswer(committed);
    // The reservation commits, its answer is lost: the request is decided on local counts.
    assert.equal((await adm.admit(req())).ok, true);
    assert.equal(await counted(direct, 'k'), 2, 'the COMMIT went through');
    await proxy.heal();
    await until('the store answers again', () => store.ping(300), 8000);
    await adm.flush();
    assert.equal(await counted(direct, 'k'), 2);
    clock.advance(1000);
    assert.equal((await adm.admit(req())).ok, true);
    await adm.flush();
    assert.equal(await counted(direct, 'k'), 3);
  });
});
