import type { FastifyInstance } from 'fastify';
import type { Admission } from './access/admission.ts';
import type { KeyEvents } from './access/key-events.ts';
import { KeyService } from './access/keys.ts';
import { loadTiers, type TierTable } from './access/tiers.ts';
import type { Settings } from './config.ts';
import { applyPrices, buildReadModel, loadReadModel, type ReadModel } from './data/read-model.ts';
import { type Clock, systemClock } from './domain/clock.ts';
import { buildApp } from './http/app.ts';
import type { DataSource } from './http/context.ts';
import { ingestOnce } from './ingest/runner.ts';
import { DEFAULT_SEED, generateSandbox, SANDBOX_AS_OF } from './ingest/sandbox/index.ts';
import { type SandboxPricer, sandboxPricer } from './ingest/sandbox/live.ts';
import { sandboxSource } from './ingest/sandbox/source.ts';
import { setMetricsSource } from './metrics.ts';
import { createAdmission, createKeyEvents } from './scale.ts';
import { openStore } from './store/open.ts';
import type { DatasetInfo, MarketDataStore, ProgressFn, Store } from './store/types.ts';

/** Generates a sandbox profile and writes it to the store, replacing the dataset. */
export { DEFAULT_SEED, openStore };

export async function seedStore(
  store: Store,
  profile: 'default' | 'large',
  seed: number = DEFAULT_SEED,
  onProgress?: ProgressFn,
  onlyIfEmpty = false,
  clock: Clock = systemClock(),
): Promise<DatasetInfo> {
  const run = await ingestOnce(sandboxSource(profile, seed), store, clock, { onProgress, onlyIfEmpty });
  if (!run.ok || !run.dataset)
    throw new Error(`seeding the sandbox failed: ${run.error ?? 'no dataset written'}`);
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
  };
  return buildReadModel(ds.markets, ds.positions(), info, nowMs);
}

/** The simulation's history starts a year before the snapshot; no price is defined earlier. */
const SIMULATION_START_MS = (SANDBOX_AS_OF - 365 * 86_400) * 1000;

function isDefaultSandbox(d: DatasetInfo): boolean {
  return d.kind === 'sandbox' && d.profile === 'default' && d.seed === DEFAULT_SEED;
}

/**
 * Live and test read models. Test keys always get the fixed sandbox; when the live store holds
 * exactly that dataset the two share one model, otherwise the sandbox is generated in memory
 * on first use (`warm()` does it right after start-up, off the path to healthy). `reload()`
 * swaps in a new live model after the store's dataset changed (another process seeded).
 */
export class ReadModels implements DataSource {
  private live: ReadModel;
  private sandbox: ReadModel | null;
  private readonly store: MarketDataStore;
  private readonly clock: Clock;
  private readonly pricers = new WeakMap<ReadModel, SandboxPricer>();
  private ticking = false;
  /** The instant the last tick priced; a model loaded later is priced there before it serves. */
  private lastTickAt: number | null = null;

  private constructor(store: MarketDataStore, clock: Clock, live: ReadModel) {
    this.store = store;
    this.clock = clock;
    this.live = live;
    this.sandbox = isDefaultSandbox(live.dataset) ? live : null;
  }

  static async load(store: MarketDataStore, clock: Clock): Promise<ReadModels> {
    const live = await loadReadModel(store, clock.now());
    if (!live) throw new Error('the store holds no dataset: run `lrds seed` first');
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
   * positions together. Prices are a function of the seed and the time only, so every process
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
        let pricer = this.pricers.get(model);
        if (!pricer) {
          pricer = sandboxPricer(model.catalog.baseRecords(), model.dataset.seed ?? DEFAULT_SEED);
          // Paths are built before the first move, a few at a time (no long event-loop stall).
          await pricer.warm(nowMs);
          this.pricers.set(model, pricer);
        }
        applyPrices(model, pricer.pricesAt(nowMs), nowMs);
        moved++;
      }
      return moved;
    } finally {
      this.ticking = false;
    }
  }

  /** Reloads the live model if the store's dataset version moved on. Returns whether it did. */
  async reloadIfChanged(): Promise<boolean> {
    const info = await this.store.datasetInfo();
    if (!info || info.version === this.live.dataset.version) return false;
    const next = await loadReadModel(this.store, this.clock.now());
    if (!next) return false;
    // A living sandbox goes on where it stood: priced at the last tick before it serves.
    if (
      this.lastTickAt !== null &&
      next.dataset.kind === 'sandbox' &&
      this.lastTickAt >= SIMULATION_START_MS
    ) {
      const pricer = sandboxPricer(next.catalog.baseRecords(), next.dataset.seed ?? DEFAULT_SEED);
      await pricer.warm(this.lastTickAt);
      this.pricers.set(next, pricer);
      applyPrices(next, pricer.pricesAt(this.lastTickAt), this.lastTickAt);
    }
    const sharedSandbox = this.sandbox === this.live;
    this.live = next;
    if (isDefaultSandbox(next.dataset)) this.sandbox = next;
    else if (sharedSandbox) this.sandbox = null;
    return true;
  }
}

