import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { feedLastUpdate, oracleHealth } from '../../src/domain/oracle.ts';
import type { OracleFeedRecord, OracleRecord } from '../../src/domain/types.ts';

/** 2023-11-14T22:13:20Z */
const T0 = 1_700_000_000;
const HOUR = 3_600;
const DAY = 86_400;

function makeFeed(overrides: Partial<OracleFeedRecord> = {}): OracleFeedRecord {
  return {
    address: '0x5f4ec3df9cbd43714fe2740f5e3616155c5b8419',
    description: 'ETH / USD',
    pair: 'ETH/USD',
    heartbeatSeconds: HOUR,
    lastUpdateTimestamp: T0,
    updateIntervalSeconds: null,
    ...overrides,
  };
}

function makeOracle(feeds: OracleFeedRecord[], overrides: Partial<OracleRecord> = {}): OracleRecord {
  return {
    address: '0x2a01eb9496094da03c4e364def50f5ad1280ad72',
    type: 'ChainlinkOracleV2',
    provider: 'Chainlink',
    feeds,
    isComposite: feeds.length > 1,
    warnings: null,
    ...overrides,
  };
}

const timestamp = fc.integer({ min: 1_500_000_000, max: 2_000_000_000 });
const seconds = fc.integer({ min: 1, max: 2 * DAY });
const feedArb = fc
  .record({
    heartbeatSeconds: seconds,
    lastUpdateTimestamp: timestamp,
    updateIntervalSeconds: fc.option(seconds, { nil: null }),
  })
  .map((fields) => makeFeed(fields));

describe('feedLastUpdate', () => {
  test('default: a feed without an interval is stuck at its last update', () => {
    assert.equal(feedLastUpdate(makeFeed(), T0 + 10 * DAY), T0);
  });

  test('default: a feed with an interval updates on that cadence', () => {
    // 9,000 s after T0 at a 3,600 s cadence: floor(9,000 / 3,600) = 2 ticks → T0 + 7,200
    assert.equal(feedLastUpdate(makeFeed({ updateIntervalSeconds: HOUR }), T0 + 9_000), T0 + 7_200);
    // exactly on a tick: 3 x 3,600 = 10,800
    assert.equal(feedLastUpdate(makeFeed({ updateIntervalSeconds: HOUR }), T0 + 10_800), T0 + 10_800);
  });

  test('behavior: a clock before the last update returns the last update', () => {
    assert.equal(feedLastUpdate(makeFeed({ updateIntervalSeconds: HOUR }), T0 - 500), T0);
  });

  test('behavior: a fractional clock is floored to the second', () => {
    // floor(T0 + 3,599.9) = T0 + 3,599: not yet the next tick
    assert.equal(feedLastUpdate(makeFeed({ updateIntervalSeconds: HOUR }), T0 + 3_599.9), T0);
  });

  test('behavior: the last tick at or before now, on the cadence', () => {
    fc.assert(
      fc.property(timestamp, seconds, fc.integer({ min: 0, max: 365 * DAY }), (last, interval, elapsed) => {
        const now = last + elapsed;
        const result = feedLastUpdate(
          makeFeed({ lastUpdateTimestamp: last, updateIntervalSeconds: interval }),
          now,
        );
        return (
          Number.isInteger(result) &&
          result >= last &&
          result <= now &&
          now - result < interval &&
          (result - last) % interval === 0
        );
      }),
    );
  });

  test('error: non-positive interval', () => {
    assert.throws(() => feedLastUpdate(makeFeed({ updateIntervalSeconds: 0 }), T0 + HOUR), RangeError);
    assert.throws(() => feedLastUpdate(makeFeed({ updateIntervalSeconds: -60 }), T0 + HOUR), RangeError);
  });
});

