/**
 * The sandbox simulation's history, written into the store: market snapshots (daily, and
 * hourly for the last days), hourly token prices and liquidations, computed by
 * simulation/market-history.ts from the same price paths the server serves. Every row is a
 * function of the seed and its time, and appends are idempotent, so a window written twice
 * (a retry, a restart, two processes) leaves one copy.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { must } from '../../domain/must.ts';
import { significant } from '../../domain/precision.ts';
import { borrowRate, rateToApy, supplyRate } from '../../domain/rates.ts';
import type { AssetPrice } from '../../domain/records/history.ts';
import type { MarketStateChange } from '../../domain/types.ts';
import { ALL_HISTORY, historyCutoffs } from '../../store/history.ts';
import type { HistoryStore } from '../../store/ports/history.ts';
import type { MarketDataStore, ProgressFn } from '../../store/ports/market-data.ts';
import type { SourceStore } from '../../store/ports/sources.ts';
import { oracleRoundRows, type SandboxFeed, sandboxFeeds } from './feeds.ts';
import { generateSandbox, type SandboxDataset, type SandboxProfile } from './index.ts';
import { type SandboxPriceBasis, sandboxPriceBasis } from './live.ts';
import { adaptiveCurve } from './prices.ts';
import { roundTo } from './rng.ts';
import { createMarketHistory, type MarketHistory } from './simulation/market-history.ts';
import { DAY_MS, HOUR_MS } from './simulation/noise.ts';
import { ptWindDown, type WindDown } from './wind-down.ts';

/**
 * Batch sizes. `fast` (the seed, before the server listens): markets whose rows are computed
 * and appended together (about 15,000 daily rows), price rows per append, oracle rounds a day
 * at a time, any number of rows per write. `gentle` (the background, while the server
 * answers): batches of a few tens of ms, and writes of at most `rowsPerWrite` rows (a few ms
 * each; see appendRows).
 */
const BATCHES = {
  fast: { markets: 40, prices: 50_000, roundsWindowMs: DAY_MS, rowsPerWrite: Number.POSITIVE_INFINITY },
  gentle: { markets: 4, prices: 5_000, roundsWindowMs: HOUR_MS, rowsPerWrite: 250 },
} as const;
export type BatchMode = keyof typeof BATCHES;

export interface SandboxSimulation {
  dataset: SandboxDataset;
  basis: SandboxPriceBasis;
  history: MarketHistory;
  /** The markets that wind down after the snapshot (a PT they hold matures), by uniqueKey. */
  windDowns: ReadonlyMap<string, WindDown>;
  /** The dataset's oracle feeds as simulated feeds over the same price paths. */
  feeds(): readonly SandboxFeed[];
}

export function sandboxSimulation(profile: SandboxProfile, seed: number): SandboxSimulation {
  const dataset = generateSandbox({ profile, seed });
  const basis = sandboxPriceBasis(dataset.markets, seed);
  const asOfMs = dataset.asOf * 1000;
  // A PT's maturity as its price path has it (at par from then on).
  const maturityOf = (symbol: string): number | null => {
    try {
      return basis.model.maturity(symbol)?.maturityMs ?? null;
    } catch {
      return null;
    }
  };
  const windDownList: (WindDown | null)[] = [];
  const windDowns = new Map<string, WindDown>();
  for (const m of dataset.markets) {
    const w = ptWindDown(m.collateral, m.loan, maturityOf, asOfMs);
    windDownList.push(w);
    if (w) windDowns.set(m.uniqueKey, w);
  }
  const history = createMarketHistory({
    seed,
    asOfMs,
    basis,
    markets: dataset.markets,
    terms: dataset.terms,
    positionCounts: dataset.positionCounts,
    windDowns: windDownList,
  });
  let feeds: SandboxFeed[] | null = null;
  return {
    dataset,
    basis,
    history,
    windDowns,
    feeds: () => {
      feeds ??= sandboxFeeds(dataset.markets, basis.model);
      return feeds;
    },
  };
}

/** The longest the market clock's warm-up holds the event loop at a time. */
const WARM_SLICE_MS = 5;

/** The highest utilization a market's served figures reach. */
export const MAX_SERVED_UTILIZATION = 0.99;