export interface Service {
  app: FastifyInstance;
  store: Store;
  admission: Admission;
  keys: KeyService;
  keyEvents: KeyEvents;
  models: ReadModels;
  tiers: TierTable;
  /** Stops the background refreshers, closes the app (finishing requests in flight), then the store. */
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
}

/** The composition root: settings in, a ready (not yet listening) service out. */
export async function createService(settings: Settings, options: ServiceOptions = {}): Promise<Service> {
  const clock = options.clock ?? systemClock();
  const tiers = loadTiers(settings.tiersFile);
  const store = await openStore(settings, clock);
  if (!(await store.datasetInfo()))
    await seedStore(store, 'default', DEFAULT_SEED, options.onSeedProgress, true, clock);
  else await recordSandboxSource(store, clock);
  const models = await ReadModels.load(store, clock);
  const logger = options.logger ?? false;
  // Backends may warn before the app (and its logger) exists: such early warnings go to stderr.
  let appLog: FastifyInstance['log'] | null = null;
  const log = {
    warn: (obj: unknown, msg?: string) => {
      if (appLog) appLog.warn(obj, msg);
      else if (logger) process.stderr.write(`${msg ?? ''} ${JSON.stringify(obj)}\n`);
    },
  };
  const keyEvents = createKeyEvents(settings.redisUrl, log);
  const keys = new KeyService(store, { events: keyEvents, clock });
  await keys.refresh();
  // Catches up with the store's key changes; failing (store unreachable), it drops nothing.
  let refreshFailing = false;
  const refreshKeys = () =>
    keys.refresh().then(
      () => {
        if (refreshFailing) appLog?.info('key cache refresh works again');
        refreshFailing = false;
      },
      (err: unknown) => {
        if (!refreshFailing) {
          log.warn({ err }, 'key cache refresh failed: cached keys keep working until the store answers');
        }
        refreshFailing = true;
      },
    );
  await keyEvents.subscribe({
    changed: (hashes) => keys.invalidate(hashes),
    missed: () => void refreshKeys(),
  });
  const admission = createAdmission({
    redisUrl: settings.redisUrl,
    store,
    instances: settings.instances ?? options.workers ?? 1,
    logger: log,
  });
  const app = await buildApp({
    store,
    tiers,
    keys,
    admission,
    data: models,
    clock,
    logger: options.logger ?? false,
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
  // served here within a second. One reload at a time; a failing store is logged once.
  let reloading = false;
  let reloadFailing = false;
  const reloadData = async () => {
    if (reloading) return;
    reloading = true;
    try {
      if (await models.reloadIfChanged()) app.log.info('dataset changed in the store: read model reloaded');
      reloadFailing = false;
    } catch (err) {
      if (!reloadFailing)
        app.log.warn({ err }, 'dataset reload failed: serving the loaded data until the store answers');
      reloadFailing = true;
    } finally {
      reloading = false;
    }
  };
  // Ticks fall on multiples of tickMs since the epoch, and price that instant: every process
  // shows the same market (and the same ETags) between two ticks. A failure is logged once.
  const tickMs = settings.simulationTickMs ?? 0;
  let tickFailing = false;
  let tickTimer: NodeJS.Timeout | null = null;
  const tick = () =>
    models.tickSimulation(Math.floor(clock.now() / tickMs) * tickMs).then(
      () => {
        tickFailing = false;
      },
      (err) => {
        if (!tickFailing) app.log.warn({ err }, 'simulation tick failed');
        tickFailing = true;
      },
    );
  const scheduleTick = () => {
    const now = clock.now();
    const wait = Math.max(1, Math.floor(now / tickMs) * tickMs + tickMs - now);
    tickTimer = setTimeout(() => {
      void tick();
      scheduleTick();
    }, wait);
    tickTimer.unref();
  };
  if (tickMs > 0) {
    void tick();
    scheduleTick();
  }
  const timers = [
    setInterval(() => void refreshKeys(), options.keyRefreshMs ?? 250),
    setInterval(() => void reloadData(), options.datasetRefreshMs ?? 500),
  ];
  for (const t of timers) t.unref();

  return {
    app,
    store,
    admission,
    keys,
    keyEvents,
    models,
    tiers,
    async close() {
      for (const t of timers) clearInterval(t);
      if (tickTimer) clearTimeout(tickTimer);
      await app.close();
      await keyEvents.close();
      // after the app (no more requests), before the store: flushes counts still buffered
      await admission.close();
      await store.close();
    },
  };
}
