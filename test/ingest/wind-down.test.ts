import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sandboxSimulation } from '../../src/ingest/sandbox/history.ts';
import { DEFAULT_SEED, SANDBOX_AS_OF } from '../../src/ingest/sandbox/index.ts';
import { DAY_MS, HOUR_MS } from '../../src/ingest/sandbox/simulation/noise.ts';
import {
  closingAt,
  PT_WIND_DOWN_DAYS,
  ptWindDown,
  windDownShare,
} from '../../src/ingest/sandbox/wind-down.ts';
import { ManualClock } from '../clock.ts';
import { openSandbox, type Sandbox } from '../consistency/sandbox.ts';

/**
 * PTs maturing while the sandbox runs (src/ingest/sandbox/wind-down.ts): from its maturity a PT
 * is priced at par (its underlying), and its markets wind down over PT_WIND_DOWN_DAYS as the
 * seed winds down the markets of PTs matured before the snapshot: each position is repaid at
 * its own instant of the window, no position opens, and the market is empty after it.
 */

const asOf = SANDBOX_AS_OF * 1000;
const sim = sandboxSimulation('default', DEFAULT_SEED);
/** PT-apyUSD-5NOV2026 matures 4 days after the snapshot: its market with the most positions. */
const PT = 'PT-apyUSD-5NOV2026';
const MATURITY = Date.UTC(2026, 10, 5);
const ptMarket = (() => {
  const { markets, positionCounts } = sim.dataset;
  let best = -1;
  markets.forEach((m, i) => {
    if (m.collateral === PT && (best < 0 || positionCounts[i]! > positionCounts[best]!)) best = i;
  });
  return { index: best, key: markets[best]!.uniqueKey, positions: positionCounts[best]! };
})();

describe('PT wind-down: the window', () => {
  test('known answers: from the maturity the price path has, PT_WIND_DOWN_DAYS long; a PT matured before the snapshot goes on from it', () => {
    const maturityOf = () => null;
    assert.deepEqual(ptWindDown(PT, 'USDC', maturityOf, asOf), {
      startMs: MATURITY,
      endMs: MATURITY + PT_WIND_DOWN_DAYS * DAY_MS,
    });
    // Matured 10 days before the snapshot: the seed kept 2/3 of the market; the rest goes by the window's end.
    const early = Date.UTC(2026, 9, 22);
    assert.deepEqual(ptWindDown('USDC', 'PT-sUSDE-22OCT2026', maturityOf, asOf), {
      startMs: asOf,
      endMs: early + PT_WIND_DOWN_DAYS * DAY_MS,
    });
    // A maturity the price path derived (no date in the symbol).
    assert.deepEqual(
      ptWindDown('PT-wstUSR-1750896030', 'USDC', () => asOf + DAY_MS, asOf),
      {
        startMs: asOf + DAY_MS,
        endMs: asOf + (1 + PT_WIND_DOWN_DAYS) * DAY_MS,
      },
    );
    assert.equal(ptWindDown('WETH', 'USDC', maturityOf, asOf), null);
    const w = { startMs: 0, endMs: 30 };
    assert.deepEqual(
      [-1, 0, 10, 15, 30, 31].map((t) => windDownShare(w, t)),
      [1, 1, 2 / 3, 0.5, 0, 0],
    );
    assert.equal(windDownShare(null, 5), 1);
    // The simulation's windows: the PT's market, every PT market, nothing else.
    assert.deepEqual(sim.windDowns.get(ptMarket.key), {
      startMs: MATURITY,
      endMs: MATURITY + PT_WIND_DOWN_DAYS * DAY_MS,
    });
    assert.ok(
      sim.dataset.markets.every(
        (m) => sim.windDowns.has(m.uniqueKey) === (/^PT[-_]/i.test(m.collateral) || /^PT[-_]/i.test(m.loan)),
      ),
    );
  });

  test("behavior: the market's path winds down with the window and is empty after it", () => {
    const m = sim.dataset.markets[ptMarket.index]!;
    const supplyAt = (t: number) => sim.history.stateAt(ptMarket.index, t).supplyTokens * m.loanPrice;
    assert.ok(Math.abs(supplyAt(asOf) - m.supply) < 1e-6 * m.supply);
    assert.ok(supplyAt(MATURITY - HOUR_MS) > 0.5 * m.supply);
    assert.equal(supplyAt(MATURITY + PT_WIND_DOWN_DAYS * DAY_MS), 0);
    assert.equal(supplyAt(MATURITY + 40 * DAY_MS), 0);
    const [row] = sim.history.snapshots(ptMarket.index, [MATURITY + 31 * DAY_MS], 'hour');
    assert.equal(row?.supplyUsd, 0);
    assert.equal(row?.borrowUsd, 0);
  });
});

