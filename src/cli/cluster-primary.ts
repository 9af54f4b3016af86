import cluster from 'node:cluster';
import { loadTiers } from '../access/tiers.ts';
import type { Settings } from '../config.ts';
import { fail, loadService, metricsAccess, withStore } from './command.ts';

/**
 * `lrds serve --workers N`: a primary that seeds the store once, then forks N identical workers
 * (node:cluster, sharing the port) and restarts any that dies. Limits and quotas must be shared
 * between workers, so more than one worker needs REDIS_URL.
 */
export async function servePrimary(settings: Settings, workers: number): Promise<void> {
  if (!settings.redisUrl) {
    fail('--workers above 1 needs REDIS_URL: rate limits and quotas must be shared by the workers');
  }
  loadTiers(settings.tiersFile); // a broken tier file stops here, once, not in every worker
  await withStore(settings, async (store) => {
    const { seedStore, DEFAULT_SEED } = await loadService();
    // With sources, the workers' service reads them instead (one worker, by the ingestion lease).
    if (!settings.sourcesFile && !(await store.datasetInfo()))
      await seedStore(
        store,
        'default',
        DEFAULT_SEED,
        undefined,
        true,
        undefined,
        settings.sandboxHistoryDays,
      );
  });
  if (settings.metricsPort) {
    const { startMetricsServer } = await import('../metrics.ts');
    (await startMetricsServer(settings.metricsPort, { ...metricsAccess(settings), cluster: true })).unref();
  }
  let stopping = false;
  const startedAt = new Map<number, number>();
  // A worker's slot (0 to workers - 1) outlives its restarts: slot 0 writes the sandbox history.
  const slots = new Map<number, number>();
  const fork = (slot: number) => {
    const worker = cluster.fork({ LRDS_WORKERS: String(workers), LRDS_WORKER_SLOT: String(slot) });
    startedAt.set(worker.id, performance.now());
    slots.set(worker.id, slot);
  };
  for (let i = 0; i < workers; i++) fork(i);
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.values(cluster.workers ?? {}).every((w) => !w || w.isDead()))
        process.exit(process.exitCode ?? 0);
      return;
    }
    const lived = performance.now() - (startedAt.get(worker.id) ?? 0);
    if (lived < 5_000) {
      // Dying at start-up is a configuration problem: restarting would only loop.
      process.stderr.write(
        `lrds: worker ${worker.process.pid} failed at start-up (${signal ?? code}); stopping\n`,
      );
      process.exitCode = typeof code === 'number' && code !== 0 ? code : 1;
      stop('SIGTERM');
      return;
    }
    process.stderr.write(`lrds: worker ${worker.process.pid} exited (${signal ?? code}); starting another\n`);
    fork(slots.get(worker.id) ?? 0);
  });
  function stop(signal: NodeJS.Signals): void {
    if (stopping) return;
    stopping = true;
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill(signal);
    setTimeout(() => process.exit(1), 12_000).unref();
    if (Object.values(cluster.workers ?? {}).every((w) => !w || w.isDead()))
      process.exit(process.exitCode ?? 0);
  }
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGTERM'));
}
