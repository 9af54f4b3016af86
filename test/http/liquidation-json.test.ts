import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import fastJson from 'fast-json-stringify';
import type { LiquidationEvent } from '../../src/domain/records/history.ts';
import { liquidationJson } from '../../src/http/routes/liquidations/list.ts';
import { LiquidationSchema } from '../../src/http/routes/liquidations/schemas.ts';
import { liquidationView } from '../../src/queries/history.ts';
import { sandboxReadModel } from '../../src/service.ts';

// The streamed liquidations are written with JSON.stringify (see liquidationJson): it must give
// the bytes of the schema's own serializer for every view the query builds.
const schemaJson = fastJson(LiquidationSchema) as (v: unknown) => string;
const model = sandboxReadModel(Date.UTC(2026, 10, 1));
const knownMarket = model.catalog.recordAt(0).uniqueKey;

const amount = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true, min: 0, max: 1e15 }),
  fc.constantFrom(0, 1e-9, 123456789.12345679, 2 ** 53, 1e21, 5e-324),
);
/** A USD value: unknown (null) where its token had no USD price. */
const usdAmount = fc.option(amount, { nil: null });
const text = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.constantFrom('a"b', 'c\\d', '\u0000\u001f', '\ud800'),
);
const event: fc.Arbitrary<LiquidationEvent> = fc.record({
  protocol: fc.constantFrom('morpho', 'aave', 'spark', 'compound', 'euler', 'fluid'),
  chainId: fc.integer({ min: 1, max: 2 ** 31 }),
  txHash: text,
  logIndex: fc.nat(),
  block: fc.nat({ max: 2 ** 40 }),
  at: fc.integer({ min: 0, max: Date.UTC(2100, 0, 1) }),
  marketKey: fc.oneof(text, fc.constant(knownMarket)),
  borrower: text,
  liquidator: text,
  collateralSeized: amount,
  collateralSeizedUsd: usdAmount,
  debtRepaid: amount,
  debtRepaidUsd: usdAmount,
  badDebt: amount,
  badDebtUsd: usdAmount,
});

test("behavior: a streamed liquidation is the schema serializer's JSON, byte for byte", () => {
  fc.assert(
    fc.property(event, (l) => {
      const view = liquidationView(model, l);
      assert.equal(liquidationJson(view), schemaJson(view));
    }),
    { numRuns: 2000 },
  );
  // A market of the current data names its tokens; one no longer served names none.
  const known = liquidationView(model, { ...sample(), marketKey: knownMarket });
  assert.notEqual(known.collateral, null);
  assert.equal(liquidationView(model, { ...sample(), marketKey: 'gone' }).collateral, null);
});

function sample(): LiquidationEvent {
  return fc.sample(event, 1)[0]!;
}
