import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { test } from 'node:test';
import { loadReadModel } from '../../src/data/read-model.ts';
import { must } from '../../src/domain/must.ts';
import type { MarketRecord, PositionRecord, VaultRecord } from '../../src/domain/types.ts';
import type { PreviousRun, Source, SourceOutput } from '../../src/ingest/contract.ts';
import { ingestLive, ingestWithLease } from '../../src/ingest/live.ts';
import { WrittenDataset } from '../../src/ingest/live-writes.ts';
import { processHolder } from '../../src/store/lease-holder.ts';
import { openStore } from '../../src/store/open.ts';
import { ManualClock } from '../clock.ts';
import { liquidationOf, makeMarket, makePosition, tempDir } from '../helpers.ts';

/** A chain source whose runs answer `next(previous)`: records, or a throw. */
function source(chainId: number, next: (previous?: PreviousRun) => SourceOutput | Error) {
  const seen: (PreviousRun | undefined)[] = [];
  const s: Source = {
    id: `chain:${chainId}`,
    kind: 'chain',
    chainIds: [chainId],
    async run(_now, previous) {
      seen.push(previous);
      const out = next(previous);
      if (out instanceof Error) throw out;
      return out;
    },
  };
  return { source: s, seen };
}

function records(markets: MarketRecord[], block: number, vaults: VaultRecord[] = []): SourceOutput {
  const positions: PositionRecord[] = markets.map((m) => makePosition(m));
  return {
    records: { markets, positions, vaults },
    blocks: { [String(markets[0]!.chainId)]: block },
    items: [],
  };
}

/** A vault lending all of `market`'s supply. */
function vaultOf(market: MarketRecord): VaultRecord {
  return {
    protocol: 'euler',
    chainId: market.chainId,
    address: `0x${'ee'.repeat(20)}`,
    name: 'EVK Vault',
    symbol: 'eUSDC-1',
    assetAddress: market.loanAddress,
    assetSymbol: market.loan,
    curator: null,
    governor: null,
    fee: 0.1,
    allocations: [{ marketKey: market.uniqueKey, supplyShare: 1, supplyCapUsd: null }],
  };
}

test('behavior: a failing source keeps its last records (vaults too) while the others move on; the dataset is as fresh as the stalest', async () => {
  const store = await openStore({ dataDir: tempDir('lrds-live-'), databaseUrl: null });
  const clock = new ManualClock('2026-11-26T00:00:00Z');
  const a1 = makeMarket({ chainId: 1 });
  const b1 = makeMarket({ chainId: 10 });
  let aFails = false;
  const a = source(1, () => (aFails ? new Error('RPC unreachable') : records([a1], 100, [vaultOf(a1)])));
  let bMarket = b1;
  const b = source(10, () => records([bMarket], 500));
  const first = await ingestLive([a.source, b.source], store, clock);
  assert.equal(first.dataset?.marketCount, 2);
  assert.equal(first.dataset?.refreshedAt, clock.now());

  clock.advance(60_000);
  aFails = true;
  bMarket = { ...b1, supply: b1.supply! * 2 };
  const second = await ingestLive([a.source, b.source], store, clock);
  assert.deepEqual(
    second.runs.map((r) => [r.source, r.ok, r.markets]),
    [
      ['chain:1', false, 1],
      ['chain:10', true, 1],
    ],
  );
  // a's last run is what a was handed, and what stays; b's new market is in
  assert.deepEqual(
    a.seen[1]?.markets.map((m) => m.uniqueKey),
    [a1.uniqueKey],
  );
  assert.deepEqual(a.seen[1]?.vaults, [vaultOf(a1)]);
  assert.deepEqual(await store.loadVaults(), [vaultOf(a1)]);
  // Written as a change of the dataset, which a read model follows.
  assert.equal(second.dataset?.version, first.dataset?.version);
  const model = must(await loadReadModel(store, clock.now()), 'the read model');
  const markets = [a1, b1].map((m) =>
    model.catalog.baseRecord(must(model.catalog.ordOf(m.uniqueKey), m.uniqueKey)),
  );
  assert.deepEqual(
    markets.map((m) => [m.uniqueKey, m.supply]).sort(),
    [
      [a1.uniqueKey, a1.supply],
      [b1.uniqueKey, b1.supply! * 2],
    ].sort(),
  );
  // as fresh as a, which last succeeded a minute ago; a's checkpoint counts the failure
  assert.equal(second.dataset?.refreshedAt, clock.now() - 60_000);
  const states = await store.listSources();
  assert.deepEqual(
    states.map((s) => [s.id, s.consecutiveFailures, s.lastError, s.lastBlock]),
    [
      ['chain:1', 1, 'RPC unreachable', { '1': 100 }],
      ['chain:10', 0, null, { '10': 500 }],
    ],
  );
  await store.close();
});

