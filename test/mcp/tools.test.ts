import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ManualClock } from '../clock.ts';
import {
  createTestApp,
  GENEROUS_TIERS,
  makeMarket,
  makePosition,
  modelOf,
  type TestApp,
} from '../helpers.ts';
import { call, metaOf, type Served, serve } from './helpers.ts';

/**
 * The tools answer what the HTTP routes answer for the same request: the same `data`, the same
 * meta (but latencyMs), the same error bodies; test keys read the sandbox.
 */

const clock = new ManualClock('2026-11-22T12:00:00Z');
const ethMorpho = makeMarket({ lltv: 0.8 });
const ethAave = makeMarket({
  protocol: 'aave',
  chainId: 1,
  uniqueKey: 'aave-1-0xpool_0xcollateral_0xloan',
  lltv: 0.8,
  supply: 3_000_000,
});
const arb = makeMarket({
  protocol: 'aave',
  chainId: 42161,
  uniqueKey: 'aave-42161-0xpool_0xcollateral_0xloan',
  lltv: 0.8,
  collateral: 'WBTC',
  collateralName: 'Wrapped BTC',
});
const live = modelOf(
  [ethMorpho, ethAave, arb],
  [
    makePosition(ethMorpho, { collateralUsd: 1_000, borrowUsd: 900 }), // HF 0.89
    makePosition(ethMorpho, { collateralUsd: 13_000, borrowUsd: 10_000 }), // 1.04
    makePosition(ethAave, { collateralUsd: 26_000, borrowUsd: 20_000 }), // 1.04
    makePosition(arb, { collateralUsd: 1_000, borrowUsd: 1_200 }), // 0.67
    makePosition(arb, { collateralUsd: 30_000, borrowUsd: 10_000 }), // 2.4
  ],
  clock,
);
const sandboxMarket = makeMarket({ label: 'sUSDe / USDC', collateral: 'sUSDe', loan: 'USDC' });
const sandbox = modelOf([sandboxMarket], [makePosition(sandboxMarket)], clock);

let t: TestApp;
let served: Served;
let key: string;
let agent: Client;

before(async () => {
  t = await createTestApp({ clock, live, sandbox, tiers: GENEROUS_TIERS });
  served = await serve(t);
  key = await t.key('enterprise');
  agent = await served.connect(key);
});
after(async () => {
  await agent.close();
  await t.close();
});

/** The HTTP route's answer to the same request, by the same key. */
async function http(path: string, k = key): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await t.get(path, k);
  return { status: res.statusCode, body: res.json() };
}

