import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { type Answer, freePort, getAnswer } from '../net-helpers.ts';
import { REDIS_URL, redisSkipReason } from '../redis-helpers.ts';

/**
 * The real server process (`lrds serve`), as an operator runs it: SIGTERM under load drops
 * nothing and exits 0; kill -9 under load loses no quota count.
 * One data directory for the whole file, so the sandbox is seeded once (about 3 s).
 */

const ROOT = new URL('../../', import.meta.url).pathname;
const MAIN = join(ROOT, 'src/cli/main.ts');
const run = promisify(execFile);

const dataDir = mkdtempSync(join(tmpdir(), 'lrds-shutdown-'));
const tiersFile = join(dataDir, 'tiers.json');
const children = new Set<ChildProcess>();

function env(port: number): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    TIERS_FILE: tiersFile,
    LOG_LEVEL: 'warn',
    // The drain is under test here, timed against a loaded machine: no simulation ticks (their
    // cost is measured in bench/, a tick every 5 s would only add noise to these timings).
    SIMULATION_TICK_MS: '0',
    SANDBOX_HISTORY_DAYS: '0', // a seed with history takes ~12 s; these tests time the server
  };
}

async function createKey(tier: string): Promise<string> {
  const { stdout } = await run(process.execPath, [MAIN, 'keys', 'create', '--tier', tier], { env: env(0) });
  return stdout.trim();
}

interface Server {
  child: ChildProcess;
  port: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  stderr: () => string;
}

