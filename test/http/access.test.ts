import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ManualClock } from '../clock.ts';
import { createTestApp, makeMarket, makePosition, modelOf, tempDir, tiersWith } from '../helpers.ts';

const SEARCH = '/api/v1/markets/search?query=weth';

describe('rate limit', () => {
  test('behavior: a burst of 12 on a free key admits exactly 5; 600 ms later still refused; after 1 s admitted', async () => {
    const t = await createTestApp();
    const key = await t.key('free');
    const codes: number[] = [];
    for (let i = 0; i < 12; i++) codes.push((await t.get(SEARCH, key)).statusCode);
    assert.deepEqual(codes, [200, 200, 200, 200, 200, 429, 429, 429, 429, 429, 429, 429]);
    t.clock.advance(600);
    assert.equal((await t.get(SEARCH, key)).statusCode, 429);
    t.clock.advance(400);
    assert.equal((await t.get(SEARCH, key)).statusCode, 200);
    await t.close();
  });

  test('default: X-RateLimit and IETF headers on success and on errors', async () => {
    const t = await createTestApp();
    const start = t.clock.now();
    const key = await t.key('pro');
    const first = await t.get(SEARCH, key);
    assert.equal(first.headers['x-ratelimit-limit'], '20');
    assert.equal(first.headers['x-ratelimit-remaining'], '19');
    assert.equal(first.headers['x-ratelimit-reset'], String(start + 1000));
    // docs/decisions.md "Quotas in headers": every policy of a counted request; the closest to exhaustion in RateLimit.
    assert.equal(
      first.headers['ratelimit-policy'],
      '"per-second";q=20;w=1, "daily";q=10000;w=86400, "monthly";q=300000;w=2592000',
    );
    assert.equal(first.headers.ratelimit, '"per-second";r=19;t=1');
    t.clock.advance(250);
    const bad = await t.get('/api/v1/markets/search', key);
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.headers['x-ratelimit-remaining'], '18');
    // the oldest request in the window (at start) leaves it at start + 1000
    assert.equal(bad.headers['x-ratelimit-reset'], String(start + 1000));
    await t.close();
  });

  test('behavior: RateLimit names the quota closest to exhaustion, r=0 on its 429; unlimited quotas and uncounted routes list only what applies (docs/decisions.md "Quotas in headers")', async () => {
    const tiers = tiersWith((t) => {
      t.pro!.dailyQuota = 4;
      t.pro!.monthlyQuota = 100;
    });
    const t = await createTestApp({ tiers });
    // 12:00 UTC on the test clock's day: 43,200 s to midnight.
    const key = await t.key('pro');
    const policy = '"per-second";q=20;w=1, "daily";q=4;w=86400, "monthly";q=100;w=2592000';
    const first = await t.get(SEARCH, key);
    assert.equal(first.headers['ratelimit-policy'], policy);
    // daily: 3 of 4 left (0.75) against 19 of 20 a second (0.95) and 99 of 100 a month
    assert.equal(first.headers.ratelimit, '"daily";r=3;t=43200');
    for (let i = 0; i < 3; i++) await t.get(SEARCH, key);
    const refused = await t.get(SEARCH, key);
    assert.equal(refused.statusCode, 429);
    assert.equal(refused.json().error, 'DAILY_QUOTA_EXCEEDED');
    assert.equal(refused.headers['ratelimit-policy'], policy);
    assert.equal(refused.headers.ratelimit, '"daily";r=0;t=43200');
    // Client routes are not counted: only the per-second window applies to them.
    const client = await t.get('/api/v1/client/quota', key);
    assert.equal(client.headers['ratelimit-policy'], '"per-second";q=20;w=1');
    assert.match(String(client.headers.ratelimit), /^"per-second";r=\d+;t=1$/);
    // A tie (no request left either way) names the later reset: the one the client waits for.
    const tight = await createTestApp({
      tiers: tiersWith((tt) => {
        tt.free!.ratePerSecond = 2;
        tt.free!.dailyQuota = 2;
      }),
    });
    const fk = await tight.key('free');
    await tight.get(SEARCH, fk);
    const second = await tight.get(SEARCH, fk);
    assert.equal(second.statusCode, 200);
    assert.equal(second.headers.ratelimit, '"daily";r=0;t=43200');
    await tight.close();
    // Enterprise: no quota, so only the window.
    const ent = await t.key('enterprise');
    const e = await t.get(SEARCH, ent);
    assert.match(String(e.headers['ratelimit-policy']), /^"per-second";q=\d+;w=1$/);
    await t.close();
  });

  test('error: 429 body and Retry-After', async () => {
    const t = await createTestApp();
    const key = await t.key('free');
    for (let i = 0; i < 5; i++) await t.get(SEARCH, key);
    t.clock.advance(588);
    const res = await t.get(SEARCH, key);
    assert.equal(res.statusCode, 429);
    assert.deepEqual(res.json(), {
      error: 'RATE_LIMIT_EXCEEDED',
      message: 'Rate limit of 5 requests per second exceeded; retry after 0.412 s',
      retryAfter: 0.412,
    });
    assert.equal(res.headers['retry-after'], '1');
    assert.equal(res.headers['x-ratelimit-remaining'], '0');
    await t.close();
  });

  test('behavior: refused requests take no slot', async () => {
    const t = await createTestApp();
    const key = await t.key('free');
    for (let i = 0; i < 5; i++) await t.get(SEARCH, key);
    for (let i = 0; i < 20; i++) {
      t.clock.advance(40); // hammer through 800 ms of refusals
      assert.equal((await t.get(SEARCH, key)).statusCode, 429);
    }
    t.clock.advance(200); // 1000 ms after the first five: all five slots free again
    for (let i = 0; i < 5; i++) assert.equal((await t.get(SEARCH, key)).statusCode, 200);
    await t.close();
  });

  test('behavior: client routes are rate limited', async () => {
    const t = await createTestApp();
    const key = await t.key('free');
    const codes: number[] = [];
    for (let i = 0; i < 6; i++) codes.push((await t.get('/api/v1/client/quota', key)).statusCode);
    assert.deepEqual(codes, [200, 200, 200, 200, 200, 429]);
    await t.close();
  });
});

