import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LocalAdmission } from '../src/access/admission.ts';
import { NoKeyEvents, RedisKeyEvents } from '../src/access/key-events.ts';
import { RedisAdmission } from '../src/access/redis-admission.ts';
import { admissionState, createAdmission, createKeyEvents } from '../src/scale.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { silentLogger } from './redis-helpers.ts';

test('default: without REDIS_URL the embedded backends', async () => {
  const store = new SqliteStore(':memory:');
  await store.migrate();
  const adm = createAdmission({ redisUrl: null, store });
  assert.ok(adm instanceof LocalAdmission);
  assert.equal(adm.backend, 'memory');
  assert.equal(admissionState(adm), 'up');
  assert.ok(createKeyEvents(null) instanceof NoKeyEvents);
  await adm.close();
  await store.close();
});

test('default: with REDIS_URL the Redis backends (down until Redis answers)', async () => {
  const store = new SqliteStore(':memory:');
  await store.migrate();
  const adm = createAdmission({ redisUrl: 'redis://127.0.0.1:1', store, instances: 3, logger: silentLogger });
  assert.ok(adm instanceof RedisAdmission);
  assert.equal(adm.backend, 'redis');
  assert.equal(admissionState(adm), 'down');
  const events = createKeyEvents('redis://127.0.0.1:1', silentLogger);
  assert.ok(events instanceof RedisKeyEvents);
  await events.close();
  await adm.close();
  await store.close();
});
