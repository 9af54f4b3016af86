import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { KEY_CHANGES_SQL } from '../../src/store/sqlite/keys.ts';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import {
  newUsageBatchId,
  SQLITE_USAGE_BATCH_PRUNE_EVERY,
  SQLITE_USAGE_BATCH_RETENTION_MS,
  USAGE_BATCH_PRUNE_PER_WRITE,
} from '../../src/store/usage.ts';
import {
  type HistoryContractHooks,
  historyContract,
  type SqlInsert,
  version5Inserts,
} from '../contract/history-contract.ts';
import { storeContract } from '../contract/store-contract.ts';
import { tempDir } from '../helpers.ts';

async function openFresh(): Promise<SqliteStore> {
  const store = new SqliteStore(join(tempDir('lrds-store-'), 'lrds.db'));
  await store.migrate();
  return store;
}

/** SQL straight on the file of `store` (another connection), e.g. to install a trigger. */
function execOn(store: SqliteStore, sql: string): void {
  const db = new DatabaseSync(store.path);
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
}

/** A store whose schema stops at `version`, holding what `inserts` wrote, then migrated. */
async function migratedFrom(version: number, inserts: readonly SqlInsert[]): Promise<SqliteStore> {
  const file = join(tempDir('lrds-store-'), 'lrds.db');
  const db = new DatabaseSync(file);
  db.exec(
    'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
  );
  for (const m of SQLITE_MIGRATIONS.filter((m) => m.version <= version)) {
    db.exec(m.sql);
    db.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(
      m.version,
      m.name,
      '2026-01-01T00:00:00Z',
    );
  }
  for (const { sql, params } of inserts) db.prepare(sql).run(...params);
  db.close();
  const store = new SqliteStore(file);
  await store.migrate();
  return store;
}

const hooks: HistoryContractHooks = {
  async reopen(store) {
    const other = new SqliteStore((store as SqliteStore).path);
    await other.migrate();
    return other;
  },
  async refuseSnapshotsAt(store, at) {
    execOn(
      store as SqliteStore,
      `CREATE TRIGGER refuse_snapshots BEFORE INSERT ON market_snapshots WHEN NEW.at = ${at}
       BEGIN SELECT RAISE(ABORT, 'snapshot refused by the test'); END`,
    );
  },
  async migratedFromVersion5(rows) {
    return migratedFrom(5, version5Inserts(rows));
  },
  migratedFrom,
};

storeContract('sqlite', openFresh);
historyContract('sqlite', openFresh, hooks);

test('behavior: two connections to one file see each other (CLI and server)', async () => {
  const file = join(tempDir('lrds-store-'), 'lrds.db');
  const server = new SqliteStore(file);
  const cli = new SqliteStore(file);
  await Promise.all([server.migrate(), cli.migrate()]);
  const before = await server.keysVersion();
  await cli.createAccount({ id: 'a', name: 'n', email: null, createdAt: 'x' });
  await cli.createKey({
    id: 'k',
    accountId: 'a',
    hash: 'h',
    prefix: 'p',
    mode: 'test',
    tier: 'free',
    name: null,
    createdAt: 'x',
    revokedAt: null,
  });
  assert.notEqual(await server.keysVersion(), before);
  assert.equal((await server.findKeyByHash('h'))?.id, 'k');
  await cli.close();
  await server.close();
});

test('behavior: without a backlog, expired usage batch ids are deleted on one write in 8, all of them each time', async () => {
  const file = join(tempDir('lrds-store-'), 'lrds.db');
  const store = new SqliteStore(file);
  await store.migrate();
  const db = new DatabaseSync(file);
  const expired = () => Date.now() - SQLITE_USAGE_BATCH_RETENTION_MS - 60_000;
  const insert = db.prepare('INSERT INTO usage_batches (id, applied_at) VALUES (?, ?)');
  const left = () =>
    (db.prepare("SELECT count(*) AS n FROM usage_batches WHERE id LIKE 'old-%'").get() as { n: number }).n;
  const write = () =>
    store.recordUsage(
      [{ keyId: 'k', day: '2026-11-22', endpoint: 'GET /a', countedMonthly: true }],
      newUsageBatchId(),
    );
  insert.run('old-1', expired());
  insert.run('old-2', expired());
  await write();
  assert.equal(left(), 0, 'the first write prunes');
  insert.run('old-3', expired());
  for (let i = 1; i < SQLITE_USAGE_BATCH_PRUNE_EVERY; i++) {
    await write();
    assert.equal(left(), 1, `write ${i + 1} does not prune`);
  }
  await write();
  assert.equal(left(), 0, `write ${SQLITE_USAGE_BATCH_PRUNE_EVERY + 1} prunes again`);
  db.close();
  await store.close();
});

