import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import postgres from 'postgres';
import type { KeyRecord } from '../../src/domain/records/keys.ts';
import { isPostgresResourceError } from '../../src/store/postgres/connection.ts';
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { StoreUnavailableError } from '../../src/store/unavailable.ts';
import { StoreWriteError, WRITES_CLEAR_AFTER_MS, type WriteProblem } from '../../src/store/write-health.ts';
import { ManualClock } from '../clock.ts';
import { PG_URL, pgSkipReason, TestSchemas } from '../pg-helpers.ts';

const skip = await pgSkipReason();
const schemas = new TestSchemas();
after(() => schemas.drop());

const ACCOUNT = { id: 'acct_1', name: 'acme', email: null, createdAt: '2026-11-22T00:00:00.000Z' };
const key = (id: string): KeyRecord => ({
  id,
  accountId: 'acct_1',
  hash: `hash_${id}`,
  prefix: 'lrds_live_AbCd',
  mode: 'live',
  tier: 'pro',
  name: null,
  createdAt: '2026-11-22T00:00:00.000Z',
  revokedAt: null,
});

describe('isPostgresResourceError', () => {
  const pgError = (code: string) =>
    new postgres.PostgresError({ code, message: 'refused', severity: 'ERROR' } as never);

  test('behavior: disk_full and out_of_memory are the server lacking room, not a bug', () => {
    assert.equal(isPostgresResourceError(pgError('53100')), true);
    assert.equal(isPostgresResourceError(pgError('53200')), true);
  });

  test('behavior: too many connections, a constraint or a socket error are not', () => {
    // 53300 is a connection refused: the store is unavailable (503, probed), not degraded.
    assert.equal(isPostgresResourceError(pgError('53300')), false);
    assert.equal(isPostgresResourceError(pgError('23505')), false);
    assert.equal(isPostgresResourceError(Object.assign(new Error('reset'), { code: 'ECONNRESET' })), false);
    assert.equal(isPostgresResourceError(null), false);
  });
});

// PostgreSQL refusing writes as it does on a full disk (or out of memory): a trigger raising the
// SQLSTATE on every write of the keys and the counters, which the store's key changes and its
// probe write touch. Reads go on.
for (const [state, name] of [
  ['53100', 'disk_full'],
  ['53200', 'out_of_memory'],
] as const) {
  describe(`PostgreSQL refusing writes (${state} ${name})`, { skip }, () => {
    test('behavior: writes fail as StoreWriteError, told once; reads go on; a probe clears it once there is room', async () => {
      const { schema, url } = await schemas.create();
      const clock = new ManualClock();
      const store = new PostgresStore(url, { clock });
      const admin = postgres(PG_URL, { max: 1, onnotice: () => {} });
      try {
        await store.migrate();
        await store.createAccount(ACCOUNT);
        await store.createKey(key('key_1'));
        const heard: (WriteProblem | null)[] = [];
        store.watchWrites((p) => heard.push(p && { ...p }));

        await admin.unsafe(`
          CREATE FUNCTION ${schema}.refuse() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = '${name}'; END $$;
          CREATE TRIGGER refuse BEFORE INSERT OR UPDATE ON ${schema}.api_keys FOR EACH ROW EXECUTE FUNCTION ${schema}.refuse();
          CREATE TRIGGER refuse BEFORE INSERT OR UPDATE ON ${schema}.counters FOR EACH ROW EXECUTE FUNCTION ${schema}.refuse();`);

        const refused = await store.createKey(key('key_2')).catch((e: unknown) => e);
        assert.ok(refused instanceof StoreWriteError, String(refused));
        assert.match(refused.message, new RegExp(`No space left on device \\(${state}\\)`));
        const since = clock.now();
        clock.advance(1000);
        await assert.rejects(store.createKey(key('key_3')), StoreWriteError);
        // Told once, with PostgreSQL's error; the store is degraded, not down.
        assert.equal(heard.length, 1);
        assert.equal(heard[0]?.since, since);
        assert.match(heard[0]?.error ?? '', /No space left on device/);
        assert.equal(store.state(), 'up');
        assert.equal((await store.getKey('key_1'))?.id, 'key_1');
        // The probe write is refused too: still failing.
        assert.equal(await store.ping(), true);
        assert.notEqual(store.writeProblem(), null);

        await admin.unsafe(`
          DROP TRIGGER refuse ON ${schema}.api_keys;
          DROP TRIGGER refuse ON ${schema}.counters;`);
        // Room again, but the last refusal is recent: the state does not flap.
        clock.advance(WRITES_CLEAR_AFTER_MS / 2);
        assert.equal(await store.ping(), true);
        assert.notEqual(store.writeProblem(), null);
        clock.advance(WRITES_CLEAR_AFTER_MS);
        assert.equal(await store.ping(), true);
        assert.equal(store.writeProblem(), null);
        assert.equal(heard.length, 2);
        assert.equal(heard[1], null);
        await store.createKey(key('key_4'));
      } finally {
        await admin.end({ timeout: 5 });
        await store.close();
      }
    });
  });
}

test('behavior: an unreachable PostgreSQL is still unavailable, not a write problem', { skip }, async () => {
  const store = new PostgresStore('postgres://postgres@127.0.0.1:1/test', { callTimeoutMs: 500 });
  try {
    await assert.rejects(store.getAccount('acct_1'), StoreUnavailableError);
    assert.equal(store.writeProblem(), null);
  } finally {
    await store.close();
  }
});
