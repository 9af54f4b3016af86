/**
 * A sources file none of whose sources can be read when the service starts (its RPC refuses
 * connections): the service starts anyway, live keys get empty answers that say nothing has been
 * read, /health names what is missing, test keys keep the sandbox, and a second server on the
 * store does not wait for a dataset that is not coming. (A first pass that reads the chain
 * later: test/chain/morpho-ingest.test.ts.)
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { unsyncedLiveModel } from '../../src/data/read-model.ts';
import { createService, type Service } from '../../src/service.ts';
import { openStore } from '../../src/store/open.ts';
import { ManualClock } from '../clock.ts';
import { createTestApp, embeddedSettings, makeMarket, makePosition, QUIET, tempDir } from '../helpers.ts';

const ADDRESS = `0x${'22'.repeat(20)}`;
const MARKET = `morpho-31337-0x${'ab'.repeat(32)}`;

/** A sources file in `dir` whose one chain's RPC refuses connections. */
function unreachableSources(dir: string): string {
  return sourcesAt(dir, 'http://127.0.0.1:9');
}

/** A sources file in `dir` whose one chain's RPC is `rpcUrl`. */
function sourcesAt(dir: string, rpcUrl: string): string {
  const file = join(dir, 'sources.json');
  writeFileSync(
    file,
    JSON.stringify({
      chains: [
        {
          chainId: 31337,
          rpcUrl,
          morpho: { blue: `0x${'11'.repeat(20)}`, fromBlock: 0 },
        },
      ],
    }),
  );
  return file;
}

/**
 * A JSON-RPC node that holds every request unanswered until `release()`, which drops the held
 * connections and stops listening (later requests are refused): a first pass that lasts as
 * long as the test wants.
 */
async function heldRpc(): Promise<{ url: string; held: () => number; release: () => void }> {
  const sockets = new Set<net.Socket>();
  let held = 0;
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
    socket.once('data', () => held++);
    socket.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    held: () => held,
    release: () => {
      server.close();
      for (const s of sockets) s.destroy();
    },
  };
}

