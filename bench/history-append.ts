/**
 * History appends: how fast each store takes a backfill, and how much room it takes.
 *
 *   node bench/history-append.ts [--only sqlite|postgres] [--markets N] [--days N]
 *     [--prices N] [--rounds N] [--liquidations N] [--json-out FILE]
 *
 * Per store (SQLite in a temporary file; PostgreSQL in a fresh schema of TEST_DATABASE_URL,
 * default postgres://postgres@127.0.0.1:5432/test, skipped when it does not answer), in order:
 * 1. daily market snapshots, `markets` x `days` (default 4,000 x 365 = 1.46M, the default
 *    sandbox's year), appended market-major in batches of 40 markets (14,600 rows a call);
 * 2. hourly asset prices (default 1M: 950 tokens, ~1,053 hours each), 10 tokens a call;
 * 3. oracle rounds (default 1M: 500 feeds x 2,000 rounds, round ids of phase 1, > 2^64), 5
 *    feeds a call;
 * 4. liquidations (default 200k over the markets, 50k borrowers, 500 liquidators), 5,000 a
 *    call in time order;
 * 5. every batch of step 1 appended again (all rows already stored: the idempotent path);
 * 6. reads once the history is there: a market's 30 daily snapshots, its latest snapshot, a
 *    token's 24 prices, a feed's 50 rounds, a page of 50 liquidations (unfiltered, by market,
 *    by borrower, and the page after a cursor), each timed call by call. On PostgreSQL after
 *    an ANALYZE of the tables, as autovacuum runs one within a minute of such a load.
 *
 * Per step: wall time of the append calls only (rows are generated outside the timing),
 * rows/s, and the growth of the store on disk in MB (SQLite: database + WAL after a
 * checkpoint; PostgreSQL: tables, indexes and TOAST of the schema). Rows are generated from a
 * fixed seed, so runs compare.
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import type {
  AssetPrice,
  LiquidationEvent,
  MarketSnapshot,
  OracleRound,
} from '../src/domain/records/history.ts';
import { DAY_MS, HOUR_MS } from '../src/store/history.ts';
import type { HistoryStore } from '../src/store/ports/history.ts';
import { PostgresStore } from '../src/store/postgres/postgres-store.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { fmt, log, machine, sig, summarize } from './lib.ts';

const USAGE = `usage: node bench/history-append.ts [--only sqlite|postgres] [--markets N] [--days N]
  [--prices N] [--rounds N] [--liquidations N] [--json-out FILE]`;

interface Sizes {
  markets: number;
  days: number;
  prices: number;
  rounds: number;
  liquidations: number;
}

interface Step {
  step: string;
  rows: number;
  added: number;
  seconds: number;
  rowsPerSec: number;
  mb: number;
}

interface Read {
  read: string;
  medianUs: number;
  p99Us: number;
  n: number;
}

interface StoreResult {
  store: 'sqlite' | 'postgres';
  steps: Step[];
  reads: Read[];
  totalMb: number;
}

const T0 = Date.UTC(2025, 0, 1);
const MARKETS_PER_CALL = 40;
const TOKENS = 950;
const TOKENS_PER_CALL = 10;
const FEEDS = 500;
const FEEDS_PER_CALL = 5;
const LIQUIDATIONS_PER_CALL = 5_000;
const BORROWERS = 50_000;
const LIQUIDATORS = 500;
const CHAINS = [1, 8453, 42161, 10, 137];
const PROTOCOLS = ['morpho', 'aave', 'compound', 'spark', 'euler'];

/** mulberry32: a small seeded PRNG, so every run appends the same rows. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');
const address = (kind: number, n: number) => `0x${hex(kind, 8)}${hex(n, 32)}`;

/** A market as the sandbox keys them: `protocol-chainId-0x<64 hex>` (75 characters or so). */
function market(i: number): { marketKey: string; chainId: number; protocol: string } {
  const protocol = PROTOCOLS[i % PROTOCOLS.length]!;
  const chainId = CHAINS[Math.floor(i / PROTOCOLS.length) % CHAINS.length]!;
  return { marketKey: `${protocol}-${chainId}-0x${hex(i * 2_654_435_761, 16).repeat(4)}`, chainId, protocol };
}

