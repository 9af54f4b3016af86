/**
 * A local chain for the tests: anvil from the npm package (its binary ships in the platform
 * package), contracts compiled at test time with solc 0.8.19 from the sources npm ships
 * (Morpho Blue, BUSL: compiled here, never committed) and from test/chain/contracts.
 */

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { after, before } from 'node:test';
import {
  type Abi,
  createTestClient,
  custom,
  defineChain,
  type Hex,
  http,
  publicActions,
  walletActions,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { chainSources } from '../../src/ingest/chain/index.ts';
import type { ChainSource } from '../../src/ingest/chain/source.ts';
import type { Source } from '../../src/ingest/contract.ts';
import { ingestLive, type LiveStore } from '../../src/ingest/live.ts';
import { DEFAULT_STATE_MAX_AGE_SECONDS, parseSources } from '../../src/ingest/sources-file.ts';
import type { Service } from '../../src/service.ts';
import { openStore } from '../../src/store/open.ts';
import type { Store } from '../../src/store/types.ts';
import { ManualClock } from '../clock.ts';
import { apiGet, liveService, tempDir } from '../helpers.ts';
import { freePort } from '../net-helpers.ts';

const require = createRequire(import.meta.url);
const ROOT = resolve(import.meta.dirname, '../..');
const MORPHO_SRC = join(dirname(require.resolve('@morpho-org/morpho-blue/package.json')), 'src');
const OWN_SRC = join(import.meta.dirname, 'contracts');
const CACHE = join(ROOT, 'node_modules/.cache/lrds-contracts');

/** anvil's first seven default accounts (public test keys). */
export const ACCOUNTS = [
  '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
  '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
  '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a',
  '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6',
  '0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a',
  '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba',
  '0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e',
] as const;

export type Artifact = { abi: Abi; bytecode: Hex };

function anvilBinary(): string {
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  const pkg = `@foundry-rs/anvil-${process.platform}-${arch}`;
  return join(dirname(require.resolve(`${pkg}/package.json`)), 'bin', 'anvil');
}

/**
 * Compiles the test contracts and Morpho Blue (with IrmMock) once; the artifacts are cached
 * under node_modules/.cache by a hash of the sources.
 */
export function compileContracts(): Record<string, Artifact> {
  const sources: Record<string, { content: string }> = {};
  const read = (unit: string, file: string) => {
    sources[unit] = { content: readFileSync(file, 'utf8') };
  };
  for (const f of [
    'TestToken.sol',
    'TestAggregator.sol',
    'TestAggregatorProxy.sol',
    'TestChainlinkOracle.sol',
    'TestComet.sol',
    'TestGasBurner.sol',
    'TestIrm.sol',
    'TestEuler.sol',
    'TestFluid.sol',
    'TestMetaMorpho.sol',
  ])
    read(`own/${f}`, join(OWN_SRC, f));
  read('morpho/Morpho.sol', join(MORPHO_SRC, 'Morpho.sol'));
  read('morpho/mocks/IrmMock.sol', join(MORPHO_SRC, 'mocks/IrmMock.sol'));
  const hash = createHash('sha256').update(JSON.stringify(sources)).digest('hex').slice(0, 16);
  const cached = join(CACHE, `${hash}.json`);
  if (existsSync(cached)) return JSON.parse(readFileSync(cached, 'utf8'));
  const solc = require('solc');
  const input = {
    language: 'Solidity',
    sources,
    settings: {
      optimizer: { enabled: true, runs: 200 },
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
    },
  };
  const findImports = (path: string) => {
    if (!path.startsWith('morpho/')) return { error: `not found: ${path}` };
    return { contents: readFileSync(join(MORPHO_SRC, path.slice('morpho/'.length)), 'utf8') };
  };
  const out = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports }));
  const errors = (out.errors ?? []).filter((e: { severity: string }) => e.severity === 'error');
  if (errors.length > 0)
    throw new Error(errors.map((e: { formattedMessage: string }) => e.formattedMessage).join('\n'));
  const artifacts: Record<string, Artifact> = {};
  for (const file of Object.values(out.contracts) as Record<
    string,
    { abi: Abi; evm: { bytecode: { object: string } } }
  >[])
    for (const [name, c] of Object.entries(file))
      artifacts[name] = { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` };
  mkdirSync(CACHE, { recursive: true });
  writeFileSync(cached, JSON.stringify(artifacts));
  return artifacts;
}

export interface Anvil {
  url: string;
  chainId: number;
  /** A client that sends transactions from `from` (an index of ACCOUNTS), reads, and controls the chain. */
  client(from?: number): ReturnType<typeof makeClient>;
  stop(): Promise<void>;
}

const CHAIN_ID = 31337;

function makeClient(url: string, key: Hex) {
  const chain = defineChain({
    id: CHAIN_ID,
    name: 'anvil',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [url] } },
  });
  // Receipts polled every 50 ms: on a large state anvil mines a block after answering the
  // transaction, and the default 4 s poll would wait that long for each.
  return createTestClient({
    chain,
    mode: 'anvil',
    transport: http(url),
    account: privateKeyToAccount(key),
    pollingInterval: 50,
  })
    .extend(publicActions)
    .extend(walletActions);
}

/**
 * Starts anvil on a free port (auto-mining, one block per transaction, unless `args` say
 * otherwise); resolves once it answers.
 */
export async function startAnvil(args: readonly string[] = []): Promise<Anvil> {
  // The free port found may be taken by another process before anvil binds it: a few tries.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startAnvilOnce(args);
    } catch (err) {
      if (attempt >= 3) throw err;
    }
  }
}

async function startAnvilOnce(args: readonly string[]): Promise<Anvil> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    anvilBinary(),
    ['--port', String(port), '--chain-id', String(CHAIN_ID), '--silent', ...args],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    stderr = (stderr + d).slice(-4000);
  });
  const url = `http://127.0.0.1:${port}`;
  const t0 = Date.now();
  for (;;) {
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
      });
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null || Date.now() - t0 > 20_000) {
      child.kill('SIGKILL');
      throw new Error(`anvil did not start: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    chainId: CHAIN_ID,
    client: (from = 0) => makeClient(url, ACCOUNTS[from]!),
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * Mines a block once the state a chain source read last is as old as a pass lets it go unread
 * while nothing of its contracts and feeds logs (`stateMaxAgeSeconds`, by default): the next
 * pass reads it again, a change no log of ours names included.
 */
export async function mineOnceStateAged(anvil: Pick<Anvil, 'client'>): Promise<void> {
  await anvil.client().increaseTime({ seconds: DEFAULT_STATE_MAX_AGE_SECONDS });
  await anvil.client().mine({ blocks: 1 });
}

/** Deploys a compiled contract; resolves to its address once mined. */
export async function deploy(
  client: ReturnType<Anvil['client']>,
  artifact: Artifact,
  args: readonly unknown[] = [],
): Promise<`0x${string}`> {
  const hash = await client.deployContract({ abi: artifact.abi, bytecode: artifact.bytecode, args } as never);
  const receipt = await client.waitForTransactionReceipt({ hash });
  if (!receipt.contractAddress) throw new Error('no contract deployed');
  return receipt.contractAddress;
}

/**
 * Gas given to every test transaction. Not estimated: an estimate is made on a block whose
 * timestamp may be the latest one's, and a contract that accrues interest per second (the comet)
 * then writes more storage when mined a second later than it did in the estimate — the
 * transaction ran out of gas and reverted, now and then.
 */
const TX_GAS = 3_000_000n;

/** Sends a transaction from ACCOUNTS[from]; resolves to its receipt, which must be a success. */
export async function sendTx(
  anvil: Pick<Anvil, 'client'>,
  from: number,
  address: `0x${string}`,
  abi: Abi,
  functionName: string,
  args: readonly unknown[] = [],
) {
  const c = anvil.client(from);
  const hash = await c.writeContract({ address, abi, functionName, args, gas: TX_GAS } as never);
  const receipt = await c.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new Error(`${functionName} reverted`);
  return receipt;
}

/** A contract read at the latest block, or at `blockNumber`. */
export async function readAt<T>(
  anvil: Pick<Anvil, 'client'>,
  address: `0x${string}`,
  abi: Abi,
  functionName: string,
  args: readonly unknown[] = [],
  blockNumber?: bigint,
): Promise<T> {
  const at = blockNumber === undefined ? {} : { blockNumber };
  return (await anvil.client().readContract({ address, abi, functionName, args, ...at } as never)) as T;
}

/** A sources file (docs/decisions.md "Real sources") for Morpho Blue at `morpho` on the local chain, priced by two feeds. */
export function localSources(
  anvil: Pick<Anvil, 'chainId' | 'url'>,
  addresses: { morpho: string; ethUsd: string; usdcUsd: string },
) {
  return {
    chains: [
      {
        chainId: anvil.chainId,
        rpcUrl: anvil.url,
        morpho: { blue: addresses.morpho, fromBlock: 0 },
        chainlink: [
          { address: addresses.ethUsd, pair: 'ETH/USD', heartbeatSeconds: 3600 },
          { address: addresses.usdcUsd, pair: 'USDC/USD', heartbeatSeconds: 86400 },
        ],
      },
    ],
  };
}

/**
 * One ingestion pass of `sources` at the chain's head, as the chain suites run it: the clock set a
 * second after the head's time, the pass, then the service reloaded. Resolves to the block read,
 * the pass, and the items it named as failed.
 */
/**
 * Chain sources of `sourcesJson` (a new process) over anvil whose `eth_getLogs` are noted:
 * `logsFrom` gets each one's first block.
 */
export function logSpiedSources(anvil: Pick<Anvil, 'client'>, sourcesJson: unknown) {
  const logsFrom: bigint[] = [];
  const sources = chainSources(parseSources(sourcesJson, 'test'), {
    transport: () =>
      custom({
        async request({ method, params }) {
          if (method === 'eth_getLogs')
            logsFrom.push(BigInt((params as [{ fromBlock: string }])[0].fromBlock));
          return anvil.client().request({ method, params } as never);
        },
      }),
  });
  return { sources, logsFrom };
}

export async function passAtHead(
  anvil: Pick<Anvil, 'client'>,
  sources: readonly Source[],
  store: LiveStore,
  clock: ManualClock,
  service?: { models: { reloadIfChanged(): Promise<unknown> } } | null,
) {
  const head = await anvil.client().getBlock();
  clock.set(Number(head.timestamp) * 1000 + 1000);
  const out = await ingestLive(sources, store, clock);
  const failed = out.runs.flatMap((r) => r.items?.filter((i) => !i.ok) ?? []);
  await service?.models.reloadIfChanged();
  return { block: head.number, out, failed };
}

/**
 * A chain suite's store and service (`describe` scope): its hooks open a store in a new directory,
 * run a first pass of `sourcesJson()`'s sources and start a service over it with an Enterprise
 * live key (closed after). `pass` runs one pass at the head (of `over`, by default the suite's
 * `sources`, which a test may replace: a restarted process), checks that it succeeded and that the
 * items it named as failed are `expectFailed` (ids; a pass that read no state names none), and
 * resolves to the block it read.
 */
export interface LiveChainSuite {
  clock: ManualClock;
  dataDir: string;
  store: Store;
  service: Service;
  key: string;
  sources: ChainSource[];
  get: ReturnType<typeof apiGet>;
  pass(over?: readonly ChainSource[]): Promise<bigint>;
}

export function liveChainSuite(
  chain: () => Pick<Anvil, 'client'>,
  prefix: string,
  sourcesJson: () => unknown,
  expectFailed: readonly string[] = [],
): LiveChainSuite {
  const suite: LiveChainSuite = {
    clock: new ManualClock(Date.now()),
    dataDir: '',
    store: null as unknown as Store,
    service: null as unknown as Service,
    key: '',
    sources: [] as ChainSource[],
    get: apiGet(() => ({ service: suite.service, key: suite.key })),
    async pass(over = suite.sources) {
      const { block, out, failed } = await passAtHead(chain(), over, suite.store, suite.clock, suite.service);
      assert.equal(out.runs[0]!.ok, true, out.runs[0]!.error ?? '');
      const expected = out.runs[0]!.stateRead ? [...expectFailed].sort() : [];
      assert.deepEqual(failed.map((f) => f.id).sort(), expected, JSON.stringify(failed));
      return block;
    },
  };
  before(async () => {
    suite.dataDir = tempDir(prefix);
    suite.store = await openStore({ dataDir: suite.dataDir, databaseUrl: null }, suite.clock);
    suite.sources = chainSources(parseSources(sourcesJson(), 'test'));
    await suite.pass();
    ({ service: suite.service, key: suite.key } = await liveService(suite.dataDir, suite.clock));
  });
  after(async () => {
    await suite.service?.close();
    await suite.store?.close();
  });
  return suite;
}

/**
 * A contract added to the sources file later, on a chain read without it (`sources()` with
 * `without`): passes of `syncBlocks` (a new process each: the walk goes on from the stored
 * checkpoint; or, `oneProcess`, one process throughout) until the chain reports no sync. Each
 * walked pass is checked: the chain's sync from `start`, `syncBlocks` more a pass, the state at
 * the head; /health degraded with it; the pass's sync item naming `walkKey`. `during(pass)` runs
 * after each walked pass (blocks the walk has not reached). At the end the store answers as one
 * pass with the contract does, for `addresses`' positions, every market and every vault.
 * Resolves to the passes the walk took.
 */
export async function walkAddedLater(
  anvil: Pick<Anvil, 'client' | 'chainId'>,
  opts: {
    /** The sources file with the contract, and the fields of its chain that leave it out. */
    sources: () => { chains: readonly object[] };
    without: Record<string, unknown>;
    start: bigint;
    walkKey: string;
    addresses: readonly string[];
    during?: (pass: number) => Promise<void>;
    /** One process for the whole walk (its caches kept between passes), not a new one a pass. */
    oneProcess?: boolean;
  },
): Promise<number> {
  const clock = new ManualClock(Date.now());
  const chainId = String(anvil.chainId);
  const json = (syncBlocks: number, added: boolean) => ({
    chains: opts.sources().chains.map((c) => ({ ...c, syncBlocks, ...(added ? {} : opts.without) })),
  });
  const open = async (prefix: string) => {
    const dataDir = tempDir(prefix);
    const store = await openStore({ dataDir, databaseUrl: null }, clock);
    const { service, key } = await liveService(dataDir, clock);
    return { dataDir, store, service, get: apiGet(() => ({ service, key })) };
  };
  const walked = await open('lrds-walked-');
  const whole = await open('lrds-whole-');
  const ALL = 1_000_000;
  try {
    const first = await passAtHead(
      anvil,
      chainSources(parseSources(json(ALL, false), 'test')),
      walked.store,
      clock,
    );
    assert.equal(first.out.runs[0]!.ok, true, first.out.runs[0]!.error ?? '');
    const head = Number(await anvil.client().getBlockNumber());
    const step = Math.max(2, Math.ceil((head - Number(opts.start) + 1) / 4));
    let passes = 0;
    const process = opts.oneProcess ? chainSources(parseSources(json(step, true), 'test')) : null;
    for (;;) {
      assert.ok(++passes < 20, 'the walk ends');
      const sources = process ?? chainSources(parseSources(json(step, true), 'test'));
      const { out } = await passAtHead(anvil, sources, walked.store, clock, walked.service);
      assert.equal(out.runs[0]!.ok, true, out.runs[0]!.error ?? '');
      const state = (await walked.store.listSources()).find((s) => s.id === `chain:${chainId}`)!;
      const sync = state.sync?.[chainId];
      const health = (await walked.service.app.inject({ url: '/api/v1/health' })).json();
      if (!sync) {
        assert.equal(health.status, 'ok');
        break;
      }
      assert.deepEqual(
        [sync.fromBlock, sync.throughBlock, sync.toBlock],
        [
          Number(opts.start),
          Number(opts.start) + passes * step - 1,
          Number(await anvil.client().getBlockNumber()),
        ],
      );
      assert.equal(health.status, 'degraded');
      const reported = health.sources.find((s: { id: string }) => s.id === state.id);
      assert.equal(reported.sync[chainId].throughBlock, sync.throughBlock);
      const item = out.runs[0]!.items.find((i) => i.id === `sync:${chainId}`);
      assert.ok(JSON.stringify(item).includes(opts.walkKey), JSON.stringify(item));
      await opts.during?.(passes);
    }
    // The same as one pass over the contract from its start (both loaded afresh). A position read
    // by an earlier pass and carried since by its market's prices and indexes may differ in the
    // last digit of a figure derived from its amounts (a leverage of 7.9144282 against 7.9144283).
    await passAtHead(
      anvil,
      chainSources(parseSources(json(ALL, true), 'test')),
      whole.store,
      clock,
      whole.service,
    );
    const fresh = await liveService(walked.dataDir, clock);
    try {
      const get = apiGet(() => fresh);
      for (const a of opts.addresses)
        assertNear(
          (await get(`/positions?address=${a}`)).data,
          (await whole.get(`/positions?address=${a}`)).data,
          a,
        );
      assert.deepEqual((await get('/markets')).data, (await whole.get('/markets')).data);
      assert.deepEqual((await get('/vaults')).data, (await whole.get('/vaults')).data);
    } finally {
      await fresh.service.close();
    }
    return passes;
  } finally {
    for (const s of [walked, whole]) {
      await s.service.close();
      await s.store.close();
    }
  }
}

/**
 * `actual` deep-equals `expected` but for numbers, which agree to 1 part in a million (`what`
 * names the value in the message).
 */
export function assertNear(actual: unknown, expected: unknown, what: string): void {
  if (typeof actual === 'number' && typeof expected === 'number') {
    const scale = Math.max(Math.abs(actual), Math.abs(expected));
    assert.ok(Math.abs(actual - expected) <= 1e-6 * scale, `${what}: ${actual} against ${expected}`);
    return;
  }
  if (typeof actual !== 'object' || actual === null || typeof expected !== 'object' || expected === null) {
    assert.deepEqual(actual, expected, what);
    return;
  }
  assert.equal(Array.isArray(actual), Array.isArray(expected), what);
  assert.deepEqual(Object.keys(actual), Object.keys(expected), what);
  for (const [k, v] of Object.entries(actual))
    assertNear(v, (expected as Record<string, unknown>)[k], `${what}.${k}`);
}
