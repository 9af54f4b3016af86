import type { ReadModel } from '../data/read-model.ts';
import type { Protocol } from '../domain/enums.ts';
import { utilization } from '../domain/metrics.ts';
import { dayStartMs, utcDay } from '../domain/periods.ts';
import { fraction, servedBalances, usd } from '../domain/precision.ts';
import type { DailyLiquidationTotal, DailyMarketTotal } from '../domain/records/history.ts';
import type { HistoryStore } from '../store/ports/history.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import type { Found, Scope } from './types.ts';

/**
 * Analytics: totals of the read model now (overview) and of the stored history per day
 * (timeseries). Every figure is a sum of the markets' or liquidations' own; utilization is
 * borrow / supply of the sums.
 */

const DAY_MS = 86_400_000;
/**
 * Days read per store query: at most MAX_LOAD_DAYS, fewer (down to one) so that a query takes
 * about LOAD_TARGET_MS (the embedded store reads synchronously, holding the event loop; 30 days
 * of the default profile's 4,000 markets took 40 ms on an idle machine, ten times that on a
 * busy one).
 */
const MAX_LOAD_DAYS = 30;
const LOAD_TARGET_MS = 15;
/** The timeseries covers at most this many days back from today (two years). */
export const TIMESERIES_MAX_DAYS = 730;

// ---- overview ---------------------------------------------------------------------------------

/** The health factor below which a position counts as at risk in the overview (as positions at risk's default). */
export const AT_RISK_HEALTH_FACTOR = 1.1;

interface Totals {
  markets: number;
  /** Markets counted whose loan token has no USD price: their supply and borrow are not in the sums (docs/decisions.md "Real sources"). */
  unpricedMarkets: number;
  supplyUsd: number;
  borrowUsd: number;
  utilization: number;
  /** Positions held, debt-free ones included. */
  positions: number;
  /** Positions with debt. */
  borrowPositions: number;
  /** Positions with a health factor below AT_RISK_HEALTH_FACTOR (liquidatable included). */
  positionsAtRisk: number;
  /** Positions with a health factor below 1. */
  liquidatablePositions: number;
  /** Debt of the positions at risk, USD. */
  debtAtRiskUsd: number;
}

export interface OverviewView {
  atRiskHealthFactor: number;
  totals: Totals;
  byProtocol: (Totals & { protocol: Protocol })[];
  byChain: (Totals & { chainId: number })[];
}

function emptyTotals(): Totals {
  return {
    markets: 0,
    unpricedMarkets: 0,
    supplyUsd: 0,
    borrowUsd: 0,
    utilization: 0,
    positions: 0,
    borrowPositions: 0,
    positionsAtRisk: 0,
    liquidatablePositions: 0,
    debtAtRiskUsd: 0,
  };
}

function rounded<T extends Totals>(t: T): T {
  return {
    ...t,
    // utilization from the served amounts, as a market's (servedBalances).
    supplyUsd: usd(t.supplyUsd),
    borrowUsd: usd(t.borrowUsd),
    utilization: servedBalances(t.supplyUsd, t.borrowUsd).utilization,
    debtAtRiskUsd: usd(t.debtAtRiskUsd),
  };
}

/**
 * Supply, borrow, utilization, market and position counts, positions at risk and liquidatable,
 * in scope: in total, by protocol and by chain (largest supply first). O(markets in scope x
 * log positions per market): counts come from the risk index's order, never a scan of positions.
 */
