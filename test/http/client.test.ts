import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DAY_MS } from '../../src/domain/periods.ts';
import { ManualClock } from '../clock.ts';
import { createTestApp, GENEROUS_TIERS, tiersWith } from '../helpers.ts';

describe('client self-service', () => {
  test('default: profile names the account, key and tier', async () => {
    const t = await createTestApp();
    const key = await t.key('pro', 'live', 'fund-a');
    const { data, meta } = (await t.get('/api/v1/client/profile', key)).json();
    assert.equal(data.account.name, 'fund-a');
    assert.equal(data.key.prefix, key.slice(0, 14));
    assert.equal(data.key.mode, 'live');
    assert.deepEqual(data.tier, { id: 'pro', name: 'Pro' });
    assert.equal(meta.freshness, 'live');
    assert.ok(!JSON.stringify(data).includes(key.slice(14)));
    await t.close();
  });

  test('behavior: create shows the key once; list never shows it; the new key works at once', async () => {
    const t = await createTestApp({ tiers: GENEROUS_TIERS });
    const key = await t.key('pro');
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/client/api-keys',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      payload: { name: 'bot 1' },
    });
    assert.equal(created.statusCode, 201);
    const d = created.json().data;
    assert.match(d.key, /^lrds_live_[0-9A-Za-z]{32}$/);
    assert.equal(d.prefix, d.key.slice(0, 14));
    assert.equal(d.tier, 'pro');
    assert.equal(d.name, 'bot 1');
    const list = (await t.get('/api/v1/client/api-keys', key)).json().data;
    assert.equal(list.length, 2);
    assert.ok(!JSON.stringify(list).includes(d.key));
    assert.ok(!JSON.stringify(list).includes(key));
    assert.equal((await t.get('/api/v1/markets', d.key)).statusCode, 200);
    await t.close();
  });

  test('behavior: a test key creates test keys only; a live key may create a test key', async () => {
    const t = await createTestApp({ tiers: GENEROUS_TIERS });
    const post = (key: string, payload: object) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/client/api-keys',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        payload,
      });
    const testKey = await t.key('pro', 'test');
    assert.match((await post(testKey, {})).json().data.key, /^lrds_test_/);
    const refused = await post(testKey, { mode: 'live' });
    assert.equal(refused.statusCode, 400);
    assert.equal(refused.json().details[0].parameter, 'mode');
    const liveKey = await t.key('pro', 'live');
    assert.match((await post(liveKey, { mode: 'test' })).json().data.key, /^lrds_test_/);
    const bad = await post(liveKey, { mode: 'prod', extra: 1 });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().error, 'INVALID_PARAMETER');
    await t.close();
  });

  test('behavior: self-service is capped per account: active keys per tier, and creations per 24 hours', async () => {
    const tiers = tiersWith((all) => {
      for (const t of Object.values(all)) t.ratePerSecond = 1_000_000;
    });
    const t = await createTestApp({ tiers });
    const free = tiers.free;
    assert.equal(free.maxKeysPerAccount, 2);
    assert.equal(free.keyCreationsPerDay, 5);
    const owner = await t.key('free', 'live', 'acme'); // creation 1, active 1
    const post = () =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/client/api-keys',
        headers: { authorization: `Bearer ${owner}`, 'content-type': 'application/json' },
        payload: {},
      });
    const revoke = (id: string) =>
      t.app.inject({
        method: 'DELETE',
        url: `/api/v1/client/api-keys/${id}`,
        headers: { authorization: `Bearer ${owner}` },
      });
    let created = await post(); // creation 2, active 2
    assert.equal(created.statusCode, 201);
    const full = await post();
    assert.equal(full.statusCode, 403);
    const { message, ...rest } = full.json() as { message: string };
    assert.deepEqual(rest, { error: 'KEY_LIMIT_REACHED', tier: 'free', limit: 2 });
    assert.match(message, /holds 2 active Free live keys/);
    // revoking frees a place, but every creation counts toward the daily limit
    for (let n = 3; n <= 5; n++) {
      assert.equal((await revoke(created.json().data.id)).statusCode, 200);
      created = await post();
      assert.equal(created.statusCode, 201, `creation ${n}`);
    }
    assert.equal((await revoke(created.json().data.id)).statusCode, 200);
    t.clock.advance(60_000);
    const churn = await post();
    assert.equal(churn.statusCode, 429);
    assert.equal(churn.json().error, 'KEY_CREATION_RATE_EXCEEDED');
    assert.equal(churn.json().limit, 5);
    // the oldest creation leaves the 24-hour window 60 s short of a day from now
    assert.equal(churn.json().retryAfter, (DAY_MS - 60_000) / 1000);
    assert.equal(churn.headers['retry-after'], String((DAY_MS - 60_000) / 1000));
    t.clock.advance(DAY_MS - 60_000 + 1);
    assert.equal((await post()).statusCode, 201);
    // the live keys of the account never exceed the cap, so neither does its rate or quota
    const active = (await t.store.listKeys()).filter((k) => k.revokedAt === null);
    assert.equal(active.length, 2);
    // test keys are capped apart: a test key of the account cannot use up the live keys' room
    const testKey = await t.key('free', 'test', 'acme');
    const postTest = () =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/client/api-keys',
        headers: { authorization: `Bearer ${testKey}`, 'content-type': 'application/json' },
        payload: {},
      });
    assert.equal((await postTest()).statusCode, 201);
    assert.equal((await postTest()).statusCode, 403);
    await post(); // the live side is as it was: full
    assert.equal(
      (await t.store.listKeys()).filter((k) => k.revokedAt === null && k.mode === 'live').length,
      2,
    );
    await t.close();
  });

  test('behavior: a test key sees and revokes only test keys; a live key of the account is 404 to it', async () => {
    const t = await createTestApp({ tiers: GENEROUS_TIERS });
    const live = await t.key('pro', 'live', 'fund-a');
    const testKey = await t.key('pro', 'test', 'fund-a');
    const otherTest = await t.key('pro', 'test', 'fund-a');
    const idOf = async (key: string) => (await t.get('/api/v1/client/profile', key)).json().data.key.id;
    const [liveId, otherTestId] = [await idOf(live), await idOf(otherTest)];
    const del = (key: string, id: string) =>
      t.app.inject({
        method: 'DELETE',
        url: `/api/v1/client/api-keys/${id}`,
        headers: { authorization: `Bearer ${key}` },
      });

    const seenByTest = (await t.get('/api/v1/client/api-keys', testKey)).json().data;
    assert.deepEqual(
      seenByTest.map((k: { mode: string }) => k.mode),
      ['test', 'test'],
    );
    assert.ok(!seenByTest.some((k: { id: string }) => k.id === liveId));
    assert.equal((await t.get('/api/v1/client/api-keys', live)).json().data.length, 3);

    const refused = await del(testKey, liveId);
    assert.equal(refused.statusCode, 404);
    assert.equal(refused.json().error, 'KEY_NOT_FOUND');
    assert.equal((await t.get('/api/v1/markets', live)).statusCode, 200, 'the live key still works');

    assert.equal((await del(testKey, otherTestId)).statusCode, 200);
    assert.equal((await t.get('/api/v1/markets', otherTest)).statusCode, 401);
    await t.close();
  });

  test('behavior: a revoked key is refused from its next request; other accounts are out of reach', async () => {
    const t = await createTestApp({ tiers: GENEROUS_TIERS });
    const admin = await t.key('pro', 'live', 'fund-a');
    const bot = await t.key('pro', 'live', 'fund-a');
    const stranger = await t.key('pro', 'live', 'fund-b');
    const botId = (await t.get('/api/v1/client/profile', bot)).json().data.key.id;
    const strangerId = (await t.get('/api/v1/client/profile', stranger)).json().data.key.id;
    const del = (key: string, id: string) =>
      t.app.inject({
        method: 'DELETE',
        url: `/api/v1/client/api-keys/${id}`,
        headers: { authorization: `Bearer ${key}` },
      });
    const other = await del(admin, strangerId);
    assert.equal(other.statusCode, 404);
    assert.equal(other.json().error, 'KEY_NOT_FOUND');
    const res = await del(admin, botId);
    assert.equal(res.statusCode, 200);
    assert.ok(res.json().data.revokedAt);
    assert.equal((await t.get('/api/v1/markets', bot)).statusCode, 401);
    assert.equal((await t.get('/api/v1/markets', stranger)).statusCode, 200);
    // revoking again is idempotent
    assert.equal((await del(admin, botId)).json().data.revokedAt, res.json().data.revokedAt);
    await t.close();
  });

  test('behavior: usage per UTC day and endpoint, startDate raised to the history window', async () => {
    const clock = new ManualClock('2026-11-20T12:00:00Z');
    const t = await createTestApp({ tiers: GENEROUS_TIERS, clock });
    const key = await t.key('free');
    await t.get('/api/v1/markets', key);
    await t.get('/api/v1/markets/search?query=weth', key);
    clock.set('2026-11-22T12:00:00Z');
    await t.get('/api/v1/markets', key);
    await t.get('/api/v1/markets', key);
    await t.get('/api/v1/client/quota', key); // not counted
    const res = (await t.get('/api/v1/client/usage?startDate=2020-01-01', key)).json();
    assert.deepEqual(res.data, [
      {
        date: '2026-11-20',
        requests: 2,
        endpoints: [
          { endpoint: 'GET /api/v1/markets', requests: 1 },
          { endpoint: 'GET /api/v1/markets/search', requests: 1 },
        ],
      },
      { date: '2026-11-22', requests: 2, endpoints: [{ endpoint: 'GET /api/v1/markets', requests: 2 }] },
    ]);
    // free: 30 days of history
    assert.deepEqual(res.meta.clamped, {
      startDate: { requested: '2020-01-01T00:00:00.000Z', applied: '2026-10-23T12:00:00.000Z' },
    });
    const recent = (await t.get('/api/v1/client/usage?startDate=2026-11-21', key)).json();
    assert.deepEqual(
      recent.data.map((d: { date: string }) => d.date),
      ['2026-11-22'],
    );
    assert.equal(recent.meta.clamped, undefined);
    for (const value of ['yesterday', '2026-02-30', '2026-13-01T00:00']) {
      const bad = await t.get(`/api/v1/client/usage?startDate=${value}`, key);
      assert.equal(bad.statusCode, 400, value);
      assert.equal(bad.json().details[0].parameter, 'startDate');
    }
    // a date-time without an offset is UTC, whatever the server's zone
    const utc = (await t.get('/api/v1/client/usage?startDate=2026-11-21T00:00', key)).json();
    assert.equal(utc.meta.clamped, undefined);
    assert.deepEqual(
      utc.data.map((d: { date: string }) => d.date),
      ['2026-11-22'],
    );
    await t.close();
  });

  test('default: quota dashboard with remaining and reset times', async () => {
    const clock = new ManualClock('2026-02-28T23:00:00Z');
    const t = await createTestApp({ clock });
    const key = await t.key('free');
    await t.get('/api/v1/markets', key);
    const q = (await t.get('/api/v1/client/quota', key)).json().data;
    assert.deepEqual(q.tier, { id: 'free', name: 'Free' });
    assert.deepEqual(q.daily, { limit: 1000, used: 1, remaining: 999, resetAt: '2026-03-01T00:00:00.000Z' });
    assert.deepEqual(q.monthly, {
      limit: 10000,
      used: 1,
      remaining: 9999,
      resetAt: '2026-03-01T00:00:00.000Z',
    });
    assert.equal(q.rateLimit.perSecond, 5);
    assert.equal(q.rateLimit.remaining, 3);
    assert.deepEqual(q.chains, [1]);
    assert.deepEqual(q.categories, ['core', 'position', 'portfolio']);
    await t.close();
  });
});
