/**
 * Chain ingestion on a local chain (anvil from npm): Morpho Blue with one market and
 * `--positions` borrowers (default 2,000), a Compound v3 comet (our test Comet) with
 * `--comet-accounts` borrowers (default 200), an Euler vault (our test EVault) with
 * `--euler-accounts` borrowers (default 200), an Aave v3 pool (the real contracts, from
 * `@aave/core-v3`'s artifacts) with `--aave-accounts` borrowers (default 200), a Fluid T1 vault
 * (our test vault and resolvers) with `--fluid-positions` positions (default 200), `--vaults`
 * MetaMorpho vaults (default 5: the tests' vault, made by a factory, each supplying to the Morpho
 * market), two Chainlink-shaped feeds in the sources file.
 *
 * - First sync: one pass over an empty store, from block 0: positions read per second, RPC
 *   requests. Baseline, in the same run: the same position reads as bare viem multicalls.
 * - Steady state: one new block (a price update) then a pass, five times: RPC requests per block,
 *   positions and vaults read, and pass time; then a block with a deposit into one vault (read
 *   again: its own log).
 * - First sync by `lrds ingest` (its own process) behind a stand-in provider (provider-proxy.ts:
 *   getLogs capped at 10,000 blocks and results, 25 requests a second, 50-150 ms latency, an
 *   occasional 429), in SYNC_PASSES passes of logs: run through, then killed (SIGKILL) half-way
 *   and started again: wall time, HTTP requests, peak RSS.
 * - Block to answer: from the receipt of a price update to the answer of
 *   `GET /positions?address=` that shows it, through `lrds serve`'s in-process ingestion
 *   (service.ingest(): the pass the INGEST_INTERVAL_MS timer runs, so the wait for the timer,
 *   up to the interval, comes on top).
 *
 *   node bench/chain.ts [--positions N] [--comet-accounts M] [--euler-accounts E] [--aave-accounts A]
 *                       [--fluid-positions F] [--vaults V]
 *
 * Results: bench/results/chain-<date>.json and chain-latest.json.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { blueAbi } from '@morpho-org/blue-sdk-viem';
import { type Abi, createWalletClient, encodeFunctionData, http, toHex } from 'viem';
import { systemClock } from '../src/domain/clock.ts';
import { NFTS_PER_CALL } from '../src/ingest/chain/fluid.ts';
import { chainSources } from '../src/ingest/chain/index.ts';
import { DEPLOYLESS_BATCH_BYTES } from '../src/ingest/chain/rpc.ts';
import { ingestLive } from '../src/ingest/live.ts';
import { DEFAULT_STATE_MAX_AGE_SECONDS, parseSources } from '../src/ingest/sources-file.ts';
import { createService } from '../src/service.ts';
import { openStore } from '../src/store/open.ts';
import { deployAave } from '../test/chain/aave.ts';
import { compileContracts, deploy, localSources, sendTx, startAnvil } from '../test/chain/anvil.ts';
import { embeddedSettings, QUIET, tempDir } from '../test/helpers.ts';
import { BENCH_DIR, fmt, log, machine, sig } from './lib.ts';
import { providerSync } from './provider-sync.ts';

/** Passes of logs the first sync behind the stand-in provider takes (its `syncBlocks`). */
const SYNC_PASSES = 6;

/** Calls of the bare baseline read sent together, at most. */
const BASELINE_GROUP = 10_000;

const { values } = parseArgs({
  options: {
    positions: { type: 'string', default: '2000' },
    'comet-accounts': { type: 'string', default: '200' },
    'euler-accounts': { type: 'string', default: '200' },
    'aave-accounts': { type: 'string', default: '200' },
    'fluid-positions': { type: 'string', default: '200' },
    vaults: { type: 'string', default: '5' },
  },
});
const N = Number(values.positions);
if (!Number.isInteger(N) || N < 1)
  throw new Error(`--positions must be a positive integer, got '${values.positions}'`);
const K = Number(values['comet-accounts']);
if (!Number.isInteger(K) || K < 0)
  throw new Error(`--comet-accounts must be a non-negative integer, got '${values['comet-accounts']}'`);

const E = Number(values['euler-accounts']);
if (!Number.isInteger(E) || E < 0)
  throw new Error(`--euler-accounts must be a non-negative integer, got '${values['euler-accounts']}'`);

const A = Number(values['aave-accounts']);
if (!Number.isInteger(A) || A < 0)
  throw new Error(`--aave-accounts must be a non-negative integer, got '${values['aave-accounts']}'`);
const F = Number(values['fluid-positions']);
if (!Number.isInteger(F) || F < 0)
  throw new Error(`--fluid-positions must be a non-negative integer, got '${values['fluid-positions']}'`);

const VAULTS = Number(values.vaults);
if (!Number.isInteger(VAULTS) || VAULTS < 0)
  throw new Error(`--vaults must be a non-negative integer, got '${values.vaults}'`);

/**
 * Bytes this process has caused to be written to storage so far (Linux's /proc/self/io
 * `write_bytes`, counted by page as they are dirtied): the store's writes, not the RPC traffic.
 */
function writtenBytes(): number {
  const line = readFileSync('/proc/self/io', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('write_bytes:'));
  return line ? Number(line.slice('write_bytes:'.length)) : Number.NaN;
}

