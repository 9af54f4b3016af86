import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { applyPrices } from '../../src/data/read-model.ts';
import type { SubscriptionRecord } from '../../src/domain/records/events.ts';
import { SubscriptionIndex } from '../../src/events/filters.ts';
import { HealthCrossings, type Matched } from '../../src/events/matcher.ts';
import { ManualClock } from '../clock.ts';
import { webhook } from '../contract/event-store-contract.ts';
import { makeMarket, makePosition, modelOf } from '../helpers.ts';

const clock = new ManualClock();
const market = makeMarket({ lltv: 0.86 });
// hf = 12,000 x 0.86 / 8,000 = 1.29 at the snapshot prices; collateral price x r moves it to 1.29 r.
const watched = makePosition(market, { collateralUsd: 12_000, borrowUsd: 8_000 });
const other = makePosition(market, { collateralUsd: 30_000, borrowUsd: 8_000 });

/** A subscriber to health-factor events (by default: the watched wallet's below 1.2). */
function sub(filters: SubscriptionRecord['filters'] = {}, more: Partial<SubscriptionRecord> = {}) {
  return webhook({ filters: { healthFactorBelow: 1.2, ...filters }, ...more });
}
const mine = { wallets: [watched.user] };

/** A model, a matcher, and a step that moves the collateral price to r x the snapshot's and returns the events. */
function setup(subs: SubscriptionRecord[]) {
  const model = modelOf([market], [watched, other], clock);
  let index = new SubscriptionIndex(subs);
  const matcher = new HealthCrossings();
  const step = (r: number | null): Matched => {
    if (r !== null)
      applyPrices(model, [{ chainId: 1, token: market.collateralAddress, ratio: r }], clock.now());
    clock.advance(1000);
    const out: Matched = { events: [], deliveries: [] };
    matcher.pass(model, index, 'live', clock.now(), out);
    return out;
  };
  return { model, step, setIndex: (s: SubscriptionRecord[]) => (index = new SubscriptionIndex(s)) };
}

