import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { utcDay } from '../../src/domain/periods.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { createTestApp, GENEROUS_TIERS } from '../helpers.ts';

/** A real store whose reads and writes fail while `down` is set, as an unreachable PostgreSQL would. */
function flakyStore() {
  const store = new SqliteStore(':memory:');
  const state = { down: false };
  for (const method of [
    'recordUsage',
    'findKeyByHash',
    'usageTotals',
    'keysVersion',
    'keyChangesSince',
    'ping',
  ] as const) {
    const real = (store[method] as (...a: unknown[]) => Promise<unknown>).bind(store);
    (store as unknown as Record<string, unknown>)[method] = (...args: unknown[]) =>
      state.down ? Promise.reject(new Error('connection refused')) : real(...args);
  }
  return { store, state };
}

describe('store unreachable', () => {
  test('behavior: known keys keep being served and counted; health says degraded; counts land when it returns', async () => {
    const { store, state } = flakyStore();
    const t = await createTestApp({ store, tiers: GENEROUS_TIERS });
    const key = await t.key('pro');
    assert.equal((await t.get('/api/v1/markets', key)).statusCode, 200);
    state.down = true;
    for (let i = 0; i < 3; i++) assert.equal((await t.get('/api/v1/markets', key)).statusCode, 200);
    const health = (await t.app.inject({ url: '/api/v1/health' })).json();
    assert.equal(health.status, 'degraded');
    assert.equal(health.store.state, 'down');
    const stranger = `lrds_live_${'B'.repeat(32)}`;
    const unknown = await t.get('/api/v1/markets', stranger);
    assert.equal(unknown.statusCode, 503);
    assert.equal(unknown.json().error, 'SERVICE_UNAVAILABLE');
    assert.equal(unknown.headers['retry-after'], '1');
    state.down = false;
    await t.admission.close(); // writes what waited in memory
    const keyId = (await t.store.listKeys())[0]!.id;
    assert.deepEqual(await t.store.usageTotals(keyId, utcDay(t.clock.now())), { dayUsed: 4, monthUsed: 4 });
    await t.close();
  });

  test('error: a key first seen during the outage is refused with 503, never served unlimited', async () => {
    const { store, state } = flakyStore();
    const t = await createTestApp({ store, tiers: GENEROUS_TIERS });
    const key = await t.key('pro');
    await t.keys.verify(key); // in the key cache, but its usage counts were never loaded
    state.down = true;
    const res = await t.get('/api/v1/markets', key);
    assert.equal(res.statusCode, 503);
    assert.equal(res.json().error, 'SERVICE_UNAVAILABLE');
    state.down = false;
    assert.equal((await t.get('/api/v1/markets', key)).statusCode, 200);
    await t.close();
  });
});
