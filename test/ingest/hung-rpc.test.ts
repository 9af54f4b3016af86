import assert from 'node:assert/strict';
import net from 'node:net';
import { after, describe, test } from 'node:test';
import { createChainRpc, RPC_RETRIES } from '../../src/ingest/chain/rpc.ts';
import { expectedPassMs, MIN_EXPECTED_PASS_MS, PassWatch } from '../../src/ingest/pass-watch.ts';
import { DEFAULT_RPC_TIMEOUT_MS } from '../../src/ingest/sources-file.ts';
import { ManualClock } from '../clock.ts';
import { createTestApp } from '../helpers.ts';

/**
 * A JSON-RPC node that accepts connections and never answers: each request times out (and the
 * read fails after its tries, so the pass goes on), and /health shows the pass running, then
 * overdue, while it waits.
 */

const sockets = new Set<net.Socket>();
const silent = net.createServer((socket) => {
  sockets.add(socket);
  socket.on('error', () => {});
  socket.on('close', () => sockets.delete(socket));
  socket.resume(); // reads the request, answers nothing
});
await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
after(() => {
  for (const s of sockets) s.destroy();
  silent.close();
});

describe('a JSON-RPC node that never answers', () => {
  test('behavior: each request is abandoned after its timeout, retried, then the read fails', async () => {
    const once = createChainRpc(1, url, { timeoutMs: 300, retries: 0 });
    const started = performance.now();
    await assert.rejects(once.client.getBlockNumber(), /took too long|timed out|timeout/i);
    const alone = performance.now() - started;
    assert.ok(alone >= 300 && alone < 5_000, `${alone} ms`);
    assert.equal(once.requests(), 1);

    const twice = createChainRpc(1, url, { timeoutMs: 300, retries: 1 });
    const again = performance.now();
    await assert.rejects(twice.client.getBlockNumber());
    assert.ok(performance.now() - again >= 600, 'the retry waited its own timeout');
    assert.equal(twice.requests(), 2);
  });

  test('behavior: by default a read fails within a bounded time (the timeout times the tries)', () => {
    assert.equal(DEFAULT_RPC_TIMEOUT_MS, 10_000);
    // About 31 s for a node that never answers, well within a pass's expected time.
    assert.ok(DEFAULT_RPC_TIMEOUT_MS * (RPC_RETRIES + 1) + 1_000 < MIN_EXPECTED_PASS_MS);
  });
});

describe('/health while an ingestion pass runs', () => {
  test('behavior: the pass shows with its start and running time; past its expected time it is overdue and the status degraded', async () => {
    const clock = new ManualClock('2026-11-22T12:00:00Z');
    const expected = expectedPassMs(12_000);
    assert.equal(expected, MIN_EXPECTED_PASS_MS);
    assert.equal(expectedPassMs(60_000), 120_000);
    // A chain's first sync under way: what each source tells of its part shows with the pass.
    const walk = {
      what: 'morpho',
      fromBlock: 18_883_124,
      toBlock: 21_000_000,
      reachedBlock: 19_883_123,
      blocksDone: 1_000_000,
      blocksTotal: 2_116_877,
      logs: 52_114,
      estimateSeconds: 56,
    };
    const progress = [{ source: 'chain:1', callsAnswered: 1_200, logWalks: [walk] }];
    const watch = new PassWatch(expected, () => progress);
    const t = await createTestApp({ clock, ingestion: (nowMs) => watch.state(nowMs) });
    try {
      const health = async () => {
        const res = await t.app.inject({ url: '/api/v1/health' });
        assert.equal(res.statusCode, 200);
        return res.json();
      };
      assert.equal((await health()).ingestion, null);
      watch.started(clock.now());
      clock.advance(5_000);
      let h = await health();
      assert.deepEqual(h.ingestion, {
        startedAt: '2026-11-22T12:00:00.000Z',
        runningSeconds: 5,
        expectedSeconds: 60,
        overdue: false,
        sources: progress,
      });
      assert.equal(h.status, 'ok');
      clock.advance(56_000);
      h = await health();
      assert.deepEqual(h.ingestion, {
        startedAt: '2026-11-22T12:00:00.000Z',
        runningSeconds: 61,
        expectedSeconds: 60,
        overdue: true,
        sources: progress,
      });
      assert.equal(h.status, 'degraded');
      watch.ended();
      h = await health();
      assert.equal(h.ingestion, null);
      assert.equal(h.status, 'ok');
    } finally {
      await t.close();
    }
  });

  test('behavior: a pass reading from the node that never answers is shown running until its reads fail', async () => {
    const clock = new ManualClock('2026-11-22T12:00:00Z');
    const watch = new PassWatch(expectedPassMs(12_000));
    const t = await createTestApp({ clock, ingestion: (nowMs) => watch.state(nowMs) });
    try {
      const rpc = createChainRpc(1, url, { timeoutMs: 500, retries: 0 });
      watch.started(clock.now());
      const pass = rpc.client.getBlockNumber().finally(() => watch.ended());
      clock.advance(2_000);
      const during = (await t.app.inject({ url: '/api/v1/health' })).json();
      assert.equal(during.ingestion.runningSeconds, 2);
      await assert.rejects(pass);
      assert.equal((await t.app.inject({ url: '/api/v1/health' })).json().ingestion, null);
    } finally {
      await t.close();
    }
  });
});