describe('quotas', () => {
  const small = tiersWith((t) => {
    t.free!.dailyQuota = 3;
    t.free!.monthlyQuota = 5;
    t.free!.ratePerSecond = 100;
  });

  test('behavior: daily quota refuses with limit and used, counting refused requests', async () => {
    const t = await createTestApp({ tiers: small });
    const key = await t.key('free');
    for (let i = 0; i < 3; i++) assert.equal((await t.get(SEARCH, key)).statusCode, 200);
    const res = await t.get(SEARCH, key);
    assert.equal(res.statusCode, 429);
    assert.deepEqual(res.json(), {
      error: 'DAILY_QUOTA_EXCEEDED',
      message: 'Daily quota of 3 requests exceeded; it resets at 00:00 UTC.',
      limit: 3,
      used: 4,
    });
    // 12:00 UTC: 12 hours to midnight
    assert.equal(res.headers['retry-after'], String(12 * 3600));
    assert.equal((await t.get(SEARCH, key)).json().used, 5);
    await t.close();
  });

  test('behavior: the day resets at 00:00 UTC; the month at 00:00 UTC on the 1st', async () => {
    const clock = new ManualClock('2026-11-29T23:59:59.000Z');
    const t = await createTestApp({ tiers: small, clock });
    const key = await t.key('free');
    for (let i = 0; i < 3; i++) assert.equal((await t.get(SEARCH, key)).statusCode, 200);
    assert.equal((await t.get(SEARCH, key)).json().error, 'DAILY_QUOTA_EXCEEDED');
    clock.set('2026-11-30T00:00:00.000Z');
    assert.equal((await t.get(SEARCH, key)).statusCode, 200);
    assert.equal((await t.get(SEARCH, key)).statusCode, 200);
    // monthly: 3 + 2 = 5 counted; the 6th exceeds the month
    const month = await t.get(SEARCH, key);
    assert.equal(month.statusCode, 429);
    assert.deepEqual(month.json(), {
      error: 'MONTHLY_QUOTA_EXCEEDED',
      message: 'Monthly quota of 5 requests exceeded; it resets on the 1st at 00:00 UTC.',
      limit: 5,
      used: 6,
    });
    clock.set('2026-12-01T00:00:00.000Z');
    assert.equal((await t.get(SEARCH, key)).statusCode, 200);
    await t.close();
  });

  test('behavior: a daily refusal does not count toward the month', async () => {
    const clock = new ManualClock('2026-11-10T10:00:00Z');
    const t = await createTestApp({ tiers: small, clock });
    const key = await t.key('free');
    for (let i = 0; i < 10; i++) await t.get(SEARCH, key); // 3 admitted, 7 refused daily
    clock.set('2026-11-11T10:00:00Z');
    // month has 3; two more fit
    assert.equal((await t.get(SEARCH, key)).statusCode, 200);
    assert.equal((await t.get(SEARCH, key)).statusCode, 200);
    assert.equal((await t.get(SEARCH, key)).json().error, 'MONTHLY_QUOTA_EXCEEDED');
    await t.close();
  });

  test('behavior: 400, 403 and 404 answers are counted; client routes are not', async () => {
    const t = await createTestApp({ tiers: small });
    const key = await t.key('free');
    assert.equal((await t.get('/api/v1/markets/search', key)).statusCode, 400);
    assert.equal((await t.get('/api/v1/risk/positions-at-risk', key)).statusCode, 403);
    assert.equal((await t.get(`/api/v1/markets/morpho-1-0x${'0'.repeat(64)}`, key)).statusCode, 404);
    for (let i = 0; i < 5; i++) assert.equal((await t.get('/api/v1/client/quota', key)).statusCode, 200);
    const quota = (await t.get('/api/v1/client/quota', key)).json().data;
    assert.deepEqual(quota.daily, { limit: 3, used: 3, remaining: 0, resetAt: '2026-11-23T00:00:00.000Z' });
    assert.equal((await t.get(SEARCH, key)).json().error, 'DAILY_QUOTA_EXCEEDED');
    await t.close();
  });

  test('behavior: counts survive a restart (a new process on the same store file)', async () => {
    const { join } = await import('node:path');
    const { SqliteStore } = await import('../../src/store/sqlite/sqlite-store.ts');
    const file = join(tempDir(), 'lrds.db');
    const clock = new ManualClock();
    const first = await createTestApp({ tiers: small, clock, store: new SqliteStore(file) });
    const key = await first.key('free');
    for (let i = 0; i < 2; i++) assert.equal((await first.get(SEARCH, key)).statusCode, 200);
    await first.close();
    const second = await createTestApp({ tiers: small, clock, store: new SqliteStore(file) });
    assert.equal((await second.get(SEARCH, key)).statusCode, 200);
    const res = await second.get(SEARCH, key);
    assert.equal(res.json().error, 'DAILY_QUOTA_EXCEEDED');
    assert.equal(res.json().used, 4);
    await second.close();
  });
});

