import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TIER_IDS, type TierId } from '../../src/access/tiers.ts';
import type { KeyMode } from '../../src/store/types.ts';
import { createTestApp, GENEROUS_TIERS } from '../helpers.ts';

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
