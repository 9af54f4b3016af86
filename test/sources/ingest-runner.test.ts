import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Source, SourceOutput } from '../../src/ingest/contract.ts';
import { ingestOnce, redactSecrets } from '../../src/ingest/runner.ts';
import { createService } from '../../src/service.ts';
import { openStore } from '../../src/store/open.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { ManualClock } from '../clock.ts';
import { embeddedSettings, makeMarket, makePosition, QUIET, tempDir } from '../helpers.ts';

/** A source whose next run answers `next()`: a snapshot of `markets` markets, or a throw. */
function fakeSource(next: () => SourceOutput | Error): Source {
  return {
    id: 'chain:1',
    kind: 'chain',
    chainIds: [1],
    async run() {
      const out = next();
      if (out instanceof Error) throw out;
      return out;
    },
  };
}

function snapshotOf(markets: number, block: number): SourceOutput {
  const ms = Array.from({ length: markets }, () => makeMarket({ chainId: 1 }));
  return {
    snapshot: {
      kind: 'live',
      profile: 'chain',
      seed: null,
      markets: ms,
      positions: ms.map((m) => makePosition(m)),
      positionCount: ms.length,
    },
    blocks: { '1': block },
    items: ms.map((m) => ({ id: m.uniqueKey, ok: true as const })),
  };
}

describe('ingestOnce: the ingest contract', () => {
  test('behavior: a run writes its records and moves the checkpoint; a failed run keeps the data and counts the failure', async () => {
    const clock = new ManualClock('2026-11-24T10:00:00Z');
    const store = new SqliteStore(':memory:', { clock });
    await store.migrate();
    let answer: SourceOutput | Error = snapshotOf(3, 100);
    const source = fakeSource(() => answer);

    const first = await ingestOnce(source, store, clock);
    assert.equal(first.ok, true);
    assert.equal(first.dataset?.marketCount, 3);
    assert.equal(first.items.length, 3);
    assert.deepEqual(first.state.lastBlock, { '1': 100 });
    assert.equal(first.state.refreshedAt, Date.parse('2026-11-24T10:00:00Z'));

    // The source goes down: nothing is written, the data and its refresh time stay.
    clock.advance(60_000);
    answer = new Error('fetch failed: https://user:secret@rpc.example.com/v2/abc (ECONNREFUSED)');
    const failed = await ingestOnce(source, store, clock);
    assert.equal(failed.ok, false);
    assert.equal(failed.state.consecutiveFailures, 1);
    assert.ok(!failed.state.lastError!.includes('secret'), failed.state.lastError!);
    assert.equal(failed.state.refreshedAt, first.state.refreshedAt);
    assert.equal((await store.datasetInfo())?.marketCount, 3);
    const second = await ingestOnce(source, store, clock);
    assert.equal(second.state.consecutiveFailures, 2);

    // Back: the failures reset, the checkpoint moves on.
    clock.advance(60_000);
    answer = snapshotOf(2, 130);
    const back = await ingestOnce(source, store, clock);
    assert.equal(back.ok, true);
    assert.equal(back.state.consecutiveFailures, 0);
    assert.equal(back.state.lastError, null);
    assert.deepEqual(back.state.lastBlock, { '1': 130 });
    assert.equal((await store.datasetInfo())?.marketCount, 2);
    assert.deepEqual(
      (await store.listSources()).map((s) => [s.id, s.consecutiveFailures]),
      [['chain:1', 0]],
    );
    await store.close();
  });

  test('behavior: credentials in URLs never reach a checkpoint', () => {
    assert.equal(
      redactSecrets('GET https://alice:pw@node.example/rpc failed'),
      'GET https://[redacted]@node.example/rpc failed',
    );
    assert.equal(redactSecrets('no url here'), 'no url here');
    // a password holding '@' and '/', a key in the path, in the query, a bearer token
    assert.equal(redactSecrets('postgres://admin:s3cr@t/pw@db:5432/x'), 'postgres://[redacted]@db:5432/x');
    assert.equal(
      redactSecrets('https://eth-mainnet.g.alchemy.com/v2/AbCdEfGhIjKlMnOpQrStUvWx failed'),
      'https://eth-mainnet.g.alchemy.com/v2/[redacted] failed',
    );
    assert.equal(
      redactSecrets('https://rpc.example/?apikey=abc123&x=1'),
      'https://rpc.example/?apikey=[redacted]&x=1',
    );
    assert.equal(redactSecrets('Authorization: Bearer abc.def'), 'Authorization: Bearer [redacted]');
    // any parameter whose name holds key or token (dRPC's dkey, access_token)
    assert.equal(
      redactSecrets('https://lb.drpc.org/ogrpc?network=ethereum&dkey=Ab12&access_token=t'),
      'https://lb.drpc.org/ogrpc?network=ethereum&dkey=[redacted]&access_token=[redacted]',
    );
  });
});

