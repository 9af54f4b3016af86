#!/usr/bin/env node
import cluster from 'node:cluster';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import net from 'node:net';
import { availableParallelism, hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { SingleBar } from 'cli-progress';
import type { KeyService } from '../access/keys.ts';
import { loadTiers, TIER_IDS, type TierId } from '../access/tiers.ts';
import { ingestInterval, ingestLeaseMs, loadSettings, type Settings } from '../config.ts';
import { redactSecrets } from '../ingest/runner.ts';
import type { Store } from '../store/types.ts';
import { readyText } from './ready.ts';

// The service's modules (Fastify, the stores, the generator) are loaded by the commands that
// need them, so that help, version and usage mistakes answer at once.
const loadService = () => import('../service.ts');

const SETTINGS_LINE =
  'Settings come from the environment: PORT, HOST, DATA_DIR, DATABASE_URL, REDIS_URL, TIERS_FILE, SOURCES_FILE, LOG_LEVEL, INSTANCES.';

/** Help of each command and subcommand, printed by `--help` (exit 0) and after a usage mistake. */
const HELP = {
  serve: `Usage: lrds serve [--workers N|auto]

Starts the HTTP API (seeds the sandbox on first start).
  --workers N|auto   N processes share the port (auto: one per core); more than one needs REDIS_URL`,
  seed: `Usage: lrds seed [--profile default|large] [--seed N]

Replaces the dataset with a generated sandbox, with a progress bar.
  --profile   default (about 4,000 markets, 50,000 positions) or large (20,000 and 1,000,000)
  --seed N    the generator's seed (same seed, same data)`,
  ingest: `Usage: lrds ingest [--once]

Reads the sources of SOURCES_FILE into the store: on each chain, Morpho Blue, Aave v3, Spark,
Compound v3, Euler v2, Fluid and Chainlink feeds; and Morpho's GraphQL API.
  --once   one pass over every source, then exit: 0 when every source succeeded, 1 otherwise
           (each failed source named); without it, a pass every INGEST_INTERVAL_MS until stopped`,
  keys: `Usage: lrds keys <command>

  create --tier free|pro|enterprise [--test] [--account NAME] [--name LABEL]
                          create an API key (in a new account of its own unless --account
                          names one); prints the key alone on stdout
  list [--account NAME] [--json]
                          list keys and their accounts (prefix and id; never the whole key)
  revoke ID               revoke a key; refused from its next request
  set-tier ID free|pro|enterprise
                          change a key's tier
  move ID [--account NAME]
                          move a key to another account (a new one of its own without --account)

'lrds keys <command> --help' describes one command.`,
  'keys create': `Usage: lrds keys create --tier free|pro|enterprise [--test] [--account NAME] [--name LABEL]

Creates an API key and prints it alone on stdout: the only time it is shown (only its hash is kept).
An account is one customer: its keys list and revoke each other (a key those of its tier and below),
and share its key-creation budget and its quota bound. Without --account the key gets a new account of its own, named after its id
(acct_...), so keys handed to different customers are never put together; give the same
--account NAME to every key of one customer.
  --tier      the key's tier (required)
  --test      a test key (served the fixed sandbox, never live data)
  --account   the account it belongs to (created if new; default: a new account of its own)
  --name      a label shown in listings`,
  'keys list': `Usage: lrds keys list [--account NAME] [--json]

Lists keys as a table: account, id, first 14 characters, mode, tier, status, creation time, name.
  --account   only this account's keys
  --json      one JSON array instead of the table, for scripts`,
  'keys revoke': `Usage: lrds keys revoke ID

Revokes the key with this id (see 'lrds keys list'): refused from its next request.`,
  'keys set-tier': `Usage: lrds keys set-tier ID free|pro|enterprise

Moves the key with this id to another tier: applies to its next requests.`,
  'keys move': `Usage: lrds keys move ID [--account NAME]

Moves the key with this id to another account: applies to its next requests. The key keeps its
tier, mode and usage; from then on it lists, revokes and is limited with the keys of the account
it joined, and its usage counts toward that account's quota bound.
  --account   the account to move it to (created if new; default: a new account of its own)`,
} as const;

const USAGE = `lrds: Lending Risk Data Service

Usage:
  lrds serve [--workers N|auto]                start the HTTP API (seeds the sandbox on first start);
                                               N workers share the port (needs REDIS_URL)
  lrds seed [--profile default|large] [--seed N]
                                               replace the dataset with a generated sandbox
  lrds ingest [--once]                         read the sources of SOURCES_FILE into the store
                                               (--once: one pass, exit 1 if a source failed)
  lrds keys create --tier free|pro|enterprise [--test] [--account NAME] [--name LABEL]
                                               create an API key (a new account of its own unless
                                               --account names one); prints the key alone on stdout
  lrds keys list [--account NAME] [--json]     list keys and accounts (never the whole key)
  lrds keys revoke ID                          revoke a key; refused from its next request
  lrds keys set-tier ID free|pro|enterprise    change a key's tier
  lrds keys move ID [--account NAME]           move a key to another account (a new one without --account)
  lrds --version                               print the version

'lrds <command> --help' describes one command.
${SETTINGS_LINE}`;

/** The command was written wrong (an unknown option, a missing value): exit 2. */
class UsageError extends Error {}

/** The command was right but cannot be done (a key that does not exist): one line, exit 1. */
class CommandError extends Error {}

function fail(message: string): never {
  throw new UsageError(message);
}

function cannot(message: string): never {
  throw new CommandError(message);
}

/** Prints a command's help and exits 0. */
function help(command: keyof typeof HELP): never {
  process.stdout.write(`${HELP[command]}\n`);
  process.exit(0);
}

type OptionSpec = Record<string, { type: 'string' | 'boolean'; default?: string | boolean }>;

/**
 * Parses a command's arguments: unknown options, a missing option value and more positionals
 * than `maxPositionals` are usage mistakes (one line, exit 2); `--help` prints the command's help.
 */
function parseCommand<O extends OptionSpec>(
  command: keyof typeof HELP,
  args: string[],
  options: O,
  maxPositionals = 0,
) {
  if (args.includes('--help') || args.includes('-h')) help(command);
  let parsed: ReturnType<
    typeof parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>
  >;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (err) {
    fail(`${(err as Error).message.split(/\n|\. To specify/)[0]}\n\n${HELP[command]}`);
  }
  if (parsed.positionals.length > maxPositionals) {
    fail(`unexpected argument '${parsed.positionals[maxPositionals]}'\n\n${HELP[command]}`);
  }
  return parsed;
}

async function withStore<T>(settings: Settings, fn: (store: Store) => Promise<T>): Promise<T> {
  const store = await (await loadService()).openStore(settings);
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

/**
 * The open connections of a server, the requests in flight on each and when each was last
 * active: what a graceful drain needs to close every connection without cutting a request.
 */
function trackConnections(server: Server, refuseRequestsOn: (socket: Socket) => void) {
  interface Conn {
    inFlight: number;
    lastActive: number;
    /** The latest request's response on this connection (pipelined ones are answered in order). */
    newest: ServerResponse | null;
  }
  const conns = new Map<Socket, Conn>();
  let draining = false;
  let drainingSince = 0;
  let inFlight = 0;
  let accepted = 0;
  /** While the backlog is taken: connections accepted, not read yet (see acceptBacklog). */
  let held: Socket[] | null = null;
  // net.Server's pauseOnConnect option, read at each accept: a socket created paused is not read.
  const accepting = server as unknown as { pauseOnConnect: boolean };
  let lastActivity = performance.now();
  /**
   * While draining, the newest answer of a connection closes it, and only that one: an earlier
   * answer carrying `Connection: close` would close the socket before the pipelined requests
   * behind it were answered. Answers already sent (Fastify answers a malformed URL at once) are
   * left alone.
   */
  const closeAfter = (conn: Conn, res: ServerResponse) => {
    const previous = conn.newest;
    conn.newest = res;
    if (!draining) return;
    if (previous && previous !== res && !previous.headersSent) previous.removeHeader('connection');
    if (!res.headersSent) res.setHeader('connection', 'close');
  };
  server.on('connection', (socket: Socket) => {
    accepted++;
    // Created paused (pauseOnConnect): nothing is read from it until release(); then its
    // requests are answered 503 with Connection: close at once (cheap, however many wait).
    if (held) {
      held.push(socket);
      refuseRequestsOn(socket);
    }
    conns.set(socket, { inFlight: 0, lastActive: performance.now(), newest: null });
    socket.once('close', () => conns.delete(socket));
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const conn = conns.get(req.socket);
    inFlight++;
    lastActivity = performance.now();
    if (conn) {
      conn.inFlight++;
      conn.lastActive = performance.now();
      closeAfter(conn, res);
    }
    res.once('close', () => {
      inFlight--;
      lastActivity = performance.now();
      if (conn) {
        conn.inFlight--;
        conn.lastActive = performance.now();
        if (conn.newest === res) conn.newest = null;
      }
    });
  });
  return {
    get size() {
      return conns.size;
    },
    /** Connections accepted from now on are not read until `release()` (their requests wait in the socket). */
    hold() {
      held ??= [];
      accepting.pauseOnConnect = true;
    },
    /** The connections held are read from now on (and new ones at once). */
    release() {
      accepting.pauseOnConnect = false;
      for (const socket of held ?? []) if (!socket.destroyed) socket.resume();
      held = null;
    },
    /** Connections accepted since the server started. */
    get accepted() {
      return accepted;
    },
    /** Whether a request is in flight or one started or ended within `quietMs`. */
    busy(quietMs: number) {
      return inFlight > 0 || performance.now() - lastActivity < quietMs;
    },
    /** From now on the newest answer of every connection (those not sent yet included) carries `Connection: close`. */
    startDraining() {
      draining = true;
      drainingSince = performance.now();
      for (const conn of conns.values()) if (conn.newest) closeAfter(conn, conn.newest);
    },
    /** Closes the connections that have had no request in flight for `idleMs`, counted from the drain's start at the earliest. */
    closeIdle(idleMs: number) {
      const now = performance.now();
      for (const [socket, c] of conns)
        if (c.inFlight === 0 && now - Math.max(c.lastActive, drainingSince) >= idleMs) socket.destroy();
    },
  };
}

/**
 * Takes every connection the kernel holds for the server (handshake done, not yet accepted)
 * before the listener closes: closing it would reset them. After a stall of the event loop (a
 * start-up's first minutes, a long request) hundreds may wait there, and Node accepts one per
 * turn of the event loop: the connections taken are not read until the backlog is empty, so
 * that reading them does not slow the turns (a busy server took 25 ms a turn). Returns after two
 * turns that accepted none (the listener is polled every turn), or after `maxMs` (a flood that
 * never pauses). Their requests are then answered 503 with `Connection: close` and Retry-After:
 * an answer for each, however loaded the server, within the drain's time.
 */
async function acceptBacklog(connections: ReturnType<typeof trackConnections>, maxMs: number): Promise<void> {
  const started = performance.now();
  const turn = () => new Promise((resolve) => setImmediate(resolve));
  connections.hold();
  for (let before = -1; before !== connections.accepted && performance.now() - started < maxMs; ) {
    before = connections.accepted;
    // Two turns: the first may end the poll phase that ran the signal's handler.
    await turn();
    await turn();
  }
}

/**
 * Graceful drain, before the app closes. Connections that reached the machine before it and
 * still wait in the kernel's backlog are accepted (acceptBacklog) and their requests answered
 * 503 with `Connection: close` and Retry-After; then the listener closes, and new connections
 * are refused. Open connections
 * are first served as usual until no request has been in flight for `quietMs`, for at most
 * `graceMs`, so keep-alive clients finish what they had queued. Then every answer carries
 * `Connection: close`, so a client sends nothing more on that connection and the server closes
 * it after the answer (only the newest answer of a connection carries it, so pipelined requests
 * are all answered); a connection with nothing in flight is closed once idle for `idleMs`, counted
 * from this point at the earliest (a client that was about to send its next request on it has done
 * so by then and gets its answer).
 * No request that reached the server is cut. (http.Server#close would close every idle
 * keep-alive socket at once, and a socket whose next request is not read yet counts as idle:
 * that request would be reset. So the listening socket is closed with net.Server's close.)
 * Returns once no connection is left, or after `maxMs`.
 */
async function drain(
  server: Server,
  connections: ReturnType<typeof trackConnections>,
  t: { acceptMs: number; quietMs: number; graceMs: number; idleMs: number; maxMs: number },
) {
  const started = performance.now();
  await acceptBacklog(connections, t.acceptMs);
  net.Server.prototype.close.call(server);
  connections.release();
  // Quietness too is judged after the poll phase: after a stall, a timer runs before the sockets
  // are read, and connections with requests waiting would pass for quiet (and be closed early).
  const afterPoll = () => new Promise((resolve) => setImmediate(resolve));
  for (;;) {
    await afterPoll();
    if (!connections.busy(t.quietMs) || performance.now() - started >= t.graceMs) break;
    await sleep(10);
  }
  connections.startDraining();
  while (connections.size > 0 && performance.now() - started < t.maxMs) {
    await sleep(10);
    // Checked after the event loop's poll phase (setImmediate), never straight from a timer: after
    // a stall of this process, timers run before the sockets are read, and a request waiting in a
    // socket's buffer would not be seen yet, so its connection would pass for idle and be cut.
    await afterPoll();
    connections.closeIdle(t.idleMs);
  }
}

/** Where the metrics server listens, and its token. */
function metricsAccess(settings: Settings) {
  return { host: settings.metricsHost ?? '127.0.0.1', token: settings.metricsToken ?? null };
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

async function serve(settings: Settings, args: string[] = []): Promise<void> {
  const { values } = parseCommand('serve', args, { workers: { type: 'string' } });
  const workers =
    values.workers === 'auto'
      ? availableParallelism()
      : Number(values.workers ?? process.env.LRDS_WORKERS ?? 1);
  if (!Number.isInteger(workers) || workers < 1)
    fail(`--workers must be a positive integer or 'auto', got '${values.workers}'`);
  if (workers > 1 && cluster.isPrimary) return servePrimary(settings, workers);
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
  bar.stop();
  const { app } = service;
  const { refuseRequestsOn } = await import('../http/app.ts');
  const connections = trackConnections(app.server, refuseRequestsOn);
  await app.listen({ port: settings.port, host: settings.host });
  // A worker's metrics are served by the primary (aggregated); a lone process serves its own.
  const metricsServer =
    settings.metricsPort && workers === 1
      ? await (await import('../metrics.ts')).startMetricsServer(
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
    const { crowdedDefaultWarning } = await import('../access/keys.ts');
    const crowded = await crowdedDefaultWarning(service.store).catch(() => null);
    if (crowded) app.log.warn({ account: crowded.account, keys: crowded.keys }, crowded.message);
  }
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
  if (human) process.stderr.write(`${readyText(settings, live, performance.now() - started)}\n`);
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
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

async function seed(settings: Settings, args: string[]): Promise<void> {
  const { values } = parseCommand('seed', args, {
    profile: { type: 'string', default: 'default' },
    seed: { type: 'string' },
  });
  const profile = values.profile;
  if (profile !== 'default' && profile !== 'large')
    fail(`--profile must be default or large, got '${profile}'`);
  const { seedStore, DEFAULT_SEED } = await loadService();
  const seedValue = values.seed === undefined ? DEFAULT_SEED : Number(values.seed);
  if (!Number.isSafeInteger(seedValue) || seedValue < 0)
    fail(`--seed must be a non-negative integer, got '${values.seed}'`);
  const started = performance.now();
  const bar = progressBar(`Seeding ${profile}`);
  const info = await withStore(settings, (store) =>
    seedStore(
      store,
      profile,
      seedValue,
      (d, t) => bar.update(d, t),
      false,
      undefined,
      settings.sandboxHistoryDays,
    ),
  );
  bar.stop();
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  process.stderr.write(
    `Seeded ${info.marketCount} markets and ${info.positionCount} positions (profile ${profile}, seed ${seedValue}) in ${seconds} s.\n`,
  );
}

/** One line per source of an ingestion pass, on stderr; the items that failed under it. */
function printPass(run: import('../ingest/live.ts').SourceRun): void {
  // (An API source reads no block.)
  const at = Object.entries(run.state.lastBlock)
    .map(([, block]) => ` at block ${block}`)
    .join(',');
  if (run.ok) {
    const failed = run.items.filter((i) => !i.ok);
    process.stderr.write(
      `${run.source}: ok${at}: ${run.markets} markets, ${run.positions} positions` +
        (run.vaults > 0 ? `, ${run.vaults} vaults` : '') +
        (run.liquidations > 0 ? `, ${run.liquidations} liquidations` : '') +
        (failed.length > 0 ? `; ${failed.length} items not read:` : '') +
        '\n',
    );
    for (const f of failed.slice(0, 20)) process.stderr.write(`  - ${f.ok ? '' : f.error}\n`);
    if (failed.length > 20) process.stderr.write(`  - and ${failed.length - 20} more\n`);
    const noted = run.items.flatMap((i) => (i.ok && i.note ? [i.note] : []));
    if (noted.length > 0) process.stderr.write(`  ${noted.length} served in part:\n`);
    for (const n of noted.slice(0, 20)) process.stderr.write(`  - ${n}\n`);
    if (noted.length > 20) process.stderr.write(`  - and ${noted.length - 20} more\n`);
  } else {
    process.stderr.write(
      `${run.source}: FAILED (${run.state.consecutiveFailures} in a row): ${run.error}; its last data (${run.markets} markets) is kept\n`,
    );
  }
}

async function ingest(settings: Settings, args: string[]): Promise<void> {
  const { values } = parseCommand('ingest', args, { once: { type: 'boolean', default: false } });
  if (!settings.sourcesFile)
    fail('SOURCES_FILE is not set: name the sources file to read (see the README, "Real data")');
  const { loadSourcesFile, configuredSources } = await import('../ingest/chain/index.ts');
  const { errorText, ingestWithLease } = await import('../ingest/live.ts');
  const { systemClock } = await import('../domain/clock.ts');
  const sources = configuredSources(loadSourcesFile(settings.sourcesFile));
  const clock = systemClock();
  // The store's ingestion lease: one ingester per store, this command or a server (D15).
  const lease = {
    holder: `lrds-ingest:${hostname()}:${process.pid}`,
    ms: ingestLeaseMs(settings),
  };
  const held =
    'another process holds the ingestion lease of this store (a server with SOURCES_FILE, or lrds ingest)';
  await withStore(settings, async (store) => {
    try {
      if (values.once) {
        const pass = await ingestWithLease(sources, store, clock, lease, { onSource: printPass });
        if (!pass?.written) {
          process.stderr.write(`${held}: nothing read\n`);
          process.exitCode = 1;
          return;
        }
        const failed = pass.runs.filter((r) => !r.ok);
        if (pass.dataset)
          process.stderr.write(
            `Wrote ${pass.dataset.marketCount} markets and ${pass.dataset.positionCount} positions (dataset version ${pass.dataset.version}).\n`,
          );
        if (failed.length > 0) {
          process.stderr.write(
            `${failed.length} of ${pass.runs.length} sources failed: ${failed.map((r) => r.source).join(', ')}\n`,
          );
          process.exitCode = 1;
        }
        return;
      }
      let stopping = false;
      const stop = () => {
        stopping = true;
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      let standing = false;
      while (!stopping) {
        // A pass that fails as a whole (the store unreachable) is reported; the next one follows.
        const pass = await ingestWithLease(sources, store, clock, lease, { onSource: printPass }).catch(
          (err: unknown) => {
            process.stderr.write(`ingestion pass failed: ${redactSecrets(errorText(err))}\n`);
            return undefined;
          },
        );
        if (pass === null && !standing) process.stderr.write(`${held}: standing by\n`);
        standing = pass === null;
        for (let waited = 0; waited < ingestInterval(settings) && !stopping; waited += 100) await sleep(100);
      }
    } finally {
      await store.releaseIngestion(lease.holder).catch(() => undefined);
    }
  });
}

/** Columns padded to their widest cell, for a terminal. */
function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return `${[line(header), ...rows.map(line)].join('\n')}\n`;
}

const KEY_COMMANDS = {
  create: {
    options: {
      tier: { type: 'string' },
      test: { type: 'boolean' },
      account: { type: 'string' },
      name: { type: 'string' },
    },
    positionals: 0,
  },
  list: { options: { account: { type: 'string' }, json: { type: 'boolean' } }, positionals: 0 },
  revoke: { options: {}, positionals: 1 },
  'set-tier': { options: {}, positionals: 2 },
  move: { options: { account: { type: 'string' } }, positionals: 1 },
} as const satisfies Record<string, { options: OptionSpec; positionals: number }>;

async function keys(settings: Settings, args: string[]): Promise<void> {
  const [command, ...rest] = args;
  if (command === undefined || command === '--help' || command === '-h') help('keys');
  if (!Object.hasOwn(KEY_COMMANDS, command)) fail(`unknown keys command '${command}'\n\n${HELP.keys}`);
  const spec = KEY_COMMANDS[command as keyof typeof KEY_COMMANDS];
  const name = `keys ${command}` as keyof typeof HELP;
  const { values, positionals } = parseCommand(name, rest, spec.options as OptionSpec, spec.positionals) as {
    values: Record<string, string | boolean | undefined>;
    positionals: string[];
  };
  const str = (v: string | boolean | undefined) => (typeof v === 'string' ? v : undefined);
  const tiers = loadTiers(settings.tiersFile);
  const isTier = (t: string | undefined): t is TierId =>
    t !== undefined && (TIER_IDS as readonly string[]).includes(t);
  // Checked before the store is opened: a usage mistake needs no database.
  if (command === 'create' && !isTier(str(values.tier)))
    fail(`--tier must be one of ${TIER_IDS.join(', ')}\n\n${HELP['keys create']}`);
  if (command === 'revoke' && positionals.length !== 1) fail(HELP['keys revoke']);
  if (command === 'move' && positionals.length !== 1) fail(HELP['keys move']);
  if (command === 'move' && values.account !== undefined && str(values.account)!.trim() === '')
    fail('--account must name an account');
  if (command === 'create' && values.account !== undefined && str(values.account)!.trim() === '')
    fail('--account must name an account');
  if (command === 'set-tier' && (positionals.length !== 2 || !isTier(positionals[1])))
    fail(`usage: lrds keys set-tier ID ${TIER_IDS.join('|')}`);
  await withStore(settings, async (store) => {
    const [{ createKeyEvents }, { KeyService }] = await Promise.all([
      import('../scale.ts'),
      import('../access/keys.ts'),
    ]);
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
        const accountName = str(values.account);
        // One customer per account: without a name, the key gets an account of its own.
        const account =
          accountName === undefined ? await service.newAccount() : await service.ensureAccount(accountName);
        const { key } = await service.create({
          accountId: account.id,
          tier: tiers[str(values.tier) as TierId].id,
          mode: values.test === true ? 'test' : 'live',
          name: str(values.name) ?? null,
        });
        process.stdout.write(`${key}\n`);
        return;
      }
      case 'list': {
        const accountName = str(values.account);
        const account = accountName === undefined ? null : await store.findAccountByName(accountName);
        if (accountName !== undefined && !account) fail(`no account named '${accountName}'`);
        const list = await store.listKeys(account?.id);
        const names = new Map<string, string>();
        for (const k of list) {
          if (!names.has(k.accountId))
            names.set(k.accountId, (await store.getAccount(k.accountId))?.name ?? '?');
        }
        if (values.json === true) {
          const json = list.map((k) => ({
            account: names.get(k.accountId),
            id: k.id,
            prefix: k.prefix,
            mode: k.mode,
            tier: k.tier,
            name: k.name,
            accountId: k.accountId,
            createdAt: k.createdAt,
            revokedAt: k.revokedAt,
          }));
          process.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
          return;
        }
        const rows = list.map((k) => [
          names.get(k.accountId)!,
          k.id,
          k.prefix,
          k.mode,
          k.tier,
          k.revokedAt ? `revoked ${k.revokedAt}` : 'active',
          k.createdAt,
          k.name ?? '',
        ]);
        process.stdout.write(
          table(['ACCOUNT', 'ID', 'PREFIX', 'MODE', 'TIER', 'STATUS', 'CREATED', 'NAME'], rows),
        );
        return;
      }
      case 'revoke': {
        const id = positionals[0]!;
        const key = await store.getKey(id);
        if (!key) cannot(`no key with id '${id}'`);
        if (key.revokedAt) {
          process.stderr.write(`Key ${id} was already revoked at ${key.revokedAt}.\n`);
          return;
        }
        await service.revoke(id);
        process.stderr.write(`Revoked ${id}.\n`);
        return;
      }
      case 'set-tier': {
        const [id, tier] = positionals as [string, TierId];
        if (!(await service.setTier(id, tier))) cannot(`no key with id '${id}'`);
        process.stderr.write(`Key ${id} is now on the ${tier} tier.\n`);
        return;
      }
      case 'move': {
        const id = positionals[0]!;
        const key = await store.getKey(id);
        if (!key) cannot(`no key with id '${id}'`);
        const accountName = str(values.account);
        const account =
          accountName === undefined ? await service.newAccount() : await service.ensureAccount(accountName);
        if (account.id === key.accountId) {
          process.stderr.write(`Key ${id} is already in account ${account.name}.\n`);
          return;
        }
        await service.move(id, account.id);
        process.stderr.write(`Key ${id} is now in account ${account.name}.\n`);
        return;
      }
    }
  }
}

async function main(argv: string[]): Promise<void> {
  const [command, ...args] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (command === '--version' || command === '-v' || command === 'version') {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    const { API_VERSION } = await import('../http/app.ts');
    process.stdout.write(`lrds ${pkg.version} (API ${API_VERSION}, Node ${process.versions.node})\n`);
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
    case 'ingest':
      return ingest(settings, args);
    default:
      fail(`unknown command '${command}'\n\n${USAGE}`);
  }
}

/** A failure of the environment a user can fix (a port taken, a database unreachable): one line, no stack. */
function environmentProblem(err: unknown): string | null {
  const e = err as NodeJS.ErrnoException & { address?: string; port?: number };
  if (e?.code === 'EADDRINUSE')
    return `port ${e.port ?? ''} is already in use${e.address ? ` on ${e.address}` : ''}: stop the other server or set PORT`;
  if (e?.code === 'EACCES' && e.syscall === 'listen')
    return `no permission to listen on port ${e.port ?? ''}: set PORT above 1023`;
  if (e?.code === 'EADDRNOTAVAIL') return `HOST ${e.address ?? ''} is not an address of this machine`;
  if (e instanceof Error && e.name === 'StoreWriteError')
    return `${e.message} (free space on its filesystem, or set DATA_DIR to one with room)`;
  if (e?.code === 'ENOSPC')
    return `no space left on the device: ${e.path ?? e.message} (free space, or set DATA_DIR)`;
  if (e?.code === 'ECONNREFUSED')
    return `cannot connect to ${e.address ?? ''}:${e.port ?? ''}: is the database or Redis running? (${e.message})`;
  return null;
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (
    err instanceof UsageError ||
    (err instanceof Error && ['SettingsError', 'TierConfigError', 'SourcesConfigError'].includes(err.name))
  ) {
    process.stderr.write(`lrds: ${err.message}\n`);
    process.exit(2);
  }
  const problem =
    err instanceof CommandError ||
    (err instanceof Error && ['SourcesUnavailableError', 'StoreUnavailableError'].includes(err.name))
      ? (err as Error).message
      : environmentProblem(err);
  if (problem) {
    process.stderr.write(`lrds: ${problem}\n`);
    process.exit(1);
  }
  process.stderr.write(`lrds: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
