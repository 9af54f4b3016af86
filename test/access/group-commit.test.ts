import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { GroupCommit } from '../../src/access/admission.ts';
import type { UsageEvent } from '../../src/domain/records/usage.ts';
import type { Store } from '../../src/store/types.ts';

/** A store whose writes take time and fail on demand, recording what it accepted. */
function slowStore(plan: { delayMs: number; fail: boolean }[]) {
  const written: string[] = [];
  let call = 0;
  const store = {
    async recordUsage(events: readonly UsageEvent[]) {
      const step = plan[Math.min(call++, plan.length - 1)]!;
      await sleep(step.delayMs);
      if (step.fail) throw new Error('connection refused');
      written.push(...events.map((e) => e.endpoint));
    },
  } as unknown as Store;
  return { store, written };
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));

const event = (name: string): UsageEvent => ({
  keyId: 'k',
  day: '2026-11-22',
  endpoint: name,
  countedMonthly: true,
});

describe('GroupCommit', () => {
  test('behavior: a failed write is written again, once, even when later writes overlap it', async () => {
    const { store, written } = slowStore([
      { delayMs: 5, fail: true },
      { delayMs: 30, fail: false },
    ]);
    const gc = new GroupCommit(store);
    const a = gc.record(event('A'));
    await nextTurn(); // A's write has started; B's is queued while it is under way
    const b = gc.record(event('B'));
    await Promise.all([a, b]);
    assert.deepEqual(written.sort(), ['A', 'B']);
    assert.equal(gc.durable, true);
    await gc.close();
    assert.deepEqual(written.sort(), ['A', 'B']);
  });

  test('behavior: events waiting on a failed write are never written twice', async () => {
    const { store, written } = slowStore([
      { delayMs: 1, fail: true },
      { delayMs: 20, fail: false },
    ]);
    const gc = new GroupCommit(store);
    await gc.record(event('F'));
    assert.equal(gc.durable, false);
    const x = gc.record(event('X'));
    await nextTurn(); // X's write (with F) has started; Y's is queued behind it
    const y = gc.record(event('Y'));
    await Promise.all([x, y]);
    await gc.close();
    assert.deepEqual(written.sort(), ['F', 'X', 'Y']);
  });

  test('error: a failed write is retried as the same batch (same events, same id), never merged with newer events', async () => {
    const calls: { id: string; events: string[] }[] = [];
    let fail = true;
    const store = {
      async recordUsage(events: readonly UsageEvent[], batchId: string) {
        calls.push({ id: batchId, events: events.map((e) => e.endpoint) });
        if (fail) throw new Error('PostgreSQL did not answer within 2000 ms');
      },
    } as unknown as Store;
    const gc = new GroupCommit(store);
    await Promise.all([gc.record(event('A')), gc.record(event('B'))]);
    assert.equal(gc.durable, false);
    await gc.record(event('C')); // the retry fails again: C waits, in no batch yet
    await gc.record(event('D'));
    fail = false;
    await gc.record(event('E'));
    assert.equal(gc.durable, true);
    const first = calls[0]!;
    assert.deepEqual(first.events, ['A', 'B']);
    // The process prefix (16 random bytes) and a counter.
    assert.ok(/^[A-Za-z0-9_-]{22}\.[0-9a-z]+$/.test(first.id), first.id);
    // Every attempt at A and B is that batch, under its id; the later events form a new one.
    assert.equal(calls.length, 5);
    assert.deepEqual(calls.slice(0, 4), [first, first, first, first]);
    const last = calls[4]!;
    assert.deepEqual(last.events, ['C', 'D', 'E']);
    assert.notEqual(last.id, first.id);
    await gc.close();
    assert.equal(calls.length, 5);
  });

  test('behavior: one write per turn, whatever the number of events', async () => {
    let writes = 0;
    const store = { recordUsage: async () => void writes++ } as unknown as Store;
    const gc = new GroupCommit(store);
    await Promise.all(Array.from({ length: 100 }, (_, i) => gc.record(event(String(i)))));
    assert.equal(writes, 1);
  });

  test('error: close throws when the store still refuses the waiting counts', async () => {
    const { store } = slowStore([{ delayMs: 1, fail: true }]);
    const gc = new GroupCommit(store);
    await gc.record(event('A'));
    await assert.rejects(gc.close(), /1 usage counts could not be written/);
  });
});
