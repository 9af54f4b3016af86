/**
 * Chainlink rounds on a local chain: every round a feed publishes between two blocks, read from
 * its `AnswerUpdated` logs, under the ids its readers see: a proxy's rounds carry its phase in the
 * top bits (EACAggregatorProxy), and a directly read aggregator's are its own.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { readFeeds, readRounds } from '../../src/ingest/chain/chainlink.ts';
import { chainSources } from '../../src/ingest/chain/index.ts';
import { createChainRpc } from '../../src/ingest/chain/rpc.ts';
import { ingestLive } from '../../src/ingest/live.ts';
import type { FeedConfig } from '../../src/ingest/sources-file.ts';
import { parseSources } from '../../src/ingest/sources-file.ts';
import { openStore } from '../../src/store/open.ts';
import { ManualClock } from '../clock.ts';
import { tempDir } from '../helpers.ts';
import { type Anvil, type Artifact, compileContracts, deploy, readAt, sendTx, startAnvil } from './anvil.ts';

let anvil: Anvil;
let art: Record<string, Artifact>;

before(async () => {
  art = compileContracts();
  anvil = await startAnvil();
});
after(async () => {
  await anvil?.stop();
});

const feed = (address: string): FeedConfig => ({
  address: address.toLowerCase(),
  pair: 'ETH/USD',
  base: 'ETH',
  quote: 'USD',
  heartbeatSeconds: 3600,
  deviationThreshold: null,
});

test('behavior: every round between two blocks, under the proxy ids latestRoundData gives', async () => {
  const c = anvil.client(0);
  const aggregator = await deploy(c, art.TestAggregator!, [8, 'ETH / USD', 3000n * 10n ** 8n]);
  const proxy = await deploy(c, art.TestAggregatorProxy!, [aggregator, 7]);
  const rpc = createChainRpc(anvil.chainId, anvil.url);
  const from = (await c.getBlockNumber({ cacheTime: 0 })) + 1n;
  for (const price of [3010n, 3020n, 3030n])
    await sendTx(anvil, 0, aggregator, art.TestAggregator!.abi, 'updateAnswer', [price * 10n ** 8n]);
  const head = await c.getBlockNumber({ cacheTime: 0 });
  const { readings, failures } = await readFeeds(rpc, [feed(proxy), feed(aggregator)], head);
  assert.deepEqual(failures, []);
  assert.deepEqual(
    readings.map((r) => r.publisher),
    [
      { address: aggregator.toLowerCase(), phase: 7n },
      { address: aggregator.toLowerCase(), phase: null },
    ],
  );
  const rounds = await readRounds(rpc, anvil.chainId, readings, { fromBlock: from, toBlock: head });
  const viaProxy = rounds.filter((r) => r.feed === proxy.toLowerCase());
  assert.deepEqual(
    viaProxy.map((r) => [r.roundId, r.answer]),
    [2n, 3n, 4n].map((n, i) => [((7n << 64n) | n).toString(), 3010 + 10 * i]),
  );
  // the latest of them is the proxy's own latest round: the same id, one round
  const [latestId] = await readAt<readonly [bigint]>(
    anvil,
    proxy,
    art.TestAggregatorProxy!.abi,
    'latestRoundData',
  );
  assert.equal(viaProxy.at(-1)!.roundId, latestId.toString());
  // read directly, the aggregator's rounds are its own ids
  assert.deepEqual(
    rounds.filter((r) => r.feed === aggregator.toLowerCase()).map((r) => r.roundId),
    ['2', '3', '4'],
  );
});

test("behavior: a pass after a proxy changed aggregator has both aggregators' rounds, each under its phase", async () => {
  const c = anvil.client(0);
  const A = art.TestAggregator!.abi;
  const first = await deploy(c, art.TestAggregator!, [8, 'ETH / USD', 3000n * 10n ** 8n]);
  const second = await deploy(c, art.TestAggregator!, [8, 'ETH / USD', 3100n * 10n ** 8n]);
  const proxy = await deploy(c, art.TestAggregatorProxy!, [first, 1]);
  const sources = chainSources(
    parseSources(
      {
        chains: [
          { chainId: anvil.chainId, rpcUrl: anvil.url, chainlink: [{ address: proxy, pair: 'ETH/USD' }] },
        ],
      },
      'test',
    ),
  );
  const clock = new ManualClock(Date.now());
  const store = await openStore({ dataDir: tempDir('lrds-rounds-'), databaseUrl: null }, clock);
  try {
    await ingestLive(sources, store, clock);
    await sendTx(anvil, 0, first, A, 'updateAnswer', [3010n * 10n ** 8n]);
    await sendTx(anvil, 0, proxy, art.TestAggregatorProxy!.abi, 'setAggregator', [second, 2]);
    await sendTx(anvil, 0, second, A, 'updateAnswer', [3120n * 10n ** 8n]);
    const out = await ingestLive(sources, store, clock);
    assert.equal(out.runs[0]!.ok, true);
    const rounds = await store.oracleRounds(
      anvil.chainId,
      proxy.toLowerCase(),
      0,
      Date.now() + 86_400_000,
      100,
    );
    assert.deepEqual(
      rounds.map((r) => [r.roundId, r.answer]).sort(),
      [
        [((1n << 64n) | 1n).toString(), 3000],
        [((1n << 64n) | 2n).toString(), 3010],
        [((2n << 64n) | 2n).toString(), 3120],
      ].sort(),
    );
  } finally {
    await store.close();
  }
});
