/**
 * End to end on a local chain: Morpho Blue and Chainlink-shaped feeds deployed on anvil,
 * positions opened, then `lrds ingest --once` and ingestion passes; the API answers with the
 * chain's exact figures, health follows prices, liquidations land in the history, and a chain
 * that stops answering leaves the last data served and aging.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Abi, custom } from 'viem';
import { chainSources } from '../../src/ingest/chain/index.ts';
import { createChainRpc } from '../../src/ingest/chain/rpc.ts';
import { chainSource } from '../../src/ingest/chain/source.ts';
import { ingestLive } from '../../src/ingest/live.ts';
import { parseSources } from '../../src/ingest/sources-file.ts';
import { createService, type Service } from '../../src/service.ts';
import { openStore } from '../../src/store/open.ts';
import type { Store } from '../../src/store/types.ts';
import { ManualClock } from '../clock.ts';
import { apiGet, embeddedSettings, QUIET, tempDir } from '../helpers.ts';
import { freePort } from '../net-helpers.ts';
import {
  type Anvil,
  type Artifact,
  compileContracts,
  deploy,
  localSources,
  mineOnceStateAged,
  readAt,
  sendTx,
  startAnvil,
  walkAddedLater,
} from './anvil.ts';

const WAD = 10n ** 18n;
const LLTV = 860_000_000_000_000_000n;

let anvil: Anvil;
let art: Record<string, Artifact>;
let morpho: `0x${string}`;
let weth: `0x${string}`;
let usdc: `0x${string}`;
let ethUsd: `0x${string}`;
let usdcUsd: `0x${string}`;
let oracle: `0x${string}`;
let irm: `0x${string}`;
let marketId: `0x${string}`;
let params: {
  loanToken: `0x${string}`;
  collateralToken: `0x${string}`;
  oracle: `0x${string}`;
  irm: `0x${string}`;
  lltv: bigint;
};
const users: `0x${string}`[] = [];

const send = (from: number, address: `0x${string}`, abi: Abi, fn: string, args: readonly unknown[] = []) =>
  sendTx(anvil, from, address, abi, fn, args);
const read = <T>(address: `0x${string}`, abi: Abi, fn: string, args: readonly unknown[] = []) =>
  readAt<T>(anvil, address, abi, fn, args);

before(async () => {
  art = compileContracts();
  anvil = await startAnvil();
  for (const i of [0, 1, 2]) users.push(anvil.client(i).account.address.toLowerCase() as `0x${string}`);
  const c = anvil.client(0);
  weth = await deploy(c, art.TestToken!, ['Wrapped Ether', 'WETH', 18]);
  usdc = await deploy(c, art.TestToken!, ['USD Coin', 'USDC', 6]);
  ethUsd = await deploy(c, art.TestAggregator!, [8, 'ETH / USD', 3000n * 10n ** 8n]);
  usdcUsd = await deploy(c, art.TestAggregator!, [8, 'USDC / USD', 10n ** 8n]);
  // 10^(36 + 6 (USDC) + 8 (quote feed) - 18 (WETH) - 8 (base feed))
  oracle = await deploy(c, art.TestChainlinkOracle!, [ethUsd, usdcUsd, 10n ** 24n]);
  morpho = await deploy(c, art.Morpho!, [users[0]]);
  irm = await deploy(c, art.IrmMock!);
  const M = art.Morpho!.abi;
  await send(0, morpho, M, 'enableIrm', [irm]);
  await send(0, morpho, M, 'enableLltv', [LLTV]);
  params = { loanToken: usdc, collateralToken: weth, oracle, irm, lltv: LLTV };
  const created = await send(0, morpho, M, 'createMarket', [params]);
  marketId = created.logs[0]!.topics[1]!;
  const T = art.TestToken!.abi;
  // A lender supplies 1,000,000 USDC; two borrowers post WETH and borrow.
  await send(0, usdc, T, 'mint', [users[0], 2_000_000n * 10n ** 6n]);
  await send(0, usdc, T, 'approve', [morpho, 2n ** 256n - 1n]);
  await send(0, morpho, M, 'supply', [params, 1_000_000n * 10n ** 6n, 0n, users[0], '0x']);
  for (const [i, collateral, borrow] of [
    [1, 10n * WAD, 20_000n * 10n ** 6n],
    [2, 1n * WAD, 2_500n * 10n ** 6n],
  ] as const) {
    await send(i, weth, T, 'mint', [users[i], collateral]);
    await send(i, weth, T, 'approve', [morpho, collateral]);
    await send(i, morpho, M, 'supplyCollateral', [params, collateral, users[i], '0x']);
    await send(i, morpho, M, 'borrow', [params, borrow, 0n, users[i], users[i]]);
  }
});

after(async () => {
  await anvil?.stop();
});

/** An RPC at `port` that forwards every request to `target` (the chain). */
async function rpcProxy(port: number, target: string): Promise<Server> {
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const answer = await fetch(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Buffer.concat(chunks),
    });
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return server;
}

function sourcesJson() {
  return localSources(anvil, { morpho, ethUsd, usdcUsd });
}

/**
 * A new USDC / WETH market of `oracle` and `irm` (enabled): the lender supplies 100,000 USDC,
 * user `borrower` posts 1 WETH and borrows `borrowUsdc`.
 */
async function openMarket(oracle: `0x${string}`, irm: `0x${string}`, borrower: number, borrowUsdc: bigint) {
  const M = art.Morpho!.abi;
  const T = art.TestToken!.abi;
  const user = users[borrower]!;
  const p = { loanToken: usdc, collateralToken: weth, oracle, irm, lltv: LLTV };
  const id = (await send(0, morpho, M, 'createMarket', [p])).logs[0]!.topics[1]!;
  await send(0, morpho, M, 'supply', [p, 100_000n * 10n ** 6n, 0n, users[0], '0x']);
  await send(borrower, weth, T, 'mint', [user, WAD]);
  await send(borrower, weth, T, 'approve', [morpho, WAD]);
  await send(borrower, morpho, M, 'supplyCollateral', [p, WAD, user, '0x']);
  await send(borrower, morpho, M, 'borrow', [p, borrowUsdc * 10n ** 6n, 0n, user, user]);
  return { id, params: p };
}

