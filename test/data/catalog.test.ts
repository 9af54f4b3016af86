import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { Catalog } from '../../src/data/catalog.ts';
import { PROTOCOLS } from '../../src/domain/enums.ts';
import { significant } from '../../src/domain/precision.ts';
import { makeMarket } from '../helpers.ts';

const m = (collateral: string, loan: string, supply: number, extra = {}) =>
  makeMarket({
    collateral,
    loan,
    supply,
    borrow: 0,
    label: null,
    collateralName: collateral,
    loanName: loan,
    ...extra,
  });

describe('Catalog.search', () => {
  const usdc = m('WETH', 'USDC', 10);
  const usdce = m('WETH', 'USDC.e', 1000);
  const susdc = m('WETH', 'sUSDC', 5000);
  const catalog = new Catalog([usdc, usdce, susdc], 0);
  const keys = (q: string, limit = 50) =>
    catalog.search(q, {}, limit).map((o) => catalog.recordAt(o).uniqueKey);

  test('default: exact symbol > prefix > substring, supply within a tier', () => {
    assert.deepEqual(keys('usdc'), [usdc.uniqueKey, usdce.uniqueKey, susdc.uniqueKey]);
  });

  test('behavior: limit cuts in rank order', () => {
    assert.deepEqual(keys('usdc', 2), [usdc.uniqueKey, usdce.uniqueKey]);
  });

  test('behavior: case-insensitive, multi-term AND', () => {
    assert.deepEqual(keys('WeTh UsDc.E'), [usdce.uniqueKey]);
    assert.deepEqual(keys('weth nothing'), []);
  });

  test('behavior: agrees with a naive scan of every market', () => {
    const symbols = [
      'WETH',
      'wstETH',
      'USDC',
      'USDT',
      'sUSDe',
      'USDe',
      'WBTC',
      'cbBTC',
      'PT-sUSDE-27MAR2025',
    ];
    const marketArb = fc.record({
      collateral: fc.constantFrom(...symbols),
      loan: fc.constantFrom(...symbols),
      supply: fc.integer({ min: 0, max: 1e9 }),
      protocol: fc.constantFrom(...PROTOCOLS),
    });
    fc.assert(
      fc.property(
        fc.array(marketArb, { maxLength: 60 }),
        fc.uniqueArray(
          fc.constantFrom('usd', 'eth', 'weth', 'wsteth/weth', 'btc', 'pt', 'e', 'usdc', 'zzz'),
          {
            minLength: 1,
            maxLength: 3,
          },
        ),
        fc.integer({ min: 1, max: 20 }),
        (specs, terms, limit) => {
          const ms = specs.map((s) => m(s.collateral, s.loan, s.supply, { protocol: s.protocol }));
          const cat = new Catalog(ms, 0);
          const tier = (term: string, x: (typeof ms)[number]) => {
            const syms = [x.collateral, x.loan, `${x.collateral}/${x.loan}`].map((s) => s.toLowerCase());
            if (syms.includes(term)) return 3;
            const words = [
              ...syms,
              ...[x.collateralName, x.loanName].flatMap((n) => n.toLowerCase().split(/[^\p{L}\p{N}.+]+/u)),
            ];
            if (words.some((w) => w.startsWith(term))) return 2;
            if (words.some((w) => w.includes(term))) return 1;
            return 0;
          };
          const expected = ms
            .map((x) => ({ x, tiers: terms.map((t) => tier(t, x)) }))
            .filter((e) => e.tiers.every((t) => t > 0))
            .map((e) => ({
              key: e.x.uniqueKey,
              score: e.tiers.reduce<number>((a, b) => a + b, 0),
              supply: e.x.supply,
            }));
          const got = cat.search(terms.join(' '), {}, limit).map((o) => cat.recordAt(o).uniqueKey);
          const want = expected
            .sort((a, b) => b.score - a.score || b.supply! - a.supply! || (a.key < b.key ? -1 : 1))
            .slice(0, limit)
            .map((e) => e.key);
          assert.deepEqual(got, want);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('Catalog.list', () => {
  test('behavior: supply order across merged chain lists, offset and count', () => {
    const ms = [1, 10, 8453, 1, 10].map((chainId, i) => makeMarket({ chainId, supply: (i + 1) * 100 }));
    const catalog = new Catalog(ms, 0);
    const page = catalog.list({ chainIds: [1, 10] }, 1, 2).map((o) => catalog.recordAt(o).supply);
    assert.deepEqual(page, [400, 200]);
    assert.equal(catalog.count({ chainIds: [1, 10] }), 4);
    assert.equal(catalog.count({ protocol: 'aave' }), 0);
  });
});

describe('Catalog: a market without a USD price (docs/decisions.md "Real sources")', () => {
  const priced = makeMarket({ supply: 10 });
  const empty = makeMarket({ supply: 0, borrow: 0 });
  const unpriced = makeMarket({
    loanPrice: null,
    supply: null,
    borrow: null,
    supplyAssets: 500,
    borrowAssets: 125,
  });
  const noCollateralPrice = makeMarket({ collateralPrice: null, supply: 2_000, borrow: 1_000 });
  const catalog = new Catalog([unpriced, empty, priced, noCollateralPrice], 0);
  const view = (k: string) => catalog.viewAt(catalog.ordOf(k)!, 0);

  test('behavior: served with what is known: USD figures null (never 0), the token amounts, utilization in them', () => {
    const v = view(unpriced.uniqueKey);
    assert.deepEqual(
      [v.loanPrice, v.collateralPrice, v.supply, v.borrow, v.available],
      [null, 4000, null, null, null],
    );
    assert.deepEqual([v.supplyAssets, v.borrowAssets, v.utilization], [500, 125, 0.25]);
    // a collateral without a price: the loan side's USD figures stand
    const c = view(noCollateralPrice.uniqueKey);
    assert.deepEqual([c.collateralPrice, c.supply, c.available, c.utilization], [null, 2_000, 1_000, 0.5]);
    // token amounts derived from USD at the loan price when a source recorded none
    assert.deepEqual(
      [c.supplyAssets, c.borrowAssets],
      [significant(2_000 / 3300), significant(1_000 / 3300)],
    );
  });

  test('behavior: ranked after every market with a USD supply, an empty one included; prices moving leave it be', () => {
    const order = () => catalog.list({}, 0, 10).map((o) => catalog.recordAt(o).uniqueKey);
    assert.deepEqual(order(), [
      noCollateralPrice.uniqueKey,
      priced.uniqueKey,
      empty.uniqueKey,
      unpriced.uniqueKey,
    ]);
    const touched = catalog.applyPrices([{ chainId: 1, token: unpriced.loanAddress, ratio: 2 }]);
    // the three priced markets lending WETH move; the unpriced one has no price to scale
    assert.equal(touched, 3);
    assert.equal(view(unpriced.uniqueKey).loanPrice, null);
    assert.equal(order().at(-1), unpriced.uniqueKey);
  });
});

describe('Catalog.applyMarketStates', () => {
  test('behavior: a market takes its new balances and APYs in place, at the current prices; the order by supply, the search and the JSON follow', () => {
    const a = m('WETH', 'USDC', 3000, { borrow: 1000, loanPrice: 1 });
    const b = m('WBTC', 'USDC', 2000, { borrow: 500, loanPrice: 1 });
    const catalog = new Catalog([a, b], 0);
    const order = () => catalog.list({}, 0, 10).map((o) => catalog.recordAt(o).uniqueKey);
    const serialize = (v: object) => Buffer.from(JSON.stringify(v));
    const json = (ord: number) =>
      JSON.parse(Buffer.from(catalog.json(ord, 0, serialize, () => Buffer.alloc(0))[0]).toString());
    const ordB = catalog.ordOf(b.uniqueKey)!;
    const before = json(ordB);
    assert.deepEqual(order(), [a.uniqueKey, b.uniqueKey]);
    assert.deepEqual(
      catalog.search('usdc', {}, 10).map((o) => catalog.recordAt(o).uniqueKey),
      [a.uniqueKey, b.uniqueKey],
    );
    // The loan token's price doubles first: a state is stated at the record's prices.
    catalog.applyPrices([{ chainId: b.chainId, token: b.loanAddress, ratio: 2 }]);
    const state = {
      marketKey: b.uniqueKey,
      supply: 4000,
      borrow: 3000,
      supplyApy: 0.031,
      borrowApy: 0.052,
      debtIndex: 1,
    };
    assert.equal(catalog.applyMarketStates([state]), 1);
    const after = json(ordB);
    assert.notDeepEqual(after, before);
    assert.equal(after.supply, 8000);
    assert.equal(after.borrow, 6000);
    assert.equal(after.available, 2000);
    assert.equal(after.utilization, 0.75);
    assert.equal(after.supplyApy, 0.031);
    assert.equal(after.borrowApy, 0.052);
    // Now the larger market: first in the list and in a search's supply order.
    assert.deepEqual(order(), [b.uniqueKey, a.uniqueKey]);
    assert.deepEqual(
      catalog.search('usdc', {}, 10).map((o) => catalog.recordAt(o).uniqueKey),
      [b.uniqueKey, a.uniqueKey],
    );
    // The same state again, an unknown market or a bad figure: nothing changes.
    assert.equal(catalog.applyMarketStates([state]), 0);
    assert.equal(catalog.applyMarketStates([{ ...state, marketKey: 'nope' }]), 0);
    assert.equal(catalog.applyMarketStates([{ ...state, supply: Number.NaN }]), 0);
    assert.equal(catalog.applyMarketStates([{ ...state, borrow: -1 }]), 0);
  });
});
