import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { IdempotencyClaim } from '../../src/domain/records/idempotency.ts';
import type { KeyLimits, KeyRecord } from '../../src/domain/records/keys.ts';
import { IDEMPOTENCY_PRUNE_PER_CLAIM } from '../../src/store/idempotency.ts';
import type { Store } from '../../src/store/types.ts';

export interface IdempotencyContractHooks {
  /** Records held, expired or not (read past the port: pruning is not observable through it). */
  countRecords(store: Store): Promise<number>;
}

const T0 = Date.parse('2026-11-22T12:00:00Z');
const LEASE = 10_000;
const TTL = 24 * 3600_000;
const NO_CAPS: KeyLimits = { maxActive: null, creations: null };

/** A claim of record `id` at `now` (its lease and expiry from there), by holder `token`. */
function claim(id: string, token: string, now = T0, fingerprint = 'f1'): IdempotencyClaim {
  return { id, fingerprint, token, now, lockedUntil: now + LEASE, expiresAt: now + TTL };
}

let n = 0;
function keyRecord(overrides: Partial<KeyRecord> = {}): KeyRecord {
  const i = ++n;
  return {
    id: `key_idem_${i}`,
    accountId: 'acct_idem',
    hash: `hash_idem_${i}`,
    prefix: 'lrds_live_AbCd',
    mode: 'live',
    tier: 'pro',
    name: null,
    createdAt: '2026-11-22T12:00:00.000Z',
    revokedAt: null,
    ...overrides,
  };
}

async function openWithAccount(open: () => Promise<Store>): Promise<Store> {
  const store = await open();
  await store.createAccount({
    id: 'acct_idem',
    name: 'idem',
    email: null,
    createdAt: '2026-11-22T00:00:00.000Z',
  });
  return store;
}

/**
 * The contract of IdempotencyStore, and of createKeyWithin with an answer: every Store passes
 * it. `open` returns a migrated, empty store; the suite closes what it opens.
 */
