/**
 * End to end on a local chain: a Compound v3 comet (a mock of our own that answers Comet's
 * functions with Comet's arithmetic and emits its events) with USDC as base and WETH and WBTC as
 * collateral, accounts opened, ingestion passes, and the API answers with the chain's exact
 * debts and Comet's own health (`isLiquidatable`); an absorb lands in the liquidation history
 * with the debt it cleared and any bad debt.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Abi } from 'viem';
import { RECENT_BLOCKS } from '../../src/ingest/chain/checkpoint.ts';
import { debtOf, readCompound } from '../../src/ingest/chain/compound.ts';
import { chainSources } from '../../src/ingest/chain/index.ts';
import { createChainRpc, deploymentBlock } from '../../src/ingest/chain/rpc.ts';
import type { ChainSource } from '../../src/ingest/chain/source.ts';
import { ingestLive } from '../../src/ingest/live.ts';
import { parseSources } from '../../src/ingest/sources-file.ts';
import { openStore } from '../../src/store/open.ts';
import type { Store } from '../../src/store/types.ts';
import { ManualClock } from '../clock.ts';
import { apiGet, liveService, tempDir } from '../helpers.ts';
import {
  type Anvil,
  type Artifact,
  assertNear,
  compileContracts,
  deploy,
  liveChainSuite,
  mineOnceStateAged,
  passAtHead,
  readAt,
  sendTx,
  startAnvil,
  walkAddedLater,
} from './anvil.ts';

const WAD = 10n ** 18n;
const YEAR = 31_536_000n;
/** Yearly rates (1e18) as Comet's per-second ones. */
const perSecond = (yearly: number) => BigInt(Math.round(yearly * 1e18)) / YEAR;
/** A test comet's interest rate model: kinks at 80 %, these slopes below and above them. */
const RATE_MODEL = [
  (WAD * 8n) / 10n,
  perSecond(0.0325),
  perSecond(0.4),
  0n,
  (WAD * 8n) / 10n,
  perSecond(0.035),
  perSecond(0.25),
  perSecond(0.015),
];

let anvil: Anvil;
let art: Record<string, Artifact>;
let comet: `0x${string}`;
let weth: `0x${string}`;
let wbtc: `0x${string}`;
let usdc: `0x${string}`;
let ethUsd: `0x${string}`;
let btcUsd: `0x${string}`;
let usdcUsd: `0x${string}`;
let cometBlock: bigint;
let link: `0x${string}` | undefined;
let linkUsd: `0x${string}` | undefined;
const users: `0x${string}`[] = [];

const send = (from: number, address: `0x${string}`, abi: Abi, fn: string, args: readonly unknown[] = []) =>
  sendTx(anvil, from, address, abi, fn, args);
/** Lists WETH on a test comet: priced by ETH/USD, Comet's usual factors (82.5 %, 89.5 %, 95 %). */
const addWeth = (to: `0x${string}`) =>
  send(0, to, art.TestComet!.abi, 'addAsset', [
    weth,
    ethUsd,
    18,
    (WAD * 825n) / 1000n,
    (WAD * 895n) / 1000n,
    (WAD * 95n) / 100n,
  ]);
/**
 * A comet with DAI as base (its own DAI/USD feed at $1) and WETH as collateral, 100,000 DAI
 * supplied, and borrowers (account, WETH posted, DAI borrowed) opened.
 */
async function openDaiComet(borrows: readonly (readonly [number, bigint, bigint])[]) {
  const c = anvil.client(0);
  const C = art.TestComet!.abi;
  const T = art.TestToken!.abi;
  const dai = await deploy(c, art.TestToken!, ['Dai Stablecoin', 'DAI', 18]);
  const daiUsd = await deploy(c, art.TestAggregator!, [8, 'DAI / USD', 10n ** 8n]);
  const at = await deploy(c, art.TestComet!, [dai, 18, daiUsd, RATE_MODEL]);
  await addWeth(at);
  await send(0, dai, T, 'mint', [users[0], 100_000n * WAD]);
  await send(0, dai, T, 'approve', [at, 2n ** 256n - 1n]);
  await send(0, at, C, 'supply', [dai, 100_000n * WAD]);
  const borrowers: `0x${string}`[] = [];
  for (const [i, collateral, borrow] of borrows) {
    borrowers.push(anvil.client(i).account.address.toLowerCase() as `0x${string}`);
    await send(i, weth, T, 'mint', [borrowers.at(-1)!, collateral]);
    await send(i, weth, T, 'approve', [at, collateral]);
    await send(i, at, C, 'supply', [weth, collateral]);
    await send(i, at, C, 'withdraw', [dai, borrow]);
  }
  return { comet: at, dai, daiUsd, borrowers };
}
/** A read of the comet or of a feed, at the latest block or at `block`. */
const read = <T>(address: `0x${string}`, fn: string, args: readonly unknown[] = [], block?: bigint) =>
  readAt<T>(
    anvil,
    address,
    address === comet ? art.TestComet!.abi : art.TestAggregator!.abi,
    fn,
    args,
    block,
  );

before(async () => {
  art = compileContracts();
  anvil = await startAnvil();
  for (const i of [0, 1, 2]) users.push(anvil.client(i).account.address.toLowerCase() as `0x${string}`);
  const c = anvil.client(0);
  usdc = await deploy(c, art.TestToken!, ['USD Coin', 'USDC', 6]);
  weth = await deploy(c, art.TestToken!, ['Wrapped Ether', 'WETH', 18]);
  wbtc = await deploy(c, art.TestToken!, ['Wrapped BTC', 'WBTC', 8]);
  ethUsd = await deploy(c, art.TestAggregator!, [8, 'ETH / USD', 3000n * 10n ** 8n]);
  btcUsd = await deploy(c, art.TestAggregator!, [8, 'BTC / USD', 60_000n * 10n ** 8n]);
  usdcUsd = await deploy(c, art.TestAggregator!, [8, 'USDC / USD', 10n ** 8n]);
  comet = await deploy(c, art.TestComet!, [usdc, 6, usdcUsd, RATE_MODEL]);
  cometBlock = await anvil.client().getBlockNumber();
  const C = art.TestComet!.abi;
  const T = art.TestToken!.abi;
  await addWeth(comet);
  await send(0, comet, C, 'addAsset', [
    wbtc,
    btcUsd,
    8,
    (WAD * 70n) / 100n,
    (WAD * 77n) / 100n,
    (WAD * 90n) / 100n,
  ]);
  // A lender supplies 1,000,000 USDC; borrower 1 posts WETH and WBTC, borrower 2 WETH.
  await send(0, usdc, T, 'mint', [users[0], 2_000_000n * 10n ** 6n]);
  await send(0, usdc, T, 'approve', [comet, 2n ** 256n - 1n]);
  await send(0, comet, C, 'supply', [usdc, 1_000_000n * 10n ** 6n]);
  const open = async (i: number, collateral: [`0x${string}`, bigint][], borrow: bigint) => {
    for (const [token, amount] of collateral) {
      await send(i, token, T, 'mint', [users[i], amount]);
      await send(i, token, T, 'approve', [comet, amount]);
      await send(i, comet, C, 'supply', [token, amount]);
    }
    await send(i, comet, C, 'withdraw', [usdc, borrow]);
  };
  await open(
    1,
    [
      [weth, 10n * WAD],
      [wbtc, 50_000_000n],
    ],
    30_000n * 10n ** 6n,
  );
  await open(2, [[weth, WAD]], 2_400n * 10n ** 6n);
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
        compound: [{ comet }],
        // No BTC/USD here: WBTC is priced by the comet's own price of it in USDC.
        chainlink: [
          { address: ethUsd, pair: 'ETH/USD', heartbeatSeconds: 3600 },
          { address: usdcUsd, pair: 'USDC/USD', heartbeatSeconds: 86400 },
        ],
      },
    ],
  };
}

