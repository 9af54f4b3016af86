import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { EventRecord, SubscriptionRecord } from '../../src/domain/records/events.ts';
import { deliveryId } from '../../src/store/events.ts';
import type { Store } from '../../src/store/types.ts';

const T0 = Date.parse('2026-11-22T12:00:00Z');

let n = 0;
export function webhook(overrides: Partial<SubscriptionRecord> = {}): SubscriptionRecord {
  return {
    id: `wh_contract_${++n}`,
    accountId: 'acct_a',
    mode: 'live',
    kind: 'webhook',
    url: 'https://hooks.example.com/lrds',
    events: ['position.health_factor_below'],
    filters: { chainIds: [1], healthFactorBelow: 1.2 },
    sealedSecret: 'v1.sealed',
    createdAt: T0,
    expiresAt: null,
    ...overrides,
  };
}

export function event(overrides: Partial<EventRecord> = {}): EventRecord {
  const id = overrides.id ?? `evt_contract_${++n}`;
  return {
    id,
    mode: 'live',
    type: 'position.liquidated',
    createdAt: T0,
    body: JSON.stringify({
      id,
      type: 'position.liquidated',
      createdAt: new Date(T0).toISOString(),
      data: {},
    }),
    chainId: 1,
    protocol: 'morpho',
    marketKey: 'morpho-1-0xabc',
    wallet: '0x1111111111111111111111111111111111111111',
    threshold: null,
    ...overrides,
  };
}

