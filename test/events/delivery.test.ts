import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { attemptDelivery } from '../../src/events/attempt.ts';
import { FIRST_RETRY_MS, nextAttemptAt, RETRY_WINDOW_MS } from '../../src/events/backoff.ts';
import { Deliverer } from '../../src/events/deliverer.ts';
import { SecretBox } from '../../src/events/secrets.ts';
import { signatureHeader, verifySignature } from '../../src/events/signature.ts';
import { checkWebhookUrl, isBlockedAddress, type Resolver } from '../../src/events/ssrf.ts';
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/types.ts';
import { ManualClock } from '../clock.ts';
import { event, webhook } from '../contract/event-store-contract.ts';
import { tempDir } from '../helpers.ts';
import { pgSkipReason, TestSchemas } from '../pg-helpers.ts';

/** A receiver on localhost: answers with `answer(req)` and records what it got. */
async function receiver(
  answer: (req: IncomingMessage, body: string) => number | 'hang' | 'flood' = () => 200,
) {
  const got: { headers: IncomingMessage['headers']; body: string; status: number | string }[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      const a = answer(req, body);
      got.push({ headers: req.headers, body, status: a });
      if (a === 'hang') return;
      if (a === 'flood') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const chunk = Buffer.alloc(64 * 1024, 97);
        const pump = () => {
          while (res.write(chunk)) {}
          res.once('drain', pump);
        };
        pump();
        return;
      }
      res.writeHead(a, a >= 300 && a < 400 ? { location: 'http://127.0.0.1:1/' } : {});
      res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    got,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const box = new SecretBox(randomBytes(32));
const T0 = Date.parse('2026-11-22T12:00:00Z');

describe('signatures', () => {
  test('known answer: HMAC-SHA256 of "<t>.<body>", hex', () => {
    // printf '1700000000.{"a":1}' | openssl dgst -sha256 -hmac whsec_test
    assert.equal(
      signatureHeader('whsec_test', 1_700_000_000, '{"a":1}'),
      't=1700000000,v1=38877139021993b830af32feea6e18a8da83eb2f6e49ee50bd9e4cf4ca4d3789',
    );
    const h = signatureHeader('whsec_test', 1_700_000_000, '{"a":1}');
    assert.deepEqual(verifySignature('{"a":1}', h, 'whsec_test', 1_700_000_100), {
      ok: true,
      timestamp: 1_700_000_000,
    });
    assert.deepEqual(verifySignature('{"a":2}', h, 'whsec_test', 1_700_000_100), {
      ok: false,
      reason: 'MISMATCH',
    });
    assert.deepEqual(verifySignature('{"a":1}', h, 'whsec_other', 1_700_000_100), {
      ok: false,
      reason: 'MISMATCH',
    });
    assert.deepEqual(verifySignature('{"a":1}', h, 'whsec_test', 1_700_000_301), {
      ok: false,
      reason: 'TOO_OLD',
    });
    assert.deepEqual(verifySignature('{"a":1}', 'v1=abc', 'whsec_test', 1_700_000_000), {
      ok: false,
      reason: 'MALFORMED',
    });
  });
});

describe('backoff', () => {
  test('10 s, doubling, at most an hour, failed past 24 hours from the event', () => {
    assert.equal(nextAttemptAt(1, T0, T0), T0 + FIRST_RETRY_MS);
    assert.equal(nextAttemptAt(2, T0, T0), T0 + 2 * FIRST_RETRY_MS);
    assert.equal(nextAttemptAt(5, T0, T0), T0 + 16 * FIRST_RETRY_MS);
    assert.equal(nextAttemptAt(30, T0, T0), T0 + 3600_000);
    assert.equal(nextAttemptAt(30, T0 + RETRY_WINDOW_MS - 3600_000, T0), T0 + RETRY_WINDOW_MS);
    assert.equal(nextAttemptAt(30, T0 + RETRY_WINDOW_MS - 3599_999, T0), null);
  });
});

describe('SSRF checks', () => {
  const fakeDns: Resolver = async (host) => {
    const table: Record<string, { address: string; family: number }[]> = {
      'intranet.example': [{ address: '10.1.2.3', family: 4 }],
      'mixed.example': [
        { address: '93.184.216.34', family: 4 },
        { address: 'fd00::1', family: 6 },
      ],
      'public.example': [{ address: '93.184.216.34', family: 4 }],
    };
    const r = table[host];
    if (!r) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return r;
  };
  for (const url of [
    'https://127.0.0.1/',
    'https://127.8.9.10/',
    'https://10.0.0.1/',
    'https://172.16.0.1/',
    'https://172.31.255.254/',
    'https://192.168.1.1/',
    'https://169.254.169.254/latest/meta-data',
    'https://[::1]/',
    'https://[fc00::1]/',
    'https://[fd12:3456::1]/',
    'https://[fe80::1]/',
    'https://[::ffff:127.0.0.1]/',
    'https://[::ffff:a9fe:a9fe]/',
    'https://0.0.0.0/',
    'https://localhost/',
    'https://intranet.example/',
    'https://mixed.example/',
  ])
    test(`refused without the development switch: ${url}`, async () => {
      const r = await checkWebhookUrl(url, {
        allowPrivate: false,
        ...(url.includes('.example') ? { resolve: fakeDns } : {}),
      });
      assert.equal(r.ok, false, JSON.stringify(r));
    });
  test('public addresses and names pass; http, credentials and bad URLs do not', async () => {
    assert.equal(
      (await checkWebhookUrl('https://public.example/x', { allowPrivate: false, resolve: fakeDns })).ok,
      true,
    );
    assert.equal((await checkWebhookUrl('https://172.32.0.1/', { allowPrivate: false })).ok, true);
    assert.equal((await checkWebhookUrl('https://[2606:4700::1111]/', { allowPrivate: false })).ok, true);
    assert.equal(
      (await checkWebhookUrl('http://public.example/', { allowPrivate: false, resolve: fakeDns })).ok,
      false,
    );
    assert.equal(
      (await checkWebhookUrl('https://u:p@public.example/', { allowPrivate: false, resolve: fakeDns })).ok,
      false,
    );
    assert.equal((await checkWebhookUrl('not a url', { allowPrivate: false })).ok, false);
    assert.equal((await checkWebhookUrl('ftp://public.example/', { allowPrivate: true })).ok, false);
    assert.equal(
      (await checkWebhookUrl('https://nowhere.example/', { allowPrivate: false, resolve: fakeDns })).ok,
      false,
    );
  });
  test('the development switch allows http and private addresses', async () => {
    assert.equal((await checkWebhookUrl('http://127.0.0.1:9/', { allowPrivate: true })).ok, true);
    assert.equal((await checkWebhookUrl('http://localhost:9/', { allowPrivate: true })).ok, true);
  });
  test('isBlockedAddress: ranges edges', () => {
    assert.equal(isBlockedAddress('172.15.255.255'), false);
    assert.equal(isBlockedAddress('172.16.0.0'), true);
    assert.equal(isBlockedAddress('169.253.255.255'), false);
    assert.equal(isBlockedAddress('fbff::1'), false);
    assert.equal(isBlockedAddress('fdff:ffff::1'), true);
    assert.equal(isBlockedAddress('fe00::1'), false, 'fc00::/7 ends at fdff, fe80::/10 starts at fe80');
    assert.equal(isBlockedAddress('febf::1'), true);
  });
  test('a delivery to a name resolving to a private address is refused at attempt time', async () => {
    const r = await attemptDelivery('https://intranet.example/hook', 's', 'evt_x', '{}', {
      allowPrivate: false,
      resolve: fakeDns,
      nowSeconds: 0,
    });
    assert.equal(r.ok, false);
    assert.match(r.error!, /resolves to 10\.1\.2\.3/);
  });
});

describe('attempts', () => {
  test('signed: the receiver verifies the signature and gets the event id', async () => {
    const r = await receiver();
    try {
      const body = '{"id":"evt_1","type":"ping","createdAt":"2026-11-22T12:00:00.000Z","data":{}}';
      const res = await attemptDelivery(r.url, 'whsec_abc', 'evt_1', body, {
        allowPrivate: true,
        nowSeconds: T0 / 1000,
      });
      assert.deepEqual(res, { ok: true, httpStatus: 200, error: null });
      const [got] = r.got;
      assert.equal(got!.body, body);
      assert.equal(got!.headers['lrds-event-id'], 'evt_1');
      assert.equal(got!.headers['content-type'], 'application/json');
      assert.deepEqual(
        verifySignature(got!.body, got!.headers['lrds-signature'] as string, 'whsec_abc', T0 / 1000 + 5),
        { ok: true, timestamp: T0 / 1000 },
      );
    } finally {
      await r.close();
    }
  });
  test('redirects are not followed', async () => {
    const r = await receiver(() => 302);
    try {
      const res = await attemptDelivery(r.url, 's', 'e', '{}', { allowPrivate: true, nowSeconds: 0 });
      assert.equal(res.ok, false);
      assert.equal(res.httpStatus, 302);
      assert.equal(r.got.length, 1);
    } finally {
      await r.close();
    }
  });
  test('a receiver that never answers is cut at the timeout; one sending a huge body holds nothing', async () => {
    const slow = await receiver(() => 'hang');
    const flood = await receiver(() => 'flood');
    try {
      const t0 = performance.now();
      const res = await attemptDelivery(slow.url, 's', 'e', '{}', {
        allowPrivate: true,
        nowSeconds: 0,
        timeoutMs: 300,
      });
      assert.equal(res.ok, false);
      assert.match(res.error!, /no answer within 0.3 s/);
      assert.ok(performance.now() - t0 < 5000);
      const big = await attemptDelivery(flood.url, 's', 'e', '{}', {
        allowPrivate: true,
        nowSeconds: 0,
        timeoutMs: 5000,
      });
      assert.deepEqual(big, { ok: true, httpStatus: 200, error: null });
    } finally {
      await slow.close();
      await flood.close();
    }
  });
  test('without the switch, a loopback receiver is refused before any connection', async () => {
    const r = await receiver();
    try {
      const res = await attemptDelivery(r.url, 's', 'e', '{}', { allowPrivate: false, nowSeconds: 0 });
      assert.equal(res.ok, false);
      assert.match(res.error!, /URL refused/);
      assert.equal(r.got.length, 0);
    } finally {
      await r.close();
    }
  });
});

/** Deliverers over one store: runs passes (moving the clock) until nothing is pending or `rounds` ran out. */
async function drain(store: Store, deliverers: Deliverer[], clock: ManualClock, rounds = 20) {
  for (let i = 0; i < rounds; i++) {
    await Promise.all(deliverers.map((d) => d.pass()));
    await Promise.all(deliverers.map((d) => d.idle()));
    clock.advance(FIRST_RETRY_MS * 2 ** Math.min(i, 8));
  }
  void store;
}

describe('Deliverer', () => {
  test('a burst larger than the concurrency: each finished attempt claims the next, no pass waited for', async () => {
    const store = new SqliteStore(join(tempDir('lrds-deliver-'), 'lrds.db'));
    await store.migrate();
    try {
      const clock = new ManualClock(T0);
      const w = webhook({ url: 'http://127.0.0.1:1/hook', sealedSecret: box.seal('whsec_burst') });
      await store.events.createSubscription(w, null);
      const events = Array.from({ length: 10 }, () => event());
      await store.events.appendEvents(
        events,
        events.map((e) => ({ eventId: e.id, webhookId: w.id })),
      );
      let atOnce = 0;
      let most = 0;
      const attempted: string[] = [];
      const d = new Deliverer({
        store: store.events,
        secrets: box,
        clock,
        holder: 'a',
        allowPrivate: true,
        concurrency: 3,
        attempt: async (_url, _secret, eventId) => {
          atOnce++;
          most = Math.max(most, atOnce);
          await new Promise((r) => setImmediate(r));
          attempted.push(eventId);
          atOnce--;
          return { ok: true, httpStatus: 204, error: null };
        },
      });
      assert.equal(await d.pass(), 3, 'one pass claims up to the concurrency');
      await d.idle();
      assert.deepEqual(
        [...attempted].sort(),
        events.map((e) => e.id).sort(),
        'the rest claimed as slots freed',
      );
      assert.ok(most <= 3, `${most} attempts at once`);
      const listed = await store.events.listDeliveries(w.id, 20);
      assert.ok(listed.every((x) => x.status === 'delivered' && x.attempts === 1));
      // Paused (a stopping loop): a finished attempt claims nothing more.
      const more = Array.from({ length: 5 }, () => event());
      await store.events.appendEvents(
        more,
        more.map((e) => ({ eventId: e.id, webhookId: w.id })),
      );
      d.pause();
      attempted.length = 0;
      assert.equal(await d.pass(), 3);
      await d.idle();
      assert.equal(attempted.length, 3);
    } finally {
      await store.close();
    }
  });

  test('a receiver answering 500, then recovering, gets every event, each delivery logged', async () => {
    let failing = true;
    const r = await receiver(() => (failing ? 500 : 204));
    const store = new SqliteStore(join(tempDir('lrds-deliver-'), 'lrds.db'));
    await store.migrate();
    try {
      const clock = new ManualClock(T0);
      const w = webhook({ url: r.url, sealedSecret: box.seal('whsec_x') });
      await store.events.createSubscription(w, null);
      const events = Array.from({ length: 5 }, () => event());
      await store.events.appendEvents(
        events,
        events.map((e) => ({ eventId: e.id, webhookId: w.id })),
      );
      const d = new Deliverer({ store: store.events, secrets: box, clock, holder: 'a', allowPrivate: true });
      assert.equal(await d.pass(), 5);
      await d.idle();
      const first = await store.events.listDeliveries(w.id, 10);
      assert.ok(first.every((x) => x.status === 'pending' && x.attempts === 1 && x.lastStatus === 500));
      assert.ok(first.every((x) => x.nextAttemptAt === T0 + FIRST_RETRY_MS && x.lastError === 'HTTP 500'));
      assert.equal(await d.pass(), 0, 'not due before its backoff');
      failing = false;
      clock.advance(FIRST_RETRY_MS);
      assert.equal(await d.pass(), 5);
      await d.idle();
      const done = await store.events.listDeliveries(w.id, 10);
      assert.ok(done.every((x) => x.status === 'delivered' && x.attempts === 2 && x.lastStatus === 204));
      const delivered = new Set(r.got.filter((g) => g.status === 204).map((g) => g.headers['lrds-event-id']));
      assert.deepEqual([...delivered].sort(), events.map((e) => e.id).sort());
      for (const g of r.got)
        assert.equal(
          verifySignature(g.body, g.headers['lrds-signature'] as string, 'whsec_x', clock.now() / 1000, 1e6)
            .ok,
          true,
        );
    } finally {
      await store.close();
      await r.close();
    }
  });

  test('a receiver failing for 24 hours: the delivery is marked failed', async () => {
    const r = await receiver(() => 503);
    const store = new SqliteStore(join(tempDir('lrds-deliver-'), 'lrds.db'));
    await store.migrate();
    try {
      const clock = new ManualClock(T0);
      const w = webhook({ url: r.url, sealedSecret: box.seal('whsec_x') });
      await store.events.createSubscription(w, null);
      const e = event({ createdAt: T0 });
      await store.events.appendEvents([e], [{ eventId: e.id, webhookId: w.id }]);
      const d = new Deliverer({ store: store.events, secrets: box, clock, holder: 'a', allowPrivate: true });
      for (let i = 0; i < 60; i++) {
        await d.pass();
        await d.idle();
        clock.advance(3600_000);
      }
      const [x] = await store.events.listDeliveries(w.id, 1);
      assert.equal(x!.status, 'failed');
      assert.equal(x!.nextAttemptAt, null);
      assert.ok(x!.attempts > 10 && x!.attempts < 40, String(x!.attempts));
      assert.equal(r.got.length, x!.attempts);
    } finally {
      await store.close();
      await r.close();
    }
  });
});

const pgSkip = await pgSkipReason();
const schemas = new TestSchemas();
after(() => schemas.drop());

describe('two servers on PostgreSQL', pgSkip ? { skip: pgSkip } : {}, () => {
  test('each attempt is made once: two deliverers over one outbox never deliver an event twice', async () => {
    const r = await receiver(() => 200);
    const { url } = await schemas.create();
    const a = new PostgresStore(url, { poolSize: 4 });
    const b = new PostgresStore(url, { poolSize: 4 });
    await a.migrate();
    await b.migrate();
    try {
      const clock = new ManualClock(T0);
      const w = webhook({ url: r.url, sealedSecret: box.seal('whsec_pg') });
      await a.events.createSubscription(w, null);
      const events = Array.from({ length: 120 }, () => event());
      await a.events.appendEvents(
        events,
        events.map((e) => ({ eventId: e.id, webhookId: w.id })),
      );
      const da = new Deliverer({
        store: a.events,
        secrets: box,
        clock,
        holder: 'server-a',
        allowPrivate: true,
        concurrency: 8,
      });
      const db = new Deliverer({
        store: b.events,
        secrets: box,
        clock,
        holder: 'server-b',
        allowPrivate: true,
        concurrency: 8,
      });
      await drain(a, [da, db], clock, 30);
      const ids = r.got.map((g) => g.headers['lrds-event-id'] as string);
      assert.equal(ids.length, 120, 'one attempt per event');
      assert.equal(new Set(ids).size, 120);
      const listed = await b.events.listDeliveries(w.id, 200);
      assert.ok(listed.every((x) => x.status === 'delivered' && x.attempts === 1));
    } finally {
      await a.close();
      await b.close();
      await r.close();
    }
  });
});
