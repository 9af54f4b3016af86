import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { FastifyInstance } from 'fastify';
import type { Admission } from './access/admission.ts';
import { Idempotency } from './access/idempotency.ts';
import type { KeyEvents } from './access/key-events.ts';
import { KeyService } from './access/keys.ts';
import { loadTiers, type TierTable } from './access/tiers.ts';
import { ingestInterval, ingestLeaseMs, type Settings } from './config.ts';
import { RatingsJob } from './data/ratings-job.ts';
import {
  applyPrices,
  buildReadModel,
  catchUpChanges,
  loadReadModel,
  type ReadModel,
  setSourceClocks,
} from './data/read-model.ts';
import { RedisPageSnapshots } from './data/redis-page-snapshots.ts';
import { ResearchJob } from './data/research-job.ts';
import { type Clock, systemClock } from './domain/clock.ts';
import { createEventsApi } from './events/api.ts';
import { DEFAULT_EVENT_RETENTION_DAYS, EventsLoop } from './events/loop.ts';
import { loadSecretsKey, SecretBox } from './events/secrets.ts';
import { buildApp } from './http/app.ts';
import type { DataSource, ServerOptions } from './http/context.ts';
import type { Source } from './ingest/contract.ts';
import { expectedPassMs, PassWatch } from './ingest/pass-watch.ts';
import { ingestOnce } from './ingest/runner.ts';
import { ACTIVITY_SOURCE_ID, minuteOf, SandboxActivity } from './ingest/sandbox/activity.ts';
import { type SandboxFeedClock, sandboxFeedClock } from './ingest/sandbox/feeds.ts';
import {
  SandboxHistoryFeed,
  type SandboxMarketClock,
  sandboxMarketClock,
  sandboxSimulation,
} from './ingest/sandbox/history.ts';
import { DEFAULT_SEED, generateSandbox, SANDBOX_AS_OF } from './ingest/sandbox/index.ts';
import { LIQUIDATIONS_SOURCE_ID, SandboxLiquidator } from './ingest/sandbox/liquidator.ts';
import { type SandboxPricer, sandboxPricer } from './ingest/sandbox/live.ts';
import { sandboxSource } from './ingest/sandbox/source.ts';
import { HistoryWorker } from './jobs/history-job.ts';
import { jobMetrics } from './jobs/metrics.ts';
import { JobRunner } from './jobs/runner.ts';
import { setMetricsSource } from './metrics.ts';
import { createAdmission, createKeyEvents } from './scale.ts';
import { openStore } from './store/open.ts';
import type { DatasetInfo, MarketDataStore, ProgressFn, SourceStore, Store } from './store/types.ts';
import { StoreWriteError } from './store/write-health.ts';

/** Generates a sandbox profile and writes it to the store, replacing the dataset. */
export { DEFAULT_SEED, openStore };

export async function seedStore(
  store: Store,
  profile: 'default' | 'large',
  seed: number = DEFAULT_SEED,
  onProgress?: ProgressFn,
  onlyIfEmpty = false,
  clock: Clock = systemClock(),
  historyDays = 0,
): Promise<DatasetInfo> {
  // Progress: the positions written, then the markets whose history is written.
  let firstTotal = 0;
  const run = await ingestOnce(sandboxSource(profile, seed), store, clock, {
    onlyIfEmpty,
    onProgress: (done, total) => {
      firstTotal = total;
      onProgress?.(done, total + (historyDays > 0 ? total : 0));
    },
  });
  if (!run.ok || !run.dataset) {
    // A disk that refuses writes is the environment's problem, told as such (one line at start).
    const writes = store.writeProblem?.();
    if (writes) throw new StoreWriteError(writes.error, run.error);
    throw new Error(`seeding the sandbox failed: ${run.error ?? 'no dataset written'}`);
  }
  if (historyDays > 0 && run.dataset.kind === 'sandbox') {
    // The daily snapshots and liquidations of the history now; hourly rows follow in the
    // background once the service runs (SandboxHistoryFeed).
    const { profile: p, seed: s } = run.dataset;
    const sim = sandboxSimulation(p === 'large' ? 'large' : 'default', s ?? DEFAULT_SEED);
    const feed = new SandboxHistoryFeed(store, sim, { days: historyDays });
    await feed.advance(clock.now(), {
      baseOnly: true,
      onProgress: (done, total) =>
        onProgress?.(firstTotal + Math.round((done / Math.max(1, total)) * firstTotal), 2 * firstTotal),
    });
  }
  return run.dataset;
}

