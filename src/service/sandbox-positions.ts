import type { FastifyInstance } from 'fastify';
import type { ReadModel } from '../data/read-model.ts';
import type { Clock } from '../domain/clock.ts';
import { ACTIVITY_SOURCE_ID, minuteOf, SandboxActivity } from '../ingest/sandbox/activity.ts';
import { sandboxSimulation } from '../ingest/sandbox/history.ts';
import { DEFAULT_SEED } from '../ingest/sandbox/index.ts';
import { LIQUIDATIONS_SOURCE_ID, SandboxLiquidator } from '../ingest/sandbox/liquidator.ts';
import type { Store } from '../store/types.ts';

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
/** A liquidation step over a window longer than this (ms) is a catch-up, and is logged as one. */
const CATCH_UP_MS = 60_000;

export function sandboxPositions(store: Store, clock: Clock, log: FastifyInstance['log']) {
  let current: { key: string; liquidator: SandboxLiquidator; activity: SandboxActivity } | null = null;
  let running: Promise<void> | null = null;
  // Aborted by stop(): the step under way ends at its next piece of work, none starts.
  const stopping = new AbortController();
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
      chainIds: [...model.catalog.chainIds],
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
      written =
        v === version && minute !== undefined && Number.isSafeInteger(minute) ? { version, minute } : null;
    }
    return written?.minute ?? null;
  };
  /** A part succeeded: its failures reset (and its checkpoint is saved if it had failed). */
  const succeeded = (id: string): boolean => {
    const recovered = (failures.get(id) ?? 0) > 0;
    failures.set(id, 0);
    return recovered;
  };
  /** The catch-up under way (steps over a window longer than CATCH_UP_MS, cut by the cap per step). */
  let catchUp: { fromMs: number; steps: number; liquidations: number; startedMs: number } | null = null;
  /** The model and instant of the last tick (a catch-up's next step works at them). */
  let latest: { model: ReadModel; atMs: number } | null = null;
  const run = async (first: ReadModel, firstMs: number, parts: NonNullable<typeof current>) => {
    let model = first;
    let atMs = firstMs;
    stage = LIQUIDATIONS_SOURCE_ID;
    const started = performance.now();
    // A catch-up's steps follow one another at once (each yields to the event loop as it
    // computes), not one per tick: the whole window is taken in a few seconds of CPU.
    for (let chained = false; ; chained = true) {
      if (chained) {
        // The next step of a catch-up: after the event loop's other work (timers, the change
        // feed, ticks), at the last tick; never on a dataset replaced meanwhile.
        await new Promise((resolve) => setImmediate(resolve));
        if (stopping.signal.aborted) return;
        if (latest && latest.model.dataset.version !== first.dataset.version) {
          catchUp = null;
          return;
        }
        if (latest) ({ model, atMs } = latest);
      }
      const liquidated = await parts.liquidator.step(model, atMs, stopping.signal);
      if (stopping.signal.aborted) return;
      const some = liquidated.events.length > 0;
      if (succeeded(LIQUIDATIONS_SOURCE_ID) || some) await save(LIQUIDATIONS_SOURCE_ID, model, null, some);
      if (some)
        log.info(
          {
            liquidations: liquidated.events.length,
            applied: liquidated.applied,
            complete: liquidated.complete,
          },
          'sandbox liquidations',
        );
      if (atMs - liquidated.fromMs <= CATCH_UP_MS) break;
      // A catch-up (the first start, a restart): said once it has taken everything due, with
      // the window it covered, so operators (and bench/large-start.ts) see when it ended.
      catchUp ??= { fromMs: liquidated.fromMs, steps: 0, liquidations: 0, startedMs: started };
      catchUp.steps++;
      catchUp.liquidations += liquidated.events.length;
      // Nothing could be taken yet (changes the model does not show): the next tick goes on.
      if (!liquidated.complete) {
        if (liquidated.took > 0) continue;
        break;
      }
      log.info(
        {
          from: new Date(catchUp.fromMs).toISOString(),
          to: new Date(atMs).toISOString(),
          steps: catchUp.steps,
          liquidations: catchUp.liquidations,
          ms: Math.round(performance.now() - catchUp.startedMs),
        },
        'sandbox liquidations caught up',
      );
      catchUp = null;
      break;
    }
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
      if (model?.dataset.kind === 'sandbox') latest = { model, atMs };
      if (running || stopping.signal.aborted || model?.dataset.kind !== 'sandbox')
        return running ?? Promise.resolve();
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
    /** Stops: the step in progress ends at its next piece of work (nothing it had not written is), none starts. */
    stop(): Promise<void> {
      stopping.abort();
      return running ?? Promise.resolve();
    },
  };
}
