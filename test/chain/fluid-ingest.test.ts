/**
 * End to end on a local chain: Fluid (a vault factory, T1 vaults, and vault, positions and
 * Liquidity resolvers of our own that answer the deployed resolvers' functions in their layout and
 * emit Fluid's events) with an ETH/USDC vault (the native placeholder as collateral) and a
 * WBTC/USDC vault, positions opened, ingestion passes, and the API answers with the positions
 * resolver's exact amounts and Fluid's liquidation rule as health; interest and prices followed
 * without reading positions; a liquidation, a transfer, a restart and a reorganization followed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Abi } from 'viem';
import { chainSources } from '../../src/ingest/chain/index.ts';
import type { ChainSource } from '../../src/ingest/chain/source.ts';
import { parseSources } from '../../src/ingest/sources-file.ts';
import { openStore } from '../../src/store/open.ts';
import { tempDir } from '../helpers.ts';
import {
  type Anvil,
  type Artifact,
  compileContracts,
  deploy,
  liveChainSuite,
  logSpiedSources,
  mineOnceStateAged,
  passAtHead,
  readAt,
  sendTx,
  startAnvil,
} from './anvil.ts';

const NATIVE = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee';
const ZERO = '0x0000000000000000000000000000000000000000';
const WAD = 10n ** 18n;
const USDC = 10n ** 6n;
/** Debt per collateral in smallest units, 1e27: 1 ETH (1e18) is 3,000 USDC (3,000e6). */
const ethPrice = (usd: bigint) => (usd * USDC * 10n ** 27n) / WAD;
/** 1 WBTC (1e8) is 60,000 USDC. */
const BTC_PRICE = (60_000n * USDC * 10n ** 27n) / 10n ** 8n;

let anvil: Anvil;
let art: Record<string, Artifact>;
let factory: `0x${string}`;
let vaultResolver: `0x${string}`;
let positionsResolver: `0x${string}`;
let ethVault: `0x${string}`;
let btcVault: `0x${string}`;
let smartVault: `0x${string}`;
let ethUsd: `0x${string}`;
let usdcUsd: `0x${string}`;
const users: `0x${string}`[] = [];

const send = (from: number, address: `0x${string}`, abi: Abi, fn: string, args: readonly unknown[] = []) =>
  sendTx(anvil, from, address, abi, fn, args);
const V = () => art.TestFluidVault!.abi;

/** Opens a position of user `i` in `vault`: its NFT id. */
async function open(i: number, vault: `0x${string}`, col: bigint, debt: bigint): Promise<bigint> {
  const receipt = await send(i, vault, V(), 'operate', [0n, col, debt, users[i]]);
  const total = await readAt<bigint>(
    anvil,
    factory,
    art.TestFluidFactory!.abi,
    'totalSupply',
    [],
    receipt.blockNumber,
  );
  return total;
}

/** The positions resolver's answer for `ids` of `vault` at a block. */
async function onChain(vault: `0x${string}`, ids: bigint[], block?: bigint) {
  return readAt<{ nftId: bigint; owner: string; supply: bigint; borrow: bigint }[]>(
    anvil,
    positionsResolver,
    art.TestFluidPositionsResolver!.abi,
    'getVaultPositionsForNftIds',
    [ids, vault],
    block,
  );
}

/** Fluid's rule as a health factor: collateral × liquidation price × threshold / debt. */
async function health(vault: `0x${string}`, id: bigint, block?: bigint): Promise<number> {
  const [p] = await onChain(vault, [id], block);
  const price = await readAt<bigint>(anvil, vault, V(), 'oraclePrice', [], block);
  const lt = BigInt(await readAt<number>(anvil, vault, V(), 'liquidationThreshold', [], block));
  return Number((p!.supply * price * lt * WAD) / (10n ** 27n * 10_000n) / p!.borrow) / 1e18;
}

let nftA: bigint;
let nftB: bigint;
let nftC: bigint;

