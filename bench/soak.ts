/**
 * Soak: the real service under a steady mixed load for N minutes, checking invariants throughout.
 *
 *   node bench/soak.ts --minutes 10          (npm run soak -- --minutes 10)
 *   node bench/soak.ts --minutes 1 --load 0.5 --burst-every 5
 *   node bench/soak.ts --minutes 10 --faults (npm run soak -- --minutes 10 --faults)
 *
 * Starts `lrds serve` as a child process on a temporary DATA_DIR with a temporary TIERS_FILE
 * (launch rates; quotas unlimited except the Free daily quota, sized to run out halfway so that
 * DAILY_QUOTA_EXCEEDED is exercised; no cap on self-service key creation), creates 30 keys
 * (free/pro/enterprise x live/test), and drives every route (successes, 400s, 403s, 404s, 401s,
 * unknown paths). Each key sends an open-loop stream at `load` times its tier rate (random,
 * exponential gaps; at most 16 in flight) and, every `burst-every` seconds, a burst of 1.5 x its
 * rate at once, which the limiter must cut to the rate. Invariants:
 *
 * - no 5xx and no transport error, ever;
 * - rate limit, checked soundly from the client side: the server admits a request at some instant
 *   between the client's send and receive times. If R+1 admitted requests of one key (R = tier
 *   rate; a request is admitted when it passed the limiter and took a slot: anything but a 401, an
 *   unknown path or a 429, as a quota refusal gives its slot back) all lie inside one span [first
 *   send, last receive] shorter than
 *   1,000 ms, the server admitted R+1 within 1,000 ms: a violation. The converse cannot be proven
 *   from outside (latency spreads instants), so the admitted rate is also reported against R;
 *   X-RateLimit-Remaining must be in [0, R) on admitted answers and 0 on rate-limit 429s;
 * - quotas exact: after the load, each key's `/client/quota` daily `used` equals the counted
 *   requests its client got an answer to (every answer on a non-/client route except a rate-limit
 *   429: 200, 400, 403, 404 MARKET_NOT_FOUND and quota 429s), and monthly `used` the same minus
 *   the daily-quota refusals (they do not touch the monthly counter);
 * - memory flat: the server's VmRSS every 5 s; start, median, max and growth over the last half;
 *   grown only if the last half both rises and peaks above the first half's peak (GC sawtooth)
 *   (runs of 5 minutes or more fail when the last half grows by more than 64 MiB and 10 %);
 * - a clean exit: SIGTERM, exit code 0.
 *
 * Fault mode (`--faults`) runs the service scaled out, as in production: `lrds serve --workers 2`
 * (INSTANCES=2) on a fresh PostgreSQL database reached through a TCP proxy of bench/faults.ts, and a
 * private redis-server. Over the run it kills Redis (kill -9) and restarts it EMPTY on the same
 * port `--redis-down` seconds later (20 s for 10 minutes), at 15 % and 60 % of the run, and cuts
 * the network to PostgreSQL for `--pg-cut` seconds (10 s for 10 minutes; the proxy holds every
 * byte both ways without closing anything) at 35 % and 80 %. Every fault is logged with its time.
 * The Pro daily quota is sized to run out during the second Redis outage and the Free one during
 * the first: a quota crossed while counted locally is the hardest case. The invariants become:
 *
 * - no 5xx and no transport error, except 503 SERVICE_UNAVAILABLE to requests that cannot be
 *   answered without the store while PostgreSQL is cut (in flight between the cut and 2 s after
 *   it ends): `/client/*` routes, and keys the answering worker had not verified yet. Those are
 *   reported by route and fault; any other 5xx is a violation, with the key, worker and instants;
 * - the rate check above, over both workers, reported by fault phase (start, during, end);
 * - quotas: no key served more counted answers than its daily quota (answers let through by the
 *   quota); counting is at least once, so `used` must be at least the counted answers (else a
 *   count was lost) and may exceed them only by the key's counted requests that were in flight
 *   when Redis was lost or came back (a worker's own log says when, within 100 ms); the store's
 *   count for the day (`/client/usage`) is reported next to them and must not be below the
 *   counted answers (above them is reported, by route, not judged); a quota refusal answered from Redis reports the key's count (`used`), which
 *   must not be below the counted answers received before it was sent, so a lost count is also
 *   dated (between the last consistent refusal and the first that is not);
 * - memory: VmRSS of the primary and every worker, summed, every 5 s; a worker replaced is a
 *   violation;
 * - SIGTERM: the primary exits 0 and no worker is left.
 *
 * Prints a summary table and writes bench/results/soak-<date>.json (soak-faults-<date>.json in
 * fault mode). Exit status 1 on any violation.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { alive, childPids, PrivateRedis, ScratchDatabase, TcpProxy } from './faults.ts';
import {
  BENCH_DIR,
  CLI,
  fmt,
  freePort,
  log,
  machine,
  median,
  procMemMiB,
  quantileSorted,
  ROOT,
  runNode,
  sig,
  spawnNode,
} from './lib.ts';

const USAGE = `usage: node bench/soak.ts --minutes N [--load FRACTION_OF_RATE] [--burst-every S] [--keys-per-group K]
                          [--faults [--workers N] [--redis-down S] [--pg-cut S] [--pg-url URL]]

  --faults         scaled out on PostgreSQL and Redis (lrds serve --workers N, INSTANCES=N),
                   Redis killed and restarted empty at 15 % and 60 %, PostgreSQL cut at 35 % and 80 %
  --workers N      workers of lrds serve in fault mode (default 2)
  --redis-down S   seconds Redis stays down (default: 20 for 10 minutes, proportional, 5 to 20)
  --pg-cut S       seconds PostgreSQL stays cut (default: 10 for 10 minutes, proportional, 5 to 10)
  --pg-url URL     a PostgreSQL database to create the scratch one from
                   (default $SOAK_PG_URL or postgres://postgres@127.0.0.1:5432/postgres)`;

const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    load: { type: 'string', default: '0.15' },
    'burst-every': { type: 'string', default: '10' },
    'keys-per-group': { type: 'string', default: '5' },
    faults: { type: 'boolean', default: false },
    workers: { type: 'string' },
    'redis-down': { type: 'string' },
    'pg-cut': { type: 'string' },
    'pg-url': { type: 'string' },
  },
});
function usage(problem: string): never {
  process.stderr.write(`${problem}\n${USAGE}\n`);
  process.exit(2);
}
const MINUTES = Number(args.minutes);
const LOAD = Number(args.load);
const BURST_EVERY_MS = Number(args['burst-every']) * 1000;
const PER_GROUP = Number(args['keys-per-group']);
if (!(MINUTES > 0) || !(LOAD > 0) || !(BURST_EVERY_MS > 0) || !Number.isInteger(PER_GROUP) || PER_GROUP < 1) {
  usage('bad arguments');
}
const FAULTS = args.faults;
if (!FAULTS && (args.workers ?? args['redis-down'] ?? args['pg-cut'] ?? args['pg-url']) !== undefined) {
  usage('--workers, --redis-down, --pg-cut and --pg-url go with --faults');
}
const WORKERS = Number(args.workers ?? (FAULTS ? 2 : 1));
if (!Number.isInteger(WORKERS) || WORKERS < 1) usage('--workers must be a positive integer');
const DURATION_MS = MINUTES * 60_000;
const TIERS = ['free', 'pro', 'enterprise'] as const;
type Tier = (typeof TIERS)[number];
type Mode = 'live' | 'test';

// ---- fault plan -----------------------------------------------------------------------------

interface FaultPlan {
  label: string;
  kind: 'redis' | 'pg';
  /** From the start of the load, ms. */
  atMs: number;
  durationMs: number;
}
const seconds = (v: string | undefined, name: string, def: number): number => {
  if (v === undefined) return def;
  const n = Number(v);
  if (!(n > 0)) usage(`--${name} must be a positive number of seconds`);
  return n * 1000;
};
const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));
const REDIS_DOWN_MS = seconds(args['redis-down'], 'redis-down', clamp(DURATION_MS / 30, 5000, 20_000));
const PG_CUT_MS = seconds(args['pg-cut'], 'pg-cut', clamp(DURATION_MS / 60, 5000, 10_000));
/** A 503 in flight up to this long after a cut ends is still the cut's (pools reconnect, held bytes drain). */
const PG_GRACE_MS = 2000;
const at = (fraction: number) => Math.round((fraction * DURATION_MS) / 100) * 100;
const PLAN: FaultPlan[] = FAULTS
  ? [
      { label: 'Redis outage 1', kind: 'redis', atMs: at(0.15), durationMs: REDIS_DOWN_MS },
      { label: 'PostgreSQL cut 1', kind: 'pg', atMs: at(0.35), durationMs: PG_CUT_MS },
      { label: 'Redis outage 2', kind: 'redis', atMs: at(0.6), durationMs: REDIS_DOWN_MS },
      { label: 'PostgreSQL cut 2', kind: 'pg', atMs: at(0.8), durationMs: PG_CUT_MS },
    ]
  : [];
PLAN.forEach((f, i) => {
  const next = PLAN[i + 1]?.atMs ?? DURATION_MS;
  if (f.atMs + f.durationMs + 3000 > next) {
    usage(
      `the faults do not fit in ${MINUTES} min (${f.label} would end less than 3 s before the next step): lengthen --minutes or shorten --redis-down / --pg-cut`,
    );
  }
});

// ---- violations -------------------------------------------------------------------------------

