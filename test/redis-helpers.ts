import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Redis } from 'ioredis';

/** The machine's Redis (CI runs one). */
export const REDIS_URL = 'redis://127.0.0.1:6379';

export const silentLogger = { warn() {} };

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Whether a Redis answers PING at `url` within a second. */
export async function redisReachable(url: string = REDIS_URL): Promise<boolean> {
  const r = new Redis(url, { lazyConnect: true, connectTimeout: 1000, retryStrategy: () => null });
  r.on('error', () => {});
  try {
    await r.connect();
    return (await r.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    r.disconnect();
  }
}

/**
 * The skip reason for suites that need the machine's Redis: none when it answers. When it does
 * not, local runs skip with a message, and CI (CI=true) gets one failing test instead: there an
 * unreachable Redis must fail the run, not pass it silently.
 */
export async function redisSkipReason(): Promise<string | undefined> {
  if (await redisReachable()) return undefined;
  if (process.env.CI === 'true') {
    test('error: Redis must be reachable at 127.0.0.1:6379 in CI', () => {
      assert.fail('Redis not reachable at 127.0.0.1:6379');
    });
    return 'Redis not reachable at 127.0.0.1:6379 (CI: failed)';
  }
  return 'Redis not reachable at 127.0.0.1:6379: skipped (CI runs it)';
}

/** Same for suites that start their own redis-server: the binary must run. */
export function redisServerSkipReason(): string | undefined {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (probe.status === 0) return undefined;
  if (process.env.CI === 'true') {
    test('error: redis-server must be installed in CI', () => {
      assert.fail('redis-server not found');
    });
    return 'redis-server not found (CI: failed)';
  }
  return 'redis-server not found: skipped (CI runs it)';
}

/** Deletes every key under `prefix` (tests share the machine's Redis: never FLUSHALL it). */
export async function deleteKeys(url: string, prefix: string): Promise<number> {
  const r = new Redis(url, { maxRetriesPerRequest: 1 });
  let deleted = 0;
  try {
    let cursor = '0';
    do {
      const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) deleted += await r.del(...keys);
    } while (cursor !== '0');
  } finally {
    r.disconnect();
  }
  return deleted;
}

async function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** A private redis-server on a spare port (no persistence), for tests that kill and restart it. */
export class PrivateRedis {
  readonly port: number;
  readonly url: string;
  readonly #dir: string;
  #proc: ChildProcess | null = null;

  private constructor(port: number) {
    this.port = port;
    this.url = `redis://127.0.0.1:${port}`;
    this.#dir = mkdtempSync(join(tmpdir(), 'lrds-redis-'));
  }

  static async start(): Promise<PrivateRedis> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const port = 16379 + Math.floor(Math.random() * 20_000);
      if (!(await portFree(port))) continue;
      const r = new PrivateRedis(port);
      await r.restart();
      return r;
    }
    throw new Error('no spare port for a private redis-server');
  }

  /** Starts (again) on the same port; resolves once it answers PING. */
  async restart(): Promise<void> {
    if (this.#proc) throw new Error('redis-server already running');
    const proc = spawn(
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        this.#dir,
        '--logfile',
        '',
      ],
      { stdio: 'ignore' },
    );
    this.#proc = proc;
    proc.once('exit', () => {
      if (this.#proc === proc) this.#proc = null;
    });
    const end = Date.now() + 5000;
    while (!(await redisReachable(this.url))) {
      if (Date.now() > end) throw new Error(`redis-server did not start on port ${this.port}`);
      await sleep(20);
    }
  }

  /** SIGKILL: no goodbye to the clients, every key lost. Resolves once the process is gone. */
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

  /** A plain client (for FLUSHALL, CLIENT PAUSE and inspection). */
  client(): Redis {
    return new Redis(this.url, { maxRetriesPerRequest: 1 });
  }
}

/**
 * A TCP proxy in front of a Redis, to cut one client off (a network partition) while the
 * others keep talking to the same Redis.
 */
export class CuttableProxy {
  readonly port: number;
  readonly url: string;
  readonly #target: number;
  readonly #sockets = new Set<Socket>();
  #server: Server | null = null;

  private constructor(port: number, target: number) {
    this.port = port;
    this.url = `redis://127.0.0.1:${port}`;
    this.#target = target;
  }

  static async start(targetPort: number): Promise<CuttableProxy> {
    const probe = createServer();
    const port = await new Promise<number>((resolve) =>
      probe.listen(0, '127.0.0.1', () => {
        const addr = probe.address();
        probe.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0));
      }),
    );
    const p = new CuttableProxy(port, targetPort);
    await p.heal();
    return p;
  }

  /** Accepts connections again. */
  async heal(): Promise<void> {
    if (this.#server) return;
    const server = createServer((client) => {
      const upstream = tcpConnect(this.#target, '127.0.0.1');
      for (const s of [client, upstream]) {
        this.#sockets.add(s);
        s.on('error', () => {});
        s.on('close', () => {
          this.#sockets.delete(s);
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    this.#server = server;
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
  }

  /** Drops every connection and refuses new ones. */
  async cut(): Promise<void> {
    const server = this.#server;
    this.#server = null;
    for (const s of this.#sockets) s.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
