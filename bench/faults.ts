/**
 * Fault injection for the soak (`--faults`): a TCP proxy that can cut the network to PostgreSQL,
 * a private redis-server that can be killed and restarted empty, a scratch PostgreSQL database,
 * and the process tree of a `lrds serve --workers N` primary.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import postgres from 'postgres';
import { freePort, trackChild } from './lib.ts';

// ---- TCP proxy --------------------------------------------------------------------------------

/**
 * A TCP proxy on 127.0.0.1 forwarding to `target`, with two modes:
 *
 * - `pass`: bytes flow both ways;
 * - `blackhole`: no byte moves in either direction and no socket is closed, as when the network
 *   is cut: neither side is told anything, writes pile up in the socket buffers (TCP flow
 *   control), reads wait. A connection opened meanwhile is accepted but reaches the target only
 *   once restored (as its SYN would be retransmitted), and a side closed meanwhile is closed on
 *   the other side only once restored (its FIN or RST is not delivered before; what it sent
 *   during the cut is dropped with it). Bytes written to the target before the cut still reach
 *   it: a query sent just before is executed, and only its answer is held.
 *
 * `restore()` goes back to `pass`: what was held is delivered, in order.
 */
export class TcpProxy {
  readonly port: number;
  readonly #target: { host: string; port: number };
  readonly #server: Server;
  readonly #pairs = new Set<Pair>();
  #held = false;

  private constructor(server: Server, port: number, target: { host: string; port: number }) {
    this.#server = server;
    this.port = port;
    this.#target = target;
    server.on('connection', (client) => this.#accept(client));
  }

  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const server = createServer({ pauseOnConnect: true });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const addr = server.address();
    return new TcpProxy(server, typeof addr === 'object' && addr ? addr.port : 0, target);
  }

  get mode(): 'pass' | 'blackhole' {
    return this.#held ? 'blackhole' : 'pass';
  }

  /** Connections open through the proxy. */
  get connections(): number {
    return this.#pairs.size;
  }

  /** `url` (postgres://…) with its host and port replaced by the proxy's. */
  url(url: string): string {
    const u = new URL(url);
    u.hostname = '127.0.0.1';
    u.port = String(this.port);
    return u.toString();
  }