export function overview(model: ReadModel, scope: Scope): Found<OverviewView> {
  const { catalog, risk } = model;
  const total = emptyTotals();
  const byProtocol = new Map<Protocol, Totals>();
  const byChain = new Map<number, Totals>();
  for (const ord of catalog.list(scope, 0, catalog.size)) {
    const m = catalog.recordAt(ord);
    const atRisk = risk.below(ord, 1, AT_RISK_HEALTH_FACTOR);
    const add = {
      unpriced: m.supply === null || m.borrow === null ? 1 : 0,
      supplyUsd: m.supply ?? 0,
      borrowUsd: m.borrow ?? 0,
      positions: risk.positionsIn(ord),
      borrowPositions: risk.withDebt(ord).positions,
      positionsAtRisk: atRisk.positions,
      liquidatablePositions: risk.below(ord, 1, 1).positions,
      debtAtRiskUsd: atRisk.debtUsd,
    };
    let p = byProtocol.get(m.protocol);
    if (!p) {
      p = emptyTotals();
      byProtocol.set(m.protocol, p);
    }
    let c = byChain.get(m.chainId);
    if (!c) {
      c = emptyTotals();
      byChain.set(m.chainId, c);
    }
    for (const t of [total, p, c]) {
      t.markets++;
      t.unpricedMarkets += add.unpriced;
      t.supplyUsd += add.supplyUsd;
      t.borrowUsd += add.borrowUsd;
      t.positions += add.positions;
      t.borrowPositions += add.borrowPositions;
      t.positionsAtRisk += add.positionsAtRisk;
      t.liquidatablePositions += add.liquidatablePositions;
      t.debtAtRiskUsd += add.debtAtRiskUsd;
    }
  }
  const bySupply = (a: Totals, b: Totals) => b.supplyUsd - a.supplyUsd;
  const view: OverviewView = {
    atRiskHealthFactor: AT_RISK_HEALTH_FACTOR,
    totals: rounded(total),
    byProtocol: [...byProtocol]
      .map(([protocol, t]) => ({ protocol, ...t }))
      .sort(bySupply)
      .map(rounded),
    byChain: [...byChain]
      .map(([chainId, t]) => ({ chainId, ...t }))
      .sort(bySupply)
      .map(rounded),
  };
  const protocols = view.byProtocol.map((p) => p.protocol);
  return { items: [view], itemProtocols: protocols, scopeProtocols: catalog.protocolsIn(scope) };
}

// ---- timeseries ---------------------------------------------------------------------------------

export type TimeseriesGroup = 'protocol' | 'chain';

export interface TimeseriesPoint {
  /** The UTC day, YYYY-MM-DD. */
  date: string;
  /** The group of the point: its protocol (groupBy=protocol) or chain (groupBy=chain); the other is null. */
  protocol: string | null;
  chainId: number | null;
  /** Markets with a daily snapshot that day. */
  markets: number;
  supplyUsd: number;
  borrowUsd: number;
  utilization: number;
  liquidations: number;
  /** Liquidations with an amount of no known USD value (a market without a USD price, "Real sources" (docs/decisions.md)). */
  unpricedLiquidations: number;
  /** Sums of the known USD values. */
  liquidatedDebtUsd: number;
  collateralSeizedUsd: number;
  badDebtUsd: number;
}

/** What the timeseries reads: the stores' daily sums. */
export type DailyTotalsReader = Pick<HistoryStore, 'dailyMarketTotals' | 'dailyLiquidationTotals'>;

interface Day {
  markets: DailyMarketTotal[];
  liquidations: DailyLiquidationTotal[];
}

/**
 * Daily totals read from the store, days kept once they can no longer change. History is
 * append-only and a day's rows are written by the end of the next day, so every day before
 * yesterday (UTC) is read once and kept (a few hundred rows a year); yesterday and today are
 * read again on each request. Kept per dataset version: a replaced dataset starts over.
 */
export class DailyTotals {
  private readonly reader: DailyTotalsReader;
  /** A monotonic clock in ms, to time the store's reads (performance.now). */
  private readonly elapsed: () => number;
  private version = -1;
  /** The contiguous range of days kept, [lo, hi), and their rows. */
  private lo = 0;
  private hi = 0;
  private readonly days = new Map<number, Day>();
  /** Days the next store query reads (see MAX_LOAD_DAYS). */
  private loadDays = MAX_LOAD_DAYS;

  constructor(reader: DailyTotalsReader, options: { elapsed?: () => number } = {}) {
    this.reader = reader;
    this.elapsed = options.elapsed ?? (() => performance.now());
  }

  /**
   * Reads and keeps every day the timeseries may serve (the last TIMESERIES_MAX_DAYS, up to the
   * day before yesterday) ahead of any request: run when the server starts, so the first
   * request reads two days, not two years. In slices that yield to the event loop between them;
   * requests that come meanwhile wait for it (reads run one at a time), they do not hold the loop.
   */
  prepare(nowMs: number, datasetVersion: number): Promise<void> {
    const today = dayStartMs(nowMs);
    return this.read(today - TIMESERIES_MAX_DAYS * DAY_MS, today - DAY_MS, nowMs, datasetVersion).then(
      () => undefined,
    );
  }

