/**
 * The service's sources file (SOURCES_FILE): the first dataset at start-up, then the passes
 * run in process.
 */

import type { FastifyInstance } from 'fastify';
import { DEFAULT_FIRST_PASS_WAIT_MS, ingestInterval, type Settings } from '../config.ts';
import type { Clock } from '../domain/clock.ts';
import type { Source } from '../ingest/contract.ts';
import type { IngestLease, LivePass, SourceRun } from '../ingest/live.ts';
import { expectedPassMs, type PassWatch } from '../ingest/pass-watch.ts';
import { DEFAULT_SEED } from '../ingest/sandbox/index.ts';
import type { ProgressFn } from '../store/ports/market-data.ts';
import type { Store } from '../store/types.ts';
import { recordSandboxSource, seedStore } from './seed.ts';

/** A sources file's sources, and the module that runs their passes (loaded only with a sources file). */
export interface SourcesIngestion {
  sources: Source[];
  live: typeof import('../ingest/live.ts');
  /**
   * The sources not read when the service started (their last pass failed, or none has run
   * yet), each with its last error: named by the start-up warning.
   */
  unread: { source: string; error: string | null; everRead: boolean }[];
  /**
   * The first pass, when it was still running once the start had waited FIRST_PASS_WAIT_MS:
   * it goes on in the background, and the in-process passes join it (null otherwise).
   */
  firstPass: { pass: Promise<LivePass | null>; startedAt: number; stop(): void } | null;
  /** A source of the file was syncing when the service started: its passes go on at once. */
  syncing: boolean;
}

/**
 * A dataset to serve, in the store before the service starts; returns the sources file's
 * ingestion (null without one).
 */
export async function prepareDataset(
  store: Store,
  settings: Settings,
  clock: Clock,
  lease: IngestLease,
  options: { logger?: unknown; writesHistory?: boolean; onSeedProgress?: ProgressFn },
): Promise<SourcesIngestion | null> {
  // With a sources file, live keys are served those sources only (docs/decisions.md "Real
  // sources"): a store without their data gets a first pass now, by the server that takes the
  // ingestion lease (the others wait for its dataset); without one, the sandbox is seeded on
  // first start.
  // (viem and the adapters are loaded only then.)
  if (!settings.sourcesFile) {
    if (!(await store.datasetInfo()))
      // The dataset only: its history (a year of daily snapshots and liquidations, then the
      // hourly backfill) is written by the history feed in the background, after start.
      await seedStore(store, 'default', DEFAULT_SEED, options.onSeedProgress, true, clock, 0);
    else await recordSandboxSource(store, clock);
    return null;
  }
  const live = await import('../ingest/live.ts');
  const chain = await import('../ingest/chain/index.ts');
  const sources = chain.configuredSources(chain.loadSourcesFile(settings.sourcesFile));
  // Until the sources' first dataset is in the store: read them, or wait for the server that
  // holds the lease (and take over if it stops). A first pass that reads nothing does not keep
  // the service from starting: it serves an empty live model, which follows the first dataset a
  // later pass writes. Nor does a long one (a first sync of a large chain): after
  // FIRST_PASS_WAIT_MS the service starts and the pass goes on in the background. Nor does
  // another server's: the wait ends once every source's last pass failed, or after the time a
  // pass may take (the in-process passes take over from there), FIRST_PASS_WAIT_MS at most.
  const firstPassWaitMs = settings.firstPassWaitMs ?? DEFAULT_FIRST_PASS_WAIT_MS;
  const maxWaitMs = Math.min(expectedPassMs(ingestInterval(settings)), firstPassWaitMs);
  // Real time, not the service's clock: this bounds how long a start takes.
  const startedWaiting = performance.now();
  const waited = () => performance.now() - startedWaiting;
  let firstPass: SourcesIngestion['firstPass'] = null;
  // A process that does not run the passes (a worker other than the first) only waits.
  const runsPasses = options.writesHistory ?? true;
  while ((await store.datasetInfo())?.kind !== 'live') {
    if (runsPasses) {
      const startedAt = clock.now();
      const stopping = new AbortController();
      const running = live.ingestWithLease(sources, store, clock, lease, { signal: stopping.signal });
      // (Left running, its failure is the ingest job's to report, or nobody's at shutdown.)
      running.catch(() => undefined);
      const pass = await raceTimer(running, firstPassWaitMs - waited());
      if (pass === TIMED_OUT) {
        firstPass = { pass: running, startedAt, stop: () => stopping.abort() };
        break;
      }
      if (pass?.written) break;
      if (pass) continue;
    }
    if (waited() >= maxWaitMs || (await lastPassFailed(store, sources))) break;
    if (Math.floor(waited() / 30_000) !== Math.floor((waited() - 500) / 30_000) && options.logger)
      process.stderr.write(
        `waiting for the server that holds the ingestion lease to read ${settings.sourcesFile}\n`,
      );
    await new Promise((r) => setTimeout(r, 500));
  }
  const records = new Map((await store.listSources()).map((s) => [s.id, s]));
  const unread = sources.flatMap((s) => {
    const r = records.get(s.id);
    return !r || r.refreshedAt === null || r.consecutiveFailures > 0
      ? [{ source: s.id, error: r?.lastError ?? null, everRead: (r?.refreshedAt ?? null) !== null }]
      : [];
  });
  const syncing = sources.some((s) => records.get(s.id)?.sync !== undefined);
  return { sources, live, unread, firstPass, syncing };
}

