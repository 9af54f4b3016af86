import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { register } from 'prom-client';
import { RedisKeyEvents } from '../src/access/key-events.ts';
import { RedisAdmission } from '../src/access/redis-admission.ts';
import { loadSettings, SettingsError } from '../src/config.ts';
import { portOf, startMetricsServer } from '../src/metrics.ts';
import { PostgresStore } from '../src/store/postgres/postgres-store.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { tier } from './contract/admission-contract.ts';
import { createTestApp } from './helpers.ts';
import { PG_URL, pgSkipReason } from './pg-helpers.ts';
import { deleteKeys, REDIS_URL, redisSkipReason, silentLogger } from './redis-helpers.ts';

const pgSkip = await pgSkipReason();
const redisSkip = await redisSkipReason();

/** The value of one series in the exposition text, 0 when absent. */
function value(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

test('behavior: answers, refusals and key lookups are counted by route pattern, status and tier', async () => {
  const before = await register.metrics();
  // No overload guard: a 503 under a loaded machine would change the counts this test checks.
  const t = await createTestApp({ server: { pressure: false } });
  const key = await t.key('free');
  for (let i = 0; i < 7; i++) await t.get('/api/v1/markets/search?query=usdc', key);
  await t.get('/api/v1/markets/no-such-market-1-x', key);
  await t.close();
  const after = await register.metrics();
  const delta = (series: string) => value(after, series) - value(before, series);
  const search = '{route="/api/v1/markets/search",method="GET",status="200",tier="free"}';
  assert.equal(delta(`lrds_http_requests_total${search}`), 5);
  assert.equal(
    delta('lrds_http_requests_total{route="/api/v1/markets/search",method="GET",status="429",tier="free"}'),
    2,
  );
  // the two searches past the rate, and the market lookup after them
  assert.equal(delta('lrds_admission_refusals_total{reason="RATE_LIMITED",tier="free"}'), 3);
  assert.ok(delta('lrds_key_lookups_total{result="hit"}') >= 7);
  assert.ok(delta('lrds_http_request_duration_seconds_count{route="/api/v1/markets/search"}') >= 7);
  // Route patterns, never raw URLs: no label holds what the client typed.
  assert.ok(!after.includes('no-such-market'));
});

test('behavior: the metrics server answers GET /metrics in the Prometheus text format, nothing else; on 127.0.0.1 by default', async () => {
  const server = await startMetricsServer(0);
  try {
    assert.equal((server.address() as import('node:net').AddressInfo).address, '127.0.0.1');
    const base = `http://127.0.0.1:${portOf(server)}`;
    const res = await fetch(`${base}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    const text = await res.text();
    assert.match(text, /^# HELP lrds_http_requests_total /m);
    assert.match(text, /^nodejs_eventloop_lag_seconds /m);
    assert.equal((await fetch(`${base}/`)).status, 404);
  } finally {
    server.close();
  }
});

test('error: METRICS_PORT must be a port', () => {
  assert.equal(loadSettings({}).metricsPort, null);
  assert.equal(loadSettings({ METRICS_PORT: '9464' }).metricsPort, 9464);
  assert.throws(() => loadSettings({ METRICS_PORT: 'x' }), SettingsError);
});

test('behavior: the metrics server binds 127.0.0.1 whatever HOST is, unless METRICS_HOST says otherwise', () => {
  const open = loadSettings({ HOST: '0.0.0.0', METRICS_PORT: '9464' });
  assert.equal(open.host, '0.0.0.0');
  assert.equal(open.metricsHost, '127.0.0.1');
  assert.equal(open.metricsToken, null);
  const told = loadSettings({ METRICS_PORT: '9464', METRICS_HOST: '0.0.0.0', METRICS_TOKEN: 'a'.repeat(32) });
  assert.equal(told.metricsHost, '0.0.0.0');
  assert.equal(told.metricsToken, 'a'.repeat(32));
});

test('error: METRICS_HOST and METRICS_TOKEN are checked at boot with the rest, every problem in one message', () => {
  assert.throws(
    () =>
      loadSettings({ PORT: 'x', METRICS_PORT: '9464', METRICS_HOST: 'not a host!', METRICS_TOKEN: 'short' }),
    (err: Error) => {
      assert.ok(err instanceof SettingsError);
      assert.match(err.message, /PORT: must be an integer/);
      assert.match(err.message, /METRICS_HOST: must be an IP address or a host name, got 'not a host!'/);
      assert.match(err.message, /METRICS_TOKEN: must be 16 to 256 printable characters/);
      assert.doesNotMatch(err.message, /short/, 'the token is never echoed');
      return true;
    },
  );
  assert.throws(() => loadSettings({ METRICS_TOKEN: 'b'.repeat(20) }), /METRICS_TOKEN need METRICS_PORT/);
  assert.equal(
    loadSettings({ METRICS_PORT: '9464', METRICS_HOST: 'metrics.internal' }).metricsHost,
    'metrics.internal',
  );
});

test('error: with METRICS_TOKEN, GET /metrics without the token or with another is 401; with it, 200', async () => {
  const token = 'm3trics-t0ken-of-the-operator';
  const server = await startMetricsServer(0, { token });
  try {
    const url = `http://127.0.0.1:${portOf(server)}/metrics`;
    const none = await fetch(url);
    assert.equal(none.status, 401);
    assert.equal(none.headers.get('www-authenticate'), 'Bearer');
    assert.doesNotMatch(await none.text(), /lrds_/);
    for (const authorization of [`Bearer ${token}x`, `Bearer ${token.slice(1)}`, `Basic ${token}`, token]) {
      const wrong = await fetch(url, { headers: { authorization } });
      assert.equal(wrong.status, 401, authorization);
      await wrong.arrayBuffer();
    }
    const ok = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(ok.status, 200);
    assert.match(await ok.text(), /^# HELP lrds_http_requests_total /m);
  } finally {
    server.close();
  }
});

/** Deltas of series between two scrapes of this process's metrics. */
async function scrape(): Promise<(series: string) => Promise<number>> {
  const before = await register.metrics();
  return async (series) => value(await register.metrics(), series) - value(before, series);
}

test('behavior: SQLite calls are timed per port method, and failed ones counted', async () => {
  const delta = await scrape();
  const t = await createTestApp();
  const key = await t.key('pro');
  // A key not in the cache yet: looked up in the store.
  assert.equal((await t.get('/api/v1/client/profile', key)).statusCode, 200);
  const store = new SqliteStore(':memory:');
  await store.migrate();
  await store.close();
  await assert.rejects(store.getKey('key_x'));
  await t.close();
  const sqlite = (op: string) => `{backend="sqlite",op="${op}"}`;
  assert.ok((await delta(`lrds_store_round_trip_seconds_count${sqlite('findKeyByHash')}`)) >= 1);
  assert.ok((await delta(`lrds_store_round_trip_seconds_count${sqlite('getAccount')}`)) >= 1);
  assert.ok((await delta(`lrds_store_round_trip_seconds_sum${sqlite('findKeyByHash')}`)) > 0);
  assert.equal(await delta(`lrds_store_errors_total${sqlite('findKeyByHash')}`), 0);
  // The call on a closed store: timed, and counted as an error.
  assert.equal(await delta(`lrds_store_errors_total${sqlite('getKey')}`), 1);
  assert.ok((await delta(`lrds_store_round_trip_seconds_count${sqlite('getKey')}`)) >= 1);
});

test('behavior: PostgreSQL calls are timed per port method, and failed ones counted', async () => {
  const delta = await scrape();
  // Nothing listens on port 1: the call fails (connection refused), as while the database is down.
  const down = new PostgresStore('postgres://postgres@127.0.0.1:1/test', { callTimeoutMs: 1000 });
  try {
    await assert.rejects(down.getKey('key_x'));
    // Down now: the next call fails at once, and counts too.
    await assert.rejects(down.getKey('key_x'));
  } finally {
    await down.close();
  }
  const pg = (op: string) => `{backend="postgres",op="${op}"}`;
  assert.equal(await delta(`lrds_store_errors_total${pg('getKey')}`), 2);
  assert.equal(await delta(`lrds_store_round_trip_seconds_count${pg('getKey')}`), 2);
});

test('behavior: PostgreSQL round trips that succeed are timed', { skip: pgSkip ?? false }, async () => {
  const delta = await scrape();
  const store = new PostgresStore(PG_URL, { poolSize: 2 });
  try {
    assert.equal(await store.ping(), true);
  } finally {
    await store.close();
  }
  assert.equal(await delta('lrds_store_round_trip_seconds_count{backend="postgres",op="ping"}'), 1);
  assert.equal(await delta('lrds_store_errors_total{backend="postgres",op="ping"}'), 0);
});

test('behavior: Redis commands are timed per operation, and failed ones counted', async () => {
  const delta = await scrape();
  // Nothing listens on port 1: the publish fails (it is logged, never thrown).
  const events = new RedisKeyEvents('redis://127.0.0.1:1', { logger: silentLogger });
  await events.publish(['h']);
  await events.close();
  assert.equal(await delta('lrds_redis_errors_total{op="publish"}'), 1);
  assert.equal(await delta('lrds_redis_round_trip_seconds_count{op="publish"}'), 1);
});

test('behavior: Redis admissions are timed', { skip: redisSkip ?? false }, async () => {
  const delta = await scrape();
  const prefix = `lrds-test:${randomUUID()}:`;
  const store = new SqliteStore(':memory:');
  await store.migrate();
  const adm = new RedisAdmission({
    url: REDIS_URL,
    store,
    prefix,
    logger: silentLogger,
    commandTimeoutMs: 1000,
  });
  try {
    assert.ok(await adm.ready(3000));
    const req = {
      keyId: 'key_m',
      tier: tier(5, null, null),
      endpoint: 'GET /api/v1/markets',
      counted: true,
      nowMs: 0,
    };
    for (let i = 0; i < 3; i++) assert.ok((await adm.admit(req)).ok);
  } finally {
    await adm.close();
    await store.close();
    await deleteKeys(REDIS_URL, prefix);
  }
  assert.ok((await delta('lrds_redis_round_trip_seconds_count{op="admit"}')) >= 3);
  assert.equal(await delta('lrds_redis_errors_total{op="admit"}'), 0);
});
