import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../clock.ts';
import {
  createTestApp,
  makeMarket,
  makePosition,
  makeVault,
  modelOf,
  type TestApp,
  tiersWith,
} from '../helpers.ts';

/**
 * The shared security suite (STYLE.md 11): every authenticated route, taken from the OpenAPI
 * document so a new route cannot skip it, against no key, a bad scheme, malformed, unknown
 * and revoked keys, the wrong tier, the wrong chain, over rate and over quota.
 */

const clock = new ManualClock();
const eth = makeMarket({ chainId: 1 });
const base = makeMarket({ chainId: 8453 });
const ethVault = makeVault([eth]);
const baseVault = makeVault([base]);
const live = modelOf([eth, base], [makePosition(eth)], clock, [ethVault, baseVault]);

interface Route {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  category: string | null;
  counted: boolean;
}

let t: TestApp;
let routes: Route[];

const WALLET = '0x00000000000000000000000000000000000000aa';

function url(r: Route, keyId: string): string {
  const path = r.path
    .replace('{marketId}', eth.uniqueKey)
    .replace('{keyId}', keyId)
    .replace('{webhookId}', 'wh_none')
    .replace('{chainId}', '1')
    .replace('{id}', '2026-11-21-morpho')
    .replace(
      '{address}',
      r.path.includes('/oracles/')
        ? eth.oracle!.address
        : r.path.includes('/tokens/')
          ? eth.loanAddress
          : r.path.includes('/vaults/')
            ? ethVault.address
            : WALLET,
    );
  if (path.endsWith('/search')) return `${path}?query=weth`;
  if (path.endsWith('/positions')) return `${path}?address=${WALLET}`;
  if (path.endsWith('/risk/stress')) return `${path}?shocks=WETH:-0.1`;
  return path;
}

/** The category of a route's tag (docs/decisions.md "Tiers and categories"). */
const CATEGORY: Record<string, string | null> = {
  Markets: 'core',
  Tokens: 'core',
  Oracles: 'core',
  Vaults: 'core',
  Positions: 'position',
  Portfolios: 'portfolio',
  Risk: 'risk',
  Analytics: 'analytics',
  Agent: 'agent',
  Ratings: 'ratings',
  Research: 'research',
  Client: null,
};

/** The MCP server takes a JSON-RPC message: tools/list (a request of the protocol, never counted). */
const MCP_PATH = '/api/v1/agent/mcp';
const MCP_LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });

/** The categories of the Free tier (config/tiers.json, the launch tier table). */
const FREE_CATEGORIES = new Set(['core', 'position', 'portfolio']);

async function call(r: Route, authorization: string | undefined, keyId = 'key_none') {
  const mcp = r.path === MCP_PATH;
  return t.app.inject({
    method: r.method,
    url: url(r, keyId),
    headers: {
      ...(authorization === undefined ? {} : { authorization }),
      ...(r.method === 'POST' ? { 'content-type': 'application/json' } : {}),
      ...(mcp ? { accept: 'application/json, text/event-stream' } : {}),
    },
    ...(r.method === 'POST' ? { payload: mcp ? MCP_LIST : '{}' } : {}),
  });
}

function assertUnauthorized(res: Awaited<ReturnType<typeof call>>, what: string) {
  assert.equal(res.statusCode, 401, what);
  assert.deepEqual(res.json(), {
    error: 'UNAUTHORIZED',
    message: 'A valid API key is required: send it as "Authorization: Bearer <API_KEY>".',
  });
  assert.match(String(res.headers['www-authenticate']), /^Bearer/);
}