/** Violations, grouped by message, with how often each happened and a few samples of evidence. */
const failureCounts = new Map<string, number>();
const evidence = new Map<string, string[]>();
function fail(message: string, detail?: string): void {
  failureCounts.set(message, (failureCounts.get(message) ?? 0) + 1);
  if (detail !== undefined) {
    const list = evidence.get(message) ?? [];
    if (list.length < 5) list.push(detail);
    evidence.set(message, list);
  }
}

// ---- the service ----------------------------------------------------------------------------

const dataDir = mkdtempSync(join(tmpdir(), 'lrds-soak-'));
const tiersFile = join(dataDir, 'tiers.json');
const tierTable = JSON.parse(readFileSync(join(ROOT, 'config/tiers.json'), 'utf8'));
const RATE: Record<Tier, number> = {
  free: tierTable.tiers.free.ratePerSecond,
  pro: tierTable.tiers.pro.ratePerSecond,
  enterprise: tierTable.tiers.enterprise.ratePerSecond,
};

/** The mixed load of a keyed client: [weight, method, path, counted]. /client is rate limited, never counted. */
const MIX_TEMPLATE: [number, string, string, boolean][] = [
  [6, 'GET', '/api/v1/markets?limit=10', true],
  [2, 'GET', '/api/v1/markets?chainIds=1,8453&protocol=morpho&limit=20', true],
  [5, 'GET', '/api/v1/markets/search?query=weth&limit=10', true],
  [2, 'GET', '/api/v1/markets/search?query=wsteth%20weth&chainIds=1&limit=10', true],
  [4, 'GET', '/api/v1/markets/{eth}', true],
  [2, 'GET', '/api/v1/markets/{other}', true], // Free: 403 CHAIN_FORBIDDEN
  [2, 'GET', '/api/v1/markets/morpho-1-0xdeadbeef', true], // 404 MARKET_NOT_FOUND
  [1, 'GET', '/api/v1/markets/not-a-market-id', true], // 400
  [1, 'GET', '/api/v1/markets/search', true], // 400: query required
  [1, 'GET', '/api/v1/markets?limit=0', true], // 400
  [4, 'GET', '/api/v1/risk/positions-at-risk?limit=10', true], // Free: 403 TIER_FORBIDDEN
  [1, 'GET', '/api/v1/risk/positions-at-risk?healthFactorThreshold=99', true], // 400
  [1, 'GET', '/api/v1/client/quota', false],
  [1, 'GET', '/api/v1/client/usage', false],
  [1, 'GET', '/api/v1/client/profile', false],
];
const MIX_TOTAL = MIX_TEMPLATE.reduce((s, m) => s + m[0], 0);
const COUNTED_SHARE = MIX_TEMPLATE.reduce((s, m) => s + (m[3] ? m[0] : 0), 0) / MIX_TOTAL;

/**
 * A daily quota that runs out about `atMs` into the load: a key is admitted about load x rate
 * per second plus one rate's worth per burst, COUNTED_SHARE of it counted.
 */
function quotaRunningOutAt(tier: Tier, atMs: number, floor: number): number {
  const admittedPerS = RATE[tier] * LOAD + (RATE[tier] * 1000) / BURST_EVERY_MS;
  return Math.max(floor, Math.round((admittedPerS * COUNTED_SHARE * atMs) / 1000));
}
const midOf = (f: FaultPlan) => f.atMs + f.durationMs / 2;
// Plain soak: the Free quota runs out halfway. Fault mode: the Free quota during the first Redis
// outage, the Pro quota during the second.
const FREE_DAILY = FAULTS
  ? quotaRunningOutAt('free', midOf(PLAN[0]!), 10)
  : quotaRunningOutAt('free', DURATION_MS / 2, 20);
const PRO_DAILY = FAULTS ? quotaRunningOutAt('pro', midOf(PLAN[2]!), 20) : null;
const DAILY: Record<Tier, number | null> = { free: FREE_DAILY, pro: PRO_DAILY, enterprise: null };
for (const t of TIERS) {
  tierTable.tiers[t].dailyQuota = DAILY[t];
  tierTable.tiers[t].monthlyQuota = null;
  // The soak's keys are made over POST /client/api-keys from one account per tier.
  tierTable.tiers[t].maxKeysPerAccount = null;
  tierTable.tiers[t].keyCreationsPerDay = null;
}
writeFileSync(tiersFile, JSON.stringify(tierTable, null, 2));

// Fault mode: a scratch database behind the proxy, and a Redis of our own.
const PG_ADMIN_URL =
  args['pg-url'] ?? process.env.SOAK_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
let db: ScratchDatabase | null = null;
let redis: PrivateRedis | null = null;
let proxy: TcpProxy | null = null;
process.on('exit', () => db?.dropSync()); // an interrupted run leaves no database behind
if (FAULTS) {
  db = await ScratchDatabase.create(PG_ADMIN_URL);
  redis = await PrivateRedis.create();
  const pg = new URL(PG_ADMIN_URL);
  proxy = await TcpProxy.start({ host: pg.hostname || '127.0.0.1', port: Number(pg.port || 5432) });
}
async function teardown(): Promise<void> {
  await proxy?.close().catch(() => {});
  await redis?.stop().catch(() => {});
  await db?.drop().catch((e: Error) => log(`dropping the scratch database ${db?.name}: ${e.message}`));
  rmSync(dataDir, { recursive: true, force: true });
}

const port = await freePort();
const env: NodeJS.ProcessEnv = {
  ...process.env,
  DATA_DIR: dataDir,
  TIERS_FILE: tiersFile,
  PORT: String(port),
  HOST: '127.0.0.1',
  LOG_LEVEL: 'warn',
  DATABASE_URL: FAULTS ? proxy!.url(db!.url) : '',
  REDIS_URL: FAULTS ? redis!.url : '',
  INSTANCES: FAULTS ? String(WORKERS) : '',
};
// The CLI (set-up only) goes straight to the database, not through the proxy.
const cliEnv: NodeJS.ProcessEnv = FAULTS ? { ...env, DATABASE_URL: db!.url } : env;
const BASE = `http://127.0.0.1:${port}`;

log(
  `soak: ${MINUTES} min, ${PER_GROUP * 6} keys at ${LOAD} x their rate, bursts every ${BURST_EVERY_MS / 1000} s, data in ${dataDir}`,
);
if (FAULTS) {
  log(
    `fault mode: lrds serve --workers ${WORKERS} (INSTANCES=${WORKERS}), PostgreSQL database ${db!.name} through proxy :${proxy!.port}, redis-server :${redis!.port}; daily quotas Free ${FREE_DAILY}, Pro ${PRO_DAILY}`,
  );
  for (const f of PLAN) log(`  plan: ${f.label} at ${f.atMs / 1000} s for ${f.durationMs / 1000} s`);
}
const rootKeys = Object.fromEntries(
  await Promise.all(
    TIERS.map(
      async (t) => [t, (await runNode([CLI, 'keys', 'create', '--tier', t], cliEnv)).trim()] as const,
    ),
  ),
) as Record<Tier, string>;

const server = spawnNode(FAULTS ? [CLI, 'serve', '--workers', String(WORKERS)] : [CLI, 'serve'], {
  env,
  stdio: ['ignore', FAULTS ? 'pipe' : 'ignore', 'pipe'],
});
let serverStderr = '';
/** Lines of the primary saying a worker died (it restarts it). */
const workerDeaths: string[] = [];
/**
 * Warnings and errors of the server: pino JSON on stdout (pid and time from the line), and lines
 * on stderr (timed on arrival; pid 0: unknown), with their instant on our clock.
 */
