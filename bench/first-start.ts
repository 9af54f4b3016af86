/**
 * The first start as a newcomer meets it: `lrds serve` on an empty DATA_DIR (the `default`
 * profile, a year of history, as `npm start` runs it), then a restart on the folder it left.
 *
 *   node bench/first-start.ts [--observe-sec N] [--settle-max-sec N] [--tree DIR] [--json-out FILE]
 *
 * `--tree DIR` runs the `lrds` of another checkout (DIR/src/cli/main.ts), to compare two versions
 * on the same machine at the same time.
 *
 * For each start: spawn to the first 200 of GET /api/v1/health (polled every 20 ms); then, every
 * 0.5 s for the first `--observe-sec` seconds (150 by default) once healthy, one GET /api/v1/health and one
 * market detail (an enterprise key made before the start), timed by the client: p50 / p99 / max
 * and every answer that was not a 200 (a 503 is the overload guard shedding). The first start's
 * folder size is read once the server has settled (under 10 % of a core over 2 s, at most
 * `--settle-max-sec`), with the server's CPU time until then.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CLI, fmt, freePort, log, quantileSorted, runNode, sig, spawnNode, stopChild } from './lib.ts';
import { cpuNsOf, settle, treeOf } from './load.ts';

export interface Probe {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  n: number;
  /** Answers other than 200, by status ('error' when no answer came within 5 s). */
  notOk: Record<string, number>;
}

export interface StartRun {
  msToHealthy: number;
  observedSec: number;
  health: Probe;
  marketDetail: Probe;
  /** The server's CPU time from spawn to the end of the observation, s (all its threads). */
  cpuSec: number;
}

export interface FirstStartResults {
  profile: 'default';
  first: StartRun;
  /** The first start's work once healthy: time until it settled, and the folder's size then. */
  settled: { secAfterSpawn: number; timedOut: boolean; cpuSec: number; folderMB: number };
  restart: StartRun;
  /** Targets: healthy in 8 s (first start), 3 s (restart); folder under 300 MB. */
  targets: { firstHealthyMs: number; restartHealthyMs: number; folderMB: number };
}

export const FIRST_START_TARGETS = { firstHealthyMs: 8_000, restartHealthyMs: 3_000, folderMB: 300 } as const;

function folderBytes(dir: string): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    total += e.isDirectory() ? folderBytes(p) : statSync(p).size;
  }
  return total;
}

/** One GET, timed by the client; the status, or 'error'. */
async function timedGet(
  url: string,
  headers: Record<string, string>,
): Promise<{ ms: number; status: string }> {
  const t0 = performance.now();
  try {
    const res = await fetch(url, { headers, signal: AbortSignal.timeout(5000) });
    await res.arrayBuffer();
    return { ms: performance.now() - t0, status: String(res.status) };
  } catch {
    return { ms: performance.now() - t0, status: 'error' };
  }
}

function summarize(samples: { ms: number; status: string }[]): Probe {
  const ms = Float64Array.from(samples.map((s) => s.ms)).sort();
  const notOk: Record<string, number> = {};
  for (const s of samples) if (s.status !== '200') notOk[s.status] = (notOk[s.status] ?? 0) + 1;
  return {
    p50Ms: sig(quantileSorted(ms, 0.5)),
    p99Ms: sig(quantileSorted(ms, 0.99)),
    maxMs: sig(ms.length ? ms[ms.length - 1]! : Number.NaN),
    n: samples.length,
    notOk,
  };
}