function* snapshotBatches(s: Sizes): Generator<MarketSnapshot[]> {
  const rnd = prng(1);
  for (let first = 0; first < s.markets; first += MARKETS_PER_CALL) {
    const batch: MarketSnapshot[] = [];
    for (let i = first; i < Math.min(s.markets, first + MARKETS_PER_CALL); i++) {
      const m = market(i);
      for (let d = 0; d < s.days; d++) {
        const supplyUsd = rnd() * 1e8;
        const utilization = rnd();
        batch.push({
          ...m,
          at: T0 + d * DAY_MS,
          granularity: 'day',
          supplyUsd,
          borrowUsd: supplyUsd * utilization,
          utilization,
          supplyApy: rnd() * 0.1,
          borrowApy: rnd() * 0.15,
          collateralPriceUsd: i % 10 === 0 ? null : rnd() * 4000,
          loanPriceUsd: i % 10 === 0 ? null : 1 + rnd() * 1e-3,
          oraclePrice: i % 10 === 0 ? null : rnd() * 4000,
        });
      }
    }
    yield batch;
  }
}

function* priceBatches(s: Sizes): Generator<AssetPrice[]> {
  const rnd = prng(2);
  const hours = Math.ceil(s.prices / TOKENS);
  let left = s.prices;
  for (let first = 0; first < TOKENS && left > 0; first += TOKENS_PER_CALL) {
    const batch: AssetPrice[] = [];
    for (let t = first; t < Math.min(TOKENS, first + TOKENS_PER_CALL); t++) {
      const chainId = CHAINS[t % CHAINS.length]!;
      for (let h = 0; h < hours && left > 0; h++, left--) {
        batch.push({ chainId, token: address(0xa, t), at: T0 + h * HOUR_MS, priceUsd: rnd() * 3000 });
      }
    }
    yield batch;
  }
}

function* roundBatches(s: Sizes): Generator<OracleRound[]> {
  const rnd = prng(3);
  const perFeed = Math.ceil(s.rounds / FEEDS);
  const phase = 1n << 64n;
  let left = s.rounds;
  for (let first = 0; first < FEEDS && left > 0; first += FEEDS_PER_CALL) {
    const batch: OracleRound[] = [];
    for (let f = first; f < Math.min(FEEDS, first + FEEDS_PER_CALL); f++) {
      const chainId = CHAINS[f % CHAINS.length]!;
      let at = T0;
      for (let r = 1; r <= perFeed && left > 0; r++, left--) {
        at += Math.floor(600_000 + rnd() * 3_000_000);
        batch.push({
          chainId,
          feed: address(0xf, f),
          roundId: (phase + BigInt(r)).toString(),
          answer: rnd() * 3000,
          updatedAt: at,
        });
      }
    }
    yield batch;
  }
}