test('behavior: a backlog of expired usage batch ids (10 minutes) is deleted a few at each write, never at once', async () => {
  const file = join(tempDir('lrds-store-'), 'lrds.db');
  const store = new SqliteStore(file);
  await store.migrate();
  const db = new DatabaseSync(file);
  const now = Date.now();
  const insert = db.prepare('INSERT INTO usage_batches (id, applied_at) VALUES (?, ?)');
  insert.run('old', now - SQLITE_USAGE_BATCH_RETENTION_MS - 60_000);
  // a backlog is deleted a few ids per write, never at once
  for (let i = 0; i < 40; i++)
    insert.run(`backlog-${i}`, now - SQLITE_USAGE_BATCH_RETENTION_MS - 120_000 + i);
  insert.run('recent', now - SQLITE_USAGE_BATCH_RETENTION_MS + 60_000);
  const id = newUsageBatchId();
  const count = () => (db.prepare('SELECT count(*) AS n FROM usage_batches').get() as { n: number }).n;
  await store.recordUsage([{ keyId: 'k', day: '2026-11-22', endpoint: 'GET /a', countedMonthly: true }], id);
  assert.equal(count(), 43 - USAGE_BATCH_PRUNE_PER_WRITE, '32 expired ids deleted, one added');
  await store.recordUsage(
    [{ keyId: 'k', day: '2026-11-22', endpoint: 'GET /a', countedMonthly: true }],
    newUsageBatchId(),
  );
  const ids = db.prepare('SELECT id FROM usage_batches ORDER BY id').all() as { id: string }[];
  assert.equal(ids.length, 3);
  assert.ok(ids.some((r) => r.id === id) && ids.some((r) => r.id === 'recent'));
  db.close();
  await store.close();
});

test('behavior: snapshot figures of fixed precision are stored scaled and read back exactly, any other as it is; rows from before read the same', async () => {
  const at = Date.UTC(2026, 0, 5);
  const snapshot = (marketKey: string, v: Record<'s' | 'b' | 'u' | 'sa' | 'ba', number>) => ({
    marketKey,
    chainId: 1,
    protocol: 'morpho',
    granularity: 'day' as const,
    at,
    supplyUsd: v.s,
    borrowUsd: v.b,
    utilization: v.u,
    supplyApy: v.sa,
    borrowApy: v.ba,
    collateralPriceUsd: 2.0689501,
    loanPriceUsd: null,
    oraclePrice: 1 / 3,
  });
  const rounded = snapshot('m-rounded', {
    s: 24680207.68,
    b: 21047398.07,
    u: 0.85280474,
    sa: 0.07282098,
    ba: 0.1,
  });
  const raw = snapshot('m-raw', { s: 1 / 3, b: 0.1 + 0.2, u: Math.PI / 4, sa: 1e-12, ba: 2 ** 60 + 0.5 });
  // A row written before the encoding (migration 19): its figures as they are, read the same.
  const before = snapshot('m-before', { s: 12.5, b: 0.333, u: 0.02664, sa: 0.01, ba: 0.0123 });
  const store = await migratedFrom(19, [
    {
      sql: "INSERT INTO history_markets (id, market_key, chain_id, protocol) VALUES (1, 'm-before', 1, 'morpho')",
      params: [],
    },
    {
      sql: `INSERT INTO market_snapshots (market_id, granularity, at, supply_usd, borrow_usd, utilization, supply_apy,
              borrow_apy, collateral_price_usd, loan_price_usd, oracle_price) VALUES (1, 'day', ?, 12.5, 0.333, 0.02664, 0.01, 0.0123, 2.0689501, NULL, ?)`,
      params: [at, 1 / 3],
    },
  ]);
  await store.appendMarketSnapshots([rounded, raw]);
  for (const s of [rounded, raw, before])
    assert.deepEqual(await store.latestMarketSnapshot(s.marketKey, 'day'), s);
  const bits = new DatabaseSync(store.path)
    .prepare(
      'SELECT m.market_key AS key, s.scaled FROM market_snapshots s JOIN history_markets m ON m.id = s.market_id ORDER BY 1',
    )
    .all()
    .map((r) => [r.key, r.scaled]);
  assert.deepEqual(bits, [
    ['m-before', 0],
    ['m-raw', 0],
    ['m-rounded', 31],
  ]);
  const [total] = await store.dailyMarketTotals(at, at + 1);
  assert.equal(total?.supplyUsd, 12.5 + 24680207.68 + 1 / 3);
  assert.equal(total?.borrowUsd, 0.333 + 21047398.07 + (0.1 + 0.2));
  await store.close();
});