async function startServer(args: string[] = [], extraEnv: NodeJS.ProcessEnv = {}): Promise<Server> {
  const port = await freePort();
  const child = spawn(process.execPath, [MAIN, 'serve', ...args], {
    env: { ...env(port), ...extraEnv },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.add(child);
  let stderr = '';
  child.stderr!.on('data', (d) => {
    stderr += d;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.on('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal, at: performance.now() });
    }),
  );
  const deadline = performance.now() + 60_000; // a first start seeds (seconds; more on a loaded machine)
  for (;;) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/health`);
      await res.arrayBuffer();
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null) throw new Error(`server exited at start-up:\n${stderr}`);
    if (performance.now() > deadline) throw new Error(`server not ready after 60 s:\n${stderr}`);
    await sleep(100);
  }
  return { child, port, exited, stderr: () => stderr };
}

before(() => {
  const tiers = JSON.parse(readFileSync(join(ROOT, 'config/tiers.json'), 'utf8'));
  tiers.tiers.enterprise.ratePerSecond = 1_000_000; // 300 at once from one key
  tiers.tiers.pro.ratePerSecond = 200; // enough admitted requests to count, and 429s
  writeFileSync(tiersFile, JSON.stringify(tiers));
});

after(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

const keys = { pro: '', enterprise: '' };
/** The server left running by the kill -9 test (its restart), reused by the SIGTERM test. */
let restarted: Server | null = null;

describe('lrds serve, process lifecycle', () => {
  before(async () => {
    [keys.pro, keys.enterprise] = await Promise.all([createKey('pro'), createKey('enterprise')]);
  });

  test('behavior: kill -9 under load loses no count: daily used >= counted answers the clients saw', async (t) => {
    const key = keys.pro;
    const server = await startServer();
    const { port } = server;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
    const seen = { ok: 0, rateLimited: 0, quota: 0, other: 0, noAnswer: 0 };
    const loop = async () => {
      for (;;) {
        const o = await getAnswer(agent, port, '/api/v1/markets?limit=1', key);
        if (o.status === 200) seen.ok++;
        else if (o.status === 429 && o.error === 'RATE_LIMIT_EXCEEDED') seen.rateLimited++;
        else if (o.status === 429) seen.quota++;
        else if (o.status === 0) {
          seen.noAnswer++;
          return; // the server is gone
        } else seen.other++;
      }
    };
    const loops = Array.from({ length: 16 }, loop);
    await sleep(2000);
    server.child.kill('SIGKILL');
    await server.exited;
    await Promise.all(loops);
    agent.destroy();

    restarted = await startServer();
    const res = await fetch(`http://127.0.0.1:${restarted.port}/api/v1/client/quota`, {
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(res.status, 200);
    const used = ((await res.json()) as { data: { daily: { used: number } } }).data.daily.used;

    // Counted: every answer other than a rate-limit 429 (200s here, and quota 429s if any).
    const counted = seen.ok + seen.quota + seen.other;
    t.diagnostic(`kill -9: clients saw ${JSON.stringify(seen)}; daily used after restart ${used}`);
    assert.ok(seen.ok > 100 && seen.rateLimited > 0, JSON.stringify(seen));
    assert.ok(used >= counted, `lost counts: used ${used} < ${counted} answers seen ${JSON.stringify(seen)}`);
    // The server may have counted requests whose answer never reached the client (cut by kill -9):
    // at most one per connection, those the clients saw fail.
    assert.ok(used <= counted + seen.noAnswer, `used ${used}, counted ${counted}, ${JSON.stringify(seen)}`);
  });

  test('behavior: SIGTERM with 300 requests queued on keep-alive connections: every one that reached the server answered 200, new connections refused, exit 0 within 10 s', async () => {
    const key = keys.enterprise;
    const server = restarted ?? (await startServer());
    const { port } = server;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 10 });
    const paths = [
      '/api/v1/markets?limit=20',
      '/api/v1/markets/search?query=weth',
      '/api/v1/risk/positions-at-risk?limit=50',
      '/api/v1/client/quota',
    ];
    let answered = 0;
    const all: Promise<Answer>[] = [];
    for (let i = 0; i < 300; i++) {
      all.push(
        getAnswer(agent, port, paths[i % paths.length]!, key).then((o) => {
          answered++;
          return o;
        }),
      );
    }
    // SIGTERM once the load is flowing: most of the 300 are still on their way
    while (answered < 20) await sleep(1);
    server.child.kill('SIGTERM');
    const sigtermAt = performance.now();
    const inFlightAtSigterm = 300 - answered;

    // a new connection after SIGTERM: refused, or answered 503
    await sleep(50);
    const late = await getAnswer(new http.Agent({ keepAlive: false }), port, '/api/v1/markets', key);
    assert.ok(
      (late.status === 0 && /ECONNREFUSED|ECONNRESET/.test(late.error ?? '')) ||
        (late.status === 503 && late.error === 'SERVICE_UNAVAILABLE'),
      `new connection after SIGTERM: ${JSON.stringify(late)}`,
    );

    const outcomes = await Promise.all(all);
    // A request still queued in the client when its connection was closed (the server found the
    // connections quiet for 500 ms: a client that stalls that long) goes to a new connection and
    // is refused at connect: it never reached the server. Anything else that is not a 200 (a
    // reset of an open connection, a 503) was dropped by the server.
    // A connection the server accepted only after the signal (it waited in the backlog) is
    // answered 503 "shutting down" with Connection: close (docs/reliability.md): never reached
    // the server before the signal either.
    const refusedAtConnect = (o: Answer) =>
      (o.status === 0 && /^(ECONNREFUSED|ECONNRESET)$/.test(o.error ?? '')) ||
      (o.status === 503 && /takes no new connection/.test(o.message ?? ''));
    const dropped = outcomes.filter((o) => o.status !== 200 && !refusedAtConnect(o) && !isShed(o));
    assert.deepEqual(dropped.slice(0, 5), [], `dropped (${inFlightAtSigterm} in flight): ${dropped.length}`);
    const ok = outcomes.filter((o) => o.status === 200).length;
    assert.ok(ok - (300 - inFlightAtSigterm) > 50, `only ${ok} answered 200 of 300`);
    const exit = await server.exited;
    agent.destroy();
    assert.equal(exit.code, 0, server.stderr());
    assert.ok(exit.at - sigtermAt < 10_000, `exit took ${exit.at - sigtermAt} ms`);
    assert.ok(inFlightAtSigterm > 100, `only ${inFlightAtSigterm} requests were in flight`);
  });
});

/** A 503 of the overload guard (load shed, with Retry-After), not of the shutdown. */
const isShed = (o: Answer) => o.status === 503 && /overloaded/.test(o.message ?? '');

/**
 * Continuous keep-alive load: each of `connections` clients sends its next request as soon as
 * the previous answer arrives, until a new connection is refused (the server stopped accepting).
 * Tallies every outcome; a reset on an open connection or a 503 is a request the server dropped.
 */