describe('PT wind-down: a service whose clock crosses the maturity', () => {
  let sb: Sandbox;
  const clock = new ManualClock(MATURITY - 12 * HOUR_MS);
  before(async () => {
    sb = await openSandbox(undefined, clock);
  });
  after(() => sb.close());

  /** The PT market as served, and its positions with debt (users). */
  const served = () => {
    const { catalog, risk } = sb.model;
    const ord = catalog.ordOf(ptMarket.key)!;
    const view = catalog.viewAt(ord, Math.floor(clock.now() / 1000));
    const held = risk
      .query({
        healthFactorThreshold: Number.POSITIVE_INFINITY,
        minBorrowUsd: 0,
        limit: 1_000,
        marketOrd: ord,
      })
      .map((i) => ({ user: risk.stateOf(i).user, debt: risk.view(i).state.borrowAssetsUsd }));
    return { view, held };
  };
  const stepTo = async (t: number) => {
    clock.set(t);
    await sb.service.stepSimulation(t);
    await sb.service.models.reloadIfChanged();
  };
  const window = { startMs: MATURITY, endMs: MATURITY + PT_WIND_DOWN_DAYS * DAY_MS };
  const closing = (user: string) => closingAt(DEFAULT_SEED, window, ptMarket.key, user);

  test('behavior: at the maturity the PT is priced at par; its positions are repaid at their instants, none opens; the market is empty after the window', async () => {
    await stepTo(MATURITY - 12 * HOUR_MS);
    const before = served();
    assert.ok(before.held.length >= ptMarket.positions - 2, `${before.held.length} positions before`);
    const initial = new Set(before.held.map((p) => p.user));
    const underlying = sim.basis.model.maturity(PT)!.underlyingKey;
    const par = (t: number) => sim.basis.model.priceAt(underlying, t);
    // Before the maturity at a discount; from it on at par, to the served 8 significant digits.
    assert.ok(before.view.collateralPrice! < par(clock.now()) * 0.9999, 'discounted before');
    let left = before.held.length;
    for (const t of [
      MATURITY + HOUR_MS,
      MATURITY + 8 * DAY_MS,
      MATURITY + 20 * DAY_MS,
      window.endMs + HOUR_MS,
    ]) {
      await stepTo(t);
      const now = served();
      const price = now.view.collateralPrice!;
      assert.ok(
        Math.abs(price - par(t)) <= 1e-7 * par(t),
        `${price} vs par ${par(t)} at ${new Date(t).toISOString()}`,
      );
      // Every position whose instant came is gone, the others are there; none opened.
      for (const p of now.held) {
        assert.ok(initial.has(p.user), `${p.user} opened after the maturity`);
        assert.ok(closing(p.user) > t, `${p.user} still open after its instant`);
      }
      for (const user of initial)
        if (closing(user) <= t) assert.ok(!now.held.some((p) => p.user === user), `${user} not repaid`);
      assert.ok(now.held.length <= left);
      left = now.held.length;
      // The market is its positions, its supply at least its borrow.
      const debt = now.held.reduce((s, p) => s + p.debt, 0);
      assert.ok(
        Math.abs(now.view.borrow! - debt) <= 0.005 * (now.held.length + 1),
        `${now.view.borrow} vs ${debt}`,
      );
      assert.ok(now.view.supply! >= now.view.borrow!);
    }
    assert.ok(left < before.held.length, 'positions repaid');
    // After the window: empty, as the seed leaves the markets of PTs matured long before it.
    const end = served();
    assert.equal(end.held.length, 0);
    assert.equal(end.view.supply, 0);
    assert.equal(end.view.borrow, 0);
  });
});