interface LogEvent {
  at: number;
  pid: number;
  level: number;
  msg: string;
  err?: string;
}
const logEvents: LogEvent[] = [];
const logCounts = new Map<string, number>();
function record(ev: LogEvent): void {
  logCounts.set(ev.msg, (logCounts.get(ev.msg) ?? 0) + 1);
  if (logEvents.length < 20_000) logEvents.push(ev);
}
let stderrRest = '';
server.stderr?.setEncoding('utf8').on('data', (d: string) => {
  serverStderr = (serverStderr + d).slice(-20_000);
  const lines = (stderrRest + d).split('\n');
  stderrRest = lines.pop() ?? '';
  for (const line of lines) {
    if (/worker \d+ (exited|failed)/.test(line)) workerDeaths.push(line.trim());
    // Backend warnings written before (or without) the app's logger: `message {json}`.
    const m = /^([^{]+?) (\{.*\})$/.exec(line);
    if (m) record({ at: performance.now(), pid: 0, level: 40, msg: m[1]!, err: m[2]!.slice(0, 200) });
  }
});

let stdoutRest = '';
server.stdout?.setEncoding('utf8').on('data', (d: string) => {
  const lines = (stdoutRest + d).split('\n');
  stdoutRest = lines.pop() ?? '';
  for (const line of lines) {
    let j: { time?: number; pid?: number; level?: number; msg?: unknown; err?: unknown };
    try {
      j = JSON.parse(line);
    } catch {
      continue;
    }
    if (typeof j.msg !== 'string' || typeof j.time !== 'number') continue;
    const err =
      typeof j.err === 'string'
        ? j.err
        : typeof j.err === 'object' && j.err !== null
          ? String((j.err as { message?: unknown }).message ?? '')
          : undefined;
    const ev: LogEvent = {
      at: j.time - performance.timeOrigin,
      pid: j.pid ?? 0,
      level: j.level ?? 0,
      msg: j.msg,
    };
    if (err) ev.err = err.slice(0, 200);
    record(ev);
  }
});

let expectExit = false;
const serverExit = new Promise<{ code: number | null; signal: string | null }>((res) =>
  server.on('exit', (code, signal) => {
    if (!expectExit) {
      log(
        `the server exited during the soak (code ${code}, signal ${signal}):\n${serverStderr.slice(-5000)}`,
      );
      void teardown().finally(() => process.exit(1));
      return;
    }
    res({ code, signal });
  }),
);
{
  const deadline = performance.now() + (FAULTS ? 180_000 : 60_000);
  for (;;) {
    const r = await fetch(`${BASE}/api/v1/health`).catch(() => null);
    if (r?.status === 200) break;
    if (server.exitCode !== null) throw new Error(`server exited at start-up:\n${serverStderr}`);
    if (performance.now() > deadline) throw new Error('server not healthy in time');
    await sleep(100);
  }
}

/** The answering process, from the X-Request-Id prefix (random per process). */
function workerOf(requestId: string | string[] | undefined): string | undefined {
  return typeof requestId === 'string' ? requestId.slice(4, 12) : undefined;
}
/** Every worker answers before the load starts (connections go round-robin). */
const workerIds = new Set<string>();
{
  const deadline = performance.now() + 60_000;
  while (workerIds.size < WORKERS) {
    if (performance.now() > deadline) throw new Error(`only ${workerIds.size} of ${WORKERS} workers answer`);
    const id = await new Promise<string | undefined>((ok) => {
      http
        .get({ host: '127.0.0.1', port, path: '/api/v1/health', agent: false }, (r) => {
          r.resume();
          r.on('end', () => ok(workerOf(r.headers['x-request-id'])));
        })
        .on('error', () => ok(undefined));
    });
    if (id) workerIds.add(id);
    else await sleep(100);
  }
}
const workerPids = FAULTS ? childPids(server.pid!) : [];
// An interrupted run ends the workers too (the primary is ended by lib.ts).
process.on('exit', () => {
  for (const pid of workerPids) if (alive(pid)) process.kill(pid, 'SIGKILL');
});
log(`server healthy${FAULTS ? `: primary ${server.pid}, workers ${workerPids.join(', ')}` : ''}`);

// ---- HTTP client ------------------------------------------------------------------------------

interface Answer {
  status: number;
  error?: string;
  /** The error message of a 5xx. */
  message?: string;
  remaining?: number;
  /** `used` of a quota refusal: the key's count after this request. */
  used?: number;
  sent: number;
  received: number;
  transport?: string;
  worker?: string;
}

/** A request without an answer after this long is a transport error. */
const ANSWER_TIMEOUT_MS = 30_000;

function request(
  agent: http.Agent,
  method: string,
  path: string,
  key?: string,
  body?: string,
): Promise<Answer> {
  const sent = performance.now();
  return new Promise((resolveAnswer) => {
    const headers: Record<string, string> = {};
    if (key !== undefined) headers.authorization = `Bearer ${key}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let settled = false;
    const settle = (a: Answer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolveAnswer(a);
    };
    const transport = (e: Error) =>
      settle({ status: 0, sent, received: performance.now(), transport: e.message });
    const req = http.request({ agent, host: '127.0.0.1', port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const received = performance.now();
        const status = res.statusCode ?? 0;
        const a: Answer = { status, sent, received };
        const rem = res.headers['x-ratelimit-remaining'];
        if (rem !== undefined) a.remaining = Number(rem);
        const worker = workerOf(res.headers['x-request-id']);
        if (worker) a.worker = worker;
        if (status >= 300) {
          try {
            const parsed = JSON.parse(Buffer.concat(chunks).toString());
            a.error = parsed.error;
            if (status >= 500) a.message = String(parsed.message).slice(0, 200);
            if (typeof parsed.used === 'number') a.used = parsed.used;
          } catch {
            a.error = 'unparsable';
          }
        }
        settle(a);
      });
      res.on('error', transport);
    });
    const timer = setTimeout(
      () => req.destroy(new Error(`no answer within ${ANSWER_TIMEOUT_MS / 1000} s`)),
      ANSWER_TIMEOUT_MS,
    );
    req.on('error', transport);
    req.end(body);
  });
}

/** A route for comparisons: path parameters (`{id}`, `:id`) as `*`. */
function routeKey(route: string): string {
  return route.replace(/\{[^}/]+\}|:[^/]+/g, '*');
}

/** Route of a path, for reports: no query, ids as placeholders. */
function routeOf(path: string): string {
  const p = path.split('?')[0]!;
  if (/^\/api\/v1\/markets\/(?!search$)[^/]+$/.test(p)) return '/api/v1/markets/{marketId}';
  if (/^\/api\/v1\/client\/api-keys\/[^/]+$/.test(p)) return '/api/v1/client/api-keys/{keyId}';
  return p;
}

// ---- keys ---------------------------------------------------------------------------------------

interface Admitted {
  sent: number;
  received: number;
  worker: string | undefined;
}

interface KeyRun {
  key: string;
  /** `tier/mode#n`, for reports. */
  label: string;
  /** The first 14 characters, as listings show them. */
  prefix: string;
  tier: Tier;
  mode: Mode;
  rate: number;
  agent: http.Agent;
  /** Send and receive instants of answers that passed the limiter. */
  admitted: Admitted[];
  counted: number;
  /** Counted answers (passed the limiter on a counted route), quota refusals included. */
  countedLog: (Admitted & { refused: boolean })[];
  /** Daily-quota refusals with the count they reported. */
  refusals: { sent: number; received: number; used: number }[];
  /** Rate-limit refusals on counted routes (they must not be counted), for over-count evidence. */
  rateLimitedCounted: { sent: number; received: number }[];
  dailyRefusals: number;
  monthlyRefusals: number;
  byOutcome: Map<string, number>;
  remainingViolations: number;
  /** Worker -> first instant it answered this key after authenticating it. */
  seenBy: Map<string, number>;
  quota?: { daily: number; monthly: number };
  /** Fault mode: the store's count of the day (`/client/usage`). */
  stored?: number;
  /** Counted answers per route (`GET /api/v1/markets/*`), to compare with the store's endpoints. */
  countedByRoute: Map<string, number>;
  /** Routes where the store's count differs from the counted answers: stored - counted. */
  endpointDiff?: Record<string, number>;
}

const runs: KeyRun[] = [];
function addRun(key: string, tier: Tier, mode: Mode): void {
  const n = runs.filter((r) => r.tier === tier && r.mode === mode).length + 1;
  runs.push({
    key,
    label: `${tier}/${mode}#${n}`,
    prefix: key.slice(0, 14),
    tier,
    mode,
    rate: RATE[tier],
    // Idle sockets are dropped after 4 s, before the server's 5 s keep-alive timeout: reusing a
    // socket the server is closing would be a client-side ECONNRESET, not a server fault.
    agent: new http.Agent({ keepAlive: true, timeout: 4000 }),
    admitted: [],
    counted: 0,
    countedLog: [],
    refusals: [],
    rateLimitedCounted: [],
    dailyRefusals: 0,
    monthlyRefusals: 0,
    byOutcome: new Map(),
    remainingViolations: 0,
    seenBy: new Map(),
    countedByRoute: new Map(),
  });
}

// Each tier's root key (live, from the CLI) creates the others over the API, so the 30 keys
// come up in seconds rather than 30 CLI runs.
const setupAgent = new http.Agent({ keepAlive: true });
for (const tier of TIERS) {
  addRun(rootKeys[tier], tier, 'live');
  for (const mode of ['live', 'test'] as const) {
    for (let i = mode === 'live' ? 1 : 0; i < PER_GROUP; i++) {
      for (;;) {
        const res = await new Promise<{ status: number; body: string }>((ok) => {
          const req = http.request(
            {
              agent: setupAgent,
              host: '127.0.0.1',
              port,
              method: 'POST',
              path: '/api/v1/client/api-keys',
              headers: { authorization: `Bearer ${rootKeys[tier]}`, 'content-type': 'application/json' },
            },
            (r) => {
              let b = '';
              r.setEncoding('utf8').on('data', (d: string) => {
                b += d;
              });
              r.on('end', () => ok({ status: r.statusCode ?? 0, body: b }));
            },
          );
          req.end(JSON.stringify({ name: `soak-${tier}-${mode}-${i}`, mode }));
        });
        if (res.status === 201) {
          addRun(JSON.parse(res.body).data.key, tier, mode);
          break;
        }
        if (res.status !== 429) throw new Error(`creating a key: ${res.status} ${res.body}`);
        await sleep(250);
      }
    }
  }
}
setupAgent.destroy();
await sleep(1100); // the set-up requests leave every rate window
log(`${runs.length} keys ready`);

// Market ids for the detail route: one on Ethereum, one elsewhere (CHAIN_FORBIDDEN for Free).
const enterpriseKey = rootKeys.enterprise;
const ids = await (async () => {
  const list = await fetch(`${BASE}/api/v1/markets?limit=200&chainIds=1,8453,42161`, {
    headers: { authorization: `Bearer ${enterpriseKey}` },
  });
  if (list.status !== 200) throw new Error(`listing markets: ${list.status} ${await list.text()}`);
  const data = ((await list.json()) as { data: { uniqueKey: string; chainId: number }[] }).data;
  const eth = data.find((m) => m.chainId === 1)?.uniqueKey;
  const other = data.find((m) => m.chainId !== 1)?.uniqueKey;
  if (!eth || !other) throw new Error('the sandbox has no market on Ethereum or on another chain');
  return { eth, other };
})();
{
  // that list request was counted
  const r = runs.find((x) => x.key === enterpriseKey)!;
  r.counted++;
  r.countedByRoute.set('GET /api/v1/markets', 1);
}
await sleep(1100);

const MIX = MIX_TEMPLATE.map(
  ([w, method, path, counted]) =>
    [w, method, path.replace('{eth}', ids.eth).replace('{other}', ids.other), counted] as const,
);
function pick(): [string, string, boolean] {
  let r = Math.random() * MIX_TOTAL;
  for (const [w, method, path, counted] of MIX) {
    r -= w;
    if (r < 0) return [method, path, counted];
  }
  return ['GET', '/api/v1/markets', true];
}

// ---- invariants recorded as the load runs -------------------------------------------------------

const t0 = performance.now();
const endAt = t0 + DURATION_MS;
let stopping = false;
/** Seconds since the start of the load, for logs and reports. */
const rel = (t: number) => sig((t - t0) / 1000, 4);

/** A 5xx, judged after the run (in fault mode, against the fault windows). */
interface ServerError {
  status: number;
  error?: string;
  message?: string;
  route: string;
  sent: number;
  received: number;
  worker?: string;
  /** It carried rate-limit headers: it passed the limiter. */
  limited: boolean;
  key: string | null;
  /** The answering worker had authenticated this key before the request was sent. */
  seenBefore: boolean;
}
const serverErrors: ServerError[] = [];
const statusCounts = new Map<string, number>();
const latencies: number[] = [];
/** Fault mode: keyed answers' instants, for latency by fault phase (data routes vs /client). */
const timings: { sent: number; received: number; client: boolean }[] = [];
function tally(a: Answer, path: string, run?: KeyRun): void {
  const k = a.status === 0 ? `transport: ${a.transport}` : `${a.status}${a.error ? ` ${a.error}` : ''}`;
  statusCounts.set(k, (statusCounts.get(k) ?? 0) + 1);
  if (a.status === 0)
    fail(
      `transport error: ${a.transport}`,
      `${run?.label ?? 'no key'} ${routeOf(path)} sent at ${rel(a.sent)} s, failed at ${rel(a.received)} s`,
    );
  else if (a.status >= 500) {
    const e: ServerError = {
      status: a.status,
      route: routeOf(path),
      sent: a.sent,
      received: a.received,
      limited: a.remaining !== undefined,
      key: run?.label ?? null,
      seenBefore:
        run !== undefined && a.worker !== undefined && (run.seenBy.get(a.worker) ?? Infinity) < a.sent,
    };
    if (a.error !== undefined) e.error = a.error;
    if (a.message !== undefined) e.message = a.message;
    if (a.worker !== undefined) e.worker = a.worker;
    serverErrors.push(e);
  }
  if (a.status !== 0 && latencies.length < 2_000_000) latencies.push(a.received - a.sent);
  if (FAULTS && run && a.status !== 0 && timings.length < 2_000_000)
    timings.push({ sent: a.sent, received: a.received, client: path.startsWith('/api/v1/client/') });
}

/** One request of a key, recorded. */
async function one(run: KeyRun): Promise<void> {
  const [method, path, counted] = pick();
  const a = await request(run.agent, method, path, run.key);
  tally(a, path, run);
  const outcome = a.error ?? String(a.status);
  run.byOutcome.set(outcome, (run.byOutcome.get(outcome) ?? 0) + 1);
  if (a.status === 401)
    fail(
      `401 for a valid ${run.tier} key on ${routeOf(path)}`,
      `${run.label} (${run.prefix}…) worker ${a.worker} sent at ${rel(a.sent)} s`,
    );
  // Rate headers: the answering worker authenticated the key.
  if (a.remaining !== undefined && a.worker !== undefined && !run.seenBy.has(a.worker))
    run.seenBy.set(a.worker, a.received);
  // Not through the limiter: no answer, refused before authentication, or a 5xx without rate
  // headers (shed before authentication). A 5xx with them passed the limiter and was counted.
  if (a.status === 0 || a.status === 401 || (a.status >= 500 && a.remaining === undefined)) return;
  if (a.error === 'RATE_LIMIT_EXCEEDED') {
    if (a.remaining !== 0) run.remainingViolations++;
    if (counted) run.rateLimitedCounted.push({ sent: a.sent, received: a.received });
    return;
  }
  const adm: Admitted = { sent: a.sent, received: a.received, worker: a.worker };
  // A quota refusal passed the limiter and was counted, but takes no slot of the window (docs/decisions.md "Order of checks and what counts").
  const refused = a.error === 'DAILY_QUOTA_EXCEEDED' || a.error === 'MONTHLY_QUOTA_EXCEEDED';
  if (refused) {
    if (a.remaining === undefined || a.remaining < 0 || a.remaining > run.rate) run.remainingViolations++;
  } else {
    run.admitted.push(adm);
    if (a.remaining === undefined || a.remaining < 0 || a.remaining >= run.rate) run.remainingViolations++;
  }
  if (counted) {
    run.counted++;
    run.countedLog.push({ ...adm, refused });
    const r = routeKey(`${method} ${routeOf(path)}`);
    run.countedByRoute.set(r, (run.countedByRoute.get(r) ?? 0) + 1);
  }
  if (a.error === 'DAILY_QUOTA_EXCEEDED') {
    run.dailyRefusals++;
    if (counted && a.used !== undefined)
      run.refusals.push({ sent: a.sent, received: a.received, used: a.used });
  }
  if (a.error === 'MONTHLY_QUOTA_EXCEEDED') run.monthlyRefusals++;
}

/** A burst: 1.5 x the key's rate as fast as 16 connections allow; the limiter must cut it to the rate. */
async function burst(run: KeyRun): Promise<void> {
  let left = Math.ceil(1.5 * run.rate);
  const lane = async () => {
    while (left-- > 0) await one(run);
  };
  await Promise.all(Array.from({ length: Math.min(16, left) }, lane));
}

/**
 * Open loop: exponential gaps at LOAD x rate (at most 16 in flight), and a burst every
 * BURST_EVERY_MS, the keys' bursts spread evenly over that period (`phase`, 0..1).
 */
async function keyLoad(run: KeyRun, phase: number): Promise<void> {
  const inFlight = new Set<Promise<void>>();
  const fire = (work: () => Promise<void>) => {
    const p: Promise<void> = work().finally(() => inFlight.delete(p));
    inFlight.add(p);
  };
  const meanGapMs = 1000 / (LOAD * run.rate);
  let nextBurst = performance.now() + phase * BURST_EVERY_MS;
  while (!stopping && performance.now() < endAt) {
    if (performance.now() >= nextBurst) {
      fire(() => burst(run));
      nextBurst += BURST_EVERY_MS;
    }
    if (inFlight.size < 16) fire(() => one(run));
    const gap = -Math.log(1 - Math.random()) * meanGapMs;
    await sleep(Math.max(0, Math.min(gap, nextBurst - performance.now(), endAt - performance.now())));
  }
  await Promise.all(inFlight);
}

/**
 * Requests without a valid key, and the open routes: 401s, health, OpenAPI, unknown paths. They
 * share the address's anonymous budget, so most of them are refused 429.
 */
async function anonymousLoop(): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 2, timeout: 4000 });
  const revoked = 'lrds_live_0000000000000000000000000000000A';
  const cases: [string, string | undefined, number][] = [
    ['/api/v1/markets', undefined, 401],
    ['/api/v1/markets', revoked, 401],
    ['/api/v1/risk/positions-at-risk', 'not-a-key', 401],
    ['/api/v1/client/quota', `${rootKeys.pro}x`, 401],
    ['/api/v1/health', undefined, 200],
    ['/api/v1/openapi.json', undefined, 200],
    ['/api/v1/no-such-route', rootKeys.free, 404],
    ['/nope', undefined, 404],
  ];
  while (!stopping && performance.now() < endAt) {
    const [path, key, expected] = cases[Math.floor(Math.random() * cases.length)]!;
    const a = await request(agent, 'GET', path, key);
    tally(a, path);
    // 429: the budget of anonymous requests of this address (about 20 a second are sent, 5 allowed).
    if (a.status !== 0 && a.status < 500 && a.status !== expected && a.status !== 429)
      fail(`${path}: ${a.status}, expected ${expected}`, `sent at ${rel(a.sent)} s`);
    await sleep(50 * (0.5 + Math.random()));
  }
  agent.destroy();
}