async function until(pred: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 10_000;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

interface Health {
  status: string;
  ingestion: { startedAt: string } | null;
  datasets: { mode: string; markets: number }[];
  sources: {
    id: string;
    lastRefresh: string | null;
    consecutiveFailures: number;
    lastError: string | null;
  }[];
}

async function health(service: Service): Promise<Health> {
  const res = await service.app.inject({ url: '/api/v1/health' });
  assert.equal(res.statusCode, 200);
  return res.json();
}

async function keysOf(service: Service): Promise<{ live: string; test: string }> {
  const account = await service.keys.ensureAccount('desk');
  const create = async (mode: 'live' | 'test') =>
    (await service.keys.create({ accountId: account.id, tier: 'enterprise', mode })).key;
  return { live: await create('live'), test: await create('test') };
}

function ask(service: Service, key: string) {
  return async (url: string) => {
    const res = await service.app.inject({
      url: `/api/v1${url}`,
      headers: { authorization: `Bearer ${key}` },
    });
    return { status: res.statusCode, body: res.json() };
  };
}

describe('a sources file that cannot be read at start', () => {
  test('behavior: the service starts; /health names the source and its error; live answers are empty and say nothing is read; test keys get the sandbox', async () => {
    const dir = tempDir('lrds-first-pass-');
    // The store holds a sandbox (first seeded, then given the sources file): never served to live keys.
    const seeded = await openStore({ dataDir: dir, databaseUrl: null });
    const m = makeMarket();
    await seeded.replaceDataset({
      kind: 'sandbox',
      profile: 'test',
      seed: null,
      markets: [m],
      positions: [makePosition(m)],
      positionCount: 1,
    });
    await seeded.close();
    const lines: { level: number; msg: string; sources?: string[] }[] = [];
    const stream = new Writable({
      write(chunk, _encoding, callback) {
        lines.push(JSON.parse(String(chunk)));
        callback();
      },
    });
    const clock = new ManualClock(Date.now());
    const service = await createService(
      { ...embeddedSettings(dir), sourcesFile: unreachableSources(dir), simulationTickMs: 0 },
      { clock, server: QUIET, logger: { level: 'warn', stream } },
    );
    try {
      // One warning line naming the source and why.
      const warned = lines.filter((l) => l.level === 40);
      assert.equal(warned.length, 1, JSON.stringify(lines));
      assert.deepEqual(warned[0]!.sources, ['chain:31337']);
      assert.match(
        warned[0]!.msg,
        /^sources not read at start: chain:31337 \(HTTP request failed.*\); nothing of it is served until a pass reads it/,
      );

      const h = await health(service);
      assert.equal(h.status, 'degraded');
      assert.deepEqual(
        h.datasets.map((d) => d.mode),
        [],
        'no live dataset to list (the sandbox is not built yet)',
      );
      const source = h.sources.find((s) => s.id === 'chain:31337');
      assert.equal(source?.lastRefresh, null);
      assert.equal(source?.consecutiveFailures, 1);
      assert.match(source?.lastError ?? '', /HTTP request failed/);

      const keys = await keysOf(service);
      const live = ask(service, keys.live);
      await service.ratings.runDue();
      // Every data route answers: lists and aggregates empty, labelled `snapshot`, with no instant or block.
      for (const url of [
        '/markets',
        '/markets/search?query=eth',
        `/positions?address=${ADDRESS}`,
        `/portfolios/${ADDRESS}`,
        '/vaults',
        '/oracles',
        '/tokens',
        '/liquidations',
        '/risk/positions-at-risk',
        '/risk/stress?shocks=ETH:-0.2',
        '/ratings/markets',
        '/ratings/vaults',
        '/research/reports',
        '/analytics/overview',
        '/analytics/timeseries',
        `/agent/wallet-risk/${ADDRESS}`,
      ]) {
        const { status, body } = await live(url);
        assert.equal(status, 200, `${url}: ${JSON.stringify(body)}`);
        if (Array.isArray(body.data)) assert.deepEqual(body.data, [], url);
        assert.equal(body.meta.freshness, 'snapshot', url);
        assert.equal(body.meta.asOf, undefined, url);
        assert.equal(body.meta.blocks, undefined, url);
        if (body.meta.total !== undefined) assert.equal(body.meta.total, 0, url);
      }
      assert.equal((await live('/analytics/overview')).body.data.totals.markets, 0);
      // Ids: 404, as for any id not served.
      for (const url of [
        `/markets/${MARKET}`,
        `/risk/markets/${MARKET}`,
        `/ratings/markets/${MARKET}`,
        `/oracles/31337/${ADDRESS}`,
        `/tokens/31337/${ADDRESS}`,
        `/vaults/31337/${ADDRESS}`,
      ])
        assert.equal((await live(url)).status, 404, url);

      // Test keys: the sandbox, as always.
      const sandbox = await ask(service, keys.test)('/markets?limit=1');
      assert.equal(sandbox.status, 200);
      assert.ok(sandbox.body.meta.total > 100, 'the default sandbox');
      assert.equal(sandbox.body.meta.freshness, 'snapshot');
      assert.ok(sandbox.body.meta.asOf);

      // The passes go on: each failure is counted, and the live model stays empty.
      clock.advance(12_000);
      await service.ingest();
      assert.equal(await service.models.reloadIfChanged(), false);
      const again = await health(service);
      assert.equal(again.status, 'degraded');
      assert.equal(again.sources.find((s) => s.id === 'chain:31337')?.consecutiveFailures, 2);
      assert.equal((await live('/markets')).body.meta.total, 0);
      assert.deepEqual(
        lines.filter((l) => l.level === 40).map((l) => l.msg),
        [warned[0]!.msg],
        'a source failing again is not logged again',
      );
    } finally {
      await service.close();
    }
  });

  test('behavior: a first pass that outlasts FIRST_PASS_WAIT_MS goes on in the background: the service starts, /health shows it running, and its outcome is logged when it ends', async () => {
    const dir = tempDir('lrds-first-pass-long-');
    const rpc = await heldRpc();
    const lines: { level: number; msg: string; source?: string }[] = [];
    const stream = new Writable({
      write(chunk, _encoding, callback) {
        lines.push(JSON.parse(String(chunk)));
        callback();
      },
    });
    const clock = new ManualClock(Date.now());
    let service: Service | null = null;
    try {
      service = await createService(
        {
          ...embeddedSettings(dir),
          sourcesFile: sourcesAt(dir, rpc.url),
          simulationTickMs: 0,
          firstPassWaitMs: 200,
        },
        { clock, server: QUIET, logger: { level: 'info', stream } },
      );
      // Started while the node still holds the pass's first request.
      assert.ok(rpc.held() >= 1, 'the first pass had asked the node');
      const h = await health(service);
      assert.equal(h.status, 'degraded');
      assert.ok(h.ingestion, '/health shows the first pass running');
      const source = h.sources.find((s) => s.id === 'chain:31337');
      assert.equal(source?.lastRefresh, null);
      assert.equal(source?.consecutiveFailures, 0);
      const warned = lines.filter((l) => l.level === 40);
      assert.equal(warned.length, 1, JSON.stringify(lines));
      assert.match(
        warned[0]!.msg,
        /^sources not read at start: chain:31337 \(its first pass still running\); nothing of it is served until a pass reads it/,
      );
      const keys = await keysOf(service);
      const markets = await ask(service, keys.live)('/markets');
      assert.equal(markets.body.meta.total, 0);
      assert.equal(markets.body.meta.freshness, 'snapshot');

      // The node goes away: the pass fails; the ingest job joined it and logs its outcome.
      rpc.release();
      await service.ingest();
      const after = await health(service);
      assert.equal(after.ingestion, null, 'no pass running');
      const failed = after.sources.find((s) => s.id === 'chain:31337');
      assert.equal(failed?.consecutiveFailures, 1);
      assert.ok(failed?.lastError);
      assert.deepEqual(
        lines.filter((l) => l.level === 40 && l.source === 'chain:31337').map((l) => l.msg),
        ['source failed: not read yet, nothing of it is served'],
      );
    } finally {
      rpc.release();
      await service?.close();
    }
  });

  test('behavior: a server shut down while its first pass runs in the background does not wait for the pass', async () => {
    const dir = tempDir('lrds-first-pass-stop-');
    const rpc = await heldRpc();
    const clock = new ManualClock(Date.now());
    try {
      const service = await createService(
        {
          ...embeddedSettings(dir),
          sourcesFile: sourcesAt(dir, rpc.url),
          simulationTickMs: 0,
          firstPassWaitMs: 0,
        },
        { clock, server: QUIET },
      );
      await until(() => rpc.held() >= 1, 'the first pass asked the node');
      // The node holds the pass for as long as its requests' time-outs (about 30 s): close()
      // must not wait for them.
      const outcome = await Promise.race([
        service.close().then(() => 'closed'),
        new Promise((r) => setTimeout(r, 20_000, 'still waiting for the pass')),
      ]);
      assert.equal(outcome, 'closed');
      // The lease was let go: another process may run the passes at once.
      const store = await openStore({ dataDir: dir, databaseUrl: null });
      try {
        assert.equal(await store.claimIngestion('another', Date.now(), 60_000), true);
      } finally {
        await store.close();
      }
    } finally {
      rpc.release();
    }
  });

  test('behavior: a second server on the store starts without waiting for a dataset the lease holder cannot read, and takes the passes over once it stops', async () => {
    const dir = tempDir('lrds-first-pass-two-');
    const file = unreachableSources(dir);
    const clock = new ManualClock(Date.now());
    const settings = { ...embeddedSettings(dir), sourcesFile: file, simulationTickMs: 0 };
    const first = await createService(settings, { clock, server: QUIET });
    let firstOpen = true;
    let second: Service | null = null;
    try {
      // The first holds the ingestion lease; its failed pass is in the store: nothing to wait for
      // (a wait would last a minute: the time a pass may take).
      const started = performance.now();
      second = await createService(settings, { clock, server: QUIET });
      assert.ok(performance.now() - started < 30_000, 'started without waiting for the lease holder');
      const h = await health(second);
      assert.equal(h.status, 'degraded');
      assert.equal(h.sources.find((s) => s.id === 'chain:31337')?.consecutiveFailures, 1);
      const keys = await keysOf(second);
      const markets = await ask(second, keys.live)('/markets');
      assert.equal(markets.status, 200);
      assert.equal(markets.body.meta.total, 0);
      assert.equal(markets.body.meta.freshness, 'snapshot');
      // The lease is the first's: the second's passes do nothing until it stops.
      await second.ingest();
      assert.equal((await health(second)).sources[0]?.consecutiveFailures, 1);
      await first.ingest();
      assert.equal((await health(second)).sources[0]?.consecutiveFailures, 2);
      await first.close();
      firstOpen = false;
      await second.ingest();
      assert.equal((await health(second)).sources[0]?.consecutiveFailures, 3, 'taken over at once');
    } finally {
      await second?.close();
      if (firstOpen) await first.close();
    }
  });

  test('behavior: /health lists a source of the file no pass has recorded yet, and is degraded until every source has been read', async () => {
    const clock = new ManualClock('2026-11-24T10:00:00Z');
    const app = await createTestApp({
      clock,
      live: unsyncedLiveModel('sources', clock.now()),
      configuredSources: [
        { id: 'chain:1', kind: 'chain', chainIds: [1] },
        { id: 'morpho-api', kind: 'api', chainIds: [8453] },
      ],
    });
    try {
      const h = (await app.get('/api/v1/health')).json() as Health;
      assert.equal(h.status, 'degraded');
      assert.deepEqual(h.datasets, [], 'no live dataset yet');
      assert.deepEqual(
        h.sources.map((s) => [s.id, s.lastRefresh, s.consecutiveFailures, s.lastError]),
        [
          ['chain:1', null, 0, null],
          ['morpho-api', null, 0, null],
        ],
      );
      // Every answer of the empty model conforms to the OpenAPI document (createTestApp checks).
      const key = await app.key('enterprise');
      const markets = (await app.get('/api/v1/markets', key)).json();
      assert.deepEqual(markets.meta, {
        latencyMs: markets.meta.latencyMs,
        freshness: 'snapshot',
        source: '',
        total: 0,
      });
      // One source read, the other failing: still degraded; both read: ok.
      const state = (id: string, kind: string, chainIds: number[], refreshedAt: number | null) => ({
        id,
        kind,
        chainIds,
        refreshedAt,
        lastBlock: {},
        consecutiveFailures: refreshedAt === null ? 3 : 0,
        lastError: refreshedAt === null ? 'HTTP 500' : null,
        updatedAt: clock.now(),
        cursor: null,
      });
      await app.store.saveSource(state('chain:1', 'chain', [1], clock.now()));
      await app.store.saveSource(state('morpho-api', 'api', [8453], null));
      const partly = (await app.get('/api/v1/health')).json() as Health;
      assert.equal(partly.status, 'degraded');
      assert.deepEqual(
        partly.sources.map((s) => [s.id, s.consecutiveFailures, s.lastError]),
        [
          ['chain:1', 0, null],
          ['morpho-api', 3, 'HTTP 500'],
        ],
      );
      await app.store.saveSource(state('morpho-api', 'api', [8453], clock.now()));
      assert.equal(((await app.get('/api/v1/health')).json() as Health).status, 'ok');
    } finally {
      await app.close();
    }
  });
});
