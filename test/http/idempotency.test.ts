import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { LocalAdmission } from '../../src/access/admission.ts';
import { IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_TTL_MS, Idempotency } from '../../src/access/idempotency.ts';
import { KeyService } from '../../src/access/keys.ts';
import { RatingsJob } from '../../src/data/ratings-job.ts';
import { buildApp } from '../../src/http/app.ts';
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/types.ts';
import { ManualClock } from '../clock.ts';
import {
  createTestApp,
  GENEROUS_TIERS,
  makeMarket,
  makePosition,
  modelOf,
  QUIET,
  type TestApp,
  tempDir,
  testEventsApi,
  tiersWith,
} from '../helpers.ts';
import { pgSkipReason, TestSchemas } from '../pg-helpers.ts';

const URL_ = '/api/v1/client/api-keys';

/** POST /client/api-keys with `key`, `body`, and an Idempotency-Key when given. */
function post(app: FastifyInstance, key: string, body: object, idempotencyKey?: string) {
  return app.inject({
    method: 'POST',
    url: URL_,
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
    },
    payload: body,
  });
}

async function keysOf(t: TestApp, key: string): Promise<number> {
  return (await t.get(URL_, key)).json().data.length;
}

describe('Idempotency-Key on POST /client/api-keys', () => {
  test('behavior: a retry with the same key and body gets the first answer, flagged, and creates one key only', async () => {
    const t = await createTestApp({ tiers: GENEROUS_TIERS });
    const owner = await t.key('pro');
    const idem = randomUUID();
    const first = await post(t.app, owner, { name: 'bot', mode: 'live' }, idem);
    assert.equal(first.statusCode, 201);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    // The same body with its members in another order is the same request.
    const again = await post(t.app, owner, { mode: 'live', name: 'bot' }, idem);
    assert.equal(again.statusCode, 201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(again.json(), first.json());
    assert.match(again.json().data.key, /^lrds_live_[0-9A-Za-z]{32}$/);
    // Another key of the account, same mode: the account's request too.
    const sibling = await t.key('pro');
    const fromSibling = await post(t.app, sibling, { name: 'bot', mode: 'live' }, idem);
    assert.equal(fromSibling.headers['idempotent-replayed'], 'true');
    assert.equal(fromSibling.json().data.key, first.json().data.key);
    // the owner, its sibling and the one key created
    assert.equal(await keysOf(t, owner), 3);
    // The replayed key is the one that works.
    assert.equal((await t.get('/api/v1/markets', again.json().data.key)).statusCode, 200);
    await t.close();
  });

  test('error: the same key with another body is 422 IDEMPOTENCY_KEY_REUSED, and creates nothing', async () => {
    const t = await createTestApp({ tiers: GENEROUS_TIERS });
    const owner = await t.key('pro');
    const idem = randomUUID();
    assert.equal((await post(t.app, owner, { name: 'bot' }, idem)).statusCode, 201);
    for (const body of [{ name: 'other' }, {}, { name: 'bot', mode: 'test' }]) {
      const res = await post(t.app, owner, body, idem);
      assert.equal(res.statusCode, 422, JSON.stringify(body));
      const { message, ...rest } = res.json();
      assert.deepEqual(rest, { error: 'IDEMPOTENCY_KEY_REUSED' });
      assert.match(message, /another request/);
    }
    assert.equal(await keysOf(t, owner), 2);
    await t.close();
  });

  test('behavior: while the first request is under way the key is 409 IDEMPOTENCY_KEY_IN_USE; a request that died is taken over after its lease', async () => {
    const t = await createTestApp({ tiers: GENEROUS_TIERS });
    const owner = await t.key('pro');
    const account = (await t.store.findAccountByName('acme'))!;
    const idem = randomUUID();
    // Another process claimed the key for the same request, and has not answered yet.
    const other = await new Idempotency(t.store, t.clock).start(
      { accountId: account.id, mode: 'live' },
      idem,
      {
        method: 'POST',
        route: URL_,
        body: { name: 'bot' },
      },
    );
    assert.equal(other.ok, true);
    const busy = await post(t.app, owner, { name: 'bot' }, idem);
    assert.equal(busy.statusCode, 409);
    assert.equal(busy.json().error, 'IDEMPOTENCY_KEY_IN_USE');
    assert.equal(busy.headers['retry-after'], String(IDEMPOTENCY_LEASE_MS / 1000));
    assert.equal(await keysOf(t, owner), 1);
    // That process died: at the end of its lease the retry does the work.
    t.clock.advance(IDEMPOTENCY_LEASE_MS);
    const taken = await post(t.app, owner, { name: 'bot' }, idem);
    assert.equal(taken.statusCode, 201);
    assert.equal(taken.headers['idempotent-replayed'], undefined);
    // and its answer is the one replayed from then on
    assert.equal((await post(t.app, owner, { name: 'bot' }, idem)).json().data.key, taken.json().data.key);
    // The dead process's work, had it finished late, would have created nothing.
    if (!other.ok) throw new Error('claimed above');
    assert.deepEqual(
      await t.store.createKeyWithin(
        { ...(await t.store.getKey(taken.json().data.id))!, id: 'key_late', hash: 'late' },
        { maxActive: null, creations: null },
        other.ticket.answer(201, {}),
      ),
      { ok: false, reason: 'CLAIM_LOST' },
    );
    assert.equal(await keysOf(t, owner), 2);
    await t.close();
  });

  test('behavior: a request refused keeps nothing: the retry with the same key runs afresh', async () => {
    const tiers = tiersWith((all) => {
      for (const tier of Object.values(all)) tier.ratePerSecond = 1_000_000;
      all.pro!.maxKeysPerAccount = 2;
    });
    const t = await createTestApp({ tiers });
    const owner = await t.key('pro');
    const first = await post(t.app, owner, {}, randomUUID());
    assert.equal(first.statusCode, 201);
    const idem = randomUUID();
    const full = await post(t.app, owner, {}, idem);
    assert.equal(full.statusCode, 403);
    assert.equal(full.json().error, 'KEY_LIMIT_REACHED');
    const revoked = await t.app.inject({
      method: 'DELETE',
      url: `${URL_}/${first.json().data.id}`,
      headers: { authorization: `Bearer ${owner}` },
    });
    assert.equal(revoked.statusCode, 200);
    const retried = await post(t.app, owner, {}, idem);
    assert.equal(retried.statusCode, 201);
    assert.equal(retried.headers['idempotent-replayed'], undefined);
    await t.close();
  });

  test('behavior: keys are scoped by account and mode: the same key elsewhere is another request', async () => {
    const t = await createTestApp({ tiers: GENEROUS_TIERS });
    const live = await t.key('pro', 'live', 'acme');
    const testKey = await t.key('pro', 'test', 'acme');
    const elsewhere = await t.key('pro', 'live', 'globex');
    const idem = 'order-42';
    const created = await Promise.all([live, testKey, elsewhere].map((k) => post(t.app, k, {}, idem)));
    for (const res of created) {
      assert.equal(res.statusCode, 201);
      assert.equal(res.headers['idempotent-replayed'], undefined);
    }
    assert.match(created[1]!.json().data.key, /^lrds_test_/);
    assert.equal(new Set(created.map((r) => r.json().data.key)).size, 3);
    await t.close();
  });

  test('behavior: after 24 hours the key is forgotten, and makes a new key', async () => {
    const t = await createTestApp({ tiers: GENEROUS_TIERS });
    const owner = await t.key('pro');
    const idem = randomUUID();
    const first = await post(t.app, owner, {}, idem);
    t.clock.advance(IDEMPOTENCY_TTL_MS - 1);
    assert.equal((await post(t.app, owner, {}, idem)).headers['idempotent-replayed'], 'true');
    t.clock.advance(1);
    const later = await post(t.app, owner, {}, idem);
    assert.equal(later.statusCode, 201);
    assert.equal(later.headers['idempotent-replayed'], undefined);
    assert.notEqual(later.json().data.key, first.json().data.key);
    await t.close();
  });

  test('error: a malformed Idempotency-Key is 400 INVALID_PARAMETER, and creates nothing', async () => {
    const t = await createTestApp({ tiers: GENEROUS_TIERS });
    const owner = await t.key('pro');
    for (const bad of ['', 'has space', 'x'.repeat(256), 'clé']) {
      const res = await post(t.app, owner, {}, bad);
      assert.equal(res.statusCode, 400, JSON.stringify(bad));
      assert.equal(res.json().error, 'INVALID_PARAMETER');
      assert.equal(res.json().details[0].parameter, 'idempotency-key');
    }
    assert.equal((await post(t.app, owner, {}, 'x'.repeat(255))).statusCode, 201);
    assert.equal(await keysOf(t, owner), 2);
    await t.close();
  });

  test('behavior: the database holds neither the new key nor the Idempotency-Key in the clear', async () => {
    const dir = tempDir('lrds-idem-');
    const t = await createTestApp({ tiers: GENEROUS_TIERS, store: new SqliteStore(join(dir, 'lrds.db')) });
    const owner = await t.key('pro');
    const idem = `idem-${randomUUID()}`;
    const created = (await post(t.app, owner, {}, idem)).json().data.key as string;
    assert.equal((await post(t.app, owner, {}, idem)).json().data.key, created);
    const bytes = readdirSync(dir).map((f) => readFileSync(join(dir, f)));
    assert.ok(bytes.some((b) => b.length > 0));
    for (const secret of [created, created.slice(10), idem]) {
      assert.ok(
        !bytes.some((b) => b.includes(secret)),
        `${secret.slice(0, 14)}… found in the database files`,
      );
    }
    await t.close();
  });
});

const pgSkip = await pgSkipReason();

describe('Idempotency-Key across instances on PostgreSQL', { skip: pgSkip ?? false }, () => {
  const schemas = new TestSchemas();
  after(() => schemas.drop());

  /** An app over `store`, as one process of several would run it. */
  async function instance(store: Store, clock: ManualClock) {
    const keys = new KeyService(store, { clock });
    const m = makeMarket();
    const model = modelOf([m], [makePosition(m)], clock);
    const app = await buildApp({
      store,
      tiers: GENEROUS_TIERS,
      keys,
      admission: new LocalAdmission(store),
      idempotency: new Idempotency(store, clock),
      data: { get: () => model },
      history: store,
      ratings: new RatingsJob({ models: () => [model], store, clock, writes: false }),
      events: testEventsApi(store, clock),
      clock,
      server: QUIET,
    });
    await app.ready();
    return { app, keys };
  }

  test('behavior: a retry on another instance gets the first answer; concurrent requests on both create one key', async () => {
    const { url } = await schemas.create();
    const clock = new ManualClock();
    const stores = [new PostgresStore(url, { poolSize: 4 }), new PostgresStore(url, { poolSize: 4 })];
    await stores[0]!.migrate();
    const [a, b] = [await instance(stores[0]!, clock), await instance(stores[1]!, clock)];
    try {
      const account = await a.keys.ensureAccount('acme');
      const owner = (await a.keys.create({ accountId: account.id, tier: 'pro', mode: 'live' })).key;
      const count = async () => (await stores[0]!.listKeys(account.id)).length;

      const idem = randomUUID();
      const first = await post(a.app, owner, { name: 'bot' }, idem);
      assert.equal(first.statusCode, 201);
      const retried = await post(b.app, owner, { name: 'bot' }, idem);
      assert.equal(retried.statusCode, 201);
      assert.equal(retried.headers['idempotent-replayed'], 'true');
      assert.deepEqual(retried.json(), first.json());
      assert.equal((await post(b.app, owner, { name: 'other' }, idem)).statusCode, 422);
      assert.equal(await count(), 2);

      // The same request sent 8 times at once, half to each instance.
      const burst = randomUUID();
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) => post((i % 2 ? a : b).app, owner, {}, burst)),
      );
      const statuses = answers.map((r) => r.statusCode);
      assert.ok(
        statuses.every((s) => s === 201 || s === 409),
        statuses.join(','),
      );
      const fresh = answers.filter(
        (r) => r.statusCode === 201 && r.headers['idempotent-replayed'] === undefined,
      );
      assert.equal(fresh.length, 1, statuses.join(','));
      const createdKey = fresh[0]!.json().data.key;
      for (const r of answers.filter((x) => x.statusCode === 201))
        assert.equal(r.json().data.key, createdKey);
      for (const r of answers.filter((x) => x.statusCode === 409)) {
        assert.equal(r.json().error, 'IDEMPOTENCY_KEY_IN_USE');
        assert.ok(Number(r.headers['retry-after']) >= 1);
      }
      assert.equal(await count(), 3);
      // Retried after the burst, on either instance: the one key.
      for (const x of [a, b]) assert.equal((await post(x.app, owner, {}, burst)).json().data.key, createdKey);
    } finally {
      await a.app.close();
      await b.app.close();
      for (const s of stores) await s.close();
    }
  });
});