/** Comet's health of an account at a block, from the chain's own reads (collateral at the liquidation factors over debt). */
async function chainHealth(
  user: string,
  block: bigint,
): Promise<{ hf: number; debt: bigint; liquidatable: boolean }> {
  const debt = await read<bigint>(comet, 'borrowBalanceOf', [user], block);
  const basePrice = await read<bigint>(comet, 'getPrice', [usdcUsd], block);
  let weighted = 0n;
  const assets: [`0x${string}`, `0x${string}`, bigint, bigint][] = [
    [weth, ethUsd, WAD, (WAD * 895n) / 1000n],
    [wbtc, btcUsd, 10n ** 8n, (WAD * 77n) / 100n],
  ];
  // LINK, once a test has added it to the comet
  if (link && linkUsd) assets.push([link, linkUsd, WAD, (WAD * 75n) / 100n]);
  for (const [asset, feed, scale, lcf] of assets) {
    const balance = await read<bigint>(comet, 'collateralBalanceOf', [user, asset], block);
    const price = await read<bigint>(comet, 'getPrice', [feed], block);
    weighted += (((balance * price) / scale) * lcf) / WAD;
  }
  const debtValue = (debt * basePrice) / 10n ** 6n;
  const liquidatable = await read<boolean>(comet, 'isLiquidatable', [user], block);
  return { hf: Number((weighted * WAD) / debtValue) / 1e18, debt, liquidatable };
}

