import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { createTestApp } from '../helpers.ts';

/** docs/decisions.md "Compression and caching": compression, strong ETags with 304, Cache-Control. */
describe('compression and caching', () => {
  const LIST = '/api/v1/markets?limit=50';

  test('behavior: a data answer has a strong ETag from its data; If-None-Match gets 304, counted', async () => {
    const t = await createTestApp();
    const key = await t.key('pro');
    const first = await t.get(LIST, key);
    assert.equal(first.statusCode, 200);
    const etag = first.headers.etag as string;
    assert.match(etag, /^"[A-Za-z0-9_-]{27}"$/);
    assert.equal(first.headers['cache-control'], 'private, max-age=0, must-revalidate');
    // The same data on the next request, whatever its latency: the same tag.
    t.clock.advance(10);
    assert.equal((await t.get(LIST, key)).headers.etag, etag);
    const cached = await t.app.inject({
      url: LIST,
      headers: { authorization: `Bearer ${key}`, 'if-none-match': `W/"x", ${etag}` },
    });
    assert.equal(cached.statusCode, 304);
    assert.equal(cached.body, '');
    assert.equal(cached.headers.etag, etag);
    assert.ok(cached.headers['x-ratelimit-remaining'] !== undefined);
    // Other data, another tag: a different page, or another key's scope.
    assert.notEqual((await t.get('/api/v1/markets?chainIds=999999', key)).headers.etag, etag);
    const stale = await t.app.inject({
      url: '/api/v1/markets?chainIds=999999',
      headers: { authorization: `Bearer ${key}`, 'if-none-match': etag },
    });
    assert.equal(stale.statusCode, 200);
    // The 304 was counted like any request (docs/decisions.md "Compression and caching"): 5 requests so far.
    const quota = (await t.get('/api/v1/client/quota', key)).json();
    assert.equal(quota.data.daily.used, 5);
    await t.close();
  });

  test('behavior: every data route tags its answers; errors and client routes are not stored', async () => {
    const t = await createTestApp();
    const key = await t.key('pro');
    const id = (await t.get('/api/v1/markets?limit=1', key)).json().data[0].uniqueKey;
    for (const url of [
      `/api/v1/markets/${id}`,
      '/api/v1/markets/search?query=usdc',
      '/api/v1/risk/positions-at-risk?limit=5',
    ]) {
      const res = await t.get(url, key);
      assert.equal(res.statusCode, 200, url);
      assert.ok(res.headers.etag, url);
      assert.equal(res.headers['cache-control'], 'private, max-age=0, must-revalidate', url);
    }
    const notFound = await t.get('/api/v1/markets/morpho-1-0xdead', key);
    assert.equal(notFound.statusCode, 404);
    assert.equal(notFound.headers['cache-control'], 'no-store');
    assert.equal(notFound.headers.etag, undefined);
    assert.equal((await t.get('/api/v1/client/profile', key)).headers['cache-control'], 'no-store');
    await t.close();
  });

  test('behavior: each content-coding has its own strong ETag, and any of them revalidates', async () => {
    const t = await createTestApp();
    const key = await t.key('pro');
    const get = (headers: Record<string, string>) =>
      t.app.inject({ url: LIST, headers: { authorization: `Bearer ${key}`, ...headers } });
    const identity = (await get({})).headers.etag as string;
    const br = await get({ 'accept-encoding': 'br' });
    const gzip = await get({ 'accept-encoding': 'gzip' });
    assert.equal(br.headers['content-encoding'], 'br');
    assert.equal(br.headers.etag, `${identity.slice(0, -1)}-br"`);
    assert.equal(gzip.headers.etag, `${identity.slice(0, -1)}-gzip"`);
    for (const held of [identity, br.headers.etag as string, gzip.headers.etag as string]) {
      const again = await get({ 'accept-encoding': 'br', 'if-none-match': held });
      assert.equal(again.statusCode, 304, held);
      assert.equal(again.headers.etag, held);
    }
    const other = await get({ 'if-none-match': `${identity.slice(0, -2)}x-br"` });
    assert.equal(other.statusCode, 200);
    await t.close();
  });

  test('behavior: answers over 1 KB are compressed as the client accepts (br, gzip), smaller ones not', async () => {
    const t = await createTestApp();
    const key = await t.key('pro');
    const plain = await t.get(LIST, key);
    assert.equal(plain.headers['content-encoding'], undefined);
    const data = (body: Buffer) => JSON.parse(body.toString()).data;
    for (const [encoding, decode] of [
      ['gzip', gunzipSync],
      ['br', brotliDecompressSync],
    ] as const) {
      const res = await t.app.inject({
        url: LIST,
        headers: { authorization: `Bearer ${key}`, 'accept-encoding': encoding },
      });
      assert.equal(res.headers['content-encoding'], encoding);
      assert.match(String(res.headers.vary), /accept-encoding/i);
      assert.ok(
        res.rawPayload.length < plain.rawPayload.length,
        `${encoding}: ${res.rawPayload.length} bytes`,
      );
      assert.deepEqual(data(decode(res.rawPayload)), plain.json().data);
    }
    const small = await t.app.inject({
      url: '/api/v1/markets/morpho-1-0xdead',
      headers: { authorization: `Bearer ${key}`, 'accept-encoding': 'gzip' },
    });
    assert.equal(small.headers['content-encoding'], undefined);
    await t.close();
  });
});
