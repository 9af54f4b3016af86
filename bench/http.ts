/**
 * The HTTP benchmark: the service as users run it (`lrds serve` on the large sandbox) against
 * a bare node:http server that sends the very same response bytes, under the same load.
 */

import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { SANDBOX_PROFILES } from '../src/ingest/sandbox/index.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import {
  BENCH_DIR,
  CLI,
  freePort,
  log,
  median,
  procMemMiB,
  ROOT,
  runNode,
  settle,
  sig,
  spawnNode,
  stopChild,
} from './lib.ts';
import { type LoadRun, load } from './load.ts';
import { runStreaming, type StreamResults } from './stream.ts';

export const DATA_DIR = resolve(BENCH_DIR, '.data');

/**
 * Issue targets (large profile, simulation ticking, 32 connections): CPU ratio (raw CPU per
 * request / service CPU per request) >= 0.6 for search, detail and positions at risk, >= 0.5 for
 * the 1,000-market list; server-side p99 <= 2 ms for detail and positions.
 */
/**
 * Targets: 0.6 of bare Node's CPU for market detail and positions at risk, 0.5 for the large
 * answers (the 80 KB searches, the 1,000-market list), a server-side p99 of 2 ms for market detail.
 */
export const HTTP_TARGETS = { ratio: 0.6, largeRatio: 0.5, serverP99Ms: 2 } as const;

export interface HttpOptions {
  rounds: number;
  connections: number;
  /** Pause between healthy and the first run, for work deferred past start-up. */
  settleSec: number;
  /** Multiplies each route's request count (1 for the full run). */
  scale: number;
  /** The parts to run. */
  parts: { routes: boolean; streaming: boolean; workers: boolean; keys: boolean };
  /** The sandbox profile served (large by default). */
  profile: 'default' | 'large';
}

/** Market detail with more keys in the store: the bench key plus generated ones, to `keys` in all. */
export interface KeysResult {
  path: string;
  runs: {
    keys: number;
    raw: LoadRun;
    service: LoadRun;
    ratio: number;
    msToHealthy: number;
    rssMiB: number | null;
  }[];
}

export interface RouteResult {
  name: string;
  path: string;
  /** The path as printed in tables (a long market id shortened to {id}). */
  shown: string;
  bodyBytes: number;
  contentType: string;
  raw: LoadRun[];
  service: LoadRun[];
  /** Medians over the rounds. */
  median: {
    raw: Pick<LoadRun, 'cpuUsPerRequest' | 'reqPerSec'>;
    service: Pick<LoadRun, 'cpuUsPerRequest' | 'reqPerSec' | 'serverP50Ms' | 'serverP99Ms'>;
  };
  /** Raw CPU per request / service CPU per request. */
  ratio: number;
  target: string;
  pass: boolean;
  failures: number;
}

export interface WorkersResult {
  /** The route measured (market detail). */
  path: string;
  runs: { workers: number; redis: boolean; run: LoadRun }[];
  /** Requests a second with 2 workers / with 1, both on Redis. */
  throughputGain: number;
  /** Service CPU per request on Redis minus without it, one worker, µs. */
  redisAddedCpuUs: number;
}

export interface HttpResults {
  dataset: { profile: string; markets: number; positions: number; seededNow: boolean; seedMs: number | null };
  startup: {
    msToHealthy: number;
    rssMiBWhenHealthy: number | null;
    rssMiBSettled: number | null;
    peakRssMiB: number | null;
  };
  routes: RouteResult[];
  /** GET /liquidations?limit=500000 on the same server (bench/stream.ts). */
  streaming: StreamResults | null;
  workers: WorkersResult | null;
  keys: KeysResult | null;
  loadGenerator: string;
}

