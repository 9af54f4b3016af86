/**
 * In-process scaling benchmarks: how the hot-path structures behave as data grows, timed with
 * performance.now() around each call after a warm-up, in one process and without HTTP.
 *
 * - Catalog.search over 1k, 10k and 100k markets (target: 10k -> 100k grows <= 2x);
 * - RiskIndex.query over 10k .. 10M positions (target: 1M -> 10M grows <= 1.3x), plus its
 *   memory per position, one asset's price move (target <= 5 ms at 1M) and a move followed by
 *   a query;
 * - stressTest of three assets over all 20,000 markets at 1M positions (target <= 250 ms), first
 *   call (builds the per-market prefix sums) and steady state;
 * - LocalAdmission.admit (limiter + quotas + durable count) per request (target <= 20 us), and
 *   the Redis backend when src/scale.ts and a Redis at 127.0.0.1:6379 are there (added median
 *   latency target <= 0.3 ms).
 *
 * Run alone: node --expose-gc bench/inprocess.ts [--quick] [--json-out FILE]
 * (bench/run.ts runs it in a child process of its own, so the HTTP run's memory does not mix in).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type Admission, type AdmissionRequest, LocalAdmission } from '../src/access/admission.ts';
import { KeyService } from '../src/access/keys.ts';
import { parseTiers, type Tier } from '../src/access/tiers.ts';
import { Catalog } from '../src/data/catalog.ts';
import { MemoryPageSnapshots } from '../src/data/page-snapshots.ts';
import { applyPrices, type ReadModel } from '../src/data/read-model.ts';
import { RiskIndex, type RiskQuery } from '../src/data/risk-index.ts';
import { VaultIndex } from '../src/data/vaults.ts';
import type { Protocol } from '../src/domain/enums.ts';
import { emptyColumns, type PositionColumns } from '../src/domain/position-columns.ts';
import type { MarketRecord } from '../src/domain/types.ts';
import { positionJson } from '../src/http/serialize.ts';
import { sandboxMarketClock, sandboxSimulation } from '../src/ingest/sandbox/history.ts';
import { generateSandbox, SANDBOX_AS_OF } from '../src/ingest/sandbox/index.ts';
import { sandboxPricer } from '../src/ingest/sandbox/live.ts';
import { positionsAtRiskPage } from '../src/queries/risk.ts';
import { stressTest } from '../src/queries/stress.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { gc, log, ROOT, sig, summarize } from './lib.ts';

export const INPROCESS_TARGETS = {
  searchGrowth10kTo100k: 2,
  riskGrowth1MTo10M: 1.3,
  admitUsPerRequest: 20,
  redisAddedMedianMs: 0.3,
  /** A 3-asset stress test over every market and chain, at 1M positions (issue: <= 250 ms). */
  stress3AssetsMs: 250,
} as const;

export interface InProcessOptions {
  quick: boolean;
}

interface Timing {
  medianUs: number;
  p99Us: number;
  iterations: number;
}

export interface InProcessResults {
  search: {
    queries: { name: string; query: string }[];
    sizes: { markets: number; buildMs: number; results: Record<string, Timing & { hits: number }> }[];
    growth10kTo100k: Record<string, { ratio: number; target: number; pass: boolean }>;
  };
  risk: {
    sizes: {
      positions: number;
      indexed: number;
      buildMs: number;
      byteSizePerPosition: number;
      heapDeltaPerPosition: number;
      results: Record<string, Timing & { hits: number }>;
    }[];
    growth: {
      from: number;
      to: number;
      target: number;
      ratios: Record<string, { ratio: number; pass: boolean }>;
    } | null;
    /** The first stress test at 1M positions (it builds the prefix sums); steady state is in sizes. */
    stress: { firstUs: number; markets: number } | null;
    /** Paging the whole at-risk set with the API's cursor at 1M positions (null: not run). */
    paging: AtRiskPaging | null;
  };
  admission: {
    memory: AdmissionFigures;
    redis:
      | (AdmissionFigures & { addedMedianMs: number; target: number; pass: boolean })
      | { skipped: string };
  };
}