interface RssSample {
  atS: number;
  /** Primary and workers, summed. */
  mib: number;
  /** Per process (fault mode). */
  byPid?: Record<string, number>;
}
const rss: RssSample[] = [];
/** Worker pid sets seen that differ from the first (a worker died and was replaced). */
const workerChanges: { atS: number; pids: number[] }[] = [];
async function memoryLoop(): Promise<void> {
  while (!stopping && performance.now() < endAt + 1) {
    const kids = FAULTS ? childPids(server.pid!) : [];
    const pids = [server.pid!, ...kids];
    const mibs = await Promise.all(pids.map((p) => procMemMiB(p)));
    const atS = Math.round((performance.now() - t0) / 1000);
    if (mibs[0] !== null) {
      const sample: RssSample = {
        atS,
        mib: sig(
          mibs.reduce<number>((s, m) => s + (m ?? 0), 0),
          5,
        ),
      };
      if (FAULTS) sample.byPid = Object.fromEntries(pids.map((p, i) => [String(p), mibs[i] ?? 0]));
      rss.push(sample);
    }
    if (FAULTS && kids.join(',') !== workerPids.join(',')) {
      const last = workerChanges.at(-1)?.pids.join(',') ?? workerPids.join(',');
      if (kids.join(',') !== last) workerChanges.push({ atS, pids: kids });
    }
    const next = Math.min(5000, endAt - performance.now());
    if (next <= 0) break;
    await sleep(next);
  }
}

