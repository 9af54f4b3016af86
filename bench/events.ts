/**
 * Risk events: what matching costs per tick, and how long a price move takes to reach a webhook.
 *
 *   node bench/events.ts [--quick] [--json-out FILE]
 *
 * 1. Matching per tick (src/events/matcher.ts, HealthCrossings): the sandbox read model (the
 *    `large` profile, 1,000,000 positions; `--quick`: the default one, 50,000), 10,000 and
 *    100,000 subscriptions (80 % watching one wallet, 20 % one market, as bots and dashboards do;
 *    thresholds among 1.0, 1.05, 1.1, 1.15, 1.2, 1.25, 1.3, 1.5), three kinds of tick: every token
 *    moving at a crash's pace (correlated random moves, x (1 ± up to 2 %)), every token moving as
 *    much as a sandbox tick moves it (x (1 ± up to 0.04 %)), and 1 % of the tokens moving (random
 *    ones, x (1 ± up to 2 %), as from one block to the next). Each tick, timed apart, in wall time and in CPU time of
 *    the thread running it (a tick's CPU figure is only as fine as the kernel's accounting, a few
 *    ms, so the mean over the ticks is reported): the read model bringing its accounts' health
 *    factors to the new prices (paid once per price change by whoever reads first, with or
 *    without subscriptions), the matching (HealthCrossings.match: the crossings found and matched
 *    to subscribers), and building the wanted ones' events (HealthCrossings.events). The baseline, in the
 *    same run: every subscription tested against every position below the highest threshold x
 *    1.01 (10,000 subscriptions; timed over 2,000 positions and scaled to all of them), what an
 *    unindexed matcher does.
 * 2. Price move to webhook arrival (EventsLoop as the server runs it: matching every 250 ms,
 *    delivery passes, SQLite outbox): 10,000 webhooks by wallet on the default profile, all to
 *    one local receiver; a price move, then the time until each resulting delivery arrives.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { applyPrices, buildReadModel, type ReadModel } from '../src/data/read-model.ts';
import { systemClock } from '../src/domain/clock.ts';
import type { DatasetInfo } from '../src/domain/records/dataset.ts';
import type { SubscriptionRecord } from '../src/domain/records/events.ts';
import { matches, SubscriptionIndex, subscriber } from '../src/events/filters.ts';
import { EventsLoop } from '../src/events/loop.ts';
import { HealthCrossings, type Matched } from '../src/events/matcher.ts';
import { SecretBox } from '../src/events/secrets.ts';
import { generateSandbox } from '../src/ingest/sandbox/index.ts';
import { eventViews } from '../src/queries/event-views.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { log, sig } from './lib.ts';

export const EVENTS_TARGETS = { deliveryP99Ms: 1000, matchMsAt100k: 5 } as const;

const THRESHOLDS = [1.0, 1.05, 1.1, 1.15, 1.2, 1.25, 1.3, 1.5];

/** A deterministic generator (mulberry32). */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function model(profile: 'default' | 'large'): {
  model: ReadModel;
  wallets: string[];
  markets: string[];
  tokens: { chainId: number; token: string }[];
} {
  const ds = generateSandbox({ profile });
  const info: DatasetInfo = {
    kind: 'sandbox',
    profile,
    seed: null,
    refreshedAt: Date.now(),
    marketCount: ds.markets.length,
    positionCount: ds.positionCount,
    version: 1,
    changeSeq: 0,
  };
  const wallets: string[] = [];
  let n = 0;
  const positions = function* () {
    for (const p of ds.positions()) {
      if (p.borrowUsd > 0 && n++ % 7 === 0) wallets.push(p.user);
      yield p;
    }
  };
  const m = buildReadModel(ds.markets, positions(), info, Date.now());
  const tokens = new Map<string, { chainId: number; token: string }>();
  for (const mk of ds.markets)
    for (const token of [mk.collateralAddress, mk.loanAddress])
      tokens.set(`${mk.chainId}:${token}`, { chainId: mk.chainId, token });
  return { model: m, wallets, markets: ds.markets.map((x) => x.uniqueKey), tokens: [...tokens.values()] };
}

