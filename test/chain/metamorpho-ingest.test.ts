/**
 * MetaMorpho vaults on a local chain: Morpho Blue, a vault factory and vaults of the test
 * (test/chain/contracts/TestMetaMorpho.sol answers MetaMorpho v1.1's views and emits its events in
 * their layout: no npm package ships MetaMorpho's bytecode). The vaults are found by the factory's
 * logs, read whole once, then again only when their own logs say they changed; GET /vaults serves
 * their roles, queues, caps, total assets and what their timelock holds pending.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Abi } from 'viem';
import { MetaMorphoCache, readMetaMorpho } from '../../src/ingest/chain/metamorpho.ts';
import { createChainRpc } from '../../src/ingest/chain/rpc.ts';
import {
  type Anvil,
  type Artifact,
  compileContracts,
  deploy,
  liveChainSuite,
  logSpiedSources,
  mineOnceStateAged,
  readAt,
  sendTx,
  startAnvil,
  walkAddedLater,
} from './anvil.ts';

const WAD = 10n ** 18n;
const USDC = 10n ** 6n;
const LLTV = 860_000_000_000_000_000n;
const DAY = 86_400;
const ZERO = '0x0000000000000000000000000000000000000000';

let anvil: Anvil;
let art: Record<string, Artifact>;
let morpho: `0x${string}`;
let usdc: `0x${string}`;
let ethUsd: `0x${string}`;
let usdcUsd: `0x${string}`;
let factory: `0x${string}`;
let vault: `0x${string}`;
/** A vault deployed without the factory: never served. */
let stray: `0x${string}`;
let market: { loanToken: string; collateralToken: string; oracle: string; irm: string; lltv: bigint };
let idle: typeof market;
/** A market the vault is about to add (a cap submitted, not accepted yet). */
let later: typeof market;
let laterId: `0x${string}`;
let marketId: `0x${string}`;
let idleId: `0x${string}`;
const users: `0x${string}`[] = [];

const send = (from: number, address: `0x${string}`, abi: Abi, fn: string, args: readonly unknown[] = []) =>
  sendTx(anvil, from, address, abi, fn, args);
const V = () => art.TestMetaMorpho!.abi;

