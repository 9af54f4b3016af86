/**
 * "Freshness per source" (docs/decisions.md): an answer is as fresh as the sources behind its chains. Two chain sources feed one live
 * dataset; one stops answering, and only the answers about its chain age (`cached`, then
 * `snapshot`), with `meta.asOf` and `meta.blocks` saying what each answer reflects.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { PositionRecord } from '../../src/domain/types.ts';
import type { Source, SourceOutput } from '../../src/ingest/contract.ts';
import { ingestLive } from '../../src/ingest/live.ts';
import type { Service } from '../../src/service.ts';
import { openStore } from '../../src/store/open.ts';
import type { Store } from '../../src/store/types.ts';
import { ManualClock } from '../clock.ts';
import { liveService, makeMarket, makePosition, tempDir } from '../helpers.ts';

const clock = new ManualClock('2026-11-26T00:00:00Z');
const onMainnet = makeMarket({ chainId: 1 });
const onOptimism = makeMarket({ chainId: 10 });
// Both below health factor 1.05, so positions at risk lists one per chain.
const risky = (m: typeof onMainnet): PositionRecord =>
  makePosition(m, { collateralUsd: 10_000, borrowUsd: 9_000 });
let mainnetDown = false;

function chain(chainId: number, block: () => number, fails: () => boolean): Source {
  const market = chainId === 1 ? onMainnet : onOptimism;
  return {
    id: `chain:${chainId}`,
    kind: 'chain',
    chainIds: [chainId],
    async run(): Promise<SourceOutput> {
      if (fails()) throw new Error('RPC unreachable');
      return {
        records: { markets: [market], positions: [risky(market)] },
        blocks: { [String(chainId)]: block() },
        items: [],
      };
    },
  };
}

let optimismBlock = 500;
const sources = [
  chain(
    1,
    () => 100,
    () => mainnetDown,
  ),
  chain(
    10,
    () => optimismBlock,
    () => false,
  ),
];
let store: Store;
let service: Service;
let key: string;

async function pass() {
  optimismBlock++;
  await ingestLive(sources, store, clock);
  await service?.models.reloadIfChanged();
}

async function meta(url: string) {
  const res = await service.app.inject({ url: `/api/v1${url}`, headers: { authorization: `Bearer ${key}` } });
  assert.equal(res.statusCode, 200, res.body);
  const { freshness, asOf, blocks } = res.json().meta;
  return { freshness, asOf, blocks };
}

before(async () => {
  const dataDir = tempDir('lrds-fresh-');
  store = await openStore({ dataDir, databaseUrl: null }, clock);
  await pass();
  ({ service, key } = await liveService(dataDir, clock));
});
after(async () => {
  await service?.close();
  await store?.close();
});

test('behavior: a chain whose source fails ages alone; answers about the others stay live', async () => {
  const lastGood = new Date(clock.now()).toISOString();
  mainnetDown = true;
  clock.advance(120_000);
  await pass();
  const now = new Date(clock.now()).toISOString();
  assert.deepEqual(await meta('/markets?chainIds=10'), {
    freshness: 'live',
    asOf: now,
    blocks: { '10': 502 },
  });
  assert.deepEqual(await meta('/markets?chainIds=1'), {
    freshness: 'cached',
    asOf: lastGood,
    blocks: { '1': 100 },
  });
  // by the items' chains: one market, a list of both, positions at risk of one chain
  assert.equal((await meta(`/markets/${onOptimism.uniqueKey}`)).freshness, 'live');
  assert.equal((await meta(`/markets/${onMainnet.uniqueKey}`)).freshness, 'cached');
  assert.deepEqual(await meta('/markets'), {
    freshness: 'cached',
    asOf: lastGood,
    blocks: { '1': 100, '10': 502 },
  });
  assert.equal((await meta('/risk/positions-at-risk?chainIds=10')).freshness, 'live');
  assert.equal((await meta('/risk/positions-at-risk')).freshness, 'cached');

  // a quarter of an hour on, the same answers (cached as answers too) follow the clock
  for (let i = 0; i < 14; i++) {
    clock.advance(60_000);
    await pass();
  }
  assert.equal((await meta('/markets?chainIds=1')).freshness, 'snapshot');
  assert.equal((await meta(`/markets/${onMainnet.uniqueKey}`)).freshness, 'snapshot');
  assert.equal((await meta('/markets?chainIds=10')).freshness, 'live');

  // the chain answers again: live again
  mainnetDown = false;
  await pass();
  assert.equal((await meta('/markets?chainIds=1')).freshness, 'live');
  assert.equal((await meta('/markets')).freshness, 'live');
});

test('behavior: a cached answer follows its own chain across a freshness threshold within one second', async () => {
  // Mainnet down again: the dataset's freshness is mainnet's; Optimism's clock alone crosses 60 s.
  mainnetDown = true;
  clock.set(Math.floor(clock.now() / 1000) * 1000 + 120_500);
  await pass();
  // Optimism refreshed at a second's half: 59.6 s later the clock is 0.1 s into a second …
  clock.advance(59_600);
  assert.equal((await meta('/markets?chainIds=10')).freshness, 'live');
  // … and 60.1 s later still in that second, with the same model revision: the answer computed
  // 0.5 s ago is not served again (its chain's label changed).
  clock.advance(500);
  assert.equal((await meta('/markets?chainIds=10')).freshness, 'cached');
  mainnetDown = false;
  await pass();
});

test('behavior: a source no longer in the sources file is behind no answer', async () => {
  // A source of chain 10 that a previous sources file had, last refreshed long ago.
  await store.saveSource({
    id: 'chain:10:old',
    kind: 'chain',
    chainIds: [10],
    refreshedAt: clock.now() - 3_600_000,
    lastBlock: { '10': 3 },
    consecutiveFailures: 0,
    lastError: null,
    updatedAt: clock.now(),
    cursor: null,
  });
  await pass();
  const m = await meta('/markets?chainIds=10');
  assert.equal(m.freshness, 'live');
  assert.deepEqual(m.blocks, { '10': optimismBlock });
  // /health lists it, as not in use
  const health = (await service.app.inject({ url: '/api/v1/health' })).json();
  assert.deepEqual(health.sources.map((s: { id: string; inUse: boolean }) => [s.id, s.inUse]).sort(), [
    ['chain:1', true],
    ['chain:10', true],
    ['chain:10:old', false],
  ]);
});
