import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { assetFamily } from '../../src/domain/asset-family.ts';
import type { MarketRecord, OracleFeedRecord } from '../../src/domain/types.ts';
import {
  DEFAULT_DEVIATION,
  feedClock,
  oracleRoundRows,
  pairSides,
  RESUME_HOURS,
  referenceDeviations,
  type SandboxFeed,
  sandboxFeeds,
} from '../../src/ingest/sandbox/feeds.ts';
import { DEFAULT_SEED, generateSandbox, SANDBOX_AS_OF } from '../../src/ingest/sandbox/index.ts';
import { sandboxPriceBasis } from '../../src/ingest/sandbox/live.ts';
import { loadReference } from '../../src/ingest/sandbox/reference.ts';
import {
  createOracleSimulator,
  createPriceModel,
  type PriceModel,
} from '../../src/ingest/sandbox/simulation/index.ts';
import { checkOracleRounds } from '../../src/store/history.ts';
import { makeMarket, makeOracle } from '../helpers.ts';

const AS_OF = SANDBOX_AS_OF * 1000;
const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

const PRICES: Record<string, number> = {
  WETH: 3300,
  wstETH: 4000,
  WBTC: 95_000,
  USDC: 1,
  USDT: 1,
  EURC: 1.1,
  ZORK: 0.37,
};

function smallModel(): PriceModel {
  return createPriceModel(
    { seed: DEFAULT_SEED, asOfMs: AS_OF },
    Object.entries(PRICES).map(([symbol, priceUsd]) => ({
      key: symbol,
      symbol,
      family: assetFamily(symbol),
      priceUsd,
    })),
  );
}

let feedNo = 0;
function feed(pair: string, overrides: Partial<OracleFeedRecord> = {}): OracleFeedRecord {
  feedNo++;
  return {
    address: `0xFEED${String(feedNo).padStart(36, '0')}`,
    description: pair,
    pair,
    heartbeatSeconds: 3600,
    lastUpdateTimestamp: SANDBOX_AS_OF - 60,
    updateIntervalSeconds: 1800,
    ...overrides,
  };
}

function marketWith(collateral: string, loan: string, feeds: OracleFeedRecord[], chainId = 1): MarketRecord {
  return makeMarket({ chainId, collateral, loan, oracle: makeOracle({ feeds }) });
}

describe('pairSides', () => {
  test('default: X/Y', () => {
    assert.deepEqual(pairSides('wstETH/ETH'), ['wstETH', 'ETH']);
  });

  test("behavior: three parts keep the first and the last; Aave's PREFIX_X__Y names", () => {
    assert.deepEqual(pairSides('sAMM-USDC/cUSDO/USD'), ['sAMM-USDC', 'USD']);
    assert.deepEqual(pairSides('AAVE_SVR_ETH__USD'), ['ETH', 'USD']);
    assert.deepEqual(pairSides('Calculated_MaticX__USD'), ['MaticX', 'USD']);
    assert.equal(pairSides('ACRED NAV - Aave LlamaGuard'), null);
  });
});

