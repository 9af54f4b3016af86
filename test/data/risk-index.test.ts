import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { Catalog } from '../../src/data/catalog.ts';
import { RiskIndex, type RiskQuery } from '../../src/data/risk-index.ts';
import { PROTOCOLS } from '../../src/domain/enums.ts';
import { healthFactor } from '../../src/domain/metrics.ts';
import { PositionColumnsBuilder } from '../../src/domain/position-columns.ts';
import { significant } from '../../src/domain/precision.ts';
import { makeMarket } from '../helpers.ts';

const CHAINS = [1, 10, 8453];
const markets = PROTOCOLS.flatMap((protocol) =>
  CHAINS.map((chainId, i) => makeMarket({ protocol, chainId, lltv: 0.7 + i * 0.1, supply: 1e6 + i })),
);
const catalog = new Catalog(markets, 0);

interface P {
  market: number;
  collateral: number;
  borrow: number;
}

function build(positions: P[]) {
  const b = new PositionColumnsBuilder(4);
  positions.forEach((p, i) => {
    const m = markets[p.market]!;
    const hf = healthFactor(p.collateral, m.lltv, p.borrow);
    const user = `0x${i.toString(16).padStart(40, '0')}`;
    b.push(catalog.ordOf(m.uniqueKey)!, {
      user,
      collateralUsd: p.collateral,
      borrowUsd: p.borrow,
      supplyUsd: 0,
      healthFactor: hf,
    });
  });
  return new RiskIndex(catalog, b.build());
}

/** The obvious O(n) answer the index must agree with. */
function naive(positions: P[], q: RiskQuery): number[] {
  return positions
    .map((p, i) => {
      const m = markets[p.market]!;
      return { i, m, hf: healthFactor(p.collateral, m.lltv, p.borrow), borrow: p.borrow };
    })
    .filter((x) => x.borrow > 0 && x.hf < q.healthFactorThreshold && x.borrow >= q.minBorrowUsd)
    .filter((x) => q.protocol === undefined || x.m.protocol === q.protocol)
    .filter((x) => q.chainIds === undefined || q.chainIds.includes(x.m.chainId))
    .filter((x) => q.marketOrd === undefined || catalog.ordOf(x.m.uniqueKey) === q.marketOrd)
    .sort((a, b) => a.hf - b.hf || b.borrow - a.borrow || a.i - b.i)
    .slice(0, q.limit)
    .map((x) => x.i);
}

/**
 * USD amounts: 0, or from a millionth of a dollar up. Below that the doubles reach the subnormal
 * range (5e-324 …), where any product (a price move, lltv) loses the digits two computations
 * would need to agree: not amounts a source serves, and the reason a run once failed on
 * collateral 9e-323 against borrow 9.4e-323.
 */
const usdArb = fc.double({ min: 1e-6, max: 1e7, noNaN: true });
const positionArb = fc.record({
  market: fc.integer({ min: 0, max: markets.length - 1 }),
  collateral: fc.oneof(fc.constant(1000), fc.constant(0), usdArb),
  borrow: fc.oneof(fc.constant(0), fc.constant(800), usdArb),
});

const queryArb = fc.record({
  healthFactorThreshold: fc.oneof(fc.constant(1.1), fc.double({ min: 0.01, max: 10, noNaN: true })),
  protocol: fc.option(fc.constantFrom(...PROTOCOLS), { nil: undefined }),
  chainIds: fc.option(fc.subarray([...CHAINS, 137]), { nil: undefined }),
  marketOrd: fc.option(fc.integer({ min: 0, max: markets.length - 1 }), { nil: undefined }),
  minBorrowUsd: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 1e6, noNaN: true })),
  limit: fc.integer({ min: 1, max: 60 }),
});

