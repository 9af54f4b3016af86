import assert from 'node:assert/strict';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, test } from 'node:test';
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { event, eventStoreContract, webhook } from '../contract/event-store-contract.ts';
import { tempDir } from '../helpers.ts';
import { pgSkipReason, TestSchemas } from '../pg-helpers.ts';

eventStoreContract('sqlite', async () => {
  const store = new SqliteStore(join(tempDir('lrds-events-'), 'lrds.db'));
  await store.migrate();
  return store;
});

const pgSkip = await pgSkipReason();
const schemas = new TestSchemas();
after(() => schemas.drop());

eventStoreContract(
  'postgres',
  async () => {
    const { url } = await schemas.create();
    const store = new PostgresStore(url, { poolSize: 4 });
    await store.migrate();
    return store;
  },
  pgSkip ? { skip: pgSkip } : {},
);

test('behavior (embedded): while another connection writes, claims do not wait for it: a held lease stays held, deliveries are claimed on a later pass', async () => {
  const file = join(tempDir('lrds-events-busy-'), 'lrds.db');
  const store = new SqliteStore(file);
  await store.migrate();
  const T0 = Date.parse('2026-11-22T12:00:00Z');
  const ev = store.events;
  const w = webhook();
  await ev.createSubscription(w, null);
  const e = event();
  await ev.appendEvents([e], [{ eventId: e.id, webhookId: w.id }]);
  assert.equal(await ev.claimEventLease('a', T0, 10_000), true);
  // Another connection (the history's background writer) holds the write lock.
  const other = new DatabaseSync(file);
  other.exec('BEGIN IMMEDIATE');
  try {
    const started = performance.now();
    assert.equal(await ev.claimEventLease('a', T0 + 6_000, 10_000), true, 'held, renewal put off');
    assert.equal(await ev.claimEventLease('b', T0 + 6_000, 10_000), false);
    assert.deepEqual(await ev.claimDeliveries('a', T0, 30_000, 10), []);
    assert.ok(performance.now() - started < 1000, 'no wait for the lock');
    // A quarter of the lease left or less: the renewal waits for the lock (here, until the busy
    // timeout gives up: the other connection never lets it go).
    const waited = performance.now();
    await assert.rejects(ev.claimEventLease('a', T0 + 8_000, 10_000), /locked|busy/i);
    assert.ok(performance.now() - waited > 4000, 'the renewal waited for the lock');
  } finally {
    other.exec('ROLLBACK');
    other.close();
  }
  assert.equal((await ev.claimDeliveries('a', T0, 30_000, 10)).length, 1);
  assert.equal(await ev.claimEventLease('a', T0 + 6_000, 10_000), true);
  // Renewed now: another holder is refused until the renewed lease runs out.
  assert.equal(await ev.claimEventLease('b', T0 + 12_000, 10_000), false);
  await store.close();
});
