/**
 * The first start on the `large` profile: `lrds serve` on a copy of a folder holding the large
 * sandbox as `lrds seed --profile large` left it (never started), timed from spawn to healthy,
 * and to the end of the catch-up: the sandbox's first liquidation step, which liquidates what the
 * prices called for at every hour from the snapshot to now (docs/sandbox.md). The steps start as
 * the service is built and run in the background, at most 500 positions each; the service logs
 * `sandbox liquidations caught up` (info: the window, steps, liquidations) once everything due
 * is taken, or `sandbox positions step failed` (warn).
 *
 *   node bench/large-start.ts [--data DIR | --seed] [--quick] [--settle-max-sec N] [--json-out FILE]
 *
 * `--data DIR` (default bench/.data) is only read: its lrds.db is copied to a temporary folder
 * first (the server writes its history there). A folder a server has already run on (the HTTP
 * parts serve bench/.data) holds the simulation's checkpoints: its start is a restart, not a
 * first start, and the result says so (`startedBefore`). `--seed` seeds the temporary folder
 * instead (`lrds seed --profile large`, timed: the seed figure), then starts on it. Without `--quick` the bench then waits until the
 * server has settled (under 10 % of a core over 2 s, at most `--settle-max-sec`, 900 by
 * default) and reports that too; `--quick` stops once the catch-up has ended.
 */
import type { ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ACTIVITY_SOURCE_ID } from '../src/ingest/sandbox/activity.ts';
import { LIQUIDATIONS_SOURCE_ID } from '../src/ingest/sandbox/liquidator.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { BENCH_DIR, CLI, fmt, freePort, log, runNode, sig, spawnNode, stopChild } from './lib.ts';
import { cpuNsOf, settle, treeOf } from './load.ts';

export interface LargeStartResults {
  profile: 'large';
  /** Size of the lrds.db started on, MB. */
  dataMB: number;
  /** Copying it from --data, s; null when seeded here. */
  copySec: number | null;
  /** `lrds seed --profile large` into the empty folder (--seed): wall time, s. */
  seed: { sec: number } | null;
  /** The folder had been served before (its simulation checkpoints recorded): a restart. */
  startedBefore: boolean;
  msToHealthy: number;
  /** Spawn to the end of the catch-up step, and what it did; null when it did not end in time. */
  catchUp: {
    msAfterSpawn: number;
    liquidations: number;
    /** Liquidation steps it took (each takes at most 500 positions). */
    steps: number | null;
    /** The hours it covered: from the snapshot (first start) or the last step (restart) to its end. */
    window: string | null;
    failed: string | null;
  } | null;
  /** The server's CPU time (all its threads) from spawn to the end of the catch-up, s. */
  cpuSecToCatchUp: number | null;
  /** When the catch-up did not end in time: its steps logged so far, their liquidations, and the server's CPU time then. */
  unfinished: { steps: number; liquidations: number; cpuSec: number; afterSec: number } | null;
  /** Without --quick: when the server settled after spawn, and its CPU time then. */
  settled: { secAfterSpawn: number; timedOut: boolean; cpuSec: number } | null;
  rssMiBAtCatchUp: number | null;
}

