import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertNone, mismatch, openSandbox, type Sandbox } from './sandbox.ts';

/**
 * A market's borrowers are its positions: over the whole default sandbox, the served borrow of
 * every market equals the sum of its positions' served debt, and a market's collateral (as its
 * risk answer serves it) the sum of its positions' collateral, within the served precision
 * (each figure to the cent: half a cent per figure summed); at the seed, and again after the
 * simulation has run on (interest accrued, positions liquidated, opened and closed).
 */

let sb: Sandbox;
before(async () => {
  sb = await openSandbox();
});
after(() => sb.close());

/** Per market (ord): its positions' served debt and collateral, summed, and how many. */
function positionSums(): Map<number, { debt: number; collateral: number; n: number }> {
  const { risk } = sb.model;
  const sums = new Map<number, { debt: number; collateral: number; n: number }>();
  for (let i = 0; i < risk.size; i++) {
    const a = risk.amountsOf(i);
    if (!(a.borrowUsd > 0)) continue;
    const v = risk.view(i);
    const s = sums.get(a.ord) ?? { debt: 0, collateral: 0, n: 0 };
    s.debt += v.state.borrowAssetsUsd;
    s.collateral += v.state.collateralUsd;
    s.n++;
    sums.set(a.ord, s);
  }
  return sums;
}

/** Every market's served borrow against its positions' debt: the mismatches. */
function borrowProblems(): { problems: (string | null)[]; checked: number } {
  const { catalog } = sb.model;
  const sums = positionSums();
  const problems: (string | null)[] = [];
  let checked = 0;
  for (let ord = 0; ord < catalog.size; ord++) {
    const m = catalog.viewAt(ord, Math.floor(sb.clock.now() / 1000));
    if (m.borrow === null) continue;
    const s = sums.get(ord) ?? { debt: 0, collateral: 0, n: 0 };
    checked++;
    problems.push(mismatch(`${m.uniqueKey} borrow`, m.borrow, s.debt, 0.005 * (s.n + 1)));
  }
  return { problems, checked };
}

/** The largest markets' risk answers: collateral and debt are their positions', borrow their debt. */
async function riskProblems(): Promise<(string | null)[]> {
  const sums = positionSums();
  const largest = [...sums.entries()].sort((a, b) => b[1].debt - a[1].debt).slice(0, 40);
  const problems: (string | null)[] = [];
  for (const [ord, s] of largest) {
    const key = sb.model.catalog.recordAt(ord).uniqueKey;
    const r = (await sb.get(`/risk/markets/${key}`)).data as {
      collateralUsd: number;
      debtUsd: number;
      borrowUsd: number;
    };
    const tol = 0.005 * (s.n + 1);
    problems.push(mismatch(`${key} collateral`, r.collateralUsd, s.collateral, tol));
    problems.push(mismatch(`${key} debt`, r.debtUsd, s.debt, tol));
    problems.push(mismatch(`${key} borrow`, r.borrowUsd, s.debt, tol));
  }
  return problems;
}

/** Simulation ticks on the injected clock, each followed by the change feed, as a server runs them. */
async function tick(times: number, stepMs: number): Promise<void> {
  for (let k = 0; k < times; k++) {
    sb.clock.advance(stepMs);
    await sb.service.stepSimulation(sb.clock.now());
    await sb.service.models.reloadIfChanged();
  }
}

describe('consistency: positions sum to markets', () => {
  test("every market's borrow is the sum of its positions' debt", () => {
    const { problems, checked } = borrowProblems();
    assert.ok(checked > 1000, `${checked} markets checked`);
    assertNone(problems, 'markets');
  });

  test("a market's collateral (GET /risk/markets) is the sum of its positions' collateral", async () => {
    assertNone(await riskProblems(), 'markets');
  });

  test('after simulation ticks (interest, catch-up liquidations, openings and closings) every market still adds up', async () => {
    const seq0 = sb.model.changeSeq;
    // Ten-minute ticks for an hour: the first catches up from the snapshot (liquidations at
    // the hours prices crossed), each writes the minutes' openings and closings.
    await tick(6, 10 * 60_000);
    assert.ok(sb.model.changeSeq > seq0 + 100, `positions changed: ${sb.model.changeSeq - seq0}`);
    const { problems, checked } = borrowProblems();
    assert.ok(checked > 1000, `${checked} markets checked`);
    assertNone(problems, 'markets after ticks');
    assertNone(await riskProblems(), 'markets after ticks');
    // Ticks that only accrue interest and move prices (a day later, no step in between).
    await tick(2, 24 * 3_600_000);
    assertNone(borrowProblems().problems, 'markets days later');
  });
});