/**
 * BENCH_CPU_PROFILE=<file>: a CPU profile of `run` (the steady state's price updates), to open in
 * a browser's developer tools; the profiler's overhead then counts in those passes' CPU.
 */
async function profiled(run: () => Promise<void>): Promise<void> {
  const file = process.env.BENCH_CPU_PROFILE;
  if (!file) return run();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    await run();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
  }
}

/** Medians of a few passes. */
function summary(passes: readonly { requests: number; ms: number; cpuMs: number; bytesWritten: number }[]) {
  return {
    rpcRequests: median(passes.map((p) => p.requests)),
    passMs: sig(median(passes.map((p) => p.ms)), 3),
    cpuMs: sig(median(passes.map((p) => p.cpuMs)), 3),
    bytesWritten: median(passes.map((p) => p.bytesWritten)),
  };
}

function quietRow(s: ReturnType<typeof summary>): string {
  return `${s.rpcRequests}, ${fmt(s.passMs)}, ${fmt(s.cpuMs)}, ${fmt(s.bytesWritten)}`;
}

const WAD = 10n ** 18n;
const LLTV = 860_000_000_000_000_000n;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const art = compileContracts();
// A block may hold a whole batch of the setup's transactions (mined together, below).
const anvil = await startAnvil(['--gas-limit', '10000000000']);
try {
  const c = anvil.client(0);
  const owner = c.account.address;
  const send = (address: `0x${string}`, abi: Abi, functionName: string, args: readonly unknown[] = []) =>
    sendTx(anvil, 0, address, abi, functionName, args);
  log(`deploying Morpho Blue and opening ${N.toLocaleString('en-US')} positions on anvil`);
  const weth = await deploy(c, art.TestToken!, ['Wrapped Ether', 'WETH', 18]);
  const usdc = await deploy(c, art.TestToken!, ['USD Coin', 'USDC', 6]);
  const ethUsd = await deploy(c, art.TestAggregator!, [8, 'ETH / USD', 3000n * 10n ** 8n]);
  const usdcUsd = await deploy(c, art.TestAggregator!, [8, 'USDC / USD', 10n ** 8n]);
  const oracle = await deploy(c, art.TestChainlinkOracle!, [ethUsd, usdcUsd, 10n ** 24n]);
  const morpho = await deploy(c, art.Morpho!, [owner]);
  const irm = await deploy(c, art.IrmMock!);
  const M = art.Morpho!.abi;
  const T = art.TestToken!.abi;
  await send(morpho, M, 'enableIrm', [irm]);
  await send(morpho, M, 'enableLltv', [LLTV]);
  const params = { loanToken: usdc, collateralToken: weth, oracle, irm, lltv: LLTV };
  const created = await send(morpho, M, 'createMarket', [params]);
  const marketId = created.logs[0]!.topics[1]!;
  await send(usdc, T, 'mint', [owner, 10n ** 15n]);
  await send(usdc, T, 'approve', [morpho, 2n ** 256n - 1n]);
  await send(morpho, M, 'supply', [params, 10n ** 15n, 0n, owner, '0x']);
  await send(weth, T, 'mint', [owner, BigInt(N) * WAD]);
  await send(weth, T, 'approve', [morpho, 2n ** 256n - 1n]);
  // Collateral on behalf of each borrower from the owner, then each borrower borrows (impersonated).
  await anvil.client().request({ method: 'anvil_autoImpersonateAccount' as never, params: [true] as never });
  const wallet = createWalletClient({ transport: http(anvil.url) });
  const borrowers = Array.from(
    { length: N },
    (_, i) => `0x${(0x10000 + i).toString(16).padStart(40, '0')}` as const,
  );
  const t0 = performance.now();
  /** Mines the transactions sent (one block) and checks each succeeded (receipts asked in JSON-RPC batches). */
  const mined = async (hashes: `0x${string}`[]) => {
    await anvil.client().request({ method: 'evm_mine' as never, params: [] as never });
    const receipts = await rpcBatch(
      hashes.map((hash) => ({ method: 'eth_getTransactionReceipt', params: [hash] })),
    );
    receipts.forEach((r, i) => {
      if ((r as { status?: string } | null)?.status !== '0x1')
        throw new Error(`transaction ${hashes[i]} not mined or reverted`);
    });
  };
  /** Posts JSON-RPC calls in batches of 500; their results in order (a call's error throws). */
  const rpcBatch = async (calls: { method: string; params: unknown[] }[]): Promise<unknown[]> => {
    const out: unknown[] = [];
    for (let i = 0; i < calls.length; i += 500) {
      const body = calls.slice(i, i + 500).map((c, id) => ({ jsonrpc: '2.0', id, ...c }));
      const res = await fetch(anvil.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const answers = (await res.json()) as { id: number; result?: unknown; error?: { message: string } }[];
      answers.sort((a, b) => a.id - b.id);
      for (const a of answers) {
        if (a.error) throw new Error(`${body[a.id]?.method}: ${a.error.message}`);
        out.push(a.result);
      }
    }
    return out;
  };
  /** The next nonce of each sender of the setup's batches (borrowers start at 0). */
  const nonces = new Map<string, number>();
  type Call = {
    from: `0x${string}`;
    address: `0x${string}`;
    abi: Abi;
    functionName: string;
    args: readonly unknown[];
    gas: bigint;
  };
  /**
   * Sends one transaction per item, 1,000 at a time in JSON-RPC batches (the owner's account is
   * anvil's, the borrowers impersonated: nothing to sign), and mines each thousand in one block
   * (automine off meanwhile): a setup of 100,000 positions takes minutes, not hours.
   */
  const batched = async <T>(items: readonly T[], tx: (item: T, index: number) => Call) => {
    nonces.set(owner.toLowerCase(), await c.getTransactionCount({ address: owner, blockTag: 'pending' }));
    await anvil.client().request({ method: 'evm_setAutomine' as never, params: [false] as never });
    try {
      for (let i = 0; i < items.length; i += 1000) {
        const calls = items.slice(i, i + 1000).map((item, j) => {
          const call = tx(item, i + j);
          const from = call.from.toLowerCase();
          const nonce = nonces.get(from) ?? 0;
          nonces.set(from, nonce + 1);
          const data = encodeFunctionData({
            abi: call.abi,
            functionName: call.functionName,
            args: call.args,
          } as never);
          return {
            method: 'eth_sendTransaction',
            params: [{ from: call.from, to: call.address, gas: toHex(call.gas), nonce: toHex(nonce), data }],
          };
        });
        await mined((await rpcBatch(calls)) as `0x${string}`[]);
      }
    } finally {
      await anvil.client().request({ method: 'evm_setAutomine' as never, params: [true] as never });
    }
  };
  await rpcBatch(borrowers.map((address) => ({ method: 'anvil_setBalance', params: [address, toHex(WAD)] })));
  await batched(borrowers, (b) => ({
    from: owner,
    address: morpho,
    abi: M,
    functionName: 'supplyCollateral',
    args: [params, WAD, b, '0x'],
    gas: 200_000n,
  }));
  await batched(borrowers, (b, i) => ({
    from: b,
    address: morpho,
    abi: blueAbi,
    functionName: 'borrow',
    // $1,500 to $2,500 against 1 WETH at $3,000
    args: [params, BigInt(1500 + (i % 1000)) * 10n ** 6n, 0n, b, b],
    gas: 300_000n,
  }));
  // The comet: USDC lent against WETH; K borrowers, their collateral supplied for them by the owner.
  const comet = await deploy(c, art.TestComet!, [
    usdc,
    6,
    usdcUsd,
    [(WAD * 8n) / 10n, 10n ** 9n, 10n ** 10n, 0n, (WAD * 8n) / 10n, 10n ** 9n, 10n ** 10n, 10n ** 8n],
  ]);
  const C = art.TestComet!.abi;
  await send(comet, C, 'addAsset', [
    weth,
    ethUsd,
    18,
    (WAD * 8n) / 10n,
    (WAD * 85n) / 100n,
    (WAD * 95n) / 100n,
  ]);
  await send(usdc, T, 'mint', [owner, 10n ** 15n]);
  await send(usdc, T, 'approve', [comet, 2n ** 256n - 1n]);
  await send(comet, C, 'supply', [usdc, 10n ** 15n]);
  await send(weth, T, 'mint', [owner, BigInt(K) * WAD]);
  await send(weth, T, 'approve', [comet, 2n ** 256n - 1n]);
  const cometBorrowers = borrowers.slice(0, K);
  await batched(cometBorrowers, (b) => ({
    from: owner,
    address: comet,
    abi: C,
    functionName: 'supplyTo',
    args: [b, weth, WAD],
    gas: 200_000n,
  }));
  await batched(cometBorrowers, (b, i) => ({
    from: b,
    address: comet,
    abi: C,
    functionName: 'withdraw',
    args: [usdc, BigInt(1500 + (i % 900)) * 10n ** 6n],
    gas: 300_000n,
  }));
  // Euler: a USDC vault lending against a WETH vault; E borrowers, their WETH deposited for them
  // by the owner, each enabling collateral and controller and borrowing itself.
  const USD = '0x0000000000000000000000000000000000000348';
  const V = art.TestEVault!.abi;
  const EVC = art.TestEVC!.abi;
  const evc = await deploy(c, art.TestEVC!, []);
  const vaultFactory = await deploy(c, art.TestVaultFactory!, []);
  const eulerBorrowers = borrowers.slice(0, E);
  const router = await deploy(c, art.TestEulerOracle!, []);
  // A price update: the file's ETH/USD feed, which the comet and the Aave pool's oracle read, and
  // the Euler router's WETH rate and the Fluid vault's oracle price with it (oracles on the same
  // feed). (One block: the transactions mined together.)
  const setEth = async (price: number) => {
    const feed = {
      abi: art.TestAggregator!.abi,
      fn: 'updateAnswer',
      address: ethUsd,
      args: [BigInt(price) * 10n ** 8n],
    };
    const rate = {
      abi: art.TestEulerOracle!.abi,
      fn: 'setRate',
      address: router,
      args: [weth, USD, BigInt(price) * WAD],
    };
    // (The Fluid vault's oracle on the same feed: debt per collateral × 1e27, USDC has 6 decimals.)
    const fluidPrice = {
      abi: art.TestFluidVault!.abi,
      fn: 'setPrice',
      address: fluidVault,
      args: [BigInt(price) * 10n ** 6n * 10n ** 9n],
    };
    await batched([...(E > 0 ? [rate] : []), ...(F > 0 ? [fluidPrice] : []), feed], (x) => ({
      from: owner,
      address: x.address,
      abi: x.abi,
      functionName: x.fn,
      args: x.args,
      gas: 200_000n,
    }));
  };
  const eUsdc = await deploy(c, art.TestEVault!, [evc, usdc, router, USD, 'EVK Vault eUSDC-1', 'eUSDC-1']);
  const eWeth = await deploy(c, art.TestEVault!, [evc, weth, router, USD, 'EVK Vault eWETH-1', 'eWETH-1']);
  if (E > 0) {
    await send(vaultFactory, art.TestVaultFactory!.abi, 'register', [eUsdc]);
    const O = art.TestEulerOracle!.abi;
    await send(router, O, 'setRate', [usdc, USD, 10n ** 30n]);
    await send(router, O, 'setRate', [weth, USD, 3000n * WAD]);
    await send(router, O, 'govSetResolvedVault', [eWeth, true]);
    await send(eUsdc, V, 'setLTV', [eWeth, 8000, 8500]);
    await send(eUsdc, V, 'setInterestRate', [10n ** 18n]);
    await send(usdc, T, 'mint', [owner, 10n ** 15n]);
    await send(usdc, T, 'approve', [eUsdc, 2n ** 256n - 1n]);
    await send(eUsdc, V, 'deposit', [10n ** 15n, owner]);
    await send(weth, T, 'mint', [owner, BigInt(E) * WAD]);
    await send(weth, T, 'approve', [eWeth, 2n ** 256n - 1n]);
    await batched(eulerBorrowers, (b) => ({
      from: owner,
      address: eWeth,
      abi: V,
      functionName: 'deposit',
      args: [WAD, b],
      gas: 200_000n,
    }));
    const asBorrower = (
      address: `0x${string}`,
      abi: Abi,
      functionName: string,
      args: (b: `0x${string}`, i: number) => unknown[],
    ) =>
      batched(eulerBorrowers, (b, i) => ({
        from: b,
        address,
        abi,
        functionName,
        args: args(b, i),
        gas: 500_000n,
      }));
    await asBorrower(evc, EVC, 'enableCollateral', (b) => [b, eWeth]);
    await asBorrower(evc, EVC, 'enableController', (b) => [b, eUsdc]);
    await asBorrower(eUsdc, V, 'borrow', (b, i) => [BigInt(1500 + (i % 900)) * 10n ** 6n, b]);
  }
  // Aave v3: USDC lent against WETH; A borrowers, their WETH supplied for them by the owner, each
  // borrowing itself.
  const aaveBorrowers = borrowers.slice(0, A);
  const aave = A > 0 ? await deployAave(anvil) : null;
  if (aave) {
    const { WETH: aWeth, USDC: aUsdc } = aave.reserves;
    const P = aave.poolAbi;
    await send(aUsdc.asset, T, 'mint', [owner, 10n ** 15n]);
    await send(aUsdc.asset, T, 'approve', [aave.pool, 2n ** 256n - 1n]);
    await send(aave.pool, P, 'supply', [aUsdc.asset, 10n ** 15n, owner, 0]);
    await send(aWeth.asset, T, 'mint', [owner, BigInt(A) * WAD]);
    await send(aWeth.asset, T, 'approve', [aave.pool, 2n ** 256n - 1n]);
    await batched(aaveBorrowers, (b) => ({
      from: owner,
      address: aave.pool,
      abi: P,
      functionName: 'supply',
      args: [aWeth.asset, WAD, b, 0],
      gas: 500_000n,
    }));
    // $800 to $1,400 against 1 WETH at $2,000 (LTV 80 %)
    await batched(aaveBorrowers, (b, i) => ({
      from: b,
      address: aave.pool,
      abi: P,
      functionName: 'borrow',
      args: [aUsdc.asset, BigInt(800 + (i % 600)) * 10n ** 6n, 2, 0, b],
      gas: 800_000n,
    }));
    // Then the pool's oracle takes WETH's price from the file's ETH/USD feed, as on mainnet (Aave's
    // health factors follow the price the records carry).
    await send(aave.oracle, aave.oracleAbi, 'setAssetSources', [[aWeth.asset], [ethUsd]]);
  }
  // Fluid: an ETH (the native placeholder) / USDC T1 vault; F borrowers each open a position.
  const fluidBorrowers = borrowers.slice(0, F);
  const fluidFactory = await deploy(c, art.TestFluidFactory!, []);
  const liquidityResolver = await deploy(c, art.TestFluidLiquidityResolver!, []);
  const vaultResolver = await deploy(c, art.TestFluidVaultResolver!, [liquidityResolver]);
  const positionsResolver = await deploy(c, art.TestFluidPositionsResolver!, [fluidFactory]);
  const FV = art.TestFluidVault!.abi;
  const fluidVault = await deploy(c, art.TestFluidVault!, [
    fluidFactory,
    '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee',
    usdc,
    1n,
    10_000n,
    owner,
  ]);
  if (F > 0) {
    await send(vaultResolver, art.TestFluidVaultResolver!.abi, 'addVault', [fluidVault]);
    // 1 ETH (1e18) is 3,000 USDC (3,000e6): debt per collateral × 1e27.
    await send(fluidVault, FV, 'setPrice', [3000n * 10n ** 6n * 10n ** 9n]);
    await send(fluidVault, FV, 'setRates', [300n, 550n, 10n ** 15n]);
    await send(liquidityResolver, art.TestFluidLiquidityResolver!.abi, 'setRates', [usdc, 500n, 400n]);
    await batched(fluidBorrowers, (b, i) => ({
      from: b,
      address: fluidVault,
      abi: FV,
      functionName: 'operate',
      args: [0n, WAD, BigInt(1500 + (i % 900)) * 10n ** 6n, b],
      gas: 500_000n,
    }));
  }
  log(
    `opened in ${fmt((performance.now() - t0) / 1000)} s; block ${await c.getBlockNumber({ cacheTime: 0 })}`,
  );

  // MetaMorpho vaults made by a factory, each supplying 1,000,000 USDC to the market.
  const metaMorphoFactory = await deploy(c, art.TestMetaMorphoFactory!, [morpho]);
  const MM = art.TestMetaMorpho!.abi;
  const vaults: `0x${string}`[] = [];
  await send(usdc, T, 'mint', [owner, BigInt(VAULTS + 1) * 10n ** 12n]);
  for (let i = 0; i < VAULTS; i++) {
    const made = await send(metaMorphoFactory, art.TestMetaMorphoFactory!.abi, 'createMetaMorpho', [
      owner,
      0n,
      usdc,
      `Bench USDC Vault ${i}`,
      `bvUSDC${i}`,
      `0x${(i + 1).toString(16).padStart(64, '0')}`,
    ]);
    const vault = `0x${made.logs.at(-1)!.topics[1]!.slice(26)}` as `0x${string}`;
    vaults.push(vault);
    await send(vault, MM, 'submitCap', [params, 10n ** 13n]);
    await send(vault, MM, 'acceptCap', [params]);
    await send(vault, MM, 'setSupplyQueue', [[marketId]]);
    await send(usdc, T, 'approve', [vault, 2n ** 256n - 1n]);
    await send(vault, MM, 'deposit', [10n ** 12n, owner]);
  }

  const sourcesJson = localSources(anvil, { morpho, ethUsd, usdcUsd });
  if (VAULTS > 0) Object.assign(sourcesJson.chains[0]!.morpho, { vaultFactories: [metaMorphoFactory] });
  // The comet from its deployment block, found by the source (as on a real chain).
  if (K > 0) Object.assign(sourcesJson.chains[0]!, { compound: [{ comet }] });
  // Euler from its EVC's deployment block, found by the source.
  if (E > 0) Object.assign(sourcesJson.chains[0]!, { euler: { evc, factory: vaultFactory } });
  // The Aave pool from its deployment block, found by the source.
  if (aave) Object.assign(sourcesJson.chains[0]!, { aave: [{ pool: aave.pool }] });
  // Fluid from its vault factory's deployment block, found by the source.
  if (F > 0) Object.assign(sourcesJson.chains[0]!, { fluid: { vaultResolver, positionsResolver } });
  // A first sync as a user runs it, behind a stand-in provider, in SYNC_PASSES passes: run
  // through, then killed half-way and started again.
  const head = Number(await c.getBlockNumber());
  log(`first sync behind a stand-in provider, ${SYNC_PASSES} passes of logs: run through`);
  const providerThrough = await providerSync(anvil.url, sourcesJson, head, SYNC_PASSES, null);
  log(`  ${fmt(providerThrough.ms / 1000)} s, ${providerThrough.requests} requests; killed half-way`);
  const providerKilled = await providerSync(
    anvil.url,
    sourcesJson,
    head,
    SYNC_PASSES,
    providerThrough.ms / 2,
  );
  // (A sync that ends before the kill is a run through: no kill to report.)
  if (providerKilled.killToResumedPassMs === undefined)
    throw new Error(`the sync ended before the kill, at ${fmt(providerThrough.ms / 2000)} s`);
  log(
    `  ${fmt(providerKilled.ms / 1000)} s, ${providerKilled.requests} requests; killed after block ${providerKilled.killedThroughBlock ?? 'none (no pass stored)'}, went on to ${providerKilled.resumedThroughBlock} after ${fmt(providerKilled.killToResumedPassMs / 1000)} s`,
  );

  const dataDir = tempDir('lrds-bench-chain-');
  const store = await openStore({ dataDir, databaseUrl: null });
  const sources = chainSources(parseSources(sourcesJson, 'bench'));
  const source = sources[0]!;

  // First sync.
  let t = performance.now();
  const firstPass = await ingestLive(sources, store, systemClock());
  const firstMs = performance.now() - t;
  if (!firstPass.runs[0]!.ok) throw new Error(`first sync failed: ${firstPass.runs[0]!.error}`);
  const first = source.lastRun()!;
  const notRead = firstPass.runs[0]!.items.filter((i) => !i.ok);
  log(
    `first sync: ${first.positions} positions, ${first.rpcRequests} RPC requests, ${notRead.length} items not read`,
  );
  // Baseline: the same position and account reads, bare.
  const accounts = [owner, ...borrowers];
  const bare = [
    ...accounts.map(
      (a) => ({ address: morpho, abi: blueAbi, functionName: 'position', args: [marketId, a] }) as const,
    ),
    ...cometBorrowers.flatMap((b) => [
      { address: comet, abi: C, functionName: 'userBasic', args: [b] } as const,
      { address: comet, abi: C, functionName: 'collateralBalanceOf', args: [b, weth] } as const,
    ]),
    ...eulerBorrowers.flatMap((b) => [
      { address: eUsdc, abi: V, functionName: 'debtOfExact', args: [b] } as const,
      { address: evc, abi: EVC, functionName: 'getCollaterals', args: [b] } as const,
      { address: evc, abi: EVC, functionName: 'getControllers', args: [b] } as const,
      { address: eWeth, abi: V, functionName: 'balanceOf', args: [b] } as const,
    ]),
    ...(aave
      ? aaveBorrowers.flatMap((b) => [
          {
            address: aave.pool,
            abi: aave.poolAbi,
            functionName: 'getUserConfiguration',
            args: [b],
          } as const,
          { address: aave.pool, abi: aave.poolAbi, functionName: 'getUserEMode', args: [b] } as const,
          {
            address: aave.reserves.WETH.aToken,
            abi: aave.aTokenAbi,
            functionName: 'scaledBalanceOf',
            args: [b],
          } as const,
          {
            address: aave.reserves.USDC.variableDebt,
            abi: aave.variableDebtAbi,
            functionName: 'scaledBalanceOf',
            args: [b],
          } as const,
          {
            address: aave.reserves.USDC.stableDebt,
            abi: aave.stableDebtAbi,
            functionName: 'balanceOf',
            args: [b],
          } as const,
        ])
      : []),
    // Fluid: the positions resolver, NFTS_PER_CALL positions per call (as the source asks).
    ...Array.from({ length: Math.ceil(F / NFTS_PER_CALL) }, (_, i) => ({
      address: positionsResolver,
      abi: art.TestFluidPositionsResolver!.abi,
      functionName: 'getVaultPositionsForNftIds',
      args: [
        Array.from({ length: Math.min(NFTS_PER_CALL, F - i * NFTS_PER_CALL) }, (_, j) =>
          BigInt(i * NFTS_PER_CALL + j + 1),
        ),
        fluidVault,
      ],
    })),
  ];
  t = performance.now();
  // BASELINE_GROUP calls at a time (each group in calls of DEPLOYLESS_BATCH_BYTES, sent together):
  // all at once, hundreds of thousands of calls stalled anvil for most of an hour.
  for (let i = 0; i < bare.length; i += BASELINE_GROUP) {
    await c.multicall({
      contracts: bare.slice(i, i + BASELINE_GROUP),
      deployless: true,
      batchSize: DEPLOYLESS_BATCH_BYTES,
      allowFailure: true,
    });
  }
  const baselineMs = performance.now() - t;
  // The baseline's reads went out at once, each on a connection of its own (hundreds at 100,000
  // positions): they are let close, idle (after 4 s), before the passes measured, whose CPU
  // their closing would otherwise count in.
  await new Promise((r) => setTimeout(r, 5_000));

  // Steady state: one block, one pass; its CPU, and the bytes the process wrote (the store's).
  type Steady = {
    requests: number;
    ms: number;
    cpuMs: number;
    bytesWritten: number;
    positionsRead: number;
    vaultsRead: number;
  };
  const pass = async (): Promise<Steady> => {
    const io0 = writtenBytes();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await ingestLive(sources, store, systemClock());
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const run = source.lastRun()!;
    return {
      requests: run.rpcRequests,
      ms,
      cpuMs: (cpu.user + cpu.system) / 1000,
      bytesWritten: writtenBytes() - io0,
      positionsRead: run.positionsRead,
      vaultsRead: run.vaultsRead,
    };
  };
  const steady: Steady[] = [];
  await profiled(async () => {
    for (let i = 0; i < 5; i++) {
      await setEth(3000 - 10 * (i + 1));
      steady.push(await pass());
    }
  });
  // A block with nothing of ours (no log of a contract read, no feed update): no state read.
  const quiet: Steady[] = [];
  for (let i = 0; i < 3; i++) {
    await anvil.client().request({ method: 'evm_mine' as never, params: [] as never });
    quiet.push(await pass());
  }
  // The same once the state read last is `stateMaxAgeSeconds` old: the state read again.
  const aged: Steady[] = [];
  for (let i = 0; i < 3; i++) {
    await anvil.client().request({
      method: 'evm_increaseTime' as never,
      params: [DEFAULT_STATE_MAX_AGE_SECONDS] as never,
    });
    await anvil.client().request({ method: 'evm_mine' as never, params: [] as never });
    aged.push(await pass());
  }
  // A block where one borrower borrows more: one position changes.
  const touched: Steady[] = [];
  for (let i = 0; i < 3; i++) {
    const b = borrowers[i]!;
    await wallet.writeContract({
      account: b,
      chain: null,
      address: morpho,
      abi: blueAbi,
      functionName: 'borrow',
      args: [params, 10n * 10n ** 6n, 0n, b, b],
      gas: 300_000n,
    });
    await anvil.client().request({ method: 'evm_mine' as never, params: [] as never });
    touched.push(await pass());
  }
  // A block with a deposit into one vault: that vault alone is read again.
  let deposit: { requests: number; ms: number; vaultsRead: number } | null = null;
  if (VAULTS > 0) {
    await send(vaults[0]!, MM, 'deposit', [10n ** 9n, owner]);
    t = performance.now();
    await ingestLive(sources, store, systemClock());
    const run = source.lastRun()!;
    deposit = { requests: run.rpcRequests, ms: sig(performance.now() - t, 3), vaultsRead: run.vaultsRead };
  }

  // Blocks where someone creates a Morpho market (anyone may, for gas alone): the pass adds it to
  // the dataset, and a server following the store adds it in place; against what a server
  // spends loading the dataset afresh (what every server did when a market appeared).
  const { catchUpChanges, loadReadModel } = await import('../src/data/read-model.ts');
  const cpuMsOf = async (run: () => Promise<unknown>) => {
    const cpu0 = process.cpuUsage();
    await run();
    const cpu = process.cpuUsage(cpu0);
    return (cpu.user + cpu.system) / 1000;
  };
  const listings: (Steady & { followCpuMs: number; reloadCpuMs: number; newDataset: boolean })[] = [];
  for (const lltv of [770n, 625n, 915n].map((x) => x * 10n ** 15n)) {
    await send(morpho, M, 'enableLltv', [lltv]);
    await send(morpho, M, 'createMarket', [{ ...params, lltv }]);
    const follower = (await loadReadModel(store, Date.now()))!;
    const before = (await store.datasetInfo())!;
    const s = await pass();
    const after = (await store.datasetInfo())!;
    const followCpuMs = await cpuMsOf(() => catchUpChanges(store, follower, after.changeSeq));
    if (follower.catalog.size !== after.marketCount) throw new Error('the follower missed the market');
    const reloadCpuMs = await cpuMsOf(() => loadReadModel(store, Date.now()));
    listings.push({ ...s, followCpuMs, reloadCpuMs, newDataset: after.version !== before.version });
  }

  // Baseline, in the same run: the dataset written whole, as every pass did before.
  const whole = await (async () => {
    const model = (await loadReadModel(store, Date.now()))!;
    const markets = Array.from({ length: model.catalog.size }, (_, ord) => model.catalog.baseRecord(ord));
    const positions = Array.from({ length: model.risk.size }, (_, i) => {
      const a = model.risk.amountsOf(i);
      return {
        marketKey: markets[a.ord]!.uniqueKey,
        user: model.risk.walletOf(i),
        collateralUsd: a.collateralUsd,
        borrowUsd: a.borrowUsd,
        supplyUsd: a.supplyUsd,
        healthFactor: a.healthFactor,
      };
    });
    const io0 = writtenBytes();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await store.replaceDataset({
      kind: 'live',
      profile: 'sources',
      seed: null,
      markets,
      vaults: model.vaults.entries.map((e) => e.record),
      positions,
      positionCount: positions.length,
    });
    const cpu = process.cpuUsage(cpu0);
    return {
      ms: sig(performance.now() - t0, 3),
      cpuMs: sig((cpu.user + cpu.system) / 1000, 3),
      bytesWritten: writtenBytes() - io0,
    };
  })();
  // Block to answer, through the service's in-process ingestion.
  const sourcesFile = join(dataDir, 'sources.json');
  writeFileSync(sourcesFile, JSON.stringify(sourcesJson));
  await store.close();
  const service = await createService(
    { ...embeddedSettings(dataDir), sourcesFile, simulationTickMs: 0, ingestIntervalMs: 3_600_000 },
    { server: QUIET },
  );
  const account = await service.keys.ensureAccount('bench');
  const key = (await service.keys.create({ accountId: account.id, tier: 'enterprise', mode: 'live' })).key;
  const toAnswer: number[] = [];
  try {
    for (let i = 0; i < 5; i++) {
      const price = 2900 - 10 * i;
      await setEth(price);
      const mined = performance.now();
      await service.ingest();
      await service.models.reloadIfChanged();
      const res = await service.app.inject({
        url: `/api/v1/positions?address=${borrowers[0]}`,
        headers: { authorization: `Bearer ${key}` },
      });
      const shown = res.json().data[0]?.collateralPrice;
      if (shown !== price) throw new Error(`the answer shows ${shown}, not ${price}`);
      toAnswer.push(performance.now() - mined);
    }
  } finally {
    await service.close();
  }

  const positions = first.positions;
  const results = {
    date: new Date().toISOString(),
    machine: machine(),
    positions,
    morphoPositions: N + 1,
    cometAccounts: K,
    eulerAccounts: E,
    aaveAccounts: A,
    fluidPositions: F,
    metaMorphoVaults: VAULTS,
    firstSync: {
      ms: sig(firstMs, 4),
      rpcRequests: first.rpcRequests,
      positionsPerSecond: sig(positions / (firstMs / 1000), 3),
      baselineReadMs: sig(baselineMs, 4),
      ratioToBaseline: sig(firstMs / baselineMs, 3),
    },
    steadyState: {
      rpcRequestsPerBlock: median(steady.map((s) => s.requests)),
      passMs: sig(median(steady.map((s) => s.ms)), 3),
      passCpuMs: sig(median(steady.map((s) => s.cpuMs)), 3),
      bytesWrittenPerBlock: median(steady.map((s) => s.bytesWritten)),
      /** Blocks with nothing of ours: no log of a contract read, no feed update. */
      quietBlock: summary(quiet),
      /** The same once the state read last is `stateMaxAgeSeconds` old (read again). */
      agedQuietBlock: summary(aged),
      /** Blocks where one borrower borrowed more. */
      onePositionBlock: summary(touched),
      /** The dataset written whole (every pass before changes were written): the baseline. */
      wholeDatasetWrite: whole,
      positionsReadPerBlock: median(steady.map((s) => s.positionsRead)),
      vaultsReadPerBlock: median(steady.map((s) => s.vaultsRead)),
      /** A block with a deposit into one vault. */
      vaultDeposit: deposit,
      /** Blocks where a Morpho market is created; a server following it, against a reload. */
      marketCreated: {
        ...summary(listings),
        newDataset: listings.some((l) => l.newDataset),
        followCpuMs: sig(median(listings.map((l) => l.followCpuMs)), 3),
        reloadCpuMs: sig(median(listings.map((l) => l.reloadCpuMs)), 3),
      },
    },
    /** A first sync through a stand-in provider's limits, by `lrds ingest`: run through, and killed half-way. */
    providerSync: {
      passes: SYNC_PASSES,
      blocks: head + 1,
      through: {
        ...providerThrough,
        ms: sig(providerThrough.ms, 4),
        peakRssMb: sig(providerThrough.peakRssMb, 3),
      },
      killedHalfWay: {
        ...providerKilled,
        ms: sig(providerKilled.ms, 4),
        peakRssMb: sig(providerKilled.peakRssMb, 3),
      },
    },
    blockToAnswerMs: sig(median(toAnswer), 3),
    blockToAnswerMaxMs: sig(Math.max(...toAnswer), 3),
    /** In order: the first is the first pass of the just-started server (its cache empty). */
    blockToAnswerRunsMs: toAnswer.map((ms) => sig(ms, 3)),
  };
  const dir = join(BENCH_DIR, 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, `chain-${results.date.slice(0, 10)}.json`),
    `${JSON.stringify(results, null, 2)}\n`,
  );
  writeFileSync(join(dir, 'chain-latest.json'), `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(
    [
      `| chain ingestion (anvil, ${positions.toLocaleString('en-US')} positions: 1 Morpho market and ${VAULTS} MetaMorpho vaults, 1 comet of ${K} borrowers, 1 Euler vault of ${E} borrowers, 1 Aave pool of ${A} borrowers, 1 Fluid vault of ${F} positions; 2 feeds) | figure |`,
      '|---|---:|',
      `| first sync: positions read per second | ${fmt(results.firstSync.positionsPerSecond)} |`,
      `| first sync: pass time, s (baseline: the bare position reads, ${fmt(baselineMs / 1000)} s) | ${fmt(firstMs / 1000)} (${fmt(results.firstSync.ratioToBaseline)}x) |`,
      `| first sync: RPC requests | ${first.rpcRequests} |`,
      `| first sync by \`lrds ingest\` behind a stand-in provider, ${SYNC_PASSES} passes: time, s; HTTP requests; peak RSS, MB | ${fmt(providerThrough.ms / 1000)}; ${providerThrough.requests}; ${fmt(providerThrough.peakRssMb)} |`,
      `| the same, killed (SIGKILL) half-way and started again: total time, s; HTTP requests; peak RSS, MB | ${fmt(providerKilled.ms / 1000)}; ${providerKilled.requests}; ${fmt(providerKilled.peakRssMb)} |`,
      `| steady state, a price update: RPC requests per block | ${results.steadyState.rpcRequestsPerBlock} |`,
      `| steady state: positions read per block (none touched) | ${results.steadyState.positionsReadPerBlock} |`,
      `| steady state: vaults read per block (none touched) | ${results.steadyState.vaultsReadPerBlock} |`,
      ...(deposit
        ? [
            `| a block with a deposit into one vault: RPC requests, vaults read, pass time, ms | ${deposit.requests}, ${deposit.vaultsRead}, ${fmt(deposit.ms)} |`,
          ]
        : []),
      `| steady state: pass time, ms | ${fmt(results.steadyState.passMs)} |`,
      `| steady state: pass CPU, ms; bytes written (a price update) | ${fmt(results.steadyState.passCpuMs)}; ${fmt(results.steadyState.bytesWrittenPerBlock)} |`,
      `| a block with nothing of ours: RPC requests, pass time, CPU ms, bytes written | ${quietRow(results.steadyState.quietBlock)} |`,
      `| the same, the state read last ${DEFAULT_STATE_MAX_AGE_SECONDS} s old (read again) | ${quietRow(results.steadyState.agedQuietBlock)} |`,
      `| a block where one borrower borrows: RPC requests, pass time, CPU ms, bytes written | ${quietRow(results.steadyState.onePositionBlock)} |`,
      `| a block where a Morpho market is created: RPC requests, pass time, CPU ms, bytes written | ${quietRow(results.steadyState.marketCreated)} |`,
      `| the same: CPU ms of a server following the store, adding it in place (loading the dataset afresh: ${fmt(results.steadyState.marketCreated.reloadCpuMs)}) | ${fmt(results.steadyState.marketCreated.followCpuMs)} |`,
      `| baseline: the dataset written whole (as every pass did before): time, CPU ms, bytes | ${fmt(whole.ms)}, ${fmt(whole.cpuMs)}, ${fmt(whole.bytesWritten)} |`,
      `| block to answer, ms (median of 5; max ${fmt(results.blockToAnswerMaxMs)}) | ${fmt(results.blockToAnswerMs)} |`,
      '',
    ].join('\n'),
  );
} finally {
  await anvil.stop();
}
