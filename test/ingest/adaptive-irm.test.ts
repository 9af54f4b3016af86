import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AdaptiveCurveIrmLib, SECONDS_PER_YEAR } from '@morpho-org/blue-sdk';
import { sandboxSimulation } from '../../src/ingest/sandbox/history.ts';
import { DEFAULT_SEED, SANDBOX_AS_OF } from '../../src/ingest/sandbox/index.ts';
import {
  ADAPTIVE_IRM,
  adaptiveError,
  adaptiveStep,
  wExp,
} from '../../src/ingest/sandbox/simulation/adaptive-irm.ts';
import { DAY_MS, HOUR_MS, YEAR_MS } from '../../src/ingest/sandbox/simulation/noise.ts';

/**
 * Morpho's adaptive curve in the sandbox (simulation/adaptive-irm.ts): the same steps as
 * AdaptiveCurveIrmLib of @morpho-org/blue-sdk (the contract's integer math), and the rate at
 * target of the sandbox's Morpho markets adapting to their utilization after the snapshot.
 */

/** An annual rate as the library's WAD-scaled per-second rate, and back. */
const perSecond = (annual: number) => BigInt(Math.round(annual * 1e18)) / SECONDS_PER_YEAR;
const annual = (wadPerSecond: bigint) => Number(wadPerSecond * SECONDS_PER_YEAR) / 1e18;
const wad = (x: number) => BigInt(Math.round(x * 1e18));

const near = (a: number, b: number, rel: number, what: string) =>
  assert.ok(Math.abs(a - b) <= rel * Math.abs(b) + 1e-15, `${what}: ${a} vs ${b}`);