describe('oracleHealth', () => {
  test('default: a fresh single feed', () => {
    // cadence 3,600 s, 9,000 s after T0 → last update T0 + 7,200, 1,800 s ago; 1,800 / 3,600 = 0.5
    const oracle = makeOracle([makeFeed({ updateIntervalSeconds: HOUR })]);
    assert.deepEqual(oracleHealth(oracle, T0 + 9_000), {
      lastUpdateTimestamp: T0 + 7_200,
      secondsSinceUpdate: 1_800,
      expectedHeartbeatSeconds: HOUR,
      isStale: false,
      stalenessRatio: 0.5,
    });
  });

  test('default: a stuck feed past its heartbeat is stale', () => {
    // heartbeat 86,400 s, stuck since T0, now T0 + 90,000 → 90,000 / 86,400 = 1.041666...
    const oracle = makeOracle([makeFeed({ heartbeatSeconds: DAY })]);
    const health = oracleHealth(oracle, T0 + 90_000);
    assert.ok(health !== null);
    assert.equal(health.lastUpdateTimestamp, T0);
    assert.equal(health.secondsSinceUpdate, 90_000);
    assert.equal(health.expectedHeartbeatSeconds, DAY);
    assert.equal(health.stalenessRatio, 90_000 / 86_400);
    assert.equal(health.isStale, true);
  });

  test('behavior: exactly one heartbeat late is not yet stale', () => {
    const health = oracleHealth(makeOracle([makeFeed()]), T0 + HOUR);
    assert.equal(health?.stalenessRatio, 1);
    assert.equal(health?.isStale, false);
    assert.equal(oracleHealth(makeOracle([makeFeed()]), T0 + HOUR + 1)?.isStale, true);
  });

  test('behavior: a composite oracle reports its stalest feed', () => {
    // feed A: heartbeat 86,400 s, 7,200 s old → 0.0833...; feed B: heartbeat 3,600 s, 7,200 s old → 2
    const a = makeFeed({ pair: 'WSTETH/STETH', heartbeatSeconds: DAY });
    const b = makeFeed({ pair: 'STETH/USD', heartbeatSeconds: HOUR });
    const health = oracleHealth(makeOracle([a, b]), T0 + 7_200);
    assert.deepEqual(health, {
      lastUpdateTimestamp: T0,
      secondsSinceUpdate: 7_200,
      expectedHeartbeatSeconds: HOUR,
      isStale: true,
      stalenessRatio: 2,
    });
  });

  test('behavior: the stalest feed is by ratio, not by age', () => {
    // A: 20,000 s old / 86,400 = 0.23; B: 3,000 s old / 3,600 = 0.83 → B, although A is older
    const a = makeFeed({ heartbeatSeconds: DAY, lastUpdateTimestamp: T0 });
    const b = makeFeed({ heartbeatSeconds: HOUR, lastUpdateTimestamp: T0 + 17_000 });
    const health = oracleHealth(makeOracle([a, b]), T0 + 20_000);
    assert.equal(health?.lastUpdateTimestamp, T0 + 17_000);
    assert.equal(health?.secondsSinceUpdate, 3_000);
    assert.equal(health?.expectedHeartbeatSeconds, HOUR);
  });

  test('behavior: a timestamp in the future reads as just updated', () => {
    const health = oracleHealth(makeOracle([makeFeed()]), T0 - 120);
    assert.equal(health?.secondsSinceUpdate, 0);
    assert.equal(health?.stalenessRatio, 0);
    assert.equal(health?.isStale, false);
  });

  test('behavior: no oracle or no feeds gives null', () => {
    assert.equal(oracleHealth(null, T0), null);
    assert.equal(oracleHealth(makeOracle([]), T0), null);
  });

  test('behavior: the composite value is that of its stalest feed', () => {
    fc.assert(
      fc.property(fc.array(feedArb, { minLength: 1, maxLength: 5 }), timestamp, (feeds, now) => {
        const health = oracleHealth(makeOracle(feeds), now);
        const single = feeds.map((feed) => oracleHealth(makeOracle([feed]), now));
        const maxRatio = Math.max(...single.map((h) => h?.stalenessRatio ?? Number.NaN));
        assert.ok(health !== null);
        assert.equal(health.stalenessRatio, maxRatio);
        assert.deepEqual(
          health,
          single.find((h) => h?.stalenessRatio === maxRatio),
        );
      }),
    );
  });

  test('behavior: isStale iff the ratio is above 1, and time since update is never negative', () => {
    fc.assert(
      fc.property(fc.array(feedArb, { minLength: 1, maxLength: 5 }), timestamp, (feeds, now) => {
        const health = oracleHealth(makeOracle(feeds), now);
        assert.ok(health !== null);
        assert.equal(health.isStale, health.stalenessRatio > 1);
        assert.ok(health.secondsSinceUpdate >= 0);
        assert.ok(Number.isInteger(health.secondsSinceUpdate));
        assert.equal(health.stalenessRatio, health.secondsSinceUpdate / health.expectedHeartbeatSeconds);
      }),
    );
  });

  test('behavior: a feed updating faster than its heartbeat is never stale', () => {
    fc.assert(
      fc.property(
        timestamp,
        seconds,
        fc.integer({ min: 1, max: 2 * DAY }),
        fc.integer({ min: 0, max: 3_650 * DAY }),
        (last, interval, extra, elapsed) => {
          const feed = makeFeed({
            lastUpdateTimestamp: last,
            updateIntervalSeconds: interval,
            heartbeatSeconds: interval + extra,
          });
          const health = oracleHealth(makeOracle([feed]), last + elapsed);
          return health !== null && !health.isStale && health.stalenessRatio < 1;
        },
      ),
    );
  });

  test('error: non-positive heartbeat', () => {
    assert.throws(() => oracleHealth(makeOracle([makeFeed({ heartbeatSeconds: 0 })]), T0), RangeError);
  });
});
