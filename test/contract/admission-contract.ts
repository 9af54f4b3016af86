import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import type { Admission, AdmissionRequest, AdmissionResult } from '../../src/access/admission.ts';
import type { Tier } from '../../src/access/tiers.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/types.ts';
import { ManualClock } from '../clock.ts';

export type MakeAdmission = (opts: { clock: ManualClock; store: Store }) => Promise<Admission>;

/** A tier with the limits a test is about. */
export function tier(ratePerSecond: number, dailyQuota: number | null, monthlyQuota: number | null): Tier {
  return {
    id: 'pro',
    name: 'Test',
    ratePerSecond,
    dailyQuota,
    monthlyQuota,
    resultCap: null,
    categories: ['core'],
    chains: null,
    historyDays: null,
    maxKeysPerAccount: null,
    keyCreationsPerDay: null,
    maxWebhooksPerAccount: null,
    maxStreamsPerKey: null,
  };
}

const at = (iso: string) => Date.parse(iso);

interface Ctx {
  clock: ManualClock;
  store: Store;
  adm: Admission;
  /** A key id of its own for each test (backends may be shared between runs). */
  key: string;
  admit(t: Tier, opts?: { counted?: boolean; key?: string }): Promise<AdmissionResult>;
  admitN(n: number, t: Tier, opts?: { counted?: boolean; key?: string }): Promise<AdmissionResult[]>;
}

/**
 * The admission contract (docs/decisions.md "Order of checks and what counts"): every Admission backend must pass it. `make` gets a
 * clock the test moves and a fresh in-memory store; the suite closes what it opens. Requests are
 * stamped with `clock.now()`, the time a backend given the clock must use.
 */
