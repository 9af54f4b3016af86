/**
 * The read models the service serves (live and test keys), following the store, and the
 * living sandbox's steps.
 */

import {
  applyPrices,
  buildReadModel,
  catchUpChanges,
  followDataset,
  loadReadModel,
  type ReadModel,
  setSourceClocks,
  unsyncedLiveModel,
} from '../data/read-model.ts';
import type { Clock } from '../domain/clock.ts';
import type { DatasetInfo } from '../domain/records/dataset.ts';
import type { MarketStateChange } from '../domain/types.ts';
import type { DataSource } from '../http/context.ts';
import { type SandboxFeedClock, sandboxFeedClock } from '../ingest/sandbox/feeds.ts';
import { type SandboxMarketClock, sandboxMarketClock, sandboxSimulation } from '../ingest/sandbox/history.ts';
import { DEFAULT_SEED, generateSandbox, SANDBOX_AS_OF } from '../ingest/sandbox/index.ts';
import { type SandboxPricer, sandboxPricer } from '../ingest/sandbox/live.ts';
import type { MarketDataStore } from '../store/ports/market-data.ts';
import type { SourceStore } from '../store/ports/sources.ts';

/** The fixed sandbox served to test keys (docs/decisions.md "Keys and accounts"): the default profile with the default seed. */
export function sandboxReadModel(nowMs: number): ReadModel {
  const ds = generateSandbox({ profile: 'default', seed: DEFAULT_SEED });
  const info: DatasetInfo = {
    kind: 'sandbox',
    profile: 'default',
    seed: DEFAULT_SEED,
    refreshedAt: nowMs,
    marketCount: ds.markets.length,
    positionCount: ds.positionCount,
    version: 0,
    changeSeq: 0,
  };
  return buildReadModel(ds.markets, ds.positions(), info, nowMs, ds.vaults);
}

/** The simulation's history starts a year before the snapshot; no price is defined earlier. */
const SIMULATION_START_MS = (SANDBOX_AS_OF - 365 * 86_400) * 1000;

function isDefaultSandbox(d: DatasetInfo): boolean {
  return d.kind === 'sandbox' && d.profile === 'default' && d.seed === DEFAULT_SEED;
}

/** What moves a sandbox model: its token prices, its feeds' rounds and its markets, from one seed. */
interface SandboxLive {
  pricer: SandboxPricer;
  feeds: SandboxFeedClock;
  markets: SandboxMarketClock;
  /** The model's ord of each market of the simulation (by its index), -1 when it has none. */
  ords: Int32Array;
  /** The instant of the last step applied to the model (null: none yet). */
  steppedAt: number | null;
  /** A step is under way (from its warm-up to its apply). */
  stepping: boolean;
}

/**
 * The simulation of a sandbox model, ready to step at tMs: the price paths and each feed's
 * current grid cell are built first, a few at a time (no long event-loop stall).
 */
async function sandboxLive(model: ReadModel, tMs: number): Promise<SandboxLive> {
  const records = model.catalog.baseRecords();
  const seed = model.dataset.seed ?? DEFAULT_SEED;
  const profile = model.dataset.profile === 'large' ? 'large' : 'default';
  const sim = sandboxSimulation(profile, seed);
  const live = {
    pricer: sandboxPricer(records, seed),
    feeds: sandboxFeedClock(records, seed),
    markets: sandboxMarketClock(sim),
    ords: Int32Array.from(sim.dataset.markets, (m) => model.catalog.ordOf(m.uniqueKey) ?? -1),
    steppedAt: null,
    stepping: false,
  };
  await warmLive(live, tMs);
  return live;
}

/**
 * Brings a simulation to tMs a few assets, feeds and markets at a time (a no-op for a step of
 * a few seconds; after a jump in time, hours of paths and rates), so the synchronous step that
 * follows never stalls the event loop.
 */
async function warmLive(live: SandboxLive, tMs: number): Promise<void> {
  await live.pricer.warm(tMs);
  await live.feeds.warm(tMs);
  await live.markets.warm(tMs);
}

/** Markets whose states a turn of the event loop computes (a few ms), before a step applies them. */
const STATES_PER_TURN = 500;