/**
 * A store seeded before sources were recorded holds a sandbox dataset and no checkpoint for it:
 * the checkpoint is written from the dataset's refresh time, so /health lists the source.
 */
async function recordSandboxSource(store: Store, clock: Clock): Promise<void> {
  const dataset = await store.datasetInfo();
  if (dataset?.kind !== 'sandbox') return;
  if ((await store.listSources()).some((s) => s.id === 'sandbox')) return;
  const chainIds = (await store.loadMarkets()).map((m) => m.chainId);
  await store.saveSource({
    id: 'sandbox',
    kind: 'simulation',
    chainIds: [...new Set(chainIds)].sort((a, b) => a - b),
    refreshedAt: dataset.refreshedAt,
    lastBlock: {},
    consecutiveFailures: 0,
    lastError: null,
    updatedAt: Math.floor(clock.now()),
    cursor: null,
  });
}

/** The fixed sandbox served to test keys (D10): the default profile with the default seed. */
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

/**
 * One step of a sandbox model: prices, the feeds' latest rounds and the markets' states
 * (interest, utilization, APYs) at tMs, applied together.
 */
function stepSandbox(model: ReadModel, live: SandboxLive, tMs: number): void {
  applyPrices(
    model,
    live.pricer.pricesAt(tMs),
    tMs,
    live.feeds.updatesAt(tMs),
    tMs >= SANDBOX_AS_OF * 1000 ? live.markets.statesAt(tMs, statedDebt(model, live)) : [],
  );
}

/** A sandbox market's borrowers are its positions: their debt as stated, summed, by market. */
function statedDebt(model: ReadModel, live: SandboxLive): (index: number) => number | null {
  return (i) => {
    const ord = live.ords[i]!;
    return ord < 0 ? null : model.risk.statedDebtOf(ord);
  };
}

/**
 * After positions changed (the change feed), the markets of a sandbox model are stated again
 * at the last tick: their borrow is their positions' debt (see SandboxMarketClock.statesAt).
 */
function restateSandbox(model: ReadModel, live: SandboxLive, tMs: number): void {
  if (tMs < SANDBOX_AS_OF * 1000) return;
  applyPrices(model, [], tMs, [], live.markets.statesAt(tMs, statedDebt(model, live)));
}

/** What read models are loaded from: the market data and the sources' checkpoints. */
type ModelStore = MarketDataStore & Pick<SourceStore, 'listSources'>;

/**
 * Live and test read models. Test keys always get the fixed sandbox; when the live store holds
 * exactly that dataset the two share one model, otherwise the sandbox is generated in memory
 * on first use (`warm()` does it right after start-up, off the path to healthy). `reload()`
 * swaps in a new live model after the store's dataset changed (another process seeded).
 */
export class ReadModels implements DataSource {
  private live: ReadModel;
  private sandbox: ReadModel | null;
  private readonly store: ModelStore;
  private readonly clock: Clock;
  private readonly simulations = new WeakMap<ReadModel, SandboxLive>();
  private ticking = false;
  /** The instant the last tick priced; a model loaded later is priced there before it serves. */
  private lastTickAt: number | null = null;

  private constructor(store: ModelStore, clock: Clock, live: ReadModel) {
    this.store = store;
    this.clock = clock;
    this.live = live;
    this.sandbox = isDefaultSandbox(live.dataset) ? live : null;
  }

  static async load(store: ModelStore, clock: Clock): Promise<ReadModels> {
    const live = await loadReadModel(store, clock.now());
    if (!live) throw new Error('the store holds no dataset: run `lrds seed` first');
    setSourceClocks(live, await store.listSources());
    return new ReadModels(store, clock, live);
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
    if (this.ticking) return 0;
    this.ticking = true;
    this.lastTickAt = nowMs;
    try {
      let moved = 0;
      for (const model of new Set([this.live, this.sandbox])) {
        if (model?.dataset.kind !== 'sandbox') continue;
        if (nowMs < SIMULATION_START_MS) continue;
        let live = this.simulations.get(model);
        if (!live) {
          live = await sandboxLive(model, nowMs);
          this.simulations.set(model, live);
        } else await warmLive(live, nowMs);
        stepSandbox(model, live, nowMs);
        moved++;
      }
      return moved;
    } finally {
      this.ticking = false;
    }
  }