export function admissionContract(name: string, make: MakeAdmission, options: { skip?: string } = {}): void {
  async function withAdmission(start: string, fn: (ctx: Ctx) => Promise<void>): Promise<void> {
    const clock = new ManualClock(start);
    const store = new SqliteStore(':memory:');
    await store.migrate();
    const adm = await make({ clock, store });
    const key = `key_${randomUUID()}`;
    const admit = (t: Tier, o: { counted?: boolean; key?: string } = {}) => {
      const req: AdmissionRequest = {
        keyId: o.key ?? key,
        tier: t,
        endpoint: 'GET /api/v1/markets',
        counted: o.counted ?? true,
        nowMs: clock.now(),
      };
      return adm.admit(req);
    };
    const admitN = async (n: number, t: Tier, o: { counted?: boolean; key?: string } = {}) => {
      const out: AdmissionResult[] = [];
      for (let i = 0; i < n; i++) out.push(await admit(t, o));
      return out;
    };
    try {
      await fn({ clock, store, adm, key, admit, admitN });
    } finally {
      await adm.close();
      await store.close();
    }
  }

  describe(`Admission contract: ${name}`, { skip: options.skip ?? false }, () => {
    test('behavior: a burst of 12 on rate 5 admits 5; refused requests take no slot', async () => {
      await withAdmission('2026-11-22T12:00:00.000Z', async ({ clock, admitN, admit }) => {
        const t5 = tier(5, null, null);
        const burst = await admitN(12, t5);
        assert.deepEqual(
          burst.map((r) => r.ok),
          [true, true, true, true, true, false, false, false, false, false, false, false],
        );
        clock.advance(999);
        assert.equal((await admit(t5)).ok, false);
        // Had the 8 refusals taken slots, the window would still be full at +1000.
        clock.advance(1);
        const after = await admitN(6, t5);
        assert.deepEqual(
          after.map((r) => r.ok),
          [true, true, true, true, true, false],
        );
      });
    });

    test('default: remaining, resetAt and retryAfterMs values', async () => {
      await withAdmission('2026-11-22T12:00:00.000Z', async ({ clock, admit }) => {
        const t0 = clock.now();
        const t3 = tier(3, null, null);
        // Counted requests come with the key's day and month counts, this one included.
        assert.deepEqual(await admit(t3), {
          ok: true,
          rate: { limit: 3, remaining: 2, resetAt: t0 + 1000 },
          counts: { dayUsed: 1, monthUsed: 1 },
        });
        clock.advance(200);
        assert.deepEqual(await admit(t3), {
          ok: true,
          rate: { limit: 3, remaining: 1, resetAt: t0 + 1000 },
          counts: { dayUsed: 2, monthUsed: 2 },
        });
        clock.advance(300);
        assert.deepEqual(await admit(t3), {
          ok: true,
          rate: { limit: 3, remaining: 0, resetAt: t0 + 1000 },
          counts: { dayUsed: 3, monthUsed: 3 },
        });
        clock.advance(100);
        assert.deepEqual(await admit(t3), {
          ok: false,
          reason: 'RATE_LIMITED',
          rate: { limit: 3, remaining: 0, resetAt: t0 + 1000 },
          retryAfterMs: 400,
        });
        // t0 + 1000: the first leaves; the oldest left in the window is t0 + 200.
        clock.set(t0 + 1000);
        assert.deepEqual(await admit(t3), {
          ok: true,
          rate: { limit: 3, remaining: 0, resetAt: t0 + 1200 },
          counts: { dayUsed: 4, monthUsed: 4 },
        });
        assert.deepEqual(await admit(t3), {
          ok: false,
          reason: 'RATE_LIMITED',
          rate: { limit: 3, remaining: 0, resetAt: t0 + 1200 },
          retryAfterMs: 200,
        });
        // Window empty again: reset is now + 1000.
        clock.set(t0 + 5000);
        assert.deepEqual(await admit(t3), {
          ok: true,
          rate: { limit: 3, remaining: 2, resetAt: t0 + 6000 },
          counts: { dayUsed: 5, monthUsed: 5 },
        });
      });
    });

    test('behavior: a clock stepping back counts as the newest admitted instant', async () => {
      await withAdmission('2026-11-22T12:00:00.000Z', async ({ clock, admitN, admit }) => {
        const t0 = clock.now();
        await admitN(2, tier(2, null, null));
        clock.set(t0 - 5000);
        assert.deepEqual(await admit(tier(2, null, null)), {
          ok: false,
          reason: 'RATE_LIMITED',
          rate: { limit: 2, remaining: 0, resetAt: t0 + 1000 },
          retryAfterMs: 6000,
        });
      });
    });

    test('behavior: a rate change keeps the newest admitted requests', async () => {
      await withAdmission('2026-11-22T12:00:00.000Z', async ({ clock, admitN, admit }) => {
        const t0 = clock.now();
        for (let i = 0; i < 5; i++) {
          await admitN(1, tier(5, null, null));
          clock.advance(10);
        }
        // Down to 3: the 3 newest (t0+20, t0+30, t0+40) fill the window.
        assert.deepEqual(await admit(tier(3, null, null)), {
          ok: false,
          reason: 'RATE_LIMITED',
          rate: { limit: 3, remaining: 0, resetAt: t0 + 1020 },
          retryAfterMs: 1020 - 50,
        });
        // Up to 10: 3 kept, this one is the 4th.
        assert.deepEqual(await admit(tier(10, null, null)), {
          ok: true,
          rate: { limit: 10, remaining: 6, resetAt: t0 + 1020 },
          counts: { dayUsed: 6, monthUsed: 6 },
        });
      });
    });

    test('behavior: the daily quota is exact and a daily refusal does not touch the monthly counter', async () => {
      await withAdmission('2026-11-22T12:00:00.000Z', async ({ clock, adm, key, admitN, admit }) => {
        const t = tier(100, 3, 10);
        const first = await admitN(3, t);
        assert.ok(first.every((r) => r.ok));
        const r4 = await admit(t);
        assert.deepEqual(r4, {
          ok: false,
          reason: 'DAILY_QUOTA',
          // 3 admitted in the window; the refused 4th took no slot
          rate: { limit: 100, remaining: 97, resetAt: clock.now() + 1000 },
          limit: 3,
          used: 4,
          counts: { dayUsed: 4, monthUsed: 3 },
        });
        const r5 = await admit(t);
        assert.equal(!r5.ok && r5.reason === 'DAILY_QUOTA' && r5.used, 5);
        const s = await adm.status(key, t, clock.now());
        assert.equal(s.dayUsed, 5);
        assert.equal(s.monthUsed, 3);
      });
    });

    test('behavior: a request refused by a quota takes no slot of the window', async () => {
      await withAdmission('2026-11-22T12:00:00.000Z', async ({ admitN }) => {
        const t = tier(5, 2, null);
        const results = await admitN(10, t);
        const reasons = results.map((r) => (r.ok ? 'ok' : r.reason));
        // rate 5, daily quota 2: 2 admitted, then only quota refusals, never the rate limit
        assert.deepEqual(reasons, ['ok', 'ok', ...Array(8).fill('DAILY_QUOTA')]);
        const last = results[9]!;
        assert.equal(last.rate.remaining, 3);
      });
    });

    test('behavior: the monthly quota refuses once exceeded, still counting', async () => {
      await withAdmission('2026-11-22T12:00:00.000Z', async ({ clock, adm, key, admitN, admit }) => {
        const t = tier(100, 10, 4);
        assert.ok((await admitN(3, t)).every((r) => r.ok));
        clock.set('2026-11-23T08:00:00.000Z');
        assert.equal((await admit(t)).ok, true);
        const r = await admit(t);
        assert.equal(!r.ok && r.reason, 'MONTHLY_QUOTA');
        assert.deepEqual(!r.ok && r.reason === 'MONTHLY_QUOTA' && [r.limit, r.used], [4, 5]);
        const s = await adm.status(key, t, clock.now());
        assert.deepEqual([s.day, s.dayUsed, s.month, s.monthUsed], ['2026-11-23', 2, '2026-11', 5]);
      });
    });

    test('behavior: null quotas are unlimited but counted', async () => {
      await withAdmission('2026-11-22T12:00:00.000Z', async ({ clock, adm, key, admitN }) => {
        const t = tier(1000, null, null);
        assert.ok((await admitN(250, t)).every((r) => r.ok));
        const s = await adm.status(key, t, clock.now());
        assert.deepEqual([s.dayUsed, s.monthUsed], [250, 250]);
      });
    });

    test('behavior: the daily counter rolls over at 00:00 UTC', async () => {
      await withAdmission('2027-01-15T23:59:59.000Z', async ({ clock, admitN, admit }) => {
        const t = tier(100, 2, null);
        await admitN(2, t);
        clock.set('2027-01-15T23:59:59.999Z');
        const late = await admit(t);
        assert.deepEqual(!late.ok && late.reason === 'DAILY_QUOTA' && late.used, 3);
        clock.set('2027-01-16T00:00:00.000Z');
        assert.equal((await admit(t)).ok, true);
        assert.equal((await admit(t)).ok, true);
        const r = await admit(t);
        assert.deepEqual(!r.ok && r.reason === 'DAILY_QUOTA' && r.used, 3);
      });
    });

    test('behavior: the monthly counter rolls over on the 1st, leap years included', async () => {
      await withAdmission('2028-01-31T23:59:59.999Z', async ({ clock, adm, key, admitN, admit }) => {
        const t = tier(100, null, 2);
        await admitN(2, t);
        assert.equal((await admit(t)).ok, false);
        clock.set('2028-02-01T00:00:00.000Z');
        assert.equal((await admit(t)).ok, true);
        clock.set('2028-02-29T12:00:00.000Z');
        assert.equal((await admit(t)).ok, true);
        const s = await adm.status(key, t, clock.now());
        assert.deepEqual([s.day, s.dayUsed, s.month, s.monthUsed], ['2028-02-29', 1, '2028-02', 2]);
        assert.equal(s.monthResetAt, at('2028-03-01T00:00:00Z'));
        assert.equal((await admit(t)).ok, false);
        clock.set('2028-03-01T00:00:00.000Z');
        assert.equal((await admit(t)).ok, true);
        clock.set('2028-12-31T23:59:59.999Z');
        await admitN(2, t);
        assert.equal((await admit(t)).ok, false);
        clock.set('2029-01-01T00:00:00.000Z');
        assert.equal((await admit(t)).ok, true);
      });
    });

    test('behavior: 300 concurrent requests against a daily quota of 100 admit exactly 100', async () => {
      await withAdmission('2026-11-22T12:00:00.000Z', async ({ adm, key, clock, admit }) => {
        const t = tier(1000, 100, null);
        const results = await Promise.all(Array.from({ length: 300 }, () => admit(t)));
        assert.equal(results.filter((r) => r.ok).length, 100);
        const used = results.flatMap((r) => (!r.ok && r.reason === 'DAILY_QUOTA' ? [r.used] : []));
        assert.deepEqual(
          used.sort((a, b) => a - b),
          Array.from({ length: 200 }, (_, i) => 101 + i),
        );
        assert.equal((await adm.status(key, t, clock.now())).dayUsed, 300);
      });
    });

    test('behavior: uncounted requests are rate limited but not counted', async () => {
      await withAdmission('2026-11-22T12:00:00.000Z', async ({ adm, key, clock, admitN, admit }) => {
        const t = tier(5, 1, 1);
        const burst = await admitN(7, t, { counted: false });
        assert.equal(burst.filter((r) => r.ok).length, 5);
        const s = await adm.status(key, t, clock.now());
        assert.deepEqual([s.dayUsed, s.monthUsed, s.rate.remaining], [0, 0, 0]);
        clock.advance(1000);
        assert.equal((await admit(t)).ok, true);
        const r = await admit(t);
        assert.equal(!r.ok && r.reason, 'DAILY_QUOTA');
      });
    });

    test('default: status() values, and it counts nothing', async () => {
      await withAdmission('2026-11-22T12:00:00.000Z', async ({ adm, key, clock, admitN }) => {
        const t0 = clock.now();
        const t = tier(5, 1000, 10_000);
        assert.deepEqual(await adm.status(key, t, t0), {
          day: '2026-11-22',
          dayUsed: 0,
          dayResetAt: at('2026-11-23T00:00:00Z'),
          month: '2026-11',
          monthUsed: 0,
          monthResetAt: at('2026-12-01T00:00:00Z'),
          rate: { limit: 5, remaining: 5, resetAt: t0 + 1000 },
        });
        await admitN(3, t);
        clock.advance(200);
        await admitN(1, t);
        clock.advance(100);
        const expected = {
          day: '2026-11-22',
          dayUsed: 4,
          dayResetAt: at('2026-11-23T00:00:00Z'),
          month: '2026-11',
          monthUsed: 4,
          monthResetAt: at('2026-12-01T00:00:00Z'),
          rate: { limit: 5, remaining: 1, resetAt: t0 + 1000 },
        };
        assert.deepEqual(await adm.status(key, t, clock.now()), expected);
        assert.deepEqual(await adm.status(key, t, clock.now()), expected);
        // Next day, next month: zeros, the window long empty.
        clock.set('2026-12-01T00:00:00.000Z');
        assert.deepEqual(await adm.status(key, t, clock.now()), {
          day: '2026-12-01',
          dayUsed: 0,
          dayResetAt: at('2026-12-02T00:00:00Z'),
          month: '2026-12',
          monthUsed: 0,
          monthResetAt: at('2027-01-01T00:00:00Z'),
          rate: { limit: 5, remaining: 5, resetAt: clock.now() + 1000 },
        });
      });
    });

    test('behavior: every counted request reaches the store, once', async () => {
      await withAdmission('2026-11-22T12:00:00.000Z', async ({ adm, store, key, admitN }) => {
        const t = tier(100, 5, 100);
        await admitN(8, t);
        await admitN(3, t, { counted: false });
        await adm.close();
        assert.deepEqual(await store.usageTotals(key, '2026-11-22'), { dayUsed: 8, monthUsed: 5 });
      });
    });

    test('behavior: keys are independent', async () => {
      await withAdmission('2026-11-22T12:00:00.000Z', async ({ admitN }) => {
        const t = tier(2, null, null);
        const a = await admitN(3, t, { key: `a_${randomUUID()}` });
        const b = await admitN(3, t, { key: `b_${randomUUID()}` });
        assert.deepEqual(
          [...a, ...b].map((r) => r.ok),
          [true, true, false, true, true, false],
        );
      });
    });

    test('behavior: an account bound: revoked and re-created keys regain nothing, across days, months and a restart', async () => {
      await withAdmission('2027-01-31T22:00:00.000Z', async ({ clock, store, adm }) => {
        // Free-like: 3 a day and 10 a month per key; 1 key per mode, so the account's keys of
        // the tier get 3 x 2 = 6 a day and 10 x 2 = 20 a month together.
        const t = { ...tier(1000, 3, 10), id: 'free' as const, maxKeysPerAccount: 1 };
        const accountId = `acct_${randomUUID()}`;
        const other = `acct_${randomUUID()}`;
        for (const id of [accountId, other]) {
          await store.createAccount({ id, name: id, email: null, createdAt: '2027-01-01T00:00:00.000Z' });
        }
        let n = 0;
        const newKey = async (mode: 'live' | 'test' = 'live', account = accountId, tierId = 'free') => {
          const id = `key_${randomUUID()}`;
          await store.createKey({
            id,
            accountId: account,
            hash: `h_${id}`,
            prefix: `lrds_${mode}_${String(n++).padStart(4, '0')}`,
            mode,
            tier: tierId,
            name: null,
            createdAt: new Date(clock.now()).toISOString(),
            revokedAt: null,
          });
          return id;
        };
        let current = adm;
        const admit = (keyId: string, account = accountId, tt: Tier = t) =>
          current.admit({
            keyId,
            accountId: account,
            tier: tt,
            endpoint: 'GET /api/v1/markets',
            counted: true,
            nowMs: clock.now(),
          });
        const run = async (keyId: string, count: number, account = accountId) => {
          const out: AdmissionResult[] = [];
          for (let i = 0; i < count; i++) out.push(await admit(keyId, account));
          return out;
        };
        const refusal = (r: AdmissionResult) =>
          r.ok
            ? 'ok'
            : r.reason === 'RATE_LIMITED'
              ? r.reason
              : `${r.reason}:${r.scope ?? 'key'}:${r.used}/${r.limit}`;

        // Jan 31: a spent key is refused by its own quota (that refusal is not the account's)
        const k1 = await newKey();
        assert.deepEqual((await run(k1, 5)).map(refusal), [
          'ok',
          'ok',
          'ok',
          'DAILY_QUOTA:key:4/3',
          'DAILY_QUOTA:key:5/3',
        ]);
        await store.revokeKey(k1, new Date(clock.now()).toISOString());
        // a new key gets 3 more: the account is at 6, its bound
        const k2 = await newKey();
        assert.deepEqual((await run(k2, 3)).map(refusal), ['ok', 'ok', 'ok']);
        // a third key (and a test key: counted with the live ones) gets nothing more that day
        const k3 = await newKey();
        assert.deepEqual((await run(k3, 2)).map(refusal), [
          'DAILY_QUOTA:account:7/6',
          'DAILY_QUOTA:account:8/6',
        ]);
        const k3t = await newKey('test');
        assert.equal(refusal(await admit(k3t)), 'DAILY_QUOTA:account:9/6');
        // another account, and another tier of the same account, are not touched
        const stranger = await newKey('live', other);
        assert.equal(refusal(await admit(stranger, other)), 'ok');
        const proTier = { ...tier(1000, 3, 10), id: 'pro' as const, maxKeysPerAccount: 1 };
        const pro = await newKey('live', accountId, 'pro');
        assert.equal(refusal(await admit(pro, accountId, proTier)), 'ok');

        // a restart: the account's count comes back from the store
        await current.close();
        current = await make({ clock, store });
        try {
          const k4 = await newKey();
          assert.equal(refusal(await admit(k4)), 'DAILY_QUOTA:account:10/6');

          // Feb 1, 00:00 UTC: a new day and a new month; refused requests never reached the month
          clock.set('2027-02-01T00:00:00.000Z');
          assert.deepEqual((await run(k4, 3)).map(refusal), ['ok', 'ok', 'ok']);
          assert.deepEqual((await run(k3, 3)).map(refusal), ['ok', 'ok', 'ok']);
          assert.equal(refusal(await admit(await newKey('test'))), 'DAILY_QUOTA:account:7/6');
          // the month: 6 on each of Feb 1, 2 and 3 reach 18, then 2 more on Feb 4, then the bound
          clock.set('2027-02-02T10:00:00.000Z');
          const [k5, k6] = [await newKey(), await newKey('test')];
          assert.deepEqual([...(await run(k5, 3)), ...(await run(k6, 3))].map(refusal), Array(6).fill('ok'));
          clock.set('2027-02-03T10:00:00.000Z');
          const [k7, k8] = [await newKey(), await newKey()];
          assert.deepEqual([...(await run(k7, 3)), ...(await run(k8, 3))].map(refusal), Array(6).fill('ok'));
          clock.set('2027-02-04T10:00:00.000Z');
          const k9 = await newKey();
          assert.deepEqual((await run(k9, 3)).map(refusal), ['ok', 'ok', 'MONTHLY_QUOTA:account:21/20']);
          // still the month's bound on another day of it, for a brand-new key
          clock.set('2027-02-28T23:59:59.999Z');
          assert.equal(refusal(await admit(await newKey())), 'MONTHLY_QUOTA:account:22/20');
          // March 1: all is allowed again
          clock.set('2027-03-01T00:00:00.000Z');
          assert.equal(refusal(await admit(k9)), 'ok');
        } finally {
          await current.close();
        }
        // every request of every key reached the store, the refused ones included
        assert.deepEqual(await store.usageTotals(k1, '2027-01-31'), { dayUsed: 5, monthUsed: 3 });
        assert.deepEqual(await store.usageTotals(k3, '2027-01-31'), { dayUsed: 2, monthUsed: 0 });
      });
    });

    test('behavior: a key moved to another account takes its use along; the account it left gets its room back', async () => {
      await withAdmission('2027-01-20T12:00:00.000Z', async ({ clock, store, adm }) => {
        const t = { ...tier(1000, 3, 100), id: 'free' as const, maxKeysPerAccount: 1 };
        const [a, b] = [`acct_${randomUUID()}`, `acct_${randomUUID()}`];
        for (const id of [a, b]) {
          await store.createAccount({ id, name: id, email: null, createdAt: '2027-01-01T00:00:00.000Z' });
        }
        const newKey = async (account: string, mode: 'live' | 'test' = 'live') => {
          const id = `key_${randomUUID()}`;
          await store.createKey({
            id,
            accountId: account,
            hash: `h_${id}`,
            prefix: `lrds_${mode}_${id.slice(4, 12)}`,
            mode,
            tier: 'free',
            name: null,
            createdAt: new Date(clock.now()).toISOString(),
            revokedAt: null,
          });
          return id;
        };
        const admit = (keyId: string, accountId: string) =>
          adm.admit({
            keyId,
            accountId,
            tier: t,
            endpoint: 'GET /api/v1/markets',
            counted: true,
            nowMs: clock.now(),
          });
        const ok = async (keyId: string, accountId: string, n: number) => {
          const out: boolean[] = [];
          for (let i = 0; i < n; i++) out.push((await admit(keyId, accountId)).ok);
          return out;
        };
        // Two customers' keys in one account: together at its bound of 6 a day.
        const [k1, k2] = [await newKey(a), await newKey(a, 'test')];
        assert.deepEqual([...(await ok(k1, a, 3)), ...(await ok(k2, a, 3))], Array(6).fill(true));
        const k3 = await newKey(a);
        assert.equal((await admit(k3, a)).ok, false);
        // k1 moves to an account of its own: its next request counts there, with its 3 of today
        // (each key counts toward its account up to its own quota).
        await store.moveKey(k1, b);
        assert.deepEqual(await ok(k1, b, 2), [false, false]); // its own daily quota, spent
        assert.deepEqual(await ok(await newKey(b, 'test'), b, 4), [true, true, true, false]);
        // The account it left holds k2's 3 and k3's refused request (refused by the account's
        // bound, it still counts toward k3's own day): 4 of 6, so k3 gets 2 more.
        assert.deepEqual(await ok(k3, a, 3), [true, true, false]);
      });
    });
  });
}