before(async () => {
  art = compileContracts();
  anvil = await startAnvil();
  for (const i of [0, 1, 2, 3, 4, 5, 6])
    users.push(anvil.client(i).account.address.toLowerCase() as `0x${string}`);
  const c = anvil.client(0);
  const usdc = await deploy(c, art.TestToken!, ['USD Coin', 'USDC', 6]);
  const wbtc = await deploy(c, art.TestToken!, ['Wrapped BTC', 'WBTC', 8]);
  ethUsd = await deploy(c, art.TestAggregator!, [8, 'ETH / USD', 3000n * 10n ** 8n]);
  usdcUsd = await deploy(c, art.TestAggregator!, [8, 'USDC / USD', 10n ** 8n]);
  factory = await deploy(c, art.TestFluidFactory!, []);
  const liquidity = await deploy(c, art.TestFluidLiquidityResolver!, []);
  vaultResolver = await deploy(c, art.TestFluidVaultResolver!, [liquidity]);
  positionsResolver = await deploy(c, art.TestFluidPositionsResolver!, [factory]);
  // Vault 1: ETH (the native placeholder) / USDC; vault 2: WBTC / USDC; vault 3 has a DEX as collateral.
  ethVault = await deploy(c, art.TestFluidVault!, [factory, NATIVE, usdc, 1n, 10_000n, users[6]]);
  btcVault = await deploy(c, art.TestFluidVault!, [factory, wbtc, usdc, 2n, 10_000n, users[6]]);
  smartVault = await deploy(c, art.TestFluidVault!, [factory, wbtc, usdc, 3n, 20_000n, users[6]]);
  for (const v of [ethVault, btcVault, smartVault])
    await send(0, vaultResolver, art.TestFluidVaultResolver!.abi, 'addVault', [v]);
  await send(0, ethVault, V(), 'setPrice', [ethPrice(3000n)]);
  await send(0, btcVault, V(), 'setPrice', [BTC_PRICE]);
  await send(0, btcVault, V(), 'setConfig', [7500, 8000, 8800, 200]);
  // 5.5 % for the vault's borrowers; Liquidity's USDC lenders earn 4 %; 500,000 USDC still borrowable.
  for (const v of [ethVault, btcVault]) await send(0, v, V(), 'setRates', [300n, 550n, 500_000n * USDC]);
  await send(0, liquidity, art.TestFluidLiquidityResolver!.abi, 'setRates', [usdc, 500n, 400n]);
  // User 1: two positions in the ETH vault; user 2: one in the WBTC vault.
  nftA = await open(1, ethVault, 10n * WAD, 20_000n * USDC);
  nftB = await open(1, ethVault, WAD, 2_500n * USDC);
  nftC = await open(2, btcVault, 50_000_000n, 20_000n * USDC);
  // User 2 holds a position in the DEX vault too (not read: T2–T4).
  await send(0, smartVault, V(), 'setPrice', [BTC_PRICE]);
  await open(2, smartVault, 10_000_000n, 1_000n * USDC);
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
        fluid: { vaultResolver, positionsResolver },
        // No BTC/USD here: WBTC is priced by the vault's oracle.
        chainlink: [
          { address: ethUsd, pair: 'ETH/USD', heartbeatSeconds: 3600 },
          { address: usdcUsd, pair: 'USDC/USD', heartbeatSeconds: 86400 },
        ],
      },
    ],
  };
}

