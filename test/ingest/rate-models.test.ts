import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { borrowRate, rateToApy } from '../../src/domain/rates.ts';
import { sandboxSimulation } from '../../src/ingest/sandbox/history.ts';
import { DEFAULT_SEED, SANDBOX_AS_OF } from '../../src/ingest/sandbox/index.ts';
import { adaptiveCurve, familyCurve, MORPHO_IRM } from '../../src/ingest/sandbox/prices.ts';
import {
  ABOVE_KINK,
  aboveKink,
  aboveKinkInverse,
} from '../../src/ingest/sandbox/simulation/market-history.ts';
import { DAY_MS, HOUR_MS } from '../../src/ingest/sandbox/simulation/noise.ts';

/** The rate models of the sandbox's protocols, against figures worked out by hand. */

const close = (a: number, b: number, what: string) =>
  assert.ok(Math.abs(a - b) < 1e-12, `${what}: ${a} vs ${b}`);

describe('sandbox rate models', () => {
  test('known answers: Aave and Spark two slopes at their optimal utilization', () => {
    // Stables: optimal 92 %, slope1 6.5 %, slope2 60 %.
    const usdc = familyCurve('USDC', 1);
    close(usdc.kink, 0.92, 'kink');
    close(borrowRate(0, usdc), 0, 'u=0');
    close(borrowRate(0.46, usdc), 0.0325, 'half of optimal: half of slope1');
    close(borrowRate(0.92, usdc), 0.065, 'at optimal: slope1');
    close(borrowRate(0.96, usdc), 0.065 + 0.3, 'half way above: slope1 + slope2 / 2');
    close(borrowRate(1, usdc), 0.665, 'full: slope1 + slope2');
    // ETH: 90 %, 2.7 %, 80 %; long tail: 45 %, 7 %, 300 %.
    close(borrowRate(0.9, familyCurve('WETH', 1)), 0.027, 'WETH at optimal');
    close(borrowRate(1, familyCurve('WETH', 1)), 0.827, 'WETH full');
    const link = familyCurve('LINK', 1);
    close(borrowRate(0.45, link), 0.07, 'LINK at optimal');
    close(borrowRate(1, link), 3.07, 'LINK full');
    // A jitter scales both slopes.
    close(borrowRate(0.92, familyCurve('USDC', 1.2)), 0.078, 'jittered');
  });

  test("known answers: Morpho's adaptive curve (steepness 4, target 0.9, bounded rate at target)", () => {
    assert.deepEqual({ t: MORPHO_IRM.targetUtilization, c: MORPHO_IRM.curveSteepness }, { t: 0.9, c: 4 });
    const c = adaptiveCurve(0.04);
    close(borrowRate(0, c), 0.01, 'r / 4 at 0');
    close(borrowRate(0.45, c), 0.04 * (1 - 0.75 * 0.5), 'err -0.5: r x (1 - 3/4 x 0.5)');
    close(borrowRate(0.9, c), 0.04, 'r at target');
    close(borrowRate(0.95, c), 0.04 * (1 + 3 * 0.5), 'err 0.5: r x (1 + 3 x 0.5)');
    close(borrowRate(1, c), 0.16, '4r at full');
    // The rate at target within [0.1 %, 200 %] a year.
    close(borrowRate(0.9, adaptiveCurve(5)), 2, 'max rate at target');
    close(borrowRate(0.9, adaptiveCurve(0)), 0.001, 'min rate at target');
  });

  test("known answers: Compound's and Euler's kinks (base + slope below + steep slope above)", () => {
    // Compound USDC on Ethereum (reference comet rates): base 1.5 %, low 3.5 %, high 25 %, kink 0.8.
    const comet = { base: 0.015, slopeLow: 0.035, slopeHigh: 0.25, kink: 0.8 };
    close(borrowRate(0.5, comet), 0.015 + 0.0175, 'below the kink');
    close(borrowRate(0.9, comet), 0.015 + 0.028 + 0.025, 'above the kink');
  });

  test('known answers: utilization runs above the kink only part of the way to full', () => {
    const k = 0.8;
    const a = ABOVE_KINK * (1 - k);
    close(aboveKink(0.5, k), 0.5, 'below: itself');
    close(aboveKink(k + a, k), k + a * (1 - Math.exp(-1)), 'one scale above');
    assert.ok(aboveKink(5, k) <= k + a && aboveKink(1, k) > k + 0.85 * a, 'bounded');
    for (const u of [0.3, 0.8, 0.85, 0.88]) close(aboveKink(aboveKinkInverse(u, k), k), u, `inverse at ${u}`);
  });

  test('behavior: over the 30 days before the snapshot, borrow rates above 100 % APY are rare and brief', () => {
    const { dataset, history } = sandboxSimulation('default', DEFAULT_SEED);
    const asOf = SANDBOX_AS_OF * 1000;
    const times: number[] = [];
    for (let t = asOf - 30 * DAY_MS; t < asOf; t += HOUR_MS) times.push(t);
    let hours = 0;
    let above = 0;
    let longest = 0;
    for (let i = 0; i < dataset.markets.length; i += 4) {
      let run = 0;
      for (const s of history.snapshots(i, times, 'hour')) {
        hours++;
        if (s.borrowApy > 1) {
          above++;
          longest = Math.max(longest, ++run);
        } else run = 0;
      }
    }
    assert.ok(above / hours < 0.001, `share of market-hours above 100 %: ${above / hours}`);
    assert.ok(longest <= 24, `longest run above 100 %: ${longest} h`);
    const snapshotAbove = dataset.markets.filter((m) => m.borrowApy > rateToApy(Math.log(2))).length;
    assert.ok(snapshotAbove <= dataset.markets.length / 1000, `${snapshotAbove} markets above 100 % now`);
  });
});