describe('sandboxFeeds', () => {
  const model = smallModel();
  const ethUsd = feed('ETH/USD');
  const lst = feed('wstETH/ETH', { heartbeatSeconds: 86_400 });
  const btc = feed('BTC/USD');
  const usdc = feed('USDC/USD', { heartbeatSeconds: 1200 });
  const eur = feed('EURC/USD');
  const zork = feed('ZORK/USDC');
  const unknown = feed('MYSTERY/USD');
  const stopped = feed('USDT/USD', {
    updateIntervalSeconds: null,
    lastUpdateTimestamp: SANDBOX_AS_OF - 9000,
  });
  const markets = [
    marketWith('wstETH', 'WETH', [lst, ethUsd]),
    marketWith('WETH', 'USDC', [ethUsd, usdc]),
    marketWith('WBTC', 'USDC', [btc, usdc]),
    marketWith('EURC', 'USDC', [eur]),
    marketWith('ZORK', 'USDC', [zork]),
    marketWith('ZORK', 'USDT', [unknown, stopped]),
    // the same address on another chain is another feed
    marketWith('WETH', 'USDC', [ethUsd], 8453),
  ];
  const feeds = sandboxFeeds(markets, model, new Map([[`1:${btc.address.toLowerCase()}`, 0.003]]));
  const byPair = (pair: string, chainId = 1) => feeds.find((f) => f.pair === pair && f.chainId === chainId)!;

  test('default: one feed per chain and lower-case address, in the order markets first use them', () => {
    assert.deepEqual(
      feeds.map((f) => `${f.chainId}:${f.pair}`),
      [
        '1:wstETH/ETH',
        '1:ETH/USD',
        '1:USDC/USD',
        '1:BTC/USD',
        '1:EURC/USD',
        '1:ZORK/USDC',
        '1:MYSTERY/USD',
        '1:USDT/USD',
        '8453:ETH/USD',
      ],
    );
    for (const f of feeds) {
      assert.equal(f.address, f.address.toLowerCase());
      assert.equal(f.spec.key, `${f.chainId}:${f.address}`);
    }
  });

  test('behavior: X/USD reports X, X/Y reports X over Y, in the price model keys (symbols, WETH for ETH)', () => {
    assert.deepEqual(
      { asset: byPair('ETH/USD').spec.asset, quote: byPair('ETH/USD').spec.quote },
      { asset: 'WETH', quote: undefined },
    );
    assert.deepEqual(
      { asset: byPair('wstETH/ETH').spec.asset, quote: byPair('wstETH/ETH').spec.quote },
      { asset: 'wstETH', quote: 'WETH' },
    );
    assert.equal(byPair('ZORK/USDC').spec.quote, 'USDC');
    // BTC is no market's token: its family's anchor
    assert.equal(byPair('BTC/USD').spec.asset, 'WBTC');
    // a pair the model cannot read: the token the feed prices in the market listing it
    assert.equal(byPair('MYSTERY/USD').spec.asset, 'ZORK');
    for (const f of feeds) {
      assert.ok(model.has(f.spec.asset));
      if (f.spec.quote !== undefined) assert.ok(model.has(f.spec.quote));
    }
  });

  test('behavior: deviation from the reference when it has the feed, else by pair kind; heartbeat from the feed', () => {
    assert.equal(byPair('BTC/USD').spec.deviation, 0.003);
    assert.equal(byPair('BTC/USD').deviationSource, 'reference');
    assert.equal(byPair('ETH/USD').spec.deviation, DEFAULT_DEVIATION.volatile);
    assert.equal(byPair('USDC/USD').spec.deviation, DEFAULT_DEVIATION.stable);
    assert.equal(byPair('EURC/USD').spec.deviation, DEFAULT_DEVIATION.stable);
    assert.equal(byPair('wstETH/ETH').spec.deviation, DEFAULT_DEVIATION.samePeg);
    assert.equal(byPair('ZORK/USDC').spec.deviation, DEFAULT_DEVIATION.longTail);
    assert.equal(byPair('USDC/USD').spec.heartbeatSec, 1200);
    assert.equal(byPair('wstETH/ETH').spec.heartbeatSec, 86_400);
  });

  test('behavior: a feed the dataset shows as stopped stops at its last update and resumes hours after the snapshot', () => {
    const stop = byPair('USDT/USD').stop!;
    assert.equal(stop.startMs, (SANDBOX_AS_OF - 9000) * 1000 + 1);
    assert.ok(stop.endMs >= AS_OF + RESUME_HOURS[0] * HOUR && stop.endMs <= AS_OF + RESUME_HOURS[1] * HOUR);
    assert.deepEqual(byPair('USDT/USD').spec.stop, stop);
    assert.equal(byPair('ETH/USD').stop, null);
    // Nothing posted while stopped, a recovery round once it resumes.
    const sim = createOracleSimulator(model);
    const spec = byPair('USDT/USD').spec;
    assert.ok(sim.latestRound(spec, stop.endMs - 1)!.updatedAtMs < stop.startMs);
    const back = sim.latestRound(spec, stop.endMs + MINUTE)!;
    assert.ok(back.updatedAtMs >= stop.endMs && back.reason === 'recovery');
  });

  test('behavior: the reference thresholds are fractions, implausible ones left out', () => {
    const ref = loadReference();
    const d = referenceDeviations(ref);
    assert.ok(d.size > 100);
    for (const v of d.values()) assert.ok(v >= 0.0005 && v <= 0.1);
  });

  test('behavior: every feed of the default sandbox is mapped', () => {
    const ds = generateSandbox({ profile: 'default' });
    const basis = sandboxPriceBasis(ds.markets, DEFAULT_SEED);
    const all = sandboxFeeds(ds.markets, basis.model);
    const distinct = new Set(
      ds.markets.flatMap((m) =>
        (m.oracle?.feeds ?? []).map((f) => `${m.chainId}:${f.address.toLowerCase()}`),
      ),
    );
    assert.equal(all.length, distinct.size);
    assert.ok(all.length > 1000);
    const sim = createOracleSimulator(basis.model);
    // every spec is one the simulator takes
    for (const f of all) sim.staleWindows(f.spec, AS_OF, AS_OF);
    assert.ok(all.some((f) => f.deviationSource === 'reference'));
    // An hour of rows: empty batches while the feeds' cells are replayed (32 feeds each), then the hour.
    const batches = [...oracleRoundRows(basis.model, all, AS_OF - HOUR, AS_OF, HOUR)];
    assert.equal(batches.length, Math.ceil(all.length / 32));
    assert.ok(batches.slice(0, -1).every((b) => b.length === 0));
    // every feed posts at least one round an hour but the daily ones
    assert.ok(batches.at(-1)!.length > all.filter((f) => f.heartbeatSec <= 3600).length);
  });
});