/** The contract of EventStore: every Store passes the same tests (test/store/event-store.test.ts runs them). */
export function eventStoreContract(
  name: string,
  open: () => Promise<Store>,
  options: { skip?: string } = {},
): void {
  describe(`EventStore contract: ${name}`, options, () => {
    test('webhooks: created up to the cap, listed per account and mode, deleted', async () => {
      const store = await open();
      try {
        const ev = store.events;
        const v0 = await ev.subscriptionsVersion();
        const a = webhook();
        const b = webhook({ createdAt: T0 + 1 });
        assert.deepEqual(await ev.createSubscription(a, 2), { ok: true });
        assert.deepEqual(await ev.createSubscription(b, 2), { ok: true });
        assert.deepEqual(await ev.createSubscription(webhook(), 2), {
          ok: false,
          reason: 'TOO_MANY',
          active: 2,
        });
        // Another mode, another account: their own caps.
        assert.deepEqual(await ev.createSubscription(webhook({ mode: 'test' }), 1), { ok: true });
        assert.deepEqual(await ev.createSubscription(webhook({ accountId: 'acct_b' }), 1), { ok: true });
        assert.ok((await ev.subscriptionsVersion()) > v0);
        assert.deepEqual(
          (await ev.listWebhooks('acct_a', 'live')).map((w) => w.id),
          [a.id, b.id],
        );
        assert.deepEqual(await ev.getSubscription(a.id), a);
        const v1 = await ev.subscriptionsVersion();
        assert.equal(await ev.deleteWebhook('acct_b', a.id, T0), false, "another account's webhook");
        assert.equal(await ev.deleteWebhook('acct_a', a.id, T0), true);
        assert.equal(await ev.deleteWebhook('acct_a', a.id, T0), false, 'deleted already');
        assert.equal(await ev.getSubscription(a.id), null);
        assert.ok((await ev.subscriptionsVersion()) > v1);
        assert.deepEqual(
          await ev.createSubscription(webhook(), 2),
          { ok: true },
          'a deleted one frees its place',
        );
      } finally {
        await store.close();
      }
    });

    test('stream interests: active until they expire, renewed by id', async () => {
      const store = await open();
      try {
        const ev = store.events;
        const s = webhook({ kind: 'stream', url: null, sealedSecret: null, expiresAt: T0 + 1000 });
        await ev.touchStreamInterest(s);
        assert.deepEqual(
          (await ev.activeSubscriptions(T0)).map((x) => x.id),
          [s.id],
        );
        assert.deepEqual(await ev.activeSubscriptions(T0 + 1000), []);
        await ev.touchStreamInterest({ ...s, expiresAt: T0 + 5000 });
        assert.deepEqual(
          (await ev.activeSubscriptions(T0 + 1000)).map((x) => x.id),
          [s.id],
        );
        assert.deepEqual(await ev.listWebhooks('acct_a', 'live'), [], 'a stream interest is no webhook');
      } finally {
        await store.close();
      }
    });

    test('stream slots: a key holds at most its limit; expired and released slots are free again; a renewed one holds', async () => {
      const store = await open();
      try {
        const ev = store.events;
        const slot = (id: string, keyId = 'key_a', expiresAt = T0 + 90_000) => ({ id, keyId, expiresAt });
        assert.equal(await ev.claimStreamSlot(slot('s1'), 2, T0), true);
        assert.equal(await ev.claimStreamSlot(slot('s2'), 2, T0), true);
        assert.equal(await ev.claimStreamSlot(slot('s3'), 2, T0), false, 'the limit is held');
        assert.equal(await ev.claimStreamSlot(slot('t1', 'key_b'), 2, T0), true, 'another key has its own');
        await ev.releaseStreamSlot('s1');
        assert.equal(await ev.claimStreamSlot(slot('s3'), 2, T0), true, 'a released slot is free');
        // s2 and s3 expire at T0 + 90 s; s3 is renewed until T0 + 200 s.
        assert.equal(await ev.renewStreamSlot(slot('s3', 'key_a', T0 + 200_000)), true);
        assert.equal(await ev.claimStreamSlot(slot('s4'), 2, T0 + 89_999), false);
        assert.equal(
          await ev.claimStreamSlot(slot('s4', 'key_a', T0 + 300_000), 2, T0 + 90_000),
          true,
          's2 expired',
        );
        assert.equal(await ev.claimStreamSlot(slot('s5'), 2, T0 + 150_000), false, 's3 was renewed');
        assert.equal(await ev.renewStreamSlot(slot('s2', 'key_a', T0 + 400_000)), false, 'lapsed and freed');
        assert.equal(
          await ev.claimStreamSlot(slot('s5', 'key_a', T0 + 400_000), 2, T0 + 200_000),
          true,
          'an expired slot is not renewed',
        );
        // Claims at once: never more than the limit.
        const many = await Promise.all(
          Array.from({ length: 10 }, (_, i) => ev.claimStreamSlot(slot(`c${i}`, 'key_c'), 3, T0)),
        );
        assert.equal(many.filter(Boolean).length, 3);
      } finally {
        await store.close();
      }
    });

    test('events: appended once by id, in log order, with their deliveries pending and due', async () => {
      const store = await open();
      try {
        const ev = store.events;
        const w = webhook();
        await ev.createSubscription(w, null);
        const e1 = event();
        const e2 = event({ createdAt: T0 + 5 });
        assert.equal(await ev.appendEvents([e1, e2], [{ eventId: e1.id, webhookId: w.id }]), 2);
        // Again (a retried write): nothing twice.
        assert.equal(await ev.appendEvents([e1], [{ eventId: e1.id, webhookId: w.id }]), 0);
        const ping = event({ type: 'ping', webhookId: w.id });
        await ev.appendEvents([ping], [{ eventId: ping.id, webhookId: w.id }]);
        const testMode = event({ mode: 'test' });
        await ev.appendEvents([testMode], []);
        const after = await ev.eventsAfter(0, 'live', 10);
        assert.deepEqual(
          after.map((e) => e.id),
          [e1.id, e2.id],
          'pings and other modes left out',
        );
        assert.ok(after[0]!.seq < after[1]!.seq);
        assert.deepEqual(
          { ...after[0]!, seq: 0, webhookId: undefined },
          { ...e1, seq: 0, webhookId: undefined },
        );
        assert.equal(await ev.eventSeq(e2.id), after[1]!.seq);
        assert.equal(await ev.eventSeq('evt_none'), null);
        assert.ok((await ev.lastEventSeq()) >= after[1]!.seq);
        assert.deepEqual(
          (await ev.eventsAfter(after[0]!.seq, 'live', 10)).map((e) => e.id),
          [e2.id],
        );
        const deliveries = await ev.listDeliveries(w.id, 10);
        assert.equal(deliveries.length, 2);
        const d1 = deliveries.find((d) => d.eventId === e1.id)!;
        assert.deepEqual(d1, {
          id: deliveryId(w.id, e1.id),
          webhookId: w.id,
          eventId: e1.id,
          eventType: 'position.liquidated',
          createdAt: T0,
          status: 'pending',
          attempts: 0,
          lastStatus: null,
          lastError: null,
          nextAttemptAt: T0,
          deliveredAt: null,
        });
      } finally {
        await store.close();
      }
    });

    test('claims: one holder per delivery until its lease runs out; outcomes only by the claim', async () => {
      const store = await open();
      try {
        const ev = store.events;
        const w = webhook();
        await ev.createSubscription(w, null);
        const events = [event(), event(), event()];
        await ev.appendEvents(
          events,
          events.map((e) => ({ eventId: e.id, webhookId: w.id })),
        );
        const a = await ev.claimDeliveries('a', T0, 30_000, 2);
        const b = await ev.claimDeliveries('b', T0, 30_000, 10);
        assert.equal(a.length, 2);
        assert.equal(b.length, 1);
        const ids = new Set([...a, ...b].map((d) => d.id));
        assert.equal(ids.size, 3, 'no delivery claimed twice');
        assert.equal(a[0]!.url, w.url);
        assert.equal(a[0]!.sealedSecret, w.sealedSecret);
        assert.equal(JSON.parse(a[0]!.body).type, 'position.liquidated');
        assert.deepEqual(await ev.claimDeliveries('c', T0 + 29_999, 30_000, 10), [], 'all held');
        // The claims lapse: c takes them over, and a can no longer record its outcome.
        const c = await ev.claimDeliveries('c', T0 + 30_000, 30_000, 10);
        assert.deepEqual(c.map((d) => d.id).sort(), [...ids].sort());
        const late = {
          at: T0 + 30_001,
          status: 'delivered' as const,
          httpStatus: 200,
          error: null,
          nextAttemptAt: null,
        };
        assert.equal(await ev.finishAttempt(a[0]!.id, a[0]!.token, late), false);
        const retry = {
          at: T0 + 30_001,
          status: 'pending' as const,
          httpStatus: 500,
          error: 'HTTP 500',
          nextAttemptAt: T0 + 40_001,
        };
        const mine = c.find((d) => d.id === a[0]!.id)!;
        assert.equal(await ev.finishAttempt(mine.id, mine.token, retry), true);
        assert.equal(
          await ev.finishAttempt(mine.id, mine.token, retry),
          false,
          'a claim records one attempt',
        );
        assert.deepEqual(await ev.claimDeliveries('d', T0 + 40_000, 30_000, 10), [], 'not due yet');
        const again = await ev.claimDeliveries('d', T0 + 40_001, 30_000, 10);
        assert.deepEqual(
          again.map((d) => d.id),
          [mine.id],
        );
        assert.equal(again[0]!.attempts, 1);
        assert.equal(
          await ev.finishAttempt(again[0]!.id, again[0]!.token, { ...late, at: T0 + 40_002 }),
          true,
        );
        const listed = (await ev.listDeliveries(w.id, 10)).find((d) => d.id === mine.id)!;
        assert.equal(listed.status, 'delivered');
        assert.equal(listed.attempts, 2);
        assert.equal(listed.lastStatus, 200);
        assert.equal(listed.deliveredAt, T0 + 40_002);
        assert.equal(listed.nextAttemptAt, null);
      } finally {
        await store.close();
      }
    });

    test('delete: pending deliveries fail and are no longer claimed', async () => {
      const store = await open();
      try {
        const ev = store.events;
        const w = webhook();
        await ev.createSubscription(w, null);
        const e = event();
        await ev.appendEvents([e], [{ eventId: e.id, webhookId: w.id }]);
        await ev.deleteWebhook(w.accountId, w.id, T0);
        assert.deepEqual(await ev.claimDeliveries('a', T0, 30_000, 10), []);
        const [d] = await ev.listDeliveries(w.id, 10);
        assert.equal(d!.status, 'failed');
        assert.equal(d!.lastError, 'webhook deleted');
      } finally {
        await store.close();
      }
    });

    test('deliveries: newest first, paged with before', async () => {
      const store = await open();
      try {
        const ev = store.events;
        const w = webhook();
        await ev.createSubscription(w, null);
        const events = [0, 1, 2, 3].map((i) => event({ createdAt: T0 + i }));
        await ev.appendEvents(
          events,
          events.map((e) => ({ eventId: e.id, webhookId: w.id })),
        );
        const first = await ev.listDeliveries(w.id, 2);
        assert.deepEqual(
          first.map((d) => d.eventId),
          [events[3]!.id, events[2]!.id],
        );
        const next = await ev.listDeliveries(w.id, 2, first[1]!.id);
        assert.deepEqual(
          next.map((d) => d.eventId),
          [events[1]!.id, events[0]!.id],
        );
      } finally {
        await store.close();
      }
    });

    test('retention: old events go once none of their deliveries is pending', async () => {
      const store = await open();
      try {
        const ev = store.events;
        const w = webhook();
        await ev.createSubscription(w, null);
        const old = event({ createdAt: T0 });
        const oldPending = event({ createdAt: T0 });
        const recent = event({ createdAt: T0 + 10_000 });
        await ev.appendEvents(
          [old, oldPending, recent],
          [old, oldPending].map((e) => ({ eventId: e.id, webhookId: w.id })),
        );
        const [claim] = (await ev.claimDeliveries('a', T0, 1000, 10)).filter((d) => d.eventId === old.id);
        await ev.finishAttempt(claim!.id, claim!.token, {
          at: T0,
          status: 'delivered',
          httpStatus: 204,
          error: null,
          nextAttemptAt: null,
        });
        assert.equal(await ev.pruneEvents(T0 + 1), 1);
        assert.equal(await ev.eventSeq(old.id), null);
        assert.notEqual(await ev.eventSeq(oldPending.id), null, 'still to deliver');
        assert.notEqual(await ev.eventSeq(recent.id), null);
        assert.deepEqual(
          (await ev.listDeliveries(w.id, 10)).map((d) => d.eventId),
          [oldPending.id],
        );
      } finally {
        await store.close();
      }
    });

    test('the matching lease: one holder at a time, renewed, released', async () => {
      const store = await open();
      try {
        const ev = store.events;
        assert.equal(await ev.eventLeaseHolder(T0), null);
        assert.equal(await ev.claimEventLease('a', T0, 1000), true);
        assert.equal(await ev.eventLeaseHolder(T0 + 999), 'a');
        assert.equal(await ev.eventLeaseHolder(T0 + 1000), null, 'expired');
        assert.equal(await ev.claimEventLease('b', T0 + 999, 1000), false);
        assert.equal(await ev.claimEventLease('a', T0 + 500, 1000), true, 'renewed');
        assert.equal(await ev.claimEventLease('b', T0 + 1499, 1000), false);
        await ev.releaseEventLease('a');
        assert.equal(await ev.eventLeaseHolder(T0 + 1500), null, 'released');
        assert.equal(await ev.claimEventLease('b', T0 + 1500, 1000), true);
      } finally {
        await store.close();
      }
    });
  });
}
