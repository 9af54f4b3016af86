/**
 * Soak: the real service under a steady mixed load for N minutes, checking invariants throughout.
 *
 *   node bench/soak.ts --minutes 10          (npm run soak -- --minutes 10)
 *   node bench/soak.ts --minutes 1 --load 0.5 --burst-every 5
 *
 * Starts `lrds serve` as a child process on a temporary DATA_DIR with a temporary TIERS_FILE
 * (launch rates; quotas unlimited except the Free daily quota, sized to run out halfway so that
 * DAILY_QUOTA_EXCEEDED is exercised), creates 30 keys (free/pro/enterprise x live/test), and
 * drives every route (successes, 400s, 403s, 404s, 401s, unknown paths). Each key sends an
 * open-loop stream at `load` times its tier rate (random, exponential gaps; at most 16 in flight)
 * and, every `burst-every` seconds, a burst of 1.5 x its rate at once, which the limiter must
 * cut to the rate. Invariants:
 *
 * - no 5xx and no transport error, ever;
 * - rate limit, checked soundly from the client side: the server admits a request at some instant
 *   between the client's send and receive times. If R+1 admitted requests of one key (R = tier
 *   rate; a request is admitted when it passed the limiter: anything but a 401, an unknown path or
 *   a 429 RATE_LIMIT_EXCEEDED) all lie inside one span [first send, last receive] shorter than
 *   1,000 ms, the server admitted R+1 within 1,000 ms: a violation. The converse cannot be proven
 *   from outside (latency spreads instants), so the admitted rate is also reported against R;
 *   X-RateLimit-Remaining must be in [0, R) on admitted answers and 0 on rate-limit 429s;
 * - quotas exact: after the load, each key's `/client/quota` daily `used` equals the counted
 *   requests its client got an answer to (every answer on a non-/client route except a rate-limit
 *   429: 200, 400, 403, 404 MARKET_NOT_FOUND and quota 429s), and monthly `used` the same minus
 *   the daily-quota refusals (they do not touch the monthly counter);
 * - memory flat: the server's VmRSS every 5 s; start, median, max and growth over the last half;
 * - a clean exit: SIGTERM, exit code 0.
 *
 * Prints a summary table and writes bench/results/soak-<date>.json. Exit status 1 on any violation.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
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

const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    load: { type: 'string', default: '0.15' },
    'burst-every': { type: 'string', default: '10' },
    'keys-per-group': { type: 'string', default: '5' },
  },
});
const MINUTES = Number(args.minutes);
const LOAD = Number(args.load);
const BURST_EVERY_MS = Number(args['burst-every']) * 1000;
const PER_GROUP = Number(args['keys-per-group']);
if (!(MINUTES > 0) || !(LOAD > 0) || !(BURST_EVERY_MS > 0) || !Number.isInteger(PER_GROUP) || PER_GROUP < 1) {
  process.stderr.write(
    'usage: node bench/soak.ts --minutes N [--load FRACTION_OF_RATE] [--burst-every S] [--keys-per-group K]\n',
  );
  process.exit(2);
}
const DURATION_MS = MINUTES * 60_000;
const TIERS = ['free', 'pro', 'enterprise'] as const;
type Tier = (typeof TIERS)[number];
type Mode = 'live' | 'test';

// ---- the service ----------------------------------------------------------------------------

const dataDir = mkdtempSync(join(tmpdir(), 'lrds-soak-'));
const tiersFile = join(dataDir, 'tiers.json');
const tierTable = JSON.parse(readFileSync(join(ROOT, 'config/tiers.json'), 'utf8'));
const RATE: Record<Tier, number> = {
  free: tierTable.tiers.free.ratePerSecond,
  pro: tierTable.tiers.pro.ratePerSecond,
  enterprise: tierTable.tiers.enterprise.ratePerSecond,
};
// Free keys get about load x 5/s plus one rate's worth per burst admitted, some 85 % of it counted:
// the daily quota runs out about halfway.
const FREE_ADMITTED_PER_S = RATE.free * LOAD + (RATE.free * 1000) / BURST_EVERY_MS;
const FREE_DAILY = Math.max(20, Math.round(((FREE_ADMITTED_PER_S * 0.85 * DURATION_MS) / 1000) * 0.5));
for (const t of TIERS) {
  tierTable.tiers[t].dailyQuota = t === 'free' ? FREE_DAILY : null;
  tierTable.tiers[t].monthlyQuota = null;
}
writeFileSync(tiersFile, JSON.stringify(tierTable, null, 2));

const port = await freePort();
const env = {
  ...process.env,
  DATA_DIR: dataDir,
  TIERS_FILE: tiersFile,
  PORT: String(port),
  HOST: '127.0.0.1',
  LOG_LEVEL: 'warn',
};
const BASE = `http://127.0.0.1:${port}`;

log(
  `soak: ${MINUTES} min, ${PER_GROUP * 6} keys at ${LOAD} x their rate, bursts every ${BURST_EVERY_MS / 1000} s, data in ${dataDir}`,
);
const rootKeys = Object.fromEntries(
  await Promise.all(
    TIERS.map(async (t) => [t, (await runNode([CLI, 'keys', 'create', '--tier', t], env)).trim()] as const),
  ),
) as Record<Tier, string>;

const server = spawnNode([CLI, 'serve'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
let serverStderr = '';
server.stderr?.setEncoding('utf8').on('data', (d: string) => {
  serverStderr = (serverStderr + d).slice(-20_000);
});
let expectExit = false;
const serverExit = new Promise<{ code: number | null; signal: string | null }>((res) =>
  server.on('exit', (code, signal) => {
    if (!expectExit) {
      log(
        `the server exited during the soak (code ${code}, signal ${signal}):\n${serverStderr.slice(-5000)}`,
      );
      process.exit(1);
    }
    res({ code, signal });
  }),
);
{
  const deadline = performance.now() + 60_000;
  for (;;) {
    const r = await fetch(`${BASE}/api/v1/health`).catch(() => null);
    if (r?.status === 200) break;
    if (server.exitCode !== null) throw new Error(`server exited at start-up:\n${serverStderr}`);
    if (performance.now() > deadline) throw new Error('server not healthy after 60 s');
    await sleep(100);
  }
}
log('server healthy');

// ---- HTTP client ------------------------------------------------------------------------------

interface Answer {
  status: number;
  error?: string;
  remaining?: number;
  sent: number;
  received: number;
  transport?: string;
}

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
    const req = http.request({ agent, host: '127.0.0.1', port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const received = performance.now();
        const status = res.statusCode ?? 0;
        const a: Answer = { status, sent, received };
        const rem = res.headers['x-ratelimit-remaining'];
        if (rem !== undefined) a.remaining = Number(rem);
        if (status >= 300) {
          try {
            a.error = JSON.parse(Buffer.concat(chunks).toString()).error;
          } catch {
            a.error = 'unparsable';
          }
        }
        resolveAnswer(a);
      });
      res.on('error', (e) =>
        resolveAnswer({ status: 0, sent, received: performance.now(), transport: e.message }),
      );
    });
    req.on('error', (e) =>
      resolveAnswer({ status: 0, sent, received: performance.now(), transport: e.message }),
    );
    req.end(body);
  });
}

// ---- keys ---------------------------------------------------------------------------------------

interface KeyRun {
  key: string;
  tier: Tier;
  mode: Mode;
  rate: number;
  agent: http.Agent;
  /** Send and receive instants of answers that passed the limiter. */
  admitted: { sent: number; received: number }[];
  counted: number;
  dailyRefusals: number;
  byOutcome: Map<string, number>;
  remainingViolations: number;
  quota?: { daily: number; monthly: number };
}

