/**
 * End to end on a local chain: a real Aave v3 market (v3.0, deployed from the compiled artifacts
 * `@aave/core-v3` ships) with WETH, WBTC, USDC and DAI, accounts opened (several collaterals and
 * debts, one in e-mode), ingestion passes, and the API answers with the chain's exact debts and
 * Aave's own health factor (`getUserAccountData`); a price move, an aToken transfer, a
 * liquidation, a reorganization and a restart, and the answers follow.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { custom, maxUint256 } from 'viem';
import { readAave, withDeficits } from '../../src/ingest/chain/aave.ts';
import { accountValues } from '../../src/ingest/chain/aave-accounts.ts';
import { aaveApy } from '../../src/ingest/chain/aave-records.ts';
import { chainSources } from '../../src/ingest/chain/index.ts';
import { createChainRpc, deploymentBlock } from '../../src/ingest/chain/rpc.ts';
import type { ChainSource } from '../../src/ingest/chain/source.ts';
import { parseSources } from '../../src/ingest/sources-file.ts';
import {
  type AaveMarket,
  type AaveSymbol,
  addRewards,
  borrow,
  deployAave,
  liquidate,
  setPrice,
  supply,
} from './aave.ts';
import {
  type Anvil,
  compileContracts,
  deploy,
  liveChainSuite,
  logSpiedSources,
  mineOnceStateAged,
  passAtHead,
  readAt,
  sendTx,
  startAnvil,
  walkAddedLater,
} from './anvil.ts';

const WAD = 10n ** 18n;
const USDC = 10n ** 6n;
const SECONDS_PER_YEAR = 31_536_000;

let anvil: Anvil;
let aave: AaveMarket;
const users: `0x${string}`[] = [];

type Position = {
  market: { uniqueKey: string };
  healthFactor: number;
  collateralPrice: number;
  state: { collateralUsd: number; borrowAssetsUsd: number };
};

before(async () => {
  anvil = await startAnvil();
  for (const i of [0, 1, 2, 3, 4, 5, 6])
    users.push(anvil.client(i).account.address.toLowerCase() as `0x${string}`);
  // Every token's incentives controller is a RewardsController (no reward configured until a test does).
  aave = await deployAave(anvil, { rewards: true });
  // Account 2 lends; account 1 posts WETH and WBTC and borrows USDC and DAI; account 4, in the
  // stablecoin e-mode, posts DAI and borrows USDC; account 5 only supplies.
  await supply(anvil, aave, 2, 'USDC', 500_000n * USDC);
  await supply(anvil, aave, 2, 'DAI', 500_000n * WAD);
  await supply(anvil, aave, 1, 'WETH', 10n * WAD);
  await supply(anvil, aave, 1, 'WBTC', 50_000_000n);
  await borrow(anvil, aave, 1, 'USDC', 15_000n * USDC);
  await borrow(anvil, aave, 1, 'DAI', 5_000n * WAD);
  await sendTx(anvil, 4, aave.pool, aave.poolAbi, 'setUserEMode', [1]);
  await supply(anvil, aave, 4, 'DAI', 10_000n * WAD);
  await borrow(anvil, aave, 4, 'USDC', 9_000n * USDC);
  await supply(anvil, aave, 5, 'WETH', WAD);
});

after(async () => {
  await anvil?.stop();
});

const reserve = (s: AaveSymbol) => aave.reserves[s];
const keyOf = (c: AaveSymbol, d: AaveSymbol) =>
  `aave-31337-${aave.pool.toLowerCase()}_${reserve(c).asset.toLowerCase()}_${reserve(d).asset.toLowerCase()}`;

function sourcesJson() {
  return {
    chains: [
      {
        chainId: anvil.chainId,
        rpcUrl: anvil.url,
        aave: [{ pool: aave.pool }],
        // No BTC/USD here: WBTC is priced by the pool's own oracle.
        chainlink: [
          { address: reserve('WETH').feed, pair: 'ETH/USD', heartbeatSeconds: 3600 },
          { address: reserve('USDC').feed, pair: 'USDC/USD', heartbeatSeconds: 86400 },
          { address: reserve('DAI').feed, pair: 'DAI/USD', heartbeatSeconds: 86400 },
        ],
      },
    ],
  };
}

/** The USDC reserve's supply and variable debt at a block, in USDC. */
async function usdcTotals(block: bigint) {
  const total = async (token: `0x${string}`, abi: AaveMarket['aTokenAbi']) =>
    Number(await readAt<bigint>(anvil, token, abi, 'totalSupply', [], block)) / 1e6;
  return {
    supplied: await total(aave.reserves.USDC.aToken, aave.aTokenAbi),
    borrowed: await total(aave.reserves.USDC.variableDebt, aave.variableDebtAbi),
  };
}

/** Aave's own account data at a block (`getUserAccountData`: base currency 8 decimals, health 1e18). */
async function accountData(user: string, block?: bigint) {
  const [collateral, debt, , threshold, , hf] = await readAt<readonly bigint[]>(
    anvil,
    aave.pool,
    aave.poolAbi,
    'getUserAccountData',
    [user],
    block,
  );
  return { collateral: collateral!, debt: debt!, threshold: threshold!, hf: hf!, health: Number(hf!) / 1e18 };
}