/** Seeds the profile into bench/.data unless it already holds it. */
async function ensureSeeded(
  env: NodeJS.ProcessEnv,
  profile: 'default' | 'large',
): Promise<HttpResults['dataset']> {
  const want = SANDBOX_PROFILES[profile];
  const store = new SqliteStore(join(DATA_DIR, 'lrds.db'));
  await store.migrate();
  let info = await store.datasetInfo();
  await store.close();
  const ok = (i: typeof info) =>
    i !== null &&
    i.kind === 'sandbox' &&
    i.profile === profile &&
    i.marketCount >= want.markets &&
    i.positionCount >= want.positions;
  if (ok(info)) {
    log(`dataset: ${profile} profile already seeded in ${DATA_DIR}`);
    return {
      profile,
      markets: info!.marketCount,
      positions: info!.positionCount,
      seededNow: false,
      seedMs: null,
    };
  }
  log(`seeding the ${profile} profile into ${DATA_DIR} (once; minutes: a year of history)`);
  const t0 = performance.now();
  await runNode([CLI, 'seed', '--profile', profile], env, { stderr: 'inherit' });
  const seedMs = Math.round(performance.now() - t0);
  const check = new SqliteStore(join(DATA_DIR, 'lrds.db'));
  info = await check.datasetInfo();
  await check.close();
  if (!ok(info)) throw new Error(`seeding did not leave the ${profile} profile in ${DATA_DIR}`);
  return {
    profile,
    markets: info!.marketCount,
    positions: info!.positionCount,
    seededNow: true,
    seedMs,
  };
}

/** config/tiers.json with every rate at 1,000,000/s and no quotas: the bench measures, never hits, limits. */
function writeTiers(dir: string): string {
  const json = JSON.parse(readFileSync(join(ROOT, 'config/tiers.json'), 'utf8'));
  for (const t of Object.values(json.tiers) as Record<string, unknown>[]) {
    t['ratePerSecond'] = 1_000_000;
    t['dailyQuota'] = null;
    t['monthlyQuota'] = null;
  }
  const file = join(dir, 'tiers.json');
  writeFileSync(file, JSON.stringify(json, null, 2));
  return file;
}

/** Starts `lrds serve`; resolves once GET /api/v1/health answers 200 (polled every 20 ms from spawn). */
async function startService(
  env: NodeJS.ProcessEnv,
  port: number,
  args: string[] = [],
): Promise<{ child: ChildProcess; msToHealthy: number; output: () => string }> {
  const t0 = performance.now();
  const child = spawnNode([CLI, 'serve', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (d: string) => {
    output = (output + d).slice(-8000);
  };
  child.stdout?.setEncoding('utf8').on('data', keep);
  child.stderr?.setEncoding('utf8').on('data', keep);
  let exited: string | null = null;
  child.on('exit', (code, signal) => {
    exited = String(code ?? signal);
  });
  const url = `http://127.0.0.1:${port}/api/v1/health`;
  for (;;) {
    if (exited !== null) throw new Error(`the service exited (${exited}) before it was healthy:\n${output}`);
    if (performance.now() - t0 > 300_000)
      throw new Error(`the service was not healthy within 300 s:\n${output}`);
    const polled = performance.now();
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      if (res.status === 200)
        return { child, msToHealthy: Math.round(performance.now() - t0), output: () => output };
    } catch {
      // not listening yet
    }
    const wait = 20 - (performance.now() - polled);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
}

/** Response headers the raw server repeats: all the service sent but those of the connection. */
const PER_CONNECTION = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length']);

async function startRaw(
  bodyFile: string,
  headersFile: string,
): Promise<{ child: ChildProcess; port: number }> {
  const child = spawnNode([join(BENCH_DIR, 'raw-server.ts'), bodyFile, headersFile]);
  let err = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    err += d;
  });
  const port = await new Promise<number>((res, rej) => {
    let out = '';
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const m = /PORT (\d+)/.exec(out);
      if (m) res(Number(m[1]));
    });
    child.on('exit', (code) => rej(new Error(`raw server exited (${code}): ${err}`)));
  });
  return { child, port };
}

const medianBy = <T>(runs: T[], f: (r: T) => number | null): number => {
  const xs = runs.map(f).filter((x): x is number => x !== null);
  return xs.length === 0 ? Number.NaN : median(xs);
};

function describe(target: 'raw' | 'service', name: string, round: number, r: LoadRun): string {
  return (
    `${name} round ${round} ${target.padEnd(7)} ${r.cpuUsPerRequest} µs CPU/request` +
    (r.serverP50Ms !== null && target === 'service'
      ? `, server p50 ${r.serverP50Ms} / p99 ${r.serverP99Ms} ms`
      : '') +
    `, ${Math.round(r.reqPerSec)} req/s${r.failures > 0 ? `, FAILURES: ${r.failures} ${JSON.stringify(r.otherStatus)}` : ''}`
  );
}