  /** Reads run one at a time: two at once would both keep the same days (counted twice). */
  private queue: Promise<unknown> = Promise.resolve();

  /**
   * Per day starting in [fromMs, toMs), its rows (days without any, absent). The range is cut
   * to the last TIMESERIES_MAX_DAYS days, up to tomorrow: a far `endDate` or an unlimited
   * history window reads no empty years.
   */
  read(fromMs: number, toMs: number, nowMs: number, datasetVersion: number): Promise<Map<number, Day>> {
    const run = this.queue.then(() => this.readNow(fromMs, toMs, nowMs, datasetVersion));
    this.queue = run.catch(() => {});
    return run;
  }

  private async readNow(
    fromMs: number,
    toMs: number,
    nowMs: number,
    datasetVersion: number,
  ): Promise<Map<number, Day>> {
    const today = dayStartMs(nowMs);
    fromMs = Math.max(fromMs, today - TIMESERIES_MAX_DAYS * DAY_MS);
    toMs = Math.min(toMs, today + DAY_MS);
    if (datasetVersion !== this.version) {
      this.days.clear();
      this.lo = this.hi = 0;
      this.version = datasetVersion;
    }
    // Whole days from fromMs: a day that starts before it is outside the range.
    const from = Math.ceil(Math.max(0, fromMs) / DAY_MS) * DAY_MS;
    // The store reads whole ms: the range widened to them.
    const to = Math.max(from, Math.ceil(toMs));
    const stable = Math.min(to, dayStartMs(nowMs) - DAY_MS);
    if (from < stable) {
      if (this.lo === this.hi) {
        await this.keep(from, stable);
        this.lo = from;
        this.hi = stable;
      } else {
        if (from < this.lo) {
          await this.keep(from, this.lo);
          this.lo = from;
        }
        if (stable > this.hi) {
          await this.keep(this.hi, stable);
          this.hi = stable;
        }
      }
    }
    const out = new Map<number, Day>();
    for (let d = from; d < stable; d += DAY_MS) {
      const day = this.days.get(d);
      if (day) out.set(d, day);
    }
    if (Math.max(from, stable) < to) group(await this.load(Math.max(from, stable), to), out);
    return out;
  }

  private async keep(fromMs: number, toMs: number): Promise<void> {
    group(await this.load(fromMs, toMs), this.days);
  }

  /**
   * Reads in slices of `loadDays` days, a turn of the event loop between them (the embedded
   * store reads synchronously). A slice that took under half of LOAD_TARGET_MS doubles the next
   * one (up to MAX_LOAD_DAYS), one that took over it halves it (down to a day).
   */
  private async load(fromMs: number, toMs: number): Promise<Day[]> {
    const out: Day[] = [];
    for (let from = fromMs; from < toMs; ) {
      const days = this.loadDays;
      const to = Math.min(toMs, from + days * DAY_MS);
      const started = this.elapsed();
      const [markets, liquidations] = await Promise.all([
        this.reader.dailyMarketTotals(from, to),
        this.reader.dailyLiquidationTotals(from, to),
      ]);
      const took = this.elapsed() - started;
      if (took > LOAD_TARGET_MS) this.loadDays = Math.max(1, Math.floor(days / 2));
      else if (took < LOAD_TARGET_MS / 2 && to - from === days * DAY_MS)
        this.loadDays = Math.min(MAX_LOAD_DAYS, days * 2);
      out.push({ markets, liquidations });
      from = to;
      if (from < toMs) await new Promise((r) => setImmediate(r));
    }
    return out;
  }
}

function group(loaded: Day[], into: Map<number, Day>): void {
  const dayOf = (at: number) => {
    let d = into.get(at);
    if (!d) {
      d = { markets: [], liquidations: [] };
      into.set(at, d);
    }
    return d;
  };
  for (const { markets, liquidations } of loaded) {
    for (const m of markets) dayOf(m.at).markets.push(m);
    for (const l of liquidations) dayOf(l.at).liquidations.push(l);
  }
}

