/**
 * End to end on a local chain: Euler v2 (an EVC, vaults and an oracle router of our own that
 * answer their functions with EVault's bookkeeping and emit their events) with a USDC vault that
 * lends against WETH and WBTC vaults, accounts opened, ingestion passes, and the API answers with
 * the chain's exact debts and EVault's own health (`accountLiquidity` in liquidation mode); a
 * liquidation lands in the history with the debt it moved and the debt socialized.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Abi, encodeFunctionData } from 'viem';
import { evcSubAccount } from '../../src/domain/accounts.ts';
import { chainSources } from '../../src/ingest/chain/index.ts';
import { createChainRpc, deploymentBlock } from '../../src/ingest/chain/rpc.ts';
import { ingestLive } from '../../src/ingest/live.ts';
import { parseSources } from '../../src/ingest/sources-file.ts';
import type { Service } from '../../src/service.ts';
import { openStore } from '../../src/store/open.ts';
import type { Store } from '../../src/store/types.ts';
import { ManualClock } from '../clock.ts';
import { apiGet, liveService, tempDir } from '../helpers.ts';
import {
  type Anvil,
  type Artifact,
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
const USD = '0x0000000000000000000000000000000000000348';
/** 5 % a year as EVault's per-second rate (1e27). */
const RATE = BigInt(Math.round((0.05 * 1e27) / 31_556_952));

let anvil: Anvil;
let art: Record<string, Artifact>;
let evc: `0x${string}`;
let factory: `0x${string}`;
let oracle: `0x${string}`;
let usdc: `0x${string}`;
let weth: `0x${string}`;
let wbtc: `0x${string}`;
let eUsdc: `0x${string}`;
let eWeth: `0x${string}`;
let eWbtc: `0x${string}`;
let ethUsd: `0x${string}`;
let usdcUsd: `0x${string}`;
const users: `0x${string}`[] = [];

const send = (from: number, address: `0x${string}`, abi: Abi, fn: string, args: readonly unknown[] = []) =>
  sendTx(anvil, from, address, abi, fn, args);
const V = () => art.TestEVault!.abi;
const T = () => art.TestToken!.abi;
/** Out units per 1e18 in units, for a price in USD per whole token of `decimals`. */
const usdRate = (price: number, decimals: number) =>
  (BigInt(Math.round(price * 1e6)) * 10n ** 30n) / 10n ** BigInt(decimals);

/** Deposits `amount` of `token` into `vault` for user `i`, as collateral of its account when `collateral`. */
async function depositInto(
  i: number,
  token: `0x${string}`,
  vault: `0x${string}`,
  amount: bigint,
  collateral: boolean,
) {
  await send(i, token, T(), 'mint', [users[i], amount]);
  await send(i, token, T(), 'approve', [vault, amount]);
  await send(i, vault, V(), 'deposit', [amount, users[i]]);
  if (collateral) await send(i, evc, art.TestEVC!.abi, 'enableCollateral', [users[i], vault]);
}

/** EVault's own health in liquidation mode at a block: collateral value at the LTVs over the liability value. */
async function chainHealth(user: string, block?: bigint): Promise<{ hf: number; debt: bigint }> {
  const [collateral, liability] = await readAt<[bigint, bigint]>(
    anvil,
    eUsdc,
    V(),
    'accountLiquidity',
    [user, true],
    block,
  );
  const debt = await readAt<bigint>(anvil, eUsdc, V(), 'debtOf', [user], block);
  return { hf: Number((collateral * WAD) / liability) / 1e18, debt };
}

async function setEthPrice(price: number) {
  await send(0, oracle, art.TestEulerOracle!.abi, 'setRate', [weth, USD, usdRate(price, 18)]);
  await send(0, ethUsd, art.TestAggregator!.abi, 'updateAnswer', [BigInt(price) * 10n ** 8n]);
}