/**
 * Walking every position at risk (hf < 1.1, no filter) page by page with the cursor of
 * GET /risk/positions-at-risk (positionsAtRiskPage, in-memory page snapshots, the route's JSON
 * of each position). The first page takes the set (every position's JSON) and keeps it; the
 * pages after it are read from the kept set by offset.
 */
interface AtRiskPaging {
  positions: number;
  /** Positions in the set. */
  atRisk: number;
  walks: number;
  limits: {
    limit: number;
    pages: number;
    /** The first page (the set taken and kept), median over walks. */
    firstPageUs: number;
    /** Every later page of every walk. */
    pageMedianUs: number;
    pageP99Us: number;
    /** The second page, and a page at 90 % of the set, each read again and again with its cursor. */
    secondPage: Timing;
    deepPage: Timing & { offset: number };
    /** First page to last, median over walks. */
    walkMs: number;
  }[];
}

interface AdmissionFigures {
  backend: string;
  concurrency1: { usPerRequest: number; medianUs: number; p99Us: number; requests: number };
  concurrency32: { usPerRequest: number; medianUs: number; p99Us: number; requests: number };
  target: number;
  /** Both concurrencies within the target. */
  pass: boolean;
  passConcurrency1?: boolean;
  passConcurrency32?: boolean;
}

let sink = 0;

/** What the Redis backend of src/scale.ts offers beyond Admission (both optional here). */
type ScaledAdmission = Admission & { ready?: (timeoutMs?: number) => Promise<boolean>; state?: () => string };

/**
 * Times fn per call: `warmup` untimed calls, then calls until `minIter` are done and `budgetMs`
 * has passed (at most `maxIter`). Median and p99 in microseconds.
 */
function timeOp(
  fn: () => number,
  o: { warmup: number; minIter: number; maxIter: number; budgetMs: number },
): Timing {
  for (let i = 0; i < o.warmup; i++) sink += fn();
  const samples = new Float64Array(o.maxIter);
  let n = 0;
  const start = performance.now();
  while (n < o.maxIter && (n < o.minIter || performance.now() - start < o.budgetMs)) {
    const t0 = performance.now();
    sink += fn();
    samples[n++] = (performance.now() - t0) * 1000;
  }
  const s = summarize(samples.subarray(0, n));
  return { medianUs: sig(s.median, 3), p99Us: sig(s.p99, 3), iterations: n };
}

