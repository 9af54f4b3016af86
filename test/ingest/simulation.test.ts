import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { assetFamily } from '../../src/domain/asset-family.ts';
import { SANDBOX_AS_OF } from '../../src/ingest/sandbox/index.ts';
import { PriceBook } from '../../src/ingest/sandbox/prices.ts';
import {
  createOracleSimulator,
  createPriceModel,
  type FeedSpec,
  maturityFromSymbol,
  type OracleRound,
  type PriceModel,
  type SimAsset,
} from '../../src/ingest/sandbox/simulation/index.ts';

const SEED = 42;
const AS_OF = SANDBOX_AS_OF * 1000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const MINUTE = 60_000;

const SYMBOLS = [
  'ETH',
  'WETH',
  'wstETH',
  'weETH',
  'BTC',
  'WBTC',
  'cbBTC',
  'USDC',
  'USDT',
  'DAI',
  'sUSDe',
  'USDe',
  'EURC',
  'EURCV',
  'PAXG',
  'AAVE',
  'LINK',
  'ZORK',
  'PT-sUSDE-27NOV2025',
  'PT-USDe-7MAY2027',
  'PT-wstETH-30DEC2027',
];

function assetsFor(symbols: readonly string[], seed = SEED): SimAsset[] {
  const book = new PriceBook(seed);
  return symbols.map((s) => ({ key: s, symbol: s, family: assetFamily(s), priceUsd: book.price(s) }));
}

function model(seed = SEED, symbols: readonly string[] = SYMBOLS, asOfMs = AS_OF): PriceModel {
  return createPriceModel({ seed, asOfMs }, assetsFor(symbols, seed));
}

function relDiff(a: number, b: number): number {
  return Math.abs(a / b - 1);
}

/** Largest fall from a running peak within the values (0.2 = -20 %). */
function drawdown(prices: ArrayLike<number>): number {
  let peak = 0;
  let dd = 0;
  for (let i = 0; i < prices.length; i++) {
    const p = prices[i] as number;
    peak = Math.max(peak, p);
    dd = Math.max(dd, 1 - p / peak);
  }
  return dd;
}

function overlaps(windows: readonly { startMs: number; endMs: number }[], from: number, to: number): boolean {
  return windows.some((w) => w.endMs > from && w.startMs <= to);
}