describe('HealthCrossings', () => {
  test('a crossing below the threshold fires once, then again only after 1 % back above it', () => {
    const w = sub(mine);
    const { step } = setup([w]);
    assert.equal(step(null).events.length, 0, 'the first pass observes');
    const crossed = step(0.9); // 1.161
    assert.equal(crossed.events.length, 1);
    const e = crossed.events[0]!;
    assert.equal(e.type, 'position.health_factor_below');
    assert.equal(e.threshold, 1.2);
    assert.equal(e.wallet, watched.user);
    assert.deepEqual(crossed.deliveries, [{ eventId: e.id, webhookId: w.id }]);
    const body = JSON.parse(e.body);
    assert.equal(body.id, e.id);
    assert.equal(body.type, 'position.health_factor_below');
    assert.equal(body.data.user.address, watched.user);
    assert.ok(Math.abs(body.data.healthFactor - 1.161) < 1e-9, 'data is the served PositionAtRisk');
    assert.equal(step(0.85).events.length, 0, 'still below: nothing more');
    assert.equal(step(0.935).events.length, 0, '1.206: above, but by less than 1 %');
    assert.equal(step(0.9).events.length, 0, 'not armed again');
    assert.equal(step(0.95).events.length, 0, '1.2255: armed again');
    assert.equal(step(0.9).events.length, 1, 'a second crossing');
  });

  test('filters: another wallet, chain or market does not match; a stream interest stores without delivery', () => {
    const stream = sub({ marketIds: [market.uniqueKey] }, { kind: 'stream', url: null });
    const { step } = setup([
      sub({ wallets: ['0x00000000000000000000000000000000000000ff'] }),
      sub({ ...mine, chainIds: [10] }),
      sub({ marketIds: ['morpho-1-0x01'] }),
      stream,
    ]);
    step(null);
    const out = step(0.9);
    assert.equal(out.events.length, 1, 'for the stream');
    assert.deepEqual(out.deliveries, []);
  });

  test('several thresholds: a fall through two fires both; a threshold added later does not fire for positions already below it', () => {
    const a = sub({ ...mine, healthFactorBelow: 1.2 });
    const b = sub({ ...mine, healthFactorBelow: 1.1 });
    const { step, setIndex } = setup([a, b]);
    step(null);
    const out = step(0.8); // 1.032
    assert.deepEqual(out.events.map((e) => e.threshold).sort(), [1.1, 1.2]);
    const c = sub({ ...mine, healthFactorBelow: 1.25 });
    setIndex([a, b, c]);
    assert.equal(step(null).events.length, 0, 'below 1.25 when it was added');
    assert.equal(step(1).events.length, 0, '1.29: back above all');
    const again = step(0.95); // 1.2255
    assert.deepEqual(
      again.events.map((e) => e.threshold),
      [1.25],
    );
    assert.deepEqual(
      again.deliveries.map((d) => d.webhookId),
      [c.id],
    );
  });

  test('a threshold added between two others does not fire for a position that fell below it unseen', () => {
    const low = sub({ ...mine, healthFactorBelow: 1.1 });
    const high = sub({ ...mine, healthFactorBelow: 1.5 });
    const { step, setIndex } = setup([low, high]);
    step(null);
    assert.equal(step(1.24).events.length, 0, '1.5996: above both');
    assert.deepEqual(
      step(1.124).events.map((e) => e.threshold),
      [1.5],
      '1.44996: below 1.5',
    );
    // Down to 1.1997 with no threshold crossed: nothing read, nothing sent.
    assert.equal(step(0.93).events.length, 0);
    const middle = sub({ ...mine, healthFactorBelow: 1.3 });
    setIndex([low, high, middle]);
    assert.equal(step(null).events.length, 0, 'below 1.3 when it was added');
    assert.equal(step(1.05).events.length, 0, '1.3545: 1 % above 1.3, armed');
    const crossed = step(0.98); // 1.2642
    assert.deepEqual(
      crossed.events.map((e) => e.threshold),
      [1.3],
    );
    assert.deepEqual(
      crossed.deliveries.map((d) => d.webhookId),
      [middle.id],
    );
  });

  test('a fall read in the pass a new threshold arrives fires the thresholds watched before, held or not', () => {
    for (const held of [true, false]) {
      const a = sub({ ...mine, healthFactorBelow: 1.2 });
      const b = sub({ ...mine, healthFactorBelow: 1.3 });
      const { step, setIndex } = setup([a, b]);
      step(null);
      // 1.2513: held (1.3 crossed); or 1.3545: above both, not held.
      step(held ? 0.97 : 1.05);
      // In one interval the price falls to 1.161 and a subscriber at 1.25 arrives.
      const c = sub({ ...mine, healthFactorBelow: 1.25 });
      setIndex([a, b, c]);
      const fired = step(0.9).events.map((e) => e.threshold);
      assert.deepEqual(fired, held ? [1.2] : [1.2, 1.3], `held ${held}`);
    }
  });

  test('a position exactly at the highest threshold x 1.01 is armed for every threshold', () => {
    const max = 1.981;
    const bound = max * 1.01;
    // A position whose health factor is bound / 2 as stated: a factor of 2 puts it at the bound exactly.
    const p = makePosition(market, { collateralUsd: 12_000, borrowUsd: 8_000, healthFactor: bound / 2 });
    const model = modelOf([market], [p], clock);
    const index = new SubscriptionIndex([sub({ healthFactorBelow: 1.5 }), sub({ healthFactorBelow: max })]);
    const matcher = new HealthCrossings();
    const step = (r: number) => {
      applyPrices(model, [{ chainId: 1, token: market.collateralAddress, ratio: r }], clock.now());
      clock.advance(1000);
      const out: Matched = { events: [], deliveries: [] };
      matcher.pass(model, index, 'live', clock.now(), out);
      return out.events.map((e) => e.threshold);
    };
    step(1.0001); // about 1.0005: below both, held
    assert.deepEqual(step(2), [], 'at the bound');
    assert.equal(matcher.held, 0);
    assert.deepEqual(step(1.9), [max], 'below the highest threshold again');
  });

  test('a threshold above every position held before fires for a position that then crosses it', () => {
    const { step, setIndex } = setup([sub({ healthFactorBelow: 1.0 })]);
    step(null);
    // 1.29 is above 1.0 x 1.01: the position is not held. A subscriber at 1.5 arrives while it is below 1.5.
    const high = sub({ healthFactorBelow: 1.5 });
    setIndex([sub({ healthFactorBelow: 1.0 }), high]);
    assert.equal(step(null).events.length, 0);
    assert.equal(step(1.2).events.length, 0, '1.548: above');
    assert.equal(step(1.1).events.length, 1, '1.419: crossed');
  });
});
