import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { BackendUnavailableError } from '../../src/access/admission.ts';
import { ManualClock } from '../clock.ts';
import { createTestApp, makeMarket, makePosition, modelOf, type TestApp, tiersWith } from '../helpers.ts';
import { call, metaOf, type Served, serve } from './helpers.ts';

/**
 * The MCP server behind the access pipeline: the same key as every route (401 without, 403 for a
 * tier without the agent category); each tool call counted once against the key's quotas and
 * refused like a request once they are spent; the tier's clamps on tool arguments.
 */

const clock = new ManualClock('2026-11-22T12:00:00Z');
const eth = makeMarket({ lltv: 0.8 });
const base = makeMarket({ chainId: 8453, lltv: 0.8 });
const arb = makeMarket({ chainId: 42161, lltv: 0.8 });
const positions = [eth, base, arb].flatMap((m) => [
  makePosition(m, { collateralUsd: 1_000, borrowUsd: 900 }),
  makePosition(m, { collateralUsd: 13_000, borrowUsd: 10_000 }),
]);
const live = modelOf([eth, base, arb], positions, clock);

/** Enterprise with a result cap of 2, chains 1 and 8453 and a daily quota of 10: clamps and quotas to see. */
const DAILY_QUOTA = 10;
const tiers = tiersWith((tiers) => {
  Object.assign(tiers.enterprise!, {
    ratePerSecond: 1_000_000,
    resultCap: 2,
    chains: [1, 8453],
    dailyQuota: DAILY_QUOTA,
  });
  tiers.pro!.ratePerSecond = 1_000_000;
});

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

let t: TestApp;
let served: Served;
const clients: Client[] = [];

before(async () => {
  t = await createTestApp({ clock, live, tiers });
  served = await serve(t);
});
after(async () => {
  for (const c of clients) await c.close();
  await t.close();
});

async function agent(key: string): Promise<Client> {
  const client = await served.connect(key);
  clients.push(client);
  return client;
}

/** One JSON-RPC message POSTed as an MCP client sends it, over the socket. */
function post(body: unknown, key?: string, url = served.url): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
    },
    body: JSON.stringify(body),
  });
}

async function usedToday(key: string): Promise<number> {
  const res = await t.get('/api/v1/client/quota', key);
  assert.equal(res.statusCode, 200);
  return res.json().data.daily.used;
}

