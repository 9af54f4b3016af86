import type { FastifyInstance } from 'fastify';
import type { Settings } from '../config.ts';
import type { DatasetInfo } from '../domain/records/dataset.ts';
import { DEFAULT_SEED } from '../ingest/sandbox/index.ts';
import { HistoryWorker } from '../jobs/history-job.ts';

/** How often the history feed looks for an hour to write (it writes once per hour ended). */
export const HISTORY_CHECK_MS = 60_000;

/**
 * The sandbox history feed while the store holds a sandbox dataset, as a job's run: one step
 * for the dataset the live model serves, in a worker thread with its own store connection
 * (src/jobs/history-job.ts; a reseed by another process switches the worker to the new dataset,
 * or ends it for one that is not a sandbox). Returns the step and the end of the worker: a step
 * whose signal is aborted, like stop(), ends the worker within HISTORY_STOP_MS (what it wrote so
 * far is kept; the next start goes on from the history's checkpoint).
 */
export function historyFeed(
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
): { step(nowMs: number, signal?: AbortSignal): Promise<void>; stop(): Promise<void> } {
  let feed: { key: string; worker: HistoryWorker } | null = null;
  // Set by stop(): no worker is started any more.
  let stopped = false;
  const workerFor = async (dataset: DatasetInfo | null): Promise<HistoryWorker | null> => {
    const key =
      dataset?.kind === 'sandbox'
        ? `${dataset.profile === 'large' ? 'large' : 'default'}:${dataset.seed ?? DEFAULT_SEED}`
        : null;
    if (feed && feed.key !== key) {
      await feed.worker.stop();
      feed = null;
    }
    if (!key || !dataset || stopped) return null;
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
    async step(nowMs: number, signal?: AbortSignal) {
      if (signal?.aborted) return;
      const worker = await workerFor(current());
      if (!worker) return;
      const w = await worker.advance(nowMs, signal);
      if (w.hourlySnapshots + w.assetPrices > 0) log.info(w, 'sandbox history written');
    },
    async stop() {
      stopped = true;
      await feed?.worker.stop();
      feed = null;
    },
  };
}