describe('Aave v3 on a local chain', () => {
  const suite = liveChainSuite(() => anvil, 'lrds-aave-', sourcesJson);
  const { get } = suite;
  const run = (list: ChainSource[]) => suite.pass(list);
  const pass = () => suite.pass();
  const positionsOf = async (user: string) => (await get(`/positions?address=${user}`)).data as Position[];
  /** A new process whose RPC answers nothing of the pool (its calls sent to an address without code). */
  const refusingPool = (json: unknown) => {
    const dead = '000000000000000000000000000000000000dead';
    const poolHex = aave.pool.toLowerCase().slice(2);
    return chainSources(parseSources(json, 'test'), {
      transport: () =>
        custom({
          async request({ method, params }) {
            if (method === 'eth_call') {
              const [call, ...rest] = params as [{ to?: string; data?: string }, ...unknown[]];
              const data = call.data?.toLowerCase().replaceAll(poolHex, dead);
              const to = call.to?.toLowerCase() === aave.pool.toLowerCase() ? `0x${dead}` : call.to;
              return anvil.client().request({ method, params: [{ ...call, to, data }, ...rest] } as never);
            }
            return anvil.client().request({ method, params } as never);
          },
        }),
    });
  };
  const sourceRow = async () => (await suite.store.listSources()).find((x) => x.id === 'chain:31337')!;

  test("default: one market per pair, each position with the chain's exact amounts and Aave's own health factor", async () => {
    const block = await pass();
    const onChain = await accountData(users[1]!, block);
    const mine = await positionsOf(users[1]!);
    // two collaterals × two debts
    assert.deepEqual(
      mine.map((p) => p.market.uniqueKey).sort(),
      [keyOf('WETH', 'USDC'), keyOf('WETH', 'DAI'), keyOf('WBTC', 'USDC'), keyOf('WBTC', 'DAI')].sort(),
    );
    for (const p of mine)
      assert.ok(Math.abs(p.healthFactor / onChain.health - 1) < 5e-8, `${p.healthFactor}`);
    // the positions sum to the account's collateral and debt (all prices $1 or feeds: USD = base)
    const collateral = mine.reduce((s, p) => s + p.state.collateralUsd, 0);
    const debt = mine.reduce((s, p) => s + p.state.borrowAssetsUsd, 0);
    assert.ok(Math.abs(collateral - Number(onChain.collateral) / 1e8) < 0.05, `${collateral}`);
    assert.ok(Math.abs(debt - Number(onChain.debt) / 1e8) < 0.05, `${debt}`);
    // WBTC, without a feed in the file, by the pool's oracle: $60,000
    assert.equal(mine.find((p) => p.market.uniqueKey === keyOf('WBTC', 'USDC'))!.collateralPrice, 60_000);
    // the e-mode account: its category's 95 % threshold, not DAI's 78 %
    const e = await accountData(users[4]!, block);
    assert.equal(e.threshold, 9500n);
    const [ep] = await positionsOf(users[4]!);
    assert.equal(ep!.market.uniqueKey, keyOf('DAI', 'USDC'));
    assert.ok(Math.abs(ep!.healthFactor / e.health - 1) < 5e-8, `${ep!.healthFactor} vs ${e.health}`);
    // a supplier without debt holds no position
    assert.equal((await positionsOf(users[5]!)).length, 0);

    const market = (await get(`/markets/${keyOf('WETH', 'USDC')}`)).data;
    assert.deepEqual(
      [market.protocol, market.collateral, market.loan, market.lltv, market.oracle.type],
      ['aave', 'WETH', 'USDC', 0.825, 'ChainlinkOracle'],
    );
    // the oracle's sources are the feeds behind the market
    assert.deepEqual(
      market.oracle.feeds.map((f: { address: string }) => f.address),
      [reserve('WETH').feed.toLowerCase(), reserve('USDC').feed.toLowerCase()],
    );
    // the pairs lending USDC sum to the reserve's supply and its borrowers' debts
    const usdcPairs = (await get('/markets?chainIds=31337&limit=100')).data.filter(
      (m: { loanAddress: string }) => m.loanAddress === reserve('USDC').asset.toLowerCase(),
    );
    assert.equal(usdcPairs.length, 3); // WETH, WBTC, DAI as collateral
    const { supplied, borrowed } = await usdcTotals(block);
    const sum = (k: 'supply' | 'borrow') =>
      usdcPairs.reduce((s: number, m: Record<string, number>) => s + m[k]!, 0);
    assert.ok(Math.abs(sum('supply') - supplied) < 0.05, `${sum('supply')} vs ${supplied}`);
    assert.ok(Math.abs(sum('borrow') - borrowed) < 0.05, `${sum('borrow')} vs ${borrowed}`);
    // APYs: the reserve's rates compounded every second for a year, as Aave states them
    const data = await readAt<{ currentLiquidityRate: bigint; currentVariableBorrowRate: bigint }>(
      anvil,
      aave.pool,
      aave.poolAbi,
      'getReserveData',
      [reserve('USDC').asset],
      block,
    );
    const apy = (rate: bigint) =>
      Math.expm1(SECONDS_PER_YEAR * Math.log1p(Number(rate) / 1e27 / SECONDS_PER_YEAR));
    assert.ok(Math.abs(market.borrowApy - apy(data.currentVariableBorrowRate)) < 1e-8);
    assert.ok(Math.abs(market.supplyApy - apy(data.currentLiquidityRate)) < 1e-8);
    assert.ok(market.borrowApy > 0 && market.supplyApy > 0);
  });

  test("behavior: the reader's health factors are getUserAccountData's to the unit", async () => {
    const rpc = createChainRpc(anvil.chainId, anvil.url);
    const head = await anvil.client().getBlockNumber({ cacheTime: 0 });
    const out = await readAave(
      rpc,
      [{ pool: aave.pool.toLowerCase(), from: aave.deployBlock }],
      { block: head },
      [],
    );
    assert.deepEqual(out.failures, []);
    const pool = out.pools[0]!;
    const held = [...pool.accounts].flatMap(([user, account]) => (account ? [{ user, account }] : []));
    assert.deepEqual(held.map((a) => a.user).sort(), [users[1], users[4]].sort());
    for (const { user, account } of held) {
      const v = accountValues(pool, account);
      const onChain = await accountData(user, head);
      assert.equal(v.healthFactor, onChain.hf, user);
      const debt = [...v.debt.values()].reduce((s, d) => s + d.value, 0n);
      assert.equal(debt, onChain.debt);
    }
    // the APY is math-utils' compounding of the APR
    const exact = Math.expm1(SECONDS_PER_YEAR * Math.log1p(0.1 / SECONDS_PER_YEAR));
    assert.ok(Math.abs(aaveApy(10n ** 26n) - exact) < 1e-12, `${aaveApy(10n ** 26n)} vs ${exact}`);
  });

  test('behavior: health follows the price without reading accounts; an aToken transfer moves collateral', async () => {
    await setPrice(anvil, aave, 'WETH', 1_500n * 10n ** 8n);
    const block = await pass();
    assert.equal(suite.sources[0]!.lastRun()!.positionsRead, 0);
    const onChain = await accountData(users[1]!, block);
    for (const p of await positionsOf(users[1]!))
      assert.ok(
        Math.abs(p.healthFactor / onChain.health - 1) < 5e-8,
        `${p.healthFactor} vs ${onChain.health}`,
      );
    // Account 1 sends 2 aWETH to account 5: only the aToken's BalanceTransfer names it.
    await sendTx(anvil, 1, reserve('WETH').aToken, aave.aTokenAbi, 'transfer', [users[5], 2n * WAD]);
    const after = await pass();
    assert.equal(suite.sources[0]!.lastRun()!.positionsRead, 2);
    const moved = await accountData(users[1]!, after);
    assert.ok(moved.health < onChain.health);
    for (const p of await positionsOf(users[1]!))
      assert.ok(Math.abs(p.healthFactor / moved.health - 1) < 5e-8, `${p.healthFactor} vs ${moved.health}`);
  });

  test("behavior: a liquidation is recorded in its pair at its block's prices; a reorganization rolls it back", async () => {
    // ETH at $1,100 and BTC at $20,000: account 1 is liquidatable.
    await setPrice(anvil, aave, 'WETH', 1_100n * 10n ** 8n);
    await setPrice(anvil, aave, 'WBTC', 20_000n * 10n ** 8n);
    await pass();
    const before = await accountData(users[1]!);
    assert.ok(before.health < 1);
    const atRisk = (await get('/risk/positions-at-risk?chainIds=31337&healthFactorThreshold=1')).data;
    assert.deepEqual(
      [...new Set(atRisk.map((x: { user: { address: string } }) => x.user.address))],
      [users[1]],
    );
    // Account 3 repays 5,000 USDC and takes WETH at 5 % bonus; then ETH moves again before the pass.
    const receipt = await liquidate(anvil, aave, 3, 'WETH', 'USDC', users[1]!, 5_000n * USDC);
    await setPrice(anvil, aave, 'WETH', 1_000n * 10n ** 8n);
    await pass();
    const list = (await get('/liquidations?chainIds=31337')).data;
    assert.equal(list.length, 1);
    const l = list[0];
    const seized = (5_000 / 1_100) * 1.05;
    assert.deepEqual(
      [l.protocol, l.marketId, l.txHash, l.block, l.borrower, l.liquidator, l.debtRepaid, l.badDebt],
      [
        'aave',
        keyOf('WETH', 'USDC'),
        receipt.transactionHash,
        Number(receipt.blockNumber),
        users[1],
        users[3],
        5000,
        0,
      ],
    );
    assert.ok(Math.abs(l.collateralSeized / seized - 1) < 5e-8, String(l.collateralSeized));
    // at the liquidation block's $1,100, not the pass's $1,000
    assert.ok(Math.abs(l.collateralSeizedUsd - seized * 1_100) < 0.01, String(l.collateralSeizedUsd));
    const onChain = await accountData(users[1]!);
    for (const p of await positionsOf(users[1]!))
      assert.ok(Math.abs(p.healthFactor / onChain.health - 1) < 5e-8);

    // The liquidation's blocks are orphaned: it goes, and the account is read again as it was.
    const head = await anvil.client().getBlockNumber({ cacheTime: 0 });
    await anvil.client().request({
      method: 'anvil_reorg' as never,
      params: [Number(head - receipt.blockNumber) + 1, []] as never,
    });
    await pass();
    assert.equal((await get('/liquidations?chainIds=31337')).data.length, 0);
    const back = await accountData(users[1]!);
    assert.ok(back.debt > onChain.debt);
    for (const p of await positionsOf(users[1]!))
      assert.ok(Math.abs(p.healthFactor / back.health - 1) < 5e-8);
  });

  test('behavior: a restarted process reads its accounts again from the checkpoint and its positions', async () => {
    const restarted = chainSources(parseSources(sourcesJson(), 'test'));
    await run(restarted);
    // both borrowers, and no one else (the supplier without debt is not kept)
    assert.equal(restarted[0]!.lastRun()!.positionsRead, 2);
    await borrow(anvil, aave, 4, 'USDC', 100n * USDC);
    await run(restarted);
    assert.equal(restarted[0]!.lastRun()!.positionsRead, 1);
    const e = await accountData(users[4]!);
    const [ep] = await positionsOf(users[4]!);
    assert.ok(Math.abs(ep!.healthFactor / e.health - 1) < 5e-8);
    // Account 4 repays everything: no position, and then nothing kept of it once settled.
    await sendTx(anvil, 2, reserve('USDC').asset, aave.tokenAbi, 'mint', [users[4], 20_000n * USDC]);
    await sendTx(anvil, 4, reserve('USDC').asset, aave.tokenAbi, 'approve', [aave.pool, maxUint256]);
    await sendTx(anvil, 4, aave.pool, aave.poolAbi, 'repay', [
      reserve('USDC').asset,
      maxUint256,
      2,
      users[4],
    ]);
    await run(restarted);
    assert.equal((await positionsOf(users[4]!)).length, 0);
  });

  test('behavior: a pool handed whole is then handed in part: the accounts a block names, the pairs still summing to the reserves', async () => {
    const pairsOf = async (loan: AaveSymbol) =>
      (await get('/markets?chainIds=31337&limit=100')).data.filter(
        (m: { loanAddress: string }) => m.loanAddress === reserve(loan).asset.toLowerCase(),
      ) as Record<string, number>[];
    const sum = (pairs: Record<string, number>[], k: string) => pairs.reduce((s, m) => s + m[k]!, 0);
    // (Another process wrote last: this one reads its accounts again and hands the pool whole.)
    await pass();
    assert.equal(suite.sources[0]!.lastRun()!.positions, 4);
    // A block with nothing of ours: no state read, and the next pass still hands in part.
    await anvil.client().mine({ blocks: 1 });
    await pass();
    assert.equal(suite.sources[0]!.lastRun()!.stateRead, false);
    // Account 5, which only supplied WETH, borrows DAI: its pair alone is handed.
    await borrow(anvil, aave, 5, 'DAI', 100n * WAD);
    await pass();
    assert.equal(suite.sources[0]!.lastRun()!.positions, 1);
    assert.deepEqual(
      (await positionsOf(users[5]!)).map((p) => p.market.uniqueKey),
      [keyOf('WETH', 'DAI')],
    );
    // Account 1 repays some USDC: its four pairs alone.
    await sendTx(anvil, 1, reserve('USDC').asset, aave.tokenAbi, 'approve', [aave.pool, maxUint256]);
    await sendTx(anvil, 1, aave.pool, aave.poolAbi, 'repay', [
      reserve('USDC').asset,
      1_000n * USDC,
      2,
      users[1],
    ]);
    const block = await pass();
    assert.equal(suite.sources[0]!.lastRun()!.positionsRead, 1);
    assert.equal(suite.sources[0]!.lastRun()!.positions, 4);
    const onChain = await accountData(users[1]!, block);
    const mine = await positionsOf(users[1]!);
    assert.equal(mine.length, 4);
    for (const p of mine)
      assert.ok(Math.abs(p.healthFactor / onChain.health - 1) < 5e-8, `${p.healthFactor}`);
    assert.ok(
      Math.abs(mine.reduce((s, p) => s + p.state.borrowAssetsUsd, 0) - Number(onChain.debt) / 1e8) < 0.05,
    );
    const { supplied, borrowed } = await usdcTotals(block);
    const usdc = await pairsOf('USDC');
    assert.ok(Math.abs(sum(usdc, 'borrow') - borrowed) < 0.05, `${sum(usdc, 'borrow')} vs ${borrowed}`);
    assert.ok(Math.abs(sum(usdc, 'supply') - supplied) < 0.05, `${sum(usdc, 'supply')} vs ${supplied}`);
    // Account 5 repays all: its pair is handed at zero, and it holds nothing.
    await sendTx(anvil, 2, reserve('DAI').asset, aave.tokenAbi, 'mint', [users[5], 1_000n * WAD]);
    await sendTx(anvil, 5, reserve('DAI').asset, aave.tokenAbi, 'approve', [aave.pool, maxUint256]);
    await sendTx(anvil, 5, aave.pool, aave.poolAbi, 'repay', [reserve('DAI').asset, maxUint256, 2, users[5]]);
    const repaid = await pass();
    assert.equal(suite.sources[0]!.lastRun()!.positions, 1);
    assert.equal((await positionsOf(users[5]!)).length, 0);
    const daiDebt =
      Number(
        await readAt<bigint>(
          anvil,
          reserve('DAI').variableDebt,
          aave.variableDebtAbi,
          'totalSupply',
          [],
          repaid,
        ),
      ) / 1e18;
    const dai = await pairsOf('DAI');
    assert.ok(Math.abs(sum(dai, 'borrow') - daiDebt) < 0.05, `${sum(dai, 'borrow')} vs ${daiDebt}`);
  });

  test("behavior: an e-mode category's price source prices its assets for its accounts (v3.0), read by a new process too", async () => {
    // Stablecoins' category priced by USDC's price: DAI at $0.90 counts as $1 for account 6.
    await sendTx(anvil, 0, aave.configurator, aave.configuratorAbi, 'setEModeCategory', [
      1,
      9300,
      9500,
      10100,
      reserve('USDC').asset,
      'Stablecoins',
    ]);
    await sendTx(anvil, 6, aave.pool, aave.poolAbi, 'setUserEMode', [1]);
    await supply(anvil, aave, 6, 'DAI', 10_000n * WAD);
    await borrow(anvil, aave, 6, 'USDC', 9_000n * USDC);
    await setPrice(anvil, aave, 'DAI', 90_000_000n);
    const block = await pass();
    const onChain = await accountData(users[6]!, block);
    assert.ok(Math.abs(onChain.health - (10_000 * 0.95) / 9_000) < 1e-4, String(onChain.health));
    const [p] = await positionsOf(users[6]!);
    assert.ok(
      Math.abs(p!.healthFactor / onChain.health - 1) < 5e-8,
      `${p!.healthFactor} vs ${onChain.health}`,
    );
    // A second category (WETH at 90 %), which account 0 borrows in.
    const zero = '0x0000000000000000000000000000000000000000';
    await sendTx(anvil, 0, aave.configurator, aave.configuratorAbi, 'setEModeCategory', [
      2,
      8500,
      9000,
      10100,
      zero,
      'ETH',
    ]);
    await sendTx(anvil, 0, aave.configurator, aave.configuratorAbi, 'setAssetEModeCategory', [
      reserve('WETH').asset,
      2,
    ]);
    await sendTx(anvil, 0, aave.pool, aave.poolAbi, 'setUserEMode', [2]);
    await supply(anvil, aave, 0, 'WETH', 10n * WAD);
    await borrow(anvil, aave, 0, 'WETH', 2n * WAD);
    const both = await pass();
    const eth = await accountData(users[0]!, both);
    assert.equal(eth.threshold, 9000n);
    // A new process meets both categories in its first read of the holders, then the first
    // category's price source, then reads its price: one pass.
    const fresh = chainSources(parseSources(sourcesJson(), 'test'));
    await run(fresh);
    for (const [user, health] of [
      [users[6]!, onChain.health],
      [users[0]!, eth.health],
    ] as const) {
      const [q] = await positionsOf(user);
      assert.ok(Math.abs(q!.healthFactor / health - 1) < 5e-8, `${user}: ${q!.healthFactor} vs ${health}`);
    }
  });

  test("behavior: the incentives controller's rewards are the markets' reward APRs, priced by its reward oracle", async () => {
    const art = compileContracts();
    const c = anvil.client(0);
    const rew = await deploy(c, art.TestToken!, ['Reward Token', 'REW', 18]);
    const rewUsd = await deploy(c, art.TestAggregator!, [8, 'REW / USD', 2n * 10n ** 8n]);
    const old = await deploy(c, art.TestToken!, ['Ended Reward', 'OLD', 18]);
    const head = await anvil.client().getBlock();
    const end = Number(head.timestamp) + 30 * 86_400;
    // USDC suppliers: 0.01 REW a second; USDC borrowers: 0.002 REW a second; an emission that ended.
    await addRewards(anvil, aave, {
      symbol: 'USDC',
      side: 'supply',
      reward: rew,
      oracle: rewUsd,
      perSecond: 10n ** 16n,
      end,
    });
    await addRewards(anvil, aave, {
      symbol: 'USDC',
      side: 'borrow',
      reward: rew,
      oracle: rewUsd,
      perSecond: 2n * 10n ** 15n,
      end,
    });
    await addRewards(anvil, aave, {
      symbol: 'USDC',
      side: 'supply',
      reward: old,
      oracle: rewUsd,
      perSecond: 10n ** 18n,
      end: Number(head.timestamp) - 1,
    });
    // (The incentives controller is not among the contracts whose logs are read: its emissions
    // are read once the state read last is old enough.)
    await mineOnceStateAged(anvil);
    const block = await pass();
    const { supplied, borrowed } = await usdcTotals(block);
    const market = (await get(`/markets/${keyOf('WETH', 'USDC')}`)).data;
    const year = 31_536_000;
    assert.ok(
      Math.abs(market.supplyRewardsApy - (0.01 * year * 2) / supplied) < 1e-8,
      String(market.supplyRewardsApy),
    );
    assert.ok(
      Math.abs(market.borrowRewardsApy - (0.002 * year * 2) / borrowed) < 1e-8,
      String(market.borrowRewardsApy),
    );
    assert.deepEqual(market.rewardTokens, ['REW']);
    // a pair lending another reserve earns none
    const weth = (await get(`/markets/${keyOf('USDC', 'WETH')}`)).data;
    assert.deepEqual([weth.supplyRewardsApy, weth.borrowRewardsApy, weth.rewardTokens], [0, 0, []]);
    // a new process reads them in its first pass too (the lists, then the oracles and tokens)
    await run(chainSources(parseSources(sourcesJson(), 'test')));
    const again = (await get(`/markets/${keyOf('WETH', 'USDC')}`)).data;
    assert.ok(Math.abs(again.supplyRewardsApy - market.supplyRewardsApy) < 1e-8);
  });

  test("behavior: a liquidation whose block the RPC no longer keeps is priced at the pass's prices, and the pass says so", async () => {
    // A node that prunes state: any eth_call at or below `pruned` is refused as geth refuses it.
    let pruned = -1n;
    const refusedAt = new Set<bigint>();
    const transport = custom({
      async request({ method, params }: { method: string; params?: unknown }) {
        const tag = Array.isArray(params) ? params[1] : undefined;
        if (
          method === 'eth_call' &&
          typeof tag === 'string' &&
          tag.startsWith('0x') &&
          BigInt(tag) <= pruned
        ) {
          refusedAt.add(BigInt(tag));
          throw new Error('missing trie node 1f2e (path ) state is not available');
        }
        const res = await fetch(anvil.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
        });
        const body = (await res.json()) as { result?: unknown; error?: { code: number; message: string } };
        if (body.error) throw Object.assign(new Error(body.error.message), body.error);
        return body.result;
      },
    });
    const pruning = chainSources(parseSources(sourcesJson(), 'test'), { transport: () => transport });
    await run(pruning);
    // ETH at $1,000, BTC at $20,000: account 1 is liquidatable again; liquidated, then ETH moves.
    assert.ok((await accountData(users[1]!)).health < 1);
    const earlier = await liquidate(anvil, aave, 3, 'WETH', 'USDC', users[1]!, 1_000n * USDC);
    const receipt = await liquidate(anvil, aave, 3, 'WETH', 'USDC', users[1]!, 1_000n * USDC);
    await setPrice(anvil, aave, 'WETH', 900n * 10n ** 8n);
    pruned = receipt.blockNumber;
    const { out, failed: named } = await passAtHead(anvil, pruning, suite.store, suite.clock, suite.service);
    assert.equal(out.runs[0]!.ok, true);
    assert.deepEqual(
      named.map((i) => i.id),
      ['aave:prices-at-blocks'],
    );
    assert.match(
      named[0]!.ok ? '' : named[0]!.error,
      new RegExp(
        `2 liquidation blocks \\(${earlier.blockNumber} to ${receipt.blockNumber}\\) .* missing trie node`,
      ),
    );
    // newest first: the older block was not asked once the newer one's state was missing
    assert.deepEqual([...refusedAt], [receipt.blockNumber]);
    const l = (await get('/liquidations?chainIds=31337')).data.find(
      (x: { txHash: string }) => x.txHash === receipt.transactionHash,
    );
    // at the pass's $900 (the block's $1,000 could not be read)
    assert.ok(
      Math.abs(l.collateralSeizedUsd - l.collateralSeized * 900) < 0.01,
      String(l.collateralSeizedUsd),
    );
  });

  test('error: an address in `aave` that is no pool is named in the pass; the real pool is still served', async () => {
    const json = sourcesJson();
    // A token, and an account without code, listed as pools.
    Object.assign(json.chains[0]!, {
      aave: [{ pool: aave.pool }, { pool: reserve('USDC').asset }, { pool: users[5] }],
    });
    const mixed = chainSources(parseSources(json, 'test'));
    const { out, failed: named } = await passAtHead(anvil, mixed, suite.store, suite.clock, suite.service);
    assert.equal(out.runs[0]!.ok, true);
    assert.deepEqual(
      named.map((i) => i.id).sort(),
      [`aave:${reserve('USDC').asset.toLowerCase()}`, `aave:${users[5]}`].sort(),
    );
    for (const i of named) assert.match(i.ok ? '' : i.error, /not an Aave v3 pool/);
    assert.ok((await positionsOf(users[1]!)).length > 0);
  });

  test('behavior: a pool added to the file later walks its logs syncBlocks a pass, each stored, while the chain goes on; the end is the one-pass read', async () => {
    const rpc = createChainRpc(anvil.chainId, anvil.url);
    const start = await deploymentBlock(rpc, aave.pool, await anvil.client().getBlockNumber());
    // (One process throughout: its caches kept between passes.)
    const passes = await walkAddedLater(anvil, {
      oneProcess: true,
      sources: sourcesJson,
      without: { aave: [] },
      start,
      walkKey: `aave:aave:${aave.pool.toLowerCase()}:deployment`,
      addresses: users,
      // Account 4 borrows more in a block the walk has not reached: read once it does.
      during: async (pass) => {
        if (pass === 2) await borrow(anvil, aave, 4, 'USDC', 100n * USDC);
      },
    });
    assert.ok(passes >= 4, `${passes} passes`);
  });

  test('behavior: a pool read before that a pass could not list walks its logs from the first it did not read, not from its start', async () => {
    const last = await pass();
    // A new process whose RPC answers nothing of the pool for one pass: the pool is not listed,
    // its logs not read.
    const refusing = refusingPool(sourcesJson());
    // Account 4 borrows in the block that pass reads.
    const borrowed = await borrow(anvil, aave, 4, 'USDC', 10n * USDC);
    const { out, failed } = await passAtHead(anvil, refusing, suite.store, suite.clock, suite.service);
    assert.equal(out.runs[0]!.ok, true, out.runs[0]!.error ?? '');
    assert.deepEqual(
      failed.map((f) => f.id),
      [`aave:${aave.pool.toLowerCase()}`],
    );
    const key = `aave:${aave.pool.toLowerCase()}:deployment`;
    const cursor = JSON.parse((await suite.store.listSources()).find((x) => x.id === 'chain:31337')!.cursor!);
    assert.deepEqual([cursor.aave, cursor.aaveFrom], [[], { [key]: Number(last) + 1 }]);
    assert.equal(borrowed.blockNumber, last + 1n);
    await mineOnceStateAged(anvil);
    // A new process: the pool's logs from that block (its own walk), the others' after the last.
    const spied = logSpiedSources(anvil, sourcesJson());
    await run(spied.sources);
    assert.ok(spied.logsFrom.includes(last + 1n), String(spied.logsFrom));
    assert.ok(
      spied.logsFrom.every((b) => b > last),
      String(spied.logsFrom),
    );
    const after = (await suite.store.listSources()).find((x) => x.id === 'chain:31337')!;
    assert.equal(after.sync, undefined);
    assert.deepEqual(JSON.parse(after.cursor!).aave, [key]);
    // The borrow in the block that pass left is served.
    const onChain = await accountData(users[4]!);
    const debt = (await positionsOf(users[4]!)).reduce((s, p) => s + p.state.borrowAssetsUsd, 0);
    assert.ok(Math.abs(debt - Number(onChain.debt) / 1e8) < 0.01, `${debt} vs ${onChain.debt}`);
  });

  test('behavior: a pool walking its logs that a pass could not list ends its walk, the chain not syncing for it, and walks on later from its first block unread', async () => {
    const rpc = createChainRpc(anvil.chainId, anvil.url);
    const start = await deploymentBlock(rpc, aave.pool, await anvil.client().getBlockNumber());
    const key = `aave:${aave.pool.toLowerCase()}:deployment`;
    // The pool taken out of the file, then added again: its logs walked a third a pass.
    const without = sourcesJson();
    without.chains[0]!.aave = [];
    await run(chainSources(parseSources(without, 'test')));
    await mineOnceStateAged(anvil);
    const json = sourcesJson();
    const third = Math.ceil(Number((await anvil.client().getBlockNumber()) - start) / 3);
    Object.assign(json.chains[0]!, { syncBlocks: third });
    await run(chainSources(parseSources(json, 'test')));
    const walking = await sourceRow();
    assert.ok(walking.sync, 'the walk is a sync of the chain');
    const through: number = JSON.parse(walking.cursor!).walks[`aave:${key}`].throughBlock;
    assert.equal(through, Number(start) + third - 1);
    // A pass that cannot list the pool: the walk ends where it stood, kept in aaveFrom.
    await mineOnceStateAged(anvil);
    const { out, failed } = await passAtHead(
      anvil,
      refusingPool(json),
      suite.store,
      suite.clock,
      suite.service,
    );
    assert.equal(out.runs[0]!.ok, true, out.runs[0]!.error ?? '');
    assert.deepEqual(
      failed.map((f) => f.id),
      [`aave:${aave.pool.toLowerCase()}`],
    );
    const ended = await sourceRow();
    assert.equal(ended.sync, undefined);
    const cursor = JSON.parse(ended.cursor!);
    assert.deepEqual(
      [cursor.walks?.[`aave:${key}`], cursor.aaveFrom, cursor.aave],
      [undefined, { [key]: through + 1 }, []],
    );
    // Later passes walk on from that block until the pool has caught up.
    const spied = logSpiedSources(anvil, json);
    let passes = 0;
    do {
      assert.ok(++passes < 10, 'the walk ends');
      await mineOnceStateAged(anvil);
      await run(spied.sources);
    } while ((await sourceRow()).sync);
    assert.ok(spied.logsFrom.includes(BigInt(through + 1)), String(spied.logsFrom));
    assert.ok(
      spied.logsFrom.every((b) => b > through),
      String(spied.logsFrom),
    );
    assert.deepEqual(JSON.parse((await sourceRow()).cursor!).aave, [key]);
    for (const user of users) {
      const onChain = await accountData(user);
      const debt = (await positionsOf(user)).reduce((s, p) => s + p.state.borrowAssetsUsd, 0);
      assert.ok(Math.abs(debt - Number(onChain.debt) / 1e8) < 0.01, `${user}: ${debt} vs ${onChain.debt}`);
    }
  });
});

