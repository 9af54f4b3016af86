/**
 * The sandbox history feed in a worker thread (started by src/jobs/history-job.ts): it opens its
 * own store connection and runs SandboxHistoryFeed there, so building the simulation's paths and
 * writing a year of rows never holds the server's event loop. Messages in: `advance` (nowMs),
 * `stop`; out: `ready`, `advanced` (rows written), `failed` (message), `backfilled`, `stopped`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { systemClock } from '../domain/clock.ts';
import { must } from '../domain/must.ts';
import { SandboxHistoryFeed, sandboxSimulation } from '../ingest/sandbox/history.ts';
import { openStore } from '../store/open.ts';
import type { HistoryWorkerData, ToHistoryWorker } from './history-job.ts';

const data = workerData as HistoryWorkerData;
const port = must(parentPort, 'the parent port (this file runs as a worker thread)');
const store = await openStore({ dataDir: data.dataDir, databaseUrl: data.databaseUrl }, systemClock());
const feed = new SandboxHistoryFeed(store, sandboxSimulation(data.profile, data.seed), {
  days: data.days,
  ...(data.hourlyDays !== undefined ? { hourlyDays: data.hourlyDays } : {}),
  retentionDays: data.retentionDays,
  // Short write transactions: the server's own connection (usage counts) waits for at most one.
  batches: 'gentle',
  onBackfilled: () => port.postMessage({ type: 'backfilled' }),
});
let running: Promise<void> = Promise.resolve();
port.on('message', (m: ToHistoryWorker) => {
  if (m.type === 'advance') {
    running = feed.advance(m.nowMs).then(
      async (written) => {
        // A backfill leaves tens of MB of write-ahead log: copied in and cut back here, off the
        // server's thread. The history is written either way: a failure only leaves the log as
        // it is (the next step tries again).
        if (Object.values(written).some((n) => n > 0)) await store.compact().catch(() => {});
        port.postMessage({ type: 'advanced', id: m.id, written });
      },
      (err: unknown) =>
        port.postMessage({
          type: 'failed',
          id: m.id,
          message: err instanceof Error ? err.message : String(err),
        }),
    );
  } else if (m.type === 'stop') {
    feed.stop();
    void running
      .then(() => store.close())
      .finally(() => {
        port.postMessage({ type: 'stopped' });
        port.close();
      });
  }
});
port.postMessage({ type: 'ready' });