describe('oracleRoundRows', () => {
  const model = smallModel();
  const markets = [
    marketWith('wstETH', 'WETH', [feed('wstETH/ETH', { heartbeatSeconds: 86_400 }), feed('ETH/USD')]),
    marketWith('WETH', 'USDC', [feed('USDC/USD', { heartbeatSeconds: 1200 })]),
    marketWith('ZORK', 'USDT', [
      feed('ZORK/USD', { heartbeatSeconds: 82_800 }),
      feed('USDT/USD', { updateIntervalSeconds: null, lastUpdateTimestamp: SANDBOX_AS_OF - 2 * 86_400 }),
    ]),
  ];
  const feeds = sandboxFeeds(markets, model, new Map());
  const from = AS_OF - 4 * DAY + 17 * MINUTE;
  const to = AS_OF;
  const rows = [...oracleRoundRows(model, feeds, from, to)].flat();

  test('default: store rows, in [from, to)', () => {
    assert.ok(rows.length > 0);
    checkOracleRounds(rows);
    for (const r of rows) {
      assert.deepEqual(Object.keys(r).sort(), ['answer', 'chainId', 'feed', 'roundId', 'updatedAt']);
      assert.match(r.roundId, /^(0|[1-9][0-9]*)$/);
      assert.ok(r.updatedAt >= from && r.updatedAt < to && Number.isInteger(r.updatedAt));
      assert.ok(r.answer > 0 && Number.isFinite(r.answer));
    }
  });

  test("behavior: each feed's rows are the simulator's rounds, exactly; a stopped feed has none after it stopped", () => {
    const sim = createOracleSimulator(model);
    for (const f of feeds) {
      const expected = sim.rounds(f.spec, from, to - 1).map((r) => ({
        chainId: f.chainId,
        feed: f.address,
        roundId: r.roundId.toString(),
        answer: r.answer,
        updatedAt: r.updatedAtMs,
      }));
      assert.deepEqual(
        rows.filter((r) => r.chainId === f.chainId && r.feed === f.address),
        expected,
        f.pair,
      );
    }
    const stopped = feeds.find((f) => f.stop !== null)!;
    assert.ok(rows.some((r) => r.feed === stopped.address));
    assert.ok(
      rows.every(
        (r) =>
          r.feed !== stopped.address ||
          r.updatedAt < stopped.stop!.startMs ||
          r.updatedAt >= stopped.stop!.endMs,
      ),
    );
  });

  test('behavior: the same rows whatever the windows, and on every run (deterministic)', () => {
    const hourly = [...oracleRoundRows(model, feeds, from, to, HOUR)].flat();
    const key = (r: (typeof rows)[number]) => `${r.chainId}:${r.feed}:${r.roundId}`;
    const sorted = (list: typeof rows) => [...list].sort((a, b) => (key(a) < key(b) ? -1 : 1));
    assert.deepEqual(sorted(hourly), sorted(rows));
    assert.deepEqual([...oracleRoundRows(smallModel(), feeds, from, to)].flat(), rows);
    const split = [
      ...oracleRoundRows(model, feeds, from, AS_OF - 2 * DAY),
      ...oracleRoundRows(model, feeds, AS_OF - 2 * DAY, to),
    ].flat();
    assert.deepEqual(sorted(split), sorted(rows));
  });

  test('behavior: one batch a window; nothing before the model starts', () => {
    assert.equal([...oracleRoundRows(model, feeds, from, to)].length, 4);
    assert.deepEqual([...oracleRoundRows(model, feeds, model.startMs - 3 * DAY, model.startMs)], []);
    const first = [...oracleRoundRows(model, feeds, model.startMs - DAY, model.startMs + DAY)].flat();
    assert.ok(first.length > 0 && first.every((r) => r.updatedAt >= model.startMs));
  });
});