  /**
   * Follows the store: reloads the live model if the dataset version moved on (another process
   * seeded), else applies the position changes written since the model's (the change feed; no
   * reload). Returns whether the model was reloaded.
   */
  async reloadIfChanged(): Promise<boolean> {
    const info = await this.store.datasetInfo();
    if (!info) return false;
    // The chain blocks the data reflects move with the sources' checkpoints (a block may
    // bring no change); the sources are few, so they are read on every poll.
    const sources = await this.store.listSources();
    if (info.version === this.live.dataset.version) {
      if (info.changeSeq > this.live.changeSeq) {
        await catchUpChanges(this.store, this.live, info.changeSeq);
        const live = this.simulations.get(this.live);
        if (live && this.lastTickAt !== null) restateSandbox(this.live, live, this.lastTickAt);
      }
      setSourceClocks(this.live, sources);
      return false;
    }
    const next = await loadReadModel(this.store, this.clock.now());
    if (!next) return false;
    setSourceClocks(next, sources);
    // A living sandbox goes on where it stood: priced at the last tick before it serves.
    if (
      this.lastTickAt !== null &&
      next.dataset.kind === 'sandbox' &&
      this.lastTickAt >= SIMULATION_START_MS
    ) {
      const live = await sandboxLive(next, this.lastTickAt);
      this.simulations.set(next, live);
      stepSandbox(next, live, this.lastTickAt);
    }
    const sharedSandbox = this.sandbox === this.live;
    this.live = next;
    if (isDefaultSandbox(next.dataset)) this.sandbox = next;
    else if (sharedSandbox) this.sandbox = null;
    return true;
  }
}

/**
 * The sandbox's positions while it runs, written by the process that writes the history, after
 * each simulation tick, one step at a time, for the sandbox dataset the live model serves:
 * first the liquidations the tick's prices call for (SandboxLiquidator, source
 * LIQUIDATIONS_SOURCE_ID), then the openings and closings of the whole minutes since the last
 * step (SandboxActivity, source ACTIVITY_SOURCE_ID, whose checkpoint cursor is the last minute
 * written, so a restart goes on from there). Both checkpoints show in /health: last step that
 * changed something, failures and the last error. A failure is logged once until a step
 * succeeds, and retried at the next tick.
 */
function sandboxPositions(store: Store, clock: Clock, log: FastifyInstance['log']) {
  let current: { key: string; liquidator: SandboxLiquidator; activity: SandboxActivity } | null = null;
  let running: Promise<void> | null = null;
  /** Consecutive failures of each part (its checkpoint shows them). */
  const failures = new Map<string, number>([
    [LIQUIDATIONS_SOURCE_ID, 0],
    [ACTIVITY_SOURCE_ID, 0],
  ]);
  /** The part of the step running (its checkpoint takes a failure). */
  let stage = LIQUIDATIONS_SOURCE_ID;
  /** The last minute of openings and closings written, and for which dataset version. */
  let written: { version: number; minute: number } | null = null;
  const save = async (id: string, model: ReadModel, error: string | null, refreshed: boolean) => {
    const previous = (await store.listSources()).find((x) => x.id === id);
    const now = Math.floor(clock.now());
    const cursor =
      id === ACTIVITY_SOURCE_ID && written
        ? `${written.version}:${written.minute}`
        : (previous?.cursor ?? null);
    await store.saveSource({
      id,
      kind: 'simulation',
      chainIds: [...new Set(model.catalog.baseRecords().map((m) => m.chainId))].sort((a, b) => a - b),
      refreshedAt: refreshed ? now : (previous?.refreshedAt ?? null),
      lastBlock: {},
      consecutiveFailures: failures.get(id) ?? 0,
      lastError: error,
      updatedAt: now,
      cursor,
    });
  };
  /** The last minute written for this dataset: from memory, or the checkpoint after a start. */
  const lastMinute = async (model: ReadModel): Promise<number | null> => {
    const version = model.dataset.version;
    if (written?.version !== version) {
      const cursor = (await store.listSources()).find((x) => x.id === ACTIVITY_SOURCE_ID)?.cursor;
      const [v, minute] = (cursor ?? '').split(':').map(Number);
      written = v === version && Number.isSafeInteger(minute) ? { version, minute: minute! } : null;
    }
    return written?.minute ?? null;
  };
  /** A part succeeded: its failures reset (and its checkpoint is saved if it had failed). */
  const succeeded = (id: string): boolean => {
    const recovered = (failures.get(id) ?? 0) > 0;
    failures.set(id, 0);
    return recovered;
  };
  const run = async (model: ReadModel, atMs: number, parts: NonNullable<typeof current>) => {
    stage = LIQUIDATIONS_SOURCE_ID;
    const liquidated = await parts.liquidator.step(model, atMs);
    const some = liquidated.events.length > 0;
    if (succeeded(LIQUIDATIONS_SOURCE_ID) || some) await save(LIQUIDATIONS_SOURCE_ID, model, null, some);
    if (some)
      log.info(
        { liquidations: liquidated.events.length, applied: liquidated.applied },
        'sandbox liquidations',
      );
    stage = ACTIVITY_SOURCE_ID;
    const to = minuteOf(atMs);
    const after = (await lastMinute(model)) ?? to - 1;
    if (to <= after) return;
    const changes = parts.activity.plan(model, after, to);
    if (changes.length > 0)
      await store.applyPositionChanges(ACTIVITY_SOURCE_ID, changes, model.dataset.version);
    written = { version: model.dataset.version, minute: to };
    succeeded(ACTIVITY_SOURCE_ID);
    await save(ACTIVITY_SOURCE_ID, model, null, true);
  };
  return {
    step(model: ReadModel | null, atMs: number): Promise<void> {
      if (running || model?.dataset.kind !== 'sandbox') return running ?? Promise.resolve();
      const profile = model.dataset.profile === 'large' ? 'large' : 'default';
      const seed = model.dataset.seed ?? DEFAULT_SEED;
      const key = `${profile}:${seed}`;
      if (current?.key !== key)
        current = {
          key,
          liquidator: new SandboxLiquidator(store, profile, seed),
          activity: new SandboxActivity(seed, sandboxSimulation(profile, seed).windDowns),
        };
      running = run(model, atMs, current)
        .catch(async (err: unknown) => {
          const failed = stage;
          const n = (failures.get(failed) ?? 0) + 1;
          failures.set(failed, n);
          if (n === 1)
            log.warn({ err, source: failed }, 'sandbox positions step failed: retried at the next tick');
          const message = err instanceof Error ? err.message : String(err);
          await save(failed, model, message, false).catch(() => {});
        })
        .finally(() => {
          running = null;
        });
      return running;
    },
    /** Waits for the step in progress, if any. */
    idle: () => running ?? Promise.resolve(),
  };
}