const runs: KeyRun[] = [];
function addRun(key: string, tier: Tier, mode: Mode): void {
  runs.push({
    key,
    tier,
    mode,
    rate: RATE[tier],
    // Idle sockets are dropped after 4 s, before the server's 5 s keep-alive timeout: reusing a
    // socket the server is closing would be a client-side ECONNRESET, not a server fault.
    agent: new http.Agent({ keepAlive: true, timeout: 4000 }),
    admitted: [],
    counted: 0,
    dailyRefusals: 0,
    byOutcome: new Map(),
    remainingViolations: 0,
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
runs.find((r) => r.key === enterpriseKey)!.counted++; // that list request was counted
await sleep(1100);

/** The mixed load of a keyed client: [weight, method, path, counted]. /client is rate limited, never counted. */
const MIX: [number, string, string, boolean][] = [
  [6, 'GET', '/api/v1/markets?limit=10', true],
  [2, 'GET', '/api/v1/markets?chainIds=1,8453&protocol=morpho&limit=20', true],
  [5, 'GET', '/api/v1/markets/search?query=weth&limit=10', true],
  [2, 'GET', '/api/v1/markets/search?query=wsteth%20weth&chainIds=1&limit=10', true],
  [4, 'GET', `/api/v1/markets/${ids.eth}`, true],
  [2, 'GET', `/api/v1/markets/${ids.other}`, true], // Free: 403 CHAIN_FORBIDDEN
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
const MIX_TOTAL = MIX.reduce((s, m) => s + m[0], 0);
function pick(): [string, string, boolean] {
  let r = Math.random() * MIX_TOTAL;
  for (const [w, method, path, counted] of MIX) {
    r -= w;
    if (r < 0) return [method, path, counted];
  }
  return ['GET', '/api/v1/markets', true];
}

// ---- invariants recorded as the load runs -------------------------------------------------------

/** Violations, grouped by message, with how often each happened. */
const failureCounts = new Map<string, number>();
function fail(message: string): void {
  failureCounts.set(message, (failureCounts.get(message) ?? 0) + 1);
}
const statusCounts = new Map<string, number>();
const latencies: number[] = [];
function tally(a: Answer): void {
  const k = a.status === 0 ? `transport: ${a.transport}` : `${a.status}${a.error ? ` ${a.error}` : ''}`;
  statusCounts.set(k, (statusCounts.get(k) ?? 0) + 1);
  if (a.status === 0) fail(`transport error: ${a.transport}`);
  else if (a.status === 503 && a.error === 'SERVICE_UNAVAILABLE')
    fail(
      '503 SERVICE_UNAVAILABLE: the server shed load (overloaded: lower --load, or use a quieter machine)',
    );
  else if (a.status >= 500) fail(`${a.status} ${a.error}`);
  if (a.status !== 0 && latencies.length < 2_000_000) latencies.push(a.received - a.sent);
}

const t0 = performance.now();
const endAt = t0 + DURATION_MS;
let stopping = false;

/** One request of a key, recorded. */
async function one(run: KeyRun): Promise<void> {
  const [method, path, counted] = pick();
  const a = await request(run.agent, method, path, run.key);
  tally(a);
  const outcome = a.error ?? String(a.status);
  run.byOutcome.set(outcome, (run.byOutcome.get(outcome) ?? 0) + 1);
  if (a.status === 401) fail(`401 for a valid ${run.tier} key on ${path}`);
  // Not through the limiter: no answer, refused before authentication, or a 5xx without rate
  // headers (shed before authentication). A 5xx with them passed the limiter and was counted.
  if (a.status === 0 || a.status === 401 || (a.status >= 500 && a.remaining === undefined)) return;
  if (a.error === 'RATE_LIMIT_EXCEEDED') {
    if (a.remaining !== 0) run.remainingViolations++;
    return;
  }
  run.admitted.push({ sent: a.sent, received: a.received });
  if (a.remaining === undefined || a.remaining < 0 || a.remaining >= run.rate) run.remainingViolations++;
  if (counted) run.counted++;
  if (a.error === 'DAILY_QUOTA_EXCEEDED') run.dailyRefusals++;
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

/** Requests without a valid key, and the open routes: 401s, health, OpenAPI, unknown paths. */
async function anonymousLoop(): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 2 });
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
    tally(a);
    if (a.status !== 0 && a.status < 500 && a.status !== expected)
      fail(`${path}: ${a.status}, expected ${expected}`);
    await sleep(50 * (0.5 + Math.random()));
  }
  agent.destroy();
}

const rss: { atS: number; mib: number }[] = [];
async function memoryLoop(): Promise<void> {
  while (!stopping && performance.now() < endAt + 1) {
    const mib = await procMemMiB(server.pid!);
    if (mib !== null) rss.push({ atS: Math.round((performance.now() - t0) / 1000), mib });
    const next = Math.min(5000, endAt - performance.now());
    if (next <= 0) break;
    await sleep(next);
  }
}

const progress = setInterval(() => {
  const done = (performance.now() - t0) / DURATION_MS;
  const total = [...statusCounts.values()].reduce((s, n) => s + n, 0);
  const violations = [...failureCounts.values()].reduce((a, b) => a + b, 0);
  log(
    `${(done * 100).toFixed(0)} %: ${total.toLocaleString('en-US')} answers, ${violations} violations, RSS ${rss.at(-1)?.mib ?? '?'} MiB`,
  );
}, 15_000);

const loops: Promise<void>[] = [anonymousLoop(), memoryLoop()];
runs.forEach((run, i) => {
  loops.push(keyLoad(run, i / runs.length));
});
await Promise.all(loops);
stopping = true;
clearInterval(progress);
const elapsedS = (performance.now() - t0) / 1000;
log(`load done after ${elapsedS.toFixed(1)} s; checking quotas`);

// ---- checks after the load ------------------------------------------------------------------------

/** Sound sliding-window check (see the header): spans of R+1 admitted answers under 1,000 ms. */
function windowViolations(run: KeyRun): { count: number; tightestMs: number } {
  const a = [...run.admitted].sort((x, y) => x.sent - y.sent);
  const R = run.rate;
  let count = 0;
  let tightest = Number.POSITIVE_INFINITY;
  // For each first request i (by send), the R+1 earliest-received among those sent at or after it.
  for (let i = 0; i + R < a.length; i++) {
    const recv = a
      .slice(i, i + 4 * R + 8)
      .map((x) => x.received)
      .sort((x, y) => x - y);
    const span = recv[R]! - a[i]!.sent;
    tightest = Math.min(tightest, span);
    if (span < 1000 - 2) count++; // 2 ms: the server's clock is whole milliseconds
  }
  return { count, tightestMs: tightest };
}

const utcDayAtStart = new Date(Date.now() - elapsedS * 1000).toISOString().slice(0, 10);
const utcDayNow = new Date().toISOString().slice(0, 10);
const dayRolledOver = utcDayAtStart !== utcDayNow;
await sleep(1100);
for (const run of runs) {
  const res = await fetch(`${BASE}/api/v1/client/quota`, { headers: { authorization: `Bearer ${run.key}` } });
  if (res.status !== 200) {
    fail(`quota read for a ${run.tier} key: ${res.status}`);
    continue;
  }
  const q = (await res.json()) as { data: { daily: { used: number }; monthly: { used: number } } };
  run.quota = { daily: q.data.daily.used, monthly: q.data.monthly.used };
  if (!dayRolledOver) {
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
if (exit.code !== 0) fail(`server exit after SIGTERM: ${JSON.stringify(exit)}\n${serverStderr.slice(-2000)}`);

// ---- report ------------------------------------------------------------------------------------

const groups = TIERS.flatMap((tier) =>
  (['live', 'test'] as const).map((mode) => {
    const rs = runs.filter((r) => r.tier === tier && r.mode === mode);
    const windows = rs.map(windowViolations);
    const sum = (f: (r: KeyRun) => number) => rs.reduce((s, r) => s + f(r), 0);
    const requests = sum((r) => [...r.byOutcome.values()].reduce((s, n) => s + n, 0));
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
      windowViolations: windows.reduce((s, w) => s + w.count, 0),
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
const memory = {
  samples: rss.length,
  startMiB: mibs[0] ?? null,
  medianMiB: sig(median(mibs), 4),
  maxMiB: mibs.length ? Math.max(...mibs) : null,
  endMiB: mibs.at(-1) ?? null,
  lastHalfGrowthMiB: half.length >= 2 ? sig(half.at(-1)!.mib - half[0]!.mib, 3) : null,
  lastHalfSlopeMiBPerMin: sig(slope, 3),
  series: rss,
};
const windowTotal = groups.reduce((s, g) => s + g.windowViolations, 0);
if (windowTotal > 0) fail(`${windowTotal} rate windows with more admitted answers than the tier rate`);
const totalAnswers = [...statusCounts.values()].reduce((s, n) => s + n, 0);
const failures = [...failureCounts].map(([message, times]) =>
  times > 1 ? `${message} (x${times})` : message,
);

const result = {
  kind: 'soak',
  date: new Date().toISOString(),
  machine: machine(),
  settings: {
    minutes: MINUTES,
    load: LOAD,
    burstEverySeconds: BURST_EVERY_MS / 1000,
    keys: runs.length,
    freeDailyQuota: FREE_DAILY,
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
  memory,
  dayRolledOver,
  serverExit: exit,
  failures,
  ok: failures.length === 0,
};

const resultsDir = resolve(BENCH_DIR, 'results');
mkdirSync(resultsDir, { recursive: true });
const file = join(resultsDir, `soak-${result.date.slice(0, 19).replace(/:/g, '-')}Z.json`);
writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
rmSync(dataDir, { recursive: true, force: true });

const out: string[] = [];
out.push(
  `\n## Soak: ${fmt(elapsedS / 60)} min, ${runs.length} keys, ${totalAnswers.toLocaleString('en-US')} answers (${fmt(totalAnswers / elapsedS)}/s), latency median ${result.latencyMs.median} ms, p99 ${result.latencyMs.p99} ms\n`,
);
out.push(
  '| tier | mode | keys | rate/s | admitted/s per key | rate 429 | daily-quota 429 | counted | quota used | quota exact | window violations | tightest R+1 span (ms) |',
);
out.push('|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const g of groups) {
  out.push(
    `| ${g.tier} | ${g.mode} | ${g.keys} | ${g.ratePerSecond} | ${g.admittedPerKeyPerSecond} | ${g.rateLimited} | ${g.dailyQuotaRefusals} | ${g.counted} | ${g.quotaDailyUsed} | ${dayRolledOver ? 'n/a (UTC day rolled over)' : g.quotaExact ? 'yes' : 'NO'} | ${g.windowViolations} | ${g.tightestWindowMs} |`,
  );
}
out.push(
  `\nServer RSS (MiB, every 5 s): start ${memory.startMiB}, median ${memory.medianMiB}, max ${memory.maxMiB}, end ${memory.endMiB}; last half: ${memory.lastHalfGrowthMiB} MiB (${memory.lastHalfSlopeMiBPerMin} MiB/min)`,
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
    : `\nVIOLATIONS (${failures.length}):\n- ${failures.slice(0, 30).join('\n- ')}`,
);
out.push(`\nWritten to ${file}`);
process.stdout.write(`${out.join('\n')}\n`);
process.exit(result.ok ? 0 : 1);
