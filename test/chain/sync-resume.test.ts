/**
 * A first sync read a few blocks of logs a pass (`syncBlocks`), on a local chain: each pass is
 * stored with its checkpoint, the service serves what is read so far and says the chain is
 * syncing (/health, answers' `meta.syncing`), a process started anew goes on from the last pass
 * stored (not from the start), and the sync ends where one pass over every block would.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Abi } from 'viem';
import type { ChainSync, SourceState } from '../../src/domain/records/sources.ts';
import { chainSources } from '../../src/ingest/chain/index.ts';
import { ingestLive } from '../../src/ingest/live.ts';
import { parseSources } from '../../src/ingest/sources-file.ts';
import { createService } from '../../src/service.ts';
import { openStore } from '../../src/store/open.ts';
import type { Store } from '../../src/store/types.ts';
import { ManualClock } from '../clock.ts';
import { apiGet, embeddedSettings, liveService, QUIET, tempDir } from '../helpers.ts';
import {
  type Anvil,
  compileContracts,
  deploy,
  localSources,
  passAtHead,
  sendTx,
  startAnvil,
} from './anvil.ts';

const WAD = 10n ** 18n;
const LLTV = 860_000_000_000_000_000n;
/** Borrowers, each opening in its own blocks (four transactions, four blocks). */
const BORROWERS = [1, 2, 3, 4, 5, 6];

let anvil: Anvil;
let addresses: { morpho: string; ethUsd: string; usdcUsd: string };
/** A borrower borrowing more, and the ETH price moving: what later blocks do during a sync. */
let moreBlocks: (n: number) => Promise<void>;
/** Borrower `i` borrows `usdc` more. */
let borrow: (i: number, usdc: bigint) => Promise<void>;
const users: string[] = [];
/** The block of the market's creation: the first log the sync meets. */
let createdAt: bigint;

before(async () => {
  const art = compileContracts();
  anvil = await startAnvil();
  for (const i of [0, ...BORROWERS]) users[i] = anvil.client(i).account.address.toLowerCase();
  const c = anvil.client(0);
  const send = (from: number, address: `0x${string}`, abi: Abi, fn: string, args: readonly unknown[] = []) =>
    sendTx(anvil, from, address, abi, fn, args);
  const weth = await deploy(c, art.TestToken!, ['Wrapped Ether', 'WETH', 18]);
  const usdc = await deploy(c, art.TestToken!, ['USD Coin', 'USDC', 6]);
  const ethUsd = await deploy(c, art.TestAggregator!, [8, 'ETH / USD', 3000n * 10n ** 8n]);
  const usdcUsd = await deploy(c, art.TestAggregator!, [8, 'USDC / USD', 10n ** 8n]);
  const oracle = await deploy(c, art.TestChainlinkOracle!, [ethUsd, usdcUsd, 10n ** 24n]);
  const morpho = await deploy(c, art.Morpho!, [users[0]]);
  const irm = await deploy(c, art.IrmMock!);
  addresses = { morpho, ethUsd, usdcUsd };
  const M = art.Morpho!.abi;
  const T = art.TestToken!.abi;
  await send(0, morpho, M, 'enableIrm', [irm]);
  await send(0, morpho, M, 'enableLltv', [LLTV]);
  const params = { loanToken: usdc, collateralToken: weth, oracle, irm, lltv: LLTV };
  createdAt = (await send(0, morpho, M, 'createMarket', [params])).blockNumber;
  await send(0, usdc, T, 'mint', [users[0], 2_000_000n * 10n ** 6n]);
  await send(0, usdc, T, 'approve', [morpho, 2n ** 256n - 1n]);
  await send(0, morpho, M, 'supply', [params, 1_000_000n * 10n ** 6n, 0n, users[0], '0x']);
  for (const i of BORROWERS) {
    const collateral = BigInt(i) * WAD;
    await send(i, weth, T, 'mint', [users[i], collateral]);
    await send(i, weth, T, 'approve', [morpho, collateral]);
    await send(i, morpho, M, 'supplyCollateral', [params, collateral, users[i], '0x']);
    await send(i, morpho, M, 'borrow', [params, BigInt(i) * 1_000n * 10n ** 6n, 0n, users[i], users[i]]);
  }
  borrow = async (i, amount) => {
    await send(i, morpho, M, 'borrow', [params, amount * 10n ** 6n, 0n, users[i], users[i]]);
  };
  moreBlocks = async (n) => {
    await send(1, morpho, M, 'borrow', [params, BigInt(n) * 100n * 10n ** 6n, 0n, users[1], users[1]]);
    await send(0, ethUsd, art.TestAggregator!.abi, 'updateAnswer', [(3000n - BigInt(n) * 10n) * 10n ** 8n]);
  };
});