test('behavior: over a sandbox, the sources start afresh: its history is not theirs, nor are old checkpoints', async () => {
  const store = await openStore({ dataDir: tempDir('lrds-live-'), databaseUrl: null });
  const clock = new ManualClock('2026-11-26T00:00:00Z');
  const sandboxMarket = makeMarket({ chainId: 1 });
  await store.replaceDataset({
    kind: 'sandbox',
    profile: 'default',
    seed: 1,
    markets: [sandboxMarket],
    positions: [makePosition(sandboxMarket)],
    positionCount: 1,
  });
  await store.appendLiquidations([liquidationOf(1, sandboxMarket, clock.now() - 86_400_000, 1000)]);
  // a checkpoint left by an earlier live dataset
  await store.saveSource({
    id: 'chain:1',
    kind: 'chain',
    chainIds: [1],
    refreshedAt: 1,
    lastBlock: { '1': 999 },
    consecutiveFailures: 0,
    lastError: null,
    updatedAt: 1,
    cursor: '{"recent":[[999,"0xabc"]]}',
  });
  const real = makeMarket({ chainId: 1 });
  const realLiquidation = liquidationOf(2, real, clock.now() - 3_600_000, 500);
  const a = source(1, () => ({ ...records([real], 1200), liquidations: [realLiquidation] }));
  await ingestLive([a.source], store, clock);
  assert.equal(a.seen[0]?.state, null, 'the old checkpoint is not handed to the source');
  assert.deepEqual(
    (await store.liquidations({}, 10)).map((l) => l.txHash),
    [realLiquidation.txHash],
    "the sandbox's liquidations went with it; the source's own are kept",
  );
  assert.deepEqual(
    (await store.loadMarkets()).map((m) => m.uniqueKey),
    [real.uniqueKey],
  );
  // once live, the checkpoint is the source's own
  await ingestLive([a.source], store, clock);
  assert.deepEqual(a.seen[1]?.state?.lastBlock, { '1': 1200 });
  await store.close();
});

test('behavior: a pass writes only while its server holds the ingestion lease; the others stand by', async () => {
  const store = await openStore({ dataDir: tempDir('lrds-live-'), databaseUrl: null });
  const clock = new ManualClock('2026-11-26T00:00:00Z');
  const m = makeMarket({ chainId: 1 });
  const a = { holder: 'server-a', ms: 1000 };
  const b = { holder: 'server-b', ms: 1000 };
  // A's pass outlives its lease (its renewals did not get through): B takes the lease meanwhile
  const overtaken = source(1, () => {
    clock.advance(2000);
    return records([m], 10);
  });
  const takeOver = store.claimIngestion.bind(store);
  const aRun = overtaken.source.run.bind(overtaken.source);
  overtaken.source.run = async (now, previous) => {
    const out = await aRun(now, previous);
    assert.equal(await takeOver('server-b', clock.now(), 1000), true);
    return out;
  };
  const lost = await ingestWithLease([overtaken.source], store, clock, a);
  assert.equal(lost?.written, false);
  assert.equal(await store.datasetInfo(), null, 'nothing written by a server that lost the lease');
  assert.deepEqual(await store.listSources(), [], 'nor its checkpoints');
  // B holds it: its pass writes; A's next pass runs nothing
  const bSource = source(1, () => records([m], 10));
  assert.equal((await ingestWithLease([bSource.source], store, clock, b))?.written, true);
  const standBy = source(1, () => records([m], 11));
  assert.equal(await ingestWithLease([standBy.source], store, clock, a), null);
  assert.equal(standBy.seen.length, 0, 'not even read');
  await store.close();
});

test('behavior: a lease held by a process of this host and PID namespace that is gone is taken at once; one alive, or elsewhere, is waited for', async () => {
  const store = await openStore({ dataDir: tempDir('lrds-live-gone-'), databaseUrl: null });
  const clock = new ManualClock('2026-11-26T00:00:00Z');
  const m = makeMarket({ chainId: 1 });
  const mine = { holder: processHolder(), ms: 30_000 };
  // A process that ran here and is gone (killed: its pid runs nothing).
  const child = spawn(process.execPath, ['-e', '0']);
  await once(child, 'exit');
  const claim = (holder: string) => store.claimIngestion(holder, clock.now(), 30_000);
  // This host and PID namespace, as holder names give them.
  const here = `${hostname()}#${/\[(\d+)\]/.exec(readlinkSync('/proc/self/ns/pid'))![1]}`;
  for (const [holder, takenAtOnce] of [
    [`lrds-ingest@${here}:${child.pid}:1a2b3c4d`, true],
    // This process's pid under a name it did not make: a process started again with its pid.
    [`${here}:${process.pid}:00000000`, true],
    // Another service of this process (same pid), alive (this process's parent), another PID
    // namespace of this host (a container), another host, an older name, a name not read.
    [processHolder(), false],
    [`${here}:${process.ppid}:1a2b3c4d`, false],
    [`${hostname()}#1:${child.pid}:1a2b3c4d`, false],
    [`elsewhere.example${here.slice(hostname().length)}:${child.pid}:1a2b3c4d`, false],
    [`lrds-ingest:${hostname()}:${child.pid}`, false],
    ['server-b', false],
  ] as const) {
    await store.releaseIngestion(mine.holder);
    assert.equal(await claim(holder), true);
    const s = source(1, () => records([m], 10));
    const pass = await ingestWithLease([s.source], store, clock, mine);
    assert.equal(pass !== null, takenAtOnce, holder);
    assert.equal(await store.ingestionHolder(clock.now()), takenAtOnce ? mine.holder : holder, holder);
    await store.releaseIngestion(holder);
  }
  await store.close();
});