before(async () => {
  art = compileContracts();
  anvil = await startAnvil();
  for (const i of [0, 1, 2, 3, 4, 5, 6])
    users.push(anvil.client(i).account.address.toLowerCase() as `0x${string}`);
  const c = anvil.client(0);
  usdc = await deploy(c, art.TestToken!, ['USD Coin', 'USDC', 6]);
  weth = await deploy(c, art.TestToken!, ['Wrapped Ether', 'WETH', 18]);
  wbtc = await deploy(c, art.TestToken!, ['Wrapped BTC', 'WBTC', 8]);
  ethUsd = await deploy(c, art.TestAggregator!, [8, 'ETH / USD', 3000n * 10n ** 8n]);
  usdcUsd = await deploy(c, art.TestAggregator!, [8, 'USDC / USD', 10n ** 8n]);
  evc = await deploy(c, art.TestEVC!, []);
  factory = await deploy(c, art.TestVaultFactory!, []);
  oracle = await deploy(c, art.TestEulerOracle!, []);
  const vault = (asset: `0x${string}`, name: string, symbol: string) =>
    deploy(c, art.TestEVault!, [evc, asset, oracle, USD, name, symbol]);
  eUsdc = await vault(usdc, 'EVK Vault eUSDC-1', 'eUSDC-1');
  eWeth = await vault(weth, 'EVK Vault eWETH-1', 'eWETH-1');
  eWbtc = await vault(wbtc, 'EVK Vault eWBTC-1', 'eWBTC-1');
  for (const v of [eUsdc, eWeth, eWbtc]) await send(0, factory, art.TestVaultFactory!.abi, 'register', [v]);
  const O = art.TestEulerOracle!.abi;
  await send(0, oracle, O, 'setRate', [usdc, USD, usdRate(1, 6)]);
  await send(0, oracle, O, 'setRate', [weth, USD, usdRate(3000, 18)]);
  await send(0, oracle, O, 'setRate', [wbtc, USD, usdRate(60_000, 8)]);
  await send(0, oracle, O, 'govSetResolvedVault', [eWeth, true]);
  await send(0, oracle, O, 'govSetResolvedVault', [eWbtc, true]);
  await send(0, eUsdc, V(), 'setLTV', [eWeth, 8000, 8500]);
  await send(0, eUsdc, V(), 'setLTV', [eWbtc, 7000, 7500]);
  await send(0, eUsdc, V(), 'setInterestRate', [RATE]);
  // A lender deposits 1,000,000 USDC; borrower 1 posts WETH and WBTC, borrower 2 WETH.
  await depositInto(0, usdc, eUsdc, 1_000_000n * 10n ** 6n, false);
  const open = async (i: number, collateral: [`0x${string}`, `0x${string}`, bigint][], borrow: bigint) => {
    for (const [token, v, amount] of collateral) await depositInto(i, token, v, amount, true);
    await send(i, evc, art.TestEVC!.abi, 'enableController', [users[i], eUsdc]);
    await send(i, eUsdc, V(), 'borrow', [borrow, users[i]]);
  };
  await open(
    1,
    [
      [weth, eWeth, 10n * WAD],
      [wbtc, eWbtc, 50_000_000n],
    ],
    30_000n * 10n ** 6n,
  );
  await open(2, [[weth, eWeth, WAD]], 2_400n * 10n ** 6n);
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
        euler: { evc, factory },
        // No BTC/USD here: WBTC is priced by the vault's oracle.
        chainlink: [
          { address: ethUsd, pair: 'ETH/USD', heartbeatSeconds: 3600 },
          { address: usdcUsd, pair: 'USDC/USD', heartbeatSeconds: 86400 },
        ],
      },
    ],
  };
}

