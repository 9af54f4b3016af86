#!/usr/bin/env node
import cluster from 'node:cluster';
import type { Server } from 'node:http';
import net from 'node:net';
import { availableParallelism } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { SingleBar } from 'cli-progress';
import { KeyService } from '../access/keys.ts';
import { loadTiers, TIER_IDS, type TierId } from '../access/tiers.ts';
import { loadSettings, type Settings } from '../config.ts';
import { DEFAULT_SEED } from '../ingest/sandbox/index.ts';
import { createKeyEvents } from '../scale.ts';
import { createService, openStore, seedStore } from '../service.ts';
import type { Store } from '../store/types.ts';

const USAGE = `lrds: Lending Risk Data Service

Usage:
  lrds serve [--workers N|auto]                start the HTTP API (seeds the sandbox on first start);
                                               N workers share the port (needs REDIS_URL)
  lrds seed [--profile default|large] [--seed N]
                                               replace the dataset with a generated sandbox
  lrds keys create --tier free|pro|enterprise [--test] [--account NAME] [--name LABEL]
                                               create an API key; prints the key alone on stdout
  lrds keys list [--account NAME]              list keys (prefix and id; never the whole key)
  lrds keys revoke ID                          revoke a key; refused from its next request
  lrds keys set-tier ID free|pro|enterprise    change a key's tier

Settings come from the environment: PORT, HOST, DATA_DIR, DATABASE_URL, REDIS_URL, TIERS_FILE, LOG_LEVEL, INSTANCES.`;

class UsageError extends Error {}

function fail(message: string): never {
  throw new UsageError(message);
}

async function withStore<T>(settings: Settings, fn: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(settings);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

function progressBar(label: string) {
  const format = `${label} [{bar}] {percentage}% | {value}/{total} | {duration}s`;
  const bar = new SingleBar(
    { format, stream: process.stderr, hideCursor: true },
    { format, barCompleteChar: '#', barIncompleteChar: '.' },
  );
  let started = false;
  return {
    update(done: number, total: number) {
      if (!started) {
        bar.start(total, 0);
        started = true;
      }
      bar.setTotal(total);
      bar.update(done);
    },
    stop() {
      if (started) bar.stop();
    },
  };
}

/** Requests in flight on a server and when the last one started or ended. */
function trackRequests(server: Server): { busy(quietMs: number): boolean } {
  let inFlight = 0;
  let lastActivity = performance.now();
  server.on('request', (_req, res) => {
    inFlight++;
    lastActivity = performance.now();
    res.once('close', () => {
      inFlight--;
      lastActivity = performance.now();
    });
  });
  return { busy: (quietMs) => inFlight > 0 || performance.now() - lastActivity < quietMs };
}

/**
 * Graceful drain, before the app closes. New connections are refused at once, but the open ones
 * go on being served until no request has been in flight for `quietMs` (or `maxMs` passed):
 * keep-alive clients finish what they had queued, and a request already sent but still in the
 * kernel's buffer is read and answered. (http.Server#close would close every idle keep-alive
 * socket at once, and a socket whose next request is not read yet counts as idle: that request
 * would be dropped. So the listening socket is closed with net.Server's close.)
 */
async function drain(
  server: Server,
  requests: ReturnType<typeof trackRequests>,
  quietMs: number,
  maxMs: number,
) {
  net.Server.prototype.close.call(server);
  const deadline = performance.now() + maxMs;
  while (requests.busy(quietMs) && performance.now() < deadline) await sleep(20);
}

/**
 * `lrds serve --workers N`: a primary that seeds the store once, then forks N identical workers
 * (node:cluster, sharing the port) and restarts any that dies. Limits and quotas must be shared
 * between workers, so more than one worker needs REDIS_URL.
 */
async function servePrimary(settings: Settings, workers: number): Promise<void> {
  if (!settings.redisUrl) {
    fail('--workers above 1 needs REDIS_URL: rate limits and quotas must be shared by the workers');
  }
  loadTiers(settings.tiersFile); // a broken tier file stops here, once, not in every worker
  await withStore(settings, async (store) => {
    if (!(await store.datasetInfo())) await seedStore(store, 'default', DEFAULT_SEED, undefined, true);
  });
  let stopping = false;
  const startedAt = new Map<number, number>();
  const fork = () => {
    const worker = cluster.fork({ LRDS_WORKERS: String(workers) });
    startedAt.set(worker.id, Date.now());
  };
  for (let i = 0; i < workers; i++) fork();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.values(cluster.workers ?? {}).every((w) => !w || w.isDead()))
        process.exit(process.exitCode ?? 0);
      return;
    }
    const lived = Date.now() - (startedAt.get(worker.id) ?? 0);
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
    fork();
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