/** How often the history feed looks for an hour to write (it writes once per hour ended). */
const HISTORY_CHECK_MS = 60_000;
/** How often the research job looks for a day to digest (ms). */
const RESEARCH_CHECK_MS = 10_000;

/**
 * The sandbox history feed while the store holds a sandbox dataset, as a job's run: one step
 * for the dataset the live model serves, in a worker thread with its own store connection
 * (src/jobs/history-job.ts; a reseed by another process switches the worker to the new dataset,
 * or ends it for one that is not a sandbox). Returns the step and the end of the worker.
 */
function historyFeed(
  settings: Pick<Settings, 'dataDir' | 'databaseUrl'>,
  current: () => DatasetInfo | null,
  log: FastifyInstance['log'],
  options: {
    days: number;
    hourlyDays?: number;
    retentionDays: number | null;
    /** Called once a dataset's hourly history (prices among it) is backfilled. */
    onBackfilled?: () => void;
  },
): { step(nowMs: number): Promise<void>; stop(): Promise<void> } {
  let feed: { key: string; worker: HistoryWorker } | null = null;
  const workerFor = async (dataset: DatasetInfo | null): Promise<HistoryWorker | null> => {
    const key =
      dataset?.kind === 'sandbox'
        ? `${dataset.profile === 'large' ? 'large' : 'default'}:${dataset.seed ?? DEFAULT_SEED}`
        : null;
    if (feed && feed.key !== key) {
      await feed.worker.stop();
      feed = null;
    }
    if (!key || !dataset) return null;
    feed ??= {
      key,
      worker: new HistoryWorker(
        {
          dataDir: settings.dataDir,
          databaseUrl: settings.databaseUrl ?? null,
          profile: dataset.profile === 'large' ? 'large' : 'default',
          seed: dataset.seed ?? DEFAULT_SEED,
          days: options.days,
          ...(options.hourlyDays !== undefined ? { hourlyDays: options.hourlyDays } : {}),
          retentionDays: options.retentionDays,
        },
        options.onBackfilled,
      ),
    };
    return feed.worker;
  };
  return {
    async step(nowMs: number) {
      const worker = await workerFor(current());
      if (!worker) return;
      const w = await worker.advance(nowMs);
      if (w.hourlySnapshots + w.assetPrices > 0) log.info(w, 'sandbox history written');
    },
    async stop() {
      await feed?.worker.stop();
      feed = null;
    },
  };
}