describe('Euler v2 on a local chain', () => {
  const suite = liveChainSuite(() => anvil, 'lrds-euler-', sourcesJson);
  const { get } = suite;
  const pass = () => suite.pass();
  const key1 = (collateral: string) => `euler-31337-${eUsdc.toLowerCase()}_${collateral.toLowerCase()}`;
  type Position = {
    market: { uniqueKey: string };
    healthFactor: number;
    collateralPrice: number;
    state: { collateralUsd: number; borrowAssetsUsd: number };
  };

  test("default: one market per collateral vault, with the chain's exact debts and EVault's own health", async () => {
    const block = await pass();
    const h1 = await chainHealth(users[1]!, block);
    const mine = (await get(`/positions?address=${users[1]}`)).data as Position[];
    assert.deepEqual(mine.map((p) => p.market.uniqueKey).sort(), [key1(eWeth), key1(eWbtc)].sort());
    // every position carries EVault's own health (served to 8 significant digits)
    for (const p of mine)
      assert.ok(Math.abs(p.healthFactor / h1.hf - 1) < 5e-8, `${p.healthFactor} vs ${h1.hf}`);
    // the debt shared among the collaterals sums to debtOf at the block read (USDC at $1; USD
    // amounts are served to the cent)
    const debt = mine.reduce((s, p) => s + p.state.borrowAssetsUsd, 0);
    assert.ok(Math.abs(debt - Number(h1.debt) / 1e6) < 0.02, `${debt} vs ${h1.debt}`);
    // shares of debt by value at the liquidation LTV: WETH $30,000 × 0.85, WBTC $30,000 × 0.75
    const byKey = new Map(mine.map((p) => [p.market.uniqueKey, p]));
    const wethShare = byKey.get(key1(eWeth))!.state.borrowAssetsUsd / debt;
    assert.ok(Math.abs(wethShare - 0.85 / (0.85 + 0.75)) < 1e-6, String(wethShare));
    // WETH by its feed; WBTC (no feed in the file) by the vault's oracle
    assert.equal(byKey.get(key1(eWeth))!.state.collateralUsd, 30_000);
    assert.ok(Math.abs(byKey.get(key1(eWbtc))!.state.collateralUsd - 30_000) < 1e-6);
    assert.ok(Math.abs(byKey.get(key1(eWbtc))!.collateralPrice - 60_000) < 1e-6);
    const market = (await get(`/markets/${key1(eWeth)}`)).data;
    assert.deepEqual(
      [market.protocol, market.vaultAddress, market.vaultSymbol, market.lltv, market.loan, market.collateral],
      ['euler', eUsdc.toLowerCase(), 'eUSDC-1', 0.85, 'USDC', 'WETH'],
    );
    assert.equal(market.governor, users[0]);
    // the vault's markets sum to its total assets, each at the vault's utilization
    const totalAssets = await readAt<bigint>(anvil, eUsdc, V(), 'totalAssets', [], block);
    const wbtcMarket = (await get(`/markets/${key1(eWbtc)}`)).data;
    assert.ok(Math.abs(market.supply + wbtcMarket.supply - Number(totalAssets) / 1e6) < 0.02);
    assert.equal(market.utilization, wbtcMarket.utilization);
    // the vault itself: its governor and interest fee, lending all of its two markets' supply; its
    // APY is its markets' supply APY (EVault takes the fee before its depositors earn interest)
    const [vault] = (await get('/vaults?protocol=euler&chainIds=31337')).data;
    assert.deepEqual(
      [vault.address, vault.symbol, vault.asset.symbol, vault.governor, vault.fee, vault.allocations.length],
      [eUsdc.toLowerCase(), 'eUSDC-1', 'USDC', users[0], 0.1, 2],
    );
    assert.ok(Math.abs(vault.totalAssetsUsd - Number(totalAssets) / 1e6) < 0.02);
    assert.equal(vault.apy, market.supplyApy);
    // 5 % a year as a per-second rate, compounded over EVault's year
    assert.ok(Math.abs(market.borrowApy - Math.expm1(0.05)) < 1e-6, String(market.borrowApy));
  });

  test('behavior: a quiet pass reads no account; debts accrue as the vault accrues them; health follows the oracle', async () => {
    await anvil.client().request({ method: 'evm_increaseTime' as never, params: [30 * 86_400] as never });
    await anvil.client().request({ method: 'evm_mine' as never, params: [] as never });
    let block = await pass();
    assert.equal(suite.sources[0]!.lastRun()!.positionsRead, 0);
    const debt = (await get(`/positions?address=${users[1]}`)).data.reduce(
      (s: number, p: Position) => s + p.state.borrowAssetsUsd,
      0,
    );
    const h1 = await chainHealth(users[1]!, block);
    // USD amounts are served to the cent (one per position)
    assert.ok(Math.abs(debt - Number(h1.debt) / 1e6) < 0.02, `${debt} vs ${h1.debt}`);
    // WETH falls: borrower 2 (1 WETH, 2,400 USDC) is liquidatable, read without reading its account
    await setEthPrice(2600);
    block = await pass();
    assert.equal(suite.sources[0]!.lastRun()!.positionsRead, 0);
    const h2 = await chainHealth(users[2]!, block);
    assert.ok(h2.hf < 1);
    const p = (await get(`/positions?address=${users[2]}`)).data[0] as Position;
    assert.ok(Math.abs(p.healthFactor / h2.hf - 1) < 5e-8, `${p.healthFactor} vs ${h2.hf}`);
    const atRisk = await get('/risk/positions-at-risk?chainIds=31337');
    assert.deepEqual(
      atRisk.data.map((x: { user: { address: string } }) => x.user.address),
      [users[2]],
    );
  });

  test('behavior: a liquidation lands in the history with the debt moved and the debt socialized', async () => {
    // The liquidator posts collateral of its own: it takes the debt over.
    await depositInto(0, weth, eWeth, 10n * WAD, true);
    await send(0, evc, art.TestEVC!.abi, 'enableController', [users[0], eUsdc]);
    const receipt = await send(0, eUsdc, V(), 'liquidate', [users[2], eWeth, 2n ** 256n - 1n, 0n]);
    const events = await anvil.client().getContractEvents({
      address: eUsdc,
      abi: V(),
      fromBlock: receipt.blockNumber,
      toBlock: receipt.blockNumber,
    });
    const args = (name: string) => events.find((e) => e.eventName === name)!.args as Record<string, bigint>;
    // WETH falls again before the pass reads the liquidation: it is priced at its own block.
    await setEthPrice(2500);
    await pass();
    const list = (await get('/liquidations?chainIds=31337')).data;
    assert.equal(list.length, 1);
    const l = list[0];
    assert.deepEqual(
      [l.protocol, l.marketId, l.txHash, l.block, l.borrower, l.liquidator, l.collateralSeized],
      ['euler', key1(eWeth), receipt.transactionHash, Number(receipt.blockNumber), users[2], users[0], 1],
    );
    assert.equal(l.collateralSeizedUsd, 2600);
    assert.equal(l.debtRepaidUsd, Math.round(l.debtRepaid * 100) / 100);
    // token amounts are served to 8 significant digits
    const close = (a: number, b: bigint) => Math.abs(a / (Number(b) / 1e6) - 1) < 5e-8;
    assert.ok(close(l.debtRepaid, args('Liquidate').repayAssets!), `${l.debtRepaid}`);
    assert.ok(l.badDebt > 0 && close(l.badDebt, args('DebtSocialized').assets!), `${l.badDebt}`);
    // borrower 2 holds nothing now; the liquidator carries the debt it took over
    assert.equal((await get(`/positions?address=${users[2]}`)).data.length, 0);
    const taken = (await get(`/positions?address=${users[0]}`)).data as Position[];
    const h0 = await chainHealth(users[0]!);
    assert.deepEqual(
      taken.map((p) => p.market.uniqueKey),
      [key1(eWeth)],
    );
    assert.ok(
      Math.abs(taken[0]!.state.borrowAssetsUsd - Number(h0.debt) / 1e6) < 0.01,
      `${taken[0]!.state.borrowAssetsUsd} vs ${h0.debt}`,
    );
  });

  test('behavior: a reorganization that drops the liquidation rolls it back, and the positions with it', async () => {
    const [l] = (await get('/liquidations?chainIds=31337')).data;
    const head = await anvil.client().getBlockNumber({ cacheTime: 0 });
    await anvil.client().request({
      method: 'anvil_reorg' as never,
      params: [Number(head) - l.block + 1, []] as never,
    });
    await pass();
    assert.equal((await get('/liquidations?chainIds=31337')).data.length, 0);
    const back = (await get(`/positions?address=${users[2]}`)).data as Position[];
    assert.equal(back.length, 1);
    assert.ok(back[0]!.healthFactor < 1);
    // the liquidator's collateral backs no debt again
    const mine = (await get(`/positions?address=${users[0]}`)).data as Position[];
    assert.deepEqual(
      mine.map((p) => p.state.borrowAssetsUsd),
      [0],
    );
  });

  test('behavior: a restarted process reads its accounts again, those a vault controls without a position too', async () => {
    const EVC = art.TestEVC!.abi;
    // Account 3: the vault controls it, its collateral enabled but nothing deposited yet.
    await send(3, evc, EVC, 'enableController', [users[3], eUsdc]);
    await send(3, evc, EVC, 'enableCollateral', [users[3], eWeth]);
    await pass();
    assert.equal((await get(`/positions?address=${users[3]}`)).data.length, 0);
    const restarted = chainSources(parseSources(sourcesJson(), 'test'));
    const run = async () => {
      suite.clock.set(Number((await anvil.client().getBlock()).timestamp) * 1000 + 1000);
      const out = await ingestLive(restarted, suite.store, suite.clock);
      assert.equal(out.runs[0]!.ok, true);
      assert.deepEqual(
        out.runs[0]!.items.filter((i) => !i.ok),
        [],
      );
      await suite.service.models.reloadIfChanged();
      return restarted[0]!.lastRun()!.positionsRead;
    };
    // every account the vault controls read again at once (the process kept nothing): the
    // lender-liquidator, both borrowers and account 3 (kept in the checkpoint: it holds no position)
    assert.equal(await run(), 4);
    const h1 = await chainHealth(users[1]!);
    for (const p of (await get(`/positions?address=${users[1]}`)).data as Position[])
      assert.ok(Math.abs(p.healthFactor / h1.hf - 1) < 5e-8);
    // A deposit runs no status check: only its shares' Transfer names the account, and it is read.
    await depositInto(3, weth, eWeth, WAD, false);
    assert.equal(await run(), 1);
    const mine = (await get(`/positions?address=${users[3]}`)).data as Position[];
    assert.deepEqual(
      mine.map((p) => [p.market.uniqueKey, p.state.collateralUsd, p.state.borrowAssetsUsd]),
      [[key1(eWeth), 2600, 0]],
    );
  });

  test('behavior: a vault handed whole is then handed in part: the accounts a block names, its markets still summing to its borrows', async () => {
    const borrowSum = async () =>
      (await get('/markets?chainIds=31337&limit=100')).data.reduce(
        (s: number, m: { uniqueKey: string; borrow: number }) =>
          s + (m.uniqueKey.startsWith(`euler-31337-${eUsdc.toLowerCase()}_`) ? m.borrow : 0),
        0,
      );
    // (Another process wrote last: this one reads its accounts again and hands the vault whole.)
    await pass();
    assert.ok(suite.sources[0]!.lastRun()!.positions > 1);
    // Account 3 borrows against its WETH: its one market alone.
    await send(3, eUsdc, V(), 'borrow', [500n * 10n ** 6n, users[3]]);
    const block = await pass();
    assert.equal(suite.sources[0]!.lastRun()!.positions, 1);
    const h3 = await chainHealth(users[3]!, block);
    const [p3] = (await get(`/positions?address=${users[3]}`)).data as Position[];
    assert.ok(Math.abs(p3!.healthFactor / h3.hf - 1) < 5e-8, `${p3!.healthFactor} vs ${h3.hf}`);
    const borrows = Number(await readAt<bigint>(anvil, eUsdc, V(), 'totalBorrows', [], block)) / 1e6;
    assert.ok(Math.abs((await borrowSum()) - borrows) < 0.05, `${await borrowSum()} vs ${borrows}`);
    // WETH moves (its feed and the oracle together): no account read, none handed, health follows.
    await setEthPrice(2550);
    const moved = await pass();
    assert.deepEqual(
      [suite.sources[0]!.lastRun()!.positionsRead, suite.sources[0]!.lastRun()!.positions],
      [0, 0],
    );
    const again = await chainHealth(users[3]!, moved);
    const [q3] = (await get(`/positions?address=${users[3]}`)).data as Position[];
    assert.ok(Math.abs(q3!.healthFactor / again.hf - 1) < 5e-8, `${q3!.healthFactor} vs ${again.hf}`);
    // Account 3 repays all and withdraws its WETH: its market handed at zero, and it holds nothing.
    await send(3, usdc, T(), 'mint', [users[3], 1_000n * 10n ** 6n]);
    await send(3, usdc, T(), 'approve', [eUsdc, 2n ** 256n - 1n]);
    await send(3, eUsdc, V(), 'repay', [2n ** 256n - 1n, users[3]]);
    await send(3, eWeth, V(), 'withdraw', [WAD, users[3], users[3]]);
    const repaid = await pass();
    assert.equal((await get(`/positions?address=${users[3]}`)).data.length, 0);
    const left = Number(await readAt<bigint>(anvil, eUsdc, V(), 'totalBorrows', [], repaid)) / 1e6;
    assert.ok(Math.abs((await borrowSum()) - left) < 0.05, `${await borrowSum()} vs ${left}`);
  });

  test('behavior: a collateral the vault lists later counts for the accounts that hold it, without a log naming them', async () => {
    const c = anvil.client(0);
    const dai = await deploy(c, art.TestToken!, ['Dai Stablecoin', 'DAI', 18]);
    const eDai = await deploy(c, art.TestEVault!, [evc, dai, oracle, USD, 'EVK Vault eDAI-1', 'eDAI-1']);
    const O = art.TestEulerOracle!.abi;
    await send(0, oracle, O, 'setRate', [dai, USD, usdRate(1, 18)]);
    await send(0, oracle, O, 'govSetResolvedVault', [eDai, true]);
    // Borrower 1 posts DAI as collateral before the vault accepts it: it counts for nothing yet.
    await depositInto(1, dai, eDai, 10_000n * WAD, true);
    await pass();
    assert.equal((await get(`/positions?address=${users[1]}`)).data.length, 2);
    await send(0, eUsdc, V(), 'setLTV', [eDai, 8000, 9000]);
    const block = await pass();
    const mine = (await get(`/positions?address=${users[1]}`)).data as Position[];
    assert.deepEqual(
      mine.map((p) => p.market.uniqueKey).sort(),
      [key1(eWeth), key1(eWbtc), key1(eDai)].sort(),
    );
    const h1 = await chainHealth(users[1]!, block);
    for (const p of mine)
      assert.ok(Math.abs(p.healthFactor / h1.hf - 1) < 5e-8, `${p.healthFactor} vs ${h1.hf}`);
    // DAI (no feed in the file) by the vault's oracle against USDC's $1
    assert.equal(mine.find((p) => p.market.uniqueKey === key1(eDai))!.collateralPrice, 1);
  });

  test('behavior: an account whose only collateral the vault no longer values is kept in the checkpoint; one holding another is not', async () => {
    const EVC = art.TestEVC!.abi;
    const pendingNow = async () =>
      JSON.parse((await suite.store.listSources()).find((x) => x.id === 'chain:31337')!.cursor!)
        .eulerPending as string[];
    // Account 5's sub-account 9 posts WBTC as collateral of the USDC vault and borrows nothing: a
    // position.
    const sub = evcSubAccount(users[5]!, 9) as `0x${string}`;
    await send(5, wbtc, T(), 'mint', [users[5], 10_000_000n]);
    await send(5, wbtc, T(), 'approve', [eWbtc, 10_000_000n]);
    await send(5, eWbtc, V(), 'deposit', [10_000_000n, sub]);
    await send(5, evc, EVC, 'enableCollateral', [sub, eWbtc]);
    await send(5, evc, EVC, 'enableController', [sub, eUsdc]);
    await pass();
    const held = async () => (await get(`/positions?address=${sub}`)).data.length;
    assert.equal(await held(), 1);
    const mine = `${eUsdc.toLowerCase()}:${sub}`;
    assert.ok(!(await pendingNow()).includes(mine));
    // The vault stops valuing WBTC (its LTV 0, still listed): the sub-account holds no position,
    // and the checkpoint names it; account 1, which holds WBTC and WETH, is not named.
    await send(0, eUsdc, V(), 'setLTV', [eWbtc, 0, 0]);
    await pass();
    assert.equal(await held(), 0);
    const pending = await pendingNow();
    assert.ok(pending.includes(mine), pending.join());
    assert.ok(!pending.includes(`${eUsdc.toLowerCase()}:${users[1]}`));
    await send(0, eUsdc, V(), 'setLTV', [eWbtc, 7000, 7500]);
    await pass();
    assert.equal(await held(), 1);
    assert.ok(!(await pendingNow()).includes(mine));
  });

  test('behavior: a controller the vault factory did not make is named once and not read; without the factory, one answering what no EVault would', async () => {
    const c = anvil.client(0);
    const EVC = art.TestEVC!.abi;
    // Anyone may deploy a contract answering EVault's views and enable it for an account of theirs.
    const plausible = await deploy(c, art.TestFakeVault!, [usdc, oracle, 10n ** 27n, eWeth, 5000]);
    const noAccumulator = await deploy(c, art.TestFakeVault!, [usdc, oracle, 0n, eWeth, 5000]);
    const fullLtv = await deploy(c, art.TestFakeVault!, [usdc, oracle, 10n ** 27n, eWeth, 10_000]);
    await send(6, evc, EVC, 'enableController', [users[6], plausible]);
    await send(4, evc, EVC, 'enableController', [users[4], noAccumulator]);
    await send(5, evc, EVC, 'enableController', [users[5], fullLtv]);
    const named = async (over: typeof suite.sources, into: Store) => {
      suite.clock.set(Number((await anvil.client().getBlock()).timestamp) * 1000 + 1000);
      const out = await ingestLive(over, into, suite.clock);
      assert.equal(out.runs[0]!.ok, true, out.runs[0]!.error ?? '');
      return out.runs[0]!.items.filter((i) => !i.ok).map((i) => i.id.slice('euler:'.length));
    };
    // With the factory: none is its, each named once, then never read again.
    const all = [plausible, noAccumulator, fullLtv].map((v) => v.toLowerCase());
    assert.deepEqual((await named(suite.sources, suite.store)).sort(), [...all].sort());
    // (the next pass that reads the state)
    await mineOnceStateAged(anvil);
    assert.deepEqual(await named(suite.sources, suite.store), []);
    await suite.service.models.reloadIfChanged();
    const vaults = new Set(
      (await get('/markets?protocol=euler&chainIds=31337')).data.map(
        (m: { vaultAddress: string }) => m.vaultAddress,
      ),
    );
    assert.deepEqual([...vaults], [eUsdc.toLowerCase()]);
    // Without it: any contract answering EVault's views is read (the plausible one is served);
    // what no EVault answers is named, once when it never answered, every pass when it answers
    // but lists an LTV of 100 %.
    const json = sourcesJson();
    Object.assign(json.chains[0]!, { euler: { evc } });
    const open = chainSources(parseSources(json, 'test'));
    const apart = await openStore({ dataDir: tempDir('lrds-euler-open-'), databaseUrl: null }, suite.clock);
    try {
      assert.deepEqual(
        (await named(open, apart)).sort(),
        [noAccumulator, fullLtv].map((v) => v.toLowerCase()).sort(),
      );
      await mineOnceStateAged(anvil);
      assert.deepEqual(await named(open, apart), [fullLtv.toLowerCase()]);
    } finally {
      await apart.close();
    }
  });

  test('behavior: a wallet borrowing through an EVC sub-account sees it under its own address, named by the sub-account', async () => {
    // Borrower 2 (its own account borrows against WETH) borrows again through sub-account 1, as
    // the Euler app does: 0.5 WBTC deposited for the sub-account, 10,000 USDC through EVC.call.
    const owner = users[2]!;
    const sub = evcSubAccount(owner, 1) as `0x${string}`;
    await send(2, wbtc, T(), 'mint', [owner, 50_000_000n]);
    await send(2, wbtc, T(), 'approve', [eWbtc, 50_000_000n]);
    await send(2, eWbtc, V(), 'deposit', [50_000_000n, sub]);
    await send(2, evc, art.TestEVC!.abi, 'enableCollateral', [sub, eWbtc]);
    await send(2, evc, art.TestEVC!.abi, 'enableController', [sub, eUsdc]);
    const data = encodeFunctionData({ abi: V(), functionName: 'borrow', args: [10_000n * 10n ** 6n, owner] });
    await send(2, evc, art.TestEVC!.abi, 'call', [eUsdc, sub, data]);
    const block = await pass();
    const mine = (await get(`/positions?address=${owner}`)).data as (Position & {
      user: { address: string };
    })[];
    const bySub = mine.filter((p) => p.user.address === sub);
    assert.deepEqual(
      bySub.map((p) => p.market.uniqueKey),
      [key1(eWbtc)],
    );
    assert.ok(mine.some((p) => p.user.address === owner && p.market.uniqueKey === key1(eWeth)));
    // The sub-account is an account of its own: EVault's health of the sub-account, not the owner's.
    const hSub = await chainHealth(sub, block);
    const hOwner = await chainHealth(owner, block);
    assert.ok(
      Math.abs(bySub[0]!.healthFactor / hSub.hf - 1) < 5e-8,
      `${bySub[0]!.healthFactor} vs ${hSub.hf}`,
    );
    const own = mine.find((p) => p.user.address === owner)!;
    assert.ok(Math.abs(own.healthFactor / hOwner.hf - 1) < 5e-8, `${own.healthFactor} vs ${hOwner.hf}`);
    assert.ok(Math.abs(bySub[0]!.state.borrowAssetsUsd - 10_000) < 0.02);
    // The portfolio too; the sub-account's own address sees its owner's group, another wallet none of it.
    const folio = (await get(`/portfolios/${owner}`)).data;
    assert.ok(
      folio.positions.some((p: { user: { address: string } }) => p.user.address === sub),
      'the portfolio holds the sub-account',
    );
    assert.ok(
      ((await get(`/positions?address=${sub}`)).data as { user: { address: string } }[]).some(
        (p) => p.user.address === sub,
      ),
    );
    assert.ok(
      ((await get(`/positions?address=${users[1]}`)).data as { user: { address: string } }[]).every(
        (p) => p.user.address === users[1],
      ),
    );
  });

  test('behavior: Euler added to the file later walks its logs syncBlocks a pass, each stored, while the chain goes on; the end is the one-pass read (a new process each pass, then one process)', async () => {
    const rpc = createChainRpc(anvil.chainId, anvil.url);
    const start = await deploymentBlock(rpc, evc, await anvil.client().getBlockNumber());
    for (const oneProcess of [false, true]) {
      const passes = await walkAddedLater(anvil, {
        oneProcess,
        sources: sourcesJson,
        without: { euler: undefined },
        start,
        walkKey: `euler:${evc.toLowerCase()}:deployment`,
        addresses: users,
        // Borrower 1 borrows more in a block the walk has not reached: read once it does.
        during: async (pass) => {
          if (pass === 2) await send(1, eUsdc, V(), 'borrow', [10n * 10n ** 6n, users[1]]);
        },
      });
      assert.ok(passes >= 4, `${passes} passes`);
    }
  });
});