function steadyLoad(port: number, key: string, connections: number) {
  const tally = { ok: 0, refused: 0, dropped: [] as Answer[] };
  const loops = Array.from({ length: connections }, async (_, i) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const path = i % 2 ? '/api/v1/markets?limit=5' : '/api/v1/risk/positions-at-risk?limit=10';
    for (;;) {
      const o = await getAnswer(agent, port, path, key);
      // A new connection refused, or answered 503 because the server accepted it only after the
      // signal (it waited in the kernel's backlog), or reset before the server accepted it: the
      // request never reached the server before the signal; the loop ends.
      if (
        (o.status === 0 && /^(ECONNREFUSED|ECONNRESET)$/.test(o.error ?? '')) ||
        (o.status === 503 && /takes no new connection/.test(o.message ?? ''))
      ) {
        tally.refused++;
        break;
      }
      // a reset on an open connection, or a 503 for shutting down, is a request the server dropped;
      // any other status is an answer (a 429 when a loaded worker briefly loses Redis, say, or a
      // 503 of the overload guard, with its Retry-After, when other tests load the machine)
      if (o.status === 0 || (o.status === 503 && !isShed(o))) tally.dropped.push(o);
      else tally.ok++;
      if (tally.dropped.length > 200) break;
    }
    agent.destroy();
  });
  return { tally, done: Promise.all(loops) };
}

describe('lrds serve, SIGTERM under continuous keep-alive load', () => {
  for (const workers of [1, 2]) {
    test(`behavior: ${workers} worker(s), 64 keep-alive connections loading steadily: no request reset or refused with 503, exit 0`, async (t) => {
      const extra: NodeJS.ProcessEnv = {};
      const args: string[] = [];
      if (workers > 1) {
        const skip = await redisSkipReason();
        if (skip) return t.skip(skip);
        extra.REDIS_URL = REDIS_URL;
        args.push('--workers', String(workers));
      }
      const key = keys.enterprise || (await createKey('enterprise'));
      const server = await startServer(args, extra);
      const load = steadyLoad(server.port, key, 64);
      while (load.tally.ok < 500) await sleep(10);
      server.child.kill('SIGTERM');
      await load.done;
      const exit = await server.exited;
      t.diagnostic(`answered ${load.tally.ok}; dropped ${load.tally.dropped.length}`);
      assert.deepEqual(load.tally.dropped.slice(0, 5), [], `requests dropped: ${load.tally.dropped.length}`);
      assert.equal(load.tally.refused, 64);
      assert.equal(exit.code, 0, server.stderr());
    });
  }
});

describe('lrds serve, SIGTERM with requests arriving on an open connection while draining', () => {
  test('behavior: a malformed URL and pipelined requests are all answered, the last with Connection: close; exit 0', async () => {
    const key = keys.enterprise || (await createKey('enterprise'));
    const server = await startServer();
    const socket = net.connect(server.port, '127.0.0.1');
    let received = '';
    socket.setEncoding('latin1').on('data', (d: string) => {
      received += d;
    });
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => {});
    const request = (path: string) =>
      `GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nConnection: keep-alive\r\n\r\n`;
    socket.write(request('/api/v1/markets?limit=1'));
    while (!received.includes('\r\n\r\n')) await sleep(5);
    server.child.kill('SIGTERM');
    await sleep(1000); // quiet for 500 ms: draining; the idle connection is closed 1 s after that
    socket.write(
      request('/api/v1/%zz') +
        request('/api/v1/markets?limit=1') +
        request('/api/v1/client/quota') +
        request('/api/v1/markets?limit=2'),
    );
    await closed;
    const statuses = [...received.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
    assert.deepEqual(statuses, [200, 400, 200, 200, 200], received.slice(0, 2000));
    const heads = [...received.matchAll(/HTTP\/1\.1 \d{3}[\s\S]*?\r\n\r\n/g)].map((m) => m[0]);
    const closes = heads.map((h) => /\r\nconnection: close/i.test(h));
    assert.deepEqual(
      closes,
      [false, false, false, false, true],
      'only the last answer closes the connection',
    );
    const exit = await server.exited;
    assert.equal(exit.code, 0, server.stderr());
  });
});

/**
 * One request on a new connection, read to the end: the status and head of its answer, or the
 * transport error (a reset: the connection was dropped). `connected` resolves once the TCP
 * handshake is done (the kernel has the connection, whether or not the server accepted it).
 */