// ---- faults -------------------------------------------------------------------------------------

interface FaultRun {
  label: string;
  kind: 'redis' | 'pg';
  /** Instants on our clock (performance.now()). */
  start: number;
  end: number | null;
}
const faultRuns: FaultRun[] = [];
async function sleepUntil(t: number): Promise<void> {
  while (!stopping && performance.now() < t) await sleep(Math.min(250, t - performance.now()));
}
async function restartRedis(): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await redis!.start();
      return;
    } catch (e) {
      if (attempt >= 5) throw e;
      log(`restarting redis-server: ${(e as Error).message}; again in 1 s`);
      await sleep(1000);
    }
  }
}
async function faultLoop(): Promise<void> {
  for (const f of PLAN) {
    await sleepUntil(t0 + f.atMs);
    if (stopping) return;
    const run: FaultRun = { label: f.label, kind: f.kind, start: performance.now(), end: null };
    faultRuns.push(run);
    if (f.kind === 'redis') {
      await redis!.kill();
      log(`fault at ${rel(run.start)} s: ${f.label}: redis-server killed (kill -9)`);
      await sleepUntil(run.start + f.durationMs);
      await restartRedis();
      run.end = performance.now();
      log(`fault at ${rel(run.end)} s: ${f.label}: redis-server restarted empty on port ${redis!.port}`);
    } else {
      proxy!.blackhole();
      log(
        `fault at ${rel(run.start)} s: ${f.label}: PostgreSQL cut (${proxy!.connections} connections held)`,
      );
      await sleepUntil(run.start + f.durationMs);
      proxy!.restore();
      run.end = performance.now();
      log(`fault at ${rel(run.end)} s: ${f.label}: PostgreSQL restored`);
    }
  }
}

const progress = setInterval(() => {
  const done = (performance.now() - t0) / DURATION_MS;
  const total = [...statusCounts.values()].reduce((s, n) => s + n, 0);
  const violations = [...failureCounts.values()].reduce((a, b) => a + b, 0);
  log(
    `${(done * 100).toFixed(0)} %: ${total.toLocaleString('en-US')} answers, ${serverErrors.length} 5xx, ${violations} other violations, RSS ${rss.at(-1)?.mib ?? '?'} MiB`,
  );
}, 15_000);

const loops: Promise<void>[] = [anonymousLoop(), memoryLoop()];
if (FAULTS) loops.push(faultLoop());
runs.forEach((run, i) => {
  loops.push(keyLoad(run, i / runs.length));
});
await Promise.all(loops);
stopping = true;
clearInterval(progress);
const elapsedS = (performance.now() - t0) / 1000;
if (FAULTS) {
  // A fault still on (it cannot be with the plan's checks, but never leave one behind).
  proxy!.restore();
  if (!redis!.running) await restartRedis();
  for (const f of faultRuns) f.end ??= performance.now();
}
log(`load done after ${elapsedS.toFixed(1)} s; checking quotas`);

// ---- checks after the load ------------------------------------------------------------------------

/**
 * Labels of the fault phases an interval [s, e] touches: a fault's start (±1 s), its course and
 * its end (from 1 s before it to 3 s after). A Redis fault lasts until every worker is back on
 * Redis (their logs say when), which may be a while after the restart.
 */
function phasesOf(s: number, e: number): string[] {
  const out: string[] = [];
  for (const f of faultRuns) {
    const end = f.kind === 'redis' ? redisBackAt(f) : (f.end ?? Number.POSITIVE_INFINITY);
    const restored = f.end ?? Number.POSITIVE_INFINITY;
    if (s <= f.start + 1000 && e >= f.start - 1000) out.push(`${f.label}: start`);
    if (s < end && e > f.start) out.push(`${f.label}: during`);
    if (s <= end + 3000 && e >= restored - 1000) out.push(`${f.label}: end`);
  }
  return out.length > 0 ? out : ['no fault'];
}

interface Episode {
  key: string;
  fromS: number;
  toS: number;
  rate: number;
  /** Most admitted answers found inside one span under 1,000 ms. */
  admittedInSpan: number;
  minSpanMs: number;
  workers: Record<string, number>;
  phases: string[];
}
interface PhaseStat {
  spans: number;
  tightestMs: number;
  violations: number;
}
const phaseStats = new Map<string, PhaseStat>();

/**
 * Sound sliding-window check (see the header): spans of R+1 admitted answers under 1,000 ms.
 * For each first request i (by send), the R+1 earliest-received among those sent at or after it
 * (every answer sent within 1,000 ms of it, and at least the next 4R+8).
 */
function windowViolations(run: KeyRun): { count: number; tightestMs: number; episodes: Episode[] } {
  const a = [...run.admitted].sort((x, y) => x.sent - y.sent);
  const R = run.rate;
  let count = 0;
  let tightest = Number.POSITIVE_INFINITY;
  const episodes: Episode[] = [];
  for (let i = 0; i + R < a.length; i++) {
    let end = i;
    while (end < a.length && (end - i < 4 * R + 8 || a[end]!.sent < a[i]!.sent + 1000)) end++;
    const window = a.slice(i, end).sort((x, y) => x.received - y.received);
    const start = a[i]!.sent;
    const span = window[R]!.received - start;
    tightest = Math.min(tightest, span);
    const violation = span < 1000 - 2; // 2 ms: the server's clock is whole milliseconds
    const phases = phasesOf(start, window[R]!.received);
    for (const p of phases) {
      const st = phaseStats.get(p) ?? { spans: 0, tightestMs: Number.POSITIVE_INFINITY, violations: 0 };
      st.spans++;
      st.tightestMs = Math.min(st.tightestMs, span);
      if (violation) st.violations++;
      phaseStats.set(p, st);
    }
    if (!violation) continue;
    count++;
    const inside = window.filter((x) => x.received < start + 1000 - 2);
    const to = inside.at(-1)!.received;
    const last = episodes.at(-1);
    const workers: Record<string, number> = {};
    for (const x of inside) workers[x.worker ?? '?'] = (workers[x.worker ?? '?'] ?? 0) + 1;
    if (last && (start - t0) / 1000 <= last.toS) {
      last.toS = Math.max(last.toS, rel(to));
      last.minSpanMs = Math.min(last.minSpanMs, sig(span, 4));
      if (inside.length > last.admittedInSpan) {
        last.admittedInSpan = inside.length;
        last.workers = workers;
      }
      last.phases = [...new Set([...last.phases, ...phases])];
    } else {
      episodes.push({
        key: `${run.label} (${run.prefix}…)`,
        fromS: rel(start),
        toS: rel(to),
        rate: R,
        admittedInSpan: inside.length,
        minSpanMs: sig(span, 4),
        workers,
        phases,
      });
    }
  }
  return { count, tightestMs: tightest, episodes };
}

const utcDayAtStart = new Date(Date.now() - elapsedS * 1000).toISOString().slice(0, 10);
const utcDayNow = new Date().toISOString().slice(0, 10);
const dayRolledOver = utcDayAtStart !== utcDayNow;
// Fault mode: usage held back by a cut is written again every second.
await sleep(FAULTS ? 2500 : 1100);
for (const run of runs) {
  const res = await fetch(`${BASE}/api/v1/client/quota`, { headers: { authorization: `Bearer ${run.key}` } });
  if (res.status !== 200) {
    fail(`quota read for a ${run.tier} key: ${res.status}`, `${run.label}: ${await res.text()}`);
    continue;
  }
  const q = (await res.json()) as { data: { daily: { used: number }; monthly: { used: number } } };
  run.quota = { daily: q.data.daily.used, monthly: q.data.monthly.used };
  if (FAULTS) {
    const u = await fetch(`${BASE}/api/v1/client/usage`, { headers: { authorization: `Bearer ${run.key}` } });
    if (u.status === 200) {
      const days = (
        (await u.json()) as {
          data: { date: string; requests: number; endpoints: { endpoint: string; requests: number }[] }[];
        }
      ).data;
      const today = days.find((d) => d.date === utcDayNow);
      run.stored = today?.requests ?? 0;
      const diff = new Map<string, number>();
      for (const e of today?.endpoints ?? []) diff.set(routeKey(e.endpoint), e.requests);
      for (const [r, n] of run.countedByRoute) diff.set(r, (diff.get(r) ?? 0) - n);
      const nonZero = [...diff].filter(([, n]) => n !== 0);
      if (nonZero.length > 0) run.endpointDiff = Object.fromEntries(nonZero);
    } else fail(`usage read for a ${run.tier} key: ${u.status}`, `${run.label}: ${await u.text()}`);
  } else if (!dayRolledOver) {
    if (run.quota.daily !== run.counted)
      fail(`${run.tier}/${run.mode} key: daily used ${run.quota.daily}, counted answers ${run.counted}`);
    if (run.quota.monthly !== run.counted - run.dailyRefusals)
      fail(
        `${run.tier}/${run.mode} key: monthly used ${run.quota.monthly}, expected ${run.counted - run.dailyRefusals}`,
      );
  }
  if (run.remainingViolations > 0)
    fail(
      `${run.tier}/${run.mode} key: ${run.remainingViolations} answers with an inconsistent X-RateLimit-Remaining`,
    );
}
for (const run of runs) run.agent.destroy();