function subscriptions(
  count: number,
  wallets: string[],
  markets: string[],
  random: () => number,
): SubscriptionRecord[] {
  const pick = <T>(a: T[]) => a[Math.floor(random() * a.length)]!;
  return Array.from({ length: count }, (_, i) => {
    const r = random();
    const filters: SubscriptionRecord['filters'] = { healthFactorBelow: pick(THRESHOLDS) };
    if (r < 0.8) filters.wallets = [pick(wallets)];
    else filters.marketIds = [pick(markets)];
    return {
      id: `wh_bench_${i}`,
      accountId: `acct_${i % 1000}`,
      mode: 'live',
      kind: 'webhook',
      url: 'https://hooks.example.com/',
      events: ['position.health_factor_below'],
      filters,
      sealedSecret: null,
      createdAt: 0,
      expiresAt: null,
    };
  });
}

/**
 * A tick: every token's price x (1 + common + own). `scale` 1: the common move up to ±1.5 %, its
 * own ±0.5 % (a crash's pace: 2 % in 5 s); 0.02: up to ±0.03 % and ±0.01 %, a sandbox tick's
 * size (5 s of its price model: ETH's 60 % a year is 0.024 % over 5 s).
 */
function move(
  m: ReadModel,
  tokens: { chainId: number; token: string }[],
  level: Map<string, number>,
  random: () => number,
  at: number,
  scale: number,
) {
  const common = (random() - 0.5) * 0.03 * scale;
  const changes = tokens.map((t) => {
    const k = `${t.chainId}:${t.token}`;
    const r = (level.get(k) ?? 1) * (1 + common + (random() - 0.5) * 0.01 * scale);
    level.set(k, r);
    return { chainId: t.chainId, token: t.token, ratio: r };
  });
  applyPrices(m, changes, at);
}