async function serve(settings: Settings, args: string[] = []): Promise<void> {
  const { values } = parseArgs({ args, options: { workers: { type: 'string' } } });
  const workers =
    values.workers === 'auto'
      ? availableParallelism()
      : Number(values.workers ?? process.env.LRDS_WORKERS ?? 1);
  if (!Number.isInteger(workers) || workers < 1)
    fail(`--workers must be a positive integer or 'auto', got '${values.workers}'`);
  if (workers > 1 && cluster.isPrimary) return servePrimary(settings, workers);
  const bar = progressBar('Seeding the sandbox dataset (first start)');
  const started = performance.now();
  const service = await createService(settings, {
    workers,
    logger: { level: settings.logLevel },
    onSeedProgress: (d, t) => bar.update(d, t),
  });
  bar.stop();
  const { app } = service;
  const requests = trackRequests(app.server);
  await app.listen({ port: settings.port, host: settings.host });
  // The sandbox served to test keys, when the live store holds another dataset: built a few
  // seconds after the server is up, so health checks and the first requests are not held
  // behind it (it blocks for about a second; a test-key request before then builds it itself).
  setTimeout(() => service.models.warm(), 3000).unref();
  const live = service.models.get('live').dataset;
  app.log.info(
    {
      startupMs: Math.round(performance.now() - started),
      markets: live.marketCount,
      positions: live.positionCount,
      dataset: `${live.kind}:${live.profile}`,
      rssMb: Math.round(process.memoryUsage().rss / 2 ** 20),
    },
    'ready',
  );
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: refusing new connections, finishing requests in flight');
    const force = setTimeout(() => {
      app.log.error('shutdown took over 10 s: exiting');
      process.exit(1);
    }, 10_000);
    force.unref();
    drain(app.server, requests, 200, 5_000)
      .then(() => {
        // From here on, requests still arriving get 503 with Connection: close, and keep-alive
        // sockets are closed as soon as they go idle, not after the keep-alive timeout.
        setInterval(() => app.server.closeIdleConnections(), 100).unref();
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
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

async function seed(settings: Settings, args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { profile: { type: 'string', default: 'default' }, seed: { type: 'string' } },
  });
  const profile = values.profile;
  if (profile !== 'default' && profile !== 'large')
    fail(`--profile must be default or large, got '${profile}'`);
  const seedValue = values.seed === undefined ? DEFAULT_SEED : Number(values.seed);
  if (!Number.isSafeInteger(seedValue) || seedValue < 0)
    fail(`--seed must be a non-negative integer, got '${values.seed}'`);
  const started = performance.now();
  const bar = progressBar(`Seeding ${profile}`);
  const info = await withStore(settings, (store) =>
    seedStore(store, profile, seedValue, (d, t) => bar.update(d, t)),
  );
  bar.stop();
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  process.stderr.write(
    `Seeded ${info.marketCount} markets and ${info.positionCount} positions (profile ${profile}, seed ${seedValue}) in ${seconds} s.\n`,
  );
}

async function keys(settings: Settings, args: string[]): Promise<void> {
  const [command, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      tier: { type: 'string' },
      test: { type: 'boolean', default: false },
      account: { type: 'string' },
      name: { type: 'string' },
    },
  });
  const tiers = loadTiers(settings.tiersFile);
  const isTier = (t: string | undefined): t is TierId =>
    t !== undefined && (TIER_IDS as readonly string[]).includes(t);
  await withStore(settings, async (store) => {
    const events = createKeyEvents(settings.redisUrl);
    const service = new KeyService(store, { events });
    try {
      await keyCommand(store, service);
    } finally {
      await events.close();
    }
  });

  async function keyCommand(store: Store, service: KeyService): Promise<void> {
    switch (command) {
      case 'create': {
        if (!isTier(values.tier)) fail(`--tier must be one of ${TIER_IDS.join(', ')}`);
        const account = await service.ensureAccount(values.account ?? 'default');
        const { key } = await service.create({
          accountId: account.id,
          tier: tiers[values.tier].id,
          mode: values.test ? 'test' : 'live',
          name: values.name ?? null,
        });
        process.stdout.write(`${key}\n`);
        return;
      }
      case 'list': {
        const account = values.account === undefined ? null : await store.findAccountByName(values.account);
        if (values.account !== undefined && !account) fail(`no account named '${values.account}'`);
        const list = await store.listKeys(account?.id);
        const rows = list.map((k) => [
          k.id,
          k.prefix,
          k.mode,
          k.tier,
          k.revokedAt ? `revoked ${k.revokedAt}` : 'active',
          k.createdAt,
        ]);
        process.stdout.write(`${['ID', 'PREFIX', 'MODE', 'TIER', 'STATUS', 'CREATED'].join('\t')}\n`);
        for (const r of rows) process.stdout.write(`${r.join('\t')}\n`);
        return;
      }
      case 'revoke': {
        const id = positionals[0] ?? fail('usage: lrds keys revoke ID');
        const key = await store.getKey(id);
        if (!key) fail(`no key with id '${id}'`);
        if (key.revokedAt) {
          process.stderr.write(`Key ${id} was already revoked at ${key.revokedAt}.\n`);
          return;
        }
        await service.revoke(id);
        process.stderr.write(`Revoked ${id}.\n`);
        return;
      }
      case 'set-tier': {
        const [id, tier] = positionals;
        if (!id || !isTier(tier)) fail(`usage: lrds keys set-tier ID ${TIER_IDS.join('|')}`);
        if (!(await service.setTier(id, tier))) fail(`no key with id '${id}'`);
        process.stderr.write(`Key ${id} is now on the ${tier} tier.\n`);
        return;
      }
      default:
        fail(`unknown keys command '${command ?? ''}'\n\n${USAGE}`);
    }
  }
}

async function main(argv: string[]): Promise<void> {
  const [command, ...args] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const settings = loadSettings();
  switch (command) {
    case 'serve':
      return serve(settings, args);
    case 'seed':
      return seed(settings, args);
    case 'keys':
      return keys(settings, args);
    default:
      fail(`unknown command '${command}'\n\n${USAGE}`);
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (
    err instanceof UsageError ||
    (err instanceof Error && ['SettingsError', 'TierConfigError'].includes(err.name))
  ) {
    process.stderr.write(`lrds: ${err.message}\n`);
    process.exit(2);
  }
  if (err instanceof Error && 'code' in err && err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    process.stderr.write(`lrds: ${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`lrds: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