/** Spawns `lrds serve`, waits for healthy, probes until observeSec after spawn. */
async function start(
  env: NodeJS.ProcessEnv,
  port: number,
  key: string,
  observeSec: number,
  cli: string,
): Promise<{ child: ChildProcess; run: StartRun }> {
  const t0 = performance.now();
  const child = spawnNode([cli, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
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
  const base = `http://127.0.0.1:${port}/api/v1`;
  let msToHealthy = 0;
  for (;;) {
    if (exited !== null) throw new Error(`the service exited (${exited}) before it was healthy:\n${output}`);
    if (performance.now() - t0 > 900_000) throw new Error(`not healthy within 900 s:\n${output}`);
    const r = await timedGet(`${base}/health`, {});
    if (r.status === '200') {
      msToHealthy = Math.round(performance.now() - t0);
      break;
    }
    await new Promise((res) => setTimeout(res, 20));
  }
  const auth = { authorization: `Bearer ${key}` };
  // A market to ask for; the overload guard may refuse the first asks (503, Retry-After).
  let list = await fetch(`${base}/markets?limit=1`, { headers: auth });
  for (let i = 0; list.status === 503 && i < 60; i++) {
    await list.arrayBuffer();
    await new Promise((res) => setTimeout(res, 1000));
    list = await fetch(`${base}/markets?limit=1`, { headers: auth });
  }
  if (list.status !== 200)
    throw new Error(`GET /markets?limit=1 answered ${list.status}: ${await list.text()}`);
  const id = ((await list.json()) as { data: { uniqueKey: string }[] }).data[0]!.uniqueKey;
  const detail = `${base}/markets/${encodeURIComponent(id)}`;
  const health: { ms: number; status: string }[] = [];
  const market: { ms: number; status: string }[] = [];
  const end = performance.now() + observeSec * 1000;
  for (let next = performance.now(); next < end; next += 500) {
    const wait = next - performance.now();
    if (wait > 0) await new Promise((res) => setTimeout(res, wait));
    const [h, m] = await Promise.all([timedGet(`${base}/health`, {}), timedGet(detail, auth)]);
    health.push(h);
    market.push(m);
  }
  const cpuSec = (await cpuNsOf(await treeOf(child.pid!))) / 1e9;
  return {
    child,
    run: {
      msToHealthy,
      observedSec: sig((performance.now() - t0) / 1000),
      health: summarize(health),
      marketDetail: summarize(market),
      cpuSec: sig(cpuSec),
    },
  };
}

export async function runFirstStart(opts: {
  observeSec: number;
  settleMaxSec: number;
  /** The `lrds` entry point to run; this checkout's by default. */
  cli?: string;
}): Promise<FirstStartResults> {
  const cli = opts.cli ?? CLI;
  const dir = mkdtempSync(join(tmpdir(), 'lrds-first-start-'));
  const data = join(dir, 'data');
  let child: ChildProcess | null = null;
  try {
    const port = await freePort();
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: data, PORT: String(port), HOST: '127.0.0.1' };
    for (const k of [
      'DATABASE_URL',
      'REDIS_URL',
      'SANDBOX_HISTORY_DAYS',
      'SANDBOX_HOURLY_HISTORY_DAYS',
      'LOG_LEVEL',
    ])
      delete env[k];
    env.LOG_LEVEL = 'warn';
    // A newcomer's machine has compiled none of lrds's modules yet: an empty compile cache of
    // its own (the restart below then finds what the first start compiled).
    env.NODE_COMPILE_CACHE = join(dir, 'compile-cache');
    delete env.NODE_DISABLE_COMPILE_CACHE;
    // The key is made first (the store is created empty); the first start then seeds it.
    const key = (
      await runNode([CLI, 'keys', 'create', '--tier', 'enterprise', '--name', 'bench'], env)
    ).trim();
    if (!key.startsWith('lrds_')) throw new Error(`keys create printed no key: '${key}'`);
    log(`first start on an empty DATA_DIR (${data}), observed ${opts.observeSec} s`);
    const spawnedAt = performance.now();
    const first = await start(env, port, key, opts.observeSec, cli);
    child = first.child;
    log(`first start: healthy after ${first.run.msToHealthy} ms; ${describe(first.run)}`);
    const settled = await settle(child.pid!, spawnedAt, opts.settleMaxSec);
    const settledCpu = (await cpuNsOf(await treeOf(child.pid!))) / 1e9;
    const folderMB = folderBytes(data) / 1e6;
    log(
      `settled ${fmt(settled.sec)} s after spawn${settled.timedOut ? ' (gave up waiting)' : ''}; folder ${fmt(folderMB)} MB`,
    );
    await stopChild(child, 15_000);
    child = null;
    log('restart on the same folder');
    const restart = await start(env, port, key, Math.min(opts.observeSec, 30), cli);
    child = restart.child;
    log(`restart: healthy after ${restart.run.msToHealthy} ms; ${describe(restart.run)}`);
    return {
      profile: 'default',
      first: first.run,
      settled: {
        secAfterSpawn: sig(settled.sec),
        timedOut: settled.timedOut,
        cpuSec: sig(settledCpu),
        folderMB: sig(folderMB),
      },
      restart: restart.run,
      targets: FIRST_START_TARGETS,
    };
  } finally {
    if (child) await stopChild(child, 15_000);
    rmSync(dir, { recursive: true, force: true });
  }
}

function describe(r: StartRun): string {
  const p = (x: Probe) =>
    `p50 ${fmt(x.p50Ms)} / p99 ${fmt(x.p99Ms)} / max ${fmt(x.maxMs)} ms${Object.keys(x.notOk).length ? ` not 200: ${JSON.stringify(x.notOk)}` : ''}`;
  return `health ${p(r.health)}; market detail ${p(r.marketDetail)}; server CPU ${fmt(r.cpuSec)} s in ${fmt(r.observedSec)} s`;
}

export function firstStartTable(fs: FirstStartResults): string {
  const t = fs.targets;
  const probe = (x: Probe) =>
    `${fmt(x.p50Ms)} / ${fmt(x.p99Ms)} / ${fmt(x.maxMs)}${
      Object.keys(x.notOk).length
        ? ` (not 200: ${Object.entries(x.notOk)
            .map(([s, n]) => `${n}× ${s}`)
            .join(', ')})`
        : ''
    }`;
  const mark = (ok: boolean) => (ok ? '✔' : '✘');
  return [
    '| `default` profile, empty DATA_DIR | spawn → healthy | `/health` p50 / p99 / max ms | market detail p50 / p99 / max ms | server CPU s (of s observed) |',
    '|---|---:|---:|---:|---:|',
    `| first start | ${fmt(fs.first.msToHealthy / 1000)} s (≤ ${t.firstHealthyMs / 1000} ${mark(fs.first.msToHealthy <= t.firstHealthyMs)}) | ${probe(fs.first.health)} | ${probe(fs.first.marketDetail)} | ${fmt(fs.first.cpuSec)} of ${fmt(fs.first.observedSec)} |`,
    `| restart | ${fmt(fs.restart.msToHealthy / 1000)} s (≤ ${t.restartHealthyMs / 1000} ${mark(fs.restart.msToHealthy <= t.restartHealthyMs)}) | ${probe(fs.restart.health)} | ${probe(fs.restart.marketDetail)} | ${fmt(fs.restart.cpuSec)} of ${fmt(fs.restart.observedSec)} |`,
    '',
    `The first start settled ${fmt(fs.settled.secAfterSpawn)} s after spawn${fs.settled.timedOut ? ' (the bench stopped waiting)' : ''}, having used ${fmt(fs.settled.cpuSec)} s of CPU; the folder then held ${fmt(fs.settled.folderMB)} MB (target < ${t.folderMB} MB ${mark(fs.settled.folderMB < t.folderMB)}).`,
  ].join('\n');
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      'observe-sec': { type: 'string', default: '150' },
      'settle-max-sec': { type: 'string', default: '600' },
      'json-out': { type: 'string' },
      tree: { type: 'string' },
    },
  });
  const r = await runFirstStart({
    observeSec: Number(values['observe-sec']),
    settleMaxSec: Number(values['settle-max-sec']),
    ...(values.tree ? { cli: join(values.tree, 'src/cli/main.ts') } : {}),
  });
  if (values['json-out']) writeFileSync(values['json-out'], JSON.stringify(r, null, 2));
  process.stdout.write(`${firstStartTable(r)}\n`);
}