describe('price model', () => {
  const m = model();

  test('behavior: same seed gives the same prices whatever the order they are asked in', () => {
    const times = [
      AS_OF + 7 * DAY + 123_456,
      m.startMs,
      AS_OF - 200 * DAY + 17 * MINUTE,
      AS_OF,
      AS_OF - 3 * HOUR,
    ];
    const forward = model();
    const backward = model();
    const a = SYMBOLS.flatMap((k) => times.map((t) => forward.priceAt(k, t)));
    const asked = new Map<string, number>();
    for (const k of [...SYMBOLS].reverse())
      for (const t of [...times].reverse()) asked.set(`${k}|${t}`, backward.priceAt(k, t));
    assert.deepEqual(
      SYMBOLS.flatMap((k) => times.map((t) => asked.get(`${k}|${t}`))),
      a,
    );
    // Asking the same thing twice, or after the path grew far forward, changes nothing.
    forward.priceAt('AAVE', AS_OF + 400 * DAY);
    assert.deepEqual(
      SYMBOLS.flatMap((k) => times.map((t) => forward.priceAt(k, t))),
      a,
    );
  });

  test('behavior: a path does not depend on which other assets are in the model', () => {
    const alone = createPriceModel({ seed: SEED, asOfMs: AS_OF }, assetsFor(['LINK', 'wstETH']));
    for (const t of [m.startMs, AS_OF - 90 * DAY + 5 * MINUTE, AS_OF + 3 * DAY]) {
      assert.equal(alone.priceAt('LINK', t), m.priceAt('LINK', t));
      assert.equal(alone.priceAt('wstETH', t), m.priceAt('wstETH', t));
    }
  });

  test('behavior: another seed gives other paths', () => {
    const other = model(7);
    assert.notEqual(other.priceAt('ETH', AS_OF - 100 * DAY), m.priceAt('ETH', AS_OF - 100 * DAY));
  });

  test('behavior: every path ends at the snapshot price at asOf', () => {
    for (const a of assetsFor(SYMBOLS)) {
      assert.equal(m.priceAt(a.key, AS_OF), a.priceUsd, a.key);
      const h = m.hourly(a.key, m.startMs, AS_OF);
      assert.equal(h.prices.length, 365 * 24 + 1);
      assert.equal(h.fromMs, m.startMs);
      assert.equal(h.prices[h.prices.length - 1], a.priceUsd, a.key);
    }
  });

  test('behavior: hourly gives exactly priceAt at whole hours', () => {
    for (const key of SYMBOLS) {
      const h = m.hourly(key, AS_OF - 40 * DAY + 1, AS_OF + 2 * DAY);
      assert.equal(h.fromMs, AS_OF - 40 * DAY + HOUR);
      for (let i = 0; i < h.prices.length; i += 37) {
        assert.equal(h.prices[i], m.priceAt(key, h.fromMs + i * h.stepMs), `${key} hour ${i}`);
      }
    }
  });

  test('behavior: prices continue forward after asOf, continuously, within and across hours', () => {
    for (const key of SYMBOLS) {
      for (const t of [
        AS_OF + 1,
        AS_OF + 5 * HOUR + 29 * MINUTE,
        AS_OF + 90 * DAY + 13_000,
        AS_OF + 800 * DAY,
      ]) {
        const p = m.priceAt(key, t);
        assert.ok(Number.isFinite(p) && p > 0, key);
        // A second later the price is almost the same (wobble knots are 5 minutes apart).
        assert.ok(relDiff(m.priceAt(key, t + 1000), p) < 2e-4, `${key} jumps at ${t}`);
      }
      const hour = AS_OF + 30 * DAY;
      assert.ok(relDiff(m.priceAt(key, hour - 1), m.priceAt(key, hour)) < 1e-5, `${key} hour boundary`);
      // The within-hour path is not a straight line for the driven families.
      if (key === 'ETH') {
        const mid = m.priceAt(key, hour + 30 * MINUTE);
        const line = Math.sqrt(m.priceAt(key, hour) * m.priceAt(key, hour + HOUR));
        assert.notEqual(mid, line);
      }
    }
  });

  test('error: before the start, unknown key, duplicate key, bad price', () => {
    assert.throws(() => m.priceAt('ETH', m.startMs - 1), RangeError);
    assert.throws(() => m.hourly('ETH', m.startMs - HOUR, AS_OF), RangeError);
    assert.throws(() => m.priceAt('NOPE', AS_OF), RangeError);
    assert.throws(() => m.priceAt('ETH', Number.NaN), RangeError);
    const a: SimAsset = { key: 'x', symbol: 'X', family: 'other', priceUsd: 1 };
    assert.throws(() => createPriceModel({ seed: 1, asOfMs: AS_OF }, [a, a]), RangeError);
    assert.throws(() => createPriceModel({ seed: 1, asOfMs: AS_OF }, [{ ...a, priceUsd: 0 }]), RangeError);
    assert.throws(() => createPriceModel({ seed: -1, asOfMs: AS_OF }, []), RangeError);
  });

  test('behavior: WETH is ETH; LSTs follow ETH within a small basis except their depeg windows', () => {
    const eth = m.hourly('ETH', m.startMs, AS_OF + 30 * DAY).prices;
    const weth = m.hourly('WETH', m.startMs, AS_OF + 30 * DAY).prices;
    for (let i = 0; i < eth.length; i++) assert.ok(relDiff(weth[i] as number, eth[i] as number) < 1e-12);
    for (const lst of ['wstETH', 'weETH']) {
      const h = m.hourly(lst, m.startMs, AS_OF + 30 * DAY);
      const events = m.events(lst, m.startMs, AS_OF + 30 * DAY);
      assert.ok(events.some((e) => e.kind === 'crash-depeg'));
      const ratio0 = (m.priceAt(lst, AS_OF) as number) / m.priceAt('ETH', AS_OF);
      let moved = false;
      for (let i = 0; i < h.prices.length; i++) {
        const t = h.fromMs + i * HOUR;
        const r = (h.prices[i] as number) / (eth[i] as number) / ratio0;
        assert.ok(r > 0.94 && r < 1.002, `${lst} ratio ${r} at ${t}`);
        if (!overlaps(events, t, t)) assert.ok(Math.abs(r - 1) < 0.0011, `${lst} basis ${r} at ${t}`);
        if (Math.abs(r - 1) > 1e-5) moved = true;
      }
      assert.ok(moved, `${lst} basis never moves`);
    }
  });

  test('behavior: BTC wrappers follow BTC within a few bp', () => {
    const btc = m.hourly('BTC', m.startMs, AS_OF).prices;
    for (const w of ['WBTC', 'cbBTC']) {
      const h = m.hourly(w, m.startMs, AS_OF).prices;
      const r0 = (h[h.length - 1] as number) / (btc[btc.length - 1] as number);
      for (let i = 0; i < h.length; i++) {
        assert.ok(Math.abs((h[i] as number) / (btc[i] as number) / r0 - 1) < 7e-4, w);
      }
    }
  });

  test('behavior: stables hold the peg except in their depeg windows, which are rare and hours long', () => {
    // Plenty of stable symbols, so some depegs happen within the year.
    const names = Array.from({ length: 120 }, (_, i) => `USD${i}X`);
    const stables = createPriceModel({ seed: SEED, asOfMs: AS_OF }, assetsFor(names));
    let depegs = 0;
    for (const key of names) {
      const p0 = stables.priceAt(key, AS_OF);
      const h = stables.hourly(key, stables.startMs, AS_OF);
      const events = stables.events(key, stables.startMs, AS_OF);
      depegs += events.length;
      for (const e of events) {
        assert.equal(e.kind, 'depeg');
        assert.ok(e.endMs - e.startMs >= 2 * HOUR && e.endMs - e.startMs <= 24 * HOUR);
        assert.ok(e.depth >= 0.005 && e.depth <= 0.05);
        // At the bottom of the depeg (a quarter into it) the price is down by about the depth.
        const bottom = e.startMs + (e.endMs - e.startMs) / 4;
        const drop = 1 - stables.priceAt(key, bottom) / p0;
        assert.ok(Math.abs(drop - e.depth) < 0.003, `${key} depeg ${drop} vs ${e.depth}`);
      }
      for (let i = 0; i < h.prices.length; i++) {
        const t = h.fromMs + i * HOUR;
        if (overlaps(events, t, t)) continue;
        assert.ok(relDiff(h.prices[i] as number, p0) < 0.0021, `${key} off peg at ${t}`);
      }
    }
    // 0.05 a year per symbol: about 6 expected over 120 symbols.
    assert.ok(depegs >= 1 && depegs <= 20, `${depegs} depegs`);
  });

  test('behavior: yield-bearing stables accrue; EUR stables follow EUR/USD together', () => {
    const now = m.priceAt('sUSDe', AS_OF);
    const yearAgo = m.priceAt('sUSDe', m.startMs);
    const growth = Math.log(now / yearAgo) * (365.25 / 365);
    assert.ok(growth > 0.025 && growth < 0.125, `sUSDe accrued ${growth}`);
    const r0 = m.priceAt('EURC', AS_OF) / m.priceAt('EURCV', AS_OF);
    let moved = 0;
    for (let t = m.startMs; t <= AS_OF; t += 5 * DAY) {
      const r = m.priceAt('EURC', t) / m.priceAt('EURCV', t) / r0;
      // Each peg wobbles within +-10 bp, so relative to asOf each is within 0.2 %, and the ratio 0.4 %.
      if (!overlaps([...m.events('EURC', t, t), ...m.events('EURCV', t, t)], t, t))
        assert.ok(Math.abs(r - 1) < 0.0041);
      moved = Math.max(moved, relDiff(m.priceAt('EURC', t), m.priceAt('EURC', AS_OF)));
    }
    assert.ok(moved > 0.005, 'EUR/USD never moved');
  });

  test('behavior: PTs trade below their underlying and converge to it at maturity', () => {
    const keys = ['PT-sUSDE-27NOV2025', 'PT-USDe-7MAY2027', 'PT-wstETH-30DEC2027'];
    for (const key of keys) {
      const mat = m.maturity(key);
      assert.ok(mat, key);
      assert.ok(mat.maturityMs > AS_OF);
      const u = mat.underlyingKey;
      for (let t = m.startMs; t < mat.maturityMs; t += 10 * DAY) {
        assert.ok(m.priceAt(key, t) < m.priceAt(u, t), `${key} above its underlying at ${t}`);
      }
      const atMaturity = m.priceAt(key, mat.maturityMs);
      assert.ok(relDiff(atMaturity, m.priceAt(u, mat.maturityMs)) < 1e-9, key);
      assert.ok(
        relDiff(m.priceAt(key, mat.maturityMs + 5 * DAY), m.priceAt(u, mat.maturityMs + 5 * DAY)) < 1e-12,
      );
      // A day before maturity the discount is small.
      assert.ok(1 - m.priceAt(key, mat.maturityMs - DAY) / m.priceAt(u, mat.maturityMs - DAY) < 0.003, key);
      // The implied rate behind the snapshot price, recomputed from the prices.
      const years = (mat.maturityMs - AS_OF) / (365.25 * DAY);
      const implied = -Math.log(m.priceAt(key, AS_OF) / m.priceAt(u, AS_OF)) / years;
      assert.ok(relDiff(implied, mat.impliedRateAtAsOf) < 1e-9);
    }
    // A date in the symbol is used when it is after asOf; a matured one is replaced.
    assert.equal(m.maturity('PT-USDe-7MAY2027')?.source, 'symbol');
    assert.equal(m.maturity('PT-USDe-7MAY2027')?.maturityMs, Date.UTC(2027, 4, 7));
    assert.equal(m.maturity('PT-USDe-7MAY2027')?.underlyingKey, 'USDe');
    assert.equal(m.maturity('PT-sUSDE-27NOV2025')?.source, 'derived');
    // Its underlying sUSDE is not among the assets: it is priced from the PriceBook.
    assert.equal(m.maturity('PT-sUSDE-27NOV2025')?.underlyingKey, '~underlying|sUSDE');
    assert.equal(m.priceAt('~underlying|sUSDE', AS_OF), new PriceBook(SEED).price('sUSDE'));
    assert.equal(m.maturity('ETH'), null);
  });

  test('behavior: with asOf before a PT maturity, the symbol date is kept and reached inside the path', () => {
    const asOf = Date.UTC(2025, 9, 1);
    const early = model(SEED, ['PT-sUSDE-27NOV2025', 'sUSDE'], asOf);
    const mat = early.maturity('PT-sUSDE-27NOV2025');
    assert.deepEqual(mat?.source, 'symbol');
    assert.equal(mat?.maturityMs, Date.UTC(2025, 10, 27));
    const pt = early.priceAt('PT-sUSDE-27NOV2025', Date.UTC(2025, 10, 27));
    assert.ok(relDiff(pt, early.priceAt('sUSDE', Date.UTC(2025, 10, 27))) < 1e-9);
  });

  test('maturityFromSymbol reads Pendle and Aave spellings', () => {
    assert.equal(maturityFromSymbol('PT-sUSDE-27MAR2025'), Date.UTC(2025, 2, 27));
    assert.equal(maturityFromSymbol('PT_USDe_5FEB2026'), Date.UTC(2026, 1, 5));
    assert.equal(maturityFromSymbol('PT-srUSDe-2APR2026'), Date.UTC(2026, 3, 2));
    assert.equal(maturityFromSymbol('PT-USDe'), null);
    assert.equal(maturityFromSymbol('PT-USDe-31FEB2026'), null);
    assert.equal(maturityFromSymbol('PT-USDe-31XYZ2026'), null);
  });

  test('behavior: crash days for seed 42 (liquidation waves are built on these dates)', () => {
    const days = m.crashes.map((c) => new Date(c.dayMs).toISOString().slice(0, 10));
    assert.deepEqual(days, ['2026-03-30', '2026-05-15', '2026-07-06', '2026-09-12']);
    assert.equal(m.crashes.filter((c) => c.major).length, 1);
    assert.equal(m.crashes.find((c) => c.major)?.dayMs, Date.UTC(2026, 4, 15));
  });

  test('behavior: crashes are 3 to 5 a year, one of them ETH -20 % or worse within the day', () => {
    for (const seed of [SEED, 1, 7, 2024, 99_999]) {
      const s = seed === SEED ? m : model(seed, ['ETH', 'BTC', 'AAVE', 'wstETH']);
      assert.ok(s.crashes.length >= 3 && s.crashes.length <= 5, `seed ${seed}`);
      for (const c of s.crashes) {
        assert.ok(c.dayMs >= s.startMs && c.reboundEndMs < AS_OF, `seed ${seed}`);
        const day = (key: string) => s.hourly(key, c.dayMs, c.dayMs + DAY - 1).prices;
        const eth = drawdown(day('ETH'));
        if (c.major) assert.ok(eth >= 0.2, `seed ${seed}: ETH fell only ${eth} on the big crash day`);
        else assert.ok(eth >= 0.05, `seed ${seed}: ETH fell only ${eth}`);
        assert.ok(drawdown(day('BTC')) >= 0.5 * c.ethDrop, `seed ${seed}: BTC`);
        assert.ok(drawdown(day('AAVE')) >= 0.2 * c.ethDrop, `seed ${seed}: AAVE`);
        // The LST falls further than ETH at the trough.
        const lstRatio = (t: number) => s.priceAt('wstETH', t) / s.priceAt('ETH', t);
        assert.ok(lstRatio(c.troughMs) < lstRatio(c.startMs) * 0.999, `seed ${seed}: LST extra depeg`);
      }
    }
  });

  test('performance sanity: a year of hourly prices for 2,000 assets builds', () => {
    const book = new PriceBook(SEED);
    const families = ['ETH', 'wstETH', 'WBTC', 'USDC', 'sUSDe', 'EURC', 'PAXG', 'AAVE', 'PT-USDe-7MAY2027'];
    const assets: SimAsset[] = Array.from({ length: 2000 }, (_, i) => {
      const symbol = i < families.length ? (families[i] as string) : `TOKEN${i}`;
      return { key: `k${i}`, symbol, family: assetFamily(symbol), priceUsd: book.price(symbol) };
    });
    const big = createPriceModel({ seed: SEED, asOfMs: AS_OF }, assets);
    for (const a of assets) {
      const h = big.hourly(a.key, big.startMs, AS_OF).prices;
      assert.equal(h.length, 8761);
      assert.equal(h[8760], a.priceUsd);
      for (let i = 0; i < h.length; i += 97) assert.ok((h[i] as number) > 0 && Number.isFinite(h[i]));
    }
  });
});