describe('Compound v3 on a local chain', () => {
  const suite = liveChainSuite(() => anvil, 'lrds-comet-', sourcesJson);
  const { get } = suite;
  /** One ingestion pass at the head; resolves to the block it read (and the items that failed, when allowed). */
  const passWith = async (allowFailures: boolean) => {
    if (!allowFailures) return { block: await suite.pass(), failed: [] };
    const { block, failed } = await passAtHead(anvil, suite.sources, suite.store, suite.clock, suite.service);
    return { block, failed };
  };
  const pass = () => suite.pass();
  const debtOfUser = async (user: string) =>
    (await get(`/positions?address=${user}`)).data.reduce(
      (s: number, p: { state: { borrowAssetsUsd: number } }) => s + p.state.borrowAssetsUsd,
      0,
    );
  const wethKey = () => `compound-31337-${comet.toLowerCase()}_${weth.toLowerCase()}`;
  const wbtcKey = () => `compound-31337-${comet.toLowerCase()}_${wbtc.toLowerCase()}`;

  test("default: one market per collateral, with the chain's exact debts and Comet's own health", async () => {
    const block = await pass();
    const h1 = await chainHealth(users[1]!, block);
    const mine = (await get(`/positions?address=${users[1]}`)).data as {
      market: { uniqueKey: string };
      healthFactor: number;
      collateralPrice: number;
      state: { collateralUsd: number; borrowAssetsUsd: number };
    }[];
    assert.deepEqual(mine.map((p) => p.market.uniqueKey).sort(), [wethKey(), wbtcKey()].sort());
    // every position of the account carries the account's health, equal to Comet's
    for (const p of mine) assert.ok(Math.abs(p.healthFactor - h1.hf) < 1e-6, `${p.healthFactor} vs ${h1.hf}`);
    assert.equal(h1.liquidatable, false);
    // the debt shared among the collaterals sums to borrowBalanceOf at the block read
    const debt = mine.reduce((s, p) => s + p.state.borrowAssetsUsd, 0);
    assert.ok(Math.abs(debt - Number(h1.debt) / 1e6) < 0.02, `${debt} vs ${h1.debt}`);
    // WETH by its feed; WBTC (no feed in the file) by the comet's price of it in USDC
    const byKey = new Map(mine.map((p) => [p.market.uniqueKey, p]));
    assert.equal(byKey.get(wethKey())!.state.collateralUsd, 30_000);
    assert.equal(byKey.get(wbtcKey())!.collateralPrice, 60_000);
    assert.equal(byKey.get(wbtcKey())!.state.collateralUsd, 30_000);
    // shares by value at the liquidation factor: 30,000 × 0.895 against 30,000 × 0.77
    const wethShare = byKey.get(wethKey())!.state.borrowAssetsUsd / debt;
    assert.ok(Math.abs(wethShare - 0.895 / (0.895 + 0.77)) < 1e-3, String(wethShare));

    const market = (await get(`/markets/${wethKey()}`)).data;
    const totalSupply = Number(await read<bigint>(comet, 'totalSupply', [], block)) / 1e6;
    const totalBorrow = Number(await read<bigint>(comet, 'totalBorrow', [], block)) / 1e6;
    const other = (await get(`/markets/${wbtcKey()}`)).data;
    assert.deepEqual(
      [market.protocol, market.loan, market.collateral, market.lltv, market.oracle.type],
      ['compound', 'USDC', 'WETH', 0.895, 'ChainlinkOracle'],
    );
    assert.deepEqual(
      market.oracle.feeds.map((f: { address: string }) => f.address),
      [ethUsd.toLowerCase(), usdcUsd.toLowerCase()],
    );
    // the comet's markets sum to the comet, each at the comet's utilization
    assert.ok(Math.abs(market.borrow + other.borrow - totalBorrow) < 0.03);
    assert.ok(Math.abs(market.supply + other.supply - totalSupply) < 0.03);
    assert.ok(Math.abs(market.borrow / market.supply - totalBorrow / totalSupply) < 1e-6);
    const u = await read<bigint>(comet, 'getUtilization', [], block);
    const rate = await read<bigint>(comet, 'getBorrowRate', [u], block);
    // Comet's per-second rate, compounded continuously (APYs are served to 8 decimals)
    assert.ok(Math.abs(market.borrowApy - Math.expm1((Number(rate) * 31_536_000) / 1e18)) < 1e-8);
  });

  test("behavior: the reader's debts are borrowBalanceOf to the unit, and a comet's logs start at its deployment", async () => {
    const rpc = createChainRpc(anvil.chainId, anvil.url);
    const head = await anvil.client().getBlock();
    assert.equal(await deploymentBlock(rpc, comet, head.number), cometBlock);
    const out = await readCompound(
      rpc,
      [{ comet: comet.toLowerCase(), from: cometBlock }],
      { block: head.number, timestamp: head.timestamp },
      [],
    );
    assert.deepEqual(out.failures, []);
    const c = out.comets[0]!;
    const held = [...c.accounts].flatMap(([user, account]) => (account ? [{ user, account }] : []));
    assert.deepEqual(held.map((a) => a.user).sort(), [users[1], users[2]].sort());
    for (const { user, account } of held)
      assert.equal(
        debtOf(account.principal, c.borrowIndex),
        await read<bigint>(comet, 'borrowBalanceOf', [user], head.number),
      );
    assert.equal(c.totalBorrow, await read<bigint>(comet, 'totalBorrow', [], head.number));
    assert.equal(c.totalSupply, await read<bigint>(comet, 'totalSupply', [], head.number));
  });

  test('behavior: health follows the price; an absorb is a liquidation of the debt it cleared', async () => {
    const C = art.TestComet!.abi;
    await send(0, ethUsd, art.TestAggregator!.abi, 'updateAnswer', [2_600n * 10n ** 8n]);
    const block = await pass();
    const h2 = await chainHealth(users[2]!, block);
    assert.equal(h2.liquidatable, true);
    const p = (await get(`/positions?address=${users[2]}`)).data[0];
    assert.ok(p.healthFactor < 1 && Math.abs(p.healthFactor - h2.hf) < 1e-6, `${p.healthFactor} vs ${h2.hf}`);
    const atRisk = await get('/risk/positions-at-risk?chainIds=31337');
    assert.deepEqual(
      atRisk.data.map((x: { user: { address: string } }) => x.user.address),
      [users[2]],
    );
    // The lender absorbs borrower 2: 1 WETH at $2,600 × 0.95 = $2,470 covers the ~$2,400 debt;
    // Comet credits the ~$70 surplus to the account as supply (basePaidOut counts it, the debt does not).
    const receipt = await send(0, comet, C, 'absorb', [users[0], [users[2]]]);
    const debtBefore = await read<bigint>(comet, 'borrowBalanceOf', [users[2]], receipt.blockNumber - 1n);
    await pass();
    assert.equal(suite.sources[0]!.lastRun()!.positionsRead, 1);
    const list = (await get('/liquidations?chainIds=31337')).data;
    assert.equal(list.length, 1);
    const l = list[0];
    assert.deepEqual(
      [l.protocol, l.marketId, l.txHash, l.block, l.borrower, l.liquidator, l.collateralSeized],
      ['compound', wethKey(), receipt.transactionHash, Number(receipt.blockNumber), users[2], users[0], 1],
    );
    assert.equal(l.collateralSeizedUsd, 2600);
    // Served to 8 significant digits; the block before may be a second earlier (a unit less interest).
    assert.ok(
      Math.abs(l.debtRepaid / (Number(debtBefore) / 1e6) - 1) < 1e-8,
      `${l.debtRepaid} vs ${debtBefore}`,
    );
    assert.equal(l.badDebt, 0);
    // borrower 2 holds no collateral now: no position
    assert.equal((await get(`/positions?address=${users[2]}`)).data.length, 0);
  });

  test('behavior: a borrow by base transfer (no event names the borrower) is found by the totals', async () => {
    // Borrower 1 sends 1,000 USDC it borrows to the lender: Comet logs only the lender's supply.
    const receipt = await send(1, comet, art.TestComet!.abi, 'transfer', [users[0], 1_000n * 10n ** 6n]);
    assert.ok(receipt.logs.every((l) => !l.topics.slice(1).some((t) => t.endsWith(users[1]!.slice(2)))));
    const block = await pass();
    const onChain = Number(await read<bigint>(comet, 'borrowBalanceOf', [users[1]], block)) / 1e6;
    // 30,000 borrowed before and these 1,000, with the interest since (none when the blocks share a
    // second; Comet rounds a principal down by at most a unit).
    assert.ok(onChain > 30_999.99, `${onChain}`);
    assert.ok(
      Math.abs((await debtOfUser(users[1]!)) - onChain) < 0.02,
      `${await debtOfUser(users[1]!)} vs ${onChain}`,
    );
  });

  test('behavior: a collateral added to the comet is read (its market appears, health counts it)', async () => {
    const T = art.TestToken!.abi;
    link = await deploy(anvil.client(0), art.TestToken!, ['ChainLink Token', 'LINK', 18]);
    linkUsd = await deploy(anvil.client(0), art.TestAggregator!, [8, 'LINK / USD', 20n * 10n ** 8n]);
    await send(0, comet, art.TestComet!.abi, 'addAsset', [
      link,
      linkUsd,
      18,
      (WAD * 7n) / 10n,
      (WAD * 75n) / 100n,
      (WAD * 9n) / 10n,
    ]);
    await send(1, link, T, 'mint', [users[1], 500n * WAD]);
    await send(1, link, T, 'approve', [comet, 500n * WAD]);
    await send(1, comet, art.TestComet!.abi, 'supply', [link, 500n * WAD]);
    const block = await pass();
    const linkKey = `compound-31337-${comet.toLowerCase()}_${link!.toLowerCase()}`;
    const mine = (await get(`/positions?address=${users[1]}`)).data;
    assert.deepEqual(
      mine.map((p: { market: { uniqueKey: string } }) => p.market.uniqueKey).sort(),
      [wethKey(), wbtcKey(), linkKey].sort(),
    );
    const h1 = await chainHealth(users[1]!, block);
    for (const p of mine) assert.ok(Math.abs(p.healthFactor - h1.hf) < 1e-6, `${p.healthFactor} vs ${h1.hf}`);
    assert.equal((await get(`/markets/${linkKey}`)).data.collateralPrice, 20);
  });

  test('behavior: a restarted process reads its accounts again from the stored positions', async () => {
    const before = (await get(`/positions?address=${users[1]}`)).data.map(
      (p: { market: { uniqueKey: string }; healthFactor: number }) => [p.market.uniqueKey, p.healthFactor],
    );
    suite.sources = chainSources(parseSources(sourcesJson(), 'test'));
    await pass();
    assert.equal(suite.sources[0]!.lastRun()!.positionsRead, 1, 'borrower 1 (its three positions)');
    const after = (await get(`/positions?address=${users[1]}`)).data.map(
      (p: { market: { uniqueKey: string }; healthFactor: number }) => [p.market.uniqueKey, p.healthFactor],
    );
    assert.equal(after.length, before.length);
    for (const [key, hf] of after) {
      const was = before.find((b: [string, number]) => b[0] === key);
      assert.ok(was && Math.abs(was[1] - hf) < 1e-6);
    }
  });

  test('behavior: a comet handed whole is then handed in part: the accounts a block names, its markets still summing to its debt', async () => {
    const C = art.TestComet!.abi;
    const T = art.TestToken!.abi;
    const handed = () => suite.sources[0]!.lastRun()!.positions;
    const borrowSum = async () =>
      (await get('/markets?chainIds=31337&limit=100')).data.reduce(
        (s: number, m: { protocol: string; borrow: number }) =>
          s + (m.protocol === 'compound' ? m.borrow : 0),
        0,
      );
    // Borrower 2 opens again: its one market alone (borrower 1's three stay as stored).
    await send(2, weth, T, 'mint', [users[2], WAD]);
    await send(2, weth, T, 'approve', [comet, WAD]);
    await send(2, comet, C, 'supply', [weth, WAD]);
    await send(2, comet, C, 'withdraw', [usdc, 1_200n * 10n ** 6n]);
    const block = await pass();
    assert.equal(handed(), 1);
    const h2 = await chainHealth(users[2]!, block);
    const [p2] = (await get(`/positions?address=${users[2]}`)).data;
    assert.ok(Math.abs(p2.healthFactor - h2.hf) < 1e-6, `${p2.healthFactor} vs ${h2.hf}`);
    const debt = Number(await read<bigint>(comet, 'totalBorrow', [], block)) / 1e6;
    assert.ok(Math.abs((await borrowSum()) - debt) < 0.01, `${await borrowSum()} vs ${debt}`);
    // Borrower 1 posts more WBTC: its three markets, its debt shared again among them.
    await send(1, wbtc, T, 'mint', [users[1], 10_000_000n]);
    await send(1, wbtc, T, 'approve', [comet, 10_000_000n]);
    await send(1, comet, C, 'supply', [wbtc, 10_000_000n]);
    const more = await pass();
    assert.equal(handed(), 3);
    const h1 = await chainHealth(users[1]!, more);
    for (const p of (await get(`/positions?address=${users[1]}`)).data)
      assert.ok(Math.abs(p.healthFactor - h1.hf) < 1e-6, `${p.healthFactor} vs ${h1.hf}`);
    await send(1, comet, C, 'withdraw', [wbtc, 10_000_000n]);
    // Borrower 2 repays all (and lends the rest) and takes its WETH back: its market handed at
    // zero, and it holds nothing.
    await send(2, usdc, T, 'mint', [users[2], 2_000n * 10n ** 6n]);
    await send(2, usdc, T, 'approve', [comet, 2_000n * 10n ** 6n]);
    await send(2, comet, C, 'supply', [usdc, 1_300n * 10n ** 6n]);
    await send(2, comet, C, 'withdraw', [weth, WAD]);
    const repaid = await pass();
    // (Borrower 1's three, its WBTC taken back, and borrower 2's market at zero.)
    assert.equal(handed(), 4);
    assert.equal((await get(`/positions?address=${users[2]}`)).data.length, 0);
    const left = Number(await read<bigint>(comet, 'totalBorrow', [], repaid)) / 1e6;
    assert.ok(Math.abs((await borrowSum()) - left) < 0.01, `${await borrowSum()} vs ${left}`);
  });

  test('behavior: a comet that cannot be read keeps its last records, named in the pass', async () => {
    const markets = (await get('/markets?chainIds=31337')).data.map(
      (m: { uniqueKey: string; supply: number }) => [m.uniqueKey, m.supply],
    );
    // The base feed answers 0: Comet's getPrice refuses it.
    await send(0, usdcUsd, art.TestAggregator!.abi, 'updateAnswer', [0n]);
    const { failed } = await passWith(true);
    assert.ok(
      failed.some((f) => f.id === `compound:${comet.toLowerCase()}`),
      JSON.stringify(failed),
    );
    assert.deepEqual(
      (await get('/markets?chainIds=31337')).data.map((m: { uniqueKey: string; supply: number }) => [
        m.uniqueKey,
        m.supply,
      ]),
      markets,
    );
    assert.ok((await get(`/positions?address=${users[1]}`)).data.length > 0);
    await send(0, usdcUsd, art.TestAggregator!.abi, 'updateAnswer', [10n ** 8n]);
    await pass();
    // USDC/USD leaves the file: the comet served priced is not served without its base price, it
    // keeps its last records (docs/decisions.md "Real sources"), named
    const json = sourcesJson();
    json.chains[0]!.chainlink = json.chains[0]!.chainlink.filter((f) => f.pair !== 'USDC/USD');
    suite.clock.set(Number((await anvil.client().getBlock()).timestamp) * 1000 + 1000);
    const lost = await ingestLive(chainSources(parseSources(json, 'test')), suite.store, suite.clock);
    assert.match(
      JSON.stringify(lost.runs[0]!.items.find((i) => i.id === `compound:${comet.toLowerCase()}`)),
      /"ok":false.*no USD price for its base token USDC/,
    );
    await suite.service.models.reloadIfChanged();
    const kept = (await get(`/markets/${wethKey()}`)).data;
    assert.equal(kept.loanPrice, 1);
    assert.ok((await get(`/positions?address=${users[1]}`)).data.length > 0);
    await pass();
  });

  test('behavior: a comet kept after a failed read keeps its positions as last served, not as last read', async () => {
    type Served = { market: { uniqueKey: string }; healthFactor: number; state: { collateralUsd: number } };
    const served = async () =>
      ((await get(`/positions?address=${users[1]}`)).data as Served[])
        .map((p) => [p.market.uniqueKey, p.state.collateralUsd, p.healthFactor] as const)
        .sort();
    // Handed whole once by this process, then in part: ETH falls 10 %, borrower 1 not read again.
    await pass();
    const eth = await read<bigint>(ethUsd, 'latestAnswer');
    await send(0, ethUsd, art.TestAggregator!.abi, 'updateAnswer', [(eth * 9n) / 10n]);
    await pass();
    const before = await served();
    const wethKeyNow = wethKey();
    assert.ok(before.some(([key]) => key === wethKeyNow));
    // The comet cannot be read (its base feed answers 0): kept, its positions as served.
    await send(0, usdcUsd, art.TestAggregator!.abi, 'updateAnswer', [0n]);
    const { failed } = await passWith(true);
    assert.ok(
      failed.some((f) => f.id === `compound:${comet.toLowerCase()}`),
      JSON.stringify(failed),
    );
    const kept = await served();
    assert.equal(kept.length, before.length);
    for (const [i, [key, collateral, hf]] of kept.entries()) {
      assert.equal(key, before[i]![0]);
      assert.ok(Math.abs(collateral / before[i]![1] - 1) < 1e-9, `${key}: ${collateral} vs ${before[i]![1]}`);
      assert.ok(Math.abs(hf / before[i]![2] - 1) < 1e-9, `${key}: health ${hf} vs ${before[i]![2]}`);
    }
    await send(0, usdcUsd, art.TestAggregator!.abi, 'updateAnswer', [10n ** 8n]);
    await send(0, ethUsd, art.TestAggregator!.abi, 'updateAnswer', [eth]);
    await pass();
  });

  test('behavior: a quiet pass reads no account, and debts accrue as Comet accrues them', async () => {
    await anvil.client().request({ method: 'evm_increaseTime' as never, params: [30 * 86_400] as never });
    await anvil.client().request({ method: 'evm_mine' as never, params: [] as never });
    const block = await pass();
    assert.equal(suite.sources[0]!.lastRun()!.positionsRead, 0);
    const h1 = await chainHealth(users[1]!, block);
    const debt = (await get(`/positions?address=${users[1]}`)).data.reduce(
      (s: number, p: { state: { borrowAssetsUsd: number } }) => s + p.state.borrowAssetsUsd,
      0,
    );
    assert.ok(debt > 31_030, 'a month of interest');
    assert.ok(Math.abs(debt - Number(h1.debt) / 1e6) < 0.02, `${debt} vs ${h1.debt}`);
  });

  test('behavior: an absorb the collateral does not cover records what it covers as repaid and the rest as bad debt, shared among the collaterals', async () => {
    // ETH at $1,000, BTC at $20,000, LINK at $2: 10 WETH + 0.5 WBTC + 500 LINK are worth $21,000,
    // $9,500 + $9,000 + $900 = $19,400 at their liquidation factors, against a debt of ~$31,000.
    await send(0, ethUsd, art.TestAggregator!.abi, 'updateAnswer', [1_000n * 10n ** 8n]);
    await send(0, btcUsd, art.TestAggregator!.abi, 'updateAnswer', [20_000n * 10n ** 8n]);
    await send(0, linkUsd!, art.TestAggregator!.abi, 'updateAnswer', [2n * 10n ** 8n]);
    const receipt = await send(0, comet, art.TestComet!.abi, 'absorb', [users[0], [users[1]]]);
    const debtBefore =
      Number(await read<bigint>(comet, 'borrowBalanceOf', [users[1]], receipt.blockNumber - 1n)) / 1e6;
    await pass();
    const mine = (await get('/liquidations?chainIds=31337')).data.filter(
      (l: { borrower: string }) => l.borrower === users[1],
    );
    assert.equal(mine.length, 3);
    const sum = (f: string) => mine.reduce((s: number, l: Record<string, number>) => s + l[f]!, 0);
    // The debt absorbed is repaid as far as the collateral at its liquidation factors covers it
    // ($19,400), the rest is bad debt: the two add up to the debt absorbed, never counted twice.
    assert.ok(Math.abs(sum('debtRepaid') - 19_400) < 1e-3, `${sum('debtRepaid')} vs 19,400`);
    assert.ok(
      Math.abs(sum('badDebt') - (debtBefore - 19_400)) < 1e-3,
      `${sum('badDebt')} vs ${debtBefore - 19_400}`,
    );
    assert.ok(
      Math.abs(sum('debtRepaid') + sum('badDebt') - debtBefore) < 1e-3,
      `${sum('debtRepaid')} + ${sum('badDebt')} vs ${debtBefore}`,
    );
    assert.ok(Math.abs(sum('debtRepaidUsd') + sum('badDebtUsd') - debtBefore) < 0.05);
    assert.ok(Math.abs(sum('collateralSeizedUsd') - 21_000) < 1e-6);
    // repaid and bad debt split as the collaterals' values at their liquidation factors
    const shareOf = { [wethKey()]: 9_500 / 19_400, [wbtcKey()]: 9_000 / 19_400 };
    for (const l of mine as { marketId: string; debtRepaid: number; badDebt: number }[]) {
      const share = shareOf[l.marketId] ?? 900 / 19_400;
      assert.ok(Math.abs(l.debtRepaid - 19_400 * share) < 1e-3, `${l.marketId}: ${l.debtRepaid}`);
      assert.ok(
        Math.abs(l.badDebt - (debtBefore - 19_400) * share) < 1e-3,
        `${l.marketId}: bad debt ${l.badDebt}`,
      );
    }
  });

  test('behavior: a reorganization that drops the absorb rolls it back, and the positions with it', async () => {
    const absorbed = (await get('/liquidations?chainIds=31337')).data.filter(
      (l: { borrower: string }) => l.borrower === users[1],
    );
    assert.equal(absorbed.length, 3);
    assert.equal((await get(`/positions?address=${users[1]}`)).data.length, 0);
    const head = await anvil.client().getBlockNumber();
    await anvil.client().request({
      method: 'anvil_reorg' as never,
      params: [Number(head) - absorbed[0].block + 1, []] as never,
    });
    await pass();
    const after = (await get('/liquidations?chainIds=31337')).data;
    assert.deepEqual(
      after.map((l: { borrower: string }) => l.borrower),
      [users[2]],
    );
    const back = (await get(`/positions?address=${users[1]}`)).data;
    assert.equal(back.length, 3);
    assert.ok(back.every((p: { healthFactor: number }) => p.healthFactor < 1));
  });

  test('behavior: borrowers from before fromBlock are named every pass that reads the state, not read again every pass', async () => {
    const T = art.TestToken!.abi;
    const C = art.TestComet!.abi;
    const head = Number(await anvil.client().getBlockNumber());
    // A new borrower after that block: the one account this source knows.
    await send(2, weth, T, 'mint', [users[2], WAD]);
    await send(2, weth, T, 'approve', [comet, WAD]);
    await send(2, comet, C, 'supply', [weth, WAD]);
    await send(2, comet, C, 'withdraw', [usdc, 100n * 10n ** 6n]);
    const json = sourcesJson();
    Object.assign(json.chains[0]!, { compound: [{ comet, fromBlock: head + 1 }] });
    const late = chainSources(parseSources(json, 'test'));
    const lateStore = await openStore(
      { dataDir: tempDir('lrds-comet-late-'), databaseUrl: null },
      suite.clock,
    );
    try {
      const runs = [];
      for (let i = 0; i < 2; i++) {
        if (i > 0) await mineOnceStateAged(anvil);
        const out = await ingestLive(late, lateStore, suite.clock);
        runs.push({
          read: late[0]!.lastRun()!.positionsRead,
          named: out.runs[0]!.items.some(
            (x) => !x.ok && x.id === `compound:${comet.toLowerCase()}:borrowers`,
          ),
        });
      }
      // first pass: the account, then again with every holder; second pass: nothing to read
      assert.deepEqual(runs, [
        { read: 2, named: true },
        { read: 0, named: true },
      ]);
    } finally {
      await lateStore.close();
    }
  });

  test('behavior: an account read empty is read again after a reorganization undoes it, and forgotten once none can', async () => {
    const T = art.TestToken!.abi;
    const C = art.TestComet!.abi;
    const user = anvil.client(3).account.address.toLowerCase();
    const held = async () => (await get(`/positions?address=${user}`)).data.length;
    await send(3, weth, T, 'mint', [user, WAD]);
    await send(3, weth, T, 'approve', [comet, WAD]);
    await send(3, comet, C, 'supply', [weth, WAD]);
    await pass();
    assert.equal(await held(), 1);
    const kept = suite.sources[0]!.lastRun()!.accountsKept;
    await send(3, comet, C, 'withdraw', [weth, WAD]);
    await pass();
    assert.equal(await held(), 0);
    // still kept: a reorganization may undo the withdrawal
    assert.equal(suite.sources[0]!.lastRun()!.accountsKept, kept);
    await anvil.client().request({ method: 'anvil_reorg' as never, params: [1, []] as never });
    await pass();
    assert.equal(await held(), 1, 'read again after the reorganization orphaned its withdrawal');
    await send(3, comet, C, 'withdraw', [weth, WAD]);
    await pass();
    assert.equal(await held(), 0);
    // Once no reorganization the checkpoint can follow reaches back to that read, the process
    // keeps only the accounts that hold something.
    for (let i = 0; i < RECENT_BLOCKS; i++) {
      await anvil.client().mine({ blocks: 1 });
      await pass();
    }
    let holders = 0;
    for (const i of [0, 1, 2, 3]) {
      const address = anvil.client(i).account.address.toLowerCase();
      if ((await get(`/positions?address=${address}`)).data.length > 0) holders++;
    }
    assert.ok(holders >= 2, 'borrowers 1 and 2 hold collateral');
    assert.equal(suite.sources[0]!.lastRun()!.accountsKept, holders);
    // A forgotten account is read again when a log names it.
    await send(3, weth, T, 'approve', [comet, WAD]);
    await send(3, comet, C, 'supply', [weth, WAD]);
    await pass();
    assert.equal(await held(), 1);
  });

  test("behavior: the comet's rewards (CometRewards' token and rescaling, Comet's tracking speeds) are its markets' reward APRs", async () => {
    const c = anvil.client(0);
    const comp = await deploy(c, art.TestToken!, ['Compound', 'COMP', 18]);
    const compUsd = await deploy(c, art.TestAggregator!, [8, 'COMP / USD', 50n * 10n ** 8n]);
    const rewards = await deploy(c, art.TestCometRewards!, []);
    // COMP has 18 decimals: tracking units (6) upscaled by 1e12. Suppliers: 0.01 COMP a second;
    // borrowers: 0.004 (speeds in trackingIndexScale, 1e15, units).
    await send(0, rewards, art.TestCometRewards!.abi, 'setRewardConfig', [comet, comp, 10n ** 12n, true]);
    await send(0, comet, art.TestComet!.abi, 'setBaseTrackingSpeeds', [10n ** 13n, 4n * 10n ** 12n, 0n]);
    const json = sourcesJson();
    Object.assign(json.chains[0]!, { compound: [{ comet, rewards }] });
    json.chains[0]!.chainlink.push({ address: compUsd, pair: 'COMP/USD', heartbeatSeconds: 3600 });
    const rewarded = chainSources(parseSources(json, 'test'));
    const { block, failed } = await passAtHead(anvil, rewarded, suite.store, suite.clock, suite.service);
    assert.deepEqual(failed, []);
    const supplied = Number(await read<bigint>(comet, 'totalSupply', [], block)) / 1e6;
    const borrowed = Number(await read<bigint>(comet, 'totalBorrow', [], block)) / 1e6;
    const year = 31_536_000;
    for (const key of [wethKey(), wbtcKey()]) {
      const m = (await get(`/markets/${key}`)).data;
      assert.ok(
        Math.abs(m.supplyRewardsApy - (0.01 * year * 50) / supplied) < 1e-8,
        String(m.supplyRewardsApy),
      );
      assert.ok(
        Math.abs(m.borrowRewardsApy - (0.004 * year * 50) / borrowed) < 1e-8,
        String(m.borrowRewardsApy),
      );
      assert.deepEqual(m.rewardTokens, ['COMP']);
    }
    // A side whose base total is below baseMinForRewards accrues nothing: here the borrowers'
    // (~33,000 USDC of principal), not the suppliers' (~1,000,000).
    await send(0, comet, art.TestComet!.abi, 'setBaseTrackingSpeeds', [
      10n ** 13n,
      4n * 10n ** 12n,
      10n ** 11n,
    ]);
    // (A configuration no log of ours names: read once the state read last is old enough.)
    await mineOnceStateAged(anvil);
    await ingestLive(rewarded, suite.store, suite.clock);
    await suite.service.models.reloadIfChanged();
    const min = (await get(`/markets/${wethKey()}`)).data;
    assert.equal(min.borrowRewardsApy, 0);
    assert.ok(min.supplyRewardsApy > 0);
    // A rewards contract that names no reward token for the comet: 0, and the pass says why.
    const empty = await deploy(c, art.TestCometRewards!, []);
    Object.assign(json.chains[0]!, { compound: [{ comet, rewards: empty }] });
    const unnamed = await ingestLive(chainSources(parseSources(json, 'test')), suite.store, suite.clock);
    assert.match(
      JSON.stringify(unnamed.runs[0]!.items.find((i) => i.id === `compound:${comet.toLowerCase()}:rewards`)),
      /names no reward token/,
    );
    // Without a COMP price the rewards are 0, and the pass says why.
    Object.assign(json.chains[0]!, { compound: [{ comet, rewards }] });
    json.chains[0]!.chainlink.pop();
    const unpriced = await ingestLive(chainSources(parseSources(json, 'test')), suite.store, suite.clock);
    assert.deepEqual(
      unpriced.runs[0]!.items.filter((i) => !i.ok).map((i) => i.id),
      [`compound:${comet.toLowerCase()}:rewards`],
    );
    await suite.service.models.reloadIfChanged();
    const m = (await get(`/markets/${wethKey()}`)).data;
    assert.deepEqual([m.supplyRewardsApy, m.borrowRewardsApy, m.rewardTokens], [0, 0, []]);
  });

  test('behavior: a comet added to the file later walks its logs syncBlocks a pass, each stored, while the chain goes on; the end is the one-pass read', async () => {
    const passes = await walkAddedLater(anvil, {
      sources: sourcesJson,
      without: { compound: [] },
      start: cometBlock,
      walkKey: `compound:${comet.toLowerCase()}:deployment`,
      addresses: users,
      // Borrower 2 borrows more in a block the walk has not reached: read once it does.
      during: async (pass) => {
        if (pass === 2) await send(2, comet, art.TestComet!.abi, 'withdraw', [usdc, 100n * 10n ** 6n]);
      },
    });
    assert.ok(passes >= 4, `${passes} passes`);
  });

  test('error: an address added as a comet that is none walks its logs once, named in every pass, and the chain is synced after', async () => {
    const json = sourcesJson();
    Object.assign(json.chains[0]!, {
      syncBlocks: 8,
      compound: [{ comet }, { comet: usdc, fromBlock: Number(cometBlock) }],
    });
    const syncOf = async () =>
      (await suite.store.listSources()).find((s) => s.id === `chain:${anvil.chainId}`)!.sync?.[
        String(anvil.chainId)
      ];
    const run = async () => {
      const { out, failed } = await passAtHead(
        anvil,
        chainSources(parseSources(json, 'test')),
        suite.store,
        suite.clock,
      );
      assert.equal(out.runs[0]!.ok, true, out.runs[0]!.error ?? '');
      assert.deepEqual(
        failed.map((f) => f.id),
        [`compound:${usdc.toLowerCase()}`],
      );
    };
    let passes = 0;
    do {
      assert.ok(++passes < 30, 'the walk ends');
      await run();
    } while (await syncOf());
    assert.ok(passes > 1, `${passes} passes`);
    // Walked once: later passes resume with the others.
    await mineOnceStateAged(anvil);
    await run();
    assert.equal(await syncOf(), undefined);
  });
});