interface Route {
  name: string;
  path: string;
  shown?: string;
  /** Requests per measured run at scale 1: about 2 s of the service's CPU. */
  count: number;
  minRatio: number | null;
  p99: boolean;
}

async function measureRoute(
  route: Route,
  base: string,
  auth: Record<string, string>,
  pid: number,
  tmp: string,
  opts: HttpOptions,
  index: number,
): Promise<RouteResult> {
  const res = await fetch(base + route.path, { headers: auth });
  const body = Buffer.from(await res.arrayBuffer());
  if (res.status !== 200) throw new Error(`GET ${route.path} answered ${res.status}: ${body.toString()}`);
  const contentType = res.headers.get('content-type') ?? 'application/json; charset=utf-8';
  const bodyFile = join(tmp, `body-${index}.json`);
  const headersFile = join(tmp, `headers-${index}.json`);
  writeFileSync(bodyFile, body);
  writeFileSync(
    headersFile,
    JSON.stringify(Object.fromEntries([...res.headers].filter(([k]) => !PER_CONNECTION.has(k)))),
  );
  const raw = await startRaw(bodyFile, headersFile);
  try {
    const count = Math.max(200, Math.round(route.count * opts.scale));
    const load1 = { count, warmup: Math.round(count / 5), connections: opts.connections };
    const rawRuns: LoadRun[] = [];
    const serviceRuns: LoadRun[] = [];
    for (let round = 1; round <= opts.rounds; round++) {
      for (const target of ['raw', 'service'] as const) {
        const r =
          target === 'raw'
            ? await load(`http://127.0.0.1:${raw.port}${route.path}`, {}, { ...load1, pid: raw.child.pid! })
            : await load(base + route.path, auth, { ...load1, pid });
        (target === 'raw' ? rawRuns : serviceRuns).push(r);
        log(describe(target, route.name, round, r));
      }
    }
    const m = {
      raw: {
        cpuUsPerRequest: sig(
          medianBy(rawRuns, (r) => r.cpuUsPerRequest),
          3,
        ),
        reqPerSec: sig(
          medianBy(rawRuns, (r) => r.reqPerSec),
          4,
        ),
      },
      service: {
        cpuUsPerRequest: sig(
          medianBy(serviceRuns, (r) => r.cpuUsPerRequest),
          3,
        ),
        reqPerSec: sig(
          medianBy(serviceRuns, (r) => r.reqPerSec),
          4,
        ),
        serverP50Ms: sig(
          medianBy(serviceRuns, (r) => r.serverP50Ms),
          3,
        ),
        serverP99Ms: sig(
          medianBy(serviceRuns, (r) => r.serverP99Ms),
          3,
        ),
      },
    };
    const ratio = sig(m.raw.cpuUsPerRequest / m.service.cpuUsPerRequest, 3);
    const failures = [...rawRuns, ...serviceRuns].reduce((s, r) => s + r.failures, 0);
    const targets = [
      ...(route.minRatio === null ? [] : [`ratio ≥ ${route.minRatio}`]),
      ...(route.p99 ? [`server p99 ≤ ${HTTP_TARGETS.serverP99Ms} ms`] : []),
    ];
    return {
      name: route.name,
      path: route.path,
      shown: route.shown ?? route.path,
      bodyBytes: body.length,
      contentType,
      raw: rawRuns,
      service: serviceRuns,
      median: m,
      ratio,
      target: targets.length > 0 ? targets.join(', ') : 'none (recorded)',
      pass:
        failures === 0 &&
        (route.minRatio === null || ratio >= route.minRatio) &&
        (!route.p99 || m.service.serverP99Ms <= HTTP_TARGETS.serverP99Ms),
      failures,
    };
  } finally {
    await stopChild(raw.child);
  }
}

/**
 * `--workers` on Redis: the market detail route with one worker and with two (throughput and
 * CPU per request, all processes counted), and the CPU one worker adds per request for Redis.
 */
