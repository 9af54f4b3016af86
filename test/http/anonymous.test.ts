import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { ManualClock } from '../clock.ts';
import { createTestApp, GENEROUS_TIERS, type TestApp } from '../helpers.ts';

/**
 * Requests without a key (the OpenAPI document, docs, health, unknown paths, refused keys) are
 * bounded per client address and shed first under load; the document is served from bytes
 * built once. Over real sockets: the address is the connection's.
 */

type Reply = { status: number; headers: Headers; body: string };

async function get(base: string, path: string, headers: Record<string, string> = {}): Promise<Reply> {
  const res = await fetch(`${base}${path}`, { headers });
  return { status: res.status, headers: res.headers, body: await res.text() };
}

describe('anonymous requests over real sockets', () => {
  let t: TestApp;
  let base: string;
  let key: string;
  const clock = new ManualClock();

  before(async () => {
    t = await createTestApp({
      clock,
      tiers: GENEROUS_TIERS,
      server: { anonymous: { ratePerSecond: 1, burst: 5 } },
    });
    key = await t.key('pro');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as { port: number };
    base = `http://127.0.0.1:${port}`;
  });
  after(() => t.close());

  test('behavior: a flood without a key from one address gets 429 with Retry-After; a key holder is still served', async () => {
    const paths = ['/api/v1/openapi.json', '/api/v1/health', '/api/v1/nothing', '/docs/'];
    const flood = await Promise.all(
      Array.from({ length: 40 }, (_, i) => get(base, paths[i % paths.length]!)),
    );
    const refused = flood.filter((r) => r.status === 429);
    assert.equal(flood.length - refused.length, 5, 'the burst is served');
    assert.equal(refused.length, 35);
    for (const r of refused) {
      assert.equal(r.headers.get('retry-after'), '1');
      assert.equal(JSON.parse(r.body).error, 'RATE_LIMIT_EXCEEDED');
      assert.equal(JSON.parse(r.body).retryAfter, 1);
    }
    // The budget is spent; a paying client from the same address is not touched by it.
    const paid = await get(base, '/api/v1/markets?limit=1', { authorization: `Bearer ${key}` });
    assert.equal(paid.status, 200);
    // A made-up key is anonymous: refused for the address's budget too (not 401).
    const forged = await get(base, '/api/v1/markets', {
      authorization: `Bearer lrds_live_${'x'.repeat(32)}`,
    });
    assert.equal(forged.status, 429);
    // A second later one token is back.
    clock.advance(1_000);
    assert.equal((await get(base, '/api/v1/health')).status, 200);
    assert.equal((await get(base, '/api/v1/health')).status, 429);
  });

  test('behavior: refused keys spend the budget: 401 while it lasts, then 429', async () => {
    clock.advance(10_000);
    const bad = { authorization: `Bearer lrds_live_${'y'.repeat(32)}` };
    const answers = [];
    for (let i = 0; i < 7; i++) answers.push((await get(base, '/api/v1/markets', bad)).status);
    assert.deepEqual(answers, [401, 401, 401, 401, 401, 429, 429]);
    assert.equal(
      (await get(base, '/api/v1/markets?limit=1', { authorization: `Bearer ${key}` })).status,
      200,
    );
  });
});

describe('overload: anonymous requests are shed first', () => {
  let t: TestApp;
  let base: string;
  let key: string;
  const ANON_MS = 20;

  before(async () => {
    t = await createTestApp({
      tiers: GENEROUS_TIERS,
      server: {
        anonymous: false,
        pressure: {
          anonymousMaxEventLoopDelayMs: ANON_MS,
          maxEventLoopDelayMs: 60_000,
          sampleIntervalMs: 200,
        },
      },
    });
    key = await t.key('pro');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as { port: number };
    base = `http://127.0.0.1:${port}`;
    // Past the grace after start (two sample intervals).
    await new Promise((r) => setTimeout(r, 600));
  });
  after(() => t.close());

  test('behavior: between the two thresholds, requests without a key get 503 and a key holder 200', async () => {
    const usage = (t.app as unknown as { memoryUsage(): { eventLoopDelay: number } }).memoryUsage;
    // Hold the loop in 50 ms slices until the measured delay is past the anonymous threshold.
    const deadline = performance.now() + 10_000;
    while (usage().eventLoopDelay <= ANON_MS) {
      assert.ok(performance.now() < deadline, 'the loop delay was never measured above the threshold');
      const until = performance.now() + 50;
      while (performance.now() < until) {}
      await new Promise((r) => setImmediate(r));
    }
    const [anonymous, paid] = await Promise.all([
      get(base, '/api/v1/health'),
      get(base, '/api/v1/markets?limit=1', { authorization: `Bearer ${key}` }),
    ]);
    assert.equal(anonymous.status, 503);
    assert.ok(Number(anonymous.headers.get('retry-after')) >= 1);
    assert.equal(paid.status, 200);
  });
});

describe('the OpenAPI document is built once', () => {
  let t: TestApp;

  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  test('behavior: every request gets the same bytes and tag, in each coding, from one build', async () => {
    const first = await t.app.inject({ url: '/api/v1/openapi.json' });
    const again = await t.app.inject({ url: '/api/v1/openapi.json' });
    const br = await t.app.inject({ url: '/api/v1/openapi.json', headers: { 'accept-encoding': 'br' } });
    const gz = await t.app.inject({ url: '/api/v1/openapi.json', headers: { 'accept-encoding': 'gzip' } });
    const br2 = await t.app.inject({ url: '/api/v1/openapi.json', headers: { 'accept-encoding': 'br' } });
    assert.equal(t.app.openapiDocument.builds, 1);
    const etag = first.headers.etag as string;
    assert.match(etag, /^"[A-Za-z0-9_-]{27}"$/, 'a strong tag');
    assert.equal(again.headers.etag, etag);
    assert.ok(first.rawPayload.equals(again.rawPayload));
    assert.equal(br.headers['content-encoding'], 'br');
    assert.equal(br.headers.etag, `${etag.slice(0, -1)}-br"`);
    assert.ok(br.rawPayload.equals(br2.rawPayload), 'compressed once');
    assert.ok(brotliDecompressSync(br.rawPayload).equals(first.rawPayload));
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.ok(gunzipSync(gz.rawPayload).equals(first.rawPayload));
    assert.match(String(br.headers.vary), /accept-encoding/i);
  });

  test('behavior: 304 Not Modified for the tag of any of its codings', async () => {
    const first = await t.app.inject({ url: '/api/v1/openapi.json' });
    const etag = first.headers.etag as string;
    for (const tag of [etag, `${etag.slice(0, -1)}-br"`, `W/${etag}`]) {
      const res = await t.app.inject({
        url: '/api/v1/openapi.json',
        headers: { 'if-none-match': tag, 'accept-encoding': 'br' },
      });
      assert.equal(res.statusCode, 304, tag);
      assert.equal(res.rawPayload.length, 0);
    }
    assert.equal(t.app.openapiDocument.builds, 1);
  });

  test('behavior: the docs page answers 304 to its tag', async () => {
    const page = await t.app.inject({ url: '/docs/' });
    assert.equal(page.statusCode, 200);
    const res = await t.app.inject({
      url: '/docs/',
      headers: { 'if-none-match': page.headers.etag as string },
    });
    assert.equal(res.statusCode, 304);
  });
});