describe('Fluid on a local chain', () => {
  // The DEX vault is named in every pass.
  const suite = liveChainSuite(() => anvil, 'lrds-fluid-', sourcesJson, ['fluid:smart-vaults']);
  const { clock, get } = suite;
  const pass = (over?: ChainSource[]) => suite.pass(over);
  const keyOf = (vault: string) => `fluid-31337-${vault.toLowerCase()}`;
  type Position = {
    market: { uniqueKey: string };
    healthFactor: number;
    state: { collateralUsd: number; borrowAssetsUsd: number };
  };
  const positionsOf = async (user: string) => (await get(`/positions?address=${user}`)).data as Position[];

  test("default: one market per T1 vault with the resolvers' exact amounts and Fluid's rule as health", async () => {
    const block = await pass();
    const market = (await get(`/markets/${keyOf(ethVault)}`)).data;
    assert.deepEqual(
      [market.protocol, market.vaultAddress, market.lltv, market.loan, market.collateral],
      ['fluid', ethVault.toLowerCase(), 0.85, 'USDC', 'ETH'],
    );
    assert.equal(market.collateralAddress, NATIVE);
    // the vault's debt, and its debt plus what it may still borrow as supply; rates compounded
    assert.ok(Math.abs(market.borrow - 22_500) < 0.01, String(market.borrow));
    assert.ok(Math.abs(market.supply - 522_500) < 0.01, String(market.supply));
    // (rates are served to 8 decimals)
    assert.ok(Math.abs(market.borrowApy - Math.expm1(0.055)) < 1e-8, String(market.borrowApy));
    assert.ok(Math.abs(market.supplyApy - Math.expm1(0.04)) < 1e-8, String(market.supplyApy));
    // user 1's two positions are one: amounts summed, health the lowest (1 ETH for 2,500 USDC)
    const [mine, ...more] = await positionsOf(users[1]!);
    assert.equal(more.length, 0);
    const [a, b] = await onChain(ethVault, [nftA, nftB], block);
    assert.ok(Math.abs(mine!.state.collateralUsd - (Number(a!.supply + b!.supply) / 1e18) * 3000) < 0.01);
    assert.ok(Math.abs(mine!.state.borrowAssetsUsd - Number(a!.borrow + b!.borrow) / 1e6) < 0.01);
    const hB = await health(ethVault, nftB, block);
    assert.ok(Math.abs(hB - 1.02) < 1e-12, String(hB));
    assert.ok(Math.abs(mine!.healthFactor / hB - 1) < 5e-8, `${mine!.healthFactor} vs ${hB}`);
    // WBTC has no feed in the file: priced by the vault's oracle (60,000 USDC at $1)
    const [p2] = await positionsOf(users[2]!);
    assert.ok(Math.abs(p2!.state.collateralUsd - 30_000) < 0.01, String(p2!.state.collateralUsd));
    assert.ok(Math.abs(p2!.healthFactor / (await health(btcVault, nftC, block)) - 1) < 5e-8);
    assert.equal((await get(`/markets/${keyOf(btcVault)}`)).data.lltv, 0.8);
    // where each token's price comes from: the file's feeds, else the vault's oracle
    const tokens = (await get('/tokens?chainIds=31337')).data as {
      symbol: string;
      priceSource: { kind: string; address: string } | null;
    }[];
    const source = (symbol: string) => tokens.find((t) => t.symbol === symbol)!.priceSource;
    assert.deepEqual(
      [source('USDC'), source('ETH')].map((s) => [s!.kind, s!.address]),
      [
        ['feed', usdcUsd.toLowerCase()],
        ['feed', ethUsd.toLowerCase()],
      ],
    );
    assert.equal(source('WBTC')!.kind, 'oracle');
  });

  test('behavior: a quiet pass reads no position; interest and the oracle price are followed without reading one', async () => {
    const run = () => {
      const r = suite.sources[0]!.lastRun()!;
      return [r.positionsRead, r.rpcRequests, r.stateRead];
    };
    await mineOnceStateAged(anvil);
    await pass();
    // a block whose state is read costs the head, the chain's one getLogs, Fluid's one multicall
    // and the feeds' one
    assert.deepEqual(run(), [0, 4, true]);
    // one with nothing of ours, the state read last young: the head and the getLogs
    await anvil.client().request({ method: 'evm_mine' as never, params: [] as never });
    await pass();
    assert.deepEqual(run(), [0, 2, false]);
    // 10 % of interest on the debt, and ETH falls to 2,400: position B is liquidatable. (Neither
    // logs anything of ours: read once the state read last is old enough.)
    await send(0, ethVault, V(), 'setExchangePrices', [10n ** 12n, 11n * 10n ** 11n]);
    await send(0, ethVault, V(), 'setPrice', [ethPrice(2400n)]);
    await mineOnceStateAged(anvil);
    const block = await pass();
    assert.equal(suite.sources[0]!.lastRun()!.positionsRead, 0);
    const hB = await health(ethVault, nftB, block);
    assert.ok(hB < 1);
    const [mine] = await positionsOf(users[1]!);
    assert.ok(Math.abs(mine!.healthFactor / hB - 1) < 5e-8, `${mine!.healthFactor} vs ${hB}`);
    const [a, b] = await onChain(ethVault, [nftA, nftB], block);
    assert.ok(Math.abs(mine!.state.borrowAssetsUsd - Number(a!.borrow + b!.borrow) / 1e6) < 0.01);
    const atRisk = (await get('/risk/positions-at-risk?chainIds=31337&healthFactorThreshold=1')).data;
    assert.deepEqual(
      atRisk.map((x: { user: { address: string } }) => x.user.address),
      [users[1]],
    );
  });

  test('behavior: a liquidation is recorded and re-reads the vault; a transfer moves the position to its new owner', async () => {
    // Fluid names no borrower: the liquidator repays 1,000 USDC for 0.5 ETH.
    const receipt = await send(3, ethVault, V(), 'liquidate', [nftB, WAD / 2n, 1_000n * USDC, users[3]]);
    const block = await pass();
    // every position of the vault read again (Fluid liquidates by tick)
    assert.equal(suite.sources[0]!.lastRun()!.positionsRead, 2);
    const list = (await get('/liquidations?chainIds=31337')).data;
    assert.equal(list.length, 1);
    const l = list[0];
    assert.deepEqual(
      [
        l.protocol,
        l.marketId,
        l.txHash,
        l.block,
        l.borrower,
        l.liquidator,
        l.debtRepaid,
        l.collateralSeized,
        l.badDebt,
      ],
      [
        'fluid',
        keyOf(ethVault),
        receipt.transactionHash,
        Number(receipt.blockNumber),
        ZERO,
        users[3],
        1000,
        0.5,
        0,
      ],
    );
    // at the liquidation block's prices: ETH's feed still says 3,000 (the vault's oracle moved)
    assert.ok(Math.abs(l.collateralSeizedUsd - 1500) < 0.01, String(l.collateralSeizedUsd));
    const [mine] = await positionsOf(users[1]!);
    assert.ok(Math.abs(mine!.healthFactor / (await health(ethVault, nftB, block)) - 1) < 5e-8);

    await send(1, factory, art.TestFluidFactory!.abi, 'transferFrom', [users[1], users[4], nftB]);
    const after = await pass();
    assert.equal(suite.sources[0]!.lastRun()!.positionsRead, 1);
    const [moved] = await positionsOf(users[4]!);
    const [b] = await onChain(ethVault, [nftB], after);
    assert.ok(Math.abs(moved!.state.borrowAssetsUsd - Number(b!.borrow) / 1e6) < 0.01);
    const [left] = await positionsOf(users[1]!);
    assert.ok(Math.abs(left!.healthFactor / (await health(ethVault, nftA, after)) - 1) < 5e-8);
  });

  test('behavior: a restarted process reads the positions it held again; a reorganization undoes an operation', async () => {
    // The checkpoint names no position the store holds (their owners do)...
    const cursor = (await suite.store.listSources()).find((x) => x.id === 'chain:31337')!.cursor!;
    assert.deepEqual(JSON.parse(cursor).fluidHeld, []);
    const restarted = chainSources(parseSources(sourcesJson(), 'test'));
    await pass(restarted);
    // ...so a new process lists its owners' positions through the vault resolver: the three
    // held, read at once (user 2's in the DEX vault not: not read, not kept to read)
    assert.equal(restarted[0]!.lastRun()!.positionsRead, 3);
    const after = (await suite.store.listSources()).find((x) => x.id === 'chain:31337')!.cursor!;
    assert.deepEqual(JSON.parse(after).fluidHeld, []);
    const before = await positionsOf(users[2]!);
    // User 2 borrows 5,000 more, then the block is orphaned.
    const receipt = await send(2, btcVault, V(), 'operate', [nftC, 0n, 5_000n * USDC, users[2]]);
    await pass(restarted);
    assert.ok(Math.abs((await positionsOf(users[2]!))[0]!.state.borrowAssetsUsd - 25_000) < 0.01);
    const head = await anvil.client().getBlockNumber({ cacheTime: 0 });
    await anvil.client().request({
      method: 'anvil_reorg' as never,
      params: [Number(head - receipt.blockNumber) + 1, []] as never,
    });
    await pass(restarted);
    assert.deepEqual(await positionsOf(users[2]!), before);
  });

  test('behavior: a position moved while no process ran is found by its transfer, its new owner served', async () => {
    const F = art.TestFluidFactory!.abi;
    const inEth = async (user: string) =>
      (await positionsOf(user)).filter((p) => p.market.uniqueKey === keyOf(ethVault));
    await pass();
    const before = await inEth(users[4]!);
    assert.equal(before.length, 1);
    // User 4 hands position B to user 5; a new process starts after.
    await send(4, factory, F, 'transferFrom', [users[4], users[5], nftB]);
    const fresh = chainSources(parseSources(sourcesJson(), 'test'));
    await pass(fresh);
    assert.deepEqual(await inEth(users[4]!), []);
    const [moved] = await inEth(users[5]!);
    assert.ok(Math.abs(moved!.state.borrowAssetsUsd / before[0]!.state.borrowAssetsUsd - 1) < 1e-6);
    // (and back, for the tests after)
    await send(5, factory, F, 'transferFrom', [users[5], users[4], nftB]);
    await pass(fresh);
    assert.equal((await inEth(users[4]!)).length, 1);
    assert.deepEqual(await inEth(users[5]!), []);
  });

  test('behavior: a position opened while its vault keeps its last records (its price gone) is named in the checkpoint, and read by a new process', async () => {
    // A process whose file has no USDC feed: both vaults lose their loan's price and keep their
    // last records; user 6 opens a position meanwhile.
    const json = sourcesJson();
    json.chains[0]!.chainlink = json.chains[0]!.chainlink.filter((f) => f.pair !== 'USDC/USD');
    const unpriced = chainSources(parseSources(json, 'test'));
    const id = await open(6, btcVault, 1_000_000n, 100n * USDC);
    const { out } = await passAtHead(anvil, unpriced, suite.store, clock, suite.service);
    assert.equal(out.runs[0]!.ok, true);
    assert.deepEqual(await positionsOf(users[6]!), []);
    const cursor = (await suite.store.listSources()).find((x) => x.id === 'chain:31337')!.cursor!;
    assert.ok(JSON.parse(cursor).fluidHeld.includes(`${btcVault.toLowerCase()}:${id}`));
    // A new process with the whole file: the position is read, and served.
    const priced = chainSources(parseSources(sourcesJson(), 'test'));
    await pass(priced);
    const [p6] = await positionsOf(users[6]!);
    assert.ok(Math.abs(p6!.state.borrowAssetsUsd - 100) < 0.01);
    // (closed, for the tests after)
    await send(6, btcVault, V(), 'operate', [id, -1_000_000n, -100n * USDC, users[6]]);
    await pass(priced);
    assert.deepEqual(await positionsOf(users[6]!), []);
  });

  test('behavior: positions held beyond what the checkpoint keeps name their vaults, which a new process reads from their start', async () => {
    // A process without the USDC feed that keeps one position: user 6 opens two meanwhile.
    const json = sourcesJson();
    json.chains[0]!.chainlink = json.chains[0]!.chainlink.filter((f) => f.pair !== 'USDC/USD');
    const ids = [
      await open(6, btcVault, 1_000_000n, 100n * USDC),
      await open(6, btcVault, 2_000_000n, 200n * USDC),
    ];
    const { out, failed } = await passAtHead(
      anvil,
      chainSources(parseSources(json, 'test'), { maxPending: 1 }),
      suite.store,
      clock,
      suite.service,
    );
    assert.equal(out.runs[0]!.ok, true);
    const held = failed.find((f) => f.id === 'fluid:held');
    assert.match(
      held?.error ?? '',
      /positions held: the checkpoint names 1; a process that does not hold them reads the \d+ vaults of the others from their start/,
    );
    const cursor = JSON.parse((await suite.store.listSources()).find((x) => x.id === 'chain:31337')!.cursor!);
    assert.equal(cursor.fluidHeld.length, 1);
    assert.ok(cursor.fluidTruncated.includes(btcVault.toLowerCase()), JSON.stringify(cursor.fluidTruncated));
    // A new process with the whole file: both positions (one, summed: one owner, one vault),
    // whichever the checkpoint kept.
    const priced = chainSources(parseSources(sourcesJson(), 'test'));
    await pass(priced);
    const [p6, ...more] = await positionsOf(users[6]!);
    assert.equal(more.length, 0);
    assert.ok(Math.abs(p6!.state.borrowAssetsUsd - 300) < 0.01, String(p6?.state.borrowAssetsUsd));
    const after = JSON.parse((await suite.store.listSources()).find((x) => x.id === 'chain:31337')!.cursor!);
    assert.deepEqual(after.fluidTruncated, []);
    // (closed, for the tests after)
    await send(6, btcVault, V(), 'operate', [ids[0], -1_000_000n, -100n * USDC, users[6]]);
    await send(6, btcVault, V(), 'operate', [ids[1], -2_000_000n, -200n * USDC, users[6]]);
    await pass(priced);
    assert.deepEqual(await positionsOf(users[6]!), []);
  });

  test('behavior: a position of orphaned blocks whose id another vault takes is none of its vault; the others are read', async () => {
    // User 0 opens a position in the ETH vault; a pass reads it; its block is orphaned, and the
    // id goes to user 3's new position in the WBTC vault.
    const receipt = await send(0, ethVault, V(), 'operate', [0n, WAD, 100n * USDC, users[0]]);
    const orphan = await readAt<bigint>(anvil, factory, art.TestFluidFactory!.abi, 'totalSupply');
    await pass();
    assert.equal((await positionsOf(users[0]!)).length, 1);
    const head = await anvil.client().getBlockNumber({ cacheTime: 0 });
    await anvil.client().request({
      method: 'anvil_reorg' as never,
      params: [Number(head - receipt.blockNumber) + 1, []] as never,
    });
    assert.equal(await open(3, btcVault, 1_000_000n, 100n * USDC), orphan);
    const { block, out, failed } = await passAtHead(anvil, suite.sources, suite.store, clock, suite.service);
    assert.equal(out.runs[0]!.ok, true);
    // the ETH vault's call refused whole, asked again in halves: the orphan alone is refused
    assert.deepEqual(
      failed.map((f) => f.id),
      ['fluid:smart-vaults', `fluid:${ethVault.toLowerCase()}:${orphan}`],
    );
    assert.deepEqual(await positionsOf(users[0]!), []);
    const [mine] = await positionsOf(users[1]!);
    assert.ok(Math.abs(mine!.healthFactor / (await health(ethVault, nftA, block)) - 1) < 5e-8);
    const [p3] = await positionsOf(users[3]!);
    assert.equal(p3!.market.uniqueKey, keyOf(btcVault));
    assert.ok(Math.abs(p3!.state.borrowAssetsUsd - 100) < 0.01);
  });

  test('behavior: positions the resolver refuses for another reason than their vault are read again next pass, their last reads served meanwhile', async () => {
    const before = await positionsOf(users[3]!);
    await send(0, btcVault, V(), 'setPricesRevert', [true]);
    // User 3 (the last position opened, by the test before) borrows 50 more: touched, and refused.
    const id = await readAt<bigint>(anvil, factory, art.TestFluidFactory!.abi, 'totalSupply');
    await send(3, btcVault, V(), 'operate', [id, 0n, 50n * USDC, users[3]]);
    const { out, failed } = await passAtHead(anvil, suite.sources, suite.store, clock, suite.service);
    assert.equal(out.runs[0]!.ok, true);
    assert.deepEqual(failed.map((f) => f.id).sort(), [
      `fluid:${btcVault.toLowerCase()}:${id}`,
      'fluid:smart-vaults',
    ]);
    assert.match(failed.find((f) => f.id !== 'fluid:smart-vaults')!.error, /read again next pass/);
    assert.deepEqual(await positionsOf(users[3]!), before);
    await send(0, btcVault, V(), 'setPricesRevert', [false]);
    // (read again once the state is: the resolver logs nothing)
    await mineOnceStateAged(anvil);
    await pass();
    assert.ok(Math.abs((await positionsOf(users[3]!))[0]!.state.borrowAssetsUsd - 150) < 0.01);
  });

  test('behavior: a vault that cannot be read keeps its last records; positions its logs name meanwhile are read once it can be, by a new process too', async () => {
    const before = await positionsOf(users[2]!);
    await send(0, btcVault, V(), 'setBroken', [true]);
    // User 2 repays 1,000 USDC while the vault cannot be read; user 0 opens a position there.
    await send(2, btcVault, V(), 'operate', [nftC, 0n, -1_000n * USDC, users[2]]);
    const opened = await open(0, btcVault, 2_000_000n, 500n * USDC);
    const broken = `fluid:${btcVault.toLowerCase()}`;
    const run = async (over: typeof suite.sources) => {
      const { out, failed } = await passAtHead(anvil, over, suite.store, clock, suite.service);
      assert.equal(out.runs[0]!.ok, true);
      return failed.map((f) => f.id).sort();
    };
    assert.deepEqual(await run(suite.sources), [broken, 'fluid:smart-vaults']);
    assert.deepEqual(await positionsOf(users[2]!), before);
    assert.equal((await get(`/markets/${keyOf(btcVault)}`)).data.protocol, 'fluid');
    // a new process: the position left to read is in the checkpoint
    const restarted = chainSources(parseSources(sourcesJson(), 'test'));
    assert.deepEqual(await run(restarted), [broken, 'fluid:smart-vaults']);
    assert.deepEqual(await positionsOf(users[2]!), before);
    await send(0, btcVault, V(), 'setBroken', [false]);
    await mineOnceStateAged(anvil);
    assert.deepEqual(await run(restarted), ['fluid:smart-vaults']);
    const [after] = await positionsOf(users[2]!);
    const [onchain] = await onChain(btcVault, [nftC]);
    assert.ok(Math.abs(after!.state.borrowAssetsUsd - Number(onchain!.borrow) / 1e6) < 0.01);
    assert.ok(Math.abs(before[0]!.state.borrowAssetsUsd - after!.state.borrowAssetsUsd - 1_000) < 0.01);
    // never read by either process before: named by a log while its vault could not be read
    const [p0] = await positionsOf(users[0]!);
    assert.ok(Math.abs(p0!.healthFactor / (await health(btcVault, opened)) - 1) < 5e-8);
    suite.sources = restarted;
  });

  test('behavior: a vault kept after a failed read keeps its positions as last served, not as last read', async () => {
    const served = async () =>
      (await positionsOf(users[1]!)).map((p) => [p.state.collateralUsd, p.healthFactor] as const);
    // Handed whole once by this process, then in part: ETH falls 10 % (its feed and the vault's
    // oracle alike), user 1 not read again.
    await pass();
    const eth = await readAt<bigint>(anvil, ethUsd, art.TestAggregator!.abi, 'latestAnswer');
    const oracle = await readAt<bigint>(anvil, ethVault, V(), 'oraclePrice');
    await send(0, ethUsd, art.TestAggregator!.abi, 'updateAnswer', [(eth * 9n) / 10n]);
    await send(0, ethVault, V(), 'setPrice', [(oracle * 9n) / 10n]);
    await pass();
    const before = await served();
    assert.equal(before.length, 1);
    // The vault cannot be read: kept, its positions as served.
    await send(0, ethVault, V(), 'setBroken', [true]);
    // (a pass that reads the state: the vault logged nothing)
    await mineOnceStateAged(anvil);
    const { failed } = await passAtHead(anvil, suite.sources, suite.store, clock, suite.service);
    assert.deepEqual(failed.map((f) => f.id).sort(), [
      `fluid:${ethVault.toLowerCase()}`,
      'fluid:smart-vaults',
    ]);
    const [[collateral, hf]] = (await served()) as [readonly [number, number]];
    assert.ok(Math.abs(collateral / before[0]![0] - 1) < 1e-9, `${collateral} vs ${before[0]![0]}`);
    assert.ok(Math.abs(hf / before[0]![1] - 1) < 1e-9, `health ${hf} vs ${before[0]![1]}`);
    await send(0, ethVault, V(), 'setBroken', [false]);
    await send(0, ethUsd, art.TestAggregator!.abi, 'updateAnswer', [eth]);
    await send(0, ethVault, V(), 'setPrice', [oracle]);
    await pass();
  });

  test('behavior: a vault listed later is read from its start; one whose loan token has no USD price is named and served with what is known (docs/decisions.md "Real sources")', async () => {
    const c = anvil.client(0);
    const beforeDeploy = await anvil.client().getBlockNumber({ cacheTime: 0 });
    const dai = await deploy(c, art.TestToken!, ['Dai Stablecoin', 'DAI', 18]);
    const wbtc = await readAt<`0x${string}`>(anvil, btcVault, V(), 'supplyToken');
    const usdc = await readAt<`0x${string}`>(anvil, btcVault, V(), 'borrowToken');
    const late = await deploy(c, art.TestFluidVault!, [factory, wbtc, usdc, 4n, 10_000n, users[6]]);
    const daiVault = await deploy(c, art.TestFluidVault!, [factory, NATIVE, dai, 5n, 10_000n, users[6]]);
    await send(0, late, V(), 'setPrice', [BTC_PRICE]);
    // User 5's position opens before the vault is listed.
    const id = await open(5, late, 10_000_000n, 3_000n * USDC);
    for (const v of [late, daiVault])
      await send(0, vaultResolver, art.TestFluidVaultResolver!.abi, 'addVault', [v]);
    // (The resolver's list is read with the state: read once it is old enough.) A vault found
    // later has its logs read from its deployment, not from the factory's.
    await mineOnceStateAged(anvil);
    const spied = logSpiedSources(anvil, sourcesJson());
    const { logsFrom } = spied;
    suite.sources = spied.sources;
    const { block, out, failed } = await passAtHead(anvil, suite.sources, suite.store, clock, suite.service);
    assert.ok(logsFrom.length > 0 && logsFrom.every((b) => b > beforeDeploy), logsFrom.join());
    assert.equal(out.runs[0]!.ok, true);
    assert.deepEqual(
      failed.map((f) => f.id),
      ['fluid:smart-vaults'],
    );
    const noted = out.runs[0]!.items.find((i) => i.id === `fluid:${daiVault.toLowerCase()}`);
    assert.ok(noted?.ok);
    assert.match(noted.note ?? '', /no USD price for DAI .*served with its USD figures null and no position/);
    const m = (await get(`/markets/${keyOf(daiVault)}`)).data;
    assert.deepEqual([m.loanPrice, m.supply, m.borrow, m.borrowAssets], [null, null, null, 0]);
    assert.ok(m.collateralPrice > 0, 'ETH by ETH/USD');
    // a liquidation there is recorded: the DAI it repaid of no USD value, the ETH it took at ETH's
    const daiId = await open(6, daiVault, WAD, 1_000n * WAD);
    const liquidated = await send(6, daiVault, V(), 'liquidate', [daiId, WAD / 2n, 400n * WAD, users[6]]);
    assert.equal(
      (await passAtHead(anvil, suite.sources, suite.store, clock, suite.service)).out.runs[0]!.ok,
      true,
    );
    const [l] = (await get(`/liquidations?marketId=${keyOf(daiVault)}`)).data;
    assert.deepEqual(
      [l.txHash, l.collateralSeized, l.debtRepaid, l.debtRepaidUsd, l.badDebtUsd],
      [liquidated.transactionHash, 0.5, 400, null, 0],
    );
    assert.ok(
      Math.abs(l.collateralSeizedUsd - 0.5 * m.collateralPrice) < 0.01,
      String(l.collateralSeizedUsd),
    );
    // the vault cannot be read: it keeps its last records (served without a price), and a
    // liquidation meanwhile is recorded in it
    await send(0, daiVault, V(), 'setBroken', [true]);
    const meanwhile = await send(6, daiVault, V(), 'liquidate', [daiId, WAD / 4n, 100n * WAD, users[6]]);
    const brokenPass = await passAtHead(anvil, suite.sources, suite.store, clock, suite.service);
    assert.ok(brokenPass.failed.some((f) => f.id === `fluid:${daiVault.toLowerCase()}`));
    assert.equal((await get(`/markets/${keyOf(daiVault)}`)).data.loanPrice, null);
    const both = (await get(`/liquidations?marketId=${keyOf(daiVault)}`)).data;
    // (the two may share their second: in either order)
    assert.deepEqual(
      both
        .map((x: { txHash: string; debtRepaid: number; debtRepaidUsd: number | null }) => [
          x.txHash,
          x.debtRepaid,
          x.debtRepaidUsd,
        ])
        .sort((a: [string, number], b: [string, number]) => a[1] - b[1]),
      [
        [meanwhile.transactionHash, 100, null],
        [liquidated.transactionHash, 400, null],
      ],
    );
    await send(0, daiVault, V(), 'setBroken', [false]);
    const [p] = await positionsOf(users[5]!);
    assert.equal(p!.market.uniqueKey, keyOf(late));
    assert.ok(Math.abs(p!.healthFactor / (await health(late, id, block)) - 1) < 5e-8);
    assert.ok(Math.abs(p!.state.borrowAssetsUsd - 3_000) < 0.01);
  });

  test('behavior: a vault handed whole is then handed in part: the owners read (one left with none at zero), the others following its exchange prices; its positions still sum to its debt', async () => {
    const run = () => suite.sources[0]!.lastRun()!;
    const inBtc = async (user: string) =>
      (await positionsOf(user)).filter((p) => p.market.uniqueKey === keyOf(btcVault));
    // (Every vault handed whole by this process once more: the next passes hand in part.)
    await mineOnceStateAged(anvil);
    await pass();
    // A block with nothing of ours: no state read, and the next pass still hands in part.
    await anvil.client().mine({ blocks: 1 });
    await pass();
    assert.equal(run().stateRead, false);
    // User 2 borrows 500 more in the WBTC vault: that owner alone is handed.
    await send(2, btcVault, V(), 'operate', [nftC, 0n, 500n * USDC, users[2]]);
    await pass();
    assert.deepEqual([run().positionsRead, run().positions], [1, 1]);
    // 2 % of interest on the vault's debt, 1 % on its collateral: no position read or handed,
    // every owner's figures and health follow.
    await send(0, btcVault, V(), 'setExchangePrices', [101n * 10n ** 10n, 102n * 10n ** 10n]);
    await mineOnceStateAged(anvil);
    let block = await pass();
    assert.deepEqual([run().positionsRead, run().positions], [0, 0]);
    const [mine] = await inBtc(users[2]!);
    assert.ok(Math.abs(mine!.healthFactor / (await health(btcVault, nftC, block)) - 1) < 5e-8);
    const [c] = await onChain(btcVault, [nftC], block);
    assert.ok(Math.abs(mine!.state.borrowAssetsUsd - Number(c!.borrow) / 1e6) < 0.01);
    assert.ok(Math.abs(mine!.state.collateralUsd / (Number(c!.supply) / 1e8) / 60_000 - 1) < 1e-6);
    // User 3 hands its position to user 4: user 3 is handed at zero, user 4 its position.
    const [p3] = await inBtc(users[3]!);
    const F = art.TestFluidFactory!.abi;
    const total = await readAt<bigint>(anvil, factory, F, 'totalSupply');
    let id3 = 0n;
    for (let id = 1n; id <= total && id3 === 0n; id++)
      if (
        (await readAt<string>(anvil, factory, F, 'ownerOf', [id])).toLowerCase() === users[3] &&
        (await readAt<string>(anvil, factory, F, 'vaultOf', [id])).toLowerCase() === btcVault.toLowerCase()
      )
        id3 = id;
    await send(3, factory, F, 'transferFrom', [users[3], users[4], id3]);
    block = await pass();
    assert.equal(run().positions, 2);
    assert.deepEqual(await inBtc(users[3]!), []);
    const [p4] = await inBtc(users[4]!);
    assert.ok(Math.abs(p4!.state.borrowAssetsUsd / p3!.state.borrowAssetsUsd - 1) < 1e-6);
    // The vault's positions, read and not, sum to its debt.
    const market = (await get(`/markets/${keyOf(btcVault)}`)).data;
    let debt = 0;
    for (const u of [users[0]!, users[2]!, users[4]!])
      for (const p of await inBtc(u)) debt += p.state.borrowAssetsUsd;
    assert.ok(Math.abs(debt - market.borrow) < 0.05, `${debt} vs ${market.borrow}`);
  });

  test('error: a vault resolver that is not one is named and nothing is served from it; the pass succeeds', async () => {
    const json = sourcesJson();
    json.chains[0]!.fluid = { vaultResolver: ethUsd, positionsResolver };
    const other = await openStore({ dataDir: tempDir('lrds-fluid-bad-'), databaseUrl: null }, clock);
    try {
      const { out, failed } = await passAtHead(anvil, chainSources(parseSources(json, 'test')), other, clock);
      assert.equal(out.runs[0]!.ok, true);
      assert.deepEqual(
        failed.map((f) => f.id),
        [`fluid:${ethUsd.toLowerCase()}`],
      );
      assert.equal((await other.loadMarkets()).filter((m) => m.protocol === 'fluid').length, 0);
    } finally {
      await other.close();
    }
  });
});
