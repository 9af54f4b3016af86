import assert from 'node:assert/strict';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
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
