import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';

/**
 * A TCP proxy in front of PostgreSQL (or any TCP server) that simulates network faults for
 * the clients connected through it:
 *
 * - `blackhole()`: bytes stop flowing in both directions, but no socket is closed (a cable
 *   pulled, a firewall dropping packets). Bytes sent meanwhile are held back and delivered
 *   in order by `heal()`, as TCP retransmission would deliver them once the path is back.
 *   New connections are accepted and held the same way.
 * - `refuse()`: every connection is reset and new ones are refused (the server is down).
 * - `closeAll()`: every connection is closed cleanly (FIN) but new ones are accepted.
 * - `cutAtAnswer(match)`: forwards until the server sends an answer that `match` accepts, then
 *   holds that answer and blackholes: the server did the work (e.g. committed), the client
 *   never hears of it until `heal()`.
 * - `heal()`: everything flows again.
 */
export class PgProxy {
  readonly port: number;
  readonly #targetPort: number;
  readonly #targetHost: string;
  readonly #pairs = new Set<Pair>();
  #server: Server | null = null;
  #held = false;
  #cutAt: ((answer: Buffer) => boolean) | null = null;

  private constructor(port: number, targetPort: number, targetHost: string) {
    this.port = port;
    this.#targetPort = targetPort;
    this.#targetHost = targetHost;
  }

  /** A proxy on a free local port, forwarding to `targetPort` on `targetHost`. */
  static async start(targetPort = 5432, targetHost = '127.0.0.1'): Promise<PgProxy> {
    const probe = createServer();
    const port = await new Promise<number>((resolve) =>
      probe.listen(0, '127.0.0.1', () => {
        const addr = probe.address();
        probe.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0));
      }),
    );
    const proxy = new PgProxy(port, targetPort, targetHost);
    await proxy.#listen();
    return proxy;
  }

  /** `url` with its host and port replaced by the proxy's. */
  url(url: string): string {
    const u = new URL(url);
    u.hostname = '127.0.0.1';
    u.port = String(this.port);
    return u.toString();
  }

  /** Connections open through the proxy. */
  get connections(): number {
    return this.#pairs.size;
  }

  /** Stops every byte, both ways, without closing anything. */
  blackhole(): void {
    this.#held = true;
  }

  /**
   * Blackholes as soon as the server sends a chunk that `match` accepts, that chunk held
   * already: e.g. `(a) => a.includes('COMMIT')` cuts the network once a transaction has
   * committed, before the client learns it did.
   */
  cutAtAnswer(match: (answer: Buffer) => boolean): void {
    this.#cutAt = match;
  }

  /** Forwards again (held bytes first, in order) and accepts new connections. */
  async heal(): Promise<void> {
    this.#held = false;
    this.#cutAt = null;
    for (const pair of this.#pairs) pair.flush();
    await this.#listen();
  }

  /** Resets every connection (RST) and refuses new ones until `heal()`. */
  async refuse(): Promise<void> {
    const server = this.#server;
    this.#server = null;
    for (const pair of [...this.#pairs]) pair.reset();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Closes every connection cleanly (FIN both ways); new ones are still accepted. */
  closeAll(): void {
    for (const pair of [...this.#pairs]) pair.end();
  }

  /** Closes everything for good. */
  async close(): Promise<void> {
    await this.refuse();
  }

  async #listen(): Promise<void> {
    if (this.#server) return;
    const server = createServer((client) => {
      const upstream = tcpConnect(this.#targetPort, this.#targetHost);
      const pair = new Pair(
        client,
        upstream,
        () => this.#held,
        (answer) => {
          if (this.#cutAt?.(answer)) {
            this.#cutAt = null;
            this.#held = true;
          }
        },
      );
      this.#pairs.add(pair);
      pair.onClose(() => this.#pairs.delete(pair));
    });
    this.#server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  }
}

/** One proxied connection: bytes each way, held back while `held()` is true. */
class Pair {
  readonly #client: Socket;
  readonly #upstream: Socket;
  readonly #held: () => boolean;
  /** Sees every chunk from the server before it is forwarded (and may start holding it). */
  readonly #onAnswer: (answer: Buffer) => void;
  /** Bytes held back, per destination. */
  readonly #toUpstream: Buffer[] = [];
  readonly #toClient: Buffer[] = [];
  #closed = false;
  readonly #onClose: (() => void)[] = [];

  constructor(client: Socket, upstream: Socket, held: () => boolean, onAnswer: (answer: Buffer) => void) {
    this.#client = client;
    this.#upstream = upstream;
    this.#held = held;
    this.#onAnswer = onAnswer;
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    client.on('data', (chunk) => this.#forward(chunk, upstream, this.#toUpstream));
    upstream.on('data', (chunk) => {
      this.#onAnswer(chunk);
      this.#forward(chunk, client, this.#toClient);
    });
    for (const s of [client, upstream]) {
      s.on('error', () => {});
      s.on('close', () => this.#close());
    }
  }

  #forward(chunk: Buffer, to: Socket, queue: Buffer[]): void {
    if (this.#held()) {
      queue.push(chunk);
      return;
    }
    if (queue.length > 0) this.flush();
    if (!to.destroyed) to.write(chunk);
  }

  flush(): void {
    for (const [queue, to] of [
      [this.#toUpstream, this.#upstream],
      [this.#toClient, this.#client],
    ] as const) {
      while (queue.length > 0) {
        const chunk = queue.shift()!;
        if (!to.destroyed) to.write(chunk);
      }
    }
  }

  reset(): void {
    this.#client.resetAndDestroy();
    this.#upstream.resetAndDestroy();
  }

  end(): void {
    this.#client.end();
    this.#upstream.end();
  }

  onClose(fn: () => void): void {
    this.#onClose.push(fn);
  }

  #close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#client.destroy();
    this.#upstream.destroy();
    for (const fn of this.#onClose) fn();
  }
}
