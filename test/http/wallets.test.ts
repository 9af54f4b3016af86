import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../clock.ts';
import {
  createTestApp,
  GENEROUS_TIERS,
  makeMarket,
  makePosition,
  modelOf,
  type TestApp,
} from '../helpers.ts';

/**
 * GET /positions?address= and GET /portfolios/{address}: one wallet with positions on two chains
 * and two protocols, every figure checked by hand.
 */

const clock = new ManualClock('2026-11-22T12:00:00Z');
const WALLET = '0x00000000000000000000000000000000000000a1';
const OTHER = '0x00000000000000000000000000000000000000b2';
// Ethereum, morpho: wstETH at 4000, WETH at 3300, lltv 0.86
const eth = makeMarket({ lltv: 0.86, collateralPrice: 4000 });
// Base, aave: WBTC collateral at 90,000, USDC loan at 1, lltv 0.8
const base = makeMarket({
  protocol: 'aave',
  chainId: 8453,
  uniqueKey: 'aave-8453-0xpool_0xcbb_0xusdc',
  collateral: 'WBTC',
  collateralAddress: '0x00000000000000000000000000000000000000cb',
  loan: 'USDC',
  loanAddress: '0x00000000000000000000000000000000000000cc',
  collateralPrice: 90_000,
  loanPrice: 1,
  lltv: 0.8,
});
// A lending-only market on Ethereum.
const lend = makeMarket({
  lltv: 0.9,
  loan: 'USDC',
  loanAddress: '0x00000000000000000000000000000000000000dd',
});

// HF = 10,000 x 0.86 / 8,000 = 1.075
const pEth = makePosition(eth, { user: WALLET, collateralUsd: 10_000, borrowUsd: 8_000 });
// HF = 50,000 x 0.8 / 20,000 = 2
const pBase = makePosition(base, { user: WALLET, collateralUsd: 50_000, borrowUsd: 20_000 });
// Supply only: no debt, no health factor
const pLend = makePosition(lend, {
  user: WALLET,
  collateralUsd: 0,
  borrowUsd: 0,
  supplyUsd: 5_000,
  healthFactor: Number.POSITIVE_INFINITY,
});
const pOther = makePosition(eth, { user: OTHER });

let t: TestApp;
let pro: string;
let free: string;

before(async () => {
  t = await createTestApp({
    clock,
    tiers: GENEROUS_TIERS,
    live: modelOf([eth, base, lend], [pEth, pBase, pLend, pOther], clock),
  });
  pro = await t.key('pro');
  free = await t.key('free');
});
after(() => t.close());

describe('GET /positions', () => {
  test('default: every position of the wallet, by market key, with its liquidation price', async () => {
    const res = await t.get(`/api/v1/positions?address=${WALLET.toUpperCase().replace('0X', '0x')}`, pro);
    assert.equal(res.statusCode, 200);
    const body = res.json();
    const keys = [eth.uniqueKey, base.uniqueKey, lend.uniqueKey].sort();
    assert.deepEqual(
      body.data.map((p: { market: { uniqueKey: string } }) => p.market.uniqueKey),
      keys,
    );
    assert.equal(body.meta.total, 3);
    assert.equal(body.meta.nextCursor, undefined);
    const e = body.data.find((p: { market: { uniqueKey: string } }) => p.market.uniqueKey === eth.uniqueKey);
    assert.deepEqual(e, {
      protocol: 'morpho',
      chainId: 1,
      user: { address: WALLET },
      healthFactor: 1.075,
      state: { collateralUsd: 10_000, borrowAssetsUsd: 8_000, supplyAssetsUsd: 0 },
      market: {
        uniqueKey: eth.uniqueKey,
        collateralAsset: { symbol: 'wstETH' },
        loanAsset: { symbol: 'WETH' },
        lltv: 0.86,
      },
      leverage: 5, // 10,000 / 2,000
      distanceToLiq: 0.06976744, // 1 - 1 / 1.075
      collateralPrice: 4000,
      liquidationPrice: 3720.9302, // 4000 / 1.075, 8 significant digits
      liquidationPriceToken: { address: eth.collateralAddress, symbol: 'wstETH' },
    });
    const l = body.data.find((p: { market: { uniqueKey: string } }) => p.market.uniqueKey === lend.uniqueKey);
    assert.equal(l.healthFactor, null);
    assert.equal(l.liquidationPrice, null);
    assert.equal(l.liquidationPriceToken, null);
    assert.equal(l.distanceToLiq, null);
    assert.equal(l.state.supplyAssetsUsd, 5_000);
  });

  test('behavior: asset names the token whose liquidation price is asked (collateral or debt)', async () => {
    const get = async (asset: string) =>
      (await t.get(`/api/v1/positions?address=${WALLET}&asset=${asset}`, pro))
        .json()
        .data.map((p: { market: { uniqueKey: string }; liquidationPrice: number | null }) => [
          p.market.uniqueKey,
          p.liquidationPrice,
        ]);
    // WETH is the debt of the Ethereum position: 3300 x 1.075; the others do not hold it
    assert.deepEqual(
      new Map(await get(eth.loanAddress.toUpperCase().replace('0X', '0x'))),
      new Map([
        [eth.uniqueKey, 3547.5],
        [base.uniqueKey, null],
        [lend.uniqueKey, null],
      ]),
    );
    // WBTC, the Base position's collateral: 90,000 / 2
    assert.deepEqual(new Map(await get(base.collateralAddress)).get(base.uniqueKey), 45_000);
    // The answer names the token whose price it is: the debt's here.
    const named = (await t.get(`/api/v1/positions?address=${WALLET}&asset=${eth.loanAddress}`, pro))
      .json()
      .data.find((p: { market: { uniqueKey: string } }) => p.market.uniqueKey === eth.uniqueKey);
    assert.deepEqual(named.liquidationPriceToken, { address: eth.loanAddress, symbol: 'WETH' });
  });

  test('behavior: pages by cursor, none repeated or skipped, no cursor on the last page', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 5; page++) {
      const res = await t.get(
        `/api/v1/positions?address=${WALLET}&limit=1${cursor ? `&cursor=${cursor}` : ''}`,
        pro,
      );
      assert.equal(res.statusCode, 200);
      const body = res.json();
      seen.push(...body.data.map((p: { market: { uniqueKey: string } }) => p.market.uniqueKey));
      cursor = body.meta.nextCursor;
      if (!cursor) break;
    }
    assert.deepEqual(seen, [eth.uniqueKey, base.uniqueKey, lend.uniqueKey].sort());
  });

  test('behavior: a Free key sees its chains only; chainIds and protocol filter', async () => {
    const res = await t.get(`/api/v1/positions?address=${WALLET}`, free);
    assert.deepEqual(
      res.json().data.map((p: { chainId: number }) => p.chainId),
      [1, 1],
    );
    const aave = await t.get(`/api/v1/positions?address=${WALLET}&protocol=aave`, pro);
    assert.deepEqual(
      aave.json().data.map((p: { market: { uniqueKey: string } }) => p.market.uniqueKey),
      [base.uniqueKey],
    );
    const empty = await t.get(`/api/v1/positions?address=0x${'0'.repeat(40)}`, pro);
    assert.deepEqual(empty.json().data, []);
    assert.equal(empty.json().meta.total, 0);
  });

  test('error: a missing or malformed address, a cursor of another list', async () => {
    for (const qs of ['', 'address=0x123', 'address=nothex', `address=${WALLET}&cursor=abc`]) {
      const res = await t.get(`/api/v1/positions?${qs}`, pro);
      assert.equal(res.statusCode, 400, qs);
      assert.equal(res.json().error, 'INVALID_PARAMETER');
    }
    const tokens = (await t.get('/api/v1/tokens?limit=1', pro)).json().meta.nextCursor;
    const res = await t.get(`/api/v1/positions?address=${WALLET}&cursor=${tokens}`, pro);
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().details[0].parameter, 'cursor');
  });
});

