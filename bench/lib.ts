/** Small helpers shared by the benchmark scripts: statistics, formatting, child processes. */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
export const ROOT = resolve(BENCH_DIR, '..');
export const CLI = resolve(ROOT, 'src/cli/main.ts');

/** Value at quantile q (0..1) of an ascending-sorted array, nearest-rank. */
export function quantileSorted(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i]!;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Median and p99 of a set of samples (sorted in place). */
export function summarize(samples: Float64Array): { median: number; p99: number; n: number } {
  samples.sort();
  return { median: quantileSorted(samples, 0.5), p99: quantileSorted(samples, 0.99), n: samples.length };
}

/** Rounds to `digits` significant figures, for JSON and tables that stay readable. */
export function sig(x: number, digits = 3): number {
  if (!Number.isFinite(x) || x === 0) return x;
  return Number(x.toPrecision(digits));
}

export function fmt(x: number | null | undefined, digits = 3): string {
  if (x === null || x === undefined || Number.isNaN(x)) return 'n/a';
  if (Math.abs(x) >= 10 ** digits) return Math.round(x).toLocaleString('en-US');
  return String(sig(x, digits));
}

export function machine() {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model ?? 'unknown',
    cpuCount: cpus.length,
    totalMemoryGiB: sig(os.totalmem() / 2 ** 30, 3),
    node: process.version,
    platform: os.platform(),
    kernel: os.release(),
    loadAverageAtStart: os.loadavg().map((l) => sig(l, 3)),
  };
}

/** A TCP port free right now on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => res(port));
    });
  });
}

/** RSS of a process in MiB from /proc (Linux), or null elsewhere. `field` VmRSS or VmHWM (peak). */
export async function procMemMiB(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): Promise<number | null> {
  try {
    const { readFile } = await import('node:fs/promises');
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    return m ? sig(Number(m[1]) / 1024, 4) : null;
  } catch {
    return null;
  }
}

/** Children this process started, ended on exit so an interrupted run leaves nothing behind. */
const children = new Set<ChildProcess>();
let exitHooked = false;

function hookExit(): void {
  if (exitHooked) return;
  exitHooked = true;
  const killAll = () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  };
  process.on('exit', killAll);
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => {
      killAll();
      process.exit(130);
    });
  }
}

/** Tracks a child started elsewhere (not Node, e.g. a database server) so that exit ends it too. */
export function trackChild(child: ChildProcess): void {
  hookExit();
  children.add(child);
  child.on('exit', () => children.delete(child));
}

/** Spawns the pinned Node (the one running this script) on a script, tracked for clean-up. */
export function spawnNode(
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; stdio?: ('pipe' | 'inherit' | 'ignore')[] } = {},
): ChildProcess {
  hookExit();
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: opts.env ?? process.env,
    stdio: opts.stdio ?? ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.on('exit', () => children.delete(child));
  return child;
}

/** Runs a Node script to completion; resolves with its stdout, rejects with its stderr on failure. */
export function runNode(
  args: string[],
  env: NodeJS.ProcessEnv,
  opts: { stderr?: 'inherit' | 'pipe' } = {},
): Promise<string> {
  const child = spawnNode(args, { env, stdio: ['ignore', 'pipe', opts.stderr ?? 'pipe'] });
  let out = '';
  let err = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    err += d;
  });
  return new Promise((res, rej) => {
    child.on('error', rej);
    child.on('exit', (code, signal) => {
      if (code === 0) res(out);
      else rej(new Error(`node ${args.join(' ')} exited with ${code ?? signal}\n${err.slice(-4000)}`));
    });
  });
}

/** Ends a child: SIGTERM, then SIGKILL after `graceMs`. */
export async function stopChild(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((res) => child.once('exit', () => res()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

export function log(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

/** Makes V8 collect garbage when the process runs with --expose-gc; a no-op otherwise. */
export function gc(): void {
  const g = (globalThis as { gc?: () => void }).gc;
  if (g) {
    g();
    g();
  }
}

/** CPU time (user + system) of a process so far, ms, from /proc/<pid>/stat (clock ticks of 10 ms). */
export async function cpuMsOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * Waits until the server is quiet, at most `maxMs` (15 minutes): under 10 % of a core over 2 s (the
 * simulation's ticks cost less). A server just started on a new dataset spends minutes on its
 * own jobs (the history backfill, the first ratings, a year of research digests, the daily totals
 * read ahead), whose memory and CPU are theirs, not an answer's. Returns the time waited, ms, and whether it gave up.
 */
export async function settle(pid: number, maxMs = 15 * 60_000): Promise<{ ms: number; timedOut: boolean }> {
  const t0 = performance.now();
  for (;;) {
    const cpu0 = await cpuMsOf(pid);
    await new Promise((r) => setTimeout(r, 2000));
    const busyMs = (await cpuMsOf(pid)) - cpu0;
    const ms = Math.round(performance.now() - t0);
    if (busyMs < 200) return { ms, timedOut: false };
    if (ms > maxMs) return { ms, timedOut: true };
  }
}