describe("Morpho's adaptive curve", () => {
  test("known answers: the constants are the library's (annual)", () => {
    const lib = AdaptiveCurveIrmLib;
    near(ADAPTIVE_IRM.targetUtilization, Number(lib.TARGET_UTILIZATION) / 1e18, 0, 'target');
    near(ADAPTIVE_IRM.curveSteepness, Number(lib.CURVE_STEEPNESS) / 1e18, 0, 'steepness');
    near(ADAPTIVE_IRM.adjustmentSpeed, annual(lib.ADJUSTMENT_SPEED), 1e-7, 'speed');
    near(ADAPTIVE_IRM.minRateAtTarget, annual(lib.MIN_RATE_AT_TARGET), 1e-7, 'min');
    near(ADAPTIVE_IRM.maxRateAtTarget, annual(lib.MAX_RATE_AT_TARGET), 1e-7, 'max');
    for (const x of [-45, -3.2, -0.5, -0.001, 0, 0.0004, 0.3466, 0.35, 1, 7.7]) {
      const lib = Number(AdaptiveCurveIrmLib.wExp(wad(x))) / 1e18;
      near(wExp(x), lib, 1e-12, `wExp(${x})`);
    }
  });

  test("behavior: a step is the library's getBorrowRate, from below the target to full utilization", () => {
    const cases: [number, number, number][] = [];
    for (const u of [0, 0.3, 0.72, 0.85, 0.9, 0.91, 0.95, 0.99, 1])
      for (const rate of [0.001, 0.0123, 0.04, 0.5, 2])
        for (const seconds of [12, 3_600, 86_400, 30 * 86_400]) cases.push([u, rate, seconds]);
    for (const [u, rate, seconds] of cases) {
      const lib = AdaptiveCurveIrmLib.getBorrowRate(wad(u), perSecond(rate), BigInt(seconds));
      // The library's per-second rates are floored to WAD units: the same rate, rounded.
      const start = annual(perSecond(rate));
      const ours = adaptiveStep(u, start, seconds / Number(SECONDS_PER_YEAR));
      const what = `u ${u}, rate ${rate}, ${seconds} s`;
      near(ours.endRateAtTarget, annual(lib.endRateAtTarget), 1e-6, `${what}: end rate at target`);
      near(ours.endBorrowRate, annual(lib.endBorrowRate), 1e-6, `${what}: end borrow rate`);
      near(ours.avgBorrowRate, annual(lib.avgBorrowRate), 1e-6, `${what}: average borrow rate`);
    }
  });

  test('behavior: above the target the rate at target rises day after day up to its maximum; below it, it falls to its minimum', () => {
    const hour = HOUR_MS / YEAR_MS;
    const run = (u: number, days: number) => {
      let r = 0.04;
      const path = [r];
      for (let h = 1; h <= days * 24; h++) {
        r = adaptiveStep(u, r, hour).endRateAtTarget;
        if (h % 24 === 0) path.push(r);
      }
      return path;
    };
    // err 0.5 (u 0.95): x e^(50 x 0.5 / 365) a day, about 7 % (a doubling in 10 days).
    const up = run(0.95, 10);
    for (let d = 1; d < up.length; d++) near(up[d]! / up[d - 1]!, Math.exp(25 / 365), 1e-4, `day ${d}`);
    near(up.at(-1)!, 0.04 * Math.exp(250 / 365), 1e-3, 'ten days above');
    // Full utilization for a year: held at the maximum, 200 % a year at target.
    assert.equal(run(1, 365).at(-1), ADAPTIVE_IRM.maxRateAtTarget);
    // Below the target (u 0.45, err -0.5) it falls as fast; idle (u 0) it reaches the minimum.
    const down = run(0.45, 10);
    for (let d = 1; d < down.length; d++) assert.ok(down[d]! < down[d - 1]!, `day ${d}`);
    near(down.at(-1)!, 0.04 * Math.exp(-250 / 365), 1e-3, 'ten days below');
    assert.equal(run(0, 120).at(-1), ADAPTIVE_IRM.minRateAtTarget);
    // At the target it stays.
    assert.equal(run(0.9, 30).at(-1), 0.04);
    assert.equal(adaptiveError(0.9), 0);
  });

  test("behavior: the sandbox's Morpho markets adapt from the snapshot on: up while above the target, down while below it, within the bounds; the same at any restart", () => {
    const asOf = SANDBOX_AS_OF * 1000;
    const { dataset, history } = sandboxSimulation('default', DEFAULT_SEED);
    const fresh = sandboxSimulation('default', DEFAULT_SEED).history;
    const morpho = dataset.markets.flatMap((m, i) => (m.protocol === 'morpho' && m.borrow > 0 ? [i] : []));
    assert.ok(morpho.length > 500);
    let rose = 0;
    let fell = 0;
    for (const i of morpho) {
      const r0 = dataset.terms[i]!.rateAtTarget!;
      assert.equal(history.stateAt(i, asOf).rateAtTarget, r0, 'the snapshot instant: the drawn rate');
      // Five days, hour by hour: the rate at target moves by 50 x err a year, err of each hour's
      // utilization (the contract's exponential, within its bounds).
      let expected = r0;
      for (let t = asOf; t < asOf + 5 * DAY_MS; t += HOUR_MS) {
        const s = history.stateAt(i, t);
        near(s.rateAtTarget!, expected, 1e-9, `${dataset.markets[i]!.uniqueKey} at ${t}`);
        expected = adaptiveStep(s.utilization, expected, HOUR_MS / YEAR_MS).endRateAtTarget;
      }
      const later = history.stateAt(i, asOf + 5 * DAY_MS).rateAtTarget!;
      near(later, expected, 1e-9, 'five days on');
      if (later > r0) rose++;
      if (later < r0) fell++;
      for (const days of [30, 120]) {
        const r = history.stateAt(i, asOf + days * DAY_MS).rateAtTarget!;
        assert.ok(r >= ADAPTIVE_IRM.minRateAtTarget && r <= ADAPTIVE_IRM.maxRateAtTarget, `${r}`);
      }
    }
    assert.ok(rose > 10 && fell > 100, `rose ${rose}, fell ${fell}`);
    // A restart computes the rate at target from the snapshot again: the same figure.
    const i = morpho[0]!;
    assert.equal(
      fresh.stateAt(i, asOf + 40 * DAY_MS).rateAtTarget,
      history.stateAt(i, asOf + 40 * DAY_MS).rateAtTarget,
    );
  });
});