export function idempotencyContract(
  name: string,
  open: () => Promise<Store>,
  hooks: IdempotencyContractHooks,
  options: { skip?: string } = {},
): void {
  describe(`Idempotency contract: ${name}`, { skip: options.skip ?? false }, () => {
    test('behavior: a new key is claimed; the same request again is in flight until the lease ends, then taken over', async () => {
      const store = await open();
      assert.deepEqual(await store.claimIdempotencyKey(claim('k1', 'a')), { ok: true });
      assert.deepEqual(await store.claimIdempotencyKey(claim('k1', 'b', T0 + 1000)), {
        ok: false,
        reason: 'IN_FLIGHT',
        lockedUntil: T0 + LEASE,
      });
      // Another key is another record.
      assert.deepEqual(await store.claimIdempotencyKey(claim('k2', 'c')), { ok: true });
      // The first holder died: at the end of its lease the next request takes the key over.
      assert.deepEqual(await store.claimIdempotencyKey(claim('k1', 'b', T0 + LEASE)), { ok: true });
      assert.deepEqual(await store.claimIdempotencyKey(claim('k1', 'd', T0 + LEASE + 1)), {
        ok: false,
        reason: 'IN_FLIGHT',
        lockedUntil: T0 + 2 * LEASE,
      });
      await store.close();
    });

    test('behavior: the answer is stored with the key it reports, and given to every later claim', async () => {
      const store = await openWithAccount(open);
      await store.claimIdempotencyKey(claim('k1', 'a'));
      const key = keyRecord();
      const answer = { id: 'k1', token: 'a', status: 201, response: 'sealed answer' };
      assert.deepEqual(await store.createKeyWithin(key, NO_CAPS, answer), { ok: true });
      assert.deepEqual(await store.getKey(key.id), key);
      for (const at of [T0 + 1, T0 + LEASE + 1, T0 + TTL - 1]) {
        assert.deepEqual(await store.claimIdempotencyKey(claim('k1', `t${at}`, at)), {
          ok: false,
          reason: 'ANSWERED',
          status: 201,
          response: 'sealed answer',
        });
      }
      // A release by the old holder, once answered, changes nothing.
      await store.releaseIdempotencyKey('k1', 'a');
      assert.equal((await store.claimIdempotencyKey(claim('k1', 'x', T0 + 2))).ok, false);
      assert.equal((await store.listKeys('acct_idem')).length, 1);
      await store.close();
    });

    test('error: the key reused with another request is refused, answered or not', async () => {
      const store = await openWithAccount(open);
      await store.claimIdempotencyKey(claim('k1', 'a'));
      const other = claim('k1', 'b', T0 + 1, 'f2');
      assert.deepEqual(await store.claimIdempotencyKey(other), { ok: false, reason: 'MISMATCH' });
      // Past the lease too: another request never takes a key over.
      assert.deepEqual(await store.claimIdempotencyKey({ ...other, now: T0 + LEASE + 1 }), {
        ok: false,
        reason: 'MISMATCH',
      });
      await store.createKeyWithin(keyRecord(), NO_CAPS, { id: 'k1', token: 'a', status: 201, response: 'r' });
      assert.deepEqual(await store.claimIdempotencyKey({ ...other, now: T0 + 2 }), {
        ok: false,
        reason: 'MISMATCH',
      });
      await store.close();
    });

    test('behavior: a creation whose claim was taken over writes nothing (CLAIM_LOST)', async () => {
      const store = await openWithAccount(open);
      await store.claimIdempotencyKey(claim('k1', 'slow'));
      await store.claimIdempotencyKey(claim('k1', 'next', T0 + LEASE));
      const late = keyRecord();
      assert.deepEqual(
        await store.createKeyWithin(late, NO_CAPS, { id: 'k1', token: 'slow', status: 201, response: 'r1' }),
        { ok: false, reason: 'CLAIM_LOST' },
      );
      assert.equal(await store.getKey(late.id), null);
      // The holder now answers; a claim never made cannot.
      const kept = keyRecord();
      assert.deepEqual(
        await store.createKeyWithin(kept, NO_CAPS, { id: 'k1', token: 'next', status: 201, response: 'r2' }),
        { ok: true },
      );
      assert.deepEqual(
        await store.createKeyWithin(keyRecord(), NO_CAPS, {
          id: 'k9',
          token: 'x',
          status: 201,
          response: 'r',
        }),
        { ok: false, reason: 'CLAIM_LOST' },
      );
      assert.deepEqual(
        (await store.listKeys('acct_idem')).map((k) => k.id),
        [kept.id],
      );
      const replay = await store.claimIdempotencyKey(claim('k1', 'z', T0 + LEASE + 1));
      assert.deepEqual(replay, { ok: false, reason: 'ANSWERED', status: 201, response: 'r2' });
      await store.close();
    });

    test('behavior: a creation refused by a cap leaves the claim unanswered; released, the key is claimed afresh', async () => {
      const store = await openWithAccount(open);
      await store.createKeyWithin(keyRecord(), NO_CAPS);
      await store.claimIdempotencyKey(claim('k1', 'a'));
      const capped = await store.createKeyWithin(
        keyRecord(),
        { maxActive: 1, creations: null },
        { id: 'k1', token: 'a', status: 201, response: 'r' },
      );
      assert.deepEqual(capped, { ok: false, reason: 'TOO_MANY_KEYS', active: 1 });
      assert.equal((await store.claimIdempotencyKey(claim('k1', 'b', T0 + 1))).ok, false);
      // Only its holder releases it.
      await store.releaseIdempotencyKey('k1', 'b');
      assert.equal((await store.claimIdempotencyKey(claim('k1', 'b', T0 + 2))).ok, false);
      await store.releaseIdempotencyKey('k1', 'a');
      assert.deepEqual(await store.claimIdempotencyKey(claim('k1', 'b', T0 + 3)), { ok: true });
      await store.close();
    });

    test('behavior: an expired record is forgotten: its key is new again, even for another request', async () => {
      const store = await openWithAccount(open);
      await store.claimIdempotencyKey(claim('k1', 'a'));
      await store.createKeyWithin(keyRecord(), NO_CAPS, { id: 'k1', token: 'a', status: 201, response: 'r' });
      assert.deepEqual(await store.claimIdempotencyKey(claim('k1', 'b', T0 + TTL, 'f2')), { ok: true });
      await store.close();
    });

    test('behavior: concurrent claims of one key: exactly one holds it', async () => {
      const store = await open();
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) => store.claimIdempotencyKey(claim('k1', `t${i}`))),
      );
      assert.equal(results.filter((r) => r.ok).length, 1);
      for (const r of results.filter((x) => !x.ok))
        assert.deepEqual(r, { ok: false, reason: 'IN_FLIGHT', lockedUntil: T0 + LEASE });
      await store.close();
    });

    test('behavior: expired records are pruned a few per claim, never a backlog at once', async () => {
      const store = await open();
      // 40 records that expire at T0 + 1 (claimed a day before)
      for (let i = 0; i < 40; i++) await store.claimIdempotencyKey(claim(`old${i}`, 'a', T0 + 1 - TTL));
      await store.claimIdempotencyKey(claim('live', 'a', T0));
      assert.equal(await hooks.countRecords(store), 41);
      await store.claimIdempotencyKey(claim('k1', 'a', T0 + 2));
      assert.equal(await hooks.countRecords(store), 42 - IDEMPOTENCY_PRUNE_PER_CLAIM);
      await store.claimIdempotencyKey(claim('k2', 'a', T0 + 3));
      // the rest of the backlog, then only unexpired records
      assert.equal(await hooks.countRecords(store), 3);
      assert.deepEqual(await store.claimIdempotencyKey(claim('live', 'b', T0 + 4)), {
        ok: false,
        reason: 'IN_FLIGHT',
        lockedUntil: T0 + LEASE,
      });
      await store.close();
    });
  });
}