expectExit = true;
server.kill('SIGTERM');
const exit = await Promise.race([serverExit, sleep(15_000).then(() => ({ code: null, signal: 'timeout' }))]);
if (exit.code !== 0) fail(`server exit after SIGTERM: ${JSON.stringify(exit)}`, serverStderr.slice(-2000));
const workersLeft = workerPids.filter(alive);
if (workersLeft.length > 0) {
  fail(`workers still running after the primary exited: ${workersLeft.join(', ')}`);
  for (const pid of workersLeft) process.kill(pid, 'SIGKILL');
}

// ---- fault-mode judgements ----------------------------------------------------------------------

/** 503s the faults explain, by route and fault. */
const expected503 = new Map<string, number>();
for (const e of serverErrors) {
  const where = phasesOf(e.sent, e.received)
    .filter((p) => !p.endsWith(': start') && !p.endsWith(': end'))
    .join(', ');
  const cut = faultRuns.find(
    (f) =>
      f.kind === 'pg' && e.sent <= (f.end ?? Number.POSITIVE_INFINITY) + PG_GRACE_MS && e.received >= f.start,
  );
  const unavailable =
    e.status === 503 && e.error === 'SERVICE_UNAVAILABLE' && !/overloaded/i.test(e.message ?? '');
  if (FAULTS && unavailable && cut) {
    let why: string | null = null;
    if (e.route.startsWith('/api/v1/client/')) why = 'reads the store';
    else if (e.key === null) why = 'a key the server does not know (cannot be checked)';
    else if (!e.limited && !e.seenBefore) why = 'a key this worker had not verified yet';
    if (why !== null) {
      const k = `${e.route} during ${cut.label} (${why})`;
      expected503.set(k, (expected503.get(k) ?? 0) + 1);
      continue;
    }
  }
  const detail = `${e.key ?? 'no valid key'} on worker ${e.worker ?? '?'}, sent at ${rel(e.sent)} s, answered at ${rel(e.received)} s${
    e.key !== null
      ? e.seenBefore
        ? ' (this worker had served the key before)'
        : ' (first time this worker saw the key)'
      : ''
  }${e.limited ? ', after the limiter' : ''}: ${e.message ?? ''}`;
  const msg = `${e.status} ${e.error ?? ''} on ${e.route} (${where || 'no fault'})`;
  fail(
    FAULTS || !unavailable
      ? msg
      : '503 SERVICE_UNAVAILABLE: the server shed load (overloaded: lower --load, or use a quieter machine)',
    detail,
  );
}

/** When every worker was back on Redis after a Redis fault: the last "reachable again" of it. */
function redisBackAt(f: FaultRun): number {
  const next =
    faultRuns.find((g) => g.kind === 'redis' && g.start > f.start)?.start ?? Number.POSITIVE_INFINITY;
  const backs = logEvents
    .filter((e) => /Redis reachable again/.test(e.msg) && e.at >= f.start && e.at < next)
    .map((e) => e.at);
  return Math.max(f.end ?? Number.POSITIVE_INFINITY, ...backs);
}

/**
 * When a worker may have been counting on its own: each Redis fault until every worker was back
 * (+1 s), and any other "Redis unreachable" a worker logged (a command timing out under load)
 * until the next "reachable again" (+1 s).
 */
const localIntervals: [number, number][] = faultRuns
  .filter((f) => f.kind === 'redis')
  .map((f) => [f.start, redisBackAt(f) + 1000]);
for (const e of logEvents) {
  if (!/Redis unreachable/.test(e.msg) || localIntervals.some(([from, to]) => e.at >= from && e.at <= to))
    continue;
  const back = logEvents.find((b) => b.at >= e.at && /Redis reachable again/.test(b.msg))?.at;
  localIntervals.push([e.at - 500, (back ?? Number.POSITIVE_INFINITY) + 1000]);
}

/** Instants when counts may be made twice: Redis lost or back, by our faults or as a worker saw it. */
const redisTransitions: number[] = [];
for (const f of faultRuns) if (f.kind === 'redis') redisTransitions.push(f.start, f.end!);
for (const ev of logEvents)
  if (/Redis (unreachable|reachable again)/.test(ev.msg)) redisTransitions.push(ev.at);

/** ` ; stored - counted by route: {...}` when the store's endpoints differ from the answers. */
function byRoute(row: QuotaRow): string {
  return row.storedMinusCountedByRoute
    ? `; stored - counted by route: ${JSON.stringify(row.storedMinusCountedByRoute)}`
    : '';
}

interface QuotaRow {
  key: string;
  tier: Tier;
  mode: Mode;
  dailyQuota: number | null;
  /** Counted answers the quota let through. */
  served: number;
  counted: number;
  dailyRefusals: number;
  used: number | null;
  monthlyUsed: number | null;
  stored: number | null;
  storedMinusCountedByRoute?: Record<string, number>;
  /** used - counted. */
  overCount: number | null;
  /** The key's counted requests in flight at a Redis transition: what at-least-once may add. */
  inFlightAtRedisTransitions: number;
  /** The key's first quota refusal: when its quota ran out, and in which phase. */
  exhausted?: { atS: number; phases: string[] };
  /**
   * A count found missing while the load ran: the first quota refusal answered from Redis (not
   * within an outage or 1 s after it) whose `used` is below the counted answers received before
   * it was sent (+1, itself), and the last one before it that was not, which brackets when the
   * count was lost.
   */
  lostBetween?: { fromS: number; toS: number; deficit: number; phases: string[] };
  /** Likewise the first refusal whose `used` exceeds every counted request sent before its answer. */
  overSince?: { fromS: number; toS: number; excess: number; phases: string[] };
  /** When the quota was crossed (the first served answer beyond it), if it was. */
  crossed?: { sentS: number; receivedS: number; phases: string[]; workers: Record<string, number> };
}
const quotaRows: QuotaRow[] = [];
if (FAULTS) {
  for (const run of runs) {
    const quota = DAILY[run.tier];
    const served = run.countedLog.filter((c) => !c.refused);
    const inFlight = run.countedLog.filter((c) =>
      redisTransitions.some((t) => c.sent - 100 <= t && t <= c.received + 100),
    ).length;
    const row: QuotaRow = {
      key: `${run.label} (${run.prefix}…)`,
      tier: run.tier,
      mode: run.mode,
      dailyQuota: quota,
      served: served.length,
      counted: run.counted,
      dailyRefusals: run.dailyRefusals,
      used: run.quota?.daily ?? null,
      monthlyUsed: run.quota?.monthly ?? null,
      stored: run.stored ?? null,
      ...(run.endpointDiff ? { storedMinusCountedByRoute: run.endpointDiff } : {}),
      overCount: run.quota ? run.quota.daily - run.counted : null,
      inFlightAtRedisTransitions: inFlight,
    };
    const firstRefusal = run.countedLog.filter((c) => c.refused).sort((x, y) => x.received - y.received)[0];
    if (firstRefusal)
      row.exhausted = {
        atS: rel(firstRefusal.received),
        phases: phasesOf(firstRefusal.sent, firstRefusal.received),
      };
    {
      const receivedAt = run.countedLog.map((c) => c.received).sort((x, y) => x - y);
      const below = (t: number) => {
        let lo = 0;
        let hi = receivedAt.length;
        while (lo < hi) {
          const mid = (lo + hi) >> 1;
          if (receivedAt[mid]! < t) lo = mid + 1;
          else hi = mid;
        }
        return lo;
      };
      // While Redis is down a refusal reports what its worker knows (its own counts and the
      // store's, reloaded every second), not the total: only refusals away from outages count.
      const shared = (r: { sent: number; received: number }) =>
        !localIntervals.some(([from, to]) => r.received >= from && r.sent <= to);
      const sentAt = run.countedLog.map((c) => c.sent).sort((x, y) => x - y);
      const sentBefore = (t: number) => {
        let lo = 0;
        let hi = sentAt.length;
        while (lo < hi) {
          const mid = (lo + hi) >> 1;
          if (sentAt[mid]! < t) lo = mid + 1;
          else hi = mid;
        }
        return lo;
      };
      const fromRedis = [...run.refusals].filter(shared).sort((x, y) => x.sent - y.sent);
      // Over-counts are dated the same way: `used` above every counted request sent before the
      // refusal was answered.
      let lastUnder: { sent: number } | null = null;
      for (const r of fromRedis) {
        const ceiling = sentBefore(r.received);
        if (r.used <= ceiling) {
          lastUnder = r;
          continue;
        }
        const from = lastUnder?.sent ?? t0;
        row.overSince = {
          fromS: rel(from),
          toS: rel(r.received),
          excess: r.used - ceiling,
          phases: phasesOf(from, r.received),
        };
        break;
      }
      let lastGood: { sent: number } | null = null;
      for (const r of fromRedis) {
        const floor = below(r.sent) + 1;
        if (r.used >= floor) {
          lastGood = r;
          continue;
        }
        const from = lastGood?.sent ?? t0;
        row.lostBetween = {
          fromS: rel(from),
          toS: rel(r.received),
          deficit: floor - r.used,
          phases: phasesOf(from, r.received),
        };
        fail(
          `${run.tier} key: a quota refusal reported fewer counts than the answers already received (counts lost)`,
          `${row.key}: used ${r.used} in the refusal sent at ${rel(r.sent)} s, at least ${floor} counted by then; last consistent refusal sent at ${rel(from)} s; ${row.lostBetween.phases.join(', ')}`,
        );
        break;
      }
    }
    if (quota !== null && served.length > quota) {
      const byReceive = [...served].sort((x, y) => x.received - y.received);
      const first = byReceive[quota]!;
      const workers: Record<string, number> = {};
      for (const x of byReceive.slice(quota)) workers[x.worker ?? '?'] = (workers[x.worker ?? '?'] ?? 0) + 1;
      row.crossed = {
        sentS: rel(first.sent),
        receivedS: rel(first.received),
        phases: phasesOf(first.sent, byReceive.at(-1)!.received),
        workers,
      };
      fail(
        `${run.tier} key served more counted answers than its daily quota`,
        `${row.key}: ${served.length} served, quota ${quota}; the ${quota + 1}th answered at ${row.crossed.receivedS} s; the ${served.length - quota} beyond it by worker ${JSON.stringify(workers)}, ${row.crossed.phases.join(', ')}`,
      );
    }
    if (!dayRolledOver && row.used !== null) {
      if (row.used < run.counted)
        fail(
          `${run.tier} key: quota used below the counted answers (counts lost)`,
          `${row.key}: used ${row.used}, counted ${run.counted}, stored ${row.stored ?? '?'}${
            row.stored !== null && row.stored >= run.counted ? ' (the store has them: Redis lost them)' : ''
          }${byRoute(row)}`,
        );
      else if (row.used - run.counted > inFlight)
        fail(
          `${run.tier} key: quota used above the counted answers by more than the requests in flight at Redis transitions`,
          `${row.key}: used ${row.used}, counted ${run.counted}, stored ${row.stored ?? '?'}, in flight at a transition ${inFlight}${
            row.overSince
              ? `; a refusal reported ${row.overSince.excess} more than were sent, between ${row.overSince.fromS} and ${row.overSince.toS} s (${row.overSince.phases.join(', ')}), a span in which the key got ${
                  run.rateLimitedCounted.filter(
                    (x) =>
                      x.sent >= t0 + row.overSince!.fromS * 1000 &&
                      x.received <= t0 + row.overSince!.toS * 1000,
                  ).length
                } rate-limit 429s on counted routes`
              : ''
          }${byRoute(row)}`,
        );
      if (row.stored !== null && row.stored < run.counted)
        fail(
          `${run.tier} key: the store holds fewer counts than the counted answers`,
          `${row.key}: stored ${row.stored}, counted ${run.counted}${byRoute(row)}`,
        );
    }
    quotaRows.push(row);
  }
  if (workerChanges.length > 0 || workerDeaths.length > 0)
    fail(
      'a worker died during the soak',
      `${workerDeaths.join('; ')} pids: ${JSON.stringify(workerChanges)} (first ${workerPids.join(', ')})`,
    );
}

