/**
 * The load of the HTTP benchmark: a fixed number of GET requests over keep-alive connections
 * (node:http), and what they cost the SERVER: its CPU time (user + system of all its threads,
 * from /proc/<pid>/task/<tid>/schedstat, in ns) per answered request, and its own timing of
 * each answer (`meta.latencyMs`, receipt to serialization, read from the body). The client's
 * throughput and latencies are kept as secondary figures: the client shares the machine's
 * cores with the server, so it sets the pace, not the server.
 */
import { readdir, readFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { sig, summarize } from './lib.ts';

export interface LoadRun {
  requests: number;
  /** Server CPU (all its processes and threads) per answered request, µs. */
  cpuUsPerRequest: number;
  /** The server's own time per answer (meta.latencyMs), when its bodies carry it. */
  serverP50Ms: number | null;
  serverP99Ms: number | null;
  /** Secondary: what the client saw. */
  reqPerSec: number;
  clientP50Ms: number;
  clientP99Ms: number;
  /** Answers that were not 2xx, and transport errors. */
  failures: number;
  otherStatus: Record<string, number>;
  /** CPU per answered request of each server process, µs: the one started first, then its workers. */
  perProcessUs?: number[];
  /** CPU per request of another process the answers depend on (Redis, from its INFO), µs. */
  externalUs?: number;
}

/** The process and its descendants (the workers of `lrds serve --workers N`). */
export async function treeOf(pid: number): Promise<number[]> {
  const parents = new Map<number, number>();
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = await readFile(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parents.set(Number(name), Number(fields[1]));
    } catch {
      // gone
    }
  }
  const out = [pid];
  for (let i = 0; i < out.length; i++)
    for (const [child, parent] of parents) if (parent === out[i]) out.push(child);
  return out;
}

/** CPU time of the processes so far, ns: the sum over their threads of schedstat's run time. */
export async function cpuNsOf(pids: readonly number[]): Promise<number> {
  let total = 0;
  for (const pid of pids) {
    let tids: string[];
    try {
      tids = await readdir(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tids) {
      try {
        total += Number((await readFile(`/proc/${pid}/task/${tid}/schedstat`, 'utf8')).split(' ')[0]);
      } catch {
        // the thread ended
      }
    }
  }
  return total;
}

const LATENCY = Buffer.from('"latencyMs":');

/** meta.latencyMs of a body, from its last bytes (the meta closes the envelope). */
function latencyOf(tail: Buffer): number | null {
  const at = tail.lastIndexOf(LATENCY);
  if (at < 0) return null;
  const m = /^[0-9.]+/.exec(tail.toString('latin1', at + LATENCY.length, at + LATENCY.length + 24));
  return m ? Number(m[0]) : null;
}

function once(agent: Agent, url: URL, headers: Record<string, string>) {
  return new Promise<{ status: number; ms: number; latency: number | null }>((resolve) => {
    const t0 = performance.now();
    const req = request(url, { agent, headers }, (res) => {
      let tail: Buffer = Buffer.alloc(0);
      res.on('data', (chunk: Buffer) => {
        tail = chunk.length >= 256 ? chunk : Buffer.concat([tail, chunk]).subarray(-512);
      });
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, ms: performance.now() - t0, latency: latencyOf(tail) }),
      );
      res.on('error', () => resolve({ status: 0, ms: performance.now() - t0, latency: null }));
    });
    req.on('error', () => resolve({ status: 0, ms: performance.now() - t0, latency: null }));
    req.end();
  });
}

/**
 * `count` requests of `url` over `connections` keep-alive connections (each sends its next
 * request when its answer has been read), after `warmup` unmeasured ones; the server's CPU is
 * read before and after from /proc for `pid` and its descendants.
 */
export async function load(
  url: string,
  headers: Record<string, string>,
  opts: {
    count: number;
    warmup: number;
    connections: number;
    pid: number;
    /** CPU time so far of another process the answers depend on (Redis), ns. */
    externalCpuNs?: () => Promise<number>;
  },
): Promise<LoadRun> {
  const agent = new Agent({ keepAlive: true, maxSockets: opts.connections });
  const target = new URL(url);
  const pids = await treeOf(opts.pid);
  try {
    const drive = async (n: number, record: boolean) => {
      const clientMs: number[] = [];
      const serverMs: number[] = [];
      const otherStatus: Record<string, number> = {};
      let failures = 0;
      let next = 0;
      await Promise.all(
        Array.from({ length: opts.connections }, async () => {
          while (next < n) {
            next++;
            const r = await once(agent, target, headers);
            if (r.status < 200 || r.status >= 300) {
              failures++;
              otherStatus[String(r.status)] = (otherStatus[String(r.status)] ?? 0) + 1;
            }
            if (record) {
              clientMs.push(r.ms);
              if (r.latency !== null) serverMs.push(r.latency);
            }
          }
        }),
      );
      return { clientMs, serverMs, failures, otherStatus };
    };
    await drive(opts.warmup, false);
    const each0 = await Promise.all(pids.map((p) => cpuNsOf([p])));
    const ext0 = await opts.externalCpuNs?.();
    const cpu0 = each0.reduce((a, b) => a + b, 0);
    const t0 = performance.now();
    const r = await drive(opts.count, true);
    const wallMs = performance.now() - t0;
    const each1 = await Promise.all(pids.map((p) => cpuNsOf([p])));
    const ext1 = await opts.externalCpuNs?.();
    const cpuNs = each1.reduce((a, b) => a + b, 0) - cpu0;
    const client = summarize(Float64Array.from(r.clientMs));
    const server = r.serverMs.length > 0 ? summarize(Float64Array.from(r.serverMs)) : null;
    return {
      requests: opts.count,
      cpuUsPerRequest: sig(cpuNs / 1000 / opts.count, 3),
      serverP50Ms: server ? sig(server.median, 3) : null,
      serverP99Ms: server ? sig(server.p99, 3) : null,
      reqPerSec: sig((opts.count / wallMs) * 1000, 4),
      clientP50Ms: sig(client.median, 3),
      clientP99Ms: sig(client.p99, 3),
      failures: r.failures,
      otherStatus: r.otherStatus,
      ...(pids.length > 1
        ? { perProcessUs: each1.map((c, i) => sig((c - each0[i]!) / 1000 / opts.count, 3)) }
        : {}),
      ...(ext0 !== undefined && ext1 !== undefined
        ? { externalUs: sig((ext1 - ext0) / 1000 / opts.count, 3) }
        : {}),
    };
  } finally {
    agent.destroy();
  }
}

/** Waits until the server uses under 10 % of a core over 2 s; at most maxSec from spawn. */
export async function settle(pid: number, spawnedAt: number, maxSec: number) {
  for (;;) {
    const cpu0 = await cpuNsOf([pid]);
    await new Promise((r) => setTimeout(r, 2000));
    const busyMs = ((await cpuNsOf([pid])) - cpu0) / 1e6;
    const sec = (performance.now() - spawnedAt) / 1000;
    if (busyMs < 200) return { sec, timedOut: false };
    if (sec > maxSec) return { sec, timedOut: true };
  }
}
