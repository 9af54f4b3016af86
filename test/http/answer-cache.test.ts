import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import type { FastifyRequest } from 'fastify';
import { loadTiers } from '../../src/access/tiers.ts';
import { applyPrices } from '../../src/data/read-model.ts';
import { AnswerCache } from '../../src/http/answer-cache.ts';
import type { DataAnswer } from '../../src/http/serialize.ts';
import { ManualClock } from '../clock.ts';
import { createTestApp, makeMarket, makePosition, modelOf, TIERS_FILE } from '../helpers.ts';

const withoutLatency = (body: string) => body.replace(/"latencyMs":[0-9.]+/, '"latencyMs":0');

describe('answer cache: a polled answer costs a lookup while its data stands, and follows the data', () => {
  test('behavior: the same bytes while nothing moves; a price move, a second of oracle age and the scope each give the right answer', async () => {
    const clock = new ManualClock();
    const m = makeMarket();
    const live = modelOf([m, makeMarket({ chainId: 8453 })], [makePosition(m, { borrowUsd: 8_500 })], clock);
    const t = await createTestApp({ live, clock });
    const pro = await t.key('pro');
    const detail = `/api/v1/markets/${m.uniqueKey}`;
    const risk = '/api/v1/risk/positions-at-risk?healthFactorThreshold=2';

    const first = await t.get(detail, pro);
    const again = await t.get(detail, pro);
    assert.equal(again.headers.etag, first.headers.etag);
    assert.equal(withoutLatency(again.body), withoutLatency(first.body));
    // latencyMs is the request's own, written into the cached bytes.
    assert.match(again.body, /"meta":\{"latencyMs":[0-9.]+,"freshness":"/);
    const hf0 = (await t.get(risk, pro)).json().data[0].healthFactor;

    // A price move (a source update or a simulation tick): every answer shows it at once.
    applyPrices(live, [{ chainId: 1, token: m.collateralAddress, ratio: 0.5 }], clock.now());
    const moved = await t.get(detail, pro);
    assert.notEqual(moved.headers.etag, first.headers.etag);
    assert.equal(moved.json().data.collateralPrice, first.json().data.collateralPrice / 2);
    const hf1 = (await t.get(risk, pro)).json().data[0].healthFactor;
    assert.ok(Math.abs(hf1 - hf0 / 2) < 1e-6, `${hf1} vs ${hf0}`);

    // The next second: the oracle is a second older, nothing else changed.
    const health0 = moved.json().data.oracleHealth;
    clock.advance(1000);
    const later = await t.get(detail, pro);
    assert.notEqual(later.headers.etag, moved.headers.etag);
    assert.equal(later.json().data.oracleHealth.secondsSinceUpdate, health0.secondsSinceUpdate + 1);
    assert.deepEqual(
      { ...later.json().data, oracleHealth: null },
      { ...moved.json().data, oracleHealth: null },
    );

    // The caller's scope shapes the answer: a Free key's clamps never reach a Pro key.
    const free = await t.key('free');
    const list = '/api/v1/markets?limit=1000';
    const freeList = (await t.get(list, free)).json();
    assert.deepEqual(
      freeList.data.map((x: { chainId: number }) => x.chainId),
      [1],
    );
    assert.ok(freeList.meta.clamped.limit);
    const proList = (await t.get(list, pro)).json();
    assert.equal(proList.data.length, 2);
    assert.ok(proList.meta.clamped.limit);
    assert.equal(proList.meta.clamped.limit.applied, 500);
    assert.equal(freeList.meta.clamped.limit.applied, 100);
    // Parameters are normalized: the same query in another order or spelling is the same answer.
    const a = await t.get('/api/v1/markets?limit=5&protocol=morpho', pro);
    const b = await t.get('/api/v1/markets?protocol=morpho&limit=05', pro);
    assert.equal(b.headers.etag, a.headers.etag);
    await t.close();
  });
});

describe('answer cache: first pages of positions at risk', () => {
  test('behavior: first pages within the second of unchanged data are one answer, cursor included; a move gives a new one', async () => {
    const clock = new ManualClock();
    const m = makeMarket();
    const positions = Array.from({ length: 12 }, (_, i) => makePosition(m, { borrowUsd: 8_000 + i }));
    const live = modelOf([m], positions, clock);
    const t = await createTestApp({ live, clock });
    const pro = await t.key('pro');
    const url = '/api/v1/risk/positions-at-risk?healthFactorThreshold=5&limit=5';
    const first = await t.get(url, pro);
    assert.equal(first.statusCode, 200, first.body);
    assert.ok(first.json().meta.nextCursor, 'a set larger than the page: a cursor');
    clock.advance(300);
    const again = await t.get(url, pro);
    assert.equal(again.headers.etag, first.headers.etag);
    assert.equal(withoutLatency(again.body), withoutLatency(first.body));
    // Its cursor pages the set the first page took.
    const second = await t.get(`${url}&cursor=${again.json().meta.nextCursor}`, pro);
    assert.equal(second.statusCode, 200, second.body);
    assert.equal(second.json().data.length, 5);
    // The market moves: the next first page takes the set again, with its own cursor.
    applyPrices(live, [{ chainId: 1, token: m.collateralAddress, ratio: 0.9 }], clock.now());
    const moved = await t.get(url, pro);
    assert.notEqual(moved.json().meta.nextCursor, first.json().meta.nextCursor);
    assert.notEqual(moved.headers.etag, first.headers.etag);
    await t.close();
  });
});

describe('large answers from the cache', () => {
  test('behavior: written in pieces with their Content-Length; the same bytes as JSON, compressed when asked', async () => {
    const clock = new ManualClock();
    const markets = Array.from({ length: 150 }, () => makeMarket());
    const t = await createTestApp({ live: modelOf(markets, [], clock), clock });
    const key = await t.key('pro');
    const url = '/api/v1/markets?limit=150';
    for (let i = 0; i < 2; i++) {
      const res = await t.get(url, key);
      assert.equal(res.statusCode, 200);
      assert.ok(res.rawPayload.length > 48 * 1024, String(res.rawPayload.length));
      assert.equal(Number(res.headers['content-length']), res.rawPayload.length);
      assert.equal(res.headers['transfer-encoding'], undefined);
      const body = res.json();
      assert.equal(body.data.length, 150);
      assert.deepEqual(
        body.data.map((m: { uniqueKey: string }) => m.uniqueKey).sort(),
        markets.map((m) => m.uniqueKey).sort(),
      );
    }
    const gz = await t.app.inject({
      url,
      headers: { authorization: `Bearer ${key}`, 'accept-encoding': 'gzip' },
    });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.match(String(gz.headers.etag), /-gzip"$/);
    assert.equal(JSON.parse(gunzipSync(gz.rawPayload).toString()).data.length, 150);
    await t.close();
  });
});

describe('AnswerCache', () => {
  const tiers = loadTiers(TIERS_FILE);
  const request = (query: Record<string, unknown>, tier = 'pro', mode = 'live') =>
    ({
      caller: { key: { mode }, tier: tiers[tier as 'pro'] },
      routeOptions: { url: '/markets' },
      params: {},
      query,
      startedAt: performance.now(),
    }) as unknown as FastifyRequest;

  test('behavior: built once per request shape, revision and second; injective keys; bounded by bytes', () => {
    const clock = new ManualClock();
    const model = modelOf([makeMarket()], [], clock);
    const cache = new AnswerCache(64 * 1024);
    let builds = 0;
    const build =
      (size = 10): (() => DataAnswer) =>
      () => {
        builds++;
        return {
          items: [Buffer.from(`"${'x'.repeat(size)}"`)],
          list: true,
          meta: { latencyMs: 0, freshness: 'snapshot', source: 'morpho' },
        };
      };
    const now = clock.now();
    const one = cache.answer(request({ limit: 5, protocol: 'morpho' }), model, now, build());
    assert.equal(
      cache.answer(request({ protocol: 'morpho', limit: 5 }), model, now + 999 - (now % 1000), build()),
      one,
    );
    assert.equal(builds, 1);
    // Another second, another revision: computed again.
    cache.answer(request({ limit: 5, protocol: 'morpho' }), model, now + 1000, build());
    assert.equal(builds, 2);
    model.revision++;
    cache.answer(request({ limit: 5, protocol: 'morpho' }), model, now + 1000, build());
    assert.equal(builds, 3);
    // A value holding '&' and '=' is not another set of parameters; another tier or mode is another scope.
    cache.answer(request({ limit: '5&protocol=morpho' }), model, now + 1000, build());
    cache.answer(request({ limit: 5, protocol: 'morpho' }, 'free'), model, now + 1000, build());
    cache.answer(request({ limit: 5, protocol: 'morpho' }, 'pro', 'test'), model, now + 1000, build());
    assert.equal(builds, 6);
    // Bounded: 100 answers of 4 KB in a 64 KB cache keep at most 16.
    for (let i = 0; i < 100; i++) cache.answer(request({ offset: i }), model, now + 1000, build(4096));
    assert.ok(cache.size <= 16, String(cache.size));
    assert.ok(cache.size >= 10, String(cache.size));
  });
});