test('behavior: a market without both USD prices is written without positions, whatever a source hands (docs/decisions.md "Real sources")', async () => {
  const store = await openStore({ dataDir: tempDir('lrds-live-unpriced-'), databaseUrl: null });
  const clock = new ManualClock('2026-11-26T00:00:00Z');
  const priced = makeMarket({ chainId: 1 });
  const unpriced = makeMarket({ chainId: 1, loanPrice: null, supply: null, borrow: null, supplyAssets: 10 });
  const s = source(1, () => records([priced, unpriced], 100));
  const pass = await ingestLive([s.source], store, clock);
  assert.equal(pass.dataset?.marketCount, 2);
  // the source handed one position per market: the unpriced market's is not written
  assert.equal(pass.dataset?.positionCount, 1);
  assert.equal((await store.loadMarkets()).find((m) => m.uniqueKey === unpriced.uniqueKey)?.loanPrice, null);
  await store.close();
});

test('behavior: a source that hands positions in part changes only those: the others stay, one handed empty goes, a dataset written again keeps them', async () => {
  const store = await openStore({ dataDir: tempDir('lrds-live-partial-'), databaseUrl: null });
  const clock = new ManualClock('2026-11-26T00:00:00Z');
  const m = makeMarket({ chainId: 1 });
  // (A market with no position, gone at the third pass.)
  const m0 = makeMarket({ chainId: 1 });
  const [p1, p2, p3] = [makePosition(m), makePosition(m), makePosition(m)] as [
    PositionRecord,
    PositionRecord,
    PositionRecord,
  ];
  let next: SourceOutput = { records: { markets: [m, m0], positions: [p1, p2, p3] }, items: [] };
  const s = source(1, () => next);
  const stored = async () => {
    const info = must(await store.datasetInfo(), 'the dataset');
    const written = must(await WrittenDataset.load(store, info), 'the dataset read whole');
    return new Map(written.records().positions.map((p) => [p.user, p]));
  };
  await ingestLive([s.source], store, clock);

  // p1 borrowed more, p2 repaid all; p3 was not read
  const p1b = { ...p1, borrowUsd: p1.borrowUsd * 2, healthFactor: p1.healthFactor / 2 };
  const p2gone = { ...p2, collateralUsd: 0, borrowUsd: 0, supplyUsd: 0, healthFactor: Infinity };
  next = {
    records: { markets: [m, m0], positions: [p1b, p2gone], partial: new Set([m.uniqueKey]) },
    items: [],
  };
  const second = await ingestLive([s.source], store, clock);
  assert.equal(second.runs[0]!.positions, 2);
  let now = await stored();
  assert.deepEqual([...now.keys()].sort(), [p1.user, p3.user].sort());
  assert.equal(now.get(p1.user)!.borrowUsd, p1b.borrowUsd);
  assert.deepEqual(now.get(p3.user), p3);
  // A market gone writes the dataset again: the positions not handed are kept, at the market's
  // figures now (its collateral price doubled).
  const m2 = makeMarket({ chainId: 1 });
  const moved = { ...m, collateralPrice: m.collateralPrice! * 2 };
  next = {
    records: { markets: [moved, m2], positions: [makePosition(m2)], partial: new Set([m.uniqueKey]) },
    items: [],
  };
  const third = await ingestLive([s.source], store, clock);
  // handed back as the source last handed them
  assert.deepEqual(s.seen[2]!.positions.map((p) => p.user).sort(), [p1.user, p3.user].sort());

  assert.notEqual(third.dataset?.version, second.dataset?.version);
  assert.equal(third.dataset?.positionCount, 3);
  assert.equal(third.runs[0]!.positions, 3);
  now = await stored();
  assert.equal(now.get(p3.user)!.collateralUsd, p3.collateralUsd * 2);
  assert.equal(now.get(p3.user)!.healthFactor, p3.healthFactor * 2);
  assert.equal(now.get(p1.user)!.borrowUsd, p1b.borrowUsd);

  // A pass that hands the market whole again: one not handed is gone.
  next = { records: { markets: [moved, m2], positions: [now.get(p1.user)!] }, items: [] };
  await ingestLive([s.source], store, clock);
  assert.deepEqual([...(await stored()).keys()], [p1.user]);
  await store.close();
});
