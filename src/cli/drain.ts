/**
 * The graceful drain of `lrds serve`: the connections of the server tracked, the kernel's
 * backlog accepted, and every connection closed without cutting a request.
 */

import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The open connections of a server, the requests in flight on each and when each was last
 * active: what a graceful drain needs to close every connection without cutting a request.
 */
export function trackConnections(server: Server, refuseRequestsOn: (socket: Socket) => void) {
  interface Conn {
    inFlight: number;
    lastActive: number;
    /** The latest request's response on this connection (pipelined ones are answered in order). */
    newest: ServerResponse | null;
  }
  const conns = new Map<Socket, Conn>();
  let draining = false;
  let drainingSince = 0;
  let inFlight = 0;
  let accepted = 0;
  /** While the backlog is taken: connections accepted, not read yet (see acceptBacklog). */
  let held: Socket[] | null = null;
  // net.Server's pauseOnConnect option, read at each accept: a socket created paused is not read.
  const accepting = server as unknown as { pauseOnConnect: boolean };
  let lastActivity = performance.now();
  /**
   * While draining, the newest answer of a connection closes it, and only that one: an earlier
   * answer carrying `Connection: close` would close the socket before the pipelined requests
   * behind it were answered. Answers already sent (Fastify answers a malformed URL at once) are
   * left alone.
   */
  const closeAfter = (conn: Conn, res: ServerResponse) => {
    const previous = conn.newest;
    conn.newest = res;
    if (!draining) return;
    if (previous && previous !== res && !previous.headersSent) previous.removeHeader('connection');
    if (!res.headersSent) res.setHeader('connection', 'close');
  };
  server.on('connection', (socket: Socket) => {
    accepted++;
    // Created paused (pauseOnConnect): nothing is read from it until release(); then its
    // requests are answered 503 with Connection: close at once (cheap, however many wait).
    if (held) {
      held.push(socket);
      refuseRequestsOn(socket);
    }
    conns.set(socket, { inFlight: 0, lastActive: performance.now(), newest: null });
    socket.once('close', () => conns.delete(socket));
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const conn = conns.get(req.socket);
    inFlight++;
    lastActivity = performance.now();
    if (conn) {
      conn.inFlight++;
      conn.lastActive = performance.now();
      closeAfter(conn, res);
    }
    res.once('close', () => {
      inFlight--;
      lastActivity = performance.now();
      if (conn) {
        conn.inFlight--;
        conn.lastActive = performance.now();
        if (conn.newest === res) conn.newest = null;
      }
    });
  });
  return {
    get size() {
      return conns.size;
    },
    /** Connections accepted from now on are not read until `release()` (their requests wait in the socket). */
    hold() {
      held ??= [];
      accepting.pauseOnConnect = true;
    },
    /** The connections held are read from now on (and new ones at once). */
    release() {
      accepting.pauseOnConnect = false;
      for (const socket of held ?? []) if (!socket.destroyed) socket.resume();
      held = null;
    },
    /** Connections accepted since the server started. */
    get accepted() {
      return accepted;
    },
    /** Whether a request is in flight or one started or ended within `quietMs`. */
    busy(quietMs: number) {
      return inFlight > 0 || performance.now() - lastActivity < quietMs;
    },
    /** From now on the newest answer of every connection (those not sent yet included) carries `Connection: close`. */
    startDraining() {
      draining = true;
      drainingSince = performance.now();
      for (const conn of conns.values()) if (conn.newest) closeAfter(conn, conn.newest);
    },
    /** Closes the connections that have had no request in flight for `idleMs`, counted from the drain's start at the earliest. */
    closeIdle(idleMs: number) {
      const now = performance.now();
      for (const [socket, c] of conns)
        if (c.inFlight === 0 && now - Math.max(c.lastActive, drainingSince) >= idleMs) socket.destroy();
    },
  };
}

/**
 * Takes every connection the kernel holds for the server (handshake done, not yet accepted)
 * before the listener closes: closing it would reset them. After a stall of the event loop (a
 * start-up's first minutes, a long request) hundreds may wait there, and Node accepts one per
 * turn of the event loop: the connections taken are not read until the backlog is empty, so
 * that reading them does not slow the turns (a busy server took 25 ms a turn). Returns after two
 * turns that accepted none (the listener is polled every turn), or after `maxMs` (a flood that
 * never pauses). Their requests are then answered 503 with `Connection: close` and Retry-After:
 * an answer for each, however loaded the server, within the drain's time.
 */
async function acceptBacklog(connections: ReturnType<typeof trackConnections>, maxMs: number): Promise<void> {
  const started = performance.now();
  const turn = () => new Promise((resolve) => setImmediate(resolve));
  connections.hold();
  for (let before = -1; before !== connections.accepted && performance.now() - started < maxMs; ) {
    before = connections.accepted;
    // Two turns: the first may end the poll phase that ran the signal's handler.
    await turn();
    await turn();
  }
}

/**
 * Graceful drain, before the app closes. Connections that reached the machine before it and
 * still wait in the kernel's backlog are accepted (acceptBacklog) and their requests answered
 * 503 with `Connection: close` and Retry-After; then the listener closes, and new connections
 * are refused. Open connections
 * are first served as usual until no request has been in flight for `quietMs`, for at most
 * `graceMs`, so keep-alive clients finish what they had queued. Then every answer carries
 * `Connection: close`, so a client sends nothing more on that connection and the server closes
 * it after the answer (only the newest answer of a connection carries it, so pipelined requests
 * are all answered); a connection with nothing in flight is closed once idle for `idleMs`, counted
 * from this point at the earliest (a client that was about to send its next request on it has done
 * so by then and gets its answer).
 * No request that reached the server is cut. (http.Server#close would close every idle
 * keep-alive socket at once, and a socket whose next request is not read yet counts as idle:
 * that request would be reset. So the listening socket is closed with net.Server's close.)
 * Returns once no connection is left, or after `maxMs`.
 */
export async function drain(
  server: Server,
  connections: ReturnType<typeof trackConnections>,
  t: { acceptMs: number; quietMs: number; graceMs: number; idleMs: number; maxMs: number },
) {
  const started = performance.now();
  await acceptBacklog(connections, t.acceptMs);
  net.Server.prototype.close.call(server);
  connections.release();
  // Quietness too is judged after the poll phase: after a stall, a timer runs before the sockets
  // are read, and connections with requests waiting would pass for quiet (and be closed early).
  const afterPoll = () => new Promise((resolve) => setImmediate(resolve));
  for (;;) {
    await afterPoll();
    if (!connections.busy(t.quietMs) || performance.now() - started >= t.graceMs) break;
    await sleep(10);
  }
  connections.startDraining();
  while (connections.size > 0 && performance.now() - started < t.maxMs) {
    await sleep(10);
    // Checked after the event loop's poll phase (setImmediate), never straight from a timer: after
    // a stall of this process, timers run before the sockets are read, and a request waiting in a
    // socket's buffer would not be seen yet, so its connection would pass for idle and be cut.
    await afterPoll();
    connections.closeIdle(t.idleMs);
  }
}