/**
 * One step of a sandbox model: prices, the feeds' latest rounds and the markets' states
 * (interest, utilization, APYs) at tMs, applied together in one synchronous step. The states
 * are computed first, STATES_PER_TURN markets a turn; if positions changed meanwhile (their
 * debt is the markets' borrow), they are computed again in the step.
 */
async function stepSandbox(model: ReadModel, live: SandboxLive, tMs: number): Promise<void> {
  let states: MarketStateChange[] = [];
  if (tMs >= SANDBOX_AS_OF * 1000) {
    const debt = statedDebt(model, live);
    const seq = model.changeSeq;
    for (let from = 0; from < live.markets.size; from += STATES_PER_TURN) {
      if (from > 0) await new Promise((resolve) => setImmediate(resolve));
      for (const st of live.markets.statesAt(tMs, debt, from, from + STATES_PER_TURN)) states.push(st);
    }
    if (model.changeSeq !== seq) states = live.markets.statesAt(tMs, debt);
  }
  // The states are of every market, in the simulation's order: live.ords are their markets.
  applyPrices(model, live.pricer.pricesAt(tMs), tMs, live.feeds.updatesAt(tMs), states, live.ords);
  live.steppedAt = tMs;
}

/** A sandbox market's borrowers are its positions: their debt as stated, summed, by market. */
function statedDebt(model: ReadModel, live: SandboxLive): (index: number) => number | null {
  return (i) => {
    const ord = live.ords[i];
    return ord === undefined || ord < 0 ? null : model.risk.statedDebtOf(ord);
  };
}

/**
 * After positions changed (the change feed), the markets of a sandbox model are stated again
 * at the last tick: their borrow is their positions' debt (see SandboxMarketClock.statesAt).
 */
function restateSandbox(model: ReadModel, live: SandboxLive, tMs: number): void {
  if (tMs < SANDBOX_AS_OF * 1000) return;
  applyPrices(model, [], tMs, [], live.markets.statesAt(tMs, statedDebt(model, live)), live.ords);
}

/** What read models are loaded from: the market data and the sources' checkpoints. */
type ModelStore = MarketDataStore & Pick<SourceStore, 'listSources'>;

/** Which dataset live keys are served. */
export interface LiveModelOptions {
  /**
   * With a sources file: live keys are served the sources' (`live`) dataset only, never a
   * sandbox the store holds; until the store holds one, an empty model that says it has not been
   * read (`profile`: the profile the sources' datasets are written with).
   */
  sources?: { profile: string };
}

/**
 * Live and test read models. Test keys always get the fixed sandbox; when the live store holds
 * exactly that dataset the two share one model, otherwise the sandbox is generated in memory
 * on first use (`warm()` does it right after start-up, off the path to healthy). `reload()`
 * swaps in a new live model after the store's dataset changed (another process seeded, or the
 * sources' first dataset was written).
 */
export class ReadModels implements DataSource {
  private live: ReadModel;
  private sandbox: ReadModel | null;
  private readonly store: ModelStore;
  private readonly clock: Clock;
  private readonly sourcesOnly: boolean;
  private readonly simulations = new WeakMap<ReadModel, SandboxLive>();
  /** The tick under way: a tick asked for meanwhile waits for it, then steps its own instant. */
  private ticking: Promise<number> | null = null;
  /** The instant the last tick priced; a model loaded later is priced there before it serves. */
  private lastTickAt: number | null = null;

  private constructor(store: ModelStore, clock: Clock, live: ReadModel, sourcesOnly: boolean) {
    this.store = store;
    this.clock = clock;
    this.live = live;
    this.sourcesOnly = sourcesOnly;
    this.sandbox = isDefaultSandbox(live.dataset) ? live : null;
  }

  static async load(store: ModelStore, clock: Clock, options: LiveModelOptions = {}): Promise<ReadModels> {
    const { sources } = options;
    const stored =
      sources && (await store.datasetInfo())?.kind !== 'live'
        ? null
        : await loadReadModel(store, clock.now());
    if (stored && (!sources || stored.dataset.kind === 'live')) {
      setSourceClocks(stored, await store.listSources());
      return new ReadModels(store, clock, stored, !!sources);
    }
    if (!sources) throw new Error('the store holds no dataset: run `lrds seed` first');
    return new ReadModels(store, clock, unsyncedLiveModel(sources.profile, clock.now()), true);
  }