async function measureWorkers(
  env: NodeJS.ProcessEnv,
  port: number,
  key: string,
  path: string,
  noRedis: LoadRun,
  opts: HttpOptions,
): Promise<WorkersResult | null> {
  const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const count = Math.max(400, Math.round(40_000 * opts.scale));
  // Redis's own CPU (INFO cpu: used_cpu_user + used_cpu_sys). The server is shared: what other
  // clients make it do during the run is counted too.
  const { Redis } = await import('ioredis');
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  let redisCpuNs: (() => Promise<number>) | undefined;
  try {
    await redis.connect();
    redisCpuNs = async () => {
      const info = await redis.info('cpu');
      const num = (k: string) => Number(new RegExp(`^${k}:([0-9.]+)`, 'm').exec(info)?.[1] ?? Number.NaN);
      return (num('used_cpu_user') + num('used_cpu_sys')) * 1e9;
    };
  } catch (err) {
    log(`Redis INFO not readable, its CPU is not measured: ${(err as Error).message}`);
  }
  const runs: WorkersResult['runs'] = [{ workers: 1, redis: false, run: noRedis }];
  for (const workers of [1, 2]) {
    let service: Awaited<ReturnType<typeof startService>> | null = null;
    try {
      service = await startService({ ...env, SANDBOX_HISTORY_DAYS: '0', REDIS_URL: redisUrl }, port, [
        '--workers',
        String(workers),
      ]);
    } catch (err) {
      log(
        `--workers ${workers} on Redis (${redisUrl}) did not start, skipped: ${(err as Error).message.split('\n')[0]}`,
      );
      return null;
    }
    try {
      await new Promise((r) => setTimeout(r, opts.settleSec * 1000));
      const run = await load(
        `http://127.0.0.1:${port}${path}`,
        { authorization: `Bearer ${key}` },
        {
          count,
          warmup: Math.round(count / 5),
          connections: opts.connections,
          pid: service.child.pid!,
          ...(redisCpuNs ? { externalCpuNs: redisCpuNs } : {}),
        },
      );
      log(
        `${describe('service', `market detail, --workers ${workers}, Redis`, 1, run)}; per process ${JSON.stringify(run.perProcessUs ?? [])} µs, Redis ${run.externalUs ?? 'n/a'} µs`,
      );
      runs.push({ workers, redis: true, run });
    } finally {
      await stopChild(service.child, 12_000);
    }
  }
  redis.disconnect();
  const one = runs[1]!.run;
  const two = runs[2]!.run;
  return {
    path,
    runs,
    throughputGain: sig(two.reqPerSec / one.reqPerSec, 3),
    redisAddedCpuUs: sig(one.cpuUsPerRequest - noRedis.cpuUsPerRequest, 3),
  };
}

/** Keys the keys part adds are named so, and deleted when it ends. */
const BENCH_KEY_PREFIX = 'bench-scale-';

/** Adds generated live keys (free tier, the bench key's account) until the store holds `total`. */
function fillKeys(total: number, benchKey: string): void {
  const db = new DatabaseSync(join(DATA_DIR, 'lrds.db'), { timeout: 10_000 });
  try {
    const hash = createHash('sha256').update(benchKey).digest('hex');
    const owner = db.prepare('SELECT account_id FROM api_keys WHERE hash = ?').get(hash) as
      | { account_id: string }
      | undefined;
    if (!owner) throw new Error('the bench key is not in the store');
    const have = (db.prepare('SELECT count(*) AS n FROM api_keys').get() as { n: number }).n;
    const add = total - have;
    if (add <= 0) return;
    const from = (
      db.prepare(`SELECT count(*) AS n FROM api_keys WHERE id LIKE '${BENCH_KEY_PREFIX}%'`).get() as {
        n: number;
      }
    ).n;
    db.prepare(
      `WITH RECURSIVE n(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM n WHERE i < ?)
       INSERT INTO api_keys (id, account_id, hash, prefix, mode, tier, name, created_at)
       SELECT '${BENCH_KEY_PREFIX}' || i, ?, printf('%064x', i), 'lrds_bench', 'live', 'free', NULL,
              '2026-01-01T00:00:00.000Z' FROM n`,
    ).run(from + 1, from + add, owner.account_id);
  } finally {
    db.close();
  }
}