describe('RiskIndex', () => {
  test('behavior: agrees with a naive scan for any positions and query', () => {
    fc.assert(
      fc.property(fc.array(positionArb, { maxLength: 300 }), queryArb, (positions, q) => {
        const index = build(positions);
        assert.deepEqual(index.query(q), naive(positions, q));
      }),
      { numRuns: 300 },
    );
  });

  /**
   * Position i of `positions` (a new one when i is its length, of `c.market`; else in its own
   * market) restated with c's amounts, in `positions` and as the change the index applies.
   */
  const changeOf = (
    positions: { market: number; collateral: number; borrow: number }[],
    i: number,
    c: { market: number; collateral: number; borrow: number },
  ) => {
    const market = i < positions.length ? positions[i]!.market : c.market;
    positions[i] = { market, collateral: c.collateral, borrow: c.borrow };
    const m = markets[market]!;
    return {
      ord: catalog.ordOf(m.uniqueKey)!,
      user: `0x${i.toString(16).padStart(40, '0')}`,
      collateralUsd: c.collateral,
      borrowUsd: c.borrow,
      supplyUsd: 0,
      healthFactor: healthFactor(c.collateral, m.lltv, c.borrow),
    };
  };

  test('behavior: positions changed or added one by one give the answers of an index built on the result', () => {
    const changeArb = fc.record({
      target: fc.option(fc.nat(), { nil: undefined }),
      market: fc.integer({ min: 0, max: markets.length - 1 }),
      collateral: fc.double({ min: 0, max: 1e7, noNaN: true }),
      borrow: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 1e7, noNaN: true })),
    });
    fc.assert(
      fc.property(
        fc.array(positionArb, { maxLength: 200 }),
        fc.array(fc.array(changeArb, { maxLength: 8 }), { maxLength: 4 }),
        queryArb,
        (initial, batches, q) => {
          const index = build(initial);
          const positions = [...initial];
          for (const batch of batches) {
            const changes = batch.map((c) =>
              // An existing position (its market kept), or a new one of c.market.
              changeOf(
                positions,
                c.target !== undefined && positions.length > 0
                  ? c.target % positions.length
                  : positions.length,
                c,
              ),
            );
            index.applyPositionChanges(changes);
            // a query between batches (so a stale scope order or list would show)
            index.query({ ...q, marketOrd: undefined });
          }
          assert.deepEqual(index.query(q), naive(positions, q));
          assert.equal(index.size, positions.length);
          assert.equal(
            index.indexed,
            naive(positions, {
              ...q,
              healthFactorThreshold: Infinity,
              protocol: undefined,
              chainIds: undefined,
              marketOrd: undefined,
              minBorrowUsd: 0,
              limit: 1e9,
            }).length,
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  test("behavior: a batch large enough to rebuild its markets' lists gives the answers of an index built on the result", () => {
    const changeArb = fc.record({
      target: fc.nat(),
      fresh: fc.boolean(),
      market: fc.integer({ min: 0, max: markets.length - 1 }),
      collateral: fc.double({ min: 0, max: 1e7, noNaN: true }),
      borrow: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 1e7, noNaN: true })),
    });
    fc.assert(
      fc.property(
        fc.array(positionArb, { minLength: 1, maxLength: 200 }),
        // 256 changes and more are applied as a batch; the same position may change several times in one.
        fc.array(changeArb, { minLength: 256, maxLength: 320 }),
        queryArb,
        (initial, batch, q) => {
          const index = build(initial);
          const positions = [...initial];
          const changes = batch.map((c) =>
            changeOf(positions, c.fresh ? positions.length : c.target % positions.length, c),
          );
          index.query({ ...q, marketOrd: undefined });
          index.applyPositionChanges(changes);
          assert.deepEqual(index.query(q), naive(positions, q));
          assert.deepEqual(
            index.query({ ...q, marketOrd: undefined }),
            naive(positions, { ...q, marketOrd: undefined }),
          );
          assert.equal(index.size, positions.length);
        },
      ),
      { numRuns: 60 },
    );
  });

  test('behavior: below() agrees with a naive sum after position changes and price moves', () => {
    const changeArb = fc.record({
      target: fc.nat(),
      collateral: fc.oneof(fc.constant(0), usdArb),
      borrow: fc.oneof(fc.constant(0), fc.double({ min: 1, max: 1e7, noNaN: true })),
    });
    fc.assert(
      fc.property(
        fc.array(positionArb, { minLength: 1, maxLength: 150 }),
        fc.array(changeArb, { maxLength: 6 }),
        fc.double({ min: 0.5, max: 2, noNaN: true }),
        fc.double({ min: 0.2, max: 3, noNaN: true }),
        fc.double({ min: 0.5, max: 1.5, noNaN: true }),
        (initial, changes, ratio, scale, bound) => {
          const index = build(initial);
          const positions = [...initial];
          // Stress before the changes too, so stale prefix sums would show.
          for (let ord = 0; ord < catalog.size; ord++) index.below(ord, scale, bound);
          index.applyPositionChanges(
            changes.map((c) => changeOf(positions, c.target % positions.length, { ...c, market: 0 })),
          );
          // The first market's collateral token moves by `ratio`.
          const m0 = markets[0]!;
          index.applyPrices([{ chainId: m0.chainId, token: m0.collateralAddress, ratio }]);
          for (let ord = 0; ord < catalog.size; ord++) {
            const m = catalog.recordAt(ord);
            const k = m.collateralAddress === m0.collateralAddress && m.chainId === m0.chainId ? ratio : 1;
            const want = { positions: 0, collateralUsd: 0, debtUsd: 0 };
            for (const p of positions) {
              if (markets[p.market]!.uniqueKey !== m.uniqueKey || !(p.borrow > 0)) continue;
              const hf = healthFactor(p.collateral * k, m.lltv, p.borrow);
              if (!(hf * scale < bound)) continue;
              want.positions++;
              want.collateralUsd += p.collateral * k;
              want.debtUsd += p.borrow;
            }
            const got = index.below(ord, scale, bound);
            assert.equal(got.positions, want.positions);
            assert.ok(
              Math.abs(got.collateralUsd - want.collateralUsd) <= 1e-6 * Math.max(1, want.collateralUsd),
            );
            assert.ok(Math.abs(got.debtUsd - want.debtUsd) <= 1e-6 * Math.max(1, want.debtUsd));
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  test('behavior: positions without debt are never indexed', () => {
    const index = build([
      { market: 0, collateral: 1000, borrow: 0 },
      { market: 0, collateral: 1000, borrow: 900 },
    ]);
    assert.equal(index.size, 2);
    assert.equal(index.indexed, 1);
  });

  test('default: view carries hand-checked derived fields', () => {
    // market 0: lltv 0.7; HF = 1000 x 0.7 / 500 = 1.4; leverage = 1000 / 500 = 2; distance = 1 - 1/1.4
    const index = build([{ market: 0, collateral: 1000, borrow: 500 }]);
    const v = index.view(0);
    assert.equal(v.healthFactor, 1.4);
    assert.equal(v.leverage, 2);
    assert.equal(v.distanceToLiq, 0.28571429); // 1 - 1/1.4, served to 8 decimals
    assert.equal(v.user.address, `0x${'0'.repeat(40)}`);
    assert.equal(v.market.lltv, 0.7);
  });

  test('behavior: addresses round-trip through the 20-byte column', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 20, maxLength: 20 }), (bytes) => {
        const address = `0x${Buffer.from(bytes).toString('hex')}`;
        const b = new PositionColumnsBuilder(1);
        b.push(0, { user: address, collateralUsd: 1, borrowUsd: 1, supplyUsd: 0, healthFactor: 0.5 });
        assert.equal(new RiskIndex(catalog, b.build()).view(0).user.address, address);
      }),
    );
  });
});

describe('RiskIndex while prices move', () => {
  // Markets over a few tokens per chain, so one token's move touches some markets and not others.
  const TOKENS = ['0x' + '1'.repeat(40), '0x' + '2'.repeat(40), '0x' + '3'.repeat(40), '0x' + '4'.repeat(40)];
  const moving = PROTOCOLS.flatMap((protocol, p) =>
    CHAINS.map((chainId, c) =>
      makeMarket({
        protocol,
        chainId,
        lltv: 0.6 + 0.1 * c,
        supply: 1e6 + p * 10 + c,
        collateralAddress: TOKENS[(p + c) % 3]!,
        loanAddress: TOKENS[3 - (p % 2)]!,
        collateralPrice: 100 + p,
        loanPrice: 1 + c,
      }),
    ),
  );
  const cat = new Catalog(moving, 0);

  function buildMoving(positions: P[]) {
    const b = new PositionColumnsBuilder(4);
    positions.forEach((p, i) => {
      const m = moving[p.market % moving.length]!;
      b.push(cat.ordOf(m.uniqueKey)!, {
        user: `0x${i.toString(16).padStart(40, '0')}`,
        collateralUsd: p.collateral,
        borrowUsd: p.borrow,
        supplyUsd: p.borrow / 2,
        healthFactor: healthFactor(p.collateral, m.lltv, p.borrow),
      });
    });
    return new RiskIndex(cat, b.build());
  }

  /** Current health factor and debt by the same arithmetic: hf0 x ratio(collateral) / ratio(loan). */
  function naiveMoved(positions: P[], ratios: Map<string, number>, q: RiskQuery) {
    return positions
      .map((p, i) => {
        const m = moving[p.market % moving.length]!;
        const cf = ratios.get(`${m.chainId}:${m.collateralAddress}`) ?? 1;
        const lf = ratios.get(`${m.chainId}:${m.loanAddress}`) ?? 1;
        const hf = healthFactor(p.collateral, m.lltv, p.borrow) * (cf / lf);
        return { i, m, hf, borrow: p.borrow * lf, borrow0: p.borrow };
      })
      .filter((x) => x.borrow0 > 0 && x.hf < q.healthFactorThreshold && x.borrow >= q.minBorrowUsd)
      .filter((x) => q.protocol === undefined || x.m.protocol === q.protocol)
      .filter((x) => q.chainIds === undefined || q.chainIds.includes(x.m.chainId))
      .filter((x) => q.marketOrd === undefined || cat.ordOf(x.m.uniqueKey) === q.marketOrd)
      .sort((a, b) => a.hf - b.hf || b.borrow - a.borrow || a.i - b.i)
      .slice(0, q.limit);
  }

  const moveArb = fc.array(
    fc.record({
      chainId: fc.constantFrom(...CHAINS),
      token: fc.constantFrom(...TOKENS),
      factor: fc.double({ min: 0.2, max: 5, noNaN: true }),
    }),
    { maxLength: 8 },
  );

  test('behavior: after any price moves, answers equal a naive scan at the new prices (no rebuild)', () => {
    fc.assert(
      fc.property(
        fc.array(positionArb, { maxLength: 300 }),
        fc.array(moveArb, { maxLength: 3 }),
        queryArb,
        (positions, moves, q) => {
          const index = buildMoving(positions);
          const prices = new Map<string, number>();
          for (const batch of moves) {
            const changes = batch.map((mv) => ({ chainId: mv.chainId, token: mv.token, ratio: mv.factor }));
            index.applyPrices(changes);
            for (const c of changes) prices.set(`${c.chainId}:${c.token}`, c.ratio);
            // a query between moves (so a stale scope order would show)
            index.query({ ...q, marketOrd: undefined });
          }
          const expected = naiveMoved(positions, prices, q);
          const got = index.query(q);
          // Health factors in order (positions whose current health factors tie exactly may come
          // in either order: their snapshot order is kept).
          assert.deepEqual(
            got.map((i) => index.view(i).healthFactor),
            expected.map((x) => significant(x.hf)),
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  test('behavior: interest (a borrow index per market) scales debt and health factors like a price; answers stay ordered', () => {
    const positions = Array.from({ length: 120 }, (_, k) => ({
      market: k % moving.length,
      collateral: 1000 + 37 * k,
      borrow: 400 + ((k * 53) % 500),
    }));
    const index = buildMoving(positions);
    const render = (v: { healthFactor: number }) => Buffer.from(JSON.stringify(v));
    const m = moving[0]!;
    const ord = cat.ordOf(m.uniqueKey)!;
    const before = JSON.parse(index.json(0, render).toString());
    assert.equal(index.applyDebtIndexes([{ ord, index: 1.25 }]), 1);
    // Applying the same index again changes nothing; a bad index or ord is ignored.
    assert.equal(index.applyDebtIndexes([{ ord, index: 1.25 }]), 0);
    assert.equal(
      index.applyDebtIndexes([
        { ord, index: 0 },
        { ord: -1, index: 2 },
        { ord, index: Number.NaN },
      ]),
      0,
    );
    const after = JSON.parse(index.json(0, render).toString());
    assert.equal(after.state.borrowAssetsUsd, before.state.borrowAssetsUsd * 1.25);
    assert.equal(after.state.collateralUsd, before.state.collateralUsd);
    assert.ok(Math.abs(after.healthFactor - before.healthFactor / 1.25) < 1e-6);
    // With a price move on top, the answer is a naive scan's with debt x index.
    index.applyPrices([{ chainId: m.chainId, token: m.collateralAddress, ratio: 0.7 }]);
    const q = { healthFactorThreshold: 10, minBorrowUsd: 0, limit: 500 };
    const got = index.query(q).map((i) => index.view(i).healthFactor);
    const expected = positions
      .map((p) => {
        const mk = moving[p.market]!;
        const cf = mk.chainId === m.chainId && mk.collateralAddress === m.collateralAddress ? 0.7 : 1;
        const idx = mk.uniqueKey === m.uniqueKey ? 1.25 : 1;
        return (healthFactor(p.collateral, mk.lltv, p.borrow) * cf) / idx;
      })
      .filter((hf) => hf < 10)
      .sort((a, b) => a - b)
      .map((hf) => significant(hf));
    assert.deepEqual(got, expected);
  });

  test('behavior: a price move updates the served figures, cached JSON included', () => {
    const index = buildMoving([{ market: 0, collateral: 1000, borrow: 500 }]);
    const m = moving[0]!;
    const render = (v: { healthFactor: number }) => Buffer.from(JSON.stringify(v));
    const before = JSON.parse(index.json(0, render).toString());
    assert.equal(before.healthFactor, healthFactor(1000, m.lltv, 500));
    // The collateral halves: health factor and collateral USD halve, debt unchanged.
    assert.equal(
      index.applyPrices([{ chainId: m.chainId, token: m.collateralAddress, ratio: 0.5 }]) > 0,
      true,
    );
    const after = JSON.parse(index.json(0, render).toString());
    assert.equal(after.healthFactor, before.healthFactor * 0.5);
    assert.equal(after.state.collateralUsd, 500);
    assert.equal(after.state.borrowAssetsUsd, 500);
    // An unknown token or a non-positive price changes nothing.
    assert.equal(index.applyPrices([{ chainId: 999, token: m.collateralAddress, ratio: 1 }]), 0);
    assert.equal(index.applyPrices([{ chainId: m.chainId, token: m.collateralAddress, ratio: 0 }]), 0);
    assert.equal(
      index.applyPrices([{ chainId: m.chainId, token: m.collateralAddress, ratio: Number.NaN }]),
      0,
    );
  });
});