export interface TimeseriesParams extends Scope {
  groupBy: TimeseriesGroup;
  fromMs: number;
  toMs: number;
  cursor?: string | undefined;
  limit: number;
}

/**
 * Daily supply, borrow, utilization and liquidation volume by protocol or chain, in scope, for
 * the days in [fromMs, toMs) with a snapshot or a liquidation: date ascending, then the group
 * (protocol name, or chain id). A model whose history is not in the store has none.
 */
export async function timeseries(
  model: ReadModel,
  totals: DailyTotals,
  nowMs: number,
  p: TimeseriesParams,
): Promise<Found<TimeseriesPoint>> {
  const list = `timeseries:${p.groupBy}`;
  const after = decodeCursor(p.cursor, list, ['number', 'string']);
  const days =
    model.stored && p.fromMs < p.toMs
      ? await totals.read(p.fromMs, p.toMs, nowMs, model.dataset.version)
      : new Map<number, Day>();
  const inScope = (protocol: string, chainId: number) =>
    (p.protocol === undefined || protocol === p.protocol) &&
    (p.chainIds === undefined || p.chainIds.includes(chainId));
  const keyOf = (protocol: string, chainId: number) =>
    p.groupBy === 'protocol' ? protocol : String(chainId).padStart(12, '0');
  const points: { at: number; key: string; point: TimeseriesPoint }[] = [];
  for (const [at, day] of [...days].sort(([a], [b]) => a - b)) {
    const groups = new Map<
      string,
      { point: TimeseriesPoint; supply: number; borrow: number; repaid: number; seized: number; bad: number }
    >();
    const groupOf = (protocol: string, chainId: number) => {
      const key = keyOf(protocol, chainId);
      let g = groups.get(key);
      if (!g) {
        g = {
          point: {
            date: utcDay(at),
            protocol: p.groupBy === 'protocol' ? protocol : null,
            chainId: p.groupBy === 'chain' ? chainId : null,
            markets: 0,
            supplyUsd: 0,
            borrowUsd: 0,
            utilization: 0,
            liquidations: 0,
            unpricedLiquidations: 0,
            liquidatedDebtUsd: 0,
            collateralSeizedUsd: 0,
            badDebtUsd: 0,
          },
          supply: 0,
          borrow: 0,
          repaid: 0,
          seized: 0,
          bad: 0,
        };
        groups.set(key, g);
      }
      return g;
    };
    for (const m of day.markets) {
      if (!inScope(m.protocol, m.chainId)) continue;
      const g = groupOf(m.protocol, m.chainId);
      g.point.markets += m.markets;
      g.supply += m.supplyUsd;
      g.borrow += m.borrowUsd;
    }
    for (const l of day.liquidations) {
      if (!inScope(l.protocol, l.chainId)) continue;
      const g = groupOf(l.protocol, l.chainId);
      g.point.liquidations += l.liquidations;
      g.point.unpricedLiquidations += l.unpricedLiquidations;
      g.repaid += l.debtRepaidUsd;
      g.seized += l.collateralSeizedUsd;
      g.bad += l.badDebtUsd;
    }
    for (const [key, g] of [...groups].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      g.point.supplyUsd = usd(g.supply);
      g.point.borrowUsd = usd(g.borrow);
      g.point.utilization = fraction(utilization(g.supply, g.borrow));
      g.point.liquidatedDebtUsd = usd(g.repaid);
      g.point.collateralSeizedUsd = usd(g.seized);
      g.point.badDebtUsd = usd(g.bad);
      points.push({ at, key, point: g.point });
    }
  }
  let start = 0;
  if (after) {
    const [at, key] = after;
    start = points.findIndex((x) => x.at > at || (x.at === at && x.key > key));
    if (start < 0) start = points.length;
  }
  const page = points.slice(start, start + p.limit);
  const last = page.at(-1);
  const protocols = new Set<string>();
  for (const x of page) {
    if (x.point.protocol !== null) protocols.add(x.point.protocol);
  }
  return {
    items: page.map((x) => x.point),
    itemProtocols: [...protocols],
    scopeProtocols: model.catalog.protocolsIn(p),
    ...(last && start + p.limit < points.length
      ? { nextCursor: encodeCursor(list, [last.at, last.key]) }
      : {}),
  };
}