before(async () => {
  t = await createTestApp({
    clock,
    live,
    tiers: tiersWith((tiers) => {
      tiers.free!.ratePerSecond = 2;
      tiers.free!.dailyQuota = 1;
      tiers.pro!.ratePerSecond = 1_000_000;
    }),
  });
  const doc = (await t.app.inject({ url: '/api/v1/openapi.json' })).json();
  routes = [];
  for (const [path, ops] of Object.entries<Record<string, { security?: unknown[]; tags: string[] }>>(
    doc.paths,
  )) {
    for (const [method, op] of Object.entries(ops)) {
      if (!op.security?.length) continue; // `security: []` (health): no key needed
      // The event stream never ends by itself: its refusals are tested over a socket
      // (test/http/webhooks.test.ts).
      if (path === '/events/stream') continue;
      const tag = op.tags[0];
      routes.push({
        method: method.toUpperCase() as Route['method'],
        // document paths are relative to its server URL (/api/v1)
        path: `${doc.servers[0].url}${path}`,
        // Creating a webhook needs the risk category (its events are risk data).
        category: method === 'post' && path === '/client/webhooks' ? 'risk' : CATEGORY[tag!]!,
        // The MCP request is not counted, its tool calls are (test/mcp/).
        counted: tag !== 'Client' && `${doc.servers[0].url}${path}` !== MCP_PATH,
      });
    }
  }
});
after(() => t.close());