describe('oracle rounds', () => {
  const m = model();
  const sim = createOracleSimulator(m);
  const ethFeed: FeedSpec = { key: '1:0xeth-usd', asset: 'ETH', deviation: 0.005, heartbeatSec: 3600 };
  const usdcFeed: FeedSpec = { key: '1:0xusdc-usd', asset: 'USDC', deviation: 0.0025, heartbeatSec: 86_400 };
  const lstFeed: FeedSpec = {
    key: '1:0xwsteth-eth',
    asset: 'wstETH',
    quote: 'ETH',
    deviation: 0.001,
    heartbeatSec: 86_400,
  };

  /** Checks the rules between consecutive rounds, minute by minute, outside the stale windows. */
  function checkRules(feed: FeedSpec, rounds: readonly OracleRound[], from: number, to: number): void {
    const stale = sim.staleWindows(feed, from, to);
    const answer = (t: number) =>
      feed.quote ? m.priceAt(feed.asset, t) / m.priceAt(feed.quote, t) : m.priceAt(feed.asset, t);
    for (let i = 0; i < rounds.length; i++) {
      const r = rounds[i] as OracleRound;
      assert.equal(r.answer, answer(r.updatedAtMs));
      assert.ok(
        stale.every((w) => r.updatedAtMs < w.startMs || r.updatedAtMs >= w.endMs),
        `${feed.key}: round inside a stale window`,
      );
      const next = rounds[i + 1];
      if (!next) continue;
      assert.ok(next.roundId > r.roundId && next.updatedAtMs > r.updatedAtMs);
      const gapStale = overlaps(stale, r.updatedAtMs, next.updatedAtMs);
      if (!gapStale) {
        assert.ok(
          next.updatedAtMs - r.updatedAtMs <= feed.heartbeatSec * 1000,
          `${feed.key}: heartbeat missed`,
        );
        for (let t = r.updatedAtMs + MINUTE; t < next.updatedAtMs; t += MINUTE) {
          assert.ok(
            Math.abs(answer(t) / r.answer - 1) <= feed.deviation,
            `${feed.key}: deviation missed at ${t}`,
          );
        }
      }
      if (next.reason === 'deviation') assert.ok(Math.abs(next.answer / r.answer - 1) > feed.deviation);
      if (next.reason === 'recovery') assert.ok(stale.some((w) => w.endMs === next.updatedAtMs));
    }
  }

  test('behavior: rounds obey deviation and heartbeat, except across stale windows', () => {
    for (const feed of [ethFeed, usdcFeed, lstFeed]) {
      // Around the big crash, and the last weeks before asOf.
      const crash = m.crashes.find((c) => c.major)?.dayMs as number;
      for (const [from, to] of [
        [crash - 5 * DAY, crash + 5 * DAY],
        [AS_OF - 20 * DAY, AS_OF],
      ] as const) {
        const rounds = sim.rounds(feed, from, to);
        assert.ok(rounds.length >= (to - from) / (feed.heartbeatSec * 1000) - 2);
        checkRules(feed, rounds, from, to);
      }
    }
    const crashRounds = sim.rounds(
      ethFeed,
      m.crashes[0]?.startMs as number,
      m.crashes[0]?.troughMs as number,
    );
    assert.ok(
      crashRounds.filter((r) => r.reason === 'deviation').length >= 10,
      'a crash sets off deviation rounds',
    );
  });

  test('behavior: a feed goes stale for hours a few times a year; it posts nothing then recovers', () => {
    let found = 0;
    for (let i = 0; i < 40 && found < 3; i++) {
      const feed: FeedSpec = { ...ethFeed, key: `feed-${i}` };
      const stale = sim.staleWindows(feed, m.startMs + DAY, AS_OF);
      assert.ok(stale.length <= 12, `${stale.length} outages in a year`);
      for (const w of stale) {
        const hours = (w.endMs - w.startMs) / HOUR;
        assert.ok(hours >= 1 && hours <= 12);
        const rounds = sim.rounds(feed, w.startMs - 2 * HOUR, w.endMs + 2 * HOUR);
        assert.ok(rounds.every((r) => r.updatedAtMs < w.startMs || r.updatedAtMs >= w.endMs));
        const after = rounds.find((r) => r.updatedAtMs >= w.endMs);
        assert.ok(after && after.updatedAtMs === w.endMs, 'a round when the feed comes back');
        checkRules(feed, rounds, w.startMs - 2 * HOUR, w.endMs + 2 * HOUR);
        // Inside the window the latest round is the one before it.
        const before = rounds.filter((r) => r.updatedAtMs < w.startMs).at(-1);
        assert.deepEqual(sim.latestRound(feed, w.endMs - 1), before ?? null);
        found++;
      }
    }
    assert.ok(found >= 3, 'no outage found');
  });

  test('behavior: latestRound is the last of the rounds up to t, without replaying the past', () => {
    for (const feed of [ethFeed, usdcFeed, lstFeed]) {
      for (const t of [AS_OF, AS_OF - 3 * DAY + 17 * MINUTE, AS_OF + 2 * DAY + 1234, m.startMs + 3 * DAY]) {
        const all = sim.rounds(feed, t - 3 * DAY, t);
        assert.deepEqual(sim.latestRound(feed, t), all.at(-1));
        const exact = all.at(-1) as OracleRound;
        assert.deepEqual(sim.latestRound(feed, exact.updatedAtMs), exact);
      }
    }
    // Count the prices a latestRound call reads: at most a heartbeat of minutes (plus an outage), not a year.
    let reads = 0;
    const counting: PriceModel = {
      ...m,
      priceAt: (k, t) => {
        reads++;
        return m.priceAt(k, t);
      },
    };
    const fresh = createOracleSimulator(counting);
    fresh.latestRound(usdcFeed, AS_OF + 10 * DAY);
    assert.ok(reads > 0 && reads <= 24 * 60 * 2, `${reads} prices read`);
    assert.equal(sim.latestRound(ethFeed, m.startMs - 1), null);
  });

  test('behavior: rounds are the same whatever the window asked, and deterministic', () => {
    const from = AS_OF - 4 * DAY;
    const mid = AS_OF - 2 * DAY + 7 * MINUTE;
    const whole = sim.rounds(ethFeed, from, AS_OF);
    const parts = [...sim.rounds(ethFeed, from, mid), ...sim.rounds(ethFeed, mid + 1, AS_OF)];
    assert.deepEqual(parts, whole);
    assert.deepEqual(createOracleSimulator(model()).rounds(ethFeed, from, AS_OF), whole);
  });

  test('error: bad feeds', () => {
    assert.throws(() => sim.rounds({ ...ethFeed, heartbeatSec: 0 }, AS_OF - DAY, AS_OF), RangeError);
    assert.throws(() => sim.rounds({ ...ethFeed, deviation: -1 }, AS_OF - DAY, AS_OF), RangeError);
    assert.throws(() => sim.rounds({ ...ethFeed, asset: 'NOPE' }, AS_OF - DAY, AS_OF), RangeError);
  });
});