before(async () => {
  art = compileContracts();
  anvil = await startAnvil();
  for (const i of [0, 1, 2, 3, 4]) users.push(anvil.client(i).account.address.toLowerCase() as `0x${string}`);
  const c = anvil.client(0);
  const weth = await deploy(c, art.TestToken!, ['Wrapped Ether', 'WETH', 18]);
  usdc = await deploy(c, art.TestToken!, ['USD Coin', 'USDC', 6]);
  ethUsd = await deploy(c, art.TestAggregator!, [8, 'ETH / USD', 3000n * 10n ** 8n]);
  usdcUsd = await deploy(c, art.TestAggregator!, [8, 'USDC / USD', 10n ** 8n]);
  const oracle = await deploy(c, art.TestChainlinkOracle!, [ethUsd, usdcUsd, 10n ** 24n]);
  morpho = await deploy(c, art.Morpho!, [users[0]]);
  const irm = await deploy(c, art.IrmMock!);
  const M = art.Morpho!.abi;
  await send(0, morpho, M, 'enableIrm', [irm]);
  await send(0, morpho, M, 'enableIrm', [ZERO]);
  await send(0, morpho, M, 'enableLltv', [LLTV]);
  await send(0, morpho, M, 'enableLltv', [0n]);
  market = { loanToken: usdc, collateralToken: weth, oracle, irm, lltv: LLTV };
  // An idle market (no collateral): vaults park liquidity there; no pass reads it.
  idle = { loanToken: usdc, collateralToken: ZERO, oracle: ZERO, irm: ZERO, lltv: 0n };
  marketId = (await send(0, morpho, M, 'createMarket', [market])).logs[0]!.topics[1]!;
  idleId = (await send(0, morpho, M, 'createMarket', [idle])).logs[0]!.topics[1]!;
  later = { ...market, oracle: await deploy(c, art.TestChainlinkOracle!, [ethUsd, usdcUsd, 10n ** 24n]) };
  laterId = (await send(0, morpho, M, 'createMarket', [later])).logs[0]!.topics[1]!;
  const T = art.TestToken!.abi;
  // A lender supplies 300,000 USDC directly; a borrower posts 10 WETH and borrows 20,000.
  await send(0, usdc, T, 'mint', [users[0], 10_000_000n * USDC]);
  await send(0, usdc, T, 'approve', [morpho, 2n ** 256n - 1n]);
  await send(0, morpho, M, 'supply', [market, 300_000n * USDC, 0n, users[0], '0x']);
  await send(1, weth, T, 'mint', [users[1], 10n * WAD]);
  await send(1, weth, T, 'approve', [morpho, 10n * WAD]);
  await send(1, morpho, M, 'supplyCollateral', [market, 10n * WAD, users[1], '0x']);
  await send(1, morpho, M, 'borrow', [market, 20_000n * USDC, 0n, users[1], users[1]]);

  // The factory's vault: created with no timelock, so its first caps apply at once.
  factory = await deploy(c, art.TestMetaMorphoFactory!, [morpho]);
  const created = await send(0, factory, art.TestMetaMorphoFactory!.abi, 'createMetaMorpho', [
    users[0],
    0n,
    usdc,
    'Test USDC Vault',
    'tvUSDC',
    `0x${'01'.repeat(32)}`,
  ]);
  vault = `0x${created.logs.at(-1)!.topics[1]!.slice(26)}` as `0x${string}`;
  await send(0, vault, V(), 'setCurator', [users[1]]);
  await send(0, vault, V(), 'setFee', [WAD / 10n]);
  await send(0, vault, V(), 'setFeeRecipient', [users[2]]);
  await send(0, vault, V(), 'submitGuardian', [users[3]]);
  for (const [params, cap] of [
    [market, 500_000n * USDC],
    [idle, 100_000n * USDC],
  ] as const) {
    await send(0, vault, V(), 'submitCap', [params, cap]);
    await send(0, vault, V(), 'acceptCap', [params]);
  }
  await send(0, usdc, T, 'approve', [vault, 2n ** 256n - 1n]);
  // 200,000 USDC to the market, 50,000 to the idle market.
  await send(0, vault, V(), 'setSupplyQueue', [[idleId]]);
  await send(0, vault, V(), 'deposit', [50_000n * USDC, users[0]]);
  await send(0, vault, V(), 'setSupplyQueue', [[marketId, idleId]]);
  await send(0, vault, V(), 'deposit', [200_000n * USDC, users[0]]);
  await send(0, vault, V(), 'submitTimelock', [BigInt(DAY)]);

  // A vault the factory did not make, lending into the same market.
  stray = await deploy(c, art.TestMetaMorpho!, [morpho, users[0], 0n, usdc, 'Stray', 'STRAY']);
  await send(0, stray, V(), 'submitCap', [market, 100_000n * USDC]);
  await send(0, stray, V(), 'acceptCap', [market]);
  await send(0, stray, V(), 'setSupplyQueue', [[marketId]]);
  await send(0, usdc, T, 'approve', [stray, 2n ** 256n - 1n]);
  await send(0, stray, V(), 'deposit', [10_000n * USDC, users[0]]);
});

after(async () => {
  await anvil?.stop();
});

function sourcesJson() {
  return {
    chains: [
      {
        chainId: anvil.chainId,
        rpcUrl: anvil.url,
        compound: [],
        morpho: { blue: morpho, fromBlock: 0, vaultFactories: [factory] },
        chainlink: [
          { address: ethUsd, pair: 'ETH/USD', heartbeatSeconds: 3600 },
          { address: usdcUsd, pair: 'USDC/USD', heartbeatSeconds: 86400 },
        ],
      },
    ],
  };
}

/** The vault's supply in a market at the latest block, in USDC: its shares at Morpho's totals, accrued. */
async function supplyOf(id: `0x${string}`, params: typeof market) {
  const M = art.Morpho!.abi;
  if (params.irm !== ZERO) await send(0, morpho, M, 'accrueInterest', [params]);
  const [shares] = await readAt<[bigint, bigint, bigint]>(anvil, morpho, M, 'position', [id, vault]);
  const m = await readAt<bigint[]>(anvil, morpho, M, 'market', [id]);
  return { shares, totalShares: m[1]!, assets: Number((shares * (m[0]! + 1n)) / (m[1]! + 10n ** 6n)) / 1e6 };
}