describe('security suite, every authenticated route', () => {
  test('default: the suite covers every authenticated route', () => {
    const names = routes.map((r) => `${r.method} ${r.path}`).sort();
    assert.deepEqual(names, [
      'DELETE /api/v1/client/api-keys/{keyId}',
      'DELETE /api/v1/client/webhooks/{webhookId}',
      'GET /api/v1/agent/market-brief/{marketId}',
      'GET /api/v1/agent/wallet-risk/{address}',
      'GET /api/v1/analytics/overview',
      'GET /api/v1/analytics/timeseries',
      'GET /api/v1/client/api-keys',
      'GET /api/v1/client/profile',
      'GET /api/v1/client/quota',
      'GET /api/v1/client/usage',
      'GET /api/v1/client/webhooks',
      'GET /api/v1/client/webhooks/{webhookId}',
      'GET /api/v1/client/webhooks/{webhookId}/deliveries',
      'GET /api/v1/liquidations',
      'GET /api/v1/markets',
      'GET /api/v1/markets/search',
      'GET /api/v1/markets/{marketId}',
      'GET /api/v1/markets/{marketId}/history',
      'GET /api/v1/oracles',
      'GET /api/v1/oracles/{chainId}/{address}',
      'GET /api/v1/oracles/{chainId}/{address}/rounds',
      'GET /api/v1/portfolios/{address}',
      'GET /api/v1/positions',
      'GET /api/v1/ratings/markets',
      'GET /api/v1/ratings/markets/{marketId}',
      'GET /api/v1/ratings/markets/{marketId}/history',
      'GET /api/v1/ratings/methodology',
      'GET /api/v1/ratings/vaults',
      'GET /api/v1/ratings/vaults/{chainId}/{address}',
      'GET /api/v1/ratings/vaults/{chainId}/{address}/history',
      'GET /api/v1/research/reports',
      'GET /api/v1/research/reports/{id}',
      'GET /api/v1/risk/markets/{marketId}',
      'GET /api/v1/risk/positions-at-risk',
      'GET /api/v1/risk/stress',
      'GET /api/v1/tokens',
      'GET /api/v1/tokens/{chainId}/{address}',
      'GET /api/v1/vaults',
      'GET /api/v1/vaults/{chainId}/{address}',
      'POST /api/v1/agent/mcp',
      'POST /api/v1/client/api-keys',
      'POST /api/v1/client/webhooks',
      'POST /api/v1/client/webhooks/{webhookId}/test',
    ]);
  });

  test('error: no key, wrong scheme, malformed, unknown and revoked keys get the same 401', async () => {
    const revoked = await t.key('pro');
    const revokedId = (await t.get('/api/v1/client/profile', revoked)).json().data.key.id;
    assert.equal(await t.keys.revoke(revokedId), true);
    const unknown = `lrds_live_${'A'.repeat(32)}`;
    for (const r of routes) {
      assertUnauthorized(await call(r, undefined), `${r.path} no key`);
      assertUnauthorized(await call(r, `Basic ${Buffer.from('a:b').toString('base64')}`), `${r.path} basic`);
      assertUnauthorized(await call(r, `Token ${unknown}`), `${r.path} token scheme`);
      assertUnauthorized(await call(r, 'Bearer'), `${r.path} empty bearer`);
      assertUnauthorized(await call(r, 'Bearer not-a-key'), `${r.path} malformed`);
      assertUnauthorized(await call(r, `Bearer ${unknown}`), `${r.path} unknown`);
      assertUnauthorized(await call(r, `Bearer ${revoked}`), `${r.path} revoked`);
      assertUnauthorized(await call(r, `Bearer ${'x'.repeat(10_000)}`), `${r.path} huge`);
      assertUnauthorized(await call(r, `Bearer ${unknown} extra`), `${r.path} extra token`);
    }
  });

  test('behavior: the scheme is case-insensitive', async () => {
    const key = await t.key('pro');
    for (const r of routes) {
      const res = await call(r, `bearer ${key}`);
      assert.notEqual(res.statusCode, 401, `${r.method} ${r.path}`);
    }
  });

  test('error: wrong tier and wrong chain', async () => {
    for (const [i, r] of routes.entries()) {
      clock.advance(1000);
      // an account of its own per route: a Free account may hold two keys (self-service cap)
      const free = await t.key('free', 'live', `free-${i}`);
      const id = (await t.get('/api/v1/client/profile', free)).json().data.key.id;
      const res = await call(r, `Bearer ${free}`, id);
      if (r.category !== null && !FREE_CATEGORIES.has(r.category)) {
        assert.equal(res.statusCode, 403, r.path);
        assert.equal(res.json().error, 'TIER_FORBIDDEN');
      } else if (r.path.includes('{webhookId}')) {
        // Open to every tier; this account has no webhook.
        assert.equal(res.statusCode, 404, `${r.method} ${r.path}`);
        assert.equal(res.json().error, 'WEBHOOK_NOT_FOUND');
      } else {
        assert.ok(res.statusCode < 300, `${r.method} ${r.path}: ${res.statusCode}`);
      }
    }
    // Every route serving one chain named by its path refuses a chain outside the tier.
    for (const [i, path] of [
      `/api/v1/markets/${base.uniqueKey}`,
      `/api/v1/markets/${base.uniqueKey}/history`,
      `/api/v1/tokens/8453/${base.loanAddress}`,
      `/api/v1/oracles/8453/${base.oracle!.address}`,
      `/api/v1/oracles/8453/${base.oracle!.address}/rounds`,
      `/api/v1/vaults/8453/${baseVault.address}`,
    ].entries()) {
      // a key of its own per path: this test's Free tier counts one request a day
      const free = await t.key('free', 'live', `chain-${i}`);
      const res = await t.get(path, free);
      assert.equal(res.statusCode, 403, path);
      assert.deepEqual(res.json(), {
        error: 'CHAIN_FORBIDDEN',
        message: 'The free tier does not include chain 8453.',
        tier: 'free',
        chainId: 8453,
      });
    }
  });

  test('error: over rate on every route; over quota on every counted route, never on /client', async () => {
    for (const [i, r] of routes.entries()) {
      clock.advance(1000);
      // an account of its own per route: a Free account may hold two keys (self-service cap)
      const free = await t.key('free', 'live', `free-${i}`);
      const id = (await t.get('/api/v1/client/profile', free)).json().data.key.id;
      // rate 2: the profile call above took one slot, this one the second, the next is refused
      await call(r, `Bearer ${free}`, id);
      const limited = await call(r, `Bearer ${free}`, id);
      if (r.method === 'DELETE' && r.path.includes('{keyId}')) {
        // the first DELETE revoked the calling key itself: it is refused from then on
        assert.equal(limited.statusCode, 401);
        continue;
      }
      assert.equal(limited.statusCode, 429, `${r.method} ${r.path}`);
      assert.equal(limited.json().error, 'RATE_LIMIT_EXCEEDED');
      assert.ok(limited.headers['retry-after']);
      clock.advance(1000);
      const quota = await call(r, `Bearer ${free}`, id);
      if (r.counted) {
        assert.equal(quota.statusCode, 429, `${r.method} ${r.path}`);
        assert.equal(quota.json().error, 'DAILY_QUOTA_EXCEEDED');
      } else {
        assert.notEqual(quota.statusCode, 429, `${r.method} ${r.path}`);
      }
    }
  });
});
