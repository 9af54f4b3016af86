import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, get as httpGet, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Deliverer } from '../../src/events/deliverer.ts';
import { SecretBox } from '../../src/events/secrets.ts';
import { verifySignature } from '../../src/events/signature.ts';
import { ManualClock } from '../clock.ts';
import { event } from '../contract/event-store-contract.ts';
import { createTestApp, type TestApp, tiersWith } from '../helpers.ts';

const TIERS = tiersWith((t) => {
  t.pro!.maxWebhooksPerAccount = 2;
  t.pro!.maxStreamsPerKey = 2;
});

async function receiver() {
  const got: { headers: IncomingMessage['headers']; body: string }[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      got.push({ headers: req.headers, body });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    got,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const json = (key: string, body: unknown) => ({
  authorization: `Bearer ${key}`,
  'content-type': 'application/json',
  payload: body,
});

describe('webhooks in the client area', () => {
  const clock = new ManualClock();
  const secrets = new SecretBox(randomBytes(32));
  let t: TestApp;
  let strict: TestApp;
  let pro: string;
  before(async () => {
    t = await createTestApp({ clock, tiers: TIERS, events: { allowPrivate: true, secrets } });
    strict = await createTestApp({ clock, tiers: TIERS });
    pro = await t.key('pro');
  });
  after(async () => {
    await t.close();
    await strict.close();
  });

  const post = (app: TestApp, url: string, key: string, body: unknown) => {
    const { payload, ...headers } = json(key, body);
    return app.app.inject({ method: 'POST', url, headers, payload: payload as object });
  };

  test('error: the free tier has no risk events', async () => {
    const free = await t.key('free');
    const res = await post(t, '/api/v1/client/webhooks', free, {
      url: 'https://example.com/h',
      events: ['oracle.stale'],
    });
    assert.equal(res.statusCode, 403);
    assert.deepEqual(res.json(), {
      error: 'TIER_FORBIDDEN',
      message: "The free tier does not include the 'risk' events.",
      tier: 'free',
      category: 'risk',
    });
  });

  test('error: private, loopback and link-local URLs, and http, are refused without the development switch', async () => {
    const key = await strict.key('pro');
    for (const url of [
      'https://127.0.0.1/h',
      'https://10.0.0.1/h',
      'https://172.16.5.4/h',
      'https://192.168.0.1/h',
      'https://169.254.169.254/h',
      'https://[::1]/h',
      'https://[fd00::1]/h',
      'https://localhost/h',
      'http://example.com/h',
    ]) {
      const res = await post(strict, '/api/v1/client/webhooks', key, { url, events: ['oracle.stale'] });
      assert.equal(res.statusCode, 400, url);
      assert.equal(res.json().details[0].parameter, 'url');
    }
  });

  test('error: bad bodies are 400 INVALID_PARAMETER', async () => {
    for (const body of [
      { url: 'https://example.com/h', events: [] },
      { url: 'https://example.com/h', events: ['ping'] },
      { url: 'https://example.com/h', events: ['oracle.stale'], filters: { healthFactorBelow: 0 } },
      { url: 'https://example.com/h', events: ['oracle.stale'], filters: { marketIds: ['nope'] } },
      { url: 'https://example.com/h', events: ['oracle.stale'], filters: { wallets: ['0x12'] } },
      { url: 'https://example.com/h', events: ['oracle.stale'], filters: { colour: 'red' } },
    ]) {
      const res = await post(t, '/api/v1/client/webhooks', pro, body);
      assert.equal(res.statusCode, 400, JSON.stringify(body));
      assert.equal(res.json().error, 'INVALID_PARAMETER');
    }
  });

  test('behavior: create shows the secret once; list, get, test ping, deliveries, delete; the tier caps the count', async () => {
    const r = await receiver();
    try {
      const key = await t.key('pro', 'live', 'caps');
      const created = await post(t, '/api/v1/client/webhooks', key, {
        url: r.url,
        events: ['position.health_factor_below', 'position.liquidated'],
        filters: { wallets: ['0xABCDEF0000000000000000000000000000000001'], healthFactorBelow: 1.2 },
      });
      assert.equal(created.statusCode, 201);
      const wh = created.json().data;
      assert.match(wh.id, /^wh_/);
      assert.match(wh.secret, /^whsec_/);
      assert.deepEqual(wh.filters, {
        wallets: ['0xabcdef0000000000000000000000000000000001'],
        healthFactorBelow: 1.2,
      });
      const listed = await t.get('/api/v1/client/webhooks', key);
      assert.equal(listed.statusCode, 200);
      assert.deepEqual(
        listed.json().data.map((w: { id: string }) => w.id),
        [wh.id],
      );
      assert.equal(JSON.stringify(listed.json()).includes(wh.secret), false, 'the secret is shown once');
      assert.equal(
        JSON.stringify(await t.store.events.getSubscription(wh.id)).includes(wh.secret),
        false,
        'sealed at rest',
      );
      assert.equal((await t.get(`/api/v1/client/webhooks/${wh.id}`, key)).json().data.url, r.url);
      assert.equal(
        (await t.get(`/api/v1/client/webhooks/${wh.id}`, pro)).statusCode,
        404,
        "another account's",
      );
      // A ping, delivered by the delivery loop over the same store.
      const ping = await post(t, `/api/v1/client/webhooks/${wh.id}/test`, key, {});
      assert.equal(ping.statusCode, 202);
      const { eventId, deliveryId } = ping.json().data;
      const d = new Deliverer({ store: t.store.events, secrets, clock, holder: 'test', allowPrivate: true });
      assert.equal(await d.pass(), 1);
      await d.idle();
      assert.equal(r.got.length, 1);
      const got = r.got[0]!;
      assert.equal(got.headers['lrds-event-id'], eventId);
      assert.equal(
        verifySignature(got.body, got.headers['lrds-signature'] as string, wh.secret, clock.now() / 1000).ok,
        true,
      );
      assert.equal(JSON.parse(got.body).type, 'ping');
      const deliveries = await t.get(`/api/v1/client/webhooks/${wh.id}/deliveries`, key);
      assert.equal(deliveries.statusCode, 200);
      assert.deepEqual(deliveries.json().data, [
        {
          id: deliveryId,
          eventId,
          eventType: 'ping',
          status: 'delivered',
          attempts: 1,
          lastStatus: 200,
          lastError: null,
          nextAttemptAt: null,
          deliveredAt: new Date(clock.now()).toISOString(),
          createdAt: new Date(clock.now()).toISOString(),
        },
      ]);
      // The cap: 2 for this tier.
      assert.equal(
        (await post(t, '/api/v1/client/webhooks', key, { url: r.url, events: ['oracle.stale'] })).statusCode,
        201,
      );
      const third = await post(t, '/api/v1/client/webhooks', key, { url: r.url, events: ['oracle.stale'] });
      assert.equal(third.statusCode, 403);
      assert.equal(third.json().error, 'WEBHOOK_LIMIT_REACHED');
      const del = await t.app.inject({
        method: 'DELETE',
        url: `/api/v1/client/webhooks/${wh.id}`,
        headers: { authorization: `Bearer ${key}` },
      });
      assert.equal(del.statusCode, 200);
      assert.equal((await t.get(`/api/v1/client/webhooks/${wh.id}`, key)).statusCode, 404);
      assert.equal(
        (await post(t, '/api/v1/client/webhooks', key, { url: r.url, events: ['oracle.stale'] })).statusCode,
        201,
      );
    } finally {
      await r.close();
    }
  });
});

/** Reads an event stream: its chunks as they come, until `close()`. */
function openStream(base: string, key: string, path = '/api/v1/events/stream', lastEventId?: string) {
  let text = '';
  const waiters: (() => void)[] = [];
  let res: IncomingMessage | null = null;
  const req = httpGet(
    `${base}${path}`,
    { headers: { authorization: `Bearer ${key}`, ...(lastEventId ? { 'last-event-id': lastEventId } : {}) } },
    (r) => {
      res = r;
      r.setEncoding('utf8');
      r.on('data', (c: string) => {
        text += c;
        for (const w of waiters.splice(0)) w();
      });
      r.on('end', () => {
        for (const w of waiters.splice(0)) w();
      });
    },
  );
  req.on('error', () => {});
  const ids = () => [...text.matchAll(/^id: (.+)$/gm)].map((m) => m[1]!);
  return {
    get text() {
      return text;
    },
    get status() {
      return (res as IncomingMessage | null)?.statusCode;
    },
    ids,
    async until(pred: () => boolean, ms = 5000) {
      const end = Date.now() + ms;
      while (!pred()) {
        if (Date.now() > end) throw new Error(`timed out; stream so far:\n${text}`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 50);
        });
      }
    },
    close() {
      req.destroy();
    },
  };
}

