/**
 * The large answer of GET /liquidations (issue targets): on the running service, with
 * `limit=500000`,
 * - the first byte of the body within 200 ms of the request;
 * - the server's RSS growth over the whole answer under 50 MB (sampled from /proc every 10 ms);
 * - a client that stops reading does not make the server buffer the answer: the client pauses
 *   after its first MiB for 3 s; the server's RSS growth and the CPU it spends during the pause
 *   are recorded (a server that went on reading and serializing would show both).
 * Read with node:http, in NDJSON (one line per liquidation) and in JSON.
 */
import { request } from 'node:http';
import { cpuMsOf, procMemMiB, settle, sig } from './lib.ts';

export const STREAM_TARGETS = { firstByteMs: 200, rssGrowthMiB: 50 } as const;

export interface StreamRun {
  format: 'ndjson' | 'json';
  rows: number;
  bytes: number;
  firstByteMs: number;
  totalMs: number;
  rssBeforeMiB: number;
  rssPeakMiB: number;
  rssGrowthMiB: number;
}

export interface StreamResults {
  limit: number;
  /** How long the bench waited for the server to settle (its start-up jobs done) before the first answer. */
  settleMs: number;
  /** True when it gave up waiting (15 minutes) and measured a busy server. */
  settleTimedOut: boolean;
  runs: StreamRun[];
  slowClient: {
    pausedAfterBytes: number;
    pauseMs: number;
    rssGrowthDuringPauseMiB: number;
    /** CPU the server spent while the client read nothing: near 0 when it waits for the socket. */
    serverCpuMsDuringPause: number;
    /** The same over 3 s without any request, just before. */
    serverCpuMsIdle: number;
    rows: number;
    totalMs: number;
  };
  pass: boolean;
}

async function rssOf(pid: number): Promise<number> {
  return (await procMemMiB(pid)) ?? Number.NaN;
}

/** One full read of the answer, sampling the server's RSS. */
async function readAll(
  url: string,
  key: string,
  pid: number,
  format: 'ndjson' | 'json',
  pause?: { afterBytes: number; ms: number },
): Promise<StreamRun & { pausedAfterBytes: number; pauseGrowth: number; pauseCpuMs: number }> {
  const rssBefore = await rssOf(pid);
  let peak = rssBefore;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, await rssOf(pid));
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  const t0 = performance.now();
  let firstByteMs = Number.NaN;
  let bytes = 0;
  let newlines = 0;
  let pausedAfterBytes = 0;
  let pauseGrowth = 0;
  let pauseCpuMs = 0;
  await new Promise<void>((resolve, reject) => {
    const req = request(
      url,
      {
        headers: {
          authorization: `Bearer ${key}`,
          accept: format === 'ndjson' ? 'application/x-ndjson' : 'application/json',
        },
      },
      (res) => {
        if (res.statusCode !== 200) {
          reject(new Error(`GET ${url} answered ${res.statusCode}`));
          res.resume();
          return;
        }
        let paused = false;
        res.on('data', (chunk: Buffer) => {
          if (Number.isNaN(firstByteMs)) firstByteMs = performance.now() - t0;
          bytes += chunk.length;
          for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) newlines++;
          if (pause && !paused && bytes >= pause.afterBytes) {
            pausedAfterBytes = bytes;
            paused = true;
            res.pause();
            void (async () => {
              const rss0 = await rssOf(pid);
              const cpu0 = await cpuMsOf(pid);
              await new Promise((r) => setTimeout(r, pause.ms));
              pauseGrowth = (await rssOf(pid)) - rss0;
              pauseCpuMs = (await cpuMsOf(pid)) - cpu0;
              res.resume();
            })();
          }
        });
        res.on('end', () => resolve());
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
  const totalMs = performance.now() - t0;
  sampling = false;
  await sampler;
  return {
    format,
    // NDJSON: a line per liquidation and the meta line. JSON: counted by the client elsewhere.
    rows: format === 'ndjson' ? Math.max(0, newlines - 1) : -1,
    bytes,
    firstByteMs: sig(firstByteMs, 3),
    totalMs: sig(totalMs, 4),
    rssBeforeMiB: rssBefore,
    rssPeakMiB: peak,
    rssGrowthMiB: sig(peak - rssBefore, 3),
    pausedAfterBytes,
    pauseGrowth: sig(pauseGrowth, 3),
    pauseCpuMs: sig(pauseCpuMs, 3),
  };
}

export async function runStreaming(
  base: string,
  key: string,
  pid: number,
  limit = 500_000,
): Promise<StreamResults> {
  const url = `${base}/api/v1/liquidations?limit=${limit}`;
  const settled = await settle(pid);
  const runs: StreamRun[] = [];
  // The first large answer grows the process to its working size (V8 lets promoted garbage reach
  // its old-generation limit before a full collection); the answers after it show what one
  // answer costs in steady state: three of each format, alternated, so that one quiet answer
  // cannot pass the target for the others. All seven are recorded.
  for (const format of ['ndjson', 'ndjson', 'json', 'ndjson', 'json', 'ndjson', 'json'] as const) {
    const r = await readAll(url, key, pid, format);
    runs.push({
      format: r.format,
      rows: r.rows,
      bytes: r.bytes,
      firstByteMs: r.firstByteMs,
      totalMs: r.totalMs,
      rssBeforeMiB: r.rssBeforeMiB,
      rssPeakMiB: r.rssPeakMiB,
      rssGrowthMiB: r.rssGrowthMiB,
    });
  }
  // The server's CPU over 3 s with no request (the simulation ticks, the collector finishes
  // with the answers above): what the pause below is compared with.
  await new Promise((r) => setTimeout(r, 2000));
  const idle0 = await cpuMsOf(pid);
  await new Promise((r) => setTimeout(r, 3000));
  const idleCpuMs = (await cpuMsOf(pid)) - idle0;
  const slow = await readAll(url, key, pid, 'ndjson', { afterBytes: 1 << 20, ms: 3000 });
  return {
    limit,
    settleMs: settled.ms,
    settleTimedOut: settled.timedOut,
    runs,
    slowClient: {
      pausedAfterBytes: slow.pausedAfterBytes,
      pauseMs: 3000,
      rssGrowthDuringPauseMiB: slow.pauseGrowth,
      serverCpuMsDuringPause: slow.pauseCpuMs,
      serverCpuMsIdle: idleCpuMs,
      rows: slow.rows,
      totalMs: slow.totalMs,
    },
    pass:
      runs.every((r) => r.firstByteMs <= STREAM_TARGETS.firstByteMs) &&
      runs.slice(1).every((r) => r.rssGrowthMiB < STREAM_TARGETS.rssGrowthMiB),
  };
}
