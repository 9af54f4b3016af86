// The examples of the OpenAPI document's successes, taken from the deterministic sandbox: the
// default profile and seed, at a fixed time, with two days of its history in the store. Run
// directly, it writes src/http/openapi-examples.json (`node test/openapi-examples.ts --write`);
// test/openapi-examples.test.ts checks that the file is what the sandbox serves.
import { writeFileSync } from 'node:fs';
import { ResearchJob } from '../src/data/research-job.ts';
import { SandboxHistoryFeed, sandboxSimulation } from '../src/ingest/sandbox/history.ts';
import { DEFAULT_SEED } from '../src/ingest/sandbox/index.ts';
import { sandboxReadModel, seedStore } from '../src/service.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { ManualClock } from './clock.ts';
import { createTestApp, GENEROUS_TIERS, type TestApp } from './helpers.ts';

/** The moment the examples are taken at. */
export const EXAMPLES_AT = '2026-11-01T12:00:00.000Z';
export const EXAMPLES_FILE = new URL('../src/http/openapi-examples.json', import.meta.url);

/** Items shown of a list; of an array inside an item, one. */
const SHOWN = 2;

/** An answer as an example: arrays cut (SHOWN items, one deeper), meta.latencyMs fixed (it is the request's own). */
export function asExample(value: unknown, depth = 0): unknown {
  if (Array.isArray(value)) return value.slice(0, depth <= 1 ? SHOWN : 1).map((v) => asExample(v, depth + 1));
  // An answer carried as text (an MCP tool's content) is an answer too.
  if (typeof value === 'string' && value.startsWith('{"') && value.includes('"latencyMs"'))
    return JSON.stringify(asExample(JSON.parse(value), depth));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = k === 'latencyMs' ? 3 : asExample(v, depth + 1);
  return out;
}

export interface Sandbox {
  t: TestApp;
  key: string;
  close(): Promise<void>;
}

/** The app over the sandbox, with an Enterprise key. */
export async function sandboxApp(): Promise<Sandbox> {
  const clock = new ManualClock(EXAMPLES_AT);
  const store = new SqliteStore(':memory:');
  await store.migrate();
  const model = sandboxReadModel(clock.now());
  model.stored = true;
  await seedStore(store, 'default', DEFAULT_SEED, undefined, false, clock, 2);
  const sim = sandboxSimulation('default', DEFAULT_SEED);
  // The hourly rows (prices, hourly snapshots, oracle rounds) of the last day.
  await new SandboxHistoryFeed(store, sim, { days: 2, hourlyDays: 1 }).advance(clock.now());
  // The research digests of the days of history.
  await new ResearchJob({ model: () => model, store, clock, busy: () => false }).runDue();
  const t = await createTestApp({
    clock,
    store,
    live: model,
    sandbox: model,
    tiers: GENEROUS_TIERS,
    // A webhook of the examples points at this machine (nothing is sent anywhere else).
    events: { allowPrivate: true },
  });
  const key = await t.key('enterprise', 'live', 'examples');
  return { t, key, close: () => t.close() };
}

type Doc = {
  paths: Record<
    string,
    Record<string, { operationId: string; parameters?: { name?: string }[]; responses?: Record<string, any> }>
  >;
};

/** The webhook of the examples: a receiver on this machine's discard port. */
const WEBHOOK = {
  url: 'http://127.0.0.1:9/lrds-events',
  events: ['position.health_factor_below', 'position.liquidated'],
  filters: { chainIds: [1], healthFactorBelow: 1.05 },
};