const TIMED_OUT = Symbol('timed out');

/** The promise's value, or TIMED_OUT if it has not settled within `ms` (real time). */
async function raceTimer<T>(promise: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<typeof TIMED_OUT>((r) => {
        timer = setTimeout(() => r(TIMED_OUT), Math.max(0, ms));
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Whether every source's last pass failed (as their checkpoints say): no dataset comes of it. */
async function lastPassFailed(store: Store, sources: readonly Source[]): Promise<boolean> {
  const records = new Map((await store.listSources()).map((s) => [s.id, s]));
  return sources.every((s) => (records.get(s.id)?.consecutiveFailures ?? 0) > 0);
}

/**
 * The start-up warning of the sources not read (null when every source was read): one line
 * naming each with its last error.
 */
export function unreadWarning(ingestion: SourcesIngestion | null): string | null {
  if (!ingestion || ingestion.unread.length === 0) return null;
  const pending = ingestion.firstPass ? 'its first pass still running' : 'not read yet';
  const named = ingestion.unread.map((u) => `${u.source} (${u.error ?? pending})`).join(', ');
  const never = ingestion.unread.filter((u) => !u.everRead).length;
  const one = ingestion.unread.length === 1;
  const served =
    never === ingestion.unread.length
      ? one
        ? 'nothing of it is served until a pass reads it'
        : 'nothing of them is served until a pass reads them'
      : never === 0
        ? `${one ? 'its' : 'their'} last data is served, aging`
        : 'the last data of those read before is served, aging; nothing of the others until a pass reads them';
  return `sources not read at start: ${named}; ${served} (GET /api/v1/health shows each)`;
}

/**
 * In-process ingestion of the sources file (in the process that writes history): a pass every
 * INGEST_INTERVAL_MS by the server that holds the store's ingestion lease (several servers on
 * one store elect one ingester; another takes over once its lease expires, or at once when it
 * shuts down); the models of every server follow the dataset within a second.
 * A pass's failing sources and the items it could not read or served in part are logged
 * when they change. Returns the pass (nothing to do without a sources file, or once closing).
 */
export function sourcesPass(
  ingestion: SourcesIngestion | null,
  deps: {
    store: Store;
    clock: Clock;
    lease: IngestLease;
    passWatch: PassWatch;
    log: FastifyInstance['log'];
    closing: () => boolean;
  },
): (ctx?: { signal: AbortSignal }) => Promise<void> {
  const { store, clock, lease, passWatch } = deps;
  // The sources the start-up warning named are failing already: logged again once read.
  // (Not those whose first pass was still running: its outcome is logged when it ends.)
  const failing = new Set<string>(ingestion?.unread.flatMap((u) => (u.error === null ? [] : [u.source])));
  const neverRead = new Set<string>(ingestion?.unread.flatMap((u) => (u.everRead ? [] : [u.source])));
  const itemsNotRead = new Map<string, string>();
  const itemsInPart = new Map<string, string>();
  const onSource = (run: SourceRun) => {
    if (!run.ok && !failing.has(run.source))
      deps.log.warn(
        { source: run.source, error: run.error },
        run.state.refreshedAt === null
          ? 'source failed: not read yet, nothing of it is served'
          : 'source failed: its last data is served, aging',
      );
    if (run.ok && (failing.has(run.source) || neverRead.has(run.source)))
      deps.log.info(
        { source: run.source },
        neverRead.delete(run.source) ? 'source read: its data is served' : 'source read again',
      );
    if (!run.ok && run.state.refreshedAt === null) neverRead.add(run.source);
    if (run.ok) failing.delete(run.source);
    else failing.add(run.source);
    // (A run that read no state reports no item: the last one's stand.)
    if (!run.ok || !run.stateRead) return;
    // Items a pass could not read or price (served from their last data, or not at all),
    // and items served in part (a market without a USD price, "Real sources" (docs/decisions.md)): logged when they change.
    const logChanged = (seen: Map<string, string>, lines: string[], msg: string) => {
      const key = lines.join('\n');
      if (key === (seen.get(run.source) ?? '')) return;
      seen.set(run.source, key);
      if (lines.length > 0)
        deps.log.warn({ source: run.source, count: lines.length, first: lines.slice(0, 5) }, msg);
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
  };
  // A first pass the start did not wait for: the first run joins it (its sources reported as
  // a pass of the job's own would be).
  let first = ingestion?.firstPass ?? null;
  return async (ctx): Promise<void> => {
    if (!ingestion || deps.closing()) return;
    const { sources, live } = ingestion;
    // Blocks of logs the last pass left to read (a sync under way).
    let left = Number.POSITIVE_INFINITY;
    if (first) {
      const { pass, startedAt, stop } = first;
      first = null;
      passWatch.started(startedAt);
      let done: LivePass | null;
      try {
        done = await untilStopped(pass, ctx?.signal);
        if (done === null) stop();
        for (const run of done?.runs ?? []) onSource(run);
      } finally {
        passWatch.ended();
      }
      const gap = live.syncGap(done);
      if (gap === null) return;
      left = gap;
    }
    // A source still syncing (its logs behind the block it read): the next pass at once, in
    // this run, while the blocks left to read shrink (until it is synced or the service stops);
    // a sync that does not catch up (the chain makes more blocks than a pass reads) goes on at
    // the interval.
    for (;;) {
      if (deps.closing() || ctx?.signal.aborted) return;
      // Shown by /health while it runs (and as overdue past its expected time).
      passWatch.started(clock.now());
      let done: LivePass | null;
      try {
        const running = live.ingestWithLease(sources, store, clock, lease, {
          onSource,
          ...(ctx ? { signal: ctx.signal } : {}),
        });
        running.catch(() => undefined);
        done = await untilStopped(running, ctx?.signal);
      } finally {
        passWatch.ended();
      }
      const gap = live.syncGap(done);
      if (gap === null) return;
      if (gap >= left) {
        deps.log.warn(
          { blocksLeft: gap },
          "a sync does not catch up with the chain's head: raise the chain's syncBlocks above the blocks it makes during a pass",
        );
        return;
      }
      left = gap;
    }
  };
}

/**
 * The pass's outcome, or null once `signal` aborts (the service stopping): a pass cannot be
 * cancelled mid-way, and a shutdown does not wait for one (a pass writes its checkpoints after
 * its data, so the next start reads again from the last one it saved).
 */
async function untilStopped<T>(pass: Promise<T>, signal: AbortSignal | undefined): Promise<T | null> {
  if (!signal) return pass;
  if (signal.aborted) return null;
  let onAbort = () => {};
  const stopped = new Promise<null>((resolve) => {
    onAbort = () => resolve(null);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([pass, stopped]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