/** A tick of a few tokens (`share` of them, at least one): each x (1 ± up to 2 %), the others unchanged. */
function moveSome(
  m: ReadModel,
  tokens: { chainId: number; token: string }[],
  level: Map<string, number>,
  random: () => number,
  at: number,
  share: number,
) {
  const n = Math.max(1, Math.round(tokens.length * share));
  const picked = new Set<number>();
  while (picked.size < n) picked.add(Math.floor(random() * tokens.length));
  const changes = [...picked].map((j) => {
    const t = tokens[j]!;
    const k = `${t.chainId}:${t.token}`;
    const r = (level.get(k) ?? 1) * (1 + (random() - 0.5) * 0.04);
    level.set(k, r);
    return { chainId: t.chainId, token: t.token, ratio: r };
  });
  applyPrices(m, changes, at);
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

/** CPU time of the calling thread so far, ms. */
function threadCpuMs(): number {
  const u = process.threadCpuUsage();
  return (u.user + u.system) / 1000;
}

const TICKS = ['every token ±2 %', 'every token ±0.04 %', '1 % of tokens ±2 %'] as const;
type TickKind = (typeof TICKS)[number];

export interface MatchRow {
  profile: string;
  positions: number;
  subscriptions: number;
  /** What moves each tick: every token (by up to 2 %, or by a sandbox tick's 0.04 %), or 1 % of them. */
  tick: TickKind;
  tokensMoved: number;
  thresholds: number;
  held: number;
  ticks: number;
  medianMs: number;
  p99Ms: number;
  /** Matching (HealthCrossings.match: crossings found, matched to subscribers): wall (median, p99) and CPU (mean), ms a tick. */
  cpuMeanMs: number;
  /** Building the wanted crossings' events (views, bodies, ids: HealthCrossings.events): CPU mean and wall median, ms a tick. */
  eventsCpuMeanMs: number;
  eventsMedianMs: number;
  /** The read model bringing its accounts' health factors to the tick's prices (before matching): CPU mean and wall median. */
  readModelCpuMeanMs: number;
  readModelMedianMs: number;
  eventsPerTick: number;
  deliveriesPerTick: number;
}
export interface BaselineRow {
  subscriptions: number;
  positions: number;
  ms: number;
  ratioToIndexed: number;
}
export interface LatencyRow {
  subscriptions: number;
  positions: number;
  deliveries: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

async function matching(quick: boolean): Promise<{ rows: MatchRow[]; baseline: BaselineRow | null }> {
  const profile = quick ? 'default' : 'large';
  log(`events: building the ${profile} read model`);
  const { model: m, wallets, markets, tokens } = model(profile);
  const rows: MatchRow[] = [];
  let baseline: BaselineRow | null = null;
  const random = rng(7);
  const level = new Map<string, number>();
  for (const count of [10_000, 100_000]) {
    const subs = subscriptions(count, wallets, markets, random);
    const index = new SubscriptionIndex(subs);
    const h = new HealthCrossings();
    const sink: Matched = { events: [], deliveries: [] };
    h.pass(m, index, 'live', 0, sink); // observes
    let tickNo = 0;
    let everyRow: MatchRow | null = null;
    for (const kind of TICKS) {
      const times: number[] = [];
      const cpu: number[] = [];
      const eventsCpu: number[] = [];
      const eventsWall: number[] = [];
      const readModelCpu: number[] = [];
      const readModelWall: number[] = [];
      let events = 0;
      let deliveries = 0;
      let moved = 0;
      const ticks = kind === 'every token ±2 %' ? (quick ? 10 : 15) : quick ? 30 : 100;
      const everyToken = kind !== '1 % of tokens ±2 %';
      for (let k = 0; k < ticks; k++) {
        if (everyToken) move(m, tokens, level, random, Date.now(), kind === 'every token ±2 %' ? 1 : 0.02);
        else moveSome(m, tokens, level, random, Date.now(), 0.01);
        moved = everyToken ? tokens.length : Math.max(1, Math.round(tokens.length * 0.01));
        const o: Matched = { events: [], deliveries: [] };
        // The read model first brings its accounts' health factors to the new prices (whoever
        // reads first pays it once per price change: a query, or the matcher), then the pass.
        const r0 = threadCpuMs();
        const rw = performance.now();
        m.risk.accountsChangedSince(m.risk.changeVersion);
        readModelCpu.push(threadCpuMs() - r0);
        readModelWall.push(performance.now() - rw);
        const c0 = threadCpuMs();
        const t0 = performance.now();
        const wanted = h.match(m, index);
        const c1 = threadCpuMs();
        const t1 = performance.now();
        h.events(m, 'live', ++tickNo, wanted, o);
        times.push(t1 - t0);
        cpu.push(c1 - c0);
        eventsCpu.push(threadCpuMs() - c1);
        eventsWall.push(performance.now() - t1);
        events += o.events.length;
        deliveries += o.deliveries.length;
      }
      times.sort((a, b) => a - b);
      const row: MatchRow = {
        profile,
        positions: m.risk.size,
        subscriptions: count,
        tick: kind,
        tokensMoved: moved,
        thresholds: index.thresholds.length,
        held: h.held,
        ticks: times.length,
        medianMs: sig(times[Math.floor(times.length / 2)]!, 3),
        p99Ms: sig(times.at(-1)!, 3),
        cpuMeanMs: sig(mean(cpu), 3),
        eventsCpuMeanMs: sig(mean(eventsCpu), 3),
        eventsMedianMs: sig(median(eventsWall), 3),
        readModelCpuMeanMs: sig(mean(readModelCpu), 3),
        readModelMedianMs: sig(median(readModelWall), 3),
        eventsPerTick: sig(events / times.length, 3),
        deliveriesPerTick: sig(deliveries / times.length, 3),
      };
      log(`events: matching ${JSON.stringify(row)}`);
      rows.push(row);
      if (kind === 'every token ±2 %') everyRow = row;
    }
    const row = everyRow!;
    if (count === 10_000) {
      // The baseline: every subscription against every position below the highest threshold x 1.01.
      const list = m.risk.query({
        healthFactorThreshold: 1.5 * 1.01,
        minBorrowUsd: 0,
        limit: Number.MAX_SAFE_INTEGER,
      });
      const subsView = subs.map(subscriber);
      // Timed over a sample of the positions (all of them would take minutes), scaled to all.
      const sample = list.slice(0, 2000);
      const t0 = performance.now();
      let hits = 0;
      for (const i of sample) {
        const v = m.risk.view(i);
        const a = {
          type: 'position.health_factor_below' as const,
          chainId: v.chainId,
          protocols: [v.protocol],
          marketKeys: [v.market.uniqueKey],
          wallet: v.user.address,
          threshold: 0,
        };
        for (const s of subsView) {
          a.threshold = s.threshold;
          if (v.healthFactor < s.threshold && matches(s.types, s.filters, a)) hits++;
        }
      }
      const naiveMs = ((performance.now() - t0) * list.length) / Math.max(1, sample.length);
      void hits;
      baseline = {
        subscriptions: count,
        positions: list.length,
        ms: sig(naiveMs, 3),
        ratioToIndexed: sig(naiveMs / row.medianMs, 3),
      };
      log(`events: baseline ${sig(naiveMs, 3)} ms for ${list.length} positions x ${count} subscriptions`);
    }
  }
  return { rows, baseline };
}

async function latency(quick: boolean): Promise<LatencyRow> {
  log('events: price move to webhook arrival (default profile, SQLite outbox)');
  const { model: m, wallets, tokens } = model('default');
  const arrivals: { eventId: string; at: number }[] = [];
  const receiver = createServer((req, res) => {
    const at = performance.now();
    req.resume();
    req.on('end', () => {
      arrivals.push({ eventId: String(req.headers['lrds-event-id']), at });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`;
  // Scratch outside bench/.data (the seeded dataset there is only read).
  const dir = mkdtempSync(join(tmpdir(), 'lrds-bench-events-'));
  const store = new SqliteStore(join(dir, 'lrds.db'));
  await store.migrate();
  const secrets = new SecretBox(randomBytes(32));
  const sealed = secrets.seal('whsec_bench');
  const random = rng(11);
  const count = 10_000;
  for (const s of subscriptions(count, wallets, wallets, random))
    await store.events.createSubscription(
      {
        ...s,
        url,
        filters: {
          wallets: s.filters.wallets ?? [wallets[Math.floor(random() * wallets.length)]!],
          healthFactorBelow: s.filters.healthFactorBelow!,
        },
        sealedSecret: sealed,
      },
      null,
    );
  const clock = systemClock();
  const loop = new EventsLoop({
    store: store.events,
    history: store,
    views: eventViews,
    models: { peek: (mode) => (mode === 'live' ? m : null) },
    clock,
    secrets,
    holder: 'bench',
    allowPrivate: true,
    concurrency: 32,
  });
  loop.start();
  const movedAt = new Map<number, number>();
  const level = new Map<string, number>();
  const seen = new Set<string>();
  const delays: number[] = [];
  for (let i = 0; i < (quick ? 8 : 25); i++) {
    await new Promise((r) => setTimeout(r, 600));
    const before = arrivals.length;
    void before;
    const t = performance.now();
    move(m, tokens, level, random, Date.now(), 1);
    movedAt.set(i, t);
    // Arrivals of this move: those until the next one (each event's first arrival).
    await new Promise((r) => setTimeout(r, 1400));
    for (const a of arrivals) {
      if (seen.has(a.eventId) || a.at < t) continue;
      seen.add(a.eventId);
      delays.push(a.at - t);
    }
  }
  await loop.stop();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  await new Promise<void>((r) => receiver.close(() => r()));
  delays.sort((a, b) => a - b);
  const q = (p: number) =>
    sig(delays[Math.min(delays.length - 1, Math.floor(p * delays.length))] ?? Number.NaN, 3);
  const row = {
    subscriptions: count,
    positions: m.risk.size,
    deliveries: delays.length,
    p50Ms: q(0.5),
    p99Ms: q(0.99),
    maxMs: sig(delays.at(-1) ?? Number.NaN, 3),
  };
  log(`events: latency ${JSON.stringify(row)}`);
  return row;
}

export interface EventsResults {
  matching: { rows: MatchRow[]; baseline: BaselineRow | null };
  latency: LatencyRow;
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { quick: { type: 'boolean' }, 'json-out': { type: 'string' } } });
  const quick = values.quick ?? false;
  const results: EventsResults = {
    latency: await latency(quick),
    matching: await matching(quick),
  };
  const text = JSON.stringify(results, null, 2);
  if (values['json-out']) writeFileSync(values['json-out'], text);
  else process.stdout.write(`${text}\n`);
}