describe('GET /events/stream', () => {
  const clock = new ManualClock();
  let t: TestApp;
  let base: string;
  before(async () => {
    t = await createTestApp({ clock, tiers: TIERS, events: { pollMs: 20, keepAliveMs: 100 } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  after(() => t.close());

  test('behavior: events follow as they are stored, filtered; keep-alive comments; Last-Event-ID resumes', async () => {
    const key = await t.key('pro', 'live', 'streamer');
    const s = openStream(base, key, '/api/v1/events/stream?chainIds=1&types=position.liquidated');
    await s.until(() => s.text.includes(': connected'));
    assert.equal(s.status, 200);
    const e1 = event();
    const other = event({ chainId: 10 });
    const hf = event({ type: 'position.health_factor_below', threshold: 1.1 });
    const e2 = event();
    await t.store.events.appendEvents([e1, other, hf, e2], []);
    await s.until(() => s.ids().length >= 2);
    assert.deepEqual(s.ids(), [e1.id, e2.id]);
    assert.match(
      s.text,
      new RegExp(`event: position.liquidated\ndata: ${e1.body.replace(/[{}[\]()*+?.^$|\\]/g, '\\$&')}\n\n`),
    );
    await s.until(() => s.text.includes(': keep-alive'));
    s.close();
    // Missed while away: replayed after e2.
    const e3 = event();
    const e4 = event();
    await t.store.events.appendEvents([e3, e4], []);
    const again = openStream(base, key, '/api/v1/events/stream?chainIds=1&types=position.liquidated', e2.id);
    await again.until(() => again.ids().length >= 2);
    assert.deepEqual(again.ids(), [e3.id, e4.id]);
    const e5 = event();
    await t.store.events.appendEvents([e5], []);
    await again.until(() => again.ids().length >= 3);
    assert.deepEqual(again.ids(), [e3.id, e4.id, e5.id]);
    again.close();
  });

  test('behavior: the tier caps open streams per key; a closed one frees its place', async () => {
    const key = await t.key('pro', 'live', 'many');
    const a = openStream(base, key);
    const b = openStream(base, key);
    await a.until(() => a.text.includes(': connected'));
    await b.until(() => b.text.includes(': connected'));
    const c = await t.get('/api/v1/events/stream', key);
    assert.equal(c.statusCode, 429);
    assert.equal(c.json().error, 'STREAM_LIMIT_REACHED');
    assert.equal(c.headers['retry-after'], '5');
    a.close();
    const end = Date.now() + 5000;
    while (
      t.events.streams.openOn(
        (await t.store.listKeys()).find((k) => k.accountId && k.prefix === key.slice(0, 14))!.id,
      ) > 1
    ) {
      if (Date.now() > end) throw new Error('the closed stream was not released');
      await new Promise((r) => setTimeout(r, 20));
    }
    const d = openStream(base, key);
    await d.until(() => d.text.includes(': connected'));
    b.close();
    d.close();
  });

  test('error: the free tier has no risk events; bad filters are 400', async () => {
    const free = await t.key('free');
    assert.equal((await t.get('/api/v1/events/stream', free)).statusCode, 403);
    const key = await t.key('pro');
    for (const q of [
      'types=nope',
      'protocols=x',
      'wallets=0x1',
      'healthFactorBelow=11',
      'chainIds=a',
      'marketIds=bad',
    ])
      assert.equal((await t.get(`/api/v1/events/stream?${q}`, key)).statusCode, 400, q);
  });
});