describe('a comet whose base token has no USD price (docs/decisions.md "Real sources")', () => {
  let daiComet: `0x${string}`;
  let daiUsd: `0x${string}`;
  let borrowers: `0x${string}`[] = [];
  before(async () => {
    // Borrower 3 owes 500 DAI against 1 WETH; borrower 4, 100 DAI against 10 WETH.
    ({
      comet: daiComet,
      daiUsd,
      borrowers,
    } = await openDaiComet([
      [3, WAD, 500n * WAD],
      [4, 10n * WAD, 100n * WAD],
    ]));
  });
  // The file has ETH/USD, not DAI/USD.
  const json = () => ({
    chains: [
      {
        chainId: anvil.chainId,
        rpcUrl: anvil.url,
        compound: [{ comet: daiComet }],
        chainlink: [{ address: ethUsd, pair: 'ETH/USD', heartbeatSeconds: 3600 }],
      },
    ],
  });
  const suite = liveChainSuite(() => anvil, 'lrds-comet-unpriced-', json);
  const { get } = suite;
  const key = () => `compound-31337-${daiComet.toLowerCase()}_${weth.toLowerCase()}`;

  test('behavior: its markets are served with what is known, its borrowers followed; an absorb is recorded, its DAI of no USD value', async () => {
    // (a pass that reads the state: one with no new block names nothing)
    await mineOnceStateAged(anvil);
    const { out } = await passAtHead(anvil, suite.sources, suite.store, suite.clock, suite.service);
    const item = out.runs[0]!.items.find((i) => i.id === `compound:${daiComet.toLowerCase()}`);
    assert.ok(item?.ok, 'served, not failed');
    assert.match(
      item.note ?? '',
      /no USD price for its base token DAI .*served with its USD figures null and no position/,
    );
    const m = (await get(`/markets/${key()}`)).data;
    assert.deepEqual(
      [m.loanPrice, m.supply, m.borrow, m.available, m.supplyAssets],
      [null, null, null, null, 100_000],
    );
    // the comet's own debts, to the unit of interest accrued since
    assert.ok(m.borrowAssets >= 600 && m.borrowAssets < 600.01, `borrowAssets ${m.borrowAssets}`);
    const eth = Number(await read<bigint>(ethUsd, 'latestAnswer')) / 1e8;
    assert.equal(m.collateralPrice, eth, 'WETH by the file’s ETH/USD');
    for (const b of borrowers) assert.deepEqual((await get(`/positions?address=${b}`)).data, []);

    // DAI is worth $100 to the comet: borrower 3 is absorbed.
    await send(0, daiUsd, art.TestAggregator!.abi, 'updateAnswer', [100n * 10n ** 8n]);
    const receipt = await send(0, daiComet, art.TestComet!.abi, 'absorb', [users[0], [borrowers[0]]]);
    await send(0, daiUsd, art.TestAggregator!.abi, 'updateAnswer', [10n ** 8n]);
    // ETH moves before the pass reads the absorb: the WETH it took is valued at its block's price
    const answer = await read<bigint>(ethUsd, 'latestAnswer');
    await send(0, ethUsd, art.TestAggregator!.abi, 'updateAnswer', [answer + 100n * 10n ** 8n]);
    await suite.pass();
    await send(0, ethUsd, art.TestAggregator!.abi, 'updateAnswer', [answer]);
    const [l] = (await get(`/liquidations?marketId=${key()}`)).data;
    assert.deepEqual(
      [l.txHash, l.borrower, l.collateralSeized, l.collateralSeizedUsd, l.debtRepaidUsd],
      [receipt.transactionHash, borrowers[0], 1, eth, null],
    );
    // 1 WETH at its liquidation factor (0.95) at $100 a DAI covers part of the 500 DAI absorbed;
    // the rest is bad debt, and the two add up to the debt absorbed.
    const covered = ((Number(answer) / 1e8) * 0.95) / 100;
    assert.ok(Math.abs(l.debtRepaid / covered - 1) < 1e-6, `debtRepaid ${l.debtRepaid} vs ${covered}`);
    assert.ok(
      l.debtRepaid + l.badDebt >= 500 && l.debtRepaid + l.badDebt < 500.01,
      `debt absorbed ${l.debtRepaid} + ${l.badDebt}`,
    );
    assert.ok(l.badDebt > 0 && l.badDebtUsd === null, `bad debt ${l.badDebt} ${l.badDebtUsd}`);

    // DAI/USD added to the file: the comet is priced, with the borrower it followed meanwhile.
    const priced = json();
    priced.chains[0]!.chainlink.push({ address: daiUsd, pair: 'DAI/USD', heartbeatSeconds: 86400 });
    suite.sources = chainSources(parseSources(priced, 'test'));
    await suite.pass();
    const now = (await get(`/markets/${key()}`)).data;
    assert.deepEqual([now.loanPrice, now.supply], [1, now.supplyAssets]);
    const [p] = (await get(`/positions?address=${borrowers[1]}`)).data;
    assert.equal(p.market.uniqueKey, key());
    assert.ok(Math.abs(p.state.borrowAssetsUsd - 100) < 0.01, String(p.state.borrowAssetsUsd));
  });
});