test('behavior: deficits (v3.3) are the bad debt of their liquidation, or a liquidation of their own debt', () => {
  const pool = '0xpool';
  const l = {
    pool,
    txHash: '0xt',
    logIndex: 5,
    block: 10,
    collateral: '0xc',
    debt: '0xd',
    user: '0xu',
    liquidator: '0xl',
    seized: 100n,
    repaid: 50n,
    deficit: 0n,
  };
  const deficit = (logIndex: number, debtAsset: string, amountCreated: bigint, user = '0xu') => ({
    address: pool,
    eventName: 'DeficitCreated',
    transactionHash: '0xt',
    logIndex,
    args: { user, debtAsset, amountCreated },
  });
  const out = withDeficits(
    [l],
    [deficit(3, '0xd', 7n), deficit(4, '0xe', 9n), deficit(6, '0xd', 1n, '0xother')],
    new Map([[pool, pool]]),
  );
  assert.deepEqual(
    out.map((x) => [x.logIndex, x.debt, x.repaid, x.seized, x.deficit]),
    [
      [5, '0xd', 50n, 100n, 7n],
      [4, '0xe', 0n, 0n, 9n],
    ],
  );
});

describe('an Aave pool whose oracle does not price in USD (docs/decisions.md "Real sources")', () => {
  // A second pool whose oracle's base currency is WETH (unit 1e18): its reserves' feeds are
  // read as prices in WETH. The file has ETH/USD and DAI/USD, and no USDC/USD: the pairs of
  // WETH and DAI are priced, those of USDC not.
  let eth: AaveMarket;
  let usdcUsd: `0x${string}`;
  before(async () => {
    eth = await deployAave(anvil, { baseCurrency: 'WETH' });
    usdcUsd = await deploy(anvil.client(0), compileContracts().TestAggregator!, [8, 'USDC / USD', 10n ** 8n]);
    await supply(anvil, eth, 2, 'USDC', 100_000n * USDC);
    await supply(anvil, eth, 3, 'WETH', WAD);
    await borrow(anvil, eth, 3, 'USDC', 1_000n * USDC);
    await supply(anvil, eth, 5, 'WETH', 10n * WAD);
    await borrow(anvil, eth, 5, 'USDC', 100n * USDC);
    // borrower 6 owes DAI against WETH: a pair with both prices
    await supply(anvil, eth, 2, 'DAI', 100_000n * WAD);
    await supply(anvil, eth, 6, 'WETH', WAD);
    await borrow(anvil, eth, 6, 'DAI', 500n * WAD);
  });
  const json = (withUsdc: boolean) => ({
    chains: [
      {
        chainId: anvil.chainId,
        rpcUrl: anvil.url,
        aave: [{ pool: eth.pool }],
        chainlink: [
          { address: eth.reserves.WETH.feed, pair: 'ETH/USD', heartbeatSeconds: 3600 },
          { address: eth.reserves.DAI.feed, pair: 'DAI/USD', heartbeatSeconds: 86400 },
          ...(withUsdc ? [{ address: usdcUsd, pair: 'USDC/USD', heartbeatSeconds: 86400 }] : []),
        ],
      },
    ],
  });
  const suite = liveChainSuite(
    () => anvil,
    'lrds-aave-eth-',
    () => json(false),
  );
  const { get } = suite;
  const pair = (c: AaveSymbol, d: AaveSymbol) =>
    `aave-31337-${eth.pool.toLowerCase()}_${eth.reserves[c].asset.toLowerCase()}_${eth.reserves[d].asset.toLowerCase()}`;

  test('behavior: its markets are served with what is known, its accounts followed; a liquidation is recorded, its USDC of no USD value', async () => {
    const m = (await get(`/markets/${pair('WETH', 'USDC')}`)).data;
    assert.deepEqual([m.collateralPrice, m.loanPrice, m.supply, m.borrow], [2000, null, null, null]);
    // the reserve's supply, split among its pairs by their borrow: this pair holds all of it
    assert.ok(
      Math.abs(m.supplyAssets - 100_000) < 0.01 && Math.abs(m.borrowAssets - 1_100) < 0.01,
      JSON.stringify(m),
    );
    const usdLoan = (await get(`/markets/${pair('USDC', 'WETH')}`)).data;
    assert.deepEqual([usdLoan.collateralPrice, usdLoan.loanPrice], [null, 2000]);
    const dai = (await get(`/markets/${pair('WETH', 'DAI')}`)).data;
    assert.deepEqual([dai.collateralPrice, dai.loanPrice], [2000, 1]);
    // a position on a pair with both prices is served, in a pool served in part
    const [p6] = (await get(`/positions?address=${users[6]}`)).data;
    assert.equal(p6.market.uniqueKey, pair('WETH', 'DAI'));
    assert.ok(Math.abs(p6.state.borrowAssetsUsd - 500) < 0.01, JSON.stringify(p6.state));
    for (const u of [users[3], users[5]]) assert.deepEqual((await get(`/positions?address=${u}`)).data, []);

    // USDC is worth 0.001 WETH to the pool: borrower 3 (1 WETH against 1,000 USDC) is liquidated.
    await setPrice(anvil, eth, 'USDC', 10n ** 15n);
    const receipt = await liquidate(anvil, eth, 4, 'WETH', 'USDC', users[3]!, maxUint256);
    await suite.pass();
    const [l] = (await get(`/liquidations?marketId=${pair('WETH', 'USDC')}`)).data;
    assert.deepEqual([l.txHash, l.borrower, l.debtRepaidUsd], [receipt.transactionHash, users[3], null]);
    assert.ok(l.debtRepaid > 0 && l.collateralSeized > 0, JSON.stringify(l));
    assert.ok(Math.abs(l.collateralSeizedUsd - l.collateralSeized * 2000) < 0.01, JSON.stringify(l));

    // USDC/USD added: the pool is priced whole, with the borrower it followed meanwhile.
    await setPrice(anvil, eth, 'USDC', 10n ** 8n);
    suite.sources = chainSources(parseSources(json(true), 'test'));
    await suite.pass();
    const priced = (await get(`/markets/${pair('WETH', 'USDC')}`)).data;
    assert.deepEqual([priced.loanPrice, priced.collateralPrice], [1, 2000]);
    const [p] = (await get(`/positions?address=${users[5]}`)).data;
    assert.equal(p.market.uniqueKey, pair('WETH', 'USDC'));
    assert.ok(p.state.borrowAssetsUsd > 0, JSON.stringify(p.state));
  });
});