  get(mode: 'live' | 'test'): ReadModel {
    if (mode === 'live') return this.live;
    this.sandbox ??= sandboxReadModel(this.clock.now());
    return this.sandbox;
  }

  /** The model of a mode if it is built (never builds the test-key sandbox). */
  peek(mode: 'live' | 'test'): ReadModel | null {
    return mode === 'live' ? this.live : this.sandbox;
  }

  /** Builds the test-key sandbox now if it is not built yet. */
  warm(): void {
    this.get('test');
  }

  /**
   * One step of the living sandbox: every sandbox model (the live one when the store holds the
   * sandbox, and the test keys' one) gets the simulation's token prices at `nowMs`, markets and
   * positions together, and each oracle feed's latest simulated round (the served oracle
   * health). Prices and rounds are a function of the seed and the time only, so every process
   * shows the same market at the same instant, and a restart goes on where it stood. Returns
   * the models moved.
   */
  async tickSimulation(nowMs: number): Promise<number> {
    while (this.ticking) await this.ticking.catch(() => 0);
    const tick = this.#tick(nowMs);
    this.ticking = tick;
    try {
      return await tick;
    } finally {
      this.ticking = null;
    }
  }

  async #tick(nowMs: number): Promise<number> {
    this.lastTickAt = nowMs;
    let moved = 0;
    for (const model of new Set([this.live, this.sandbox])) {
      if (model?.dataset.kind !== 'sandbox') continue;
      if (nowMs < SIMULATION_START_MS) continue;
      let live = this.simulations.get(model);
      if (!live) {
        live = await sandboxLive(model, nowMs);
        this.simulations.set(model, live);
      }
      // From the warm-up on, the simulation's clocks are past the last step: no restate then
      // (the step states the markets at the positions it finds when it applies).
      live.stepping = true;
      try {
        await warmLive(live, nowMs);
        await stepSandbox(model, live, nowMs);
      } finally {
        live.stepping = false;
      }
      moved++;
    }
    return moved;
  }

  /**
   * Follows the store: reloads the live model if the dataset version moved on (another process
   * seeded, or the sources' first dataset was written), else applies the position changes
   * written since the model's (the change feed; no reload). With a sources file, a dataset
   * that is not the sources' is not served to live keys. Returns whether the model was reloaded.
   */
  async reloadIfChanged(): Promise<boolean> {
    const info = await this.store.datasetInfo();
    if (!info) return false;
    if (this.sourcesOnly && info.kind !== 'live') return false;
    // The chain blocks the data reflects move with the sources' checkpoints (a block may
    // bring no change); the sources are few, so they are read on every poll.
    const sources = await this.store.listSources();
    if (this.live.synced && info.version === this.live.dataset.version) {
      if (info.changeSeq > this.live.changeSeq) {
        await catchUpChanges(this.store, this.live, info.changeSeq);
        const live = this.simulations.get(this.live);
        // At the step applied last; a step under way states them itself when it applies (its
        // clocks are already past the last step's instant, which a restate would go back to).
        if (live && live.steppedAt !== null && !live.stepping)
          restateSandbox(this.live, live, live.steppedAt);
      }
      followDataset(this.live, info);
      setSourceClocks(this.live, sources);
      return false;
    }
    const next = await loadReadModel(this.store, this.clock.now());
    if (!next || (this.sourcesOnly && next.dataset.kind !== 'live')) return false;
    setSourceClocks(next, sources);
    // A living sandbox goes on where it stood: priced at the last tick before it serves.
    if (
      this.lastTickAt !== null &&
      next.dataset.kind === 'sandbox' &&
      this.lastTickAt >= SIMULATION_START_MS
    ) {
      const live = await sandboxLive(next, this.lastTickAt);
      this.simulations.set(next, live);
      await stepSandbox(next, live, this.lastTickAt);
    }
    const sharedSandbox = this.sandbox === this.live;
    this.live = next;
    if (isDefaultSandbox(next.dataset)) this.sandbox = next;
    else if (sharedSandbox) this.sandbox = null;
    return true;
  }
}
