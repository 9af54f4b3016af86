import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertNone, mismatch, openSandbox, type Sandbox } from './sandbox.ts';

/**
 * A market's borrowers are its positions: over the whole default sandbox, the served borrow of
 * every market equals the sum of its positions' served debt, and a market's collateral (as its
 * risk answer serves it) the sum of its positions' collateral, within the served precision
 * (each figure to the cent: half a cent per figure summed).
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

describe('consistency: positions sum to markets', () => {
  test("every market's borrow is the sum of its positions' debt", () => {
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
    assert.ok(checked > 1000, `${checked} markets checked`);
    assertNone(problems, 'markets');
  });

  test("a market's collateral (GET /risk/markets) is the sum of its positions' collateral", async () => {
    const sums = positionSums();
    const largest = [...sums.entries()].sort((a, b) => b[1].debt - a[1].debt).slice(0, 40);
    const problems: (string | null)[] = [];
    for (const [ord, s] of largest) {
      const key = sb.model.catalog.recordAt(ord).uniqueKey;
      const r = (await sb.get(`/risk/markets/${key}`)).data as { collateralUsd: number; debtUsd: number };
      problems.push(mismatch(`${key} collateral`, r.collateralUsd, s.collateral, 0.005 * (s.n + 1)));
      problems.push(mismatch(`${key} debt`, r.debtUsd, s.debt, 0.005 * (s.n + 1)));
    }
    assertNone(problems, 'markets');
  });
});