describe('MCP server: authentication and tiers', () => {
  test('error: without a key, 401 UNAUTHORIZED as on every route', async () => {
    const res = await post(INITIALIZE);
    assert.equal(res.status, 401);
    assert.match(String(res.headers.get('www-authenticate')), /^Bearer/);
    assert.deepEqual(await res.json(), {
      error: 'UNAUTHORIZED',
      message: 'A valid API key is required: send it as "Authorization: Bearer <API_KEY>".',
    });
    await assert.rejects(agent(`lrds_live_${'A'.repeat(32)}`), (err) => {
      assert.ok(err instanceof StreamableHTTPError);
      assert.equal(err.code, 401);
      return true;
    });
  });

  test('error: a Pro key, 403 TIER_FORBIDDEN: the agent category is Enterprise only', async () => {
    const pro = await t.key('pro');
    const res = await post(INITIALIZE, pro);
    assert.equal(res.status, 403);
    assert.deepEqual(await res.json(), {
      error: 'TIER_FORBIDDEN',
      message: "The pro tier does not include the 'agent' endpoints.",
      tier: 'pro',
      category: 'agent',
    });
    await assert.rejects(agent(pro), (err) => {
      assert.ok(err instanceof StreamableHTTPError);
      assert.equal(err.code, 403);
      return true;
    });
  });

  test('error: a Pro key calling a tool is counted (quota before category, as on every route), then 403', async () => {
    const pro = await t.key('pro');
    const res = await post(
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'search_markets', arguments: { query: 'weth' } },
      },
      pro,
    );
    assert.equal(res.status, 403);
    assert.equal(((await res.json()) as { error: string }).error, 'TIER_FORBIDDEN');
    assert.match(String(res.headers.get('ratelimit-policy')), /"daily"/);
    const quota = (await t.get('/api/v1/client/quota', pro)).json().data;
    assert.equal(quota.daily.used, 1);
  });

  test('error: a body that cannot be read is refused after the access checks: 403 for a Pro key, else 400 or 415 with the rate headers', async () => {
    const pro = await t.key('pro');
    const key = await t.key('enterprise');
    const send = (body: string, type: string, k: string) =>
      fetch(served.url, {
        method: 'POST',
        headers: {
          'content-type': type,
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${k}`,
        },
        body,
      });
    for (const [body, type, status, error] of [
      ['{"jsonrpc":', 'application/json', 400, 'INVALID_PARAMETER'],
      ['hello', 'text/plain', 415, 'UNSUPPORTED_MEDIA_TYPE'],
    ] as const) {
      const refused = await send(body, type, pro);
      assert.equal(refused.status, 403, `${type} from a Pro key`);
      assert.equal(((await refused.json()) as { error: string }).error, 'TIER_FORBIDDEN');
      const res = await send(body, type, key);
      assert.equal(res.status, status, type);
      assert.equal(((await res.json()) as { error: string }).error, error);
      assert.ok(res.headers.get('x-ratelimit-remaining'), 'admitted: rate headers');
    }
    // neither counted: no tool call in them
    assert.equal(await usedToday(key), 0);
  });

  test('error: the limiter unreachable: the first call (admitted with the request) is HTTP 503, a later call of the batch a tool error', async () => {
    const key = await t.key('enterprise');
    const admit = t.admission.admit.bind(t.admission);
    const batch = [1, 2].map((id) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'search_markets', arguments: { query: 'weth', limit: 1 } },
    }));
    let calls = 0;
    let failFrom = 1;
    t.admission.admit = async (req) => {
      if (++calls >= failFrom) throw new BackendUnavailableError('limiter down');
      return admit(req);
    };
    try {
      const res = await post(batch, key);
      assert.equal(res.status, 503);
      assert.equal(res.headers.get('retry-after'), '1');
      assert.equal(((await res.json()) as { error: string }).error, 'SERVICE_UNAVAILABLE');
      calls = 0;
      failFrom = 2;
      const partial = await post(batch, key);
      assert.equal(partial.status, 200);
      const answers = (await partial.json()) as {
        result: { isError?: boolean; structuredContent: { error?: string } };
      }[];
      assert.deepEqual(
        answers.map((a) => [a.result.isError ?? false, a.result.structuredContent.error]),
        [
          [false, undefined],
          [true, 'SERVICE_UNAVAILABLE'],
        ],
      );
    } finally {
      t.admission.admit = admit;
    }
  });

  test('behavior: an Enterprise key connects; GET and DELETE are 405 (stateless server)', async () => {
    const key = await t.key('enterprise');
    const client = await agent(key);
    assert.equal(client.getServerVersion()?.name, 'lending-risk-data-service');
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(served.url, { method, headers: { authorization: `Bearer ${key}` } });
      assert.equal(res.status, 405, method);
      assert.equal(((await res.json()) as { error: string }).error, 'METHOD_NOT_ALLOWED');
      assert.match(String(res.headers.get('allow')), /POST/);
    }
  });
});

describe('MCP server: counting', () => {
  test('behavior: each tool call counts one request; initialize, ping and tools/list none', async () => {
    const key = await t.key('enterprise');
    const client = await agent(key);
    await client.listTools();
    await client.ping();
    assert.equal(await usedToday(key), 0);
    await call(client, 'search_markets', { query: 'weth' });
    assert.equal(await usedToday(key), 1);
    await call(client, 'positions_at_risk', {});
    // refused by the query (404 over HTTP): counted, as a 404 is
    const missing = await call(client, 'get_market', { marketId: 'morpho-1-0xff' });
    assert.equal(missing.body.error, 'MARKET_NOT_FOUND');
    assert.equal(await usedToday(key), 3);
    const usage = (await t.get('/api/v1/client/usage', key)).json().data;
    assert.deepEqual(
      usage[0].endpoints
        .map((e: { endpoint: string; requests: number }) => `${e.endpoint} ${e.requests}`)
        .sort(),
      ['MCP get_market 1', 'MCP positions_at_risk 1', 'MCP search_markets 1'],
    );
  });

  test('error: the daily quota spent, a tool call is a tool error DAILY_QUOTA_EXCEEDED with retryAfter', async () => {
    const key = await t.key('enterprise');
    const client = await agent(key);
    for (let i = 0; i < DAILY_QUOTA; i++) {
      const ok = await call(client, 'search_markets', { query: 'weth', limit: 1 });
      assert.equal(ok.isError, false, `call ${i + 1}`);
    }
    assert.equal(await usedToday(key), DAILY_QUOTA);
    const refused = await client.callTool({ name: 'get_market', arguments: { marketId: eth.uniqueKey } });
    assert.equal(refused.isError, true);
    const text = (refused.content as { type: string; text: string }[])[0]!.text;
    assert.match(text, /DAILY_QUOTA_EXCEEDED/);
    assert.match(text, /"retryAfter":43200/); // 12:00 UTC: 12 hours until the quota resets
    assert.deepEqual(refused.structuredContent, {
      error: 'DAILY_QUOTA_EXCEEDED',
      message: `Daily quota of ${DAILY_QUOTA} requests exceeded; it resets at 00:00 UTC.`,
      limit: DAILY_QUOTA,
      used: DAILY_QUOTA + 1,
      retryAfter: 43_200,
    });
    // The same counter as HTTP's: the routes refuse the key too.
    const route = await t.get('/api/v1/markets', key);
    assert.equal(route.statusCode, 429);
    assert.equal(route.json().error, 'DAILY_QUOTA_EXCEEDED');
    // The protocol still answers (not counted), and the answer's rate headers name the spent quota.
    assert.equal((await client.listTools()).tools.length, 6);
    const raw = await post(
      {
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: { name: 'search_markets', arguments: { query: 'x' } },
      },
      key,
    );
    assert.equal(raw.status, 200);
    assert.equal(raw.headers.get('ratelimit'), '"daily";r=0;t=43200');
    const answer = (await raw.json()) as {
      result: { isError: boolean; structuredContent: { error: string } };
    };
    assert.equal(answer.result.isError, true);
    assert.equal(answer.result.structuredContent.error, 'DAILY_QUOTA_EXCEEDED');
  });
});

describe('MCP server: batches and malformed calls', () => {
  const callOf = (id: number | string, args: unknown = { query: 'weth', limit: 1 }) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'search_markets', arguments: args },
  });

  test('error: a batch of 20 calls with one id is refused whole (400), nothing run or counted', async () => {
    const key = await t.key('enterprise');
    const res = await post(
      Array.from({ length: 20 }, () => callOf(7)),
      key,
    );
    assert.equal(res.status, 400);
    const body = (await res.json()) as { error: string; details: { parameter: string; problem: string }[] };
    assert.equal(body.error, 'INVALID_PARAMETER');
    assert.deepEqual(body.details, [
      { parameter: 'body', problem: 'holds two requests with id 7: ids must be unique within a batch' },
    ]);
    // an id given as a number and as a string are two ids; a notification has none
    const mixed = await post(
      [callOf(1), callOf('1'), { jsonrpc: '2.0', method: 'notifications/initialized' }],
      key,
    );
    assert.equal(mixed.status, 200);
    assert.equal(((await mixed.json()) as unknown[]).length, 2);
    assert.equal(await usedToday(key), 2);
  });

  test('behavior: a batch of 5 calls with distinct ids: 5 answers, 5 counted, and nothing counted after the answer', async () => {
    const key = await t.key('enterprise');
    const res = await post(
      [1, 2, 3, 4, 5].map((id) => callOf(id)),
      key,
    );
    assert.equal(res.status, 200);
    const answers = (await res.json()) as { id: number; result: { isError?: boolean } }[];
    assert.deepEqual(answers.map((a) => a.id).sort(), [1, 2, 3, 4, 5]);
    assert.ok(answers.every((a) => a.result.isError !== true));
    assert.equal(await usedToday(key), 5);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(await usedToday(key), 5);
  });

  test('error: arguments of the wrong type get -32602 Invalid params in a few words, not counted; the rest of the batch is answered', async () => {
    const key = await t.key('enterprise');
    for (const args of ['weth', [1, 2], 42, null, true]) {
      const res = await post(callOf(3, args), key);
      assert.equal(res.status, 200, JSON.stringify(args));
      const answer = (await res.json()) as { id: number; error: { code: number; message: string } };
      assert.equal(answer.id, 3);
      assert.deepEqual(answer.error, {
        code: -32602,
        message: "Invalid params: 'arguments' must be an object of the tool's arguments by name.",
      });
    }
    const noName = await post(
      { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 5, arguments: {} } },
      key,
    );
    const noNameAnswer = (await noName.json()) as { error: { code: number; message: string } };
    assert.equal(noNameAnswer.error.code, -32602);
    assert.doesNotMatch(noNameAnswer.error.message, /expected|invalid_type|zod|\[/i);
    assert.equal(await usedToday(key), 0);

    const batch = await post([callOf(1, 'weth'), callOf(2)], key);
    assert.equal(batch.status, 200);
    const answers = (await batch.json()) as { id: number; error?: { code: number }; result?: object }[];
    const byId = new Map(answers.map((a) => [a.id, a]));
    assert.equal(byId.get(1)?.error?.code, -32602);
    assert.ok(byId.get(2)?.result);
    assert.equal(await usedToday(key), 1);
  });
});

describe('MCP server: tier clamps on tool arguments', () => {
  test("behavior: limit is lowered to the tier's result cap, as over HTTP", async () => {
    const key = await t.key('enterprise');
    const client = await agent(key);
    const search = await call(client, 'search_markets', { query: 'weth', limit: 50 });
    assert.equal((search.body.data as unknown[]).length, 2);
    assert.deepEqual(metaOf(search.body).clamped, { limit: { requested: 50, applied: 2 } });
    const route = (await t.get('/api/v1/markets/search?query=weth&limit=50', key)).json();
    assert.deepEqual(search.body.data, route.data);
    assert.deepEqual(metaOf(search.body), metaOf(route));

    const risk = await call(client, 'positions_at_risk', { limit: 200 });
    assert.equal((risk.body.data as unknown[]).length, 2);
    assert.deepEqual(metaOf(risk.body).clamped, { limit: { requested: 200, applied: 2 } });
    // omitted, the limit is the cap, and no clamp is reported
    const byDefault = await call(client, 'positions_at_risk', {});
    assert.equal((byDefault.body.data as unknown[]).length, 2);
    assert.equal(metaOf(byDefault.body).clamped, undefined);
  });

  test("behavior: chainIds is filtered to the tier's chains; omitted, the scope is the tier's chains", async () => {
    const key = await t.key('enterprise');
    const client = await agent(key);
    const chainsOf = (body: Record<string, unknown>) =>
      [...new Set((body.data as { chainId: number }[]).map((m) => m.chainId))].sort((a, b) => a - b);

    const filtered = await call(client, 'search_markets', { query: 'weth', chainIds: [1, 42161] });
    assert.deepEqual(chainsOf(filtered.body), [1]);
    assert.deepEqual(metaOf(filtered.body).clamped, { chainIds: { requested: [1, 42161], applied: [1] } });
    const route = (await t.get('/api/v1/markets/search?query=weth&chainIds=1,42161', key)).json();
    assert.deepEqual(filtered.body.data, route.data);

    const none = await call(client, 'positions_at_risk', { chainIds: [42161] });
    assert.equal(none.isError, false);
    assert.deepEqual(none.body.data, []);
    assert.deepEqual(metaOf(none.body).clamped, { chainIds: { requested: [42161], applied: [] } });

    const scope = await call(client, 'positions_at_risk', { healthFactorThreshold: 2, limit: 2 });
    assert.ok(chainsOf(scope.body).every((c) => c === 1 || c === 8453));
    const all = await call(client, 'search_markets', { query: 'weth' });
    assert.deepEqual(chainsOf(all.body), [1, 8453]);
  });

  test('error: get_market on a chain outside the tier is CHAIN_FORBIDDEN, as GET /markets/{marketId}', async () => {
    const key = await t.key('enterprise');
    const client = await agent(key);
    const tool = await call(client, 'get_market', { marketId: arb.uniqueKey });
    const route = await t.get(`/api/v1/markets/${arb.uniqueKey}`, key);
    assert.equal(route.statusCode, 403);
    assert.equal(tool.isError, true);
    assert.deepEqual(tool.body, {
      error: 'CHAIN_FORBIDDEN',
      message: 'The enterprise tier does not include chain 42161.',
      tier: 'enterprise',
      chainId: 42161,
    });
    assert.deepEqual(tool.body, route.json());
    // even for a market that does not exist: the chain is checked first, as over HTTP
    const unknown = await call(client, 'get_market', { marketId: 'morpho-42161-0xff' });
    assert.equal(unknown.body.error, 'CHAIN_FORBIDDEN');
  });

  test('behavior: every answer the agents received is as the OpenAPI document says', () => {
    assert.deepEqual(served.problems, []);
  });
});

describe('MCP server: rate limit', () => {
  const rateClock = new ManualClock('2026-11-22T12:00:00Z');
  let r: TestApp;
  let rServed: Served;
  let client: Client | undefined;

  before(async () => {
    r = await createTestApp({
      clock: rateClock,
      live,
      tiers: tiersWith((tiers) => {
        tiers.enterprise!.ratePerSecond = 3;
      }),
    });
    rServed = await serve(r);
  });
  after(async () => {
    await client?.close();
    await r.close();
  });

  test('error: over the rate, a tool call is RATE_LIMIT_EXCEEDED; a call takes one slot, a request without one takes one', async () => {
    const key = await r.key('enterprise');
    client = await rServed.connect(key); // initialize and its notification: two slots
    rateClock.advance(1_000); // an empty window
    for (let slot = 1; slot <= 3; slot++) {
      const ok = await call(client, 'search_markets', { query: 'weth' }); // one slot each, the HTTP request's
      assert.equal(ok.isError, false, `call ${slot}`);
    }
    const fourth = await call(client, 'search_markets', { query: 'weth' });
    assert.equal(fourth.isError, true);
    assert.deepEqual(fourth.body, {
      error: 'RATE_LIMIT_EXCEEDED',
      message: 'Rate limit of 3 requests per second exceeded; retry after 1.000 s',
      retryAfter: 1,
    });
    // a request without a tool call is refused over HTTP
    await assert.rejects(client.listTools(), (err) => {
      assert.ok(err instanceof StreamableHTTPError);
      assert.equal(err.code, 429);
      return true;
    });
    rateClock.advance(1_000);
    // a batch of two calls: two slots, the first admitted with the HTTP request, the second by the server
    const batch = await post(
      [1, 2].map((id) => ({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'search_markets', arguments: { query: 'weth', limit: 1 } },
      })),
      key,
      rServed.url,
    );
    assert.equal(batch.status, 200);
    assert.equal(batch.headers.get('x-ratelimit-remaining'), '1');
    const answers = (await batch.json()) as { result: { isError?: boolean } }[];
    assert.deepEqual(
      answers.map((a) => a.result.isError ?? false),
      [false, false],
    );
    rateClock.advance(1_000);
    // five calls counted: not the one over the rate (it took no slot), nor initialize
    const quota = (await r.get('/api/v1/client/quota', key)).json().data;
    assert.equal(quota.daily.used, 5);
    assert.deepEqual(rServed.problems, []);
  });
});
