import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { Catalog } from '../../src/data/catalog.ts';
import { fraction, servedBalances, significant, usd } from '../../src/domain/precision.ts';
import { generateSandbox, SANDBOX_AS_OF } from '../../src/ingest/sandbox/index.ts';

test('default: served figures without float noise, to the documented precision', () => {
  assert.equal(usd(32792526.580000162), 32792526.58);
  assert.equal(usd(-0.001), 0);
  assert.ok(Object.is(usd(-0.001), 0), 'no negative zero');
  assert.equal(fraction(0.1 + 0.2), 0.3);
  assert.equal(significant(1 / 3), 0.33333333);
  assert.equal(significant(0.0000123456789), 0.000012345679);
  for (const f of [usd, fraction, significant]) {
    assert.equal(f(Number.POSITIVE_INFINITY), Number.POSITIVE_INFINITY);
    assert.ok(Number.isNaN(f(Number.NaN)));
  }
});

test('behavior: rounding to the cent is within half a cent and prints at most two decimals', () => {
  fc.assert(
    fc.property(fc.double({ min: -1e12, max: 1e12, noNaN: true }), (x) => {
      const r = usd(x);
      assert.ok(Math.abs(r - x) <= 0.005 + 1e-6 * Math.abs(x) * Number.EPSILON, `${x} -> ${r}`);
      assert.match(String(r), /^-?\d+(\.\d{1,2})?$/);
    }),
  );
});

test('behavior: every USD amount of every sandbox market prints to the cent', () => {
  const { markets } = generateSandbox({ profile: 'default' });
  const catalog = new Catalog(markets, SANDBOX_AS_OF);
  const cents = /^-?\d+(\.\d{1,2})?$/;
  for (const v of catalog.views()) {
    for (const f of ['supply', 'borrow', 'available'] as const) {
      assert.match(String(v[f]), cents, `${v.uniqueKey} ${f} ${v[f]}`);
    }
    for (const f of ['utilization', 'supplyApy', 'borrowApy'] as const) {
      assert.ok((String(v[f]).split('.')[1] ?? '').length <= 8, `${v.uniqueKey} ${f} ${v[f]}`);
    }
  }
});

describe('servedBalances', () => {
  test('default: available and utilization from the served supply and borrow', () => {
    // Each rounded on its own, available would be usd(1000.005 - 0.004) = 1000.00; supply and
    // borrow serve as 1000.01 and 0, so available is 1000.01.
    assert.deepEqual(servedBalances(1000.005, 0.004), {
      supply: 1000.01,
      borrow: 0,
      available: 1000.01,
      utilization: 0,
    });
    assert.deepEqual(servedBalances(3, 1), { supply: 3, borrow: 1, available: 2, utilization: 0.33333333 });
  });

  test('behavior: supply - borrow = available to the cent, borrow / supply = utilization to 8 places', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 1e11, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (s, r) => {
          const b = servedBalances(s, s * r);
          assert.equal(Math.round((b.supply - b.borrow) * 100), Math.round(b.available * 100));
          if (b.supply > 0) assert.ok(Math.abs(Math.min(1, b.borrow / b.supply) - b.utilization) <= 5e-9);
        },
      ),
    );
  });
});
