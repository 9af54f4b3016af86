import cluster from 'node:cluster';
import { flushCompileCache } from 'node:module';
import { availableParallelism } from 'node:os';
import type { Settings } from '../../config.ts';
import { servePrimary } from '../cluster-primary.ts';
import { fail, loadService, metricsAccess, parseCommand, progressBar } from '../command.ts';
import { drain, trackConnections } from '../drain.ts';
import { readyText } from '../ready.ts';

/** `lrds serve --help`, also printed after a usage mistake. */
const SERVE_HELP = `Usage: lrds serve [--workers N|auto]

Starts the HTTP API (seeds the sandbox on first start).
  --workers N|auto   N processes share the port (auto: one per core); more than one needs REDIS_URL`;

export async function serve(settings: Settings, args: string[] = []): Promise<void> {
  const { values } = parseCommand(SERVE_HELP, args, { workers: { type: 'string' } });
  const workers =
    values.workers === 'auto'
      ? availableParallelism()
      : Number(values.workers ?? process.env.LRDS_WORKERS ?? 1);
  if (!Number.isInteger(workers) || workers < 1)
    fail(`--workers must be a positive integer or 'auto', got '${values.workers}'`);
  if (workers > 1 && cluster.isPrimary) return servePrimary(settings, workers);
  // A signal before the server listens: nothing has been served or counted yet, and what the
  // start was writing (the seed, in its transaction) is written again by the next start, so the
  // process exits at once (0). Once the service exists, the signal waits for the server to
  // listen and then shuts it down as usual (below).
  let stopAfterListen: string | null = null;
  let created = false;
  let shutdown = (signal: string) => {
    if (created) {
      stopAfterListen ??= signal;
      return;
    }
    process.stderr.write(`lrds: ${signal} during start-up, before serving: exiting\n`);
    process.exit(0);
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  const bar = progressBar('Seeding the sandbox dataset (first start)');
  const started = performance.now();
  const human = process.stderr.isTTY && !process.env.LRDS_WORKER_SLOT;
  if (human)
    process.stderr.write(`lrds: starting on ${settings.databaseUrl ? 'PostgreSQL' : settings.dataDir}…\n`);
  const { createService } = await loadService();
  const service = await createService(settings, {
    workers,
    logger: { level: settings.logLevel },
    onSeedProgress: (d, t) => bar.update(d, t),
    writesHistory: (process.env.LRDS_WORKER_SLOT ?? '0') === '0',
  });
  created = true;
  bar.stop();
  const { app } = service;
  const { refuseRequestsOn } = await import('../../http/app.ts');
  const connections = trackConnections(app.server, refuseRequestsOn);
  await app.listen({ port: settings.port, host: settings.host });
  // A worker's metrics are served by the primary (aggregated); a lone process serves its own.
  const metricsServer =
    settings.metricsPort && workers === 1
      ? await (await import('../../metrics.ts')).startMetricsServer(
          settings.metricsPort,
          metricsAccess(settings),
        )
      : null;
  // The sandbox served to test keys, when the live store holds another dataset: built a few
  // seconds after the server is up, so health checks and the first requests are not held
  // behind it (it blocks for about a second; a test-key request before then builds it itself).
  setTimeout(() => service.models.warm(), 3000).unref();
  // Once per start (the first worker only): keys of several customers may share `default`.
  if ((process.env.LRDS_WORKER_SLOT ?? '0') === '0') {
    const { crowdedDefaultWarning } = await import('../../access/keys.ts');
    const crowded = await crowdedDefaultWarning(service.store).catch(() => null);
    if (crowded) app.log.warn({ account: crowded.account, keys: crowded.keys }, crowded.message);
  }
  const model = service.models.get('live');
  const live = model.dataset;
  app.log.info(
    {
      startupMs: Math.round(performance.now() - started),
      markets: live.marketCount,
      positions: live.positionCount,
      dataset: `${live.kind}:${live.profile}`,
      // A sources file none of whose sources has been read yet: empty until a pass reads one.
      ...(model.synced ? {} : { synced: false }),
      rssMb: Math.round(process.memoryUsage().rss / 2 ** 20),
    },
    'ready',
  );
  if (human)
    process.stderr.write(
      `${readyText(settings, { ...live, synced: model.synced }, performance.now() - started)}\n`,
    );
  // The modules compiled for this start are on disk now, whatever ends the process later.
  flushCompileCache();
  let closing = false;
  shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: refusing new connections, finishing requests in flight');
    const force = setTimeout(() => {
      app.log.error('shutdown took over 10 s: exiting');
      process.exit(1);
    }, 10_000);
    force.unref();
    drain(app.server, connections, {
      acceptMs: 2_000,
      quietMs: 500,
      graceMs: 2_000,
      idleMs: 1_000,
      maxMs: 6_000,
    })
      .then(() => {
        // Only after 6 s of steady traffic on one connection: requests still arriving there get
        // 503 with Connection: close, and sockets are closed as soon as they go idle.
        setInterval(() => app.server.closeIdleConnections(), 100).unref();
        metricsServer?.close();
        return service.close();
      })
      .then(
        () => process.exit(0),
        (err) => {
          app.log.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  if (stopAfterListen) shutdown(stopAfterListen);
}