// ---- report ------------------------------------------------------------------------------------

const allEpisodes: Episode[] = [];
const groups = TIERS.flatMap((tier) =>
  (['live', 'test'] as const).map((mode) => {
    const rs = runs.filter((r) => r.tier === tier && r.mode === mode);
    const windows = rs.map(windowViolations);
    for (const w of windows) allEpisodes.push(...w.episodes);
    const sum = (f: (r: KeyRun) => number) => rs.reduce((s, r) => s + f(r), 0);
    const requests = sum((r) => [...r.byOutcome.values()].reduce((s, n) => s + n, 0));
    const qs = quotaRows.filter((q) => q.tier === tier && q.mode === mode);
    return {
      tier,
      mode,
      keys: rs.length,
      ratePerSecond: RATE[tier],
      requests,
      admittedPerKeyPerSecond: sig(sum((r) => r.admitted.length) / rs.length / elapsedS, 3),
      rateLimited: sum((r) => r.byOutcome.get('RATE_LIMIT_EXCEEDED') ?? 0),
      dailyQuotaRefusals: sum((r) => r.dailyRefusals),
      counted: sum((r) => r.counted),
      quotaDailyUsed: sum((r) => r.quota?.daily ?? 0),
      quotaExact: !dayRolledOver && rs.every((r) => r.quota?.daily === r.counted),
      ...(FAULTS
        ? {
            dailyQuota: DAILY[tier],
            maxServedPerKey: Math.max(...qs.map((q) => q.served)),
            keysOverQuota: qs.filter((q) => q.dailyQuota !== null && q.served > q.dailyQuota).length,
            stored: qs.reduce((s, q) => s + (q.stored ?? 0), 0),
            overCount: qs.reduce((s, q) => s + (q.overCount ?? 0), 0),
            inFlightAtRedisTransitions: qs.reduce((s, q) => s + q.inFlightAtRedisTransitions, 0),
          }
        : {}),
      windowViolations: windows.reduce((s, w) => s + w.count, 0),
      windowEpisodes: windows.reduce((s, w) => s + w.episodes.length, 0),
      tightestWindowMs: sig(Math.min(...windows.map((w) => w.tightestMs)), 4),
    };
  }),
);
const sortedLatencies = latencies.sort((a, b) => a - b);
const mibs = rss.map((s) => s.mib);
const half = rss.filter((s) => s.atS >= elapsedS / 2);
const slope = (() => {
  // least squares over the last half, MiB per minute
  if (half.length < 2) return Number.NaN;
  const mx = half.reduce((s, p) => s + p.atS, 0) / half.length;
  const my = half.reduce((s, p) => s + p.mib, 0) / half.length;
  const num = half.reduce((s, p) => s + (p.atS - mx) * (p.mib - my), 0);
  const den = half.reduce((s, p) => s + (p.atS - mx) ** 2, 0);
  return den === 0 ? 0 : (num / den) * 60;
})();
const halfMinutes = half.length >= 2 ? (half.at(-1)!.atS - half[0]!.atS) / 60 : 0;
const fittedGrowth = slope * halfMinutes;
// RSS is a sawtooth (the heap grows until a major GC gives pages back), so a rise over the last
// half can start from a trough. A leak raises the peaks: memory is judged grown only when the
// last half both rises (fitted) and sets a high-water mark above the first half's.
const firstHalfPeak = Math.max(...rss.filter((s) => s.atS < elapsedS / 2).map((s) => s.mib));
const lastHalfPeak = Math.max(...half.map((s) => s.mib));
const memoryTolerance = Math.max(64, 0.1 * median(mibs));
const memoryJudged = MINUTES >= 5;
const memory = {
  processes: FAULTS ? `primary and ${WORKERS} workers, summed` : 'server',
  samples: rss.length,
  startMiB: mibs[0] ?? null,
  medianMiB: sig(median(mibs), 4),
  maxMiB: mibs.length ? Math.max(...mibs) : null,
  endMiB: mibs.at(-1) ?? null,
  lastHalfGrowthMiB: half.length >= 2 ? sig(half.at(-1)!.mib - half[0]!.mib, 3) : null,
  lastHalfSlopeMiBPerMin: sig(slope, 3),
  firstHalfPeakMiB: firstHalfPeak,
  lastHalfPeakMiB: lastHalfPeak,
  flat: memoryJudged
    ? !(fittedGrowth > memoryTolerance && lastHalfPeak > firstHalfPeak + memoryTolerance)
    : null,
  series: rss,
};
if (memory.flat === false)
  fail(
    `memory grew over the last half: ${sig(fittedGrowth, 3)} MiB fitted (${memory.lastHalfSlopeMiBPerMin} MiB/min), peak ${lastHalfPeak} MiB against ${firstHalfPeak} MiB in the first half`,
  );
/** Latency of keyed answers by fault course ('during' phases) and outside faults. */
const latencyByPhase = (() => {
  const by = new Map<string, { data: number[]; client: number[] }>();
  for (const t of timings) {
    const during = phasesOf(t.sent, t.received).filter((p) => p === 'no fault' || p.endsWith(': during'));
    for (const p of during.length > 0 ? during : ['edge of a fault']) {
      const e = by.get(p) ?? { data: [], client: [] };
      (t.client ? e.client : e.data).push(t.received - t.sent);
      by.set(p, e);
    }
  }
  const stats = (xs: number[]) => {
    const sorted = xs.sort((a, b) => a - b);
    return {
      answers: xs.length,
      medianMs: sig(quantileSorted(sorted, 0.5), 3),
      p99Ms: sig(quantileSorted(sorted, 0.99), 3),
      maxMs: sig(sorted.at(-1) ?? Number.NaN, 3),
    };
  };
  return [...by]
    .sort((a, b) => a[0].localeCompare(b[0]))
    .map(([phase, e]) => ({ phase, data: stats(e.data), client: stats(e.client) }));
})();
const windowTotal = groups.reduce((s, g) => s + g.windowViolations, 0);
if (windowTotal > 0)
  fail(
    `${windowTotal} rate windows with more admitted answers than the tier rate (${allEpisodes.length} episodes)`,
    allEpisodes
      .slice(0, 5)
      .map(
        (e) =>
          `${e.key}: ${e.admittedInSpan} admitted (rate ${e.rate}) within ${e.minSpanMs} ms, ${e.fromS}-${e.toS} s, workers ${JSON.stringify(e.workers)}, ${e.phases.join(', ')}`,
      )
      .join('\n  '),
  );
const totalAnswers = [...statusCounts.values()].reduce((s, n) => s + n, 0);
const failures = [...failureCounts].map(([message, times]) =>
  times > 1 ? `${message} (x${times})` : message,
);