describe('GET /portfolios/{address}', () => {
  test('default: totals, breakdowns, weakest position and liquidation moves, by hand', async () => {
    const res = await t.get(`/api/v1/portfolios/${WALLET}`, pro);
    assert.equal(res.statusCode, 200);
    const p = res.json().data;
    assert.equal(p.address, WALLET);
    assert.deepEqual(p.totals, {
      collateralUsd: 60_000,
      debtUsd: 28_000,
      supplyUsd: 5_000,
      netUsd: 37_000, // 60,000 + 5,000 - 28,000
      positions: 3,
      weakestHealthFactor: 1.075,
    });
    assert.equal(p.weakestPosition, eth.uniqueKey);
    assert.deepEqual(
      p.positions.map((x: { healthFactor: number | null }) => x.healthFactor),
      [1.075, 2, null],
    );
    assert.deepEqual(
      p.byChain.map((c: { chainId: number; netUsd: number }) => [c.chainId, c.netUsd]),
      [
        [8453, 30_000],
        [1, 7_000], // 10,000 + 5,000 - 8,000
      ],
    );
    assert.deepEqual(
      p.byProtocol.map((c: { protocol: string; weakestHealthFactor: number | null }) => [
        c.protocol,
        c.weakestHealthFactor,
      ]),
      [
        ['aave', 2],
        ['morpho', 1.075],
      ],
    );
    // wstETH falls 1 - 1/1.075 = 6.98 %; WETH debt rises 7.5 %; WBTC falls 50 %; USDC debt rises 100 %.
    assert.deepEqual(
      p.liquidationMoves.map(
        (m: { symbol: string; side: string; move: number; priceAtLiquidation: number }) => [
          m.symbol,
          m.side,
          m.move,
          m.priceAtLiquidation,
        ],
      ),
      [
        ['wstETH', 'collateral', -0.06976744, 3720.9302],
        ['WETH', 'debt', 0.075, 3547.5],
        ['WBTC', 'collateral', -0.5, 45_000],
        ['USDC', 'debt', 1, 2],
      ],
    );
  });

  test("behavior: scoped to the tier's chains; an empty wallet answers zeros", async () => {
    const onFree = (await t.get(`/api/v1/portfolios/${WALLET}`, free)).json().data;
    assert.equal(onFree.totals.positions, 2);
    assert.deepEqual(
      onFree.byChain.map((c: { chainId: number }) => c.chainId),
      [1],
    );
    const empty = (await t.get(`/api/v1/portfolios/0x${'0'.repeat(40)}`, pro)).json();
    assert.deepEqual(empty.data.totals, {
      collateralUsd: 0,
      debtUsd: 0,
      supplyUsd: 0,
      netUsd: 0,
      positions: 0,
      weakestHealthFactor: null,
    });
    assert.deepEqual(empty.data.liquidationMoves, []);
  });

  test('error: a malformed address is 400', async () => {
    const res = await t.get('/api/v1/portfolios/0xnothex', pro);
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error, 'INVALID_PARAMETER');
  });
});