/** mulberry32: a small, fast, seeded PRNG returning [0, 1). */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function memNow(): number {
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

// ---------------------------------------------------------------------------------------------
// Search

/** 100k markets from the 20k generated ones: copies with unique keys and jittered supply. */
function replicate(markets: readonly MarketRecord[], total: number): MarketRecord[] {
  const rand = prng(7);
  const out: MarketRecord[] = [...markets];
  for (let copy = 1; out.length < total; copy++) {
    for (const m of markets) {
      if (out.length >= total) break;
      const f = 0.5 + rand();
      const scaled = (x: number | null) => (x === null ? null : x * f);
      out.push({
        ...m,
        uniqueKey: `${m.uniqueKey}-r${copy}`,
        supply: scaled(m.supply),
        borrow: scaled(m.borrow),
      });
    }
  }
  return out;
}

/**
 * A symbol for the "rare" query: a collateral symbol of the first 1k markets (so every catalog
 * size holds it) that the fewest of the 20k generated markets match.
 */
function rareTerm(markets: readonly MarketRecord[], full: Catalog): string {
  let best = 'usdc';
  let bestHits = Number.POSITIVE_INFINITY;
  const seen = new Set<string>();
  for (const m of markets.slice(0, 1000)) {
    const k = m.collateral.toLowerCase();
    if (seen.has(k) || !/^[a-z][a-z0-9]{3,}$/.test(k)) continue;
    seen.add(k);
    const hits = full.search(k, {}, markets.length).length;
    if (hits < bestHits || (hits === bestHits && k < best)) {
      best = k;
      bestHits = hits;
    }
  }
  return best;
}

function benchSearch(
  markets: readonly MarketRecord[],
  full: Catalog,
  quick: boolean,
): InProcessResults['search'] {
  const queries = [
    { name: 'common', query: 'usdc' },
    { name: 'pair', query: 'wsteth weth' },
    { name: 'rare', query: rareTerm(markets, full) },
  ];
  const sizes = [1_000, 10_000, 100_000];
  const big = replicate(markets, 100_000);
  const timing = quick
    ? { warmup: 50, minIter: 50, maxIter: 20_000, budgetMs: 250 }
    : { warmup: 500, minIter: 300, maxIter: 200_000, budgetMs: 2000 };
  const out: InProcessResults['search']['sizes'] = [];
  for (const size of sizes) {
    const t0 = performance.now();
    const catalog = new Catalog(big.slice(0, size), SANDBOX_AS_OF);
    const buildMs = sig(performance.now() - t0, 3);
    const results: Record<string, Timing & { hits: number }> = {};
    for (const q of queries) {
      const hits = catalog.search(q.query, {}, 50).length;
      results[q.name] = {
        ...timeOp(() => catalog.search(q.query, {}, 50).length, timing),
        hits,
      };
    }
    log(
      `search ${size.toLocaleString('en-US')} markets: ` +
        queries.map((q) => `${q.query} ${results[q.name]!.medianUs} us`).join(', '),
    );
    out.push({ markets: size, buildMs, results });
  }
  const growth: InProcessResults['search']['growth10kTo100k'] = {};
  const at = (n: number) => out.find((s) => s.markets === n)!;
  for (const q of queries) {
    const ratio = sig(at(100_000).results[q.name]!.medianUs / at(10_000).results[q.name]!.medianUs, 3);
    growth[q.name] = {
      ratio,
      target: INPROCESS_TARGETS.searchGrowth10kTo100k,
      pass: ratio <= INPROCESS_TARGETS.searchGrowth10kTo100k,
    };
  }
  return { queries, sizes: out, growth10kTo100k: growth };
}

// ---------------------------------------------------------------------------------------------
// Positions at risk

/**
 * n positions over the catalog's markets, built straight into columns (no SQLite, no rows).
 * Markets are skewed toward the largest; 10 % carry no debt; health factors: 5 % in
 * [0.85, 1.1), 8 % in [1.1, 1.2), 80 % in [1.2, 3), 7 % in [3, 10); debt 100 USD to 1 M USD.
 */
function buildColumns(catalog: Catalog, n: number, seed: number): PositionColumns {
  const rand = prng(seed);
  const m = catalog.size;
  const lltv = new Float64Array(m);
  for (let i = 0; i < m; i++) lltv[i] = catalog.recordAt(i).lltv || 0.8;
  const cols: PositionColumns = emptyColumns(n);
  for (let i = 0; i < n; i++) {
    const u = rand();
    const ord = Math.floor(m * u * u);
    cols.marketIndex[i] = ord;
    if (rand() < 0.1) {
      const c = 10 ** (2 + 4 * rand());
      cols.collateralUsd[i] = c;
      cols.supplyUsd[i] = rand() < 0.5 ? c : 0;
      cols.healthFactor[i] = Number.POSITIVE_INFINITY;
      continue;
    }
    const r = rand();
    const hf =
      r < 0.05
        ? 0.85 + 0.25 * rand()
        : r < 0.13
          ? 1.1 + 0.1 * rand()
          : r < 0.93
            ? 1.2 + 1.8 * rand()
            : 3 + 7 * rand();
    const borrow = 10 ** (2 + 4 * rand());
    cols.borrowUsd[i] = borrow;
    cols.collateralUsd[i] = (hf * borrow) / lltv[ord]!;
    cols.healthFactor[i] = hf;
  }
  const words = new Uint32Array(cols.users.buffer);
  for (let i = 0; i < words.length; i++) words[i] = (rand() * 4294967296) >>> 0;
  return cols;
}

/** A read model over a catalog and an index built here (what the service's steps and queries take). */
function modelOver(
  catalog: Catalog,
  risk: RiskIndex,
  n: number,
  at = Date.parse('2026-11-24T12:00:00Z'),
): ReadModel {
  return {
    catalog,
    risk,
    vaults: new VaultIndex(catalog, []),
    dataset: {
      kind: 'sandbox',
      profile: 'large',
      seed: 42,
      refreshedAt: at,
      marketCount: catalog.size,
      positionCount: n,
      version: 1,
      changeSeq: 0,
    },
    asOf: at,
    changeSeq: 0,
    blocks: null,
    chainRefreshedAt: null,
    syncing: null,
    stored: false,
    synced: true,
    revision: 0,
  };
}

async function benchRisk(catalog: Catalog, quick: boolean): Promise<InProcessResults['risk']> {
  const sizes = quick ? [10_000, 100_000, 1_000_000] : [10_000, 100_000, 1_000_000, 10_000_000];
  const protocol: Protocol = catalog.protocols.includes('aave') ? 'aave' : catalog.protocols[0]!;
  const chainIds = [1, 8453].filter((c) => catalog.chainIds.includes(c));
  const base = { healthFactorThreshold: 1.1, minBorrowUsd: 0, limit: 50 };
  const queries: Record<string, RiskQuery> = {
    none: base,
    protocol: { ...base, protocol },
    chainIds: { ...base, chainIds },
  };
  const timing = quick
    ? { warmup: 200, minIter: 200, maxIter: 50_000, budgetMs: 250 }
    : { warmup: 2000, minIter: 1000, maxIter: 500_000, budgetMs: 2000 };
  const out: InProcessResults['risk']['sizes'] = [];
  let stressFirst: { firstUs: number; markets: number } | null = null;
  let paging: AtRiskPaging | null = null;
  // The token most markets hold (as collateral or loan), for the price-move figures.
  const holders = new Map<
    string,
    { token: { chainId: number; token: string }; price: number; markets: number }
  >();
  for (let ord = 0; ord < catalog.size; ord++) {
    const m = catalog.recordAt(ord);
    for (const [token, price] of [
      [m.collateralAddress, m.collateralPrice],
      [m.loanAddress, m.loanPrice],
    ] as const) {
      if (price === null) continue;
      const key = `${m.chainId}:${token.toLowerCase()}`;
      const h = holders.get(key) ?? { token: { chainId: m.chainId, token }, price, markets: 0 };
      h.markets++;
      holders.set(key, h);
    }
  }
  const busiest = [...holders.values()].sort((a, b) => b.markets - a.markets)[0]!;
  log(
    `price moves: ${busiest.token.token} on chain ${busiest.token.chainId}, held by ${busiest.markets} markets`,
  );
  for (const n of sizes) {
    const before = memNow();
    const t0 = performance.now();
    let index: RiskIndex | null = new RiskIndex(catalog, buildColumns(catalog, n, 1234 + n));
    const buildMs = sig(performance.now() - t0, 3);
    const after = memNow();
    const results: Record<string, Timing & { hits: number }> = {};
    for (const [name, q] of Object.entries(queries)) {
      const idx = index;
      results[name] = { ...timeOp(() => idx.query(q).length, timing), hits: idx.query(q).length };
    }
    {
      // One asset's price move (the token held by the most markets), then the same move back:
      // applied in place, no sort and no rebuild of the index.
      const idx = index;
      let up = true;
      const move = () => {
        up = !up;
        return idx.applyPrices([{ ...busiest.token, ratio: up ? 1 : 0.97 }]);
      };
      results['priceMove'] = { ...timeOp(move, timing), hits: busiest.markets };
      // A move followed by the unfiltered query: what the first poll after a price tick costs
      // (the query re-sorts the scope's markets by their new lowest health factor).
      results['moveThenQuery'] = {
        ...timeOp(() => move() + idx.query(base).length, timing),
        hits: idx.query(base).length,
      };
    }
    {
      // One position changed by its source (a liquidation, a repayment): moved inside its
      // market's ordered list, nothing rebuilt. Alternates between two states of the position
      // nearest liquidation. The first call also builds the per-market member lists (once).
      const idx = index;
      const first = idx.query({ ...base, limit: 1 })[0];
      if (first !== undefined) {
        const p = idx.stateOf(first);
        let half = false;
        const change = () => {
          half = !half;
          const k = half ? 0.5 : 1;
          return idx.applyPositionChanges([
            { ...p, borrowUsd: p.borrowUsd * k, healthFactor: p.healthFactor / k },
          ]);
        };
        const t0 = performance.now();
        change();
        const firstMs = sig(performance.now() - t0, 3);
        results['positionChange'] = { ...timeOp(change, timing), hits: 1 };
        log(`  first position change (builds the member lists): ${firstMs} ms`);
      }
    }
    if (n === 1_000_000) {
      // A whole sandbox tick: every token's price at the next instant and every market's state
      // (interest, utilization, APYs: computed in the tick, as the service does), applied to the
      // catalog (re-ranked) and the index, then the unfiltered query (what the service does
      // every SIMULATION_TICK_MS). Alternates between two instants so every tick moves every price.
      const pricer = sandboxPricer(catalog.baseRecords(), 42);
      const marketClock = sandboxMarketClock(sandboxSimulation('large', 42));
      const at = Date.parse('2026-11-24T12:00:00Z');
      await pricer.warm(at + 5000);
      await marketClock.warm(at + 5000);
      const ticks = [pricer.pricesAt(at), pricer.pricesAt(at + 5000)];
      let k = 0;
      const idx = index;
      // The service's step function (read-model applyPrices) over this catalog and index.
      const model = modelOver(catalog, idx, n, at);
      const tick = () => {
        const j = k++ % 2;
        const t = at + j * 5000;
        return applyPrices(model, ticks[j]!, t, [], marketClock.statesAt(t)) + idx.query(base).length;
      };
      results['sandboxTick'] = {
        ...timeOp(tick, { ...timing, warmup: 4, minIter: 20, maxIter: 200 }),
        hits: pricer.tokens,
      };
    }
    if (n === 1_000_000) {
      // A 3-asset stress test over every chain: correlated tokens follow (wstETH with WETH,
      // cbBTC with WBTC), each moved market answered from its ordered list and prefix sums.
      const model = modelOver(catalog, index, n);
      const shocks = [
        { asset: 'WETH', change: -0.2 },
        { asset: 'WBTC', change: -0.15 },
        { asset: 'USDC', change: -0.02 },
      ];
      const run = () => stressTest(model, { shocks, limit: 100 }).items[0]!.totals.markets;
      const t1 = performance.now();
      const moved = run();
      const firstUs = sig((performance.now() - t1) * 1000, 3);
      results['stress3Assets'] = {
        ...timeOp(run, { ...timing, warmup: 3, minIter: 20, maxIter: 500 }),
        hits: moved,
      };
      stressFirst = { firstUs, markets: moved };
      log(`  stress test of 3 assets: first ${firstUs} us (builds prefix sums), ${moved} markets moved`);
    }
    if (n === 1_000_000) paging = await benchAtRiskPaging(catalog, index, n, quick);
    {
      // What the route does beyond the query: one view per answer.
      const idx = index;
      results['noneWithViews'] = {
        ...timeOp(() => {
          let s = 0;
          for (const i of idx.query(base)) s += idx.view(i).healthFactor;
          return s;
        }, timing),
        hits: idx.query(base).length,
      };
    }
    const entry = {
      positions: n,
      indexed: index.indexed,
      buildMs,
      byteSizePerPosition: sig(index.byteSize() / index.size, 3),
      heapDeltaPerPosition: sig((after - before) / n, 3),
      results,
    };
    out.push(entry);
    log(
      `risk ${n.toLocaleString('en-US')} positions (built in ${buildMs} ms, ${entry.byteSizePerPosition} B/position): ` +
        Object.entries(results)
          .map(([k, v]) => `${k} ${v.medianUs} us`)
          .join(', '),
    );
    index = null;
    gc();
  }
  const from = sizes.length >= 4 ? 1_000_000 : sizes[sizes.length - 2]!;
  const to = sizes[sizes.length - 1]!;
  const a = out.find((s) => s.positions === from)!;
  const b = out.find((s) => s.positions === to)!;
  const ratios: Record<string, { ratio: number; pass: boolean }> = {};
  for (const name of Object.keys(a.results)) {
    if (!b.results[name]) continue;
    const ratio = sig(b.results[name]!.medianUs / a.results[name]!.medianUs, 3);
    ratios[name] = { ratio, pass: ratio <= INPROCESS_TARGETS.riskGrowth1MTo10M };
  }
  return {
    sizes: out,
    growth: { from, to, target: INPROCESS_TARGETS.riskGrowth1MTo10M, ratios },
    stress: stressFirst,
    paging,
  };
}

/** Times an async call `iterations` times (after a tenth as many untimed): median and p99 in µs. */
async function timeAsync(fn: () => Promise<number>, iterations: number): Promise<Timing> {
  for (let i = 0; i < Math.ceil(iterations / 10); i++) sink += await fn();
  const samples = new Float64Array(iterations);
  for (let i = 0; i < iterations; i++) {
    const t0 = performance.now();
    sink += await fn();
    samples[i] = (performance.now() - t0) * 1000;
  }
  const s = summarize(samples);
  return { medianUs: sig(s.median, 3), p99Us: sig(s.p99, 3), iterations };
}

async function benchAtRiskPaging(
  catalog: Catalog,
  index: RiskIndex,
  n: number,
  quick: boolean,
): Promise<AtRiskPaging> {
  const model = modelOver(catalog, index, n);
  // The instant of each request: moved past the one-second reuse of a taken set between walks,
  // so that every walk's first page takes the set anew, as a client's first request does.
  let nowMs = model.asOf;
  const snapshots = new MemoryPageSnapshots({ now: () => nowMs });
  const params = { healthFactorThreshold: 1.1, minBorrowUsd: 0, protocol: undefined, chainIds: undefined };
  const page = (limit: number, cursor: string | undefined) =>
    positionsAtRiskPage(
      model,
      { ...params, limit },
      { snapshots, nowMs, cursor, caller: 'test', json: (i) => index.json(i, positionJson) },
    );
  const walks = quick ? 2 : 5;
  const out: AtRiskPaging = { positions: n, atRisk: 0, walks, limits: [] };
  for (const limit of [50, 1_000]) {
    const firsts: number[] = [];
    const totals: number[] = [];
    const later: number[] = [];
    let pages = 0;
    let second: string | undefined;
    let deep: { cursor: string; offset: number } | undefined;
    for (let w = 0; w < walks; w++) {
      nowMs += 5_000;
      gc();
      const start = performance.now();
      const first = await page(limit, undefined);
      firsts.push((performance.now() - start) * 1000);
      out.atRisk = first.total ?? first.items.length;
      const deepAt = Math.floor((out.atRisk * 0.9) / limit) * limit;
      let cursor = first.nextCursor;
      let offset = first.items.length;
      let count = 1;
      while (cursor !== undefined) {
        if (w === walks - 1 && offset === limit) second = cursor;
        if (w === walks - 1 && offset === deepAt) deep = { cursor, offset };
        const t0 = performance.now();
        const next = await page(limit, cursor);
        later.push((performance.now() - t0) * 1000);
        sink += next.items.length;
        offset += next.items.length;
        cursor = next.nextCursor;
        count++;
      }
      if (offset !== out.atRisk) throw new Error(`the walk read ${offset} of ${out.atRisk} positions`);
      totals.push(performance.now() - start);
      pages = count;
    }
    const iterations = quick ? 300 : 3_000;
    const again = (c: string | undefined) => async () => (await page(limit, c)).items.length;
    const l = summarize(Float64Array.from(later));
    const entry = {
      limit,
      pages,
      firstPageUs: sig(summarize(Float64Array.from(firsts)).median, 3),
      pageMedianUs: sig(l.median, 3),
      pageP99Us: sig(l.p99, 3),
      secondPage: await timeAsync(again(second), iterations),
      deepPage: { ...(await timeAsync(again(deep?.cursor), iterations)), offset: deep?.offset ?? 0 },
      walkMs: sig(summarize(Float64Array.from(totals)).median, 3),
    };
    out.limits.push(entry);
    log(
      `  at-risk paging, ${out.atRisk.toLocaleString('en-US')} positions at risk, limit ${limit}: ${pages} pages, ` +
        `first ${entry.firstPageUs} us, later pages ${entry.pageMedianUs} / ${entry.pageP99Us} us, ` +
        `second ${entry.secondPage.medianUs} us, at ${entry.deepPage.offset} ${entry.deepPage.medianUs} us, ` +
        `walk ${entry.walkMs} ms`,
    );
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Admission: limiter + quotas (+ durable count) per request

async function measureAdmission(
  admission: Admission,
  keyId: string,
  tier: Tier,
  quick: boolean,
): Promise<Omit<AdmissionFigures, 'target' | 'pass'>> {
  const req = (): AdmissionRequest => ({
    keyId,
    tier,
    endpoint: 'GET /api/v1/markets/search',
    counted: true,
    nowMs: Date.now(),
  });
  const check = (r: Awaited<ReturnType<Admission['admit']>>) => {
    if (!r.ok) throw new Error(`admission refused a request: ${r.reason}`);
  };
  const n1 = quick ? 3_000 : 30_000;
  const n32 = quick ? 32 * 200 : 32 * 2_000;
  for (let i = 0; i < Math.min(2_000, n1); i++) check(await admission.admit(req()));

  const s1 = new Float64Array(n1);
  let t = performance.now();
  for (let i = 0; i < n1; i++) {
    const t0 = performance.now();
    check(await admission.admit(req()));
    s1[i] = (performance.now() - t0) * 1000;
  }
  const c1Total = (performance.now() - t) * 1000;

  const s32 = new Float64Array(n32);
  let k = 0;
  t = performance.now();
  for (let b = 0; b < n32 / 32; b++) {
    const batch: Promise<void>[] = [];
    for (let j = 0; j < 32; j++) {
      const t0 = performance.now();
      batch.push(
        admission.admit(req()).then((r) => {
          check(r);
          s32[k++] = (performance.now() - t0) * 1000;
        }),
      );
    }
    await Promise.all(batch);
  }
  const c32Total = (performance.now() - t) * 1000;
  const a = summarize(s1);
  const b = summarize(s32);
  return {
    backend: admission.backend,
    concurrency1: {
      usPerRequest: sig(c1Total / n1, 3),
      medianUs: sig(a.median, 3),
      p99Us: sig(a.p99, 3),
      requests: n1,
    },
    concurrency32: {
      usPerRequest: sig(c32Total / n32, 3),
      medianUs: sig(b.median, 3),
      p99Us: sig(b.p99, 3),
      requests: n32,
    },
  };
}

function redisAnswers(): Promise<boolean> {
  return new Promise((res) => {
    const sock = connect({ host: '127.0.0.1', port: 6379 });
    const done = (ok: boolean) => {
      sock.destroy();
      res(ok);
    };
    sock.setTimeout(500, () => done(false));
    sock.on('error', () => done(false));
    sock.on('connect', () => sock.write('PING\r\n'));
    sock.on('data', (d) => done(d.toString().startsWith('+PONG')));
  });
}

async function benchAdmission(quick: boolean): Promise<InProcessResults['admission']> {
  const dir = mkdtempSync(join(tmpdir(), 'lrds-bench-admission-'));
  const store = new SqliteStore(join(dir, 'lrds.db'));
  try {
    await store.migrate();
    const keys = new KeyService(store);
    const account = await keys.ensureAccount('bench');
    const json = JSON.parse(readFileSync(join(ROOT, 'config/tiers.json'), 'utf8'));
    // Counted requests on finite quotas no run reaches, and a rate the run never hits.
    Object.assign(json.tiers.pro, {
      ratePerSecond: 1_000_000,
      dailyQuota: 1_000_000_000,
      monthlyQuota: 2_000_000_000,
    });
    const tier = parseTiers(json, 'bench tiers').pro;
    const local = new LocalAdmission(store);
    const { record } = await keys.create({ accountId: account.id, tier: 'pro', mode: 'live' });
    const m = await measureAdmission(local, record.id, tier, quick);
    await local.close();
    const target = INPROCESS_TARGETS.admitUsPerRequest;
    const memory: AdmissionFigures = {
      ...m,
      target,
      pass: m.concurrency1.usPerRequest <= target && m.concurrency32.usPerRequest <= target,
      passConcurrency1: m.concurrency1.usPerRequest <= target,
      passConcurrency32: m.concurrency32.usPerRequest <= target,
    };
    log(
      `admit (memory + SQLite): c=1 ${m.concurrency1.usPerRequest} us/request, c=32 ${m.concurrency32.usPerRequest} us/request`,
    );

    let redis: InProcessResults['admission']['redis'];
    const scaleUrl = new URL('../src/scale.ts', import.meta.url).href;
    let createAdmission: ((...args: unknown[]) => unknown) | undefined;
    try {
      const mod = (await import(scaleUrl)) as { createAdmission?: unknown };
      if (typeof mod.createAdmission === 'function')
        createAdmission = mod.createAdmission as (...args: unknown[]) => unknown;
    } catch {
      // not built yet
    }
    if (!createAdmission) redis = { skipped: 'src/scale.ts does not export createAdmission (yet)' };
    else if (!(await redisAnswers())) redis = { skipped: 'no Redis answering at 127.0.0.1:6379' };
    else {
      let adm: ScaledAdmission | null = null;
      try {
        const logger = {
          warn: (obj: unknown, msg?: string) => log(`redis admission: ${msg ?? JSON.stringify(obj)}`),
        };
        // src/scale.ts: createAdmission({ redisUrl, store, logger? }) -> Admission (connects in the background).
        adm = createAdmission({ redisUrl: 'redis://127.0.0.1:6379', store, logger }) as ScaledAdmission;
        if (adm?.backend !== 'redis') throw new Error(`createAdmission gave backend ${String(adm?.backend)}`);
        if (adm.ready && !(await adm.ready(5000))) throw new Error('Redis admission not ready within 5 s');
        const k = await keys.create({ accountId: account.id, tier: 'pro', mode: 'live' });
        const r = await measureAdmission(adm, k.record.id, tier, quick);
        if (adm.state && adm.state() !== 'up')
          throw new Error('Redis admission fell back to local during the run');
        const added = sig((r.concurrency1.medianUs - m.concurrency1.medianUs) / 1000, 3);
        redis = {
          ...r,
          target: INPROCESS_TARGETS.redisAddedMedianMs,
          pass: added <= INPROCESS_TARGETS.redisAddedMedianMs,
          addedMedianMs: added,
        };
        log(`admit (redis): c=1 median ${r.concurrency1.medianUs} us, added ${added} ms vs in-process`);
      } catch (err) {
        redis = { skipped: `Redis admission could not be measured: ${(err as Error).message}` };
      } finally {
        await adm?.close();
      }
    }
    return { memory, redis };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runInProcess(opts: InProcessOptions): Promise<InProcessResults> {
  if (!(globalThis as { gc?: unknown }).gc) log('note: run with --expose-gc for exact heap deltas');
  const t0 = performance.now();
  const { markets } = generateSandbox({ profile: 'large' });
  log(
    `generated ${markets.length.toLocaleString('en-US')} markets in ${Math.round(performance.now() - t0)} ms`,
  );
  const full = new Catalog(markets, SANDBOX_AS_OF);
  const search = benchSearch(markets, full, opts.quick);
  const risk = await benchRisk(full, opts.quick);
  const admission = await benchAdmission(opts.quick);
  if (sink === 42.5) log('');
  return { search, risk, admission };
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: { quick: { type: 'boolean', default: false }, 'json-out': { type: 'string' } },
  });
  const results = await runInProcess({ quick: values.quick });
  const json = JSON.stringify(results, null, 2);
  if (values['json-out']) writeFileSync(values['json-out'], json);
  else process.stdout.write(`${json}\n`);
}