describe('MCP tools', () => {
  test('default: tools/list gives the six tools, their arguments described and strict', async () => {
    const { tools } = await agent.listTools();
    assert.deepEqual(
      tools.map((tool) => tool.name),
      ['search_markets', 'get_market', 'positions_at_risk', 'wallet_risk', 'stress_test', 'market_brief'],
    );
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    const search = byName.get('search_markets')!.inputSchema;
    assert.deepEqual(search.required, ['query']);
    assert.equal(search.additionalProperties, false);
    assert.deepEqual(Object.keys(search.properties ?? {}), ['query', 'limit', 'protocol', 'chainIds']);
    const risk = byName.get('positions_at_risk')!.inputSchema;
    assert.deepEqual(Object.keys(risk.properties ?? {}).sort(), [
      'chainIds',
      'cursor',
      'healthFactorThreshold',
      'limit',
      'marketId',
      'minBorrowUsd',
      'protocol',
    ]);
    for (const tool of tools) {
      assert.ok(tool.description && tool.description.length > 40, tool.name);
      assert.equal(tool.annotations?.readOnlyHint, true, tool.name);
      for (const [name, schema] of Object.entries(tool.inputSchema.properties ?? {}))
        assert.ok((schema as { description?: string }).description, `${tool.name}.${name} described`);
    }
    assert.deepEqual(byName.get('get_market')!.inputSchema.required, ['marketId']);
    // Their answers: the HTTP operation's success, or the API's error body.
    for (const tool of tools) {
      const output = tool.outputSchema as { type: string; anyOf: unknown[]; $defs: Record<string, unknown> };
      assert.equal(output?.type, 'object', tool.name);
      assert.equal(output.anyOf.length, 2, tool.name);
      assert.ok(output.$defs.Error && output.$defs.Meta, tool.name);
    }
    assert.ok(JSON.stringify(byName.get('get_market')!.outputSchema).includes('#/$defs/Market'));
  });

  test('behavior: search_markets answers the data and meta of GET /markets/search', async () => {
    for (const [args, qs] of [
      [{ query: 'weth' }, 'query=weth'],
      [{ query: 'WETH', limit: 2, chainIds: [1, 42161] }, 'query=WETH&limit=2&chainIds=1,42161'],
      [{ query: 'wbtc/weth', protocol: 'aave' }, 'query=wbtc/weth&protocol=aave'],
    ] as const) {
      const tool = await call(agent, 'search_markets', args);
      const route = await http(`/api/v1/markets/search?${qs}`);
      assert.equal(tool.isError, false);
      assert.equal(route.status, 200);
      assert.ok((route.body.data as unknown[]).length > 0, qs);
      assert.deepEqual(tool.body.data, route.body.data, qs);
      assert.deepEqual(metaOf(tool.body), metaOf(route.body), qs);
    }
  });

  test('behavior: get_market answers the data of GET /markets/{marketId}, any case', async () => {
    for (const id of [ethMorpho.uniqueKey, arb.uniqueKey.toUpperCase()]) {
      const tool = await call(agent, 'get_market', { marketId: id });
      const route = await http(`/api/v1/markets/${id}`);
      assert.equal(tool.isError, false);
      assert.equal(route.status, 200);
      assert.equal((tool.body.data as { uniqueKey: string }).uniqueKey, id.toLowerCase());
      assert.deepEqual(tool.body.data, route.body.data);
      assert.deepEqual(metaOf(tool.body), metaOf(route.body));
    }
  });

  test('behavior: positions_at_risk answers the data of GET /risk/positions-at-risk', async () => {
    for (const [args, qs] of [
      [{}, ''],
      [{ healthFactorThreshold: 1.05, minBorrowUsd: 1_000 }, 'healthFactorThreshold=1.05&minBorrowUsd=1000'],
      [{ protocol: 'aave', chainIds: [42161], limit: 1 }, 'protocol=aave&chainIds=42161&limit=1'],
      [
        { marketId: ethMorpho.uniqueKey, healthFactorThreshold: 3 },
        `marketId=${ethMorpho.uniqueKey}&healthFactorThreshold=3`,
      ],
    ] as const) {
      const tool = await call(agent, 'positions_at_risk', args);
      const route = await http(`/api/v1/risk/positions-at-risk?${qs}`);
      assert.equal(tool.isError, false);
      assert.equal(route.status, 200);
      assert.ok((route.body.data as unknown[]).length > 0, qs);
      assert.deepEqual(tool.body.data, route.body.data, qs);
      assert.deepEqual(metaOf(tool.body), metaOf(route.body), qs);
    }
  });

  test('behavior: wallet_risk, stress_test and market_brief answer the data of their routes', async () => {
    const wallet = live.risk.stateOf(
      live.risk.query({ healthFactorThreshold: 1, minBorrowUsd: 0, limit: 1 })[0]!,
    ).user;
    for (const [tool, args, path] of [
      ['wallet_risk', { address: wallet }, `/api/v1/agent/wallet-risk/${wallet}`],
      [
        'wallet_risk',
        { address: wallet.toUpperCase().replace('0X', '0x'), targetHealthFactor: 2, chainIds: [1] },
        `/api/v1/agent/wallet-risk/${wallet}?targetHealthFactor=2&chainIds=1`,
      ],
      ['stress_test', { shocks: { WBTC: -0.2 } }, '/api/v1/risk/stress?shocks=WBTC:-0.2'],
      [
        'stress_test',
        { shocks: { ETH: -0.1, WBTC: 0.05 }, limit: 1 },
        '/api/v1/risk/stress?shocks=ETH:-0.1,WBTC:0.05&limit=1',
      ],
      [
        'market_brief',
        { marketId: ethMorpho.uniqueKey },
        `/api/v1/agent/market-brief/${ethMorpho.uniqueKey}`,
      ],
    ] as const) {
      const answer = await call(agent, tool, args);
      const route = await http(path);
      assert.equal(route.status, 200, path);
      assert.equal(answer.isError, false, path);
      assert.deepEqual(answer.body.data, route.body.data, path);
      assert.deepEqual(metaOf(answer.body), metaOf(route.body), path);
    }
    const bad = await call(agent, 'stress_test', { shocks: { WETH: -1 } });
    assert.equal(bad.isError, true);
    assert.equal((bad.body as { error: string }).error, 'INVALID_PARAMETER');
  });

  test('error: what the route refuses, the tool refuses with the same error body', async () => {
    const unknown = 'morpho-1-0x00000000000000000000000000000000000000000000000000000000000000ff';
    for (const [name, args, path] of [
      ['get_market', { marketId: unknown }, `/api/v1/markets/${unknown}`],
      ['positions_at_risk', { marketId: unknown }, `/api/v1/risk/positions-at-risk?marketId=${unknown}`],
      ['get_market', { marketId: 'not-a-market' }, '/api/v1/markets/not-a-market'],
      ['search_markets', { query: 'a b c d e f g h i' }, '/api/v1/markets/search?query=a+b+c+d+e+f+g+h+i'],
    ] as const) {
      const tool = await call(agent, name, args);
      const route = await http(path);
      assert.ok(route.status >= 400, path);
      assert.equal(tool.isError, true, path);
      assert.deepEqual(tool.body, route.body, path);
    }
  });

  test('error: arguments the schema refuses are INVALID_PARAMETER, one detail per argument', async () => {
    const cases = [
      [{ query: 'weth', limt: 5 }, [{ parameter: 'limt', problem: 'is not a known parameter' }]],
      [{ limit: 5 }, [{ parameter: 'query', problem: 'is required' }]],
    ] as const;
    for (const [args, details] of cases) {
      const tool = await call(agent, 'search_markets', args);
      assert.equal(tool.isError, true);
      assert.equal(tool.body.error, 'INVALID_PARAMETER');
      assert.deepEqual(tool.body.details, details);
    }
    for (const args of [
      { query: 'weth', limit: 0 },
      { query: 'weth', chainIds: '1,8453' },
      { query: 'weth', protocol: 'maker' },
    ]) {
      const tool = await call(agent, 'search_markets', args);
      assert.equal(tool.isError, true, JSON.stringify(args));
      assert.equal(tool.body.error, 'INVALID_PARAMETER');
      const [detail] = tool.body.details as { parameter: string }[];
      assert.equal(detail?.parameter, Object.keys(args)[1]);
    }
    const risk = await call(agent, 'positions_at_risk', { healthFactorThreshold: 0 });
    assert.equal(risk.body.error, 'INVALID_PARAMETER');
    assert.equal((risk.body.details as { parameter: string }[])[0]?.parameter, 'healthFactorThreshold');
  });

  test('error: an unknown tool is a JSON-RPC error, not a tool result', async () => {
    await assert.rejects(agent.callTool({ name: 'drop_tables', arguments: {} }), (err: Error) => {
      assert.match(err.message, /Unknown tool 'drop_tables'/);
      return true;
    });
  });

  test('behavior: a test key reads the sandbox, as over HTTP', async () => {
    const testKey = await t.key('enterprise', 'test');
    const sandboxAgent = await served.connect(testKey);
    try {
      const tool = await call(sandboxAgent, 'search_markets', { query: 'usdc' });
      const route = await http('/api/v1/markets/search?query=usdc', testKey);
      assert.deepEqual(
        (tool.body.data as { uniqueKey: string }[]).map((m) => m.uniqueKey),
        [sandboxMarket.uniqueKey],
      );
      assert.deepEqual(tool.body.data, route.body.data);
      const liveOnly = await call(sandboxAgent, 'get_market', { marketId: ethAave.uniqueKey });
      assert.equal(liveOnly.body.error, 'MARKET_NOT_FOUND');
    } finally {
      await sandboxAgent.close();
    }
  });

  test('behavior: every answer the agent received is as the OpenAPI document says', () => {
    assert.deepEqual(served.problems, []);
  });
});