/** The sandbox's markets as they move after the snapshot: interest, utilization and APYs. */
export interface SandboxMarketClock {
  /** The markets: indexes 0 to size - 1 (the dataset's order). */
  readonly size: number;
  /** Sums every market's hours up to tMs, yielding to the event loop every few ms. */
  warm(tMs: number): Promise<void>;
  /**
   * Every market's state at tMs (not before the snapshot; cheapest at increasing times), or
   * those of the markets from index `from` to `to` (excluded). With `statedDebt` (by the
   * market's index in the dataset: its positions' debt summed as they state it, USD at the
   * record's prices and borrow index 1; null when unknown), a market's borrow is its positions'
   * debt.
   */
  statesAt(
    tMs: number,
    statedDebt?: (index: number) => number | null,
    from?: number,
    to?: number,
  ): MarketStateChange[];
}

/**
 * The market clock of a simulation (MarketHistory.stateAt): supply and borrow in USD at the
 * record's prices, APYs of the market's curve at its utilization (to 6 decimals, as the
 * snapshot's), and the borrow index since the snapshot (e^logIndex) by which its positions'
 * debt has grown.
 *
 * A market's borrowers are its positions: given their debt (`statedDebt`), the borrow is that
 * debt times the borrow index (the interest it accrued), exactly what the positions serve; the
 * supply is the path's (its lenders), or, when the positions borrow more than the path's
 * utilization allows, what the path's utilization needs for their debt (lenders come for the
 * rate), within MAX_SERVED_UTILIZATION; utilization and APYs follow from them (an adaptive
 * curve's at its rate at target now). While the positions hold the snapshot's debt, these are
 * the path's figures.
 */
export function sandboxMarketClock(sim: SandboxSimulation): SandboxMarketClock {
  const { markets, terms } = sim.dataset;
  return {
    size: markets.length,
    async warm(tMs) {
      if (!(tMs >= sim.dataset.asOf * 1000)) return;
      let since = performance.now();
      for (let i = 0; i < markets.length; i++) {
        sim.history.stateAt(i, tMs);
        if (performance.now() - since > WARM_SLICE_MS) {
          await new Promise((resolve) => setImmediate(resolve));
          since = performance.now();
        }
      }
    },
    statesAt(tMs, statedDebt, from = 0, to = markets.length) {
      return markets.slice(from, to).map((m, at) => {
        const i = from + at;
        const s = sim.history.stateAt(i, tMs);
        const debtIndex = Math.exp(s.logIndex);
        const pathSupply = s.supplyTokens * m.loanPrice;
        const debt = statedDebt?.(i) ?? null;
        if (debt === null) {
          return {
            marketKey: m.uniqueKey,
            supply: pathSupply,
            borrow: pathSupply * s.utilization,
            supplyApy: roundTo(rateToApy(s.supplyRate), 6),
            borrowApy: roundTo(rateToApy(s.borrowRate), 6),
            debtIndex,
          };
        }
        const t = must(terms[i], 'market terms');
        const borrow = debt * debtIndex;
        const lenders = Math.min(MAX_SERVED_UTILIZATION, s.utilization > 0 ? s.utilization : 1);
        const supply = Math.max(pathSupply, borrow / lenders);
        const u = supply > 0 ? Math.min(1, borrow / supply) : 0;
        const rb = borrowRate(u, s.rateAtTarget === null ? t.curve : adaptiveCurve(s.rateAtTarget));
        return {
          marketKey: m.uniqueKey,
          supply,
          borrow,
          supplyApy: roundTo(rateToApy(supplyRate(rb, u, t.reserveFactor)), 6),
          borrowApy: roundTo(rateToApy(rb), 6),
          debtIndex,
        };
      });
    },
  };
}

/** A half-open time range, epoch ms. */
export interface Window {
  fromMs: number;
  toMs: number;
}

/** What to write: each kind over its own window (a kind left out is not written). */
export interface HistoryPlan {
  daily?: Window;
  hourly?: Window;
  prices?: Window;
  liquidations?: Window;
  /** Oracle rounds posted in the window. */
  rounds?: Window;
}

export interface WrittenHistory {
  dailySnapshots: number;
  hourlySnapshots: number;
  assetPrices: number;
  liquidations: number;
  oracleRounds: number;
}