export interface Service {
  app: FastifyInstance;
  store: Store;
  admission: Admission;
  keys: KeyService;
  keyEvents: KeyEvents;
  models: ReadModels;
  tiers: TierTable;
  /** The ratings job: the latest ratings of each model, rated at start-up, daily and per new model. */
  ratings: RatingsJob;
  /** The risk events' matching, delivery and retention (running once the app is ready). */
  events: EventsLoop;
  /**
   * One step of the living sandbox at `atMs`, as the tick timer runs it: prices and feeds move,
   * then (in the process that writes the history) what they call for is liquidated and written
   * to the store, which every model applies from its change feed. Resolves once both are done.
   */
  stepSimulation(atMs: number): Promise<void>;
  /**
   * One ingestion pass over the sources file's sources, as the timer runs it (nothing without a
   * sources file); the pass already running, if any, is joined.
   */
  ingest(): Promise<void>;
  /** The background jobs (src/jobs/runner.ts); other parts of the service register theirs here. */
  jobs: JobRunner;
  /** Stops the background jobs, closes the app (finishing requests in flight), then the store. */
  close(): Promise<void>;
}

export interface ServiceOptions {
  clock?: Clock;
  logger?: boolean | Record<string, unknown>;
  /** How often key changes and dataset changes made by other processes are picked up. */
  keyRefreshMs?: number;
  datasetRefreshMs?: number;
  onSeedProgress?: ProgressFn;
  /** Workers of this process (lrds serve --workers), the default for settings.instances. */
  workers?: number;
  /** Whether this process keeps the sandbox history up to date (one worker of several does). Default true. */
  writesHistory?: boolean;
  /** Socket timeouts and overload protection (SERVER_DEFAULTS otherwise). */
  server?: ServerOptions;
}

/** The service cannot start on its sources: none could be read (a problem of the environment, not a bug). */
export class SourcesUnavailableError extends Error {
  override name = 'SourcesUnavailableError';
}