function dropFilledKeys(): void {
  const db = new DatabaseSync(join(DATA_DIR, 'lrds.db'), { timeout: 10_000 });
  try {
    db.prepare(`DELETE FROM api_keys WHERE id LIKE '${BENCH_KEY_PREFIX}%'`).run();
  } finally {
    db.close();
  }
}

/**
 * Market detail on a store holding 10, 10,000 and 1,000,000 keys (the bench key among them): the
 * service started on each, settled, then raw and service alternating, once each.
 */
async function measureKeys(
  env: NodeJS.ProcessEnv,
  port: number,
  key: string,
  detail: Route,
  tmp: string,
  opts: HttpOptions,
): Promise<KeysResult> {
  const runs: KeysResult['runs'] = [];
  const count = Math.max(400, Math.round(detail.count * opts.scale));
  const load1 = { count, warmup: Math.round(count / 5), connections: opts.connections };
  try {
    for (const total of opts.scale < 1 ? [10, 10_000] : [10, 10_000, 1_000_000]) {
      fillKeys(total, key);
      const service = await startService({ ...env, SANDBOX_HISTORY_DAYS: '0' }, port);
      try {
        await new Promise((r) => setTimeout(r, opts.settleSec * 1000));
        await settle(service.child.pid!, 10 * 60_000);
        const rssMiB = await procMemMiB(service.child.pid!);
        const base = `http://127.0.0.1:${port}`;
        const auth = { authorization: `Bearer ${key}` };
        const res = await fetch(base + detail.path, { headers: auth });
        const body = Buffer.from(await res.arrayBuffer());
        if (res.status !== 200) throw new Error(`GET ${detail.path} answered ${res.status}`);
        const bodyFile = join(tmp, 'keys-body.json');
        const headersFile = join(tmp, 'keys-headers.json');
        writeFileSync(bodyFile, body);
        writeFileSync(
          headersFile,
          JSON.stringify(Object.fromEntries([...res.headers].filter(([k]) => !PER_CONNECTION.has(k)))),
        );
        const raw = await startRaw(bodyFile, headersFile);
        try {
          const rawRun = await load(
            `http://127.0.0.1:${raw.port}${detail.path}`,
            {},
            { ...load1, pid: raw.child.pid! },
          );
          const run = await load(base + detail.path, auth, { ...load1, pid: service.child.pid! });
          log(
            `${describe('service', `market detail, ${total} keys`, 1, run)}; raw ${rawRun.cpuUsPerRequest} µs`,
          );
          runs.push({
            keys: total,
            raw: rawRun,
            service: run,
            ratio: sig(rawRun.cpuUsPerRequest / run.cpuUsPerRequest, 3),
            msToHealthy: service.msToHealthy,
            rssMiB,
          });
        } finally {
          await stopChild(raw.child);
        }
      } finally {
        await stopChild(service.child, 12_000);
      }
    }
  } finally {
    dropFilledKeys();
  }
  return { path: detail.path, runs };
}

