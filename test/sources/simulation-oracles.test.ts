import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { oracleHealth } from '../../src/domain/oracle.ts';
import type { MarketRecord } from '../../src/domain/types.ts';
import { type SandboxFeed, sandboxFeeds } from '../../src/ingest/sandbox/feeds.ts';
import { DEFAULT_SEED, SANDBOX_AS_OF } from '../../src/ingest/sandbox/index.ts';
import { sandboxPriceBasis } from '../../src/ingest/sandbox/live.ts';
import { createOracleSimulator, type OracleSimulator } from '../../src/ingest/sandbox/simulation/index.ts';
import { createService, type Service } from '../../src/service.ts';
import { ManualClock } from '../clock.ts';
import { embeddedSettings, QUIET, tempDir } from '../helpers.ts';

/**
 * The served oracle health of the living sandbox: each feed's last update is the simulated
 * oracle's latest round at the tick (rounds on deviation and heartbeat, outages of hours), so
 * ages grow between ticks and reset when a feed posts. The service is ticked by hand.
 */

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

const clock = new ManualClock('2026-11-24T12:00:00.000Z');
let service: Service;
let get: (url: string) => Promise<{ data: { oracleHealth: Health | null }; meta: { asOf: string } }>;
let records: readonly MarketRecord[];
let feeds: readonly SandboxFeed[];
let sim: OracleSimulator;

interface Health {
  lastUpdateTimestamp: number;
  secondsSinceUpdate: number;
  expectedHeartbeatSeconds: number;
  isStale: boolean;
  stalenessRatio: number;
}

before(async () => {
  service = await createService(embeddedSettings(tempDir('lrds-oracles-')), { clock, server: QUIET });
  const account = await service.keys.ensureAccount('acme');
  const { key } = await service.keys.create({ accountId: account.id, tier: 'pro', mode: 'live' });
  get = async (url) => {
    const res = await service.app.inject({
      url: `/api/v1${url}`,
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };
  records = service.models.peek('live')!.catalog.baseRecords();
  const { model } = sandboxPriceBasis(records, DEFAULT_SEED);
  feeds = sandboxFeeds(records, model);
  sim = createOracleSimulator(model);
});
after(async () => {
  await service?.close();
});

/** Markets whose oracle has one feed, a simulated one that keeps posting, with its heartbeat. */
function singleFeedMarkets(heartbeatSec: number): { market: MarketRecord; feed: SandboxFeed }[] {
  const byKey = new Map(feeds.map((f) => [f.spec.key, f]));
  return records.flatMap((market) => {
    const only = market.oracle?.feeds.length === 1 ? market.oracle.feeds[0] : undefined;
    const feed = only && byKey.get(`${market.chainId}:${only.address.toLowerCase()}`);
    return feed && feed.stop === null && feed.heartbeatSec === heartbeatSec ? [{ market, feed }] : [];
  });
}

const secondsOf = (ms: number) => Math.floor(ms / 1000);

describe('served oracle ages follow the simulated rounds', () => {
  test('behavior: before the first tick the snapshot clocks serve; then the latest round at each tick, ageing in between', async () => {
    const { market, feed } = singleFeedMarkets(1200)[0]!;
    const url = `/markets/${market.uniqueKey}`;
    const now = () => secondsOf(clock.now());

    // No tick yet (as with SIMULATION_TICK_MS=0): the dataset's own cadence (docs/decisions.md "Oracle health").
    const snapshot = (await get(url)).data.oracleHealth!;
    const expected = oracleHealth(market.oracle, now())!;
    assert.equal(snapshot.lastUpdateTimestamp, expected.lastUpdateTimestamp);

    const t1 = clock.now();
    await service.models.tickSimulation(t1);
    const r1 = sim.latestRound(feed.spec, t1)!;
    const h1 = (await get(url)).data.oracleHealth!;
    assert.equal(h1.lastUpdateTimestamp, secondsOf(r1.updatedAtMs));
    assert.equal(h1.secondsSinceUpdate, now() - secondsOf(r1.updatedAtMs));
    assert.equal(h1.expectedHeartbeatSeconds, 1200);

    // Between ticks the age grows with the clock; nothing posted is seen before the next tick.
    clock.advance(30_000);
    const h1b = (await get(url)).data.oracleHealth!;
    assert.equal(h1b.lastUpdateTimestamp, h1.lastUpdateTimestamp);
    assert.equal(h1b.secondsSinceUpdate, h1.secondsSinceUpdate + 30);

    // Two hours on, the feed has posted (heartbeat 20 min): the age starts again from its round.
    clock.set(t1 + 2 * HOUR);
    const t2 = clock.now();
    await service.models.tickSimulation(t2);
    const r2 = sim.latestRound(feed.spec, t2)!;
    assert.ok(r2.updatedAtMs > r1.updatedAtMs);
    const h2 = (await get(url)).data.oracleHealth!;
    assert.equal(h2.lastUpdateTimestamp, secondsOf(r2.updatedAtMs));
    assert.ok(h2.secondsSinceUpdate <= 1200 || sim.staleWindows(feed.spec, t2 - DAY, t2).length > 0);
    assert.equal(h2.secondsSinceUpdate, secondsOf(t2) - secondsOf(r2.updatedAtMs));
  });

  test('behavior: a feed in an outage posts nothing for hours and is served stale, then fresh once it recovers', async () => {
    // An outage longer than the feed's heartbeat, after the snapshot.
    let found: { market: MarketRecord; feed: SandboxFeed; startMs: number; endMs: number } | null = null;
    for (const { market, feed } of [...singleFeedMarkets(1200), ...singleFeedMarkets(3600)]) {
      const w = sim
        .staleWindows(feed.spec, SANDBOX_AS_OF * 1000 + DAY, SANDBOX_AS_OF * 1000 + 120 * DAY)
        .find((o) => o.endMs - o.startMs > feed.heartbeatSec * 1000 + 20 * MINUTE);
      if (w) {
        found = { market, feed, ...w };
        break;
      }
    }
    assert.ok(found, 'an outage longer than a heartbeat');
    const { market, feed, startMs, endMs } = found;
    const url = `/markets/${market.uniqueKey}`;

    const inside = startMs + feed.heartbeatSec * 1000 + 10 * MINUTE;
    clock.set(inside);
    await service.models.tickSimulation(inside);
    const last = sim.latestRound(feed.spec, inside)!;
    assert.ok(last.updatedAtMs < startMs);
    const stale = (await get(url)).data.oracleHealth!;
    assert.equal(stale.lastUpdateTimestamp, secondsOf(last.updatedAtMs));
    assert.equal(stale.isStale, true);
    assert.ok(stale.stalenessRatio > 1);

    const back = endMs + MINUTE;
    clock.set(back);
    await service.models.tickSimulation(back);
    const fresh = (await get(url)).data.oracleHealth!;
    assert.equal(fresh.isStale, false);
    // the recovery round, when the feed came back (or a later one)
    assert.ok(fresh.lastUpdateTimestamp >= secondsOf(endMs));
    assert.equal(fresh.lastUpdateTimestamp, secondsOf(sim.latestRound(feed.spec, back)!.updatedAtMs));
  });
});
