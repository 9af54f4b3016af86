import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TIER_IDS, type TierId } from '../../src/access/tiers.ts';
import type { KeyMode } from '../../src/domain/records/keys.ts';
import { ManualClock } from '../clock.ts';
import { createTestApp, GENEROUS_TIERS, tiersWith } from '../helpers.ts';

const MODES: readonly KeyMode[] = ['live', 'test'];
const KINDS = TIER_IDS.flatMap((tier) => MODES.map((mode) => ({ tier, mode })));
const RANK: Record<TierId, number> = { free: 0, pro: 1, enterprise: 2 };

/** The documented rule: a key manages keys of its tier or a lower one; a test key only test keys. */
function expectManages(caller: { tier: TierId; mode: KeyMode }, target: { tier: TierId; mode: KeyMode }) {
  return RANK[target.tier] <= RANK[caller.tier] && (caller.mode === 'live' || target.mode === 'test');
}

describe('which keys of its account a key manages', () => {
  test('behavior: every pair of tiers and modes: listed and revoked only where the rule allows', async () => {
    const t = await createTestApp({ tiers: GENEROUS_TIERS });
    const profileId = async (key: string) => (await t.get('/api/v1/client/profile', key)).json().data.key.id;
    const del = (key: string, id: string) =>
      t.app.inject({
        method: 'DELETE',
        url: `/api/v1/client/api-keys/${id}`,
        headers: { authorization: `Bearer ${key}` },
      });
    let n = 0;
    for (const caller of KINDS) {
      for (const target of KINDS) {
        const account = `pair-${n++}`;
        const callerKey = await t.key(caller.tier, caller.mode, account);
        const targetKey = await t.key(target.tier, target.mode, account);
        const targetId = await profileId(targetKey);
        const pair = `${caller.tier}/${caller.mode} -> ${target.tier}/${target.mode}`;
        const allowed = expectManages(caller, target);

        const listed = (await t.get('/api/v1/client/api-keys', callerKey)).json().data as {
          id: string;
          prefix: string;
        }[];
        assert.equal(
          listed.some((k) => k.id === targetId),
          allowed,
          `${pair}: listed`,
        );
        // Nothing of a key it does not manage shows: neither its id nor its prefix.
        if (!allowed) assert.ok(!JSON.stringify(listed).includes(targetKey.slice(0, 14)), `${pair}: prefix`);

        const res = await del(callerKey, targetId);
        if (allowed) {
          assert.equal(res.statusCode, 200, `${pair}: revoke`);
          assert.equal(
            (await t.get('/api/v1/client/profile', targetKey)).statusCode,
            401,
            `${pair}: revoked`,
          );
        } else {
          assert.equal(res.statusCode, 404, `${pair}: revoke refused`);
          assert.deepEqual(
            res.json(),
            { error: 'KEY_NOT_FOUND', message: `No API key '${targetId}' on this account.` },
            `${pair}: the answer of a key that does not exist`,
          );
          assert.equal(
            (await t.get('/api/v1/client/profile', targetKey)).statusCode,
            200,
            `${pair}: still works`,
          );
        }
      }
    }
    await t.close();
  });

  test('behavior: every key may list and revoke itself', async () => {
    const t = await createTestApp({ tiers: GENEROUS_TIERS });
    for (const kind of KINDS) {
      const key = await t.key(kind.tier, kind.mode, `self-${kind.tier}-${kind.mode}`);
      const id = (await t.get('/api/v1/client/profile', key)).json().data.key.id;
      const listed = (await t.get('/api/v1/client/api-keys', key)).json().data as { id: string }[];
      assert.deepEqual(
        listed.map((k) => k.id),
        [id],
      );
      const res = await t.app.inject({
        method: 'DELETE',
        url: `/api/v1/client/api-keys/${id}`,
        headers: { authorization: `Bearer ${key}` },
      });
      assert.equal(res.statusCode, 200, `${kind.tier}/${kind.mode}`);
      assert.equal((await t.get('/api/v1/client/profile', key)).statusCode, 401);
    }
    await t.close();
  });

  test('behavior: every tier and mode creates keys of its own tier only, and a test key test keys only', async () => {
    const t = await createTestApp({ tiers: GENEROUS_TIERS });
    const post = (key: string, payload: object) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/client/api-keys',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        payload,
      });
    for (const caller of KINDS) {
      const key = await t.key(caller.tier, caller.mode, `create-${caller.tier}-${caller.mode}`);
      for (const mode of MODES) {
        const res = await post(key, { mode });
        const pair = `${caller.tier}/${caller.mode} creates ${mode}`;
        if (caller.mode === 'test' && mode === 'live') {
          assert.equal(res.statusCode, 400, pair);
          assert.equal(res.json().error, 'INVALID_PARAMETER');
          continue;
        }
        assert.equal(res.statusCode, 201, pair);
        assert.equal(res.json().data.tier, caller.tier, pair);
        assert.equal(res.json().data.mode, mode, pair);
      }
      // No request names another tier: the body has no such member.
      for (const tier of TIER_IDS) {
        const res = await post(key, { tier });
        assert.equal(res.statusCode, 400, `${caller.tier}/${caller.mode} asks for ${tier}`);
        assert.equal(res.json().error, 'INVALID_PARAMETER');
      }
    }
    // Nothing above the caller's tier was created in any account.
    for (const k of await t.store.listKeys()) {
      const account = await t.store.getAccount(k.accountId);
      const [, tier] = account!.name.split('-') as [string, TierId];
      assert.equal(k.tier, tier, `${account!.name}: ${k.tier}`);
    }
    await t.close();
  });
});

