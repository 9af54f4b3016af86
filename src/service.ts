/**
 * The composition root: settings in, a ready (not yet listening) service out. What it composes
 * lives in service/: the sandbox seed, the sources file's ingestion, the read models, the
 * sandbox's positions and history.
 */

import type { FastifyInstance } from 'fastify';
import type { Admission } from './access/admission.ts';
import { Idempotency } from './access/idempotency.ts';
import type { KeyEvents } from './access/key-events.ts';
import { KeyService } from './access/keys.ts';
import { loadTiers, type TierTable } from './access/tiers.ts';
import { ingestInterval, ingestLeaseMs, type Settings } from './config.ts';
import { RatingsJob } from './data/ratings-job.ts';
import { RedisPageSnapshots } from './data/redis-page-snapshots.ts';
import { ResearchJob } from './data/research-job.ts';
import { type Clock, systemClock } from './domain/clock.ts';
import { createEventsApi } from './events/api.ts';
import { DEFAULT_EVENT_RETENTION_DAYS, EventsLoop } from './events/loop.ts';
import { loadSecretsKey, SecretBox } from './events/secrets.ts';
import { buildApp } from './http/app.ts';
import type { ServerOptions } from './http/context.ts';
import { expectedPassMs, PassWatch } from './ingest/pass-watch.ts';
import { jobMetrics } from './jobs/metrics.ts';
import { JobRunner } from './jobs/runner.ts';
import { setMetricsSource } from './metrics.ts';
import { eventViews } from './queries/event-views.ts';
import { createAdmission, createKeyEvents } from './scale.ts';
import { HISTORY_CHECK_MS, historyFeed } from './service/history-feed.ts';
import { ReadModels } from './service/read-models.ts';
import { sandboxPositions } from './service/sandbox-positions.ts';
import { prepareDataset, sourcesPass, unreadWarning } from './service/sources.ts';
import { processHolder } from './store/lease-holder.ts';
import { openStore } from './store/open.ts';
import type { ProgressFn } from './store/ports/market-data.ts';
import type { Store } from './store/types.ts';

export { DEFAULT_SEED } from './ingest/sandbox/index.ts';
export { ReadModels, sandboxReadModel } from './service/read-models.ts';
export { seedStore } from './service/seed.ts';
export { openStore };

/** How often the research job looks for a day to digest (ms). */
const RESEARCH_CHECK_MS = 10_000;

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
  /**
   * Tells the background jobs to stop, closes the app (finishing requests in flight), writes the
   * usage counts still buffered, waits for the jobs to end (bounded: see HISTORY_STOP_MS), then
   * closes the store.
   */
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

/** The composition root: settings in, a ready (not yet listening) service out. */
export async function createService(settings: Settings, options: ServiceOptions = {}): Promise<Service> {
  const clock = options.clock ?? systemClock();
  const tiers = loadTiers(settings.tiersFile);
  const store = await openStore(settings, clock);
  const historyDays = settings.sandboxHistoryDays ?? 0;
  // The holder of this process's ingestion lease on the store (a sources file's passes).
  const ingestHolder = processHolder();
  const lease = { holder: ingestHolder, ms: ingestLeaseMs(settings) };
  const ingestion = await prepareDataset(store, settings, clock, lease, options);
  // With a sources file, live keys get its sources' dataset only (an empty model until one is read).
  const models = await ReadModels.load(
    store,
    clock,
    ingestion ? { sources: { profile: ingestion.live.LIVE_PROFILE } } : {},
  );
  // Set by close(): no new ingestion pass, no events loop started.
  let closing = false;
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
  // With it, each source's part as it stands (a first sync's log walks, the reads answered).
  const passWatch = new PassWatch(expectedPassMs(ingestInterval(settings)), (nowMs) =>
    (ingestion?.sources ?? []).flatMap((s) => s.progress?.(nowMs) ?? []),
  );
  // A first pass the start did not wait for runs from its start (the ingest job joins it).
  if (ingestion?.firstPass) passWatch.started(ingestion.firstPass.startedAt);
  // Risk events: matching (by the holder of the store's matching lease), delivery (every server,
  // each delivery claimed by one) and retention, in one loop; webhooks and streams for the app.
  const secrets = new SecretBox(loadSecretsKey(settings.webhookSecretsKey ?? null, settings.dataDir));
  const allowPrivate = settings.webhookAllowPrivate ?? false;
  const eventsLoop = new EventsLoop({
    store: store.events,
    history: store,
    models,
    views: eventViews,
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
    ...(ingestion ? { configuredSources: ingestion.sources } : {}),
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
  // The sources not read at start: one line, before the ready line (by the process that runs
  // the passes and logs their failures: one of several workers).
  const unread = (options.writesHistory ?? true) ? unreadWarning(ingestion) : null;
  if (unread) app.log.warn({ sources: ingestion?.unread.map((u) => u.source) }, unread);
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
    // Its liquidations wait for the next tick (their first look at the accounts is long on a
    // large dataset, and nothing is lost: a step covers the time since the last).
    await models
      .tickSimulation(Math.floor(clock.now() / tickMs) * tickMs)
      .catch((err: unknown) => log.warn({ err }, 'simulation tick failed'));
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
        run: async ({ signal }) => {
          historyRunning = true;
          try {
            // Stopping the runner ends the worker (within HISTORY_STOP_MS) and this run with it.
            await history.step(clock.now(), signal);
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
  // In-process ingestion of the sources file (in the process that writes history).
  const ingestPass = sourcesPass(ingestion, {
    store,
    clock,
    lease,
    passWatch,
    log: app.log,
    closing: () => closing,
  });
  const ingests = ingestion !== null && writesHistory;
  if (ingests)
    runner.add({
      name: 'ingest',
      everyMs: ingestInterval(settings),
      // At start only to join a first pass the start did not wait for (a long first sync), or to
      // go on with a sync under way.
      runAtStart: ingestion.firstPass !== null || ingestion.syncing,
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
      // Every background job is told to stop at once, none waiting behind another's run: the
      // runner's runs end at their next piece of work (an ingestion pass is not waited for),
      // the history worker within HISTORY_STOP_MS (terminated past it), ratings, research and
      // the liquidations' catch-up at their next pause.
      // A first pass still running in the background writes nothing more, nor claims the lease.
      ingestion?.firstPass?.stop();
      const jobsStopped = Promise.all([
        runner.stop(),
        history?.stop(),
        ratings.stop(),
        research?.stop(),
        eventsLoop.stop(),
        liquidations?.stop(),
      ]).then(async () => {
        if (ingestion) await store.releaseIngestion(ingestHolder).catch(() => undefined);
      });
      // Awaited below, after the counts are flushed (a rejection is not left unhandled meanwhile).
      jobsStopped.catch(() => undefined);
      await events.streams.close();
      await app.close();
      // After the app (no request is admitted any more), before waiting for the jobs: the
      // counts still buffered are written even if a job is slow to end.
      const flushed = admission.close();
      await Promise.allSettled([flushed, jobsStopped]);
      await keyEvents.close();
      await pageSnapshots?.close();
      try {
        await flushed;
        await jobsStopped;
      } finally {
        await store.close();
      }
    },
  };
}
