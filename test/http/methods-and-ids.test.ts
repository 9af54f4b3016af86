import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createTestApp, GENEROUS_TIERS, type TestApp } from '../helpers.ts';

let t: TestApp;
let key: string;
before(async () => {
  t = await createTestApp({ tiers: GENEROUS_TIERS });
  key = await t.key('pro');
});
after(() => t.close());

describe('wrong method on a known path', () => {
  test('error: 405 METHOD_NOT_ALLOWED with Allow, before authentication; an unknown path stays 404', async () => {
    const cases: [string, string, string][] = [
      ['PUT', '/api/v1/markets', 'GET, HEAD, OPTIONS'],
      ['POST', '/api/v1/markets/morpho-1-0xabc', 'GET, HEAD, OPTIONS'],
      ['PATCH', '/api/v1/client/api-keys', 'GET, HEAD, OPTIONS, POST'],
      ['GET', '/api/v1/client/api-keys/key_abc', 'DELETE, OPTIONS'],
      ['DELETE', '/api/v1/health', 'GET, HEAD, OPTIONS'],
    ];
    for (const [method, url, allow] of cases) {
      const res = await t.app.inject({ method: method as 'GET', url });
      assert.equal(res.statusCode, 405, `${method} ${url}`);
      assert.equal(res.headers.allow, allow, `${method} ${url}`);
      assert.equal(res.json().error, 'METHOD_NOT_ALLOWED');
      assert.match(res.json().message, new RegExp(`^${method} is not allowed`));
    }
    const unknown = await t.app.inject({ method: 'PUT', url: '/api/v1/nothing-here' });
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json().error, 'NOT_FOUND');
    assert.equal(unknown.headers.allow, undefined);
  });

  test('error: a path of the API without its prefix is 404, its message naming the path under /api/v1', async () => {
    for (const [method, url, named] of [
      ['GET', '/health', 'GET /api/v1/health'],
      ['GET', '/markets?limit=1', 'GET /api/v1/markets'],
      ['POST', '/client/api-keys', 'POST /api/v1/client/api-keys'],
    ]) {
      const res = await t.app.inject({ method: method as 'GET', url });
      assert.equal(res.statusCode, 404, url);
      assert.equal(res.json().error, 'NOT_FOUND');
      assert.ok(res.json().message.endsWith(`The API is under /api/v1: ${named}.`), res.json().message);
    }
    // (not when the method is not one of that path's, nor for a path the API does not have)
    for (const url of ['/nothing', '/api/v1/nothing']) {
      const res = await t.app.inject({ method: 'GET', url });
      assert.equal(res.json().message, `No route GET ${url}.`);
    }
    const other = await t.app.inject({ method: 'DELETE', url: '/health' });
    assert.equal(other.json().message, 'No route DELETE /health.');
  });
});

describe('request ids', () => {
  const get = (headers: Record<string, string>) =>
    t.app.inject({ url: '/api/v1/markets?limit=1', headers: { authorization: `Bearer ${key}`, ...headers } });

  test('behavior: a valid X-Request-Id is echoed; a W3C traceparent gives its trace id', async () => {
    assert.equal((await get({ 'x-request-id': 'bot-7:run.42_a' })).headers['x-request-id'], 'bot-7:run.42_a');
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const tp = `00-${traceId}-00f067aa0ba902b7-01`;
    assert.equal((await get({ traceparent: tp })).headers['x-request-id'], traceId);
    // X-Request-Id wins over traceparent
    assert.equal((await get({ 'x-request-id': 'mine', traceparent: tp })).headers['x-request-id'], 'mine');
  });

  test('error: an invalid id is ignored and a new one generated, never echoed', async () => {
    const cases: Record<string, string>[] = [
      { 'x-request-id': 'has space' },
      { 'x-request-id': 'x'.repeat(129) },
      { 'x-request-id': 'inject\u0000' },
      { 'x-request-id': `lrds_live_${'A'.repeat(32)}` },
      { traceparent: `00-${'0'.repeat(32)}-00f067aa0ba902b7-01` },
      { traceparent: 'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' },
      { traceparent: 'garbage' },
    ];
    for (const headers of cases) {
      const id = (await get(headers)).headers['x-request-id'];
      assert.match(String(id), /^req_/, JSON.stringify(headers));
    }
  });
});
