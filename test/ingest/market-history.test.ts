import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LiquidationEvent } from '../../src/domain/records/history.ts';
import { sandboxMarketClock, sandboxSimulation } from '../../src/ingest/sandbox/history.ts';
import { DEFAULT_SEED, SANDBOX_AS_OF } from '../../src/ingest/sandbox/index.ts';
import { DAY_MS, HOUR_MS, YEAR_MS } from '../../src/ingest/sandbox/simulation/noise.ts';

/**
 * The sandbox's market history (simulation/market-history.ts): balances and rates around the
 * snapshot, and liquidations that are consequences of the price paths.
 */

const sim = sandboxSimulation('default', DEFAULT_SEED);
const { history, dataset, basis } = sim;
const asOfMs = SANDBOX_AS_OF * 1000;
const END = asOfMs + 10 * DAY_MS;
/** The first markets, enough to hold a few hundred liquidations. */
const SAMPLE = 150;

const yearOf = (i: number) => history.liquidations(i, history.startMs, END);

describe('market history', () => {
  test('behavior: the snapshot instant shows the served market exactly', () => {
    for (let i = 0; i < 50; i++) {
      const m = dataset.markets[i]!;
      const [s] = history.snapshots(i, [asOfMs], 'hour');
      assert.ok(s);
      assert.equal(s.supplyUsd, Math.round(m.supply * 100) / 100, m.uniqueKey);
      assert.ok(Math.abs(s.borrowUsd - m.borrow) <= 0.02, `${s.borrowUsd} vs ${m.borrow}`);
      assert.ok(Math.abs(s.borrowApy - m.borrowApy) < 1e-6, `${s.borrowApy} vs ${m.borrowApy}`);
      assert.equal(s.collateralPriceUsd, Number(m.collateralPrice.toPrecision(8)));
      assert.equal(s.loanPriceUsd, Number(m.loanPrice.toPrecision(8)));
    }
  });

  test('behavior: a state stepped over many hours at once equals the one stepped an hour at a time', () => {
    const jump = sandboxSimulation('default', DEFAULT_SEED).history;
    const hourly = sandboxSimulation('default', DEFAULT_SEED).history;
    const t = asOfMs + 3 * DAY_MS + 17 * 60_000;
    for (let i = 0; i < 60; i++) {
      for (let h = asOfMs + HOUR_MS; h < t; h += HOUR_MS) hourly.stateAt(i, h);
      assert.deepEqual(jump.stateAt(i, t), hourly.stateAt(i, t), dataset.markets[i]!.uniqueKey);
    }
  });

  test('behavior: balances, utilization and APYs move over the year and stay in range', () => {
    const days = Array.from({ length: 365 }, (_, d) => history.startMs + d * DAY_MS);
    const i = dataset.markets.findIndex((m) => m.borrow > 1e6);
    const rows = history.snapshots(i, days, 'day');
    assert.equal(rows.length, 365);
    const utils = new Set(rows.map((r) => r.utilization));
    assert.ok(utils.size > 300, 'utilization changes from day to day');
    for (const r of rows) {
      assert.ok(r.utilization >= 0 && r.utilization <= 0.99);
      assert.ok(r.borrowUsd <= r.supplyUsd + 0.01);
      assert.ok(r.borrowApy >= r.supplyApy);
      assert.ok(r.supplyUsd > 0);
    }
  });

  test('behavior: after the snapshot the markets go on: the live state equals the hourly history at whole hours, interest grows debt and supply', () => {
    const busy = dataset.markets.flatMap((m, i) => (m.borrow > 1e5 ? [i] : [])).slice(0, 40);
    assert.ok(busy.length >= 20);
    const hours = [asOfMs, asOfMs + 5 * HOUR_MS, asOfMs + 3 * DAY_MS, asOfMs + 24 * DAY_MS];
    const fresh = sandboxSimulation('default', DEFAULT_SEED).history;
    let moved = 0;
    for (const i of busy) {
      const m = dataset.markets[i]!;
      // At the snapshot instant: the record exactly (nothing accrued yet).
      const s0 = history.stateAt(i, asOfMs);
      assert.ok(Math.abs(s0.supplyTokens * m.loanPrice - m.supply) < 1e-6 * m.supply);
      assert.ok(Math.abs(s0.supplyTokens * s0.utilization * m.loanPrice - m.borrow) < 1e-6 * m.supply);
      assert.equal(s0.logIndex, 0);
      const rows = history.snapshots(i, hours, 'hour');
      let prevIndex = 0;
      hours.forEach((t, k) => {
        // Asked in increasing time (sums kept) and alone (from scratch): the same state.
        const live = history.stateAt(i, t);
        assert.deepEqual(fresh.stateAt(i, t), live);
        const row = rows[k]!;
        const supplyUsd = live.supplyTokens * row.loanPriceUsd!;
        assert.ok(
          Math.abs(row.supplyUsd - supplyUsd) <= 1e-6 * supplyUsd + 0.01,
          `${row.supplyUsd} vs ${supplyUsd}`,
        );
        assert.ok(Math.abs(row.utilization - live.utilization) < 1e-6, `${m.uniqueKey} at ${t}`);
        assert.ok(Math.abs(row.borrowApy - Math.expm1(live.borrowRate)) < 1e-6);
        assert.ok(live.logIndex >= prevIndex, 'the borrow index never goes down');
        prevIndex = live.logIndex;
      });
      // Between two whole hours: strictly between their indexes (interest accrues continuously).
      const a = history.stateAt(i, asOfMs + 5 * HOUR_MS);
      const mid = fresh.stateAt(i, asOfMs + 5 * HOUR_MS + 30 * 60_000);
      const b = fresh.stateAt(i, asOfMs + 6 * HOUR_MS);
      assert.ok(mid.logIndex > a.logIndex && mid.logIndex < b.logIndex);
      // Over 24 days debt grows by about the borrow rate.
      const late = history.stateAt(i, asOfMs + 24 * DAY_MS);
      const expected = ((24 * DAY_MS) / YEAR_MS) * late.borrowRate;
      assert.ok(
        late.logIndex > 0.3 * expected && late.logIndex < 3 * expected + 0.01,
        `${late.logIndex} vs ${expected}`,
      );
      if (late.utilization !== s0.utilization) moved++;
    }
    assert.ok(moved > busy.length / 2, 'utilization moves after the snapshot');
  });

  test('behavior: the same seed gives the same rows; a window computed alone gives the same liquidations', () => {
    const again = sandboxSimulation('default', DEFAULT_SEED).history;
    const mid = asOfMs - 123 * DAY_MS + 7 * HOUR_MS + 1234;
    let seen = 0;
    for (let i = 0; i < 60; i++) {
      const whole = yearOf(i);
      seen += whole.length;
      assert.deepEqual(again.liquidations(i, history.startMs, END), whole);
      const split = [...history.liquidations(i, history.startMs, mid), ...history.liquidations(i, mid, END)];
      assert.deepEqual(split, whole);
    }
    assert.ok(seen > 20, `too few liquidations to compare (${seen})`);
  });

  test('behavior: a crash day sets off a liquidation wave', () => {
    const perDay = new Map<number, number>();
    for (let i = 0; i < SAMPLE * 4; i++) {
      for (const e of yearOf(i))
        perDay.set(Math.floor(e.at / DAY_MS), (perDay.get(Math.floor(e.at / DAY_MS)) ?? 0) + 1);
    }
    const crashes = basis.model.crashes.map((c) => Math.floor(c.startMs / DAY_MS));
    assert.ok(crashes.length > 0);
    const counts = [...perDay.values()].sort((a, b) => a - b);
    const median = counts[Math.floor(counts.length / 2)]!;
    const worstCrash = Math.max(...crashes.map((d) => (perDay.get(d) ?? 0) + (perDay.get(d + 1) ?? 0)));
    assert.ok(worstCrash > 5 * median, `crash-day liquidations ${worstCrash}, median day ${median}`);
  });

  test('behavior: replaying the price path hour by hour finds the same liquidations', () => {
    // An independent replay: prices from the price model at each hour, debt accruing at the
    // borrow APY of the market's hourly snapshots, health factor checked every hour.
    let compared = 0;
    for (let i = 0; i < SAMPLE; i++) {
      const m = dataset.markets[i]!;
      const terms = dataset.terms[i]!;
      const stored = yearOf(i);
      if (stored.length === 0) continue;
      const hours: number[] = [];
      for (let t = history.startMs; t < END; t += HOUR_MS) hours.push(t);
      const snaps = history.snapshots(i, hours, 'hour');
      const rate = snaps.map((s) => Math.log1p(s.borrowApy));
      const cp = hours.map((t) => m.collateralPrice * basis.ratioAt(m.collateral, t));
      const lp = hours.map((t) => m.loanPrice * basis.ratioAt(m.loan, t));
      const replayed: { borrower: string; hour: number; repaid: number; seized: number; bad: number }[] = [];
      for (const b of history.borrowers(i, history.startMs, END)) {
        const o = (b.openMs - history.startMs) / HOUR_MS;
        let debt = b.debtUsd / lp[o]!;
        let collateral = (b.healthFactor * b.debtUsd) / (cp[o]! * m.lltv);
        for (let h = o + 1; h <= Math.min(o + b.lifeHours, hours.length - 1); h++) {
          debt *= Math.exp((rate[h - 1]! * HOUR_MS) / YEAR_MS);
          const hf = (collateral * cp[h]! * m.lltv) / (debt * lp[h]!);
          if (hf >= 1) continue;
          const cf = hf < 0.95 ? 1 : terms.closeFactor;
          let repaid = cf * debt;
          let seized = (repaid * lp[h]! * (1 + terms.liquidationBonus)) / cp[h]!;
          let bad = 0;
          if (seized >= collateral) {
            seized = collateral;
            repaid = (collateral * cp[h]!) / (lp[h]! * (1 + terms.liquidationBonus));
            bad = debt - repaid;
          }
          replayed.push({ borrower: b.address, hour: hours[h]!, repaid, seized, bad });
          collateral -= seized;
          debt -= repaid;
          if (bad > 0 || cf >= 1) break;
        }
      }
      const key = (e: { borrower: string; hour: number }) => `${e.borrower}|${e.hour}`;
      const byKey = new Map(
        stored.map((e: LiquidationEvent) => [
          `${e.borrower}|${Math.round(e.at / HOUR_MS - 0.5) * HOUR_MS}`,
          e,
        ]),
      );
      assert.equal(
        replayed.length,
        stored.length,
        `${m.uniqueKey}: replay found ${replayed.length}, history has ${stored.length}`,
      );
      for (const r of replayed) {
        const e =
          byKey.get(key(r)) ??
          [...byKey.values()].find((x) => x.borrower === r.borrower && Math.abs(x.at - r.hour) < 2 * HOUR_MS);
        assert.ok(
          e,
          `${m.uniqueKey}: no stored liquidation of ${r.borrower} at ${new Date(r.hour).toISOString()}`,
        );
        assert.ok(Math.abs(e.debtRepaid - r.repaid) <= 1e-6 * r.repaid, `${e.debtRepaid} vs ${r.repaid}`);
        assert.ok(
          Math.abs(e.collateralSeized - r.seized) <= 1e-6 * r.seized,
          `${e.collateralSeized} vs ${r.seized}`,
        );
        assert.ok(Math.abs(e.badDebt - r.bad) <= 1e-6 * Math.max(r.bad, r.repaid));
        compared++;
      }
    }
    assert.ok(compared >= 100, `compared ${compared} liquidations`);
  });

  test('behavior: each liquidation pays the bonus, or takes all the collateral and leaves bad debt', () => {
    for (let i = 0; i < SAMPLE; i++) {
      const bonus = dataset.terms[i]!.liquidationBonus;
      for (const e of yearOf(i)) {
        assert.ok(e.debtRepaidUsd > 0 && e.collateralSeizedUsd > 0);
        assert.ok(
          Math.abs(e.collateralSeizedUsd - e.debtRepaidUsd * (1 + bonus)) <=
            0.02 + 1e-6 * e.collateralSeizedUsd,
        );
        if (e.badDebt > 0) assert.ok(e.badDebtUsd >= 0);
        assert.match(e.txHash, /^0x[0-9a-f]{64}$/);
        assert.match(e.borrower, /^0x[0-9a-f]{40}$/);
        assert.match(e.liquidator, /^0x[0-9a-f]{40}$/);
        assert.ok(e.at >= history.startMs && e.at < END);
      }
    }
  });

  test("behavior: served with its positions' debt, a market's borrow is that debt with its interest; supply is the path's, or what the path's utilization needs for more debt", () => {
    const clock = sandboxMarketClock(sim);
    const t = asOfMs + 9 * DAY_MS + 1234;
    const busy = dataset.markets.flatMap((m, i) => (m.borrow > 1e5 ? [i] : [])).slice(0, 40);
    const path = clock.statesAt(t);
    for (const scale of [1, 0.5, 2, 0]) {
      const served = clock.statesAt(t, (i) => dataset.markets[i]!.borrow * scale);
      for (const i of busy) {
        const p = path[i]!;
        const s = served[i]!;
        const what = `${dataset.markets[i]!.uniqueKey} x ${scale}`;
        assert.equal(s.debtIndex, p.debtIndex);
        // The positions' debt as stated, grown by the borrow index.
        assert.ok(
          Math.abs(s.borrow - dataset.markets[i]!.borrow * scale * p.debtIndex) < 1e-9 * s.supply,
          what,
        );
        if (scale === 1) {
          // The snapshot's debt: the path's figures.
          assert.ok(Math.abs(s.supply - p.supply) < 1e-6 * p.supply, what);
          assert.ok(Math.abs(s.borrow - p.borrow) < 1e-6 * p.supply, what);
          assert.ok(Math.abs(s.borrowApy - p.borrowApy) <= 1e-6, what);
        } else if (scale < 1) {
          assert.equal(s.supply, p.supply, what);
          assert.ok(s.borrowApy <= p.borrowApy, what);
        } else {
          assert.ok(Math.abs(s.borrow / s.supply - p.borrow / p.supply) < 1e-9, what);
        }
        assert.ok(s.borrow <= s.supply);
      }
    }
  });
});