test('behavior: a research report is stored deflated and read back as written; a report stored as text before reads the same', async () => {
  const store = await openFresh();
  const body = JSON.stringify({
    title: 'Aave on Ethereum, 2026-01-05',
    lines: Array.from({ length: 200 }, (_, i) => `line ${i}`),
  });
  await store.appendResearchReports([
    { id: 'r-new', day: Date.UTC(2026, 0, 5), protocol: 'aave', generatedAt: 1, body },
  ]);
  execOn(
    store,
    `INSERT INTO research_reports (id, day, protocol, generated_at, body) VALUES ('r-old', ${Date.UTC(2026, 0, 4)}, 'aave', 1, 'plain text')`,
  );
  assert.equal((await store.researchReport('r-new'))?.body, body);
  assert.equal((await store.researchReport('r-old'))?.body, 'plain text');
  const stored = new DatabaseSync(store.path)
    .prepare("SELECT typeof(body) AS t, length(body) AS n FROM research_reports WHERE id = 'r-new'")
    .get();
  assert.equal(stored?.t, 'blob');
  assert.ok(Number(stored?.n) < body.length / 3, `${stored?.n} bytes stored for ${body.length}`);
  const page = await store.researchReports({ protocol: 'aave', fromMs: 0, toMs: Date.UTC(2027, 0, 1) }, 10);
  assert.deepEqual(
    page.map((r) => r.body),
    [body, 'plain text'],
  );
  await store.close();
});

test('behavior: compact() copies the write-ahead log into the file and truncates it', async () => {
  const store = await openFresh();
  const wal = `${store.path}-wal`;
  // Random hex: deflated, each report still takes about 110 KB.
  const reports = Array.from({ length: 60 }, (_, i) => ({
    id: `r-${i}`,
    day: Date.UTC(2026, 0, 1) + i * 86_400_000,
    protocol: 'aave',
    generatedAt: 1,
    body: randomBytes(100_000).toString('hex'),
  }));
  await store.appendResearchReports(reports);
  assert.ok(statSync(wal).size > 4_000_000, `the log holds the write (${statSync(wal).size} bytes)`);
  await store.compact();
  assert.equal(statSync(wal).size, 0);
  assert.equal((await store.researchReport('r-59'))?.body, reports[59]?.body);
  await store.close();
});

test('behavior: the key cache refresh reads only the keys changed since (a seek of the changed_in index, not a walk of every key)', async () => {
  const store = await openFresh();
  const db = new DatabaseSync(store.path);
  try {
    const plan = db
      .prepare(`EXPLAIN QUERY PLAN ${KEY_CHANGES_SQL}`)
      .all(0)
      .map((r) => String(r.detail));
    assert.ok(
      plan.some((d) => /SEARCH api_keys USING INDEX api_keys_changed/.test(d)),
      plan.join(' | '),
    );
    assert.ok(!plan.some((d) => /SCAN api_keys/.test(d)), plan.join(' | '));
  } finally {
    db.close();
  }
  await store.close();
});

test('behavior: a day read across markets yields to the event loop between parts of 500 markets', async () => {
  const store = await openFresh();
  const D = 86_400_000;
  const T0 = Date.UTC(2026, 0, 1);
  const rows = [];
  for (let i = 0; i < 1234; i++)
    rows.push({
      marketKey: `morpho-1-0x${i.toString(16)}`,
      chainId: 1,
      protocol: 'morpho',
      at: T0,
      granularity: 'day' as const,
      supplyUsd: i,
      borrowUsd: 0,
      utilization: 0,
      supplyApy: 0,
      borrowApy: 0,
      collateralPriceUsd: null,
      loanPriceUsd: null,
      oraclePrice: null,
    });
  await store.appendMarketSnapshots(rows);
  // Turns of the event loop that ran while each read was under way.
  const turnsDuring = async (read: () => Promise<unknown>) => {
    let turns = 0;
    let reading = true;
    const count = () => {
      if (!reading) return;
      turns++;
      setImmediate(count);
    };
    setImmediate(count);
    await read();
    reading = false;
    return turns;
  };
  // Three parts: two turns between them at least.
  assert.ok((await turnsDuring(() => store.daySnapshots(T0))) >= 2);
  assert.ok((await turnsDuring(() => store.dailyMarketTotals(T0, T0 + D))) >= 2);
  await store.close();
});