const result = {
  kind: FAULTS ? 'soak-faults' : 'soak',
  date: new Date().toISOString(),
  machine: machine(),
  settings: {
    minutes: MINUTES,
    load: LOAD,
    burstEverySeconds: BURST_EVERY_MS / 1000,
    keys: runs.length,
    freeDailyQuota: FREE_DAILY,
    ...(FAULTS
      ? {
          proDailyQuota: PRO_DAILY,
          workers: WORKERS,
          instances: WORKERS,
          redisDownSeconds: REDIS_DOWN_MS / 1000,
          pgCutSeconds: PG_CUT_MS / 1000,
          pgGraceSeconds: PG_GRACE_MS / 1000,
        }
      : {}),
  },
  elapsedSeconds: sig(elapsedS, 4),
  answers: totalAnswers,
  answersPerSecond: sig(totalAnswers / elapsedS, 4),
  latencyMs: {
    median: sig(quantileSorted(sortedLatencies, 0.5), 3),
    p99: sig(quantileSorted(sortedLatencies, 0.99), 3),
    max: sig(sortedLatencies.at(-1) ?? Number.NaN, 3),
  },
  statuses: Object.fromEntries([...statusCounts].sort((a, b) => b[1] - a[1])),
  groups,
  ...(FAULTS
    ? {
        faults: faultRuns.map((f) => ({
          label: f.label,
          kind: f.kind,
          startS: rel(f.start),
          endS: rel(f.end!),
          ...(f.kind === 'redis'
            ? {
                workersBackOnRedisS: logEvents
                  .filter(
                    (e) => /Redis reachable again/.test(e.msg) && e.at >= f.start && e.at <= redisBackAt(f),
                  )
                  .map((e) => rel(e.at)),
              }
            : {}),
        })),
        expected503: Object.fromEntries(expected503),
        windowsByPhase: Object.fromEntries(
          [...phaseStats].map(([p, s]) => [p, { ...s, tightestMs: sig(s.tightestMs, 4) }]),
        ),
        windowEpisodes: allEpisodes.slice(0, 200),
        latencyByPhase,
        quotas: quotaRows,
        serverLog: {
          counts: Object.fromEntries([...logCounts].sort((a, b) => b[1] - a[1])),
          events: logEvents.slice(0, 500).map((e) => ({ ...e, at: rel(e.at) })),
        },
        workers: { primary: server.pid, initial: workerPids, changes: workerChanges, deaths: workerDeaths },
      }
    : {}),
  memory,
  dayRolledOver,
  serverExit: exit,
  failures,
  evidence: Object.fromEntries(evidence),
  ok: failures.length === 0,
};

const resultsDir = resolve(BENCH_DIR, 'results');
mkdirSync(resultsDir, { recursive: true });
const file = join(resultsDir, `${result.kind}-${result.date.slice(0, 19).replace(/:/g, '-')}Z.json`);
writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
await teardown();

const out: string[] = [];
out.push(
  `\n## Soak${FAULTS ? ' with faults' : ''}: ${fmt(elapsedS / 60)} min, ${runs.length} keys, ${totalAnswers.toLocaleString('en-US')} answers (${fmt(totalAnswers / elapsedS)}/s), latency median ${result.latencyMs.median} ms, p99 ${result.latencyMs.p99} ms\n`,
);
if (FAULTS) {
  out.push(
    `lrds serve --workers ${WORKERS}, INSTANCES=${WORKERS}, PostgreSQL through a cuttable proxy, private Redis. Faults (s from the start of the load):`,
  );
  for (const f of result.faults ?? [])
    out.push(
      `- ${f.label}: ${f.startS} to ${f.endS}${
        'workersBackOnRedisS' in f && f.workersBackOnRedisS
          ? ` (workers back on Redis at ${f.workersBackOnRedisS.join(', ') || '?'} s)`
          : ''
      }`,
    );
  out.push('');
  out.push(
    '| tier | mode | keys | rate/s | admitted/s per key | rate 429 | daily quota | max served per key | keys over quota | daily-quota 429 | counted | quota used | stored | used − counted | in flight at Redis transitions | window violations (episodes) | tightest R+1 span (ms) |',
  );
  out.push('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const g of groups) {
    out.push(
      `| ${g.tier} | ${g.mode} | ${g.keys} | ${g.ratePerSecond} | ${g.admittedPerKeyPerSecond} | ${g.rateLimited} | ${g.dailyQuota ?? 'none'} | ${g.maxServedPerKey} | ${g.keysOverQuota} | ${g.dailyQuotaRefusals} | ${g.counted} | ${g.quotaDailyUsed} | ${g.stored} | ${g.overCount} | ${g.inFlightAtRedisTransitions} | ${g.windowViolations} (${g.windowEpisodes}) | ${g.tightestWindowMs} |`,
    );
  }
  out.push('\n| phase | R+1 spans checked | tightest (ms) | violations |');
  out.push('|---|---|---|---|');
  for (const [p, s] of [...phaseStats].sort((a, b) => a[0].localeCompare(b[0])))
    out.push(`| ${p} | ${s.spans} | ${sig(s.tightestMs, 4)} | ${s.violations} |`);
  out.push(
    '\n| phase | data answers | median (ms) | p99 (ms) | max (ms) | /client answers | median (ms) | p99 (ms) | max (ms) |',
  );
  out.push('|---|---|---|---|---|---|---|---|---|');
  for (const l of latencyByPhase)
    out.push(
      `| ${l.phase} | ${l.data.answers} | ${l.data.medianMs} | ${l.data.p99Ms} | ${l.data.maxMs} | ${l.client.answers} | ${l.client.medianMs} | ${l.client.p99Ms} | ${l.client.maxMs} |`,
    );
  out.push('');
  for (const tier of TIERS) {
    if (DAILY[tier] === null) continue;
    const qs = quotaRows.filter((q) => q.tier === tier);
    const ran = qs.filter((q) => q.exhausted);
    const phases = new Map<string, number>();
    for (const q of ran) {
      const p = q.exhausted!.phases.filter((x) => !x.endsWith(': end') && !x.endsWith(': start')).join(' + ');
      phases.set(p || 'edge of a fault', (phases.get(p || 'edge of a fault') ?? 0) + 1);
    }
    const times = ran.map((q) => q.exhausted!.atS);
    out.push(
      `${tier} daily quota (${DAILY[tier]}) ran out for ${ran.length} of ${qs.length} keys${
        ran.length
          ? `, between ${Math.min(...times)} and ${Math.max(...times)} s: ${[...phases].map(([p, n]) => `${p} (${n})`).join(', ')}`
          : ''
      }`,
    );
  }
  {
    const above = quotaRows.filter((q) => q.stored !== null && q.stored > q.counted);
    const extra = above.reduce((s, q) => s + (q.stored! - q.counted), 0);
    out.push(
      above.length === 0
        ? 'The store holds exactly the counted answers of every key.'
        : `The store holds more than the counted answers for ${above.length} keys, ${extra} in all (at-least-once writes; by key and route in the JSON, quotas[].storedMinusCountedByRoute).`,
    );
  }
  out.push(
    `\n503 explained by a PostgreSQL cut: ${
      expected503.size === 0 ? 'none' : [...expected503].map(([k, n]) => `${k}: ${n}`).join('; ')
    }`,
  );
  out.push(
    `Worker warnings: ${
      logCounts.size === 0
        ? 'none'
        : [...logCounts]
            .sort((a, b) => b[1] - a[1])
            .map(([m, n]) => `${m} (x${n})`)
            .join('; ')
    }`,
  );
} else {
  out.push(
    '| tier | mode | keys | rate/s | admitted/s per key | rate 429 | daily-quota 429 | counted | quota used | quota exact | window violations | tightest R+1 span (ms) |',
  );
  out.push('|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const g of groups) {
    out.push(
      `| ${g.tier} | ${g.mode} | ${g.keys} | ${g.ratePerSecond} | ${g.admittedPerKeyPerSecond} | ${g.rateLimited} | ${g.dailyQuotaRefusals} | ${g.counted} | ${g.quotaDailyUsed} | ${dayRolledOver ? 'n/a (UTC day rolled over)' : g.quotaExact ? 'yes' : 'NO'} | ${g.windowViolations} | ${g.tightestWindowMs} |`,
    );
  }
}
out.push(
  `\n${FAULTS ? 'RSS of the primary and workers, summed' : 'Server RSS'} (MiB, every 5 s): start ${memory.startMiB}, median ${memory.medianMiB}, max ${memory.maxMiB}, end ${memory.endMiB}; last half: ${memory.lastHalfGrowthMiB} MiB (${memory.lastHalfSlopeMiBPerMin} MiB/min), peak ${lastHalfPeak} against ${firstHalfPeak} in the first half${memoryJudged ? '' : ' (not judged under 5 minutes)'}`,
);
out.push(
  `Statuses: ${Object.entries(result.statuses)
    .map(([k, n]) => `${k}: ${n}`)
    .join(', ')}`,
);
out.push(`Server exit after SIGTERM: ${JSON.stringify(exit)}`);
out.push(
  result.ok
    ? '\nAll invariants held.'
    : `\nVIOLATIONS (${failures.length}):\n${[...failureCounts]
        .slice(0, 30)
        .map(
          ([m, n]) =>
            `- ${n > 1 ? `${m} (x${n})` : m}${(evidence.get(m) ?? []).map((e) => `\n    e.g. ${e}`).join('')}`,
        )
        .join('\n')}`,
);
out.push(`\nWritten to ${file}`);
process.stdout.write(`${out.join('\n')}\n`);
process.exit(result.ok ? 0 : 1);