describe('MetaMorpho vaults on a local chain', () => {
  const suite = liveChainSuite(() => anvil, 'lrds-metamorpho-', sourcesJson);
  const { get } = suite;
  const marketKey = () => `morpho-31337-${marketId}`;
  const idleKey = () => `morpho-31337-${idleId}`;
  const laterKey = () => `morpho-31337-${laterId}`;

  test("default: a factory's vault with its roles, queues, caps and the chain's exact shares; another vault is not served", async () => {
    await suite.pass();
    const inMarket = await supplyOf(marketId, market);
    const inIdle = await supplyOf(idleId, idle);
    await suite.pass();
    const v = (await get(`/vaults/31337/${vault}`)).data;
    assert.deepEqual(
      [v.protocol, v.name, v.symbol, v.asset.symbol, v.curator, v.governor, v.fee],
      ['morpho', 'Test USDC Vault', 'tvUSDC', 'USDC', users[1], null, 0.1],
    );
    const g = v.governance;
    assert.deepEqual(
      [g.owner, g.guardian, g.feeRecipient, g.timelockSeconds, g.lostAssets, g.idleAssets],
      [users[0], users[3], users[2], DAY, 0, 50_000],
    );
    assert.deepEqual(g.supplyQueue, [marketKey(), idleKey()]);
    assert.deepEqual(g.withdrawQueue, [marketKey(), idleKey()]);
    assert.deepEqual(
      [g.pendingCaps, g.pendingRemovals, g.pendingTimelock, g.pendingGuardian],
      [[], [], null, null],
    );
    // total assets: its shares in both markets at Morpho's totals (the idle one included)
    assert.ok(
      Math.abs(g.totalAssets - (inMarket.assets + inIdle.assets)) < 1e-6 * g.totalAssets,
      String(g.totalAssets),
    );
    assert.ok(Math.abs(inIdle.assets - 50_000) < 1e-6);
    // one allocation: the market a pass reads (the idle one holds no borrower's risk), its
    // supply the vault's part of the market's supply shares, its cap in USDC; its share of the
    // vault's assets is the rest's after the idle 50,000
    assert.equal(v.allocations.length, 1);
    const a = v.allocations[0];
    assert.deepEqual([a.marketId, a.supplyCap, a.collateral, a.loan], [marketKey(), 500_000, 'WETH', 'USDC']);
    assert.ok(Math.abs(v.totalAssetsUsd - (a.supplyUsd + 50_000)) < 0.02, String(v.totalAssetsUsd));
    assert.ok(Math.abs(a.share - a.supplyUsd / v.totalAssetsUsd) < 1e-6, String(a.share));
    const detail = (await get(`/markets/${marketKey()}`)).data;
    const share = Number(inMarket.shares) / Number(inMarket.totalShares);
    assert.ok(
      Math.abs(a.supplyUsd - share * detail.supply) < 0.02,
      `${a.supplyUsd} vs ${share * detail.supply}`,
    );
    assert.ok(Math.abs(a.supplyUsd - inMarket.assets) < 0.05, `${a.supplyUsd} vs ${inMarket.assets}`);
    // the idle part earns nothing: the market's APY on its share, net of the 10 % fee
    assert.ok(Math.abs(v.apy - detail.supplyApy * a.share * 0.9) < 1e-6, `${v.apy} vs ${detail.supplyApy}`);
    // listed and rated like any Morpho vault; the stray one is not served
    const list = (await get('/vaults?protocol=morpho')).data as { address: string }[];
    assert.deepEqual(
      list.map((x) => x.address),
      [vault.toLowerCase()],
    );
    await assert.rejects(get(`/vaults/31337/${stray}`), /404/);
    const rating = (await get(`/ratings/vaults/31337/${vault}`)).data;
    assert.equal(rating.address, vault.toLowerCase());
    // its allocations' shares among themselves (idle assets hold no borrower's risk); its size all of it
    assert.deepEqual(
      rating.allocations.map((x: { share: number }) => x.share),
      [1],
    );
    assert.ok(Math.abs(rating.metrics.totalAssetsUsd - v.totalAssetsUsd) < 0.02);
  });

  test('behavior: what the timelock holds is served with when it may be accepted', async () => {
    await send(0, vault, V(), 'submitCap', [market, 800_000n * USDC]);
    // a market not in its queues yet: only its SubmitCap log names it
    await send(0, vault, V(), 'submitCap', [later, 300_000n * USDC]);
    await send(0, vault, V(), 'submitCap', [idle, 0n]);
    await send(0, vault, V(), 'submitMarketRemoval', [idle]);
    await send(0, vault, V(), 'submitTimelock', [3600n]);
    const submitted = await send(0, vault, V(), 'submitGuardian', [users[4]]);
    const at = Number((await anvil.client().getBlock({ blockNumber: submitted.blockNumber })).timestamp);
    await suite.pass();
    const g = (await get(`/vaults/31337/${vault}`)).data.governance;
    // each submitted in its own block: valid a day after each (at the latest within seconds of `at`)
    const near = (iso: string) => Math.abs(Date.parse(iso) / 1000 - (at + DAY)) <= 10;
    const caps = (g.pendingCaps as { marketId: string; cap: number; acceptable: boolean; validAt: string }[])
      .map((p) => [p.marketId, p.cap, p.acceptable, near(p.validAt)])
      .sort();
    assert.deepEqual(
      caps,
      [
        [marketKey(), 800_000, false, true],
        [laterKey(), 300_000, false, true],
      ].sort(),
    );
    assert.deepEqual([g.pendingRemovals[0].marketId, g.pendingRemovals[0].removable], [idleKey(), false]);
    assert.ok(near(g.pendingRemovals[0].removableAt));
    assert.deepEqual([g.pendingTimelock.seconds, g.pendingTimelock.acceptable], [3600, false]);
    assert.equal(Date.parse(g.pendingGuardian.validAt) / 1000, at + DAY);
    assert.deepEqual([g.pendingGuardian.guardian, g.pendingGuardian.acceptable], [users[4], false]);
    // the cap cut applied at once; the idle market stays in the withdraw queue until removed
    assert.deepEqual(g.withdrawQueue, [marketKey(), idleKey()]);
    // a day later (no pass needed) each may be accepted
    suite.clock.set((at + DAY + 1) * 1000);
    const dayAfter = (await get(`/vaults/31337/${vault}`)).data.governance;
    assert.deepEqual(
      [
        dayAfter.pendingCaps.every((p: { acceptable: boolean }) => p.acceptable),
        dayAfter.pendingRemovals[0].removable,
        dayAfter.pendingTimelock.acceptable,
        dayAfter.pendingGuardian.acceptable,
      ],
      [true, true, true, true],
    );
  });

  test('behavior: a block without a vault transaction reads no vault; its total assets still follow the interest', async () => {
    const before = (await get(`/vaults/31337/${vault}`)).data.governance;
    await anvil.client().request({ method: 'evm_increaseTime' as never, params: [30 * DAY] as never });
    await anvil.client().mine({ blocks: 1 });
    await suite.pass();
    assert.equal(suite.sources[0]!.lastRun()!.vaultsRead, 0);
    const after = (await get(`/vaults/31337/${vault}`)).data.governance;
    assert.equal(after.block, before.block);
    assert.ok(after.totalAssets > before.totalAssets, `${after.totalAssets} vs ${before.totalAssets}`);
    // a deposit is the vault's own log: read again at that pass's block
    await send(0, vault, V(), 'deposit', [1_000n * USDC, users[0]]);
    const block = await suite.pass();
    assert.equal(suite.sources[0]!.lastRun()!.vaultsRead, 1);
    assert.equal((await get(`/vaults/31337/${vault}`)).data.governance.block, Number(block));
  });

  test('behavior: a new process goes on from the checkpoint: the vault is read again, the factory not walked from its start', async () => {
    const before = (await get(`/vaults/31337/${vault}`)).data;
    const head = await anvil.client().getBlockNumber();
    await anvil.client().mine({ blocks: 1 });
    const { sources: fresh, logsFrom } = logSpiedSources(anvil, sourcesJson());
    await suite.pass(fresh);
    assert.ok(logsFrom.length > 0 && logsFrom.every((b) => b > head), logsFrom.join());
    const after = (await get(`/vaults/31337/${vault}`)).data;
    assert.deepEqual(after.governance.withdrawQueue, before.governance.withdrawQueue);
    // the cap submitted for a market outside its queues, from the checkpoint (no log walk back)
    assert.deepEqual(
      after.governance.pendingCaps.map((p: { marketId: string }) => p.marketId).sort(),
      [marketKey(), laterKey()].sort(),
    );
    assert.equal(after.allocations[0].supplyCap, before.allocations[0].supplyCap);
    assert.equal(fresh[0]!.lastRun()!.vaultsRead, 1);
  });

  test('behavior: an accepted cap queues its market, which is no longer pending; a revoked one is no longer watched', async () => {
    await send(0, vault, V(), 'acceptCap', [later]);
    await suite.pass();
    const g = (await get(`/vaults/31337/${vault}`)).data.governance;
    assert.deepEqual(g.withdrawQueue, [marketKey(), idleKey(), laterKey()]);
    assert.deepEqual(
      g.pendingCaps.map((p: { marketId: string }) => p.marketId),
      [marketKey()],
    );
    // Still watched while a reorganization could undo the acceptance (its SubmitCap log is older
    // than the blocks a reorganization reads again), then no longer.
    const caps = async () =>
      JSON.parse((await suite.store.listSources()).find((x) => x.id === 'chain:31337')!.cursor!).vaultCaps;
    assert.ok((await caps())[vault.toLowerCase()].includes(laterId));
    // (64 passes; the checkpoint a pass writes is settled in the next)
    for (let i = 0; i < 65; i++) {
      await anvil.client().mine({ blocks: 1 });
      await suite.pass();
    }
    // (A pass whose blocks log nothing of ours writes the checkpoint of the last that read the
    // state: the next to read it settles the watch.)
    await mineOnceStateAged(anvil);
    await suite.pass();
    assert.deepEqual(await caps(), {});
    assert.deepEqual(
      (await get(`/vaults/31337/${vault}`)).data.governance.pendingCaps.map(
        (p: { marketId: string }) => p.marketId,
      ),
      [marketKey()],
    );
  });

  test('behavior: a vault with no contract (its creation reorganized away) is forgotten, not kept', async () => {
    const ghost = `0x${'9'.repeat(40)}`;
    const cache = new MetaMorphoCache();
    const rpc = createChainRpc(anvil.chainId, anvil.url);
    const head = await anvil.client().getBlockNumber();
    const out = await readMetaMorpho(
      rpc,
      morpho.toLowerCase(),
      [{ address: factory.toLowerCase(), fromBlock: 0 }],
      { fromBlock: head + 1n, block: head, blueFromBlock: 0n },
      { vaults: [ghost, vault.toLowerCase()], submitted: { [ghost]: [marketId] } },
      cache,
      async () => 0n,
    );
    assert.deepEqual(
      out.failures.map((f) => f.address),
      [ghost],
    );
    assert.match(out.failures[0]!.error, /no contract/);
    assert.deepEqual([...cache.vaults.keys()], [vault.toLowerCase()]);
    assert.equal(cache.submitted.has(ghost), false);
  });

  test('behavior: Morpho added to the file later: its vaults are read once its walk has caught up, as one pass reads them', async () => {
    const passes = await walkAddedLater(anvil, {
      sources: sourcesJson,
      without: { morpho: undefined },
      start: 0n,
      walkKey: `morpho:${morpho.toLowerCase()}:0`,
      addresses: [...users, vault.toLowerCase()],
      oneProcess: true,
    });
    assert.ok(passes >= 4, `${passes} passes`);
  });

  test("behavior: past the limit of vaults a chain reads, the factories' further vaults are counted, not read", async () => {
    await send(0, factory, art.TestMetaMorphoFactory!.abi, 'createMetaMorpho', [
      users[0],
      0n,
      usdc,
      'Second',
      'S2',
      `0x${'02'.repeat(32)}`,
    ]);
    const head = await anvil.client().getBlockNumber();
    const cache = new MetaMorphoCache(1);
    await readMetaMorpho(
      createChainRpc(anvil.chainId, anvil.url),
      morpho.toLowerCase(),
      [{ address: factory.toLowerCase(), fromBlock: 0 }],
      { fromBlock: null, block: head, blueFromBlock: 0n },
      { vaults: [], submitted: {} },
      cache,
      async () => 0n,
    );
    // the first made is read; the second counted
    assert.deepEqual([...cache.vaults.keys()], [vault.toLowerCase()]);
    assert.equal(cache.beyondLimit, 1);
    assert.notEqual(cache.vaults.get(vault.toLowerCase()), null);
  });

  test('behavior: a vault is followed for at most 30 markets outside its queues (its curator may submit caps for any market)', () => {
    const cache = new MetaMorphoCache();
    for (let i = 0; i < 40; i++) cache.watch(vault.toLowerCase(), `0x${i.toString(16).padStart(64, '0')}`);
    assert.equal(cache.submitted.get(vault.toLowerCase())!.size, 30);
  });
});