describe('a comet whose waiting borrowers do not all fit in the checkpoint', () => {
  let held: `0x${string}`;
  let daiUsd: `0x${string}`;
  let borrowers: `0x${string}`[] = [];
  // The blocks from before the comet through its borrowers' last transaction.
  let span: number;
  before(async () => {
    const before = await anvil.client().getBlockNumber();
    // Borrowers 5 and 6 each owe 100 DAI against 1 WETH.
    ({
      comet: held,
      daiUsd,
      borrowers,
    } = await openDaiComet([
      [5, WAD, 100n * WAD],
      [6, WAD, 100n * WAD],
    ]));
    span = Number((await anvil.client().getBlockNumber()) - before) + 1;
  });
  // No DAI/USD: the comet's markets are served without positions, its borrowers kept for later.
  const json = (opts: { priced?: boolean; syncBlocks?: number } = {}) => ({
    chains: [
      {
        chainId: anvil.chainId,
        rpcUrl: anvil.url,
        ...(opts.syncBlocks ? { syncBlocks: opts.syncBlocks } : {}),
        compound: [{ comet: held }],
        chainlink: [
          { address: ethUsd, pair: 'ETH/USD', heartbeatSeconds: 3600 },
          ...(opts.priced ? [{ address: daiUsd, pair: 'DAI/USD', heartbeatSeconds: 86400 }] : []),
        ],
      },
    ],
  });
  const suite = liveChainSuite(
    () => anvil,
    'lrds-comet-held-',
    () => json(),
  );
  const { get } = suite;

  test('behavior: the comet of those left out is named, and a process that does not hold them reads it from its start, its walk too: every borrower is found once it is priced', async () => {
    // (the comet as the checkpoint names it: its address and where its logs start)
    const config = `${held.toLowerCase()}:deployment`;
    const walkKey = `compound:${config}`;
    const cursor = async () =>
      JSON.parse((await suite.store.listSources()).find((x) => x.id === `chain:${anvil.chainId}`)!.cursor!);
    const run = async (sources: ChainSource[], failures: string[]) => {
      await mineOnceStateAged(anvil);
      const { out, failed } = await passAtHead(anvil, sources, suite.store, suite.clock);
      assert.equal(out.runs[0]!.ok, true, out.runs[0]!.error ?? '');
      assert.deepEqual(
        failed.map((f) => [f.id, f.error]),
        failures.map((f) => [f, '2 holders of comets not served: the first 1 are kept for when they are']),
      );
      return cursor();
    };
    assert.equal((await cursor()).cometPending.length, 2);
    // (More than twice `span` blocks after the comet: a walk from its start takes passes.)
    await anvil
      .client()
      .request({ method: 'anvil_mine' as never, params: [`0x${(2 * span).toString(16)}`] as never });
    await suite.pass();
    // A new process that keeps one account, walking `span` blocks a pass: the other is left out,
    // and its comet named.
    const blocks = { syncBlocks: span };
    const one = chainSources(parseSources(json(blocks), 'test'), { maxPending: 1 });
    const kept = await run(one, ['compound:pending']);
    assert.equal(kept.cometPending.length, 1);
    assert.deepEqual(kept.cometsTruncated, [config]);
    // The same process after a reorganization holds both (it reads them again): the comet
    // resumes with the others, not walked from its start.
    await anvil.client().request({ method: 'anvil_reorg' as never, params: [1, []] as never });
    const reorged = await run(one, ['compound:pending']);
    assert.equal(reorged.walks?.[walkKey], undefined);
    assert.deepEqual(reorged.cometsTruncated, [config]);
    // Another new process: the comet walks from its start, its first pass through both
    // borrowers' blocks, and is named again.
    const walking = await run(chainSources(parseSources(json(blocks), 'test'), { maxPending: 1 }), [
      'compound:pending',
    ]);
    assert.deepEqual(walking.cometsTruncated, [config]);
    const through = walking.walks[walkKey].throughBlock;
    assert.ok((await anvil.client().getBlockNumber()) > BigInt(through) + 1n, 'the walk goes on');
    // DAI/USD added, a new process: the comet walks from its start again (the borrower left out is
    // in the blocks the stored walk had read), until it has caught up.
    suite.sources = chainSources(parseSources(json({ ...blocks, priced: true }), 'test'));
    let passes = 0;
    do {
      assert.ok(++passes < 10, 'the walk ends');
      await mineOnceStateAged(anvil);
      await suite.pass();
    } while ((await cursor()).walks?.[walkKey]);
    for (const b of borrowers) {
      const [p] = (await get(`/positions?address=${b}`)).data;
      assert.equal(p?.market.uniqueKey, `compound-31337-${held.toLowerCase()}_${weth.toLowerCase()}`, b);
      assert.ok(Math.abs(p.state.borrowAssetsUsd - 100) < 0.01, `${b}: ${p.state.borrowAssetsUsd}`);
    }
    const after = await cursor();
    assert.deepEqual([after.cometPending, after.cometsTruncated, after.comets], [[], [], [config]]);
  });
});