export async function runHttp(opts: HttpOptions): Promise<HttpResults> {
  mkdirSync(DATA_DIR, { recursive: true });
  const tmp = mkdtempSync(join(tmpdir(), 'lrds-bench-'));
  let service: Awaited<ReturnType<typeof startService>> | null = null;
  try {
    const port = await freePort();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATA_DIR,
      TIERS_FILE: writeTiers(tmp),
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
    };
    delete env.DATABASE_URL;
    delete env.REDIS_URL;
    const dataset = await ensureSeeded(env, opts.profile);
    const key = (
      await runNode([CLI, 'keys', 'create', '--tier', 'enterprise', '--name', 'bench'], env)
    ).trim();
    if (!key.startsWith('lrds_')) throw new Error(`keys create printed no key: '${key}'`);

    log(`starting the service (lrds serve) on the ${opts.profile} dataset`);
    // The seed above wrote the year of history (its time is recorded); the measured server
    // does no background history work, which would share the cores with the load.
    service = await startService({ ...env, SANDBOX_HISTORY_DAYS: '0' }, port);
    const pid = service.child.pid!;
    const msToHealthy = service.msToHealthy;
    const rss = await procMemMiB(pid);
    log(`service healthy after ${service.msToHealthy} ms, RSS ${rss} MiB`);
    // Work the service defers past start-up (it builds the test-key sandbox once listening, and
    // reads two years of daily totals ahead: tens of seconds of CPU on a year of history) must
    // not land in the first measured run: let it settle first (under 10 % of a core over 2 s).
    await new Promise((r) => setTimeout(r, opts.settleSec * 1000));
    const settled = await settle(pid, 10 * 60_000);
    log(`service settled ${settled.ms} ms later${settled.timedOut ? ' (gave up waiting)' : ''}`);
    const rssSettled = await procMemMiB(pid);

    const base = `http://127.0.0.1:${port}`;
    const auth = { authorization: `Bearer ${key}` };
    const first = await fetch(`${base}/api/v1/markets?limit=1`, { headers: auth });
    if (first.status !== 200)
      throw new Error(`GET /markets?limit=1 answered ${first.status}: ${await first.text()}`);
    const marketId = ((await first.json()) as { data: { uniqueKey: string }[] }).data[0]!.uniqueKey;
    const detailPath = `/api/v1/markets/${encodeURIComponent(marketId)}`;
    const routes: Route[] = [
      {
        name: 'search "usdc"',
        path: '/api/v1/markets/search?query=usdc',
        count: 20_000,
        minRatio: HTTP_TARGETS.largeRatio,
        p99: false,
      },
      {
        name: 'search "wsteth weth"',
        path: '/api/v1/markets/search?query=wsteth%20weth',
        count: 20_000,
        minRatio: HTTP_TARGETS.largeRatio,
        p99: false,
      },
      {
        name: 'market detail',
        path: detailPath,
        shown: '/api/v1/markets/{id}',
        count: 40_000,
        minRatio: HTTP_TARGETS.ratio,
        p99: true,
      },
      {
        name: 'positions at risk (50)',
        path: '/api/v1/risk/positions-at-risk?limit=50',
        count: 40_000,
        minRatio: HTTP_TARGETS.ratio,
        p99: false,
      },
      {
        name: 'markets list (1000)',
        path: '/api/v1/markets?limit=1000',
        count: 2_000,
        minRatio: HTTP_TARGETS.largeRatio,
        p99: false,
      },
    ];
    const results: RouteResult[] = [];
    if (opts.parts.routes)
      for (const [i, route] of routes.entries())
        results.push(await measureRoute(route, base, auth, pid, tmp, opts, i));
    const peakRssMiB = await procMemMiB(pid, 'VmHWM');
    let streaming: StreamResults | null = null;
    if (opts.parts.streaming) {
      log('GET /liquidations?limit=500000: first byte, RSS growth, a client that stops reading');
      streaming = await runStreaming(base, key, pid);
    }
    let workers: WorkersResult | null = null;
    if (opts.parts.workers) {
      const noRedis =
        results.find((r) => r.path === detailPath)?.service.at(-1) ??
        (await load(base + detailPath, auth, {
          count: Math.max(400, Math.round(40_000 * opts.scale)),
          warmup: 2000,
          connections: opts.connections,
          pid,
        }));
      await stopChild(service.child, 12_000);
      service = null;
      log('market detail with --workers 1 and 2 on Redis');
      workers = await measureWorkers(env, port, key, detailPath, noRedis, opts);
    }
    let keys: KeysResult | null = null;
    if (opts.parts.keys) {
      if (service) await stopChild(service.child, 12_000);
      service = null;
      log('market detail with 10, 10,000 and 1,000,000 keys in the store');
      const detail = routes.find((r) => r.path === detailPath)!;
      keys = await measureKeys(env, port, key, detail, tmp, opts);
    }
    return {
      dataset,
      keys,
      startup: {
        msToHealthy,
        rssMiBWhenHealthy: rss,
        rssMiBSettled: rssSettled,
        peakRssMiB,
      },
      routes: results,
      streaming,
      workers,
      loadGenerator: `node:http client in the bench process, ${opts.connections} keep-alive connections, one request at a time each, on the same machine as the server; the server's CPU is read from /proc`,
    };
  } finally {
    if (service) await stopChild(service.child, 12_000);
    rmSync(tmp, { recursive: true, force: true });
  }
}
