import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { allPages, assertNone, mismatch, openSandbox, type Sandbox } from './sandbox.ts';

/**
 * Over the whole default sandbox, the answers agree with each other to the served precision:
 * a market's available and utilization are its supply and borrow's, its maxLeverage its LLTV's;
 * in isolated markets a position's health factor is its served collateral x lltv / debt; the
 * paged set of positions at risk is the overview's count; a portfolio's totals are its
 * positions'. (Pooled protocols' account-level health is checked in accounts.test.ts.)
 */

let sb: Sandbox;
before(async () => {
  sb = await openSandbox();
});
after(() => sb.close());

/** Protocols whose markets are isolated (one collateral, one debt per position): Morpho Blue, Fluid vaults. */
const ISOLATED = new Set(['morpho', 'fluid']);

interface ServedMarket {
  uniqueKey: string;
  supply: number | null;
  borrow: number | null;
  available: number | null;
  utilization: number;
  lltv: number;
  maxLeverage: number;
}

interface ServedPosition {
  protocol: string;
  user: { address: string };
  market: { uniqueKey: string; lltv: number };
  healthFactor: number;
  state: { collateralUsd: number; borrowAssetsUsd: number; supplyAssetsUsd: number };
  leverage: number | null;
  distanceToLiq: number;
}

/** available = supply - borrow (cents), utilization = min(1, borrow / supply) (8 places), maxLeverage = 1 / (1 - lltv) (8 digits). */
function marketProblems(m: ServedMarket): (string | null)[] {
  const out: (string | null)[] = [];
  if (m.supply !== null && m.borrow !== null) {
    out.push(mismatch(`${m.uniqueKey} available`, m.available ?? Number.NaN, m.supply - m.borrow, 0.000001));
    const u = m.supply > 0 && m.borrow > 0 ? Math.min(1, m.borrow / m.supply) : 0;
    out.push(mismatch(`${m.uniqueKey} utilization`, m.utilization, u, 5e-9));
  }
  const lev = 1 / (1 - m.lltv);
  out.push(mismatch(`${m.uniqueKey} maxLeverage`, m.maxLeverage, lev, 5e-8 * lev));
  return out;
}

describe('consistency: identities of the served figures', () => {
  test('every market: available, utilization and maxLeverage follow from supply, borrow and LLTV', async () => {
    const nowSec = Math.floor(sb.clock.now() / 1000);
    const { catalog } = sb.model;
    const problems: (string | null)[] = [];
    for (let ord = 0; ord < catalog.size; ord++)
      problems.push(...marketProblems(catalog.viewAt(ord, nowSec)));
    assert.ok(catalog.size > 1000);
    assertNone(problems, 'market figures');
    // and on the wire, the first pages of GET /markets
    const page = (await sb.get('/markets?limit=500')).data as ServedMarket[];
    assert.equal(page.length, 500);
    assertNone(page.flatMap(marketProblems), 'served markets');
  });

  test('every position of an isolated market: health factor = collateral x lltv / debt, on its served figures', async () => {
    const { items } = await allPages<ServedPosition>(
      sb,
      '/risk/positions-at-risk?healthFactorThreshold=10&limit=200',
      (p) => `${p.market.uniqueKey}/${p.user.address}`,
    );
    const isolated = items.filter((p) => ISOLATED.has(p.protocol));
    assert.ok(isolated.length > 100, `${isolated.length} positions of isolated markets`);
    const problems = isolated.flatMap((p) => {
      const c = p.state.collateralUsd;
      const b = p.state.borrowAssetsUsd;
      const hf = (c * p.market.lltv) / b;
      // amounts to the cent, the health factor to 8 significant digits
      const tol = hf * (0.005 / c + 0.005 / b) + 5e-8 * hf;
      const id = `${p.market.uniqueKey}/${p.user.address}`;
      return [
        mismatch(`${id} healthFactor`, p.healthFactor, hf, tol),
        // 8 places, from a health factor known to 8 significant digits (5e-8 of it, relative)
        mismatch(
          `${id} distanceToLiq`,
          p.distanceToLiq,
          1 - 1 / p.healthFactor,
          5e-9 + 5e-8 / p.healthFactor,
        ),
      ];
    });
    assertNone(problems, 'positions');
  });

  test("the paged set of positions at risk is the overview's count", async () => {
    const overview = (await sb.get('/analytics/overview')).data as {
      atRiskHealthFactor: number;
      totals: { positionsAtRisk: number };
    };
    const { items, totals } = await allPages<ServedPosition>(
      sb,
      `/risk/positions-at-risk?healthFactorThreshold=${overview.atRiskHealthFactor}&limit=200`,
      (p) => `${p.market.uniqueKey}/${p.user.address}`,
    );
    assert.ok(items.length > 200, `${items.length} at risk: more than a page`);
    assert.equal(items.length, overview.totals.positionsAtRisk);
    assert.ok(
      totals.every((t) => t === items.length),
      'meta.total on every page',
    );
  });

  test("a portfolio's totals are its positions'", async () => {
    const { data } = await sb.get('/risk/positions-at-risk?limit=200');
    const wallets = [...new Set((data as ServedPosition[]).map((p) => p.user.address))].slice(0, 40);
    const problems: (string | null)[] = [];
    for (const w of wallets) {
      const p = (await sb.get(`/portfolios/${w}`)).data as {
        totals: {
          collateralUsd: number;
          debtUsd: number;
          supplyUsd: number;
          netUsd: number;
          positions: number;
        };
        positions: ServedPosition[];
      };
      const n = p.positions.length;
      const sum = (f: (x: ServedPosition) => number) => p.positions.reduce((s, x) => s + f(x), 0);
      const tol = 0.005 * (n + 1);
      problems.push(
        p.totals.positions === n ? null : `${w} positions: ${p.totals.positions} != ${n}`,
        mismatch(
          `${w} collateral`,
          p.totals.collateralUsd,
          sum((x) => x.state.collateralUsd),
          tol,
        ),
        mismatch(
          `${w} debt`,
          p.totals.debtUsd,
          sum((x) => x.state.borrowAssetsUsd),
          tol,
        ),
        mismatch(
          `${w} supply`,
          p.totals.supplyUsd,
          sum((x) => x.state.supplyAssetsUsd),
          tol,
        ),
        mismatch(
          `${w} net`,
          p.totals.netUsd,
          p.totals.collateralUsd + p.totals.supplyUsd - p.totals.debtUsd,
          0.015,
        ),
      );
    }
    assert.ok(wallets.length > 10);
    assertNone(problems, 'portfolios');
  });
});