/** Morpho's own health factor of a position at the chain's latest block, with interest accrued. */
async function chainHealth(user: string): Promise<number> {
  await send(0, morpho, art.Morpho!.abi, 'accrueInterest', [params]);
  const [, borrowShares, collateral] = await read<[bigint, bigint, bigint]>(
    morpho,
    art.Morpho!.abi,
    'position',
    [marketId, user],
  );
  const m = await read<bigint[]>(morpho, art.Morpho!.abi, 'market', [marketId]);
  const price = await read<bigint>(oracle, art.TestChainlinkOracle!.abi, 'price');
  // Morpho: borrowed = shares toAssetsUp; maxBorrow = collateral.mulDivDown(price, 1e36).wMulDown(lltv)
  const VIRTUAL_SHARES = 10n ** 6n;
  const borrowed = (borrowShares * (m[2]! + 1n) + (m[3]! + VIRTUAL_SHARES) - 1n) / (m[3]! + VIRTUAL_SHARES);
  const maxBorrow = (((collateral * price) / 10n ** 36n) * LLTV) / WAD;
  return Number((maxBorrow * WAD) / borrowed) / 1e18;
}

describe('Morpho Blue and Chainlink feeds on a local chain', () => {
  let dataDir: string;
  let store: Store;
  let service: Service | null = null;
  let key: string;
  let testKey: string;
  const clock = new ManualClock(Date.now());
  const get = apiGet(() => ({ service, key }));
  const syncClock = async () => {
    const block = await anvil.client().getBlock();
    clock.set(Number(block.timestamp) * 1000 + 1000);
  };
  // One set of sources for the whole suite, as in a running process: passes after the first
  // read only the positions that events touched.
  let sources: ReturnType<typeof chainSources> | null = null;
  const pass = async () => {
    await syncClock();
    sources ??= chainSources(parseSources(sourcesJson(), 'test'));
    const out = await ingestLive(sources, store, clock);
    await service?.models.reloadIfChanged();
    return out;
  };

  before(async () => {
    dataDir = tempDir('lrds-chain-');
  });
  after(async () => {
    await service?.close();
    await store?.close();
  });

  test('behavior: lrds ingest --once reads the chain into the store and exits 0', async () => {
    const file = join(dataDir, 'sources.json');
    writeFileSync(file, JSON.stringify(sourcesJson()));
    const res = spawnSync(process.execPath, ['src/cli/main.ts', 'ingest', '--once'], {
      env: { ...process.env, DATA_DIR: dataDir, SOURCES_FILE: file, DATABASE_URL: '' },
      encoding: 'utf8',
    });
    assert.equal(res.status, 0, res.stderr);
    assert.match(res.stderr, /chain:31337: ok at block \d+: 1 markets, 3 positions/);
    store = await openStore({ dataDir, databaseUrl: null }, clock);
    const info = await store.datasetInfo();
    assert.equal(info?.kind, 'live');
    assert.equal(info?.marketCount, 1);
    assert.equal(info?.positionCount, 3);
    // A source that cannot be read: exit 1, the source named.
    writeFileSync(
      file,
      JSON.stringify({ chains: [{ ...sourcesJson().chains[0], chainId: 99, rpcUrl: 'http://127.0.0.1:1' }] }),
    );
    const bad = spawnSync(process.execPath, ['src/cli/main.ts', 'ingest', '--once'], {
      env: { ...process.env, DATA_DIR: dataDir, SOURCES_FILE: file, DATABASE_URL: '' },
      encoding: 'utf8',
    });
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /chain:99: FAILED/);
    assert.match(bad.stderr, /1 of 1 sources failed: chain:99/);
  });

  test("default: markets, positions and oracles with the chain's exact figures, served live", async () => {
    await pass();
    service = await createService(
      { ...embeddedSettings(dataDir), simulationTickMs: 0 },
      { clock, server: QUIET },
    );
    const account = await service.keys.ensureAccount('fund');
    key = (await service.keys.create({ accountId: account.id, tier: 'enterprise', mode: 'live' })).key;
    testKey = (await service.keys.create({ accountId: account.id, tier: 'enterprise', mode: 'test' })).key;
    // Morpho's own health factor, with interest accrued on chain in the block the pass reads.
    const hf2 = await chainHealth(users[2]!);
    await pass();
    const head = Number(await anvil.client().getBlockNumber());
    const m = await read<bigint[]>(morpho, art.Morpho!.abi, 'market', [marketId]);
    const [, , , ethUpdatedAt] = await read<bigint[]>(ethUsd, art.TestAggregator!.abi, 'latestRoundData');
    const uniqueKey = `morpho-31337-${marketId}`;
    const detail = await get(`/markets/${uniqueKey}`);
    assert.deepEqual(
      {
        collateral: detail.data.collateral,
        loan: detail.data.loan,
        collateralAddress: detail.data.collateralAddress,
        collateralPrice: detail.data.collateralPrice,
        loanPrice: detail.data.loanPrice,
        supply: detail.data.supply,
        borrow: detail.data.borrow,
        lltv: detail.data.lltv,
        oracle: [
          detail.data.oracle.address,
          detail.data.oracle.type,
          detail.data.oracle.feeds.map((f: { address: string }) => f.address),
        ],
        lastUpdate: detail.data.oracleHealth.lastUpdateTimestamp,
      },
      {
        collateral: 'WETH',
        loan: 'USDC',
        collateralAddress: weth.toLowerCase(),
        collateralPrice: 3000,
        loanPrice: 1,
        // the chain's totals (accrued in the block read), in USDC at $1, to the cent
        supply: Math.round(Number(m[0]!) / 1e4) / 100,
        borrow: Math.round(Number(m[2]!) / 1e4) / 100,
        lltv: 0.86,
        oracle: [oracle.toLowerCase(), 'ChainlinkOracleV2', [ethUsd.toLowerCase(), usdcUsd.toLowerCase()]],
        lastUpdate: Number(ethUpdatedAt),
      },
    );
    // borrow APY: IrmMock's rate (utilization per year), compounded continuously as Morpho does
    const utilization = Number(m[2]!) / Number(m[0]!);
    assert.ok(Math.abs(detail.data.borrowApy - Math.expm1(utilization)) < 1e-7);
    assert.equal(detail.meta.freshness, 'live');
    assert.deepEqual(detail.meta.blocks, { '31337': head });
    const health = (await service.app.inject({ url: '/api/v1/health' })).json();
    const chainSource = health.sources.find((x: { id: string }) => x.id === 'chain:31337');
    assert.deepEqual([chainSource.lastBlock, chainSource.lagBlocks], [{ '31337': head }, { '31337': 0 }]);

    const wallet = await get(`/positions?address=${users[2]}`);
    assert.equal(wallet.data.length, 1);
    const p = wallet.data[0];
    assert.ok(Math.abs(p.healthFactor - hf2) < 1e-6, `${p.healthFactor} vs ${hf2}`);
    assert.equal(p.state.collateralUsd, 3000);
    assert.ok(Math.abs(p.state.borrowAssetsUsd - 2500) < 0.01);
    // test keys keep the sandbox: no local chain there
    assert.equal((await get('/markets?chainIds=31337', testKey)).data.length, 0);
  });

  test('behavior: health follows the price, and a liquidation lands in the history', async () => {
    await send(0, ethUsd, art.TestAggregator!.abi, 'updateAnswer', [2_800n * 10n ** 8n]);
    const hf2 = await chainHealth(users[2]!);
    assert.ok(hf2 < 1);
    await pass();
    const p = (await get(`/positions?address=${users[2]}`)).data[0];
    assert.ok(Math.abs(p.healthFactor - hf2) < 1e-6, `${p.healthFactor} vs ${hf2}`);
    assert.equal(p.collateralPrice, 2800);
    const atRisk = await get('/risk/positions-at-risk?chainIds=31337');
    assert.deepEqual(
      atRisk.data.map((x: { user: { address: string } }) => x.user.address),
      [users[2]],
    );
    // the lender liquidates half the collateral: the pass reads that position alone again
    const receipt = await send(0, morpho, art.Morpho!.abi, 'liquidate', [
      params,
      users[2],
      WAD / 2n,
      0n,
      '0x',
    ]);
    // ETH falls further in the next block, before the pass reads the liquidation: it is priced
    // at its own block's $2,800, not at the pass's $2,500
    await send(0, ethUsd, art.TestAggregator!.abi, 'updateAnswer', [2_500n * 10n ** 8n]);
    await pass();
    assert.equal(sources![0]!.lastRun()!.positionsRead, 1);
    assert.equal((await get(`/positions?address=${users[1]}`)).data[0].collateralPrice, 2500);
    const list = await get('/liquidations?chainIds=31337');
    assert.equal(list.data.length, 1);
    const l = list.data[0];
    const repaid = Number(BigInt(receipt.logs.at(-1)!.data.slice(0, 66))) / 1e6;
    assert.deepEqual(
      [
        l.protocol,
        l.txHash,
        l.block,
        l.borrower,
        l.liquidator,
        l.collateralSeized,
        l.collateralSeizedUsd,
        l.debtRepaid,
      ],
      [
        'morpho',
        receipt.transactionHash,
        Number(receipt.blockNumber),
        users[2],
        users[0],
        0.5,
        1400,
        Number(repaid.toPrecision(8)),
      ],
    );
    // read again by the next pass: still one
    await pass();
    assert.equal((await get('/liquidations?chainIds=31337')).data.length, 1);
  });

  test('behavior: a reorganization that drops the liquidation rolls it back, and the position with it', async () => {
    const before = (await get('/liquidations?chainIds=31337')).data;
    assert.equal(before.length, 1);
    const head = await anvil.client().getBlockNumber();
    // the chain loses its blocks from the liquidation's on, replaced by empty ones (same height)
    await anvil
      .client()
      .request({ method: 'anvil_reorg' as never, params: [Number(head) - before[0].block + 1, []] as never });
    assert.equal(await anvil.client().getBlockNumber(), head);
    const out = await pass();
    assert.ok(out.runs[0]!.items.some((i) => i.id === `reorg:${before[0].block}`));
    assert.equal((await get('/liquidations?chainIds=31337')).data.length, 0);
    const p = (await get(`/positions?address=${users[2]}`)).data[0];
    assert.equal(p.state.collateralUsd, 2800);
    // a pass with nothing new reads one block back to check it, and changes nothing
    const again = await pass();
    assert.ok(!again.runs[0]!.items.some((i) => i.id.startsWith('reorg:')));
    assert.equal((await get('/liquidations?chainIds=31337')).data.length, 0);
  });

  test('behavior: lrds serve with SOURCES_FILE reads the chain before it serves, then follows it', async () => {
    const dir = tempDir('lrds-chain-serve-');
    const file = join(dir, 'sources.json');
    writeFileSync(file, JSON.stringify(sourcesJson()));
    await syncClock();
    const served = await createService(
      { ...embeddedSettings(dir), sourcesFile: file, simulationTickMs: 0 },
      { clock, server: QUIET },
    );
    try {
      const account = await served.keys.ensureAccount('desk');
      const k = (await served.keys.create({ accountId: account.id, tier: 'enterprise', mode: 'live' })).key;
      const ask = async (url: string) =>
        (await served.app.inject({ url: `/api/v1${url}`, headers: { authorization: `Bearer ${k}` } })).json();
      const [, answer] = await read<bigint[]>(ethUsd, art.TestAggregator!.abi, 'latestRoundData');
      const first = await ask(`/positions?address=${users[1]}`);
      assert.equal(first.data[0].collateralPrice, Number(answer) / 1e8);
      assert.equal(first.meta.freshness, 'live');
      // the sandbox was never seeded: only the chain's market
      assert.equal((await ask('/markets')).meta.total, 1);
      await send(0, ethUsd, art.TestAggregator!.abi, 'updateAnswer', [2_700n * 10n ** 8n]);
      const hf1 = await chainHealth(users[1]!);
      await syncClock();
      await served.ingest();
      await served.models.reloadIfChanged();
      const next = await ask(`/positions?address=${users[1]}`);
      assert.equal(next.data[0].collateralPrice, 2700);
      assert.ok(Math.abs(next.data[0].healthFactor - hf1) < 1e-6);

      // A second server on the same store serves the same data and does not ingest while the
      // first holds the ingestion lease; once the first stops, it takes over.
      const second = await createService(
        { ...embeddedSettings(dir), sourcesFile: file, simulationTickMs: 0 },
        { clock, server: QUIET },
      );
      try {
        // (A pass writes its changes to the dataset: the feed's sequence number moves, the
        // dataset's version does not.)
        const written = async () => {
          const info = (await second.store.datasetInfo())!;
          return { version: info.version, seq: info.changeSeq };
        };
        const w0 = await written();
        await send(0, ethUsd, art.TestAggregator!.abi, 'updateAnswer', [2_750n * 10n ** 8n]);
        await syncClock();
        await second.ingest();
        assert.deepEqual(await written(), w0, "the lease is the first server's");
        await served.ingest();
        const w1 = await written();
        assert.equal(w1.version, w0.version);
        assert.ok(w1.seq > w0.seq, 'the new price written as a change');
        await served.close();
        await send(0, ethUsd, art.TestAggregator!.abi, 'updateAnswer', [2_800n * 10n ** 8n]);
        await syncClock();
        await second.ingest();
        const w2 = await written();
        assert.ok(w2.version === w1.version && w2.seq > w1.seq, 'taken over at once');
        await second.models.reloadIfChanged();
        const k2 = (await second.keys.create({ accountId: account.id, tier: 'enterprise', mode: 'live' }))
          .key;
        const moved = (
          await second.app.inject({
            url: `/api/v1/positions?address=${users[1]}`,
            headers: { authorization: `Bearer ${k2}` },
          })
        ).json();
        assert.equal(moved.data[0].collateralPrice, 2800);
      } finally {
        await second.close();
      }
    } finally {
      await served.close();
    }
  });

  test('behavior: lrds serve started while its RPC is down serves no live data yet, then what the first pass that reads the chain writes', async () => {
    const dir = tempDir('lrds-chain-down-');
    // The file's RPC URL: nothing listens there yet.
    const port = await freePort();
    const file = join(dir, 'sources.json');
    writeFileSync(
      file,
      JSON.stringify(
        localSources(
          { chainId: anvil.chainId, url: `http://127.0.0.1:${port}` },
          { morpho, ethUsd, usdcUsd },
        ),
      ),
    );
    await syncClock();
    const served = await createService(
      { ...embeddedSettings(dir), sourcesFile: file, simulationTickMs: 0 },
      { clock, server: QUIET, datasetRefreshMs: 50 },
    );
    let proxy: Server | null = null;
    try {
      const account = await served.keys.ensureAccount('desk');
      const k = (await served.keys.create({ accountId: account.id, tier: 'enterprise', mode: 'live' })).key;
      const ask = async (url: string) =>
        (await served.app.inject({ url: `/api/v1${url}`, headers: { authorization: `Bearer ${k}` } })).json();
      const health = async () => (await served.app.inject({ url: '/api/v1/health' })).json();
      const empty = await ask('/markets');
      assert.equal(empty.meta.total, 0);
      assert.equal(empty.meta.freshness, 'snapshot');
      assert.equal(empty.meta.asOf, undefined);
      const down = await health();
      assert.equal(down.status, 'degraded');
      assert.equal(down.sources[0].lastRefresh, null);
      assert.match(down.sources[0].lastError, /HTTP request failed/);
      // The RPC comes up at the file's URL (a proxy to the chain): the next pass reads it, and
      // the live model follows the dataset it writes (the service's own reload, within a second).
      proxy = await rpcProxy(port, anvil.url);
      await syncClock();
      await served.ingest();
      const deadline = performance.now() + 10_000;
      while ((await ask('/markets')).meta.total !== 1) {
        assert.ok(performance.now() < deadline, 'the dataset written was not followed');
        await new Promise((r) => setTimeout(r, 50));
      }
      const markets = await ask('/markets');
      assert.equal(markets.data[0].uniqueKey, `morpho-31337-${marketId}`);
      assert.equal(markets.meta.freshness, 'live');
      assert.ok(markets.meta.asOf);
      assert.ok(markets.meta.blocks['31337'] > 0);
      assert.equal((await ask(`/positions?address=${users[1]}`)).data.length, 1);
      const up = await health();
      assert.equal(up.status, 'ok');
      assert.equal(up.sources[0].consecutiveFailures, 0);
      assert.ok(up.sources[0].lastRefresh);
      assert.deepEqual(
        up.datasets
          .filter((d: { mode: string }) => d.mode === 'live')
          .map((d: { markets: number }) => d.markets),
        [1],
      );
    } finally {
      await served.close();
      proxy?.closeAllConnections();
      proxy?.close();
    }
  });

  test("behavior: a feed's staleness follows the chain's time", async () => {
    await anvil.client().increaseTime({ seconds: 7200 });
    await anvil.client().mine({ blocks: 1 });
    await pass();
    const stale = await get(`/oracles/31337/${oracle}`);
    const eth = stale.data.feeds.find((f: { address: string }) => f.address === ethUsd.toLowerCase());
    assert.equal(eth.isStale, true);
    assert.ok(eth.secondsSinceUpdate >= 7200);
    // two rounds between two passes: both are recorded (the feed's AnswerUpdated logs)
    await send(0, ethUsd, art.TestAggregator!.abi, 'updateAnswer', [2_840n * 10n ** 8n]);
    await send(0, ethUsd, art.TestAggregator!.abi, 'updateAnswer', [2_850n * 10n ** 8n]);
    await pass();
    const fresh = await get(`/oracles/31337/${oracle}`);
    assert.equal(
      fresh.data.feeds.find((f: { address: string }) => f.address === ethUsd.toLowerCase()).isStale,
      false,
    );
    const rounds = await get(`/oracles/31337/${oracle}/rounds?feed=${ethUsd.toLowerCase()}`);
    // every round published (2,700, 2,750 and 2,800 while the other servers ingested into their
    // own store: this store's next pass read them from the logs), without the $2,500 round of the block the
    // reorganization orphaned (rounds of the common ancestor's second go too, and the latest is
    // read again: 3,000 may be among them)
    const answers = rounds.data.map((r: { answer: number }) => r.answer);
    assert.deepEqual(
      answers.filter((a: number) => a !== 3000),
      [2800, 2700, 2750, 2800, 2840, 2850],
    );
  });

  test('behavior: an RPC failing mid-pass fails the pass; the chain keeps its data, and the next pass reads it all', async () => {
    // The RPC answers everything but eth_call while `failing` (a 502 from a provider).
    let failing = false;
    const transport = custom({
      async request({ method, params }: { method: string; params?: unknown }) {
        if (failing && method === 'eth_call') throw new Error('HTTP request failed: 502 Bad Gateway');
        const res = await fetch(anvil.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
        });
        const body = (await res.json()) as {
          result?: unknown;
          error?: { code: number; message: string; data?: unknown };
        };
        if (body.error) throw Object.assign(new Error(body.error.message), body.error);
        return body.result;
      },
    });
    const flaky = chainSources(parseSources(sourcesJson(), 'test'), { transport: () => transport });
    await syncClock();
    assert.equal((await ingestLive(flaky, store, clock)).runs[0]!.ok, true);
    const before = (await store.datasetInfo())!;
    failing = true;
    await send(0, ethUsd, art.TestAggregator!.abi, 'updateAnswer', [2_860n * 10n ** 8n]);
    await syncClock();
    const failed = await ingestLive(flaky, store, clock);
    assert.equal(failed.runs[0]!.ok, false);
    assert.match(failed.runs[0]!.error!, /502/);
    // nothing emptied, nothing moved on
    const kept = (await store.datasetInfo())!;
    assert.deepEqual([kept.marketCount, kept.positionCount], [before.marketCount, before.positionCount]);
    assert.equal(
      failed.runs[0]!.state.lastBlock['31337'],
      (await store.listSources())[0]!.lastBlock['31337'],
    );
    failing = false;
    const again = await ingestLive(flaky, store, clock);
    assert.equal(again.runs[0]!.ok, true);
    assert.equal(again.runs[0]!.markets, before.marketCount);
    await service!.models.reloadIfChanged();
    assert.equal((await get(`/positions?address=${users[1]}`)).data[0].collateralPrice, 2860);
  });

  test("behavior: prices come from the file's feeds and listed tokens: a market's own feed or a look-alike token does not reprice WETH", async () => {
    const c = anvil.client(0);
    // Anyone may create a Morpho market: a token named WETH, an oracle on a feed "ETH / USD" at $1M.
    const fakeWeth = await deploy(c, art.TestToken!, ['Wrapped Ether', 'WETH', 18]);
    const fakeFeed = await deploy(c, art.TestAggregator!, [8, 'ETH / USD', 1_000_000n * 10n ** 8n]);
    const fakeOracle = await deploy(c, art.TestChainlinkOracle!, [fakeFeed, usdcUsd, 10n ** 24n]);
    const fake = { loanToken: usdc, collateralToken: fakeWeth, oracle: fakeOracle, irm, lltv: LLTV };
    const created = await send(0, morpho, art.Morpho!.abi, 'createMarket', [fake]);
    const fakeKey = `morpho-31337-${created.logs[0]!.topics[1]!}`;
    // The reference data lists this chain's real WETH and USDC by address.
    const config = parseSources(sourcesJson(), 'test').chains[0]!;
    const listed = chainSource(config, createChainRpc(anvil.chainId, anvil.url), {
      feeds: [],
      tokens: [
        { chainId: 31337, address: weth.toLowerCase(), symbol: 'WETH', name: 'Wrapped Ether', decimals: 18 },
        { chainId: 31337, address: usdc.toLowerCase(), symbol: 'USDC', name: 'USD Coin', decimals: 6 },
      ],
    });
    await syncClock();
    const out = await ingestLive([listed], store, clock);
    assert.equal(out.runs[0]!.ok, true);
    await service!.models.reloadIfChanged();
    const [, answer] = await read<bigint[]>(ethUsd, art.TestAggregator!.abi, 'latestRoundData');
    const real = await get(`/markets/morpho-31337-${marketId}`);
    assert.equal(
      real.data.collateralPrice,
      Number(answer) / 1e8,
      "WETH: the file's ETH/USD, not the $1M feed",
    );
    // the look-alike is not a listed WETH: it is priced by its own oracle, and says whose feed
    const other = await get(`/markets/${fakeKey}`);
    assert.equal(other.data.collateralPrice, 1_000_000);
    assert.deepEqual(
      other.data.oracle.feeds.map((f: { address: string }) => f.address),
      [fakeFeed.toLowerCase(), usdcUsd.toLowerCase()],
    );
  });

  test("behavior: a market whose oracle burns all the gas it is given does not fail the chain's passes", async () => {
    // The test before ingested with another source: what this one kept may predate blocks it did
    // not read, so the first pass after reads every account it knew again; the next, none.
    // (Blocks once the state read last is old enough: each pass reads the state.)
    const read: number[] = [];
    for (let i = 0; i < 2; i++) {
      await mineOnceStateAged(anvil);
      assert.equal((await pass()).runs[0]!.ok, true);
      read.push(sources![0]!.lastRun()!.positionsRead);
    }
    assert.ok(read[0]! > 0 && read[1] === 0, `positions read: ${read}`);
    const quiet = sources![0]!.lastRun()!.rpcRequests;
    // Anyone may create a Morpho market naming any oracle: this one's price() never returns.
    const burner = await deploy(anvil.client(0), art.TestGasBurner!);
    const hostile = { loanToken: usdc, collateralToken: weth, oracle: burner, irm, lltv: LLTV };
    await send(0, morpho, art.Morpho!.abi, 'createMarket', [hostile]);
    await send(0, ethUsd, art.TestAggregator!.abi, 'updateAnswer', [2_870n * 10n ** 8n]);
    const out = await pass();
    assert.equal(out.runs[0]!.ok, true, out.runs[0]!.error ?? '');
    // the other markets are read as ever, at the new price
    assert.equal((await get(`/markets/morpho-31337-${marketId}`)).data.collateralPrice, 2870);
    // and the next passes too, at the cost of a pass without it (its failing call rides in the
    // others' requests: multicall-split.test.ts shows a batch it brings down)
    await mineOnceStateAged(anvil);
    const next = await pass();
    assert.equal(next.runs[0]!.ok, true, next.runs[0]!.error ?? '');
    assert.equal(sources![0]!.lastRun()!.stateRead, true);
    assert.equal(sources![0]!.lastRun()!.rpcRequests, quiet);
  });

  test('behavior: a block with nothing of ours reads no state while the state read last is young; a log of ours, or its age, reads it again', async () => {
    const market = `/markets/morpho-31337-${marketId}`;
    await mineOnceStateAged(anvil);
    assert.equal((await pass()).runs[0]!.ok, true);
    const full = sources![0]!.lastRun()!;
    assert.equal(full.stateRead, true);
    const before = (await get(market)).data;
    // Nothing of ours in the block: its header, the logs of our contracts and the file's feeds,
    // and those of the feeds oracles name; the markets and positions served as read.
    await anvil.client().mine({ blocks: 1 });
    const quiet = await pass();
    const run = sources![0]!.lastRun()!;
    assert.deepEqual([run.stateRead, run.positionsRead], [false, 0]);
    assert.ok(run.rpcRequests <= 3 && run.rpcRequests < full.rpcRequests, `${run.rpcRequests} requests`);
    assert.equal(quiet.runs[0]!.state.lastBlock['31337'], Number(await anvil.client().getBlockNumber()));
    const after = (await get(market)).data;
    assert.deepEqual([after.borrow, after.collateralPrice], [before.borrow, before.collateralPrice]);
    // No new block at all: the head alone.
    await pass();
    assert.deepEqual([sources![0]!.lastRun()!.stateRead, sources![0]!.lastRun()!.rpcRequests], [false, 1]);
    // A feed's round is ours: the state is read, at the new price.
    await send(0, ethUsd, art.TestAggregator!.abi, 'updateAnswer', [2_880n * 10n ** 8n]);
    await pass();
    assert.equal(sources![0]!.lastRun()!.stateRead, true);
    assert.equal((await get(market)).data.collateralPrice, 2880);
    // A borrower's log too: the state is read, and the position.
    await anvil.client().mine({ blocks: 1 });
    await pass();
    assert.equal(sources![0]!.lastRun()!.stateRead, false);
    await send(1, morpho, art.Morpho!.abi, 'borrow', [params, 10n ** 6n, 0n, users[1], users[1]]);
    await pass();
    assert.deepEqual([sources![0]!.lastRun()!.stateRead, sources![0]!.lastRun()!.positionsRead], [true, 1]);
    // And the state once as old as stateMaxAgeSeconds, with nothing of ours: a day's interest
    // (30 s of it moves the market's figures by less than the 1 part in 10 million written).
    const accrued = (await get(market)).data.borrow;
    await anvil.client().increaseTime({ seconds: 86_400 });
    await anvil.client().mine({ blocks: 1 });
    await pass();
    assert.equal(sources![0]!.lastRun()!.stateRead, true);
    assert.ok((await get(market)).data.borrow > accrued);
    await send(0, ethUsd, art.TestAggregator!.abi, 'updateAnswer', [2_870n * 10n ** 8n]);
    await pass();
  });

  test('behavior: a market priced again is handed whole: what its accounts did while it had no price is served', async () => {
    const A = art.TestAggregator!.abi;
    await mineOnceStateAged(anvil);
    await pass();
    // USDC loses its price: the market keeps its last records, while a borrower repays a part
    // (the market's oracle, on that feed too, refuses a borrow meanwhile)
    await send(0, usdcUsd, A, 'updateAnswer', [0n]);
    const unpriced = await pass();
    assert.equal(unpriced.runs[0]!.items.find((i) => i.id === `morpho:${marketId}`)?.ok, false);
    await send(1, usdc, art.TestToken!.abi, 'approve', [morpho, 5_000n * 10n ** 6n]);
    await send(1, morpho, art.Morpho!.abi, 'repay', [params, 5_000n * 10n ** 6n, 0n, users[1], '0x']);
    await pass();
    // priced again, with no log naming the borrower
    await send(0, usdcUsd, A, 'updateAnswer', [10n ** 8n]);
    const hf1 = await chainHealth(users[1]!);
    await pass();
    const p = (await get(`/positions?address=${users[1]}`)).data[0];
    assert.ok(Math.abs(p.healthFactor - hf1) < 1e-6, `${p.healthFactor} vs ${hf1}`);
  });

  test("behavior: a position not read still earns its supply's interest, and follows its oracle where it moves apart from the collateral's feed", async () => {
    const M = art.Morpho!.abi;
    const key = `morpho-31337-${marketId}`;
    const lent = async () =>
      (await get(`/positions?address=${users[0]}`)).data.find(
        (x: { market: { uniqueKey: string } }) => x.market.uniqueKey === key,
      ).state.supplyAssetsUsd as number;
    await mineOnceStateAged(anvil);
    await pass();
    const before = await lent();
    // 60 days with no log of the lender: its supply is read again, with its interest
    await anvil.client().increaseTime({ seconds: 60 * 86_400 });
    await anvil.client().mine({ blocks: 1 });
    await pass();
    assert.ok((await lent()) / before - 1 > 1e-5, `${await lent()} vs ${before}`);

    // A market whose oracle reads an ETH/USD feed the file does not list: its borrower's
    // health follows that feed, while WETH's price is the file's.
    const c = anvil.client(0);
    const ethUsd2 = await deploy(c, art.TestAggregator!, [8, 'ETH / USD', 3000n * 10n ** 8n]);
    const oracle2 = await deploy(c, art.TestChainlinkOracle!, [ethUsd2, usdcUsd, 10n ** 24n]);
    const { id: id2 } = await openMarket(oracle2, irm, 1, 2_000n);
    await pass();
    await mineOnceStateAged(anvil);
    await pass();
    await send(0, ethUsd2, art.TestAggregator!.abi, 'updateAnswer', [2_500n * 10n ** 8n]);
    await pass();
    // That feed's new round is read once (the logs that found it are the rounds'): the pass
    // costs what a round of a feed of the file costs, and the round is recorded.
    const namedRound = sources![0]!.lastRun()!.rpcRequests;
    const rounds = await store.oracleRounds(31337, ethUsd2.toLowerCase(), 0, 8.64e15, 10);
    assert.ok(
      rounds.some((r) => r.answer === 2500),
      JSON.stringify(rounds),
    );
    const [, borrowShares, collateral] = await read<[bigint, bigint, bigint]>(morpho, M, 'position', [
      id2,
      users[1],
    ]);
    const m = await read<bigint[]>(morpho, M, 'market', [id2]);
    const price = await read<bigint>(oracle2, art.TestChainlinkOracle!.abi, 'price');
    const borrowed = Number(borrowShares * (m[2]! + 1n)) / Number(m[3]! + 10n ** 6n);
    const hf = (((Number(collateral) * Number(price)) / 1e36) * Number(LLTV)) / 1e18 / borrowed;
    const p = (await get(`/positions?address=${users[1]}`)).data.find(
      (x: { market: { uniqueKey: string } }) => x.market.uniqueKey === `morpho-31337-${id2}`,
    );
    assert.ok(Math.abs(p.healthFactor / hf - 1) < 1e-6, `${p.healthFactor} vs ${hf}`);
    assert.equal(p.collateralPrice, (await get(`/markets/${key}`)).data.collateralPrice);
    await mineOnceStateAged(anvil);
    await pass();
    await send(0, usdcUsd, art.TestAggregator!.abi, 'updateAnswer', [10n ** 8n]);
    await pass();
    assert.equal(sources![0]!.lastRun()!.rpcRequests, namedRound);
  });

  test('behavior: an account its logs name while its market cannot be read is read once it can be', async () => {
    const M = art.Morpho!.abi;
    const I = art.TestIrm!.abi;
    const c = anvil.client(0);
    const irm3 = await deploy(c, art.TestIrm!);
    await send(0, morpho, M, 'enableIrm', [irm3]);
    const { id: id3, params: params3 } = await openMarket(oracle, irm3, 2, 1_000n);
    await pass();
    await mineOnceStateAged(anvil);
    await pass();
    const debt = async () =>
      (await get(`/positions?address=${users[2]}`)).data.find(
        (x: { market: { uniqueKey: string } }) => x.market.uniqueKey === `morpho-31337-${id3}`,
      ).state.borrowAssetsUsd as number;
    assert.ok(Math.abs((await debt()) - 1_000) < 1, String(await debt()));
    // The IRM's view stops answering: the market cannot be read, and keeps its last records,
    // while the borrower repays half.
    await send(0, irm3, I, 'setViewReverts', [true]);
    await mineOnceStateAged(anvil);
    const failing = await pass();
    assert.equal(failing.runs[0]!.items.find((i) => i.id === `morpho:${id3}`)?.ok, false);
    await send(2, usdc, art.TestToken!.abi, 'approve', [morpho, 500n * 10n ** 6n]);
    await send(2, morpho, M, 'repay', [params3, 500n * 10n ** 6n, 0n, users[2], '0x']);
    await pass();
    // Read again: the repayment is served, with no new log naming the borrower.
    await send(0, irm3, I, 'setViewReverts', [false]);
    await mineOnceStateAged(anvil);
    await pass();
    assert.ok(Math.abs((await debt()) - 500) < 1, String(await debt()));
  });

  test('behavior: stateMaxAgeSeconds 0 reads the state every pass', async () => {
    const json = sourcesJson();
    Object.assign(json.chains[0]!, { stateMaxAgeSeconds: 0 });
    const every = chainSources(parseSources(json, 'test'));
    for (let i = 0; i < 2; i++) {
      await anvil.client().mine({ blocks: 1 });
      await syncClock();
      assert.equal((await ingestLive(every, store, clock)).runs[0]!.ok, true);
      assert.equal(every[0]!.lastRun()!.stateRead, true);
    }
  });

  test('behavior: an RPC whose head is behind the last block read fails the pass and keeps the data', async () => {
    const snapshot = await anvil.client().request({ method: 'evm_snapshot' as never });
    await anvil.client().mine({ blocks: 3 });
    const first = await pass();
    assert.equal(first.runs[0]!.ok, true, first.runs[0]!.error ?? '');
    const read = (await store.listSources())[0]!.lastBlock['31337']!;
    await anvil.client().request({ method: 'evm_revert' as never, params: [snapshot] as never });
    const behind = await pass();
    assert.equal(behind.runs[0]!.ok, false);
    assert.match(behind.runs[0]!.error!, /behind the last block read/);
    assert.equal((await store.listSources())[0]!.lastBlock['31337'], read);
    assert.ok((await store.datasetInfo())!.marketCount >= 1);
    // the chain moves past it again: read on (from the common ancestor if the blocks differ)
    await anvil.client().mine({ blocks: 5 });
    const after = await pass();
    assert.equal(after.runs[0]!.ok, true, after.runs[0]!.error ?? '');
  });

  test('behavior: a market without a USD price is served with what is known (docs/decisions.md "Real sources"), its borrowers kept for when it is priced', async () => {
    const c = anvil.client(0);
    const dai = await deploy(c, art.TestToken!, ['Dai Stablecoin', 'DAI', 18]);
    const daiUsd = await deploy(c, art.TestAggregator!, [8, 'DAI / USD', 10n ** 8n]);
    // 10^(36 + 18 (DAI) + 8 - 18 (WETH) - 8)
    const daiOracle = await deploy(c, art.TestChainlinkOracle!, [ethUsd, daiUsd, 10n ** 36n]);
    const daiMarket = { loanToken: dai, collateralToken: weth, oracle: daiOracle, irm, lltv: LLTV };
    const created = await send(0, morpho, art.Morpho!.abi, 'createMarket', [daiMarket]);
    const key = `morpho-31337-${created.logs[0]!.topics[1]!}`;
    const T = art.TestToken!.abi;
    await send(0, dai, T, 'mint', [users[0], 100_000n * WAD]);
    await send(0, dai, T, 'approve', [morpho, 2n ** 256n - 1n]);
    await send(0, morpho, art.Morpho!.abi, 'supply', [daiMarket, 100_000n * WAD, 0n, users[0], '0x']);
    await send(1, weth, T, 'mint', [users[1], WAD]);
    await send(1, weth, T, 'approve', [morpho, WAD]);
    await send(1, morpho, art.Morpho!.abi, 'supplyCollateral', [daiMarket, WAD, users[1], '0x']);
    await send(1, morpho, art.Morpho!.abi, 'borrow', [daiMarket, 1_000n * WAD, 0n, users[1], users[1]]);
    // the file has no DAI feed: the market is served without USD figures, and the pass says why;
    // a market created is added to the dataset, not written with the whole of it again
    const before = (await store.datasetInfo())!;
    const unpriced = await pass();
    const after = (await store.datasetInfo())!;
    assert.deepEqual([after.version, after.marketCount], [before.version, before.marketCount + 1]);
    assert.equal(unpriced.runs[0]!.ok, true);
    const item = unpriced.runs[0]!.items.find((i) => i.id.endsWith(created.logs[0]!.topics[1]!));
    assert.ok(item?.ok, 'served, not failed');
    assert.match(
      item.note ?? '',
      /no USD price for its loan token DAI .*served with its USD figures null and no position/,
    );
    const m = (await get(`/markets/${key}`)).data;
    // never 0: null where a USD amount would need DAI's price; the token amounts as read
    assert.deepEqual(
      [m.loanPrice, m.supply, m.borrow, m.available, m.supplyAssets],
      [null, null, null, null, 100_000],
    );
    assert.ok(m.collateralPrice > 0, 'WETH is priced by ETH/USD');
    assert.ok(m.borrowAssets >= 1_000 && m.borrowAssets < 1_000.01, `borrowAssets ${m.borrowAssets}`);
    // utilization in the loan token's units: the same ratio, no price needed
    assert.ok(Math.abs(m.utilization - m.borrowAssets / 100_000) < 1e-7, `utilization ${m.utilization}`);
    // last of the chain's markets (no USD supply to rank it by)
    const listed = (await get('/markets?chainIds=31337&limit=100')).data as { uniqueKey: string }[];
    assert.equal(listed.at(-1)!.uniqueKey, key);
    const dai_ = (await get(`/tokens/31337/${dai}`)).data;
    assert.deepEqual(
      [dai_.priceUsd, dai_.priceSource, dai_.supplyUsd, dai_.borrowUsd],
      [null, null, null, null],
    );
    const risk = (await get(`/risk/markets/${key}`)).data;
    assert.deepEqual(
      [risk.loanAsset.priceUsd, risk.supplyUsd, risk.availableLiquidityUsd, risk.borrowPositions],
      [null, null, null, 0],
    );
    const brief = (await get(`/agent/market-brief/${key}`)).data;
    assert.ok(brief.flags.some((f: { code: string }) => f.code === 'NO_USD_PRICE'));
    assert.match(brief.summary, /100000 DAI supplied/);
    const overview = (await get('/analytics/overview?chainIds=31337')).data;
    assert.equal(overview.totals.unpricedMarkets, 1);
    const wallet = async () =>
      (await get(`/positions?address=${users[1]}`)).data.map(
        (p: { market: { uniqueKey: string } }) => p.market.uniqueKey,
      );
    assert.ok(!(await wallet()).includes(key));
    // DAI rises to $5 on its oracle: the borrower is liquidated. The liquidation is recorded,
    // the debt it repaid in DAI with no USD value, the WETH it seized at ETH's price.
    await send(0, daiUsd, art.TestAggregator!.abi, 'updateAnswer', [5n * 10n ** 8n]);
    await send(0, dai, T, 'mint', [users[0], 10_000n * WAD]);
    const liquidated = await send(0, morpho, art.Morpho!.abi, 'liquidate', [
      daiMarket,
      users[1],
      WAD / 2n,
      0n,
      '0x',
    ]);
    await send(0, daiUsd, art.TestAggregator!.abi, 'updateAnswer', [10n ** 8n]);
    // ETH moves before the pass reads it: the WETH seized is valued at its block's ETH price
    const ethThen = (await get(`/markets/${key}`)).data.collateralPrice;
    const A = art.TestAggregator!.abi;
    const answer = await readAt<bigint>(anvil, ethUsd, A, 'latestAnswer');
    await send(0, ethUsd, A, 'updateAnswer', [answer + 100n * 10n ** 8n]);
    assert.equal((await pass()).runs[0]!.ok, true);
    await send(0, ethUsd, A, 'updateAnswer', [answer]);
    const recorded = (await get(`/liquidations?marketId=${key}`)).data;
    assert.equal(recorded.length, 1);
    const repaidDai = Number(BigInt(liquidated.logs.at(-1)!.data.slice(0, 66))) / 1e18;
    assert.equal((await get(`/markets/${key}`)).data.collateralPrice, ethThen + 100);
    assert.deepEqual(
      [
        recorded[0].txHash,
        recorded[0].collateralSeized,
        recorded[0].collateralSeizedUsd,
        recorded[0].debtRepaid,
        recorded[0].debtRepaidUsd,
        recorded[0].badDebtUsd,
      ],
      [liquidated.transactionHash, 0.5, 0.5 * ethThen, Number(repaidDai.toPrecision(8)), null, 0],
    );
    // the feed is added to the file: the market is served with the borrower it had
    const json = sourcesJson();
    json.chains[0]!.chainlink.push({ address: daiUsd, pair: 'DAI/USD', heartbeatSeconds: 86400 });
    await syncClock();
    const priced = await ingestLive(chainSources(parseSources(json, 'test')), store, clock);
    assert.equal(priced.runs[0]!.ok, true);
    await service!.models.reloadIfChanged();
    assert.ok((await wallet()).includes(key), 'the borrower read while the market was not served');
    const pricedMarket = (await get(`/markets/${key}`)).data;
    assert.equal(pricedMarket.loanPrice, 1);
    assert.equal(pricedMarket.supply, 100_000);
  });

  test('behavior: Morpho added to the file later walks its logs syncBlocks a pass while the chain goes on (its vaults once it has caught up); the end is the one-pass read', async () => {
    const passes = await walkAddedLater(anvil, {
      sources: sourcesJson,
      without: { morpho: undefined },
      start: 0n,
      walkKey: `morpho:${morpho.toLowerCase()}:0`,
      addresses: users,
      // The lender supplies more in a block the walk has not reached: read once it does.
      during: async (pass) => {
        if (pass === 2)
          await send(0, morpho, art.Morpho!.abi, 'supply', [params, 50_000n * 10n ** 6n, 0n, users[0], '0x']);
      },
    });
    assert.ok(passes >= 4, `${passes} passes`);
  });

  test('behavior: a chain that stops answering keeps its last data, aging to cached then snapshot', async () => {
    const served = (await get('/markets?chainIds=31337')).data.length;
    assert.ok(served >= 1);
    await anvil.stop();
    clock.advance(1000);
    const out = await ingestLive(chainSources(parseSources(sourcesJson(), 'test')), store, clock);
    await service!.models.reloadIfChanged();
    assert.equal(out.runs[0]!.ok, false);
    assert.equal(out.runs[0]!.state.consecutiveFailures, 1);
    const health = await service!.app.inject({ url: '/api/v1/health' });
    const source = health.json().sources.find((s: { id: string }) => s.id === 'chain:31337');
    assert.equal(source.consecutiveFailures, 1);
    assert.ok(source.lastError.length > 0);
    const markets = await get('/markets?chainIds=31337');
    assert.equal(markets.data.length, served);
    clock.advance(2 * 60_000);
    assert.equal((await get('/markets?chainIds=31337')).meta.freshness, 'cached');
    clock.advance(20 * 60_000);
    assert.equal((await get('/markets?chainIds=31337')).meta.freshness, 'snapshot');
  });
});
