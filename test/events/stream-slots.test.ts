/**
 * A key's open event streams are counted on the store, so the tier's `maxStreamsPerKey` holds
 * across every server on it (two StreamHubs on one store stand for two servers).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { STREAM_SLOT_TTL_MS, StreamHub, type StreamRequest } from '../../src/events/stream.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { ManualClock } from '../clock.ts';

const sink = () => {
  let closed = false;
  return {
    write: () => 0,
    close: () => {
      closed = true;
    },
    get closed() {
      return closed;
    },
  };
};

const request = (slot: StreamRequest['slot']): StreamRequest => ({
  accountId: 'acct_a',
  keyId: 'key_a',
  mode: 'live',
  types: ['position.liquidated'],
  filters: {},
  lastEventId: null,
  slot,
});

const until = async (pred: () => boolean | Promise<boolean>, what: string) => {
  const end = Date.now() + 5000;
  while (!(await pred())) {
    if (Date.now() > end) throw new Error(`timed out waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe("a key's stream limit across servers", () => {
  test('behavior: streams open on one server count on another; a closed one frees its place; a dead server frees its own after the slot time', async () => {
    const store = new SqliteStore(':memory:');
    await store.migrate();
    const clock = new ManualClock();
    // Server a's renewals are counted, so the test waits for them rather than for time.
    let renewals = 0;
    const ev = store.events;
    const counted: StreamHub['store'] = {
      eventsAfter: (...args) => ev.eventsAfter(...args),
      eventSeq: (...args) => ev.eventSeq(...args),
      lastEventSeq: () => ev.lastEventSeq(),
      touchStreamInterest: (...args) => ev.touchStreamInterest(...args),
      claimStreamSlot: (...args) => ev.claimStreamSlot(...args),
      renewStreamSlot: async (slot) => {
        const held = await ev.renewStreamSlot(slot);
        renewals++;
        return held;
      },
      releaseStreamSlot: (id) => ev.releaseStreamSlot(id),
    };
    const a = new StreamHub({ store: counted, clock, keepAliveMs: 5 });
    const b = new StreamHub({ store: ev, clock, keepAliveMs: 5 });
    try {
      const s1 = await a.claimSlot('key_a', 2);
      const s2 = await a.claimSlot('key_a', 2);
      assert.ok(s1 && s2);
      const close1 = await a.open(request(s1), sink());
      await a.open(request(s2), sink());
      assert.equal(await b.claimSlot('key_a', 2), null, 'the other server sees both');
      assert.ok(await b.claimSlot('key_b', 2), 'another key has its own');

      // A claim that succeeds is given back at once: it only tells there was room.
      const room = async (limit: number) => {
        const slot = await b.claimSlot('key_a', limit);
        if (slot) await store.events.releaseStreamSlot(slot.id);
        return slot !== null;
      };
      close1();
      await until(() => room(2), 'the closed stream freed its slot');

      // Server a stops without closing (killed): its open stream keeps renewing its slot while
      // it lives, and once it is gone the slot frees itself after the slot time.
      clock.advance(STREAM_SLOT_TTL_MS / 2);
      const before = renewals;
      await until(() => renewals > before, 'a keep-alive renewed the slot');
      clock.advance(STREAM_SLOT_TTL_MS / 2 + 1);
      assert.equal(await room(1), false, 'renewed while open');
      await a.close(); // (closing releases; a killed server would not: the slot then expires)
      await until(() => room(1), 'released at close');
    } finally {
      await a.close();
      await b.close();
      await store.close();
    }
  });

  test('behavior: a slot a dead server held is free once its time has passed', async () => {
    const store = new SqliteStore(':memory:');
    await store.migrate();
    const clock = new ManualClock();
    const a = new StreamHub({ store: store.events, clock });
    try {
      assert.ok(await a.claimSlot('key_a', 1));
      // (Claimed and never released, as by a server killed before it closed the stream.)
      assert.equal(await a.claimSlot('key_a', 1), null);
      clock.advance(STREAM_SLOT_TTL_MS - 1);
      assert.equal(await a.claimSlot('key_a', 1), null);
      clock.advance(1);
      assert.ok(await a.claimSlot('key_a', 1));
    } finally {
      await a.close();
      await store.close();
    }
  });

  test('behavior: a slot that lapsed and was taken is claimed again, or its stream closes when the key holds its limit', async () => {
    const store = new SqliteStore(':memory:');
    await store.migrate();
    const clock = new ManualClock();
    const a = new StreamHub({ store: store.events, clock, keepAliveMs: 5 });
    const b = new StreamHub({ store: store.events, clock });
    try {
      // Two streams of a key allowed two; both their slots lapse (as when the store could not be
      // reached for the slot's whole time) and another server takes one place meanwhile.
      const [s1, s2] = [await a.claimSlot('key_a', 2), await a.claimSlot('key_a', 2)];
      assert.ok(s1 && s2);
      const [k1, k2] = [sink(), sink()];
      await a.open(request(s1), k1);
      await a.open(request(s2), k2);
      await store.events.releaseStreamSlot(s1.id);
      await store.events.releaseStreamSlot(s2.id);
      assert.ok(await b.claimSlot('key_a', 2));
      // At the next renewals, one finds its place again and the other is closed.
      clock.advance(STREAM_SLOT_TTL_MS / 2);
      await until(() => k1.closed !== k2.closed, 'one stream closed, one kept');
      await new Promise((r) => setTimeout(r, 30));
      assert.notEqual(k1.closed, k2.closed, 'exactly one of the two closed');
      assert.equal(await b.claimSlot('key_a', 2), null, 'the key holds its two places');
    } finally {
      await a.close();
      await b.close();
      await store.close();
    }
  });

  test('behavior: with the store unreachable, this server counts its own streams', async () => {
    const clock = new ManualClock();
    const errors: unknown[] = [];
    const down = new Error('connect ECONNREFUSED');
    const store = {
      eventsAfter: async () => [],
      eventSeq: async () => null,
      lastEventSeq: async () => 0,
      touchStreamInterest: async () => {},
      claimStreamSlot: async () => Promise.reject(down),
      renewStreamSlot: async (): Promise<boolean> => Promise.reject(down),
      releaseStreamSlot: async () => Promise.reject(down),
    };
    const a = new StreamHub({ store, clock, onError: (e) => errors.push(e) });
    try {
      const s = await a.claimSlot('key_a', 1);
      assert.ok(s);
      await a.open(request(s), sink());
      assert.equal(await a.claimSlot('key_a', 1), null);
      assert.ok(errors.length >= 2);
    } finally {
      await a.close();
    }
  });
});
