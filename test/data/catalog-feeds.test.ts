import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Catalog } from '../../src/data/catalog.ts';
import { oracleHealth } from '../../src/domain/oracle.ts';
import { significant } from '../../src/domain/precision.ts';
import { makeMarket, makeOracle } from '../helpers.ts';

const FEED = `0x${'feed'.padStart(40, '0')}`;
const OTHER = `0x${'beef'.padStart(40, '0')}`;
const NOW = Date.parse('2026-11-22T12:00:00Z') / 1000;

function twoFeedOracle() {
  const base = makeOracle();
  return makeOracle({
    feeds: [
      { ...base.feeds[0]!, address: FEED },
      { ...base.feeds[0]!, address: OTHER, pair: 'USDC/USD', heartbeatSeconds: 86_400 },
    ],
    isComposite: true,
  });
}

describe('Catalog.applyFeedUpdates', () => {
  test('default: the markets listing the feed serve its update as their last, ageing from it', () => {
    // Two markets share one oracle object (a Morpho oracle used by several markets).
    const shared = twoFeedOracle();
    const a = makeMarket({ oracle: shared, supply: 2 });
    const b = makeMarket({ oracle: shared, supply: 1 });
    const c = makeMarket({ chainId: 8453, oracle: twoFeedOracle() });
    const catalog = new Catalog([a, b, c], NOW);
    const before = structuredClone(shared);
    const last = NOW - 4000;
    assert.equal(
      catalog.applyFeedUpdates([{ chainId: 1, feed: FEED.toUpperCase(), lastUpdateTimestamp: last }]),
      2,
    );
    for (const m of [a, b]) {
      const v = catalog.get(m.uniqueKey, NOW)!;
      assert.equal(v.oracle!.feeds[0]!.lastUpdateTimestamp, last);
      assert.equal(v.oracle!.feeds[0]!.updateIntervalSeconds, null);
      // 4000 s on a 1 h heartbeat: the stalest feed, stale
      assert.deepEqual(v.oracleHealth, {
        lastUpdateTimestamp: last,
        secondsSinceUpdate: 4000,
        expectedHeartbeatSeconds: 3600,
        isStale: true,
        stalenessRatio: significant(4000 / 3600),
      });
      assert.equal(catalog.get(m.uniqueKey, NOW + 10)!.oracleHealth!.secondsSinceUpdate, 4010);
    }
    // Another chain's feed at the same address, and the stored records, are left alone.
    assert.deepEqual(catalog.get(c.uniqueKey, NOW)!.oracle, c.oracle);
    assert.deepEqual(shared, before);
    assert.deepEqual(catalog.baseRecords().find((m) => m.uniqueKey === a.uniqueKey)!.oracle, before);
  });

  test('behavior: a feed update drops the cached JSON; a later second keeps it and moves only the health', () => {
    const m = makeMarket({ oracle: twoFeedOracle() });
    const catalog = new Catalog([m], NOW);
    const ord = catalog.ordOf(m.uniqueKey)!;
    let heads = 0;
    const head = (v: object) => {
      heads++;
      return Buffer.from(JSON.stringify({ ...v, oracleHealth: undefined }));
    };
    const health = (h: unknown) => Buffer.from(JSON.stringify(h));
    const [first] = catalog.json(ord, NOW, head, health);
    assert.equal(catalog.json(ord, NOW, head, health)[0], first);
    const update = { chainId: 1, feed: FEED, lastUpdateTimestamp: NOW - 10 };
    assert.equal(catalog.applyFeedUpdates([update]), 1);
    const [second, tail] = catalog.json(ord, NOW, head, health);
    assert.notEqual(second, first);
    assert.equal(heads, 2);
    assert.equal(JSON.parse(Buffer.from(tail).toString()).lastUpdateTimestamp, NOW - 10);
    assert.equal(catalog.applyFeedUpdates([update]), 0);
    assert.equal(catalog.json(ord, NOW, head, health)[0], second);
    assert.equal(catalog.applyFeedUpdates([{ ...update, feed: `0x${'1'.repeat(40)}` }]), 0);
    assert.equal(catalog.applyFeedUpdates([]), 0);
    // Ten seconds on: the same head, a health ten seconds older, nothing serialized again.
    const [later, laterTail] = catalog.json(ord, NOW + 10, head, health);
    assert.equal(later, second);
    assert.equal(heads, 2);
    const moved = JSON.parse(Buffer.from(laterTail).toString());
    assert.equal(moved.lastUpdateTimestamp, NOW - 10);
    assert.equal(moved.secondsSinceUpdate, JSON.parse(Buffer.from(tail).toString()).secondsSinceUpdate + 10);
  });

  test('behavior: health follows the stalest feed, as "Oracle health" (docs/decisions.md) computes it from the updated records', () => {
    const m = makeMarket({ oracle: twoFeedOracle() });
    const catalog = new Catalog([m], NOW);
    catalog.applyFeedUpdates([
      { chainId: 1, feed: FEED, lastUpdateTimestamp: NOW - 60 },
      { chainId: 1, feed: OTHER, lastUpdateTimestamp: NOW - 50_000 },
    ]);
    const v = catalog.get(m.uniqueKey, NOW)!;
    const h = oracleHealth(v.oracle, NOW)!;
    assert.deepEqual(v.oracleHealth, { ...h, stalenessRatio: significant(h.stalenessRatio) });
    assert.equal(v.oracleHealth!.lastUpdateTimestamp, NOW - 50_000);
  });
});
