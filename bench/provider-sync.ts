/**
 * A first sync as a user runs it, behind a stand-in provider (provider-proxy.ts: getLogs capped
 * at 10,000 blocks and results, 25 requests a second, 50-150 ms of latency, an occasional 429):
 * `lrds ingest` in its own process over a new store, its sources file reading the chain
 * `passes` passes of logs (`syncBlocks`). Measured twice: run through, and killed (SIGKILL)
 * half-way (at half the time the sync run through took), then started again: wall time to the
 * synced checkpoint, HTTP requests at the provider, the processes' peak RSS.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChainSync, SourceState } from '../src/domain/records/sources.ts';
import { openStore } from '../src/store/open.ts';
import { tempDir } from '../test/helpers.ts';
import { providerProxy } from './provider-proxy.ts';

export interface ProviderSyncRun {
  ms: number;
  requests: number;
  calls: number;
  throttled: number;
  logsRefused: number;
  /** The largest peak RSS of the ingesting processes, MB. */
  peakRssMb: number;
  /** Where the sync stood at the kill, as last stored (the killed run only). */
  killedAt?: ChainSync;
  /** The last block of logs the dead process stored (the killed run only). */
  killedThroughBlock?: number | undefined;
  /**
   * The last block of logs read by the first pass the process started again stored (the killed
   * run only; the head once synced).
   */
  resumedThroughBlock?: number;
  /**
   * From the kill to the first pass the new process stored (the killed run only): the wait for
   * the dead process's ingestion lease to expire, then that pass.
   */
  killToResumedPassMs?: number;
}

/** Peak resident set of a process, MB (Linux's VmHWM); 0 once it is gone. */
function peakRssMb(pid: number | undefined): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

export async function providerSync(
  anvilUrl: string,
  sourcesJson: { chains: Record<string, unknown>[] },
  head: number,
  passes: number,
  /** When to kill the process (SIGKILL) and start it again, ms after it started; null: run through. */
  killAfterMs: number | null,
): Promise<ProviderSyncRun> {
  const proxy = await providerProxy(anvilUrl);
  const dir = tempDir('lrds-bench-provider-sync-');
  const file = join(dir, 'sources.json');
  writeFileSync(
    file,
    JSON.stringify({
      chains: sourcesJson.chains.map((c) => ({
        ...c,
        rpcUrl: proxy.url,
        syncBlocks: Math.ceil((head + 1) / passes),
        rpcLimits: { requestsPerSecond: 25 },
      })),
    }),
  );
  const store = await openStore({ dataDir: dir, databaseUrl: null });
  const start = (): ChildProcess => {
    const child = spawn(process.execPath, ['src/cli/main.ts', 'ingest'], {
      env: { ...process.env, DATA_DIR: dir, SOURCES_FILE: file, DATABASE_URL: '', INGEST_INTERVAL_MS: '200' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr?.on('data', (d: Buffer) => {
      err = (err + d.toString()).slice(-2000);
      if (process.env.BENCH_DEBUG) process.stderr.write(d);
    });
    child.on('exit', (code, signal) => {
      if (code !== 0 && signal === null) process.stderr.write(`lrds ingest exited ${code}: ${err}\n`);
    });
    return child;
  };
  const state = async (): Promise<SourceState | undefined> =>
    (await store.listSources()).find((s) => s.id.startsWith('chain:'));
  const stop = (child: ChildProcess, signal: NodeJS.Signals) =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill(signal);
    });
  const run: ProviderSyncRun = {
    ms: 0,
    requests: 0,
    calls: 0,
    throttled: 0,
    logsRefused: 0,
    peakRssMb: 0,
  };
  const t0 = performance.now();
  let child = start();
  let killed = false;
  let killedAtMs = 0;
  let killedStateAt = 0;
  try {
    for (;;) {
      await new Promise((r) => setTimeout(r, 100));
      run.peakRssMb = Math.max(run.peakRssMb, peakRssMb(child.pid));
      const s = await state();
      const sync = s?.sync ? Object.values(s.sync)[0] : undefined;
      if (
        killed &&
        s &&
        s.updatedAt > killedStateAt &&
        s.consecutiveFailures === 0 &&
        run.killToResumedPassMs === undefined
      ) {
        run.killToResumedPassMs = performance.now() - killedAtMs;
        run.resumedThroughBlock = sync?.throughBlock ?? Object.values(s.lastBlock)[0] ?? 0;
      }
      if (s && s.refreshedAt !== null && !sync && (Object.values(s.lastBlock)[0] ?? 0) >= head) break;
      if (killAfterMs !== null && !killed && performance.now() - t0 >= killAfterMs) {
        if (sync) run.killedAt = sync;
        await stop(child, 'SIGKILL');
        killedAtMs = performance.now();
        // (The dead process may have stored one more pass between the poll and the kill.)
        const dead = await state();
        killedStateAt = dead?.updatedAt ?? 0;
        run.killedThroughBlock = dead?.sync ? Object.values(dead.sync)[0]?.throughBlock : undefined;
        killed = true;
        child = start();
      }
      if (performance.now() - t0 > 60 * 60_000) throw new Error('the sync did not end within an hour');
    }
    run.ms = performance.now() - t0;
  } finally {
    await stop(child, 'SIGTERM');
    await store.close();
    await proxy.close();
  }
  Object.assign(run, proxy.counts);
  return run;
}