describe('an Euler vault whose asset has no USD price (docs/decisions.md "Real sources")', () => {
  const clock = new ManualClock(Date.now());
  let dataDir: string;
  let store: Store;
  let service: Service;
  let key: string;
  const get = apiGet(() => ({ service, key }));
  // The file without USDC/USD: the USDC vault's asset has no USD price.
  const json = () => {
    const j = sourcesJson();
    j.chains[0]!.chainlink = j.chains[0]!.chainlink.filter((f) => f.pair !== 'USDC/USD');
    return j;
  };
  const marketKey = (collateral: string) => `euler-31337-${eUsdc.toLowerCase()}_${collateral.toLowerCase()}`;
  before(async () => {
    dataDir = tempDir('lrds-euler-unpriced-');
    store = await openStore({ dataDir, databaseUrl: null }, clock);
  });
  after(async () => {
    await service?.close();
    await store?.close();
  });

  test('behavior: its markets are served with what is known, its accounts followed; a liquidation is recorded, its USDC of no USD value', async () => {
    const { out } = await passAtHead(anvil, chainSources(parseSources(json(), 'test')), store, clock);
    assert.equal(out.runs[0]!.ok, true, out.runs[0]!.error ?? '');
    const item = out.runs[0]!.items.find((i) => i.id === `euler:${eUsdc.toLowerCase()}`);
    assert.ok(item?.ok, 'served, not failed');
    assert.match(item.note ?? '', /no USD price for USDC .*served with its USD figures null and no position/);
    ({ service, key } = await liveService(dataDir, clock));
    const m = (await get(`/markets/${marketKey(eWeth)}`)).data;
    assert.deepEqual([m.loanPrice, m.supply, m.borrow], [null, null, null]);
    const supplied = Number(await readAt<bigint>(anvil, eUsdc, V(), 'totalAssets')) / 1e6;
    const wbtcMarket = (await get(`/markets/${marketKey(eWbtc)}`)).data;
    // the vault's assets, split among its markets; WETH priced by the file's ETH/USD
    const ofVault = (
      (await get('/markets?protocol=euler&chainIds=31337')).data as {
        vaultAddress: string;
        supplyAssets: number;
      }[]
    ).filter((x) => x.vaultAddress === eUsdc.toLowerCase());
    const sum = ofVault.reduce((s, x) => s + x.supplyAssets, 0);
    assert.ok(Math.abs(sum / supplied - 1) < 1e-7, `${sum} vs ${supplied}`);
    assert.equal(
      m.collateralPrice,
      Number(await readAt<bigint>(anvil, ethUsd, art.TestAggregator!.abi, 'latestAnswer')) / 1e8,
    );
    assert.equal(wbtcMarket.collateralPrice, null, 'WBTC: no feed, and the oracle quotes it in USDC terms');
    assert.deepEqual((await get(`/positions?address=${users[1]}`)).data, []);
    assert.equal((await get(`/vaults/31337/${eUsdc}`)).data.totalAssetsUsd, null);

    // ETH falls to $100 and BTC to $30,000: borrower 1 is liquidated by a holder of WBTC.
    await setEthPrice(100);
    await send(0, oracle, art.TestEulerOracle!.abi, 'setRate', [wbtc, USD, usdRate(30_000, 8)]);
    await depositInto(3, wbtc, eWbtc, 10n ** 9n, true);
    await send(3, evc, art.TestEVC!.abi, 'enableController', [users[3], eUsdc]);
    const receipt = await send(3, eUsdc, V(), 'liquidate', [users[1], eWeth, 2n ** 256n - 1n, 0n]);
    await passAtHead(anvil, chainSources(parseSources(json(), 'test')), store, clock, service);
    const [l] = (await get(`/liquidations?marketId=${marketKey(eWeth)}`)).data;
    assert.deepEqual(
      [l.txHash, l.borrower, l.liquidator, l.debtRepaidUsd],
      [receipt.transactionHash, users[1], users[3], null],
    );
    assert.ok(l.debtRepaid > 0 && l.collateralSeized > 0);
    assert.ok(
      Math.abs(l.collateralSeizedUsd - l.collateralSeized * 100) < 0.01,
      String(l.collateralSeizedUsd),
    );

    // USDC/USD added: the vault is priced, with the accounts it followed meanwhile.
    await passAtHead(anvil, chainSources(parseSources(sourcesJson(), 'test')), store, clock, service);
    assert.equal((await get(`/markets/${marketKey(eWeth)}`)).data.loanPrice, 1);
    const held = (await get(`/positions?address=${users[1]}`)).data as { market: { uniqueKey: string } }[];
    assert.ok(
      held.some((p) => p.market.uniqueKey === marketKey(eWbtc)),
      JSON.stringify(held.map((p) => p.market.uniqueKey)),
    );
  });
});
