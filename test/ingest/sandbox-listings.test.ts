import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { assetFamily } from '../../src/domain/asset-family.ts';
import { PT_WIND_DOWN_DAYS } from '../../src/ingest/sandbox/economics.ts';
import { DEFAULT_SEED, generateSandbox, SANDBOX_AS_OF } from '../../src/ingest/sandbox/index.ts';
import { sandboxPriceBasis } from '../../src/ingest/sandbox/live.ts';
import { LST_ETH_RATIOS, ptUnderlying } from '../../src/ingest/sandbox/prices.ts';
import { maturityFromSymbol } from '../../src/ingest/sandbox/simulation/index.ts';
import { DAY_MS } from '../../src/ingest/sandbox/simulation/noise.ts';

/** What the sandbox lists and at what prices: only what exists on chain, priced as it is. */

const ds = generateSandbox({ profile: 'default', seed: DEFAULT_SEED });
const AS_OF = SANDBOX_AS_OF * 1000;
const positionsByMarket = new Map<string, number>();
for (const p of ds.positions())
  positionsByMarket.set(p.marketKey, (positionsByMarket.get(p.marketKey) ?? 0) + 1);

describe('sandbox listings', () => {
  test('invariant: no market lends a token against itself with money in it', () => {
    const same = ds.markets.filter(
      (m) =>
        m.collateralAddress.toLowerCase() === m.loanAddress.toLowerCase() ||
        m.collateral.toLowerCase() === m.loan.toLowerCase(),
    );
    assert.ok(same.length > 0, 'the reference lists some (kept as listings)');
    for (const m of same) {
      assert.equal(m.supply, 0, m.uniqueKey);
      assert.equal(m.borrow, 0, m.uniqueKey);
      assert.equal(positionsByMarket.get(m.uniqueKey) ?? 0, 0, m.uniqueKey);
    }
  });

  test('invariant: a PT past its maturity is wound down: empty a month after, no borrower left', () => {
    let matured = 0;
    for (const m of ds.markets) {
      for (const s of [m.collateral, m.loan]) {
        if (assetFamily(s) !== 'pt') continue;
        const t = maturityFromSymbol(s);
        if (t === null || t > AS_OF - PT_WIND_DOWN_DAYS * DAY_MS) continue;
        matured++;
        assert.equal(m.supply, 0, `${m.uniqueKey} (${s})`);
        assert.equal(positionsByMarket.get(m.uniqueKey) ?? 0, 0, `${m.uniqueKey} (${s})`);
      }
    }
    assert.ok(matured > 100, `${matured} matured PT listings`);
  });

  test('behavior: a PT is priced at par with its underlying from its maturity on', () => {
    const basis = sandboxPriceBasis(ds.markets, DEFAULT_SEED);
    const symbols = new Set(ds.markets.flatMap((m) => [m.collateral, m.loan]));
    let checked = 0;
    for (const s of symbols) {
      if (assetFamily(s) !== 'pt' || !basis.model.has(s)) continue;
      const t = maturityFromSymbol(s);
      const u = ptUnderlying(s);
      if (t === null || !basis.model.has(u)) continue;
      for (const at of [Math.max(t, basis.model.startMs), AS_OF + 10 * DAY_MS]) {
        if (at < t) continue;
        const ratio = basis.model.priceAt(s, at) / basis.model.priceAt(u, at);
        assert.ok(Math.abs(ratio - 1) < 1e-9, `${s} at ${new Date(at).toISOString()}: ${ratio}`);
        checked++;
      }
    }
    assert.ok(checked > 20, `${checked} PT prices checked`);
  });

  test('known answers: LSTs and LRTs at their exchange rate to ETH', () => {
    const price = new Map<string, number>();
    for (const m of ds.markets) {
      price.set(m.collateral, m.collateralPrice);
      price.set(m.loan, m.loanPrice);
    }
    const eth = price.get('WETH')!;
    for (const s of ['wstETH', 'weETH', 'rETH', 'cbETH', 'ezETH', 'rsETH']) {
      assert.ok(price.has(s), s);
      assert.ok(Math.abs(price.get(s)! / eth - LST_ETH_RATIOS[s]!) < 1e-6, `${s}: ${price.get(s)! / eth}`);
    }
    assert.equal(LST_ETH_RATIOS.wstETH, 1.22);
  });
});