async function healthy(base: string): Promise<boolean> {
  try {
    const res = await fetch(`${base}/health`, { signal: AbortSignal.timeout(5000) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

async function rssMiB(pid: number): Promise<number | null> {
  try {
    const { readFile } = await import('node:fs/promises');
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = /VmRSS:\s+(\d+)/.exec(status)?.[1];
    return kb === undefined ? null : sig(Number(kb) / 1024);
  } catch {
    return null;
  }
}

export async function runLargeStart(opts: {
  data: string;
  seed: boolean;
  quick: boolean;
  settleMaxSec: number;
}): Promise<LargeStartResults> {
  const dir = mkdtempSync(join(tmpdir(), 'lrds-large-start-'));
  let child: ChildProcess | null = null;
  try {
    let copySec: number | null = null;
    let seed: LargeStartResults['seed'] = null;
    if (opts.seed) {
      log(`seeding the large profile into ${dir}`);
      const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dir };
      for (const k of ['DATABASE_URL', 'REDIS_URL', 'SANDBOX_HISTORY_DAYS', 'SANDBOX_HOURLY_HISTORY_DAYS'])
        delete env[k];
      const t0 = performance.now();
      await runNode([CLI, 'seed', '--profile', 'large'], env, { stderr: 'inherit' });
      // Wall time; the seed's CPU time and peak memory: run it under /usr/bin/time -v (README).
      seed = { sec: sig((performance.now() - t0) / 1000) };
      log(`seeded in ${seed.sec} s`);
    } else {
      const source = join(opts.data, 'lrds.db');
      if (!existsSync(source))
        throw new Error(
          `${source} does not exist: seed it first (lrds seed --profile large, DATA_DIR=${opts.data}) or pass --seed`,
        );
      // Pages in a WAL would be missing from a copy of lrds.db alone (a reader leaves an empty one).
      if (existsSync(`${source}-wal`) && statSync(`${source}-wal`).size > 0)
        throw new Error(`${source}-wal is not empty: a process has the dataset open; wait for it to end`);
      const t0 = performance.now();
      copyFileSync(source, join(dir, 'lrds.db'));
      copySec = sig((performance.now() - t0) / 1000);
    }
    const dataMB = sig(statSync(join(dir, 'lrds.db')).size / 1e6);
    const store = new SqliteStore(join(dir, 'lrds.db'));
    const info = await store.datasetInfo();
    // The seed records the sandbox and its history; a server records its liquidations and activity.
    const startedBefore = (await store.listSources()).some(
      (x) => x.id === LIQUIDATIONS_SOURCE_ID || x.id === ACTIVITY_SOURCE_ID,
    );
    await store.close();
    if (info?.profile !== 'large')
      throw new Error(`the folder holds the ${info?.profile ?? 'no'} profile, not large`);
    log(
      `${fmt(dataMB)} MB in ${dir}${copySec === null ? '' : ` (copied in ${copySec} s)`}` +
        (startedBefore ? '; served before: this start is a restart, not a first start' : ''),
    );
    const port = await freePort();
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dir, PORT: String(port), HOST: '127.0.0.1' };
    for (const k of ['DATABASE_URL', 'REDIS_URL', 'SANDBOX_HISTORY_DAYS', 'SANDBOX_HOURLY_HISTORY_DAYS'])
      delete env[k];
    // info: the catch-up's end is its `sandbox liquidations caught up` line.
    env.LOG_LEVEL = 'info';
    const spawnedAt = performance.now();
    child = spawnNode([CLI, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const pid = child.pid!;
    let catchUp: LargeStartResults['catchUp'] = null;
    let tail = '';
    let exited: string | null = null;
    child.on('exit', (code, signal) => {
      exited = String(code ?? signal);
    });
    let buffer = '';
    /** The steps that liquidated something, logged so far (`sandbox liquidations`). */
    const progress = { steps: 0, liquidations: 0 };
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      tail = (tail + d).slice(-8000);
      buffer += d;
      for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (catchUp !== null || !line.includes('sandbox')) continue;
        if (line.includes('"msg":"sandbox liquidations"')) {
          const n = /"liquidations":(\d+)/.exec(line)?.[1];
          progress.steps++;
          progress.liquidations += Number(n ?? 0);
        }
        try {
          const entry = JSON.parse(line) as {
            msg?: string;
            liquidations?: number;
            steps?: number;
            from?: string;
            to?: string;
            err?: unknown;
          };
          if (entry.msg === 'sandbox liquidations caught up')
            catchUp = {
              msAfterSpawn: Math.round(performance.now() - spawnedAt),
              liquidations: entry.liquidations ?? 0,
              steps: entry.steps ?? null,
              window: entry.from && entry.to ? `${entry.from} → ${entry.to}` : null,
              failed: null,
            };
          else if (entry.msg?.startsWith('sandbox positions step failed'))
            catchUp = {
              msAfterSpawn: Math.round(performance.now() - spawnedAt),
              liquidations: 0,
              steps: null,
              window: null,
              failed: JSON.stringify(entry.err).slice(0, 300),
            };
        } catch {
          // not a JSON log line
        }
      }
    });
    child.stderr?.setEncoding('utf8').on('data', (d: string) => {
      tail = (tail + d).slice(-8000);
    });
    const base = `http://127.0.0.1:${port}/api/v1`;
    let msToHealthy = 0;
    for (;;) {
      if (exited !== null) throw new Error(`the service exited (${exited}) before it was healthy:\n${tail}`);
      if (performance.now() - spawnedAt > 900_000) throw new Error(`not healthy within 900 s:\n${tail}`);
      if (await healthy(base)) {
        msToHealthy = Math.round(performance.now() - spawnedAt);
        break;
      }
      await new Promise((res) => setTimeout(res, 20));
    }
    log(`large profile: healthy after ${fmt(msToHealthy / 1000)} s; waiting for the catch-up`);
    const deadline = spawnedAt + opts.settleMaxSec * 1000;
    while (catchUp === null && exited === null && performance.now() < deadline)
      await new Promise((res) => setTimeout(res, 100));
    const cpuSecToCatchUp = catchUp === null ? null : sig((await cpuNsOf(await treeOf(pid))) / 1e9);
    const rssMiBAtCatchUp = catchUp === null ? null : await rssMiB(pid);
    const c = catchUp as LargeStartResults['catchUp'];
    const unfinished =
      c === null && exited === null
        ? {
            ...progress,
            cpuSec: sig((await cpuNsOf(await treeOf(pid))) / 1e9),
            afterSec: sig((performance.now() - spawnedAt) / 1000),
          }
        : null;
    log(
      c === null
        ? `no end of the catch-up within ${opts.settleMaxSec} s${exited !== null ? ` (exited ${exited})` : ''}` +
            (unfinished
              ? `: ${unfinished.steps} steps had liquidated ${unfinished.liquidations}; server CPU ${unfinished.cpuSec} s`
              : '')
        : `catch-up ended ${fmt(c.msAfterSpawn / 1000)} s after spawn: ${c.liquidations} liquidations in ${c.steps} steps (${c.window})` +
            `${c.failed ? `, failed: ${c.failed}` : ''}; server CPU ${cpuSecToCatchUp} s, RSS ${rssMiBAtCatchUp} MiB`,
    );
    let settled: LargeStartResults['settled'] = null;
    if (!opts.quick && exited === null) {
      const s = await settle(pid, spawnedAt, opts.settleMaxSec);
      settled = {
        secAfterSpawn: sig(s.sec),
        timedOut: s.timedOut,
        cpuSec: sig((await cpuNsOf(await treeOf(pid))) / 1e9),
      };
      log(`settled ${fmt(settled.secAfterSpawn)} s after spawn${s.timedOut ? ' (gave up waiting)' : ''}`);
    }
    return {
      profile: 'large',
      dataMB,
      copySec,
      seed,
      startedBefore,
      msToHealthy,
      catchUp: c,
      unfinished,
      cpuSecToCatchUp,
      settled,
      rssMiBAtCatchUp,
    };
  } finally {
    if (child) await stopChild(child, 30_000);
    rmSync(dir, { recursive: true, force: true });
  }
}

export function largeStartTable(r: LargeStartResults): string {
  const c = r.catchUp;
  return [
    '| `large` profile, first start on a seeded folder | spawn → healthy | spawn → catch-up ended | catch-up liquidations | server CPU to catch-up end | RSS then | settled after spawn |',
    '|---|---:|---:|---:|---:|---:|---:|',
    `| ${fmt(r.dataMB)} MB lrds.db${c?.window ? `, ${c.window}` : ''}${r.seed ? `, seeded in ${fmt(r.seed.sec)} s` : ''}${r.startedBefore ? ' (served before: a restart)' : ''} | ${fmt(r.msToHealthy / 1000)} s | ${c ? `${fmt(c.msAfterSpawn / 1000)} s${c.failed ? ' (failed)' : ''}` : r.unfinished ? `not ended in ${fmt(r.unfinished.afterSec)} s (${fmt(r.unfinished.liquidations)} liquidations in ${r.unfinished.steps} steps, CPU ${fmt(r.unfinished.cpuSec)} s)` : 'not ended'} | ${c ? fmt(c.liquidations) : '–'} | ${r.cpuSecToCatchUp === null ? '–' : `${fmt(r.cpuSecToCatchUp)} s`} | ${r.rssMiBAtCatchUp === null ? '–' : `${fmt(r.rssMiBAtCatchUp)} MiB`} | ${r.settled ? `${fmt(r.settled.secAfterSpawn)} s${r.settled.timedOut ? ' (not settled)' : ''}, CPU ${fmt(r.settled.cpuSec)} s` : '–'} |`,
  ].join('\n');
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      data: { type: 'string', default: join(BENCH_DIR, '.data') },
      seed: { type: 'boolean', default: false },
      quick: { type: 'boolean', default: false },
      'settle-max-sec': { type: 'string', default: '900' },
      'json-out': { type: 'string' },
    },
  });
  const r = await runLargeStart({
    data: values.data,
    seed: values.seed,
    quick: values.quick,
    settleMaxSec: Number(values['settle-max-sec']),
  });
  if (values['json-out']) writeFileSync(values['json-out'], JSON.stringify(r, null, 2));
  process.stdout.write(`${largeStartTable(r)}\n`);
}