function rawRequest(port: number, path: string, key: string) {
  const socket = net.connect(port, '127.0.0.1');
  const connected = new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  const answer = new Promise<{ status: number; head: string; error?: string }>((resolve) => {
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      received += d;
    });
    socket.on('error', (e: NodeJS.ErrnoException) =>
      resolve({ status: 0, head: '', error: e.code ?? e.message }),
    );
    socket.on('close', () => {
      const head = received.split('\r\n\r\n')[0] ?? '';
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), head, error: 'closed' });
    });
  });
  socket.write(
    `GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`,
  );
  return { connected, answer };
}

describe('lrds serve, SIGTERM while the event loop is busy', () => {
  test('behavior: 200 connections made while the process could not run (still in the accept backlog) are all answered after SIGTERM: served, or 503 with Connection: close and Retry-After', async () => {
    const key = keys.enterprise || (await createKey('enterprise'));
    const server = await startServer();
    // The process stopped: its event loop runs nothing, as in a long stall. The kernel completes
    // the connections' handshakes and keeps them in the listener's backlog.
    server.child.kill('SIGSTOP');
    const requests = Array.from({ length: 200 }, () =>
      rawRequest(server.port, '/api/v1/markets?limit=1', key),
    );
    try {
      await Promise.all(requests.map((r) => r.connected));
    } finally {
      // The signal arrives while the loop is stalled; the process handles it once it runs again.
      server.child.kill('SIGTERM');
      server.child.kill('SIGCONT');
    }
    const answers = await Promise.all(requests.map((r) => r.answer));
    const exit = await server.exited;
    const tally = new Map<string, number>();
    for (const a of answers) {
      const k = a.status === 0 ? `reset (${a.error})` : String(a.status);
      tally.set(k, (tally.get(k) ?? 0) + 1);
    }
    const unanswered = answers.filter(
      (a) =>
        !(
          a.status === 200 ||
          (a.status === 503 && /\r\nretry-after: \d+/i.test(a.head) && /\r\nconnection: close/i.test(a.head))
        ),
    );
    assert.deepEqual(
      unanswered.slice(0, 3),
      [],
      `answers: ${JSON.stringify([...tally])}\n${server.stderr()}`,
    );
    assert.equal(exit.code, 0, server.stderr());
  });
});

describe('lrds serve, SIGTERM during the first start', () => {
  test('behavior: as soon as the start has opened the store of an empty data directory: exit 0', async () => {
    const fresh = mkdtempSync(join(tmpdir(), 'lrds-shutdown-start-'));
    try {
      const port = await freePort();
      const child = spawn(process.execPath, [MAIN, 'serve'], {
        env: { ...env(port), DATA_DIR: fresh },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      children.add(child);
      let stderr = '';
      child.stderr!.on('data', (d) => {
        stderr += d;
      });
      // 'close': after the exit and the end of stderr.
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.on('close', (code, signal) => {
          children.delete(child);
          resolve({ code, signal });
        }),
      );
      // The store file appears when the start opens it; the seed (seconds) follows, then listening.
      const deadline = performance.now() + 60_000;
      while (!existsSync(join(fresh, 'lrds.db'))) {
        assert.ok(performance.now() < deadline && child.exitCode === null, `no store file:\n${stderr}`);
        await sleep(20);
      }
      // Handled at the start's next turn of the event loop: before the service exists, an exit
      // at once; after (the seed holds the loop for seconds), the shutdown once it listens.
      // Either way exit 0, where the signal's default action ended the process.
      child.kill('SIGTERM');
      assert.deepEqual(await exited, { code: 0, signal: null }, stderr);
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
  });

  test('behavior: while the history backfill runs (the first minutes): exit 0 within the 10 s the server allows', async () => {
    const fresh = mkdtempSync(join(tmpdir(), 'lrds-shutdown-backfill-'));
    try {
      // A year of history: its backfill in the worker takes far longer than 10 s.
      const server = await startServer([], { DATA_DIR: fresh, SANDBOX_HISTORY_DAYS: '365' });
      await sleep(2000); // the worker is building the simulation or writing the history
      const signalled = performance.now();
      server.child.kill('SIGTERM');
      const { code, signal, at } = await server.exited;
      assert.deepEqual({ code, signal }, { code: 0, signal: null }, server.stderr());
      // The server's own bound: past it, it exits 1 (asserted just above).
      assert.ok(at - signalled < 10_000, `exited after ${Math.round(at - signalled)} ms`);
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
  });
});