function* liquidationBatches(s: Sizes): Generator<LiquidationEvent[]> {
  const rnd = prng(4);
  const span = 365 * DAY_MS;
  let batch: LiquidationEvent[] = [];
  for (let n = 0; n < s.liquidations; n++) {
    const m = market(Math.floor(rnd() * s.markets));
    const at = T0 + Math.floor((n / s.liquidations) * span);
    const seized = rnd() * 10;
    batch.push({
      protocol: m.protocol,
      chainId: m.chainId,
      txHash: `0x${hex(n, 16)}${hex(Math.floor(rnd() * 2 ** 48), 48)}`,
      logIndex: Math.floor(rnd() * 200),
      block: 20_000_000 + Math.floor(at / 12_000),
      at: at - (at % 12_000),
      marketKey: m.marketKey,
      borrower: address(0xb, Math.floor(rnd() * BORROWERS)),
      liquidator: address(0x1, Math.floor(rnd() * LIQUIDATORS)),
      collateralSeized: seized,
      collateralSeizedUsd: seized * 3000,
      debtRepaid: seized * 2500,
      debtRepaidUsd: seized * 2500,
      badDebt: 0,
      badDebtUsd: 0,
    });
    if (batch.length === LIQUIDATIONS_PER_CALL) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/** Appends every batch of `batches`, timing only the calls. */
async function timed<T>(
  name: string,
  batches: Iterable<T[]>,
  append: (rows: T[]) => Promise<number>,
  size: () => Promise<number>,
): Promise<Step> {
  const before = await size();
  let rows = 0;
  let added = 0;
  let ms = 0;
  for (const batch of batches) {
    const t = performance.now();
    added += await append(batch);
    ms += performance.now() - t;
    rows += batch.length;
  }
  const mb = (await size()) - before;
  const step = {
    step: name,
    rows,
    added,
    seconds: sig(ms / 1000, 3),
    rowsPerSec: Math.round(rows / (ms / 1000)),
    mb: sig(mb, 3),
  };
  log(
    `  ${name}: ${rows.toLocaleString('en-US')} rows (${added.toLocaleString('en-US')} added) in ${fmt(step.seconds)} s, ${fmt(step.rowsPerSec)} rows/s, +${fmt(step.mb)} MB`,
  );
  return step;
}

async function timeReads(name: string, n: number, call: (i: number) => Promise<unknown[] | unknown>) {
  for (let i = 0; i < 20; i++) await call(i);
  const samples = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const out = await call(i);
    samples[i] = (performance.now() - t) * 1000;
    if (out === null || (Array.isArray(out) && out.length === 0)) throw new Error(`${name}: read nothing`);
  }
  const s = summarize(samples);
  return { read: name, medianUs: sig(s.median, 3), p99Us: sig(s.p99, 3), n };
}

async function runSteps(
  kind: StoreResult['store'],
  store: HistoryStore,
  s: Sizes,
  size: () => Promise<number>,
  beforeReads: () => Promise<void> = async () => {},
): Promise<StoreResult> {
  log(`${kind}:`);
  const start = await size();
  const steps = [
    await timed('daily snapshots', snapshotBatches(s), (b) => store.appendMarketSnapshots(b), size),
    await timed('asset prices', priceBatches(s), (b) => store.appendAssetPrices(b), size),
    await timed('oracle rounds', roundBatches(s), (b) => store.appendOracleRounds(b), size),
    await timed('liquidations', liquidationBatches(s), (b) => store.appendLiquidations(b), size),
    await timed(
      'daily snapshots again (all stored)',
      snapshotBatches(s),
      (b) => store.appendMarketSnapshots(b),
      size,
    ),
  ];
  await beforeReads();
  const rnd = prng(5);
  const pick = (n: number) => Math.floor(rnd() * n);
  const lastDay = T0 + (s.days - 1) * DAY_MS;
  const firstLiquidations = await store.liquidations({}, 50);
  // the tokens and feeds written (all of them unless --prices or --rounds are small)
  const tokens = Math.ceil(s.prices / Math.ceil(s.prices / TOKENS));
  const feeds = Math.ceil(s.rounds / Math.ceil(s.rounds / FEEDS));
  const reads = [
    await timeReads('30 daily snapshots of a market', 500, () =>
      store.marketSnapshots(market(pick(s.markets)).marketKey, 'day', lastDay - 30 * DAY_MS, lastDay, 100),
    ),
    await timeReads('latest snapshot of a market', 500, () =>
      store.latestMarketSnapshot(market(pick(s.markets)).marketKey, 'day'),
    ),
    await timeReads('24 prices of a token', 500, () => {
      const t = pick(tokens);
      return store.assetPrices(CHAINS[t % CHAINS.length]!, address(0xa, t), T0, T0 + DAY_MS, 100);
    }),
    await timeReads('50 rounds of a feed', 500, () => {
      const f = pick(feeds);
      return store.oracleRounds(CHAINS[f % CHAINS.length]!, address(0xf, f), T0, T0 + 365 * DAY_MS, 50);
    }),
    await timeReads('50 newest liquidations', 200, () => store.liquidations({}, 50)),
    await timeReads('50 liquidations after a cursor', 200, () =>
      store.liquidations({}, 50, firstLiquidations.at(-1)),
    ),
    await timeReads('50 liquidations of a chain', 200, () => store.liquidations({ chainId: 8453 }, 50)),
    await timeReads('liquidations of a market', 200, async () => {
      // a market with liquidations: the market of a liquidation picked at random
      const [l] = await store.liquidations({ fromMs: T0 + pick(360) * DAY_MS }, 1);
      return store.liquidations({ marketKey: l!.marketKey }, 50);
    }),
    await timeReads('liquidations of a borrower', 200, async () => {
      const [l] = await store.liquidations({ fromMs: T0 + pick(360) * DAY_MS }, 1);
      return store.liquidations({ borrower: l!.borrower }, 50);
    }),
  ];
  for (const r of reads) log(`  read ${r.read}: median ${fmt(r.medianUs)} us, p99 ${fmt(r.p99Us)} us`);
  return { store: kind, steps, reads, totalMb: sig((await size()) - start, 4) };
}

async function benchSqlite(s: Sizes): Promise<StoreResult> {
  const dir = mkdtempSync(join(tmpdir(), 'lrds-history-bench-'));
  const file = join(dir, 'lrds.db');
  const store = new SqliteStore(file);
  await store.migrate();
  // A second connection checkpoints the WAL into the database before each measure.
  const probe = new DatabaseSync(file);
  const size = async () => {
    probe.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    const bytes = (f: string) => {
      try {
        return statSync(f).size;
      } catch {
        return 0;
      }
    };
    return (bytes(file) + bytes(`${file}-wal`)) / 1e6;
  };
  try {
    return await runSteps('sqlite', store, s, size);
  } finally {
    probe.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function benchPostgres(s: Sizes): Promise<StoreResult | { store: 'postgres'; skipped: string }> {
  const base = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const admin = postgres(base, { max: 1, connect_timeout: 3, onnotice: () => {} });
  try {
    await admin`SELECT 1`;
  } catch (err) {
    await admin.end({ timeout: 1 });
    const skipped = `PostgreSQL not reachable: ${(err as Error).message}`;
    log(skipped);
    return { store: 'postgres', skipped };
  }
  const schema = `lrds_bench_${process.pid}`;
  await admin.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`);
  const url = new URL(base);
  url.searchParams.set('search_path', schema);
  const store = new PostgresStore(url.toString(), { poolSize: 4 });
  await store.migrate();
  const size = async () => {
    const [row] = await admin`
      SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::float8 AS bytes
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = ${schema} AND c.relkind = 'r'`;
    return Number(row!.bytes) / 1e6;
  };
  try {
    // Statistics as autovacuum gathers them within a minute of a load this size: without them
    // the planner may read the newest liquidations with parallel workers (several ms a page).
    // Every table of the schema, whichever schema version the store has.
    const analyze = async () => {
      const tables = await admin`SELECT tablename FROM pg_tables WHERE schemaname = ${schema}`;
      for (const t of tables) await admin.unsafe(`ANALYZE ${schema}.${t.tablename as string}`);
    };
    return await runSteps('postgres', store, s, size, analyze);
  } finally {
    await store.close();
    await admin.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end({ timeout: 5 });
  }
}

function markdown(results: (StoreResult | { store: string; skipped: string })[]): string {
  const lines = [
    '| store | step | rows | seconds | rows/s | MB |',
    '| ----- | ---- | ---: | ------: | -----: | -: |',
  ];
  const reads = ['| store | read | median µs | p99 µs |', '| ----- | ---- | --------: | -----: |'];
  for (const r of results) {
    if ('skipped' in r) {
      lines.push(`| ${r.store} | skipped: ${r.skipped} | | | | |`);
      continue;
    }
    for (const s of r.steps) {
      lines.push(
        `| ${r.store} | ${s.step} | ${s.rows.toLocaleString('en-US')} | ${fmt(s.seconds)} | ${fmt(s.rowsPerSec)} | ${fmt(s.mb)} |`,
      );
    }
    lines.push(`| ${r.store} | total on disk | | | | ${fmt(r.totalMb)} |`);
    for (const x of r.reads) reads.push(`| ${r.store} | ${x.read} | ${fmt(x.medianUs)} | ${fmt(x.p99Us)} |`);
  }
  return `${lines.join('\n')}\n\n${reads.join('\n')}\n`;
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      only: { type: 'string' },
      markets: { type: 'string' },
      days: { type: 'string' },
      prices: { type: 'string' },
      rounds: { type: 'string' },
      liquidations: { type: 'string' },
      'json-out': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const count = (v: string | undefined, name: string, def: number): number => {
    if (v === undefined) return def;
    const n = Number(v);
    if (!Number.isSafeInteger(n) || n < 1) {
      process.stderr.write(`--${name} must be a positive integer, got '${v}'\n${USAGE}\n`);
      process.exit(2);
    }
    return n;
  };
  if (values.only !== undefined && values.only !== 'sqlite' && values.only !== 'postgres') {
    process.stderr.write(`--only must be sqlite or postgres, got '${values.only}'\n${USAGE}\n`);
    process.exit(2);
  }
  const sizes: Sizes = {
    markets: count(values.markets, 'markets', 4_000),
    days: count(values.days, 'days', 365),
    prices: count(values.prices, 'prices', 1_000_000),
    rounds: count(values.rounds, 'rounds', 1_000_000),
    liquidations: count(values.liquidations, 'liquidations', 200_000),
  };
  const results: (StoreResult | { store: 'postgres'; skipped: string })[] = [];
  if (values.only !== 'postgres') results.push(await benchSqlite(sizes));
  if (values.only !== 'sqlite') results.push(await benchPostgres(sizes));
  const json = JSON.stringify(
    { machine: machine(), date: new Date().toISOString(), sizes, results },
    null,
    2,
  );
  if (values['json-out']) writeFileSync(values['json-out'], json);
  process.stdout.write(markdown(results));
}