after(async () => {
  await anvil?.stop();
});

/** A store and a service over it (the service follows the store, as a second server would). */
async function served(prefix: string, clock: ManualClock) {
  const dataDir = tempDir(prefix);
  const store = await openStore({ dataDir, databaseUrl: null }, clock);
  const { service, key } = await liveService(dataDir, clock);
  return { store, service, key, get: apiGet(() => ({ service, key })) };
}

type Served = Awaited<ReturnType<typeof served>>;

/** A store and a service over it for `use`, closed after. */
async function withServed(
  prefix: string,
  clock: ManualClock,
  use: (s: Served) => Promise<void>,
): Promise<void> {
  const s = await served(prefix, clock);
  try {
    await use(s);
  } finally {
    await s.service.close();
    await s.store.close();
  }
}

describe('a first sync read pass by pass', () => {
  const clock = new ManualClock(Date.now());
  let whole: Served;
  let stepped: Served;
  const json = (syncBlocks?: number) => {
    const j = localSources(anvil, addresses);
    return { chains: j.chains.map((c) => (syncBlocks ? { ...c, syncBlocks } : c)) };
  };
  const chainState = async (store: Store): Promise<SourceState> =>
    (await store.listSources()).find((s) => s.id === `chain:${anvil.chainId}`)!;

  before(async () => {
    whole = await served('lrds-sync-whole-', clock);
    stepped = await served('lrds-sync-steps-', clock);
  });
  after(async () => {
    for (const s of [whole, stepped]) {
      await s?.service.close();
      await s?.store.close();
    }
  });

  test('behavior: each pass reads syncBlocks of logs and is stored; a new process goes on from the last; the end is the one-pass read', async () => {
    const head = (await anvil.client().getBlock()).number;
    // One pass over every block (the default syncBlocks is far larger than this chain).
    const one = await passAtHead(anvil, chainSources(parseSources(json(), 'test')), whole.store, clock);
    assert.equal(one.out.runs[0]!.ok, true);
    assert.equal((await chainState(whole.store)).sync, undefined);
    await whole.service.models.reloadIfChanged();

    const STEP = 8;
    const syncs: ChainSync[] = [];
    const seen: number[] = [];
    for (let pass = 1; ; pass++) {
      assert.ok(pass < 20, 'the sync ends');
      // A new process every pass (what a kill -9 leaves: the store, nothing in memory).
      const sources = chainSources(parseSources(json(STEP), 'test'));
      const block = (await anvil.client().getBlock()).number;
      assert.equal(block, head, 'no block mined meanwhile');
      // (A clock of fractional milliseconds, as the system's is.)
      clock.set(Number((await anvil.client().getBlock()).timestamp) * 1000 + 1000.25);
      const out = await ingestLive(sources, stepped.store, clock);
      await stepped.service.models.reloadIfChanged();
      assert.equal(out.runs[0]!.ok, true, out.runs[0]!.error ?? '');
      const state = await chainState(stepped.store);
      // The state is read at the head every pass.
      assert.equal(state.lastBlock[String(anvil.chainId)], Number(head));
      const sync = state.sync?.[String(anvil.chainId)];
      const health = (await stepped.service.app.inject({ url: '/api/v1/health' })).json();
      const reported = health.sources.find((s: { id: string }) => s.id === state.id);
      const answer = await stepped.get(`/markets`);
      seen.push(out.runs[0]!.positions);
      if (!sync) {
        assert.equal(reported.sync, undefined);
        assert.equal(answer.meta.syncing, undefined);
        assert.equal(health.status, 'ok');
        break;
      }
      syncs.push(sync);
      // Logs read STEP blocks a pass, from the chain's first block on: never again from the start.
      assert.equal(sync.fromBlock, 0);
      assert.equal(sync.throughBlock, pass * STEP - 1);
      assert.equal(sync.toBlock, Number(head));
      assert.equal(health.status, 'degraded');
      assert.deepEqual(
        {
          throughBlock: reported.sync[String(anvil.chainId)].throughBlock,
          blocksDone: reported.sync[String(anvil.chainId)].blocksDone,
          blocksTotal: reported.sync[String(anvil.chainId)].blocksTotal,
        },
        { throughBlock: pass * STEP - 1, blocksDone: pass * STEP, blocksTotal: Number(head) + 1 },
      );
      if (out.runs[0]!.positions > 0)
        assert.deepEqual(answer.meta.syncing, {
          [String(anvil.chainId)]: { throughBlock: pass * STEP - 1, toBlock: Number(head) },
        });
    }
    assert.equal(syncs.length, Math.ceil((Number(head) + 1) / STEP) - 1);
    assert.ok(syncs.length >= 3, `${syncs.length} passes of a sync`);
    // What is served grows as the logs name more accounts, and no account is served before its
    // logs are read.
    for (let i = 1; i < seen.length; i++) assert.ok(seen[i]! >= seen[i - 1]!, JSON.stringify(seen));
    assert.ok(seen[0]! < seen.at(-1)!, JSON.stringify(seen));
    assert.ok(syncs[0]!.throughBlock < Number(createdAt) || seen[0]! < seen.at(-1)!);

    // Once synced, the same answers as the one pass over every block.
    await whole.service.models.reloadIfChanged();
    await stepped.service.models.reloadIfChanged();
    for (const i of BORROWERS) {
      const a = await whole.get(`/positions?address=${users[i]}`);
      const b = await stepped.get(`/positions?address=${users[i]}`);
      assert.equal(a.data.length, 1, `borrower ${i}`);
      assert.deepEqual(b.data, a.data, `borrower ${i}`);
    }
    assert.deepEqual((await stepped.get('/markets')).data, (await whole.get('/markets')).data);
  });

  test('behavior: blocks mined during a sync: an account the logs named is read again when later logs name it; the end is the one-pass read', async () => {
    await withServed('lrds-sync-moving-', clock, async (fresh) => {
      let passes = 0;
      for (;;) {
        assert.ok(++passes < 30, 'the sync ends');
        const sources = chainSources(parseSources(json(8), 'test'));
        const { out } = await passAtHead(anvil, sources, fresh.store, clock, fresh.service);
        assert.equal(out.runs[0]!.ok, true, out.runs[0]!.error ?? '');
        if (!(await chainState(fresh.store)).sync) break;
        // Borrower 1 (read since an early pass) borrows more, and the price moves, in blocks
        // the sync's logs have not reached.
        await moreBlocks(passes);
      }
      assert.ok(passes >= 4, `${passes} passes`);
      await withOnePassRead(async (whole) => {
        for (const i of BORROWERS) {
          const a = await whole.get(`/positions?address=${users[i]}`);
          const b = await fresh.get(`/positions?address=${users[i]}`);
          assert.deepEqual(b.data, a.data, `borrower ${i}`);
        }
      });
    });
  });

  test('behavior: a catch-up after a long stop, in the process that read before, reads every account it knew at the head', async () => {
    await withServed('lrds-sync-catch-up-', clock, async (live) => {
      // One process throughout: synced first.
      const sources = chainSources(parseSources(json(8), 'test'));
      for (let passes = 0; ; passes++) {
        assert.ok(passes < 30, 'the sync ends');
        await passAtHead(anvil, sources, live.store, clock, live.service);
        if (!(await chainState(live.store)).sync) break;
      }
      // A stop: ten quiet blocks, then borrower 6 borrows more, then ten more: the first pass of
      // the catch-up reads logs that do not reach the borrow.
      await anvil.client().mine({ blocks: 10 });
      await borrow(6, 500n);
      await anvil.client().mine({ blocks: 10 });
      await passAtHead(anvil, sources, live.store, clock, live.service);
      const sync = (await chainState(live.store)).sync?.[String(anvil.chainId)];
      assert.ok(sync, 'a catch-up under way');
      await withOnePassRead(async (whole) => {
        const a = await whole.get(`/positions?address=${users[6]}`);
        const b = await live.get(`/positions?address=${users[6]}`);
        assert.deepEqual(b.data, a.data, 'the borrow past the logs read is served');
        assert.deepEqual(b.meta.syncing, {
          [String(anvil.chainId)]: { throughBlock: sync.throughBlock, toBlock: sync.toBlock },
        });
      });
    });
  });

  test('behavior: lrds serve goes on with a sync at once after its start, pass after pass, without waiting its interval; lrds ingest --once reads it whole', async () => {
    const dir = tempDir('lrds-sync-serve-');
    const file = join(dir, 'sources.json');
    writeFileSync(file, JSON.stringify(json(8)));
    const head = Number((await anvil.client().getBlock()).number);
    clock.set(Number((await anvil.client().getBlock()).timestamp) * 1000 + 1000);
    // An interval far longer than the test: every pass after the start's is the sync's own.
    const service = await createService(
      { ...embeddedSettings(dir), sourcesFile: file, simulationTickMs: 0, ingestIntervalMs: 3_600_000 },
      { clock, server: QUIET },
    );
    try {
      // The start read one pass and left the chain syncing: the passes go on at once, in the
      // background, not an interval later.
      const health = async () => (await service.app.inject({ url: '/api/v1/health' })).json();
      let now = await health();
      for (let i = 0; i < 200 && now.sources[0].sync !== undefined; i++) {
        await new Promise((r) => setTimeout(r, 100));
        now = await health();
      }
      assert.equal(now.sources[0].sync, undefined, 'synced well within the interval');
      assert.equal(now.sources[0].lastBlock[String(anvil.chainId)], head);
    } finally {
      await service.close();
    }
    const once = tempDir('lrds-sync-once-');
    const res = spawnSync(process.execPath, ['src/cli/main.ts', 'ingest', '--once'], {
      env: { ...process.env, DATA_DIR: once, SOURCES_FILE: file, DATABASE_URL: '' },
      encoding: 'utf8',
    });
    assert.equal(res.status, 0, res.stderr);
    assert.match(res.stderr, /syncing: logs read through block 7 of/);
    const store = await openStore({ dataDir: once, databaseUrl: null }, clock);
    try {
      const state = await chainState(store);
      assert.equal(state.sync, undefined);
      assert.equal(state.lastBlock[String(anvil.chainId)], head);
    } finally {
      await store.close();
    }
  });

  test('error: a sync that does not catch up with the head (the chain makes more blocks than a pass reads): lrds ingest --once stops and says so, exit 1', async () => {
    const dir = tempDir('lrds-sync-behind-');
    const file = join(dir, 'sources.json');
    writeFileSync(file, JSON.stringify(json(1)));
    // Twenty blocks every 50 ms while it runs: far more than one block of logs a pass.
    const mined: Promise<unknown>[] = [];
    const mining = setInterval(() => mined.push(anvil.client().mine({ blocks: 20 })), 50);
    try {
      const child = spawn(process.execPath, ['src/cli/main.ts', 'ingest', '--once'], {
        env: { ...process.env, DATA_DIR: dir, SOURCES_FILE: file, DATABASE_URL: '' },
      });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
      });
      const [code] = (await once(child, 'exit')) as [number];
      assert.equal(code, 1, stderr);
      assert.match(
        stderr,
        /a sync does not catch up with the chain's head \(\d+ blocks of logs left\): raise the chain's syncBlocks/,
      );
    } finally {
      clearInterval(mining);
      await Promise.all(mined);
    }
  });

  /** A new store read in one pass over every block at the head, served to `use`. */
  async function withOnePassRead(use: (whole: Served) => Promise<void>): Promise<void> {
    await withServed('lrds-sync-whole-', clock, async (whole) => {
      await passAtHead(anvil, chainSources(parseSources(json(), 'test')), whole.store, clock, whole.service);
      await use(whole);
    });
  }
});
