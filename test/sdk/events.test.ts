import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { LrdsClient, type RiskEvent, verifyWebhookSignature } from '../../sdk/src/index.ts';
import { signatureHeader } from '../../src/events/signature.ts';
import { ManualClock } from '../clock.ts';
import { event } from '../contract/event-store-contract.ts';
import { createTestApp, type TestApp } from '../helpers.ts';

describe('SDK: verifyWebhookSignature', () => {
  test('agrees with the server: known answer, tolerance, tampering', () => {
    const body = '{"id":"evt_1","type":"ping"}';
    const header = signatureHeader('whsec_abc', 1_795_852_805, body);
    assert.deepEqual(verifyWebhookSignature(body, header, 'whsec_abc', { nowSeconds: 1_795_852_900 }), {
      ok: true,
      timestamp: 1_795_852_805,
    });
    assert.deepEqual(
      verifyWebhookSignature(Buffer.from(body), header, 'whsec_abc', { nowSeconds: 1_795_852_805 }),
      { ok: true, timestamp: 1_795_852_805 },
    );
    assert.deepEqual(verifyWebhookSignature(`${body} `, header, 'whsec_abc', { nowSeconds: 1_795_852_805 }), {
      ok: false,
      reason: 'MISMATCH',
    });
    assert.deepEqual(
      verifyWebhookSignature(body, header, 'whsec_abc', {
        nowSeconds: 1_795_852_805 + 61,
        toleranceSeconds: 60,
      }),
      { ok: false, reason: 'TOO_OLD' },
    );
    assert.deepEqual(verifyWebhookSignature(body, undefined, 'whsec_abc'), {
      ok: false,
      reason: 'MALFORMED',
    });
    // The documented known answer.
    assert.equal(
      signatureHeader('whsec_test', 1_700_000_000, '{"a":1}'),
      't=1700000000,v1=38877139021993b830af32feea6e18a8da83eb2f6e49ee50bd9e4cf4ca4d3789',
    );
  });
});

describe('SDK: streamEvents', () => {
  let t: TestApp;
  let baseUrl: string;
  before(async () => {
    t = await createTestApp({ clock: new ManualClock(), events: { pollMs: 20, keepAliveMs: 200 } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/api/v1`;
  });
  after(() => t.close());

  test('behavior: yields events, and after the connection breaks resumes from the last one received', async () => {
    const client = new LrdsClient({ baseUrl, apiKey: await t.key('pro') });
    const abort = new AbortController();
    const it = client.streamEvents(
      { types: 'position.liquidated' },
      { signal: abort.signal, reconnectDelayMs: 50 },
    );
    const got: RiskEvent[] = [];
    const next = async () => {
      const r = await it.next();
      assert.equal(r.done, false);
      got.push(r.value as RiskEvent);
    };
    // The first read opens the stream; events stored after it has connected come through.
    const first = next();
    const end = Date.now() + 5000;
    while (t.events.streams.size === 0) {
      if (Date.now() > end) throw new Error('the stream did not open');
      await new Promise((r) => setTimeout(r, 20));
    }
    const [e1, e2] = [event(), event()];
    await t.store.events.appendEvents([e1, e2], []);
    await first;
    await next();
    assert.deepEqual(
      got.map((e) => e.id),
      [e1.id, e2.id],
    );
    // The server drops every stream; events stored meanwhile are replayed after the reconnect.
    await t.events.streams.close();
    const [e3, e4] = [event(), event()];
    await t.store.events.appendEvents([e3, e4], []);
    await next();
    await next();
    assert.deepEqual(
      got.map((e) => e.id),
      [e1.id, e2.id, e3.id, e4.id],
    );
    abort.abort();
    await it.return(undefined);
  });

  test('error: a refused stream throws the API error', async () => {
    const client = new LrdsClient({ baseUrl, apiKey: await t.key('free'), retry: false });
    await assert.rejects(
      client.streamEvents().next(),
      (err: Error & { code?: string }) => err.code === 'TIER_FORBIDDEN',
    );
  });
});
