/**
 * Oracle freshness (docs/decisions.md "Oracle health"). Pure functions: the clock comes in as `nowSec`.
 * All timestamps are integer unix seconds; a fractional `nowSec` is floored to the second.
 */
import type { OracleFeedRecord, OracleHealth, OracleRecord } from './types.ts';

/**
 * Timestamp (unix seconds) of the feed's most recent update at `nowSec`.
 *
 * A feed with a non-null `updateIntervalSeconds` keeps updating on that cadence from
 * `lastUpdateTimestamp`: the answer is the last tick at or before now,
 * `lastUpdateTimestamp + floor((now - lastUpdateTimestamp) / interval) * interval`.
 * A feed with a null interval stopped at `lastUpdateTimestamp`. A `nowSec` earlier than
 * `lastUpdateTimestamp` (clock skew) returns `lastUpdateTimestamp`.
 *
 * Precondition: `updateIntervalSeconds` is null or a finite number > 0 (else RangeError).
 */
export function feedLastUpdate(feed: OracleFeedRecord, nowSec: number): number {
  const last = feed.lastUpdateTimestamp;
  const interval = feed.updateIntervalSeconds;
  if (interval === null) return last;
  if (!(interval > 0 && Number.isFinite(interval))) {
    throw new RangeError(`updateIntervalSeconds must be a positive number or null, got ${interval}`);
  }
  const now = Math.floor(nowSec);
  if (!(now >= last)) return last;
  return last + Math.floor((now - last) / interval) * interval;
}

/**
 * Freshness of one feed at `nowSec`: seconds since its last update (clamped at 0, so a
 * timestamp in the future reads as just updated) over its heartbeat.
 * Precondition: `heartbeatSeconds` is a finite number > 0 (else RangeError).
 */
export function feedHealth(feed: OracleFeedRecord, nowSec: number): OracleHealth {
  const heartbeat = feed.heartbeatSeconds;
  if (!(heartbeat > 0 && Number.isFinite(heartbeat))) {
    throw new RangeError(`heartbeatSeconds must be a positive number, got ${heartbeat}`);
  }
  const lastUpdateTimestamp = feedLastUpdate(feed, nowSec);
  const secondsSinceUpdate = Math.max(0, Math.floor(nowSec) - lastUpdateTimestamp);
  const stalenessRatio = secondsSinceUpdate / heartbeat;
  return {
    lastUpdateTimestamp,
    secondsSinceUpdate,
    expectedHeartbeatSeconds: heartbeat,
    isStale: stalenessRatio > 1,
    stalenessRatio,
  };
}

/**
 * Health of an oracle at `nowSec` (unix seconds), per docs/decisions.md "Oracle health":
 * - `lastUpdateTimestamp`: unix seconds of the latest update (see {@link feedLastUpdate});
 * - `secondsSinceUpdate`: now - lastUpdateTimestamp, in seconds, never negative;
 * - `expectedHeartbeatSeconds`: the feed's promised maximum interval, in seconds;
 * - `stalenessRatio`: secondsSinceUpdate / expectedHeartbeatSeconds (dimensionless);
 * - `isStale`: stalenessRatio > 1 (exactly one heartbeat late is still fresh).
 *
 * A composite oracle (several feeds) reports the values of its stalest feed, the one with
 * the highest stalenessRatio; on a tie, the first such feed in `oracle.feeds` order.
 * Null when there is no oracle or it has no feeds (no data to judge).
 * Preconditions on each feed as in {@link feedLastUpdate}, and `heartbeatSeconds` > 0.
 */
export function oracleHealth(oracle: OracleRecord | null, nowSec: number): OracleHealth | null {
  if (oracle === null) return null;
  let stalest: OracleHealth | null = null;
  for (const feed of oracle.feeds) {
    const health = feedHealth(feed, nowSec);
    if (stalest === null || health.stalenessRatio > stalest.stalenessRatio) stalest = health;
  }
  return stalest;
}