/** The request of each operation that answers 200 or 201, from ids the sandbox serves. */
export async function exampleRequests(s: Sandbox, doc: Doc) {
  const get = async (url: string) => {
    const res = await s.t.get(`/api/v1${url}`, s.key);
    if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body.slice(0, 200)}`);
    return res.json();
  };
  const market = (await get('/risk/positions-at-risk?limit=1')).data[0];
  const token = (await get('/tokens?limit=1')).data[0];
  const oracle = (await get('/oracles?limit=1')).data[0];
  const vault = (await get('/vaults?limit=1')).data[0];
  const report = (await get('/research/reports?limit=1')).data[0];
  const keyId = (await get('/client/api-keys')).data[0].id;
  const made = await s.t.app.inject({
    method: 'POST',
    url: '/api/v1/client/webhooks',
    headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' },
    payload: JSON.stringify(WEBHOOK),
  });
  if (made.statusCode !== 201) throw new Error(`a webhook: ${made.statusCode} ${made.body.slice(0, 200)}`);
  const webhookId = made.json().data.id as string;
  const ids: Record<string, Record<string, string>> = {
    tokens: { chainId: String(token.chainId), address: token.address },
    oracles: { chainId: String(oracle.chainId), address: oracle.address },
    vaults: { chainId: String(vault.chainId), address: vault.address },
    ratings: { chainId: String(vault.chainId), address: vault.address },
  };
  const query: Record<string, string> = {
    searchMarkets: 'query=wstETH',
    listPositions: `address=${market.user.address}`,
    stressTest: 'shocks=WETH:-0.2',
  };
  const out: { operationId: string; method: string; url: string; payload?: unknown }[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      // Only JSON answers have examples (the event stream's is a stream of events).
      const ok = op.responses?.['200'] ?? op.responses?.['201'];
      if (ok && !ok.content?.['application/json']) continue;
      const area = path.split('/')[1] ?? '';
      const params: Record<string, string> = {
        marketId: market.market.uniqueKey,
        address: ids[area]?.address ?? market.user.address,
        chainId: ids[area]?.chainId ?? '1',
        id: report?.id ?? 'none',
        keyId,
        webhookId,
      };
      const filled = path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name]!));
      const q = [
        query[op.operationId],
        op.parameters?.some((p) => p.name === 'limit') ? `limit=${SHOWN}` : '',
      ]
        .filter(Boolean)
        .join('&');
      const url = `/api/v1${filled === '/' ? '/' : filled}${q ? `?${q}` : ''}`;
      const payload =
        op.operationId === 'mcp'
          ? {
              jsonrpc: '2.0',
              id: 1,
              method: 'tools/call',
              params: { name: 'market_brief', arguments: { marketId: market.market.uniqueKey } },
            }
          : op.operationId === 'createApiKey'
            ? { mode: 'test', name: 'example' }
            : op.operationId === 'createWebhook'
              ? WEBHOOK
              : undefined;
      out.push({
        operationId: op.operationId,
        method: method.toUpperCase(),
        url,
        ...(payload ? { payload } : {}),
      });
    }
  }
  return out;
}

/** Every operation's success as served by the sandbox, as an example. */
export async function takeExamples(s: Sandbox): Promise<Record<string, unknown>> {
  const doc = (await s.t.app.inject({ url: '/api/v1/openapi.json' })).json() as Doc;
  const examples: Record<string, unknown> = {};
  // Deleting the webhook, then revoking the key, come last (the other examples use them).
  const last = (id: string) => (id === 'revokeApiKey' ? 2 : id === 'deleteWebhook' ? 1 : 0);
  const requests = (await exampleRequests(s, doc)).sort((a, b) => last(a.operationId) - last(b.operationId));
  for (const r of requests) {
    const res = await s.t.app.inject({
      method: r.method,
      url: r.url,
      headers: {
        authorization: `Bearer ${s.key}`,
        ...(r.payload
          ? { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
          : {}),
      },
      ...(r.payload ? { payload: JSON.stringify(r.payload) } : {}),
    });
    if (res.statusCode !== 200 && res.statusCode !== 201 && res.statusCode !== 202)
      throw new Error(`${r.operationId} ${r.url}: ${res.statusCode} ${res.body.slice(0, 300)}`);
    examples[r.operationId] = asExample(res.json());
  }
  return Object.fromEntries(Object.entries(examples).sort(([a], [b]) => a.localeCompare(b)));
}

if (process.argv.includes('--write')) {
  const s = await sandboxApp();
  try {
    const examples = await takeExamples(s);
    writeFileSync(EXAMPLES_FILE, `${JSON.stringify(examples, null, 2)}\n`);
    process.stdout.write(`wrote ${EXAMPLES_FILE.pathname}: ${Object.keys(examples).length} examples\n`);
  } finally {
    await s.close();
  }
}