describe('the quota of an account', () => {
  test('behavior: revoking a spent key and creating another regains nothing beyond the account bound', async () => {
    const tiers = tiersWith((all) => {
      for (const t of Object.values(all)) t.ratePerSecond = 1_000_000;
      Object.assign(all.free!, {
        dailyQuota: 3,
        monthlyQuota: 1000,
        maxKeysPerAccount: 2,
        keyCreationsPerDay: 5,
      });
    });
    const clock = new ManualClock('2027-01-31T20:00:00.000Z');
    const t = await createTestApp({ tiers, clock });
    // The account may hold 2 live and 2 test Free keys: 4 x 3 = 12 requests a day together.
    let key = await t.key('free', 'live', 'churner');
    const markets = (k: string) => t.get('/api/v1/markets?limit=1', k);
    for (let round = 0; round < 4; round++) {
      for (let i = 0; i < 3; i++) assert.equal((await markets(key)).statusCode, 200, `round ${round}`);
      const spent = await markets(key);
      assert.equal(spent.statusCode, 429);
      assert.equal(spent.json().error, 'DAILY_QUOTA_EXCEEDED');
      assert.equal(spent.json().limit, 3, "the key's own quota first");
      // a fresh key, and the spent one revoked
      const created = await t.app.inject({
        method: 'POST',
        url: '/api/v1/client/api-keys',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        payload: {},
      });
      assert.equal(created.statusCode, 201);
      const selfId = (await t.get('/api/v1/client/profile', key)).json().data.key.id;
      const revoked = await t.app.inject({
        method: 'DELETE',
        url: `/api/v1/client/api-keys/${selfId}`,
        headers: { authorization: `Bearer ${key}` },
      });
      assert.equal(revoked.statusCode, 200);
      key = created.json().data.key;
    }
    const refused = await markets(key);
    assert.equal(refused.statusCode, 429);
    const body = refused.json();
    assert.equal(body.error, 'DAILY_QUOTA_EXCEEDED');
    assert.equal(body.limit, 12);
    assert.equal(body.used, 13);
    assert.match(body.message, /^Your account's daily quota of 12 requests \(all its Free keys together/);
    assert.equal(refused.headers['retry-after'], String(4 * 3600));
    // a key of another customer (an account of its own) is not touched
    assert.equal((await markets(await t.key('free', 'live', 'neighbour'))).statusCode, 200);
    // the next day, 00:00 UTC
    clock.set('2027-02-01T00:00:00.000Z');
    assert.equal((await markets(key)).statusCode, 200);
    await t.close();
  });

  test('behavior: the key-creation budget is per account: another customer keeps its own', async () => {
    const tiers = tiersWith((all) => {
      for (const t of Object.values(all)) t.ratePerSecond = 1_000_000;
      Object.assign(all.free!, { maxKeysPerAccount: 10, keyCreationsPerDay: 2 });
    });
    const t = await createTestApp({ tiers });
    const post = (key: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/client/api-keys',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        payload: {},
      });
    // two customers, each given a key in an account of its own (as lrds keys create does)
    const [a, b] = [await t.keys.newAccount(), await t.keys.newAccount()];
    const keyA = (await t.keys.create({ accountId: a.id, tier: 'free', mode: 'live' })).key;
    const keyB = (await t.keys.create({ accountId: b.id, tier: 'free', mode: 'live' })).key;
    assert.equal((await post(keyA)).statusCode, 201);
    assert.equal((await post(keyA)).statusCode, 429, "A's budget: its first key and one more");
    assert.equal((await post(keyB)).statusCode, 201, "B's budget is its own");
    await t.close();
  });
});