describe('tier matrix (the launch values in config/tiers.json)', () => {
  const m1 = makeMarket();
  const m2 = makeMarket({ chainId: 8453 });
  const clock = new ManualClock();
  const live = modelOf(
    Array.from({ length: 120 }, (_, i) => (i === 0 ? m1 : i === 1 ? m2 : makeMarket({ supply: 1000 + i }))),
    [makePosition(m1)],
    clock,
  );
  const rows = [
    { tier: 'free', rate: 5, daily: 1000, monthly: 10000, cap: 100, risk: 403, chain8453: 403 },
    { tier: 'pro', rate: 20, daily: 10000, monthly: 300000, cap: 500, risk: 200, chain8453: 200 },
    { tier: 'enterprise', rate: 100, daily: null, monthly: null, cap: null, risk: 200, chain8453: 200 },
  ] as const;
  for (const row of rows) {
    test(`behavior: ${row.tier}`, async () => {
      const t = await createTestApp({ live, clock });
      const key = await t.key(row.tier);
      const q = (await t.get('/api/v1/client/quota', key)).json().data;
      assert.equal(q.rateLimit.perSecond, row.rate);
      assert.equal(q.daily.limit, row.daily);
      assert.equal(q.monthly.limit, row.monthly);
      assert.equal(q.resultCap, row.cap);
      assert.equal((await t.get('/api/v1/risk/positions-at-risk', key)).statusCode, row.risk);
      assert.equal((await t.get(`/api/v1/markets/${m2.uniqueKey}`, key)).statusCode, row.chain8453);
      const list = (await t.get('/api/v1/markets?limit=5000', key)).json();
      // the stricter of the route maximum (1,000) and the tier cap
      assert.deepEqual(list.meta.clamped.limit, {
        requested: 5000,
        applied: Math.min(1000, row.cap ?? 1000),
      });
      assert.equal(list.data.length, Math.min(120, row.cap ?? 1000));
      assert.equal(q.historyDays, row.tier === 'free' ? 30 : row.tier === 'pro' ? 90 : null);
      await t.close();
    });
  }

  test('behavior: another tier file changes the behaviour', async () => {
    const custom = tiersWith((t) => {
      t.free!.ratePerSecond = 2;
      t.free!.categories = ['core', 'risk'];
      t.free!.chains = [1, 8453];
      t.free!.resultCap = 1;
    });
    const t = await createTestApp({ live, clock, tiers: custom });
    const key = await t.key('free');
    assert.equal((await t.get('/api/v1/risk/positions-at-risk', key)).statusCode, 200);
    assert.equal((await t.get(`/api/v1/markets/${m2.uniqueKey}`, key)).statusCode, 200);
    assert.equal((await t.get(`/api/v1/markets/${m2.uniqueKey}`, key)).statusCode, 429);
    clock.advance(1000);
    assert.equal((await t.get(`/api/v1/markets/${m2.uniqueKey}`, key)).statusCode, 200);
    const list = (await t.get('/api/v1/markets', key)).json();
    assert.equal(list.data.length, 1);
    await t.close();
  });

  test('behavior: a tier change takes effect on the next request after the key cache refresh', async () => {
    const t = await createTestApp({ live, clock });
    const key = await t.key('free');
    assert.equal((await t.get('/api/v1/risk/positions-at-risk', key)).statusCode, 403);
    const id = (await t.get('/api/v1/client/profile', key)).json().data.key.id;
    await t.store.setKeyTier(id, 'pro');
    await t.keys.refresh();
    assert.equal((await t.get('/api/v1/risk/positions-at-risk', key)).statusCode, 200);
    await t.close();
  });
});