  blackhole(): void {
    this.#held = true;
    for (const p of this.#pairs) p.hold();
  }

  restore(): void {
    this.#held = false;
    for (const p of [...this.#pairs]) p.release();
  }

  async close(): Promise<void> {
    for (const p of [...this.#pairs]) p.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #accept(client: Socket): void {
    const pair = new Pair(client, this.#target, () => this.#pairs.delete(pair));
    this.#pairs.add(pair);
    if (this.#held) pair.hold();
    else pair.release();
  }
}

/** One proxied connection: the client's socket and, once connected, the target's. */
class Pair {
  readonly #client: Socket;
  readonly #target: { host: string; port: number };
  readonly #onGone: () => void;
  #upstream: Socket | null = null;
  #held = true;
  /** A side closed while held: the other is closed on release. */
  #closePending = false;
  #gone = false;

  constructor(client: Socket, target: { host: string; port: number }, onGone: () => void) {
    this.#client = client;
    this.#target = target;
    this.#onGone = onGone;
    client.on('error', () => {});
    client.on('close', () => this.#sideClosed());
  }

  hold(): void {
    this.#held = true;
    this.#client.pause();
    this.#upstream?.pause();
  }

  release(): void {
    if (this.#gone) return;
    this.#held = false;
    if (this.#closePending) {
      this.destroy();
      return;
    }
    if (!this.#upstream) this.#connect();
    else {
      this.#client.resume();
      this.#upstream.resume();
    }
  }

  destroy(): void {
    if (this.#gone) return;
    this.#gone = true;
    this.#client.destroy();
    this.#upstream?.destroy();
    this.#onGone();
  }

  #sideClosed(): void {
    if (this.#held) this.#closePending = true;
    else this.destroy();
  }

  #connect(): void {
    const up = connect(this.#target.port, this.#target.host);
    this.#upstream = up;
    up.on('error', () => {});
    up.on('close', () => this.#sideClosed());
    up.once('connect', () => {
      this.#pipe(this.#client, up);
      this.#pipe(up, this.#client);
      if (!this.#held) {
        this.#client.resume();
        up.resume();
      } else {
        this.#client.pause();
        up.pause();
      }
    });
  }

  /** Forwards `from` to `to` with backpressure; nothing moves while held (both sides paused). */
  #pipe(from: Socket, to: Socket): void {
    from.on('data', (chunk: Buffer) => {
      if (!to.write(chunk)) {
        from.pause();
        to.once('drain', () => {
          if (!this.#held && !this.#gone) from.resume();
        });
      }
    });
    from.on('end', () => to.end());
  }
}

// ---- private redis-server ------------------------------------------------------------------------

/** Answers PING on `port` within `timeoutMs`? */
function redisPing(port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    let buf = '';
    const done = (ok: boolean) => {
      clearTimeout(timer);
      s.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    s.on('error', () => done(false));
    s.on('connect', () => s.write('PING\r\n'));
    s.on('data', (d) => {
      buf += d.toString();
      if (buf.includes('\r\n')) done(buf.startsWith('+PONG'));
    });
  });
}

/**
 * A redis-server of its own, without persistence, on a fixed port: `kill()` is kill -9 (every
 * key lost, no goodbye to the clients), `start()` brings it back EMPTY on the same port.
 */
export class PrivateRedis {
  readonly port: number;
  readonly url: string;
  readonly #dir: string;
  #proc: ChildProcess | null = null;

  private constructor(port: number) {
    this.port = port;
    this.url = `redis://127.0.0.1:${port}`;
    this.#dir = mkdtempSync(join(tmpdir(), 'lrds-soak-redis-'));
  }

  static async create(port?: number): Promise<PrivateRedis> {
    const r = new PrivateRedis(port ?? (await freePort()));
    await r.start();
    return r;
  }

  get running(): boolean {
    return this.#proc !== null;
  }

  get pid(): number | undefined {
    return this.#proc?.pid;
  }

  async start(): Promise<void> {
    if (this.#proc) throw new Error('redis-server already running');
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
    args.push('--dir', this.#dir, '--logfile', '', '--maxmemory-policy', 'noeviction');
    const proc = spawn('redis-server', args, { stdio: 'ignore' });
    trackChild(proc);
    this.#proc = proc;
    let failed: Error | null = null;
    proc.once('error', (e) => {
      failed = e;
    });
    proc.once('exit', () => {
      if (this.#proc === proc) this.#proc = null;
    });
    const end = performance.now() + 10_000;
    while (!(await redisPing(this.port))) {
      if (failed) throw new Error(`redis-server did not start: ${(failed as Error).message}`);
      if (this.#proc !== proc) throw new Error(`redis-server exited at start on port ${this.port}`);
      if (performance.now() > end) throw new Error(`redis-server not answering on port ${this.port}`);
      await sleep(20);
    }
  }

  /** kill -9; resolves once the process is gone. */
  async kill(): Promise<void> {
    const proc = this.#proc;
    if (!proc) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill('SIGKILL');
    await exited;
  }

  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.#dir, { recursive: true, force: true });
  }
}

// ---- scratch PostgreSQL database -------------------------------------------------------------------

/**
 * A fresh database on the PostgreSQL server of `adminUrl` (any database there the user may
 * connect to), dropped by `drop()`; `dropSync()` is the fallback of an interrupted run (psql).
 */
export class ScratchDatabase {
  readonly name: string;
  readonly url: string;
  readonly #adminUrl: string;
  #dropped = false;

  private constructor(adminUrl: string, name: string) {
    this.#adminUrl = adminUrl;
    this.name = name;
    const u = new URL(adminUrl);
    u.pathname = `/${name}`;
    this.url = u.toString();
  }

  static async create(adminUrl: string): Promise<ScratchDatabase> {
    const name = `lrds_soak_${process.pid}_${Date.now().toString(36)}`;
    const sql = postgres(adminUrl, { max: 1, onnotice: () => {} });
    try {
      await sql.unsafe(`CREATE DATABASE "${name}"`);
    } finally {
      await sql.end();
    }
    return new ScratchDatabase(adminUrl, name);
  }

  async drop(): Promise<void> {
    if (this.#dropped) return;
    const sql = postgres(this.#adminUrl, { max: 1, onnotice: () => {} });
    try {
      await sql.unsafe(`DROP DATABASE IF EXISTS "${this.name}" WITH (FORCE)`);
      this.#dropped = true;
    } finally {
      await sql.end();
    }
  }

  /** For process exit handlers, where nothing asynchronous runs: psql, best effort. */
  dropSync(): void {
    if (this.#dropped) return;
    spawnSync('psql', [this.#adminUrl, '-qc', `DROP DATABASE IF EXISTS "${this.name}" WITH (FORCE)`], {
      stdio: 'ignore',
      timeout: 10_000,
    });
    this.#dropped = true;
  }
}

// ---- process tree --------------------------------------------------------------------------------

/** Direct children of a process (Linux /proc), [] elsewhere or once it is gone. */
export function childPids(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const text = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
      if (text) for (const c of text.split(/\s+/)) out.push(Number(c));
    }
  } catch {
    // gone, or not Linux
  }
  return [...new Set(out)].sort((a, b) => a - b);
}

/** Whether a process exists (signal 0). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