describe('feedClock', () => {
  const model = smallModel();
  const markets = [
    marketWith('wstETH', 'WETH', [feed('wstETH/ETH', { heartbeatSeconds: 86_400 }), feed('ETH/USD')]),
    marketWith('WETH', 'USDC', [feed('USDC/USD', { heartbeatSeconds: 1200 })]),
  ];
  const feeds: SandboxFeed[] = sandboxFeeds(markets, model, new Map());
  const sim = createOracleSimulator(model);

  test("default: each feed's latest round at the tick, then only the feeds whose latest round changed", async () => {
    const clock = feedClock(feeds, model);
    const t0 = AS_OF + 3 * DAY + 7 * MINUTE;
    await clock.warm(t0);
    const first = clock.updatesAt(t0);
    assert.deepEqual(
      first,
      feeds.map((f) => ({
        chainId: f.chainId,
        feed: f.address,
        lastUpdateTimestamp: Math.floor(sim.latestRound(f.spec, t0)!.updatedAtMs / 1000),
      })),
    );
    assert.deepEqual(clock.updatesAt(t0), []);
    const seen = new Map(first.map((u) => [u.feed, u.lastUpdateTimestamp]));
    for (let t = t0 + 5000; t < t0 + 2 * HOUR; t += 5000) {
      for (const u of clock.updatesAt(t)) seen.set(u.feed, u.lastUpdateTimestamp);
      if ((t - t0) % (10 * MINUTE) !== 0) continue;
      for (const f of feeds) {
        assert.equal(seen.get(f.address), Math.floor(sim.latestRound(f.spec, t)!.updatedAtMs / 1000));
      }
    }
  });

  test('behavior: time going back, or a jump, gives the latest round of that instant', () => {
    const clock = feedClock(feeds, model);
    for (const t of [AS_OF + 10 * DAY, AS_OF + 2 * DAY + 5 * MINUTE, AS_OF + 40 * DAY + 1234]) {
      // days apart: every feed has posted since
      const got = new Map(clock.updatesAt(t).map((u) => [u.feed, u.lastUpdateTimestamp]));
      assert.equal(got.size, feeds.length);
      for (const f of feeds) {
        assert.equal(got.get(f.address), Math.floor(sim.latestRound(f.spec, t)!.updatedAtMs / 1000));
      }
    }
  });
});