describe('live and test keys', () => {
  test('behavior: test keys are served the sandbox, live keys the live store', async () => {
    const clock = new ManualClock();
    const liveMarket = makeMarket({ label: 'live market' });
    const sandboxMarket = makeMarket({ label: 'sandbox market' });
    const t = await createTestApp({
      clock,
      live: modelOf([liveMarket], [], clock),
      sandbox: modelOf([sandboxMarket], [makePosition(sandboxMarket)], clock),
    });
    const live = await t.key('pro', 'live');
    const test = await t.key('pro', 'test');
    assert.match(live, /^lrds_live_[0-9A-Za-z]{32}$/);
    assert.match(test, /^lrds_test_[0-9A-Za-z]{32}$/);
    const l = (await t.get('/api/v1/markets', live)).json();
    const s = (await t.get('/api/v1/markets', test)).json();
    assert.deepEqual(
      l.data.map((m: { label: string }) => m.label),
      ['live market'],
    );
    assert.deepEqual(
      s.data.map((m: { label: string }) => m.label),
      ['sandbox market'],
    );
    assert.equal(s.meta.freshness, 'snapshot');
    assert.equal((await t.get(`/api/v1/markets/${liveMarket.uniqueKey}`, test)).statusCode, 404);
    await t.close();
  });
});