/** The composition root: settings in, a ready (not yet listening) service out. */
export async function createService(settings: Settings, options: ServiceOptions = {}): Promise<Service> {
  const clock = options.clock ?? systemClock();
  const tiers = loadTiers(settings.tiersFile);
  const store = await openStore(settings, clock);
  const historyDays = settings.sandboxHistoryDays ?? 0;
  // With a sources file, live keys are served those sources only (D15): a store without their
  // data gets a first pass now, by the server that takes the ingestion lease (the others wait
  // for its dataset; the service does not start on data it cannot state); without one, the
  // sandbox is seeded on first start.
  // (viem and the adapters are loaded only then.)
  const ingestHolder = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const lease = { holder: ingestHolder, ms: ingestLeaseMs(settings) };
  const live = settings.sourcesFile ? await import('./ingest/live.ts') : null;
  let sources: Source[] | null = null;
  if (settings.sourcesFile) {
    const chain = await import('./ingest/chain/index.ts');
    sources = chain.configuredSources(chain.loadSourcesFile(settings.sourcesFile));
    // Until the sources' first dataset is in the store: read them, or wait for the server that
    // holds the lease (and take over if it stops).
    for (let waited = 0; (await store.datasetInfo())?.kind !== 'live'; waited += 500) {
      const pass = await live!.ingestWithLease(sources, store, clock, lease);
      if (pass?.written && !pass.dataset) {
        await store.releaseIngestion(ingestHolder);
        throw new SourcesUnavailableError(
          `no source of ${settings.sourcesFile} could be read: ${pass.runs.map((r) => `${r.source}: ${r.error}`).join('; ')}`,
        );
      }
      if (pass) continue;
      if (waited % 30_000 === 0 && options.logger)
        process.stderr.write(
          `waiting for the server that holds the ingestion lease to read ${settings.sourcesFile}\n`,
        );
      await new Promise((r) => setTimeout(r, 500));
    }
    // A process that does not run the passes (a worker other than the first) lets the lease go.
    if (!(options.writesHistory ?? true)) await store.releaseIngestion(ingestHolder);
  } else if (!(await store.datasetInfo()))
    // The dataset only: its history (a year of daily snapshots and liquidations, then the
    // hourly backfill) is written by the history feed in the background, after start.
    await seedStore(store, 'default', DEFAULT_SEED, options.onSeedProgress, true, clock, 0);
  else await recordSandboxSource(store, clock);
  const models = await ReadModels.load(store, clock);
  const logger = options.logger ?? false;
  // Backends may warn before the app (and its logger) exists: such early warnings go to stderr.
  let appLog: FastifyInstance['log'] | null = null;
  const early = (obj: unknown, msg?: string) => {
    if (logger) process.stderr.write(`${msg ?? ''} ${JSON.stringify(obj)}\n`);
  };
  const log = {
    warn: (obj: unknown, msg?: string) => (appLog ? appLog.warn(obj, msg) : early(obj, msg)),
    info: (obj: unknown, msg?: string) => (appLog ? appLog.info(obj, msg) : early(obj, msg)),
  };
  // The store's writes failing (a full disk) and working again: one line each, not one per write.
  store.watchWrites?.((problem) => {
    if (problem)
      log.warn(
        { error: problem.error },
        'store writes failing: serving goes on, counts wait in memory, key changes get 503 until the store writes again',
      );
    else log.info({}, 'store writes work again');
  });
  const keyEvents = createKeyEvents(settings.redisUrl, log);
  const keys = new KeyService(store, { events: keyEvents, clock });
  await keys.refresh();
  // The background jobs (src/jobs/runner.ts): logged through the app's logger once it exists.
  const runner = new JobRunner({
    clock,
    log: {
      warn: (obj, msg) => log.warn(obj, msg),
      info: (obj, msg) => appLog?.info(obj, msg),
    },
    metrics: jobMetrics(),
  });
  // Catches up with the store's key changes; failing (store unreachable), it drops nothing.
  runner.add({
    name: 'key-refresh',
    everyMs: options.keyRefreshMs ?? 250,
    runAtStart: false,
    run: () => keys.refresh(),
    failureMessage: 'key cache refresh failed: cached keys keep working until the store answers',
    recoveredMessage: 'key cache refresh works again',
  });
  await keyEvents.subscribe({
    changed: (hashes) => keys.invalidate(hashes),
    missed: () => void runner.runNow('key-refresh'),
  });
  // Instances sharing the traffic share the sets paged lists took (a later page may reach any of them).
  const pageSnapshots = settings.redisUrl === null ? null : new RedisPageSnapshots(settings.redisUrl);
  const admission = createAdmission({
    redisUrl: settings.redisUrl,
    store,
    instances: settings.instances ?? options.workers ?? 1,
    logger: log,
  });
  // Ratings are computed by a job, never per request: every model when first seen (start-up, a
  // reloaded dataset, the test keys' sandbox once built), then daily at 00:00 UTC of `clock`;
  // the process that writes history records their changes in the store. A failed run is
  // reported to the runner (logged once until a run succeeds) and retried after a minute.
  let ratingsError: unknown = null;
  const ratings = new RatingsJob({
    models: () => [models.peek('live'), models.peek('test')],
    store,
    clock,
    writes: options.writesHistory ?? true,
    ...(settings.ratingSizeFloorUsd !== undefined ? { sizeFloorUsd: settings.ratingSizeFloorUsd } : {}),
    onError: (err) => {
      ratingsError = err;
    },
    onRated: (info) => appLog?.info(info, 'ratings computed'),
  });
  // The pass running here, shown by /health while it runs (and as overdue past its expected time).
  const passWatch = new PassWatch(expectedPassMs(ingestInterval(settings)));
  // Risk events: matching (by the holder of the store's matching lease), delivery (every server,
  // each delivery claimed by one) and retention, in one loop; webhooks and streams for the app.
  const secrets = new SecretBox(loadSecretsKey(settings.webhookSecretsKey ?? null, settings.dataDir));
  const allowPrivate = settings.webhookAllowPrivate ?? false;
  const eventsLoop = new EventsLoop({
    store: store.events,
    history: store,
    models,
    clock,
    secrets,
    holder: ingestHolder,
    allowPrivate,
    retentionMs: (settings.eventRetentionDays ?? DEFAULT_EVENT_RETENTION_DAYS) * 86_400_000,
    log,
    onError: (err) =>
      log.warn({ err }, 'webhook delivery outcome not written: retried once its claim lapses'),
  });
  const events = createEventsApi({
    store: store.events,
    secrets,
    clock,
    allowPrivate,
    kick: () => eventsLoop.kick(),
    onError: (err) => log.warn({ err }, 'event stream poll failed: retried'),
  });
  const app = await buildApp({
    ingestion: (nowMs) => passWatch.state(nowMs),
    store,
    tiers,
    keys,
    admission,
    idempotency: new Idempotency(store, clock),
    data: models,
    ...(pageSnapshots ? { pageSnapshots } : {}),
    history: store,
    ratings,
    events,
    clock,
    logger: options.logger ?? false,
    server: {
      ...(settings.trustProxy === undefined ? {} : { trustProxy: settings.trustProxy }),
      ...(settings.anonymousRatePerSecond === undefined
        ? {}
        : {
            anonymous:
              settings.anonymousRatePerSecond === 0
                ? false
                : { ratePerSecond: settings.anonymousRatePerSecond, burst: settings.anonymousBurst ?? 30 },
          }),
      ...options.server,
    },
    backgroundWork: runner,
  });
  appLog = app.log;
  setMetricsSource({
    sizes: () =>
      (['live', 'test'] as const).flatMap((mode) => {
        const d = models.peek(mode)?.dataset;
        return d ? [{ mode, markets: d.marketCount, positions: d.positionCount }] : [];
      }),
    sourceAges: async () => {
      const now = clock.now();
      return (await store.listSources()).map((s) => ({
        id: s.id,
        ageSeconds: s.refreshedAt === null ? null : Math.max(0, (now - s.refreshedAt) / 1000),
      }));
    },
  });

  // The store's dataset version is read every 500 ms (one row): another process's seed is
  // served here within a second.
  runner.add({
    name: 'dataset-follow',
    everyMs: options.datasetRefreshMs ?? 500,
    runAtStart: false,
    run: async () => {
      if (await models.reloadIfChanged()) app.log.info('dataset changed in the store: read model reloaded');
    },
    failureMessage: 'dataset reload failed: serving the loaded data until the store answers',
    recoveredMessage: 'dataset reload works again',
  });
  // Ticks fall on multiples of tickMs since the epoch, and price that instant: every process
  // shows the same market (and the same ETags) between two ticks.
  const tickMs = settings.simulationTickMs ?? 0;
  // The process that writes the history also liquidates what each tick's prices call for, and
  // opens and closes positions (its own failures are logged once and kept in its checkpoints).
  const liquidations = (options.writesHistory ?? true) ? sandboxPositions(store, clock, app.log) : null;
  const tick = async (at: number) => {
    await models.tickSimulation(at);
    void liquidations?.step(models.peek('live'), at);
  };
  if (tickMs > 0) {
    // The first step before the service is handed out: a (re)start serves the market where the
    // simulation stands, never the seed's snapshot prices for the seconds the paths take to build.
    await tick(Math.floor(clock.now() / tickMs) * tickMs).catch((err: unknown) =>
      log.warn({ err }, 'simulation tick failed'),
    );
    runner.add({
      name: 'simulation',
      everyMs: tickMs,
      aligned: true,
      runAtStart: false,
      run: ({ dueAt }) => tick(Math.floor(dueAt / tickMs) * tickMs),
      failureMessage: 'simulation tick failed',
      recoveredMessage: 'simulation ticks work again',
    });
  }
  // The first ratings once the app is ready (not while its routes compile, which holds the event
  // loop for seconds), in the background: the ratings routes answer 503 (Retry-After) for the few
  // seconds they take on the large profile. Then every second: whether a model needs rating
  // (new, a 00:00 UTC passed, history backfilled).
  app.addHook('onReady', async () => {
    runner.add({
      name: 'ratings',
      everyMs: 1000,
      run: async () => {
        ratingsError = null;
        await ratings.runDue();
        if (ratingsError) throw ratingsError;
      },
      failureMessage: 'ratings run failed: retried in a minute',
      recoveredMessage: 'ratings work again',
    });
    // Risk events: matched and delivered by their own loop (start/stop, an injected clock).
    if (!closing) eventsLoop.start();
  });
  const writesHistory = options.writesHistory ?? true;
  // The sandbox history: the backfill after the seed, then the hour just ended, every hour; in
  // a worker thread. A failure is retried after 1, 2, 4 ... 60 minutes.
  let historyRunning = false;
  const history =
    writesHistory && historyDays > 0
      ? historyFeed(settings, () => models.peek('live')?.dataset ?? null, app.log, {
          days: historyDays,
          ...(settings.sandboxHourlyHistoryDays !== undefined
            ? { hourlyDays: settings.sandboxHourlyHistoryDays }
            : {}),
          retentionDays: settings.historyRetentionDays ?? null,
          // The ratings read the price history: rated again once it is backfilled.
          onBackfilled: () => ratings.historyWritten(),
        })
      : null;
  // Registered once the app is ready (its routes compiled): the worker's start (building the
  // simulation) does not compete with the path to healthy.
  if (history)
    app.addHook('onReady', async () =>
      runner.add({
        name: 'history',
        everyMs: HISTORY_CHECK_MS,
        backoff: { initialMs: 60_000, maxMs: 3_600_000 },
        offLoop: true,
        run: async () => {
          historyRunning = true;
          try {
            await history.step(clock.now());
          } finally {
            historyRunning = false;
          }
        },
        failureMessage: 'sandbox history step failed: retried with backoff',
        recoveredMessage: 'sandbox history writes work again',
      }),
    );
  // The research digests: written by the process that writes history, once a day is over and
  // the history feed is not writing (a backfill is not complete yet).
  let researchError: unknown = null;
  const research = writesHistory
    ? new ResearchJob({
        model: () => models.peek('live'),
        store,
        clock,
        busy: () => historyRunning,
        onError: (err) => {
          researchError = err;
        },
        onWritten: (info) => appLog?.info(info, 'research digests written'),
      })
    : null;
  if (research)
    runner.add({
      name: 'research',
      everyMs: RESEARCH_CHECK_MS,
      runAtStart: false,
      run: async () => {
        researchError = null;
        await research.runDue();
        if (researchError) throw researchError;
      },
      failureMessage: 'research digests failed: retried in a minute',
      recoveredMessage: 'research digests work again',
    });
  // In-process ingestion of the sources file (in the process that writes history): a pass every
  // INGEST_INTERVAL_MS by the server that holds the store's ingestion lease (several servers on
  // one store elect one ingester; another takes over once its lease expires, or at once when it
  // shuts down); the models of every server follow the dataset within a second.
  let closing = false;
  const failing = new Set<string>();
  const itemsNotRead = new Map<string, string>();
  const itemsInPart = new Map<string, string>();
  const ingestPass = async (): Promise<void> => {
    if (!sources || closing) return;
    // Shown by /health while it runs (and as overdue past its expected time).
    passWatch.started(clock.now());
    try {
      await live!.ingestWithLease(sources, store, clock, lease, {
        onSource: (run) => {
          if (!run.ok && !failing.has(run.source))
            app.log.warn(
              { source: run.source, error: run.error },
              'source failed: its last data is served, aging',
            );
          if (run.ok && failing.has(run.source)) app.log.info({ source: run.source }, 'source read again');
          if (run.ok) failing.delete(run.source);
          else failing.add(run.source);
          if (!run.ok) return;
          // Items a pass could not read or price (served from their last data, or not at all),
          // and items served in part (a market without a USD price, D15): logged when they change.
          const logChanged = (seen: Map<string, string>, lines: string[], msg: string) => {
            const key = lines.join('\n');
            if (key === (seen.get(run.source) ?? '')) return;
            seen.set(run.source, key);
            if (lines.length > 0)
              app.log.warn({ source: run.source, count: lines.length, first: lines.slice(0, 5) }, msg);
          };
          logChanged(
            itemsNotRead,
            run.items.flatMap((i) => (i.ok ? [] : [i.error])),
            'items not read',
          );
          logChanged(
            itemsInPart,
            run.items.flatMap((i) => (i.ok && i.note ? [i.note] : [])),
            'items served in part',
          );
        },
      });
    } finally {
      passWatch.ended();
    }
  };
  const ingests = Boolean(sources && writesHistory);
  if (ingests)
    runner.add({
      name: 'ingest',
      everyMs: ingestInterval(settings),
      runAtStart: false,
      offLoop: true,
      run: ingestPass,
      failureMessage: 'ingestion pass failed: retried at the next one',
      recoveredMessage: 'ingestion passes work again',
    });
  runner.start();

  return {
    app,
    store,
    admission,
    keys,
    keyEvents,
    models,
    tiers,
    ratings,
    jobs: runner,
    // A pass the runner already runs is joined.
    ingest: () => (ingests ? runner.runNow('ingest') : ingestPass().catch(() => undefined)),
    events: eventsLoop,
    async stepSimulation(atMs: number) {
      await models.tickSimulation(atMs);
      await liquidations?.step(models.peek('live'), atMs);
    },
    async close() {
      closing = true;
      await runner.stop();
      await history?.stop();
      if (sources) await store.releaseIngestion(ingestHolder).catch(() => undefined);
      await liquidations?.idle();
      await ratings.stop();
      await research?.stop();
      await eventsLoop.stop();
      await events.streams.close();
      await app.close();
      await keyEvents.close();
      await pageSnapshots?.close();
      // after the app (no more requests), before the store: flushes counts still buffered
      await admission.close();
      await store.close();
    },
  };
}