describe('a comet added later whose walk a reorganization reaches', () => {
  test('behavior: the walk goes back to the common ancestor: a borrower the new blocks hold, in blocks the walk had read, is found', async () => {
    const c = anvil.client(0);
    const C = art.TestComet!.abi;
    const T = art.TestToken!.abi;
    const added = await deploy(c, art.TestComet!, [usdc, 6, usdcUsd, RATE_MODEL]);
    const start = await anvil.client().getBlockNumber();
    await addWeth(added);
    await send(0, usdc, T, 'mint', [users[0], 100_000n * 10n ** 6n]);
    await send(0, usdc, T, 'approve', [added, 2n ** 256n - 1n]);
    await send(0, added, C, 'supply', [usdc, 100_000n * 10n ** 6n]);
    const open = async (i: number) => {
      await send(i, weth, T, 'mint', [users[i], 10n * WAD]);
      await send(i, weth, T, 'approve', [added, 10n * WAD]);
      await send(i, added, C, 'supply', [weth, 10n * WAD]);
      await send(i, added, C, 'withdraw', [usdc, 100n * 10n ** 6n]);
    };
    await open(1);
    const json = (syncBlocks: number, withComet: boolean) => ({
      chains: [
        {
          chainId: anvil.chainId,
          rpcUrl: anvil.url,
          syncBlocks,
          compound: withComet ? [{ comet: added }] : [],
          chainlink: [
            { address: ethUsd, pair: 'ETH/USD', heartbeatSeconds: 3600 },
            { address: usdcUsd, pair: 'USDC/USD', heartbeatSeconds: 86400 },
          ],
        },
      ],
    });
    const clock = new ManualClock(Date.now());
    const dataDir = tempDir('lrds-comet-walk-reorg-');
    const store = await openStore({ dataDir, databaseUrl: null }, clock);
    const wholeDir = tempDir('lrds-comet-walk-whole-');
    const whole = await openStore({ dataDir: wholeDir, databaseUrl: null }, clock);
    try {
      // The chain read without the comet, at the block that will be the common ancestor.
      const ancestor = await anvil.client().getBlockNumber();
      const pass = async (s: Store, syncBlocks: number, withComet = true) => {
        const { out } = await passAtHead(
          anvil,
          chainSources(parseSources(json(syncBlocks, withComet), 'test')),
          s,
          clock,
        );
        assert.equal(out.runs[0]!.ok, true, out.runs[0]!.error ?? '');
        return (await s.listSources()).find((x) => x.id === `chain:${anvil.chainId}`)!.sync?.[
          String(anvil.chainId)
        ];
      };
      assert.equal(await pass(store, 1_000_000, false), undefined);
      const snapshot = await anvil.client().request({ method: 'evm_snapshot' as never });
      // (Fewer blocks than a pass reads: the chain itself is not syncing.)
      await anvil.client().request({ method: 'anvil_mine' as never, params: ['0xa'] as never });
      // The comet added: its walk reads past the ancestor, into blocks the reorganization drops.
      const step = Number(ancestor - start) + 6;
      const walked = await pass(store, step);
      assert.deepEqual([walked?.fromBlock, walked?.throughBlock], [Number(start), Number(ancestor) + 5]);
      // The new blocks: borrower 2 opens in the first four after the ancestor (blocks the walk
      // had read in the old chain), then more blocks than the old chain had.
      await anvil.client().request({ method: 'evm_revert' as never, params: [snapshot] as never });
      assert.equal(await anvil.client().getBlockNumber(), ancestor);
      await open(2);
      await anvil.client().request({ method: 'anvil_mine' as never, params: ['0x18'] as never });
      let passes = 0;
      while (await pass(store, step)) assert.ok(++passes < 10, 'the walk ends');
      await pass(whole, 1_000_000);
      // Both as a server loads them.
      const served = async (dir: string) => {
        const { service, key } = await liveService(dir, clock);
        try {
          const get = apiGet(() => ({ service, key }));
          const out: unknown[] = [];
          for (const u of users)
            for (const p of (await get(`/positions?address=${u}`)).data)
              if (p.market.uniqueKey.includes(added.toLowerCase())) out.push(p);
          return out as { user: { address: string } }[];
        } finally {
          await service.close();
        }
      };
      const found = await served(dataDir);
      assertNear(found, await served(wholeDir), "the added comet's positions");
      assert.deepEqual(found.map((p) => p.user.address).sort(), [users[1], users[2]].sort());
    } finally {
      await store.close();
      await whole.close();
    }
  });
});