describe('sources in /health and meta.asOf', () => {
  test('behavior: a store seeded before sources were recorded gets its sandbox checkpoint; /health lists it with its age, answers carry meta.asOf', async () => {
    const dataDir = tempDir('lrds-sources-');
    const seeded = await openStore({ dataDir, databaseUrl: null });
    const m = makeMarket();
    await seeded.replaceDataset({
      kind: 'sandbox',
      profile: 'test',
      seed: 1,
      markets: [m],
      positions: [makePosition(m)],
      positionCount: 1,
    });
    const refreshedAt = (await seeded.datasetInfo())!.refreshedAt;
    await seeded.close();
    const clock = new ManualClock(refreshedAt + 90_000);
    const service = await createService(embeddedSettings(dataDir), { clock, server: QUIET });
    try {
      const health = (await service.app.inject({ url: '/api/v1/health' })).json();
      assert.equal(health.sources.length, 1);
      const s = health.sources[0];
      assert.equal(s.id, 'sandbox');
      assert.equal(s.kind, 'simulation');
      assert.equal(s.lastRefresh, new Date(refreshedAt).toISOString());
      assert.equal(s.ageSeconds, 90);
      assert.equal(s.consecutiveFailures, 0);
      assert.equal(s.lastError, null);
      assert.equal(s.inUse, true);
      const account = await service.keys.ensureAccount('acme');
      const { key } = await service.keys.create({ accountId: account.id, tier: 'pro', mode: 'live' });
      const res = await service.app.inject({
        url: '/api/v1/markets',
        headers: { authorization: `Bearer ${key}` },
      });
      assert.equal(res.json().meta.asOf, new Date(refreshedAt).toISOString());
      assert.equal(res.json().meta.freshness, 'snapshot');
    } finally {
      await service.close();
    }
  });
});

describe('meta.blocks', () => {
  test('behavior: answers from chain data carry the block of each of their chains (the stalest source), following new blocks; sandbox answers carry none', async () => {
    const dataDir = tempDir('lrds-blocks-');
    const clock = new ManualClock('2026-11-24T10:00:00Z');
    const store = await openStore({ dataDir, databaseUrl: null });
    await ingestOnce(
      fakeSource(() => snapshotOf(2, 130)),
      store,
      clock,
    );
    await store.close();
    const service = await createService(embeddedSettings(dataDir), { clock, server: QUIET });
    try {
      const account = await service.keys.ensureAccount('acme');
      const get = async (mode: 'live' | 'test', query = '') => {
        const { key } = await service.keys.create({ accountId: account.id, tier: 'pro', mode });
        const res = await service.app.inject({
          url: `/api/v1/markets${query}`,
          headers: { authorization: `Bearer ${key}` },
        });
        assert.equal(res.statusCode, 200, res.body);
        return res.json().meta;
      };
      assert.deepEqual((await get('live')).blocks, { '1': 130 });
      assert.equal((await get('test')).blocks, undefined);
      // The source reads a new block; another source on the same chain stands further back.
      await ingestOnce(
        fakeSource(() => snapshotOf(2, 145)),
        service.store,
        clock,
      );
      await service.store.saveSource({
        id: 'chain:1:other',
        kind: 'chain',
        chainIds: [1, 10],
        refreshedAt: clock.now(),
        lastBlock: { '1': 140, '10': 7 },
        consecutiveFailures: 0,
        lastError: null,
        updatedAt: clock.now(),
        cursor: null,
      });
      await service.models.reloadIfChanged();
      // A list of every chain carries every chain's block; one scoped to chain 10, that chain's (docs/decisions.md "Freshness per source").
      assert.deepEqual((await get('live')).blocks, { '1': 140, '10': 7 });
      assert.deepEqual((await get('live', '?chainIds=10')).blocks, { '10': 7 });
    } finally {
      await service.close();
    }
  });
});