/** The multiples of `step` in [fromMs, toMs), not before the history's start. */
export function gridTimes(w: Window | undefined, step: number, startMs: number): number[] {
  if (!w) return [];
  const times: number[] = [];
  for (let t = Math.ceil(Math.max(w.fromMs, startMs) / step) * step; t < w.toMs; t += step) times.push(t);
  return times;
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Appends rows with `append`, at most `rowsPerWrite` a write. In `gentle` mode every write is
 * followed by a pause as long as it took: a write holds the database's write lock, and the
 * server's own writes (usage counts, leases) wait for it, so a background write never holds
 * the lock for more than a few ms and the server's writes always get their turn.
 */
async function appendRows<T>(
  mode: BatchMode,
  rows: readonly T[],
  append: (rows: readonly T[]) => Promise<number>,
): Promise<number> {
  const { rowsPerWrite } = BATCHES[mode];
  if (mode === 'fast') return append(rows);
  let added = 0;
  for (let from = 0; from < rows.length; from += rowsPerWrite) {
    const started = performance.now();
    added += await append(rows.slice(from, from + rowsPerWrite));
    await sleep(Math.max(1, performance.now() - started));
  }
  return added;
}

/**
 * Markets supplied at least this much (USD, at the snapshot) get hourly snapshots, and their
 * oracle feeds hourly rounds; the others daily snapshots only (in `default`: about a quarter of
 * the markets, holding 96 % of the money supplied). A market with nothing supplied never moves
 * (its supply stays 0): it has no snapshot rows at all.
 */
export const HOURLY_MIN_SUPPLY_USD = 10_000_000;

/** Which markets get which rows, and the feeds whose rounds are written (see HOURLY_MIN_SUPPLY_USD). */
export interface HistoryScope {
  daily(index: number): boolean;
  hourly(index: number): boolean;
  /** The feeds of sim.feeds() that hourly markets read, in its order. */
  feeds: readonly SandboxFeed[];
}

export function historyScope(sim: SandboxSimulation): HistoryScope {
  const { markets } = sim.dataset;
  const hourly = (i: number) => (markets[i]?.supply ?? 0) >= HOURLY_MIN_SUPPLY_USD;
  const read = new Set<string>();
  markets.forEach((m, i) => {
    if (hourly(i)) for (const f of m.oracle?.feeds ?? []) read.add(`${m.chainId}:${f.address.toLowerCase()}`);
  });
  const feeds = sim.feeds().filter((f) => read.has(`${f.chainId}:${f.address}`));
  return { daily: (i) => (markets[i]?.supply ?? 0) > 0, hourly, feeds };
}

/**
 * Writes the plan's rows, market batch by market batch, then the prices token by token,
 * yielding to the event loop between batches (a server keeps answering meanwhile).
 * `onProgress(done, total)` counts markets, then tokens.
 */
export async function writeSandboxHistory(
  store: HistoryStore,
  sim: SandboxSimulation,
  plan: HistoryPlan,
  onProgress?: ProgressFn,
  shouldStop: () => boolean = () => false,
  mode: BatchMode = 'fast',
): Promise<WrittenHistory> {
  const sizes = BATCHES[mode];
  const { history, dataset, basis } = sim;
  const written: WrittenHistory = {
    dailySnapshots: 0,
    hourlySnapshots: 0,
    assetPrices: 0,
    liquidations: 0,
    oracleRounds: 0,
  };
  const scope = historyScope(sim);
  const rounds = plan.rounds;
  if (rounds && rounds.toMs > rounds.fromMs) {
    // A day of every feed's rounds per append.
    for (const rows of oracleRoundRows(
      basis.model,
      scope.feeds,
      rounds.fromMs,
      rounds.toMs,
      sizes.roundsWindowMs,
    )) {
      if (shouldStop()) return written;
      written.oracleRounds += await appendRows(mode, rows, (r) => store.appendOracleRounds(r));
      await turn();
    }
  }
  const daily = gridTimes(plan.daily, DAY_MS, history.startMs);
  const hourly = gridTimes(plan.hourly, HOUR_MS, history.startMs);
  const prices = gridTimes(plan.prices, HOUR_MS, history.startMs);
  const markets = dataset.markets.length;
  const tokens = prices.length > 0 ? basis.tokens.length : 0;
  const total = markets + tokens;
  const liq = plan.liquidations;
  const perMarket = daily.length > 0 || hourly.length > 0 || liq !== undefined;
  for (let first = 0; perMarket && first < markets && !shouldStop(); first += sizes.markets) {
    const end = Math.min(markets, first + sizes.markets);
    const dailyRows = [];
    const hourlyRows = [];
    const events = [];
    for (let i = first; i < end; i++) {
      const days = scope.daily(i) ? daily : [];
      if (days.length > 0 || liq) {
        const rows = history.market(i, days, 'day', liq?.fromMs ?? 0, liq?.toMs ?? 0);
        dailyRows.push(...rows.snapshots);
        events.push(...rows.liquidations);
      }
      if (hourly.length > 0 && scope.hourly(i)) hourlyRows.push(...history.snapshots(i, hourly, 'hour'));
    }
    written.dailySnapshots += await appendRows(mode, dailyRows, (r) => store.appendMarketSnapshots(r));
    written.hourlySnapshots += await appendRows(mode, hourlyRows, (r) => store.appendMarketSnapshots(r));
    written.liquidations += await appendRows(mode, events, (r) => store.appendLiquidations(r));
    onProgress?.(end, total);
    await turn();
  }
  if (prices.length === 0) return written;
  const from = prices[0] as number;
  const to = prices.at(-1) as number;
  let batch: AssetPrice[] = [];
  let done = 0;
  const bySymbol = new Map<string, Float64Array>();
  for (const t of basis.tokens) {
    if (shouldStop()) break;
    let ratios = bySymbol.get(t.symbol);
    if (!ratios) {
      ratios = basis.hourlyRatios(t.symbol, from, to);
      bySymbol.set(t.symbol, ratios);
    }
    for (let i = 0; i < ratios.length; i++) {
      const priceUsd = significant(t.base * (ratios[i] as number));
      batch.push({ chainId: t.chainId, token: t.token, at: from + i * HOUR_MS, priceUsd });
    }
    done++;
    if (batch.length >= sizes.prices) {
      written.assetPrices += await appendRows(mode, batch, (r) => store.appendAssetPrices(r));
      batch = [];
      onProgress?.(markets + done, total);
      await turn();
    }
  }
  written.assetPrices += await appendRows(mode, batch, (r) => store.appendAssetPrices(r));
  onProgress?.(total, total);
  return written;
}

/** The checkpoint id of the sandbox history in the store's sources. */
export const HISTORY_SOURCE_ID = 'sandbox-history';
/**
 * Hourly rows (market snapshots, token prices, oracle rounds) are backfilled this many days
 * back by default; daily snapshots and liquidations for the whole history.
 */
export const HOURLY_HISTORY_DAYS = 30;

/**
 * Where the history stands, kept in the source's checkpoint: every kind is complete over
 * [fromMs, untilMs) for the dataset (profile, seed); until `backfilled`, only the daily
 * snapshots and the liquidations are (the seed writes those, the rest follows in the background).
 */
interface HistoryCursor {
  profile: string;
  seed: number;
  fromMs: number;
  untilMs: number;
  backfilled: boolean;
}

function parseCursor(text: string | null | undefined): HistoryCursor | null {
  if (!text) return null;
  try {
    const c = JSON.parse(text) as HistoryCursor;
    return Number.isFinite(c.fromMs) && Number.isFinite(c.untilMs) ? c : null;
  } catch {
    return null;
  }
}

export interface HistoryFeedOptions {
  /** Days of history to hold (1 to 365). */
  days: number;
  /** Days back the backfill writes hourly rows (snapshots, prices, oracle rounds); default HOURLY_HISTORY_DAYS. */
  hourlyDays?: number;
  /** `gentle` while a server answers (small batches), `fast` otherwise. Default fast. */
  batches?: BatchMode;
  /** Deletes history older than this many days after each step; null keeps everything. */
  retentionDays?: number | null;
  /** Called once the hourly backfill (prices, hourly snapshots, rounds) is written. */
  onBackfilled?: () => void;
}

export interface AdvanceOptions {
  /** Only the daily snapshots and liquidations the seed writes; the rest is left for a later step. */
  baseOnly?: boolean;
  onProgress?: ProgressFn;
}

/**
 * Keeps the sandbox's history in the store up to the last whole hour: on first use it writes
 * the daily snapshots and liquidations of the last `days` days, then (backfill) the hourly
 * snapshots, hourly prices and oracle rounds of the last `hourlyDays` days, then every hour the
 * hour just ended. Its checkpoint (source HISTORY_SOURCE_ID) says how far it got, so a restart
 * goes on from there; a dataset with another profile or seed starts the history over.
 */
export class SandboxHistoryFeed {
  readonly #store: HistoryStore & SourceStore & Pick<MarketDataStore, 'datasetInfo'>;
  readonly #sim: SandboxSimulation;
  readonly #options: HistoryFeedOptions;
  #stopped = false;
  #failures = 0;

  constructor(
    store: HistoryStore & SourceStore & Pick<MarketDataStore, 'datasetInfo'>,
    sim: SandboxSimulation,
    options: HistoryFeedOptions,
  ) {
    this.#store = store;
    this.#sim = sim;
    this.#options = options;
  }

  /** Stops between two batches (a step in progress ends early; its checkpoint is not moved). */
  stop(): void {
    this.#stopped = true;
  }

  async #save(cursor: HistoryCursor | null, nowMs: number, error: string | null): Promise<void> {
    const chainIds = [...new Set(this.#sim.dataset.markets.map((m) => m.chainId))].sort((a, b) => a - b);
    const previous = (await this.#store.listSources()).find((s) => s.id === HISTORY_SOURCE_ID);
    await this.#store.saveSource({
      id: HISTORY_SOURCE_ID,
      kind: 'simulation',
      chainIds,
      refreshedAt: error ? (previous?.refreshedAt ?? null) : Math.floor(nowMs),
      lastBlock: {},
      consecutiveFailures: error ? this.#failures : 0,
      lastError: error,
      updatedAt: Math.floor(nowMs),
      cursor: cursor ? JSON.stringify(cursor) : null,
    });
  }

  /** Writes what is missing up to the last whole hour before `nowMs`. Returns the rows written. */
  async advance(nowMs: number, options: AdvanceOptions = {}): Promise<WrittenHistory> {
    const store = this.#store;
    const { dataset, history } = this.#sim;
    const total: WrittenHistory = {
      dailySnapshots: 0,
      hourlySnapshots: 0,
      assetPrices: 0,
      liquidations: 0,
      oracleRounds: 0,
    };
    const add = (w: WrittenHistory) => {
      for (const k of Object.keys(total) as (keyof WrittenHistory)[]) total[k] += w[k];
    };
    const stop = () => this.#stopped;
    const hour = Math.floor(nowMs / HOUR_MS) * HOUR_MS;
    // Only the history of the dataset the store holds: a feed left over from before a reseed
    // (another process seeded another profile or seed) writes nothing and wipes nothing.
    const held = await store.datasetInfo();
    if (held?.kind !== 'sandbox' || held.profile !== dataset.profile || held.seed !== dataset.seed)
      return total;
    const state = (await store.listSources()).find((s) => s.id === HISTORY_SOURCE_ID);
    let cursor = parseCursor(state?.cursor);
    try {
      if (cursor && (cursor.profile !== dataset.profile || cursor.seed !== dataset.seed)) {
        // Another dataset was seeded: its history is not this one's.
        await store.pruneHistory(ALL_HISTORY);
        cursor = null;
      }
      if (!cursor) {
        const fromMs = Math.max(history.startMs, hour - this.#options.days * DAY_MS);
        const w = { fromMs, toMs: hour };
        add(
          await writeSandboxHistory(
            store,
            this.#sim,
            { daily: w, liquidations: w },
            options.onProgress,
            stop,
            this.#options.batches,
          ),
        );
        if (this.#stopped) return total;
        cursor = { profile: dataset.profile, seed: dataset.seed, fromMs, untilMs: hour, backfilled: false };
        await this.#save(cursor, nowMs, null);
      }
      if (options.baseOnly) return total;
      if (!cursor.backfilled) {
        const hourlyDays = Math.min(this.#options.days, this.#options.hourlyDays ?? HOURLY_HISTORY_DAYS);
        const hourly = {
          fromMs: Math.max(cursor.fromMs, cursor.untilMs - hourlyDays * DAY_MS),
          toMs: cursor.untilMs,
        };
        add(
          await writeSandboxHistory(
            store,
            this.#sim,
            { hourly, prices: hourly, rounds: hourly },
            options.onProgress,
            stop,
            this.#options.batches,
          ),
        );
        if (this.#stopped) return total;
        cursor = { ...cursor, backfilled: true };
        await this.#save(cursor, nowMs, null);
        this.#options.onBackfilled?.();
      }
      if (cursor.untilMs < hour) {
        const w = { fromMs: cursor.untilMs, toMs: hour };
        add(
          await writeSandboxHistory(
            store,
            this.#sim,
            { daily: w, hourly: w, prices: w, liquidations: w, rounds: w },
            undefined,
            stop,
            this.#options.batches,
          ),
        );
        if (this.#stopped) return total;
        cursor = { ...cursor, untilMs: hour };
        await this.#save(cursor, nowMs, null);
      }
      const keep = this.#options.retentionDays;
      if (keep && total.hourlySnapshots + total.dailySnapshots + total.liquidations > 0) {
        const days = keep * DAY_MS;
        await store.pruneHistory(
          historyCutoffs(
            {
              hourlySnapshots: days,
              dailySnapshots: days,
              assetPrices: days,
              oracleRounds: days,
              liquidations: days,
            },
            nowMs,
          ),
        );
      }
      this.#failures = 0;
      return total;
    } catch (err) {
      this.#failures++;
      // The failure shows in /health; the checkpoint stays where the last good step left it.
      await this.#save(cursor, nowMs, err instanceof Error ? err.message : String(err)).catch(() => {});
      throw err;
    }
  }
}
